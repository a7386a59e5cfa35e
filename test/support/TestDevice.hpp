// Copyright (c) Aspen contributors.
// Runs one test graph on each of the targets every operation test covers (STYLE.md habit 7):
//   - a 4-tile IPUModel,
//   - the full 1,472-tile IPUModel,
//   - an executable compiled for a 4-tile IPUModel, saved (Executable::serialize), reloaded
//     (Executable::deserialize) and run from the reloaded copy.
//
// Usage:
//   aspen::test::forEachTarget([](aspen::test::TestDevice &dev) {
//     poplar::Graph graph(dev.getTarget());
//     popops::addCodelets(graph);
//     poplar::Tensor a = graph.addVariable(poplar::FLOAT, {n}, "a");
//     poputil::mapTensorLinearly(graph, a);
//     poplar::program::Sequence prog;
//     poplar::Tensor out = popops::add(graph, a, 1.0f, prog);
//     std::vector<float> result;
//     dev.write(graph, a, hostA);       // host -> device before the run
//     dev.read(graph, out, result);     // device -> host after the run
//     dev.run(graph, prog);             // compile (and save/reload), load, write, run, read
//     REQUIRE(result == expected);
//   });
// Tensors of type HALF are written from and read into std::vector<float> (rounded to
// nearest even); every other type takes a vector of its host type.
//
// Tests that run an engine several times (or read and write between runs) take the engine
// instead: `auto engine = dev.createEngine(graph, {prog});` compiles for the target (saving
// and reloading the executable on the Reloaded target) and loads it on the device; the
// helpers in OpsTestUtil.hpp move float data in and out of FLOAT and HALF tensors.
#pragma once

#include <catch2/catch.hpp>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace aspen::test {

enum class TestTarget { FewTiles, FullIpu, Reloaded };

/// Every target an operation test runs on.
inline std::vector<TestTarget> allTargets() {
  return {TestTarget::FewTiles, TestTarget::FullIpu, TestTarget::Reloaded};
}

inline const char *targetName(TestTarget t) {
  switch (t) {
  case TestTarget::FewTiles:
    return "IPUModel (4 tiles)";
  case TestTarget::FullIpu:
    return "IPUModel (1472 tiles)";
  case TestTarget::Reloaded:
    return "saved and reloaded executable (4 tiles)";
  }
  return "?";
}

class TestDevice {
public:
  explicit TestDevice(TestTarget kind) : kind_(kind) {
    poplar::IPUModel model("ipu2");
    model.tilesPerIPU = kind == TestTarget::FullIpu ? 1472 : 4;
    device_ = model.createDevice();
    device_.attach();
  }

  TestTarget kind() const { return kind_; }
  const poplar::Target &getTarget() const { return device_.getTarget(); }
  poplar::Device &getDevice() { return device_; }

  /// Writes `values` into `t` before the program runs.
  template <class T> void write(poplar::Graph &graph, const poplar::Tensor &t, const std::vector<T> &values) {
    const std::string handle = "aspen_test_write_" + std::to_string(writes_.size());
    graph.createHostWrite(handle, t);
    writes_.push_back({handle, toDevice(t.elementType(), values)});
  }

  /// Reads `t` into `out` after the program has run.
  template <class T> void read(poplar::Graph &graph, const poplar::Tensor &t, std::vector<T> &out) {
    const std::string handle = "aspen_test_read_" + std::to_string(reads_.size());
    graph.createHostRead(handle, t);
    const poplar::Type type = t.elementType();
    const std::size_t n = t.numElements();
    const poplar::Target target = getTarget();
    reads_.push_back({handle, n * type.size(), [&out, type, n, target](const std::vector<char> &bytes) {
                        out.resize(n);
                        if (type == poplar::HALF) {
                          std::vector<float> f(n);
                          poplar::copyDeviceHalfToFloat(target, bytes.data(), f.data(), n);
                          for (std::size_t i = 0; i < n; ++i)
                            out[i] = static_cast<T>(f[i]);
                        } else {
                          if (sizeof(T) != type.size())
                            throw std::logic_error(
                                "TestDevice::read: host element size does not match the tensor");
                          std::memcpy(out.data(), bytes.data(), bytes.size());
                        }
                      }});
  }

  /// Compiles `prog` (saving and reloading the executable on the Reloaded target), loads
  /// it, writes the inputs, runs it once and reads the outputs.
  void run(const poplar::Graph &graph, const poplar::program::Program &prog) {
    runPrograms(graph, {prog}, {0});
  }

  /// An engine for `progs` of `graph`, loaded on this device; on the Reloaded target the
  /// executable is serialised and deserialised first.
  std::unique_ptr<poplar::Engine> createEngine(const poplar::Graph &graph,
                                               const std::vector<poplar::program::Program> &progs,
                                               const poplar::OptionFlags &options = {}) {
    std::unique_ptr<poplar::Engine> engine;
    if (kind_ == TestTarget::Reloaded) {
      std::stringstream saved;
      poplar::compileGraph(graph, progs, options).serialize(saved);
      saved.seekg(0);
      engine.reset(new poplar::Engine(poplar::Executable::deserialize(saved)));
    } else {
      engine.reset(new poplar::Engine(graph, progs, options));
    }
    engine->load(device_);
    return engine;
  }

  /// Like `run`, for several programs run in the order `order`.
  void runPrograms(const poplar::Graph &graph, const std::vector<poplar::program::Program> &progs,
                   const std::vector<unsigned> &order) {
    std::unique_ptr<poplar::Engine> engine = createEngine(graph, progs);
    for (const auto &w : writes_)
      engine->writeTensor(w.handle, w.bytes.data(), w.bytes.data() + w.bytes.size());
    for (unsigned p : order)
      engine->run(p);
    for (const auto &r : reads_) {
      std::vector<char> bytes(r.numBytes);
      engine->readTensor(r.handle, bytes.data(), bytes.data() + bytes.size());
      r.convert(bytes);
    }
    lastEngine_ = std::move(engine);
  }

  /// The engine of the last run (for profiles).
  poplar::Engine *lastEngine() { return lastEngine_.get(); }

private:
  template <class T>
  std::vector<char> toDevice(const poplar::Type &type, const std::vector<T> &values) const {
    std::vector<char> bytes(values.size() * type.size());
    if (type == poplar::HALF) {
      std::vector<float> f(values.begin(), values.end());
      poplar::copyFloatToDeviceHalf(getTarget(), f.data(), bytes.data(), f.size());
    } else {
      if (sizeof(T) != type.size())
        throw std::logic_error("TestDevice::write: host element size does not match the tensor");
      std::memcpy(bytes.data(), values.data(), bytes.size());
    }
    return bytes;
  }

  struct Write {
    std::string handle;
    std::vector<char> bytes;
  };
  struct Read {
    std::string handle;
    std::size_t numBytes;
    std::function<void(const std::vector<char> &)> convert;
  };

  TestTarget kind_;
  poplar::Device device_;
  std::vector<Write> writes_;
  std::vector<Read> reads_;
  std::unique_ptr<poplar::Engine> lastEngine_;
};

/// Runs `body` once per target with a fresh TestDevice; a failure names the target.
template <class Body> void forEachTarget(Body body) {
  for (TestTarget t : allTargets()) {
    INFO("target: " << targetName(t));
    TestDevice dev(t);
    body(dev);
  }
}

} // namespace aspen::test
