// Copyright (c) Aspen contributors.
// The runtime's public headers compile as C++11 (as Poplar programs are built),
// and every documented overload of Engine resolves (poplar_api.md §Engine).
#include <poplar/CycleCount.hpp>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/StreamCallback.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#if __cplusplus != 201103L
#error "this test must be compiled as C++11"
#endif

namespace {

struct Callback : poplar::StreamCallback {
  int *calls;
  explicit Callback(int *c) : calls(c) {}
  Result prefetch(void *) override { return Result::NotAvailable; }
  void fetch(void *) override { ++*calls; }
  void complete() override {}
};

struct Legacy : poplar::LegacyStreamCallback {
  void fetch(void *) override {}
};

// Never called: it only has to compile.
void everyOverload(poplar::Graph &graph, poplar::program::Sequence &prog, poplar::Executable &&exe) {
  using namespace poplar;
  Engine a{graph, prog, {{"debug.retainDebugInformation", "true"}}};
  Engine b(graph, {prog, prog});
  std::vector<program::Program> progs(1, prog);
  Engine c(
      graph, progs, {{"autoReport.all", "true"}}, [](int, int) {}, "engine");
  Engine d(std::move(exe));
  std::vector<float> v(4);
  a.writeTensor("h", v);
  a.writeTensor<float>("h", v);
  a.writeTensor("h", v.data(), v.data() + v.size());
  a.writeTensor("h", v.data());
  a.readTensor("h", v);
  a.readTensor("h", v.data(), v.data() + v.size());
  a.readTensor("h", v.data());
  a.connectStream("s", v);
  a.connectStream("s", v.data());
  a.connectStream("s", v.data(), v.data() + v.size());
  a.connectStreamToCallback("s", [](void *) {});
  a.connectStreamToCallback("s", 0, [](void *) {});
  std::function<void(void *)> f = [](void *) {};
  a.connectStreamToCallback("s", f);
  a.connectStreamToCallback("s", std::unique_ptr<Callback>(new Callback(nullptr)));
  a.connectStreamToCallback("s", std::unique_ptr<StreamCallback>(new Legacy));
  a.copyToRemoteBuffer(v.data(), "rb", 0);
  a.copyFromRemoteBuffer("rb", v.data(), 0, 0);
  a.setPrintStream(std::cout);
  a.printProfileSummary(std::cout, {{"showExecutionSteps", "true"}});
  a.loadAndRun(Device());
  Tensor t1 = cycleCount(graph, prog, 0, SyncType::INTERNAL, "count");
  Tensor t2 = cycleStamp(graph, prog, 0, SyncType::EXTERNAL);
  (void)t1;
  (void)t2;
  std::unique_ptr<Engine> moved(new Engine(std::move(d)));
}

} // namespace

TEST_CASE("StreamCallbackHandle wraps callables and callback objects (C++11)", "[unit][runtime]") {
  (void)&everyOverload;
  int calls = 0;
  poplar::StreamCallbackHandle fromLambda([&calls](void *) { calls += 10; });
  std::unique_ptr<poplar::StreamCallback> cb = fromLambda.release();
  REQUIRE(cb->prefetch(nullptr) == poplar::StreamCallback::Result::NotAvailable);
  cb->fetch(nullptr);
  cb->complete();
  REQUIRE(calls == 10);
  poplar::StreamCallbackHandle fromObject(std::unique_ptr<Callback>(new Callback(&calls)));
  fromObject.release()->fetch(nullptr);
  REQUIRE(calls == 11);
}
