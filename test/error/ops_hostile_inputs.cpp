// Copyright (c) Aspen contributors.
// Hostile inputs to every libops family (poputil, popops, poplin, popnn, poprand): empty tensors,
// rank-0 tensors, mismatched shapes and types, dimensions out of range, invalid tensors, integer
// types where float is required, bad option keys and values. Each case must either be rejected
// with poputil::poplibs_error or a poplar_error (PopLibs uses poplar::invalid_option for options)
// whose message names the operation, or build a graph that compiles and runs. Nothing may crash,
// assert, or hand the compiler a graph it then rejects.
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/LogSoftmax.hpp>
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Encoding.hpp>
#include <popops/Fill.hpp>
#include <popops/Pad.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/Util.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace poplar;
using popops::expr::_1;
using popops::expr::_2;
using popops::expr::Sqrt;

namespace {

/// A 4-tile graph with every library's codelets and a few tensors of each kind.
struct Fixture {
  Device device;
  Graph graph;
  program::Sequence prog;

  Fixture() : device(createDevice()), graph(device.getTarget()) {
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    popnn::addCodelets(graph);
    poprand::addCodelets(graph);
  }
  static Device createDevice() {
    IPUModel model("ipu2");
    model.tilesPerIPU = 4;
    return model.createDevice();
  }
  Tensor var(const Type &t, std::vector<std::size_t> shape, const std::string &name = "x") {
    Tensor v = graph.addVariable(t, shape, name);
    poputil::mapTensorLinearly(graph, v);
    return v;
  }
};

enum class Outcome { Rejected, Built };

/// Runs `build` on a fresh fixture. Rejections must be poplibs_error or poplar_error naming
/// `opName`; a graph that was built must compile and run.
Outcome probe(const std::string &opName, const std::function<void(Fixture &)> &build) {
  INFO("operation " << opName);
  Fixture f;
  try {
    build(f);
  } catch (const poputil::poplibs_error &e) {
    INFO("poplibs_error: " << e.what());
    CHECK(std::string(e.what()).find(opName) != std::string::npos);
    return Outcome::Rejected;
  } catch (const poplar::poplar_error &e) {
    INFO("poplar_error: " << e.what());
    CHECK(std::string(e.what()).find(opName) != std::string::npos);
    return Outcome::Rejected;
  }
  // Accepted: the graph must be one the compiler accepts and the runtime runs.
  try {
    Engine engine(f.graph, f.prog);
    engine.load(f.device);
    engine.run(0);
  } catch (const std::exception &e) {
    FAIL_CHECK(opName << " built a graph that fails to compile or run: " << e.what());
  }
  return Outcome::Built;
}

// The line of each case, so that a failure names the case.
#define requireRejected(opName, ...)                                                                         \
  do {                                                                                                       \
    INFO("case at line " << __LINE__ << " should be rejected");                                              \
    CHECK(probe(opName, __VA_ARGS__) == Outcome::Rejected);                                                  \
  } while (0)
#define requireBuilt(opName, ...)                                                                            \
  do {                                                                                                       \
    INFO("case at line " << __LINE__ << " should build and run");                                            \
    CHECK(probe(opName, __VA_ARGS__) == Outcome::Built);                                                     \
  } while (0)
/// For inputs PopLibs may accept or reject: either is fine, a crash or a bad graph is not.
#define requireHandled(opName, ...)                                                                          \
  do {                                                                                                       \
    INFO("case at line " << __LINE__);                                                                       \
    probe(opName, __VA_ARGS__);                                                                              \
  } while (0)

} // namespace

TEST_CASE("hostile inputs to popops element-wise operations and map", "[popops][error]") {
  requireBuilt("popops::add",
               [](Fixture &f) { popops::add(f.graph, f.var(FLOAT, {0}), f.var(FLOAT, {0}), f.prog); });
  requireBuilt("popops::add",
               [](Fixture &f) { popops::add(f.graph, f.var(FLOAT, {}), f.var(FLOAT, {}), f.prog); });
  requireBuilt("popops::add", [](Fixture &f) {
    popops::add(f.graph, f.var(FLOAT, {0, 3}), f.var(FLOAT, {3}), f.prog);
  });
  requireBuilt("popops::addInPlace",
               [](Fixture &f) { popops::addInPlace(f.graph, f.var(HALF, {}), 1.0f, f.prog); });
  requireRejected("popops::add",
                  [](Fixture &f) { popops::add(f.graph, f.var(FLOAT, {0}), f.var(FLOAT, {3}), f.prog); });
  requireRejected("popops::add",
                  [](Fixture &f) { popops::add(f.graph, f.var(BOOL, {4}), f.var(BOOL, {4}), f.prog); });
  requireRejected("popops::sqrt", [](Fixture &f) { popops::sqrt(f.graph, f.var(INT, {4}), f.prog); });
  requireRejected("popops::sigmoid",
                  [](Fixture &f) { popops::sigmoid(f.graph, f.var(UNSIGNED_INT, {4}), f.prog); });
  requireRejected("popops::add",
                  [](Fixture &f) { popops::add(f.graph, Tensor(), f.var(FLOAT, {4}), f.prog); });
  requireRejected("popops::map", [](Fixture &f) { popops::map(f.graph, _1 + 1.0f, {}, f.prog); });
  requireRejected("popops::map", [](Fixture &f) {
    popops::map(f.graph, _1 + _2, {f.var(FLOAT, {4}), f.var(FLOAT, {4})}, f.prog, "m",
                {{"enableGenerateCodelet", "2"}});
  });
  requireRejected("popops::mapWithOutput", [](Fixture &f) {
    popops::mapWithOutput(f.graph, _1 + _2, {f.var(FLOAT, {4}), f.var(FLOAT, {4})}, f.var(HALF, {4}), f.prog);
  });
  requireRejected("popops::mapInPlace", [](Fixture &f) {
    popops::mapInPlace(f.graph, _1 + _2, {f.var(FLOAT, {1}), f.var(FLOAT, {4})}, f.prog);
  });
  requireRejected("popops::select", [](Fixture &f) {
    popops::select(f.graph, f.var(FLOAT, {4}), f.var(FLOAT, {4}), f.var(FLOAT, {4}), f.prog);
  });
  requireRejected("popops::clamp", [](Fixture &f) {
    popops::clamp(f.graph, f.var(FLOAT, {4}), f.var(HALF, {4}), f.var(FLOAT, {4}), f.prog);
  });
  requireRejected("popops::shiftLeft", [](Fixture &f) {
    popops::shiftLeft(f.graph, f.var(FLOAT, {4}), f.var(FLOAT, {4}), f.prog);
  });
}

TEST_CASE("hostile inputs to popops multi-output map and pad", "[popops][error]") {
  requireRejected("popops::map", [](Fixture &f) { popops::map(f.graph, {_1 + _2, _1 * _2}, {}, f.prog); });
  requireRejected("popops::map", [](Fixture &f) {
    popops::map(f.graph, {_1 + _2, Sqrt(_1)}, {f.var(INT, {4}), f.var(INT, {4})}, f.prog);
  });
  requireRejected("popops::mapInPlace", [](Fixture &f) {
    Tensor c = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
    f.graph.setTileMapping(c, 0);
    popops::mapInPlace(f.graph, {_1 + _2, _1 * _2}, {f.var(FLOAT, {4}), c}, f.prog);
  });
  requireRejected("popops::mapWithOutput", [](Fixture &f) {
    popops::mapWithOutput(f.graph, {_1 + _2, _1 * _2}, {f.var(FLOAT, {4}), f.var(FLOAT, {4})},
                          {f.var(FLOAT, {4}), Tensor()}, f.prog);
  });
  requireBuilt("popops::map", [](Fixture &f) {
    popops::map(f.graph, {_1 + _2, _1 * _2}, {f.var(HALF, {0, 3}), f.var(HALF, {3})}, f.prog);
  });
  requireBuilt("popops::mapInPlace", [](Fixture &f) {
    popops::mapInPlace(f.graph, {_1 / _2, _1 % _2}, {f.var(INT, {8}), f.var(INT, {8})}, f.prog);
  });
  requireRejected("popops::pad", [](Fixture &f) { popops::pad(f.graph, Tensor(), {1}, {1}); });
  requireRejected("popops::pad", [](Fixture &f) { popops::pad(f.graph, f.var(FLOAT, {}), {1}, {1}); });
  requireRejected("popops::pad", [](Fixture &f) {
    popops::pad(f.graph, f.graph.addVariable(FLOAT, {3}, "unmapped"), {1}, {1}, 0.0f,
                popops::padding::MappingMethod::EDGE);
  });
  requireRejected("popops::pad", [](Fixture &f) {
    popops::pad(f.var(FLOAT, {0, 3}), {1, 0}, {0, 0}, popops::padding::Type::EDGE);
  });
  requireBuilt("popops::pad", [](Fixture &f) {
    Tensor padded = popops::pad(f.graph, f.var(FLOAT, {0, 3}), {0, 1}, {0, 1});
    Tensor out = f.var(FLOAT, padded.shape(), "out");
    f.prog.add(program::Copy(padded, out));
  });
}

TEST_CASE("hostile inputs to popops cast, fill, zero, iota and scaledAdd", "[popops][error]") {
  requireBuilt("popops::cast", [](Fixture &f) { popops::cast(f.graph, f.var(FLOAT, {0}), HALF, f.prog); });
  requireBuilt("popops::cast", [](Fixture &f) { popops::cast(f.graph, f.var(FLOAT, {}), INT, f.prog); });
  requireBuilt("popops::cast", [](Fixture &f) { popops::cast(f.graph, f.var(FLOAT, {4}), CHAR, f.prog); });
  requireRejected("popops::cast", [](Fixture &f) { popops::cast(f.graph, f.var(BOOL, {4}), SHORT, f.prog); });
  requireRejected("popops::cast", [](Fixture &f) { popops::cast(f.graph, Tensor(), FLOAT, f.prog); });
  requireBuilt("popops::fill", [](Fixture &f) { popops::fill(f.graph, f.var(HALF, {0}), f.prog, 1.0f); });
  requireBuilt("popops::zero", [](Fixture &f) { popops::zero(f.graph, f.var(BOOL, {}), f.prog); });
  requireBuilt("popops::fill", [](Fixture &f) { popops::fill(f.graph, f.var(CHAR, {3}), f.prog, 1); });
  requireBuilt("popops::iota", [](Fixture &f) { popops::iota(f.graph, f.var(INT, {0}), 0, f.prog); });
  requireRejected("popops::iota", [](Fixture &f) { popops::iota(f.graph, f.var(INT, {2, 3}), 0, f.prog); });
  requireBuilt("popops::scaledAddTo", [](Fixture &f) {
    popops::scaledAddTo(f.graph, f.var(FLOAT, {0}), f.var(FLOAT, {0}), 2.0f, f.prog);
  });
  requireRejected("popops::scaledAddTo", [](Fixture &f) {
    popops::scaledAddTo(f.graph, f.var(INT, {4}), f.var(FLOAT, {4}), 2.0f, f.prog);
  });
  requireRejected("popops::scaledAddTo", [](Fixture &f) {
    popops::scaledAddTo(f.graph, f.var(FLOAT, {4}), f.var(FLOAT, {4}), f.var(FLOAT, {2}), f.prog);
  });
  requireRejected("popops::scaledAddTo", [](Fixture &f) {
    popops::scaledAddTo(f.graph, f.var(FLOAT, {4}), f.var(FLOAT, {4}), 1.0f, f.prog, "s",
                        {{"optimiseForSpeed", "true"}});
  });
  requireRejected("popops::scaledSubtractFrom", [](Fixture &f) {
    popops::scaledSubtractFrom(f.graph, f.var(BOOL, {4}), f.var(BOOL, {4}), 1.0f, f.prog);
  });
}

TEST_CASE("hostile inputs to popops reduce", "[popops][error]") {
  requireBuilt("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(FLOAT, {}), {}, popops::Operation::ADD, f.prog);
  });
  requireBuilt("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(FLOAT, {0, 4}), {0}, popops::Operation::MAX, f.prog);
  });
  requireBuilt("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(HALF, {4, 0}), {0}, popops::Operation::ADD, f.prog);
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(FLOAT, {}), {0}, popops::Operation::ADD, f.prog);
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(FLOAT, {3, 4}), {1, 1}, popops::Operation::ADD, f.prog);
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(BOOL, {3, 4}), {1}, popops::Operation::ADD, f.prog);
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(FLOAT, {3, 4}), INT, {1}, popops::Operation::ADD, f.prog);
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduceWithOutput(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {4}), {1}, popops::Operation::ADD,
                             f.prog);
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(FLOAT, {3, 4}), {1}, popops::Operation::ADD, f.prog, "r",
                   {{"accumType.interTile", "int"}});
  });
  requireRejected("popops::reduce", [](Fixture &f) {
    popops::reduceWithOutput(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {3}), {1},
                             popops::ReduceParams(popops::Operation::ADD, false, f.var(INT, {})), f.prog);
  });
}

TEST_CASE("hostile inputs to popops slicing, sorting and topK", "[popops][error]") {
  requireRejected("popops::dynamicSlice", [](Fixture &f) {
    popops::dynamicSlice(f.graph, f.var(FLOAT, {4, 5}), f.var(FLOAT, {1}), {0}, {1}, f.prog);
  });
  requireRejected("popops::dynamicSlice", [](Fixture &f) {
    popops::dynamicSlice(f.graph, f.var(FLOAT, {4, 5}), f.var(UNSIGNED_INT, {1}), {0, 1}, {1, 1}, f.prog);
  });
  requireRejected("popops::dynamicSlice", [](Fixture &f) {
    popops::dynamicSlice(f.graph, f.var(FLOAT, {4, 5}), f.var(UNSIGNED_INT, {1}), {2}, {1}, f.prog);
  });
  requireRejected("popops::dynamicSlice", [](Fixture &f) {
    popops::dynamicSlice(f.graph, f.var(FLOAT, {}), f.var(UNSIGNED_INT, {1}), {0}, {1}, f.prog);
  });
  requireBuilt("popops::dynamicSlice", [](Fixture &f) {
    popops::dynamicSlice(f.graph, f.var(FLOAT, {4, 0}), f.var(UNSIGNED_INT, {1}), {0}, {1}, f.prog);
  });
  requireRejected("popops::dynamicUpdate", [](Fixture &f) {
    popops::dynamicUpdate(f.graph, f.var(FLOAT, {4, 5}), f.var(FLOAT, {2, 5}), f.var(UNSIGNED_INT, {1}), {0},
                          {1}, f.prog);
  });
  requireRejected("popops::dynamicUpdate", [](Fixture &f) {
    popops::dynamicUpdate(f.graph, f.var(FLOAT, {4, 5}), f.var(HALF, {1, 5}), f.var(UNSIGNED_INT, {1}), {0},
                          {1}, f.prog);
  });
  requireRejected("popops::multiSlice", [](Fixture &f) {
    popops::multiSlice(f.graph, f.var(FLOAT, {4, 5}), f.var(FLOAT, {3, 1}), {0}, {1}, f.prog,
                       popops::SlicePlan(), {});
  });
  requireRejected("popops::multiUpdateAdd", [](Fixture &f) {
    popops::multiUpdateAdd(f.graph, f.var(FLOAT, {4, 5}), f.var(FLOAT, {3, 1, 4}),
                           f.var(UNSIGNED_INT, {3, 1}), f.var(FLOAT, {}), {0}, {1}, f.prog,
                           popops::SlicePlan(), {});
  });
  requireRejected("popops::multiSlice", [](Fixture &f) {
    popops::multiSlice(f.graph, f.var(FLOAT, {4, 5}), f.var(UNSIGNED_INT, {3, 1}), {0}, {1}, f.prog,
                       popops::SlicePlan(), {{"usedForSlicing", "true"}});
  });
  requireRejected("popops::createIndicesTensor", [](Fixture &f) {
    popops::createIndicesTensor(f.graph, {0}, 3, popops::SlicePlan(), {{"usedForUpdate", "sometimes"}});
  });
  requireRejected("popops::sort", [](Fixture &f) { popops::sort(f.graph, f.var(FLOAT, {}), 0, f.prog); });
  requireBuilt("popops::sort", [](Fixture &f) { popops::sort(f.graph, f.var(FLOAT, {0, 3}), 1, f.prog); });
  requireRejected("popops::sortKeyValue", [](Fixture &f) {
    popops::sortKeyValue(f.graph, f.var(FLOAT, {4, 5}), f.var(INT, {4, 6}), 1, f.prog);
  });
  requireRejected("popops::topK", [](Fixture &f) {
    popops::topK(f.graph, f.prog, f.var(FLOAT, {}), popops::TopKParams(1, true, popops::SortOrder::NONE));
  });
  requireRejected("popops::topKKeyValue", [](Fixture &f) {
    popops::topKKeyValue(f.graph, f.prog, f.var(FLOAT, {4, 5}), f.var(FLOAT, {4, 6}),
                         popops::TopKParams(1, true, popops::SortOrder::NONE));
  });
  requireHandled("popops::topK", [](Fixture &f) {
    popops::topK(f.graph, f.prog, f.var(FLOAT, {3, 5}), popops::TopKParams(0, true, popops::SortOrder::NONE));
  });
}

TEST_CASE("hostile inputs to poputil", "[poputil][error]") {
  requireBuilt("poputil::mapTensorLinearly", [](Fixture &f) {
    Tensor t = f.graph.addVariable(FLOAT, {0}, "t");
    poputil::mapTensorLinearly(f.graph, t);
  });
  requireHandled("poputil::mapTensorLinearly", [](Fixture &f) {
    Tensor t = f.graph.addVariable(FLOAT, {10}, "t");
    poputil::mapTensorLinearly(f.graph, t, 1, 0);
  });
  requireRejected("poputil::broadcastToMatch", [](Fixture &f) {
    Tensor a = f.var(FLOAT, {2, 3}), b = f.var(FLOAT, {3, 2});
    poputil::broadcastToMatch(a, b);
  });
  requireRejected("poputil::duplicate", [](Fixture &f) { poputil::duplicate(f.graph, Tensor(), f.prog); });
}

TEST_CASE("hostile inputs to poplin", "[poplin][error]") {
  requireBuilt("poplin::matMul", [](Fixture &f) {
    poplin::matMul(f.graph, f.var(FLOAT, {0, 3}), f.var(FLOAT, {3, 2}), f.prog);
  });
  requireBuilt("poplin::matMul", [](Fixture &f) {
    poplin::matMul(f.graph, f.var(HALF, {2, 3}), f.var(HALF, {3, 0}), f.prog);
  });
  requireRejected("poplin::matMul", [](Fixture &f) {
    poplin::matMul(f.graph, f.var(FLOAT, {2, 0}), f.var(FLOAT, {0, 2}), f.prog);
  });
  requireRejected("poplin::matMul",
                  [](Fixture &f) { poplin::matMul(f.graph, f.var(FLOAT, {}), f.var(FLOAT, {}), f.prog); });
  requireRejected("poplin::matMul", [](Fixture &f) {
    poplin::matMul(f.graph, Tensor(), f.var(FLOAT, {2, 2}), f.prog);
  });
  requireRejected("poplin::matMul", [](Fixture &f) {
    poplin::matMul(f.graph, f.var(FLOAT, {2, 2}), f.var(FLOAT, {2, 2}), f.prog, INT);
  });
  requireRejected("poplin::matMulAcc", [](Fixture &f) {
    poplin::matMulAcc(f.graph, f.var(FLOAT, {2, 3}), 1.0f, f.var(FLOAT, {2, 2}), f.var(FLOAT, {2, 2}),
                      f.prog);
  });
  requireRejected("poplin::matMulAcc", [](Fixture &f) {
    poplin::matMulAcc(f.graph, f.var(FLOAT, {2, 2}), f.var(INT, {1}), f.var(FLOAT, {2, 2}),
                      f.var(FLOAT, {2, 2}), f.prog);
  });
  requireRejected("poplin::createMatMulInputLHS", [](Fixture &f) {
    poplin::createMatMulInputLHS(f.graph, FLOAT, {2, 3}, {4, 2}, "lhs");
  });
  requireRejected("poplin::matMul", [](Fixture &f) {
    poplin::matMul(f.graph, f.var(FLOAT, {2, 2}), f.var(FLOAT, {2, 2}), f.prog, "m", {{"partialsType", ""}});
  });
}

TEST_CASE("hostile inputs to popnn", "[popnn][error]") {
  requireBuilt("popnn::nonLinearity", [](Fixture &f) {
    popnn::nonLinearity(f.graph, popnn::NonLinearityType::RELU, f.var(FLOAT, {0}), f.prog);
  });
  requireBuilt("popnn::nonLinearity", [](Fixture &f) {
    popnn::nonLinearity(f.graph, popnn::NonLinearityType::TANH, f.var(HALF, {}), f.prog);
  });
  requireBuilt("popnn::nonLinearity", [](Fixture &f) {
    popnn::nonLinearity(f.graph, popnn::NonLinearityType::SOFTMAX, f.var(FLOAT, {3, 0}), f.prog);
  });
  requireBuilt("popnn::nonLinearity", [](Fixture &f) {
    popnn::nonLinearity(f.graph, popnn::NonLinearityType::SOFTMAX, f.var(FLOAT, {}), f.prog);
  });
  requireRejected("popnn::nonLinearity", [](Fixture &f) {
    popnn::nonLinearity(f.graph, popnn::NonLinearityType::SOFTMAX, f.var(INT, {3, 4}), f.prog);
  });
  requireRejected("popnn::nonLinearity", [](Fixture &f) {
    popnn::nonLinearity(f.graph, popnn::NonLinearityType::GELU, Tensor(), f.prog);
  });
  requireRejected("popnn::logSoftmax", [](Fixture &f) {
    popnn::logSoftmax(f.graph, f.var(INT, {3, 4}), f.prog);
  });
  requireRejected("popnn::nonLinearityInputGradient", [](Fixture &f) {
    popnn::nonLinearityInputGradient(f.graph, popnn::NonLinearityType::RELU, f.var(FLOAT, {4}),
                                     f.var(HALF, {4}), f.prog);
  });
  requireRejected("popnn::calcLoss", [](Fixture &f) {
    popnn::calcLoss(f.graph, f.var(INT, {4, 10}), f.var(UNSIGNED_INT, {4}), f.var(INT, {4}),
                    f.var(INT, {4, 10}), popnn::CROSS_ENTROPY_LOSS);
  });
  requireRejected("popnn::calcLoss", [](Fixture &f) {
    popnn::calcLoss(f.graph, f.var(FLOAT, {4}), f.var(UNSIGNED_INT, {4}), f.var(FLOAT, {4}),
                    f.var(FLOAT, {4}), popnn::CROSS_ENTROPY_LOSS);
  });
  requireRejected("popnn::calcLoss", [](Fixture &f) {
    popnn::calcLoss(f.graph, f.var(FLOAT, {4, 10}), f.var(UNSIGNED_INT, {4}), f.var(HALF, {4}),
                    f.var(FLOAT, {4, 10}), popnn::SUM_SQUARED_LOSS);
  });
  requireHandled("popnn::argMax", [](Fixture &f) { popnn::argMax(f.graph, f.var(FLOAT, {0, 4}), f.prog); });
  requireRejected("popnn::argMax", [](Fixture &f) { popnn::argMax(f.graph, f.var(FLOAT, {3, 0}), f.prog); });
  requireRejected("popnn::argMax", [](Fixture &f) { popnn::argMax(f.graph, f.var(BOOL, {3, 4}), f.prog); });
  requireRejected("popnn::pooling::pool", [](Fixture &f) {
    popnn::pooling::PoolParams p(popnn::PoolingType::MAX, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1, 1,
                                 FLOAT);
    popnn::pooling::pool(f.graph, p, f.var(FLOAT, {1, 1, 4, 4}), f.prog, "p",
                         {{"poolUseIntrospection", "true"}});
  });
  requireRejected("popnn::pooling::pool", [](Fixture &f) {
    popnn::pooling::PoolParams p(popnn::PoolingType::MAX, {4, 4}, {2, 2}, {0, 1}, {0, 0}, {0, 0}, 1, 1,
                                 FLOAT);
    popnn::pooling::pool(f.graph, p, f.var(FLOAT, {1, 1, 4, 4}), f.prog);
  });
  requireRejected("popnn::pooling::pool", [](Fixture &f) {
    popnn::pooling::PoolParams p(popnn::PoolingType::MAX, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1, 1, INT);
    popnn::pooling::pool(f.graph, p, f.var(INT, {1, 1, 4, 4}), f.prog);
  });
  requireRejected("popnn::pooling::pool", [](Fixture &f) {
    popnn::pooling::PoolParams p(popnn::PoolingType::MAX, {4, 4}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1, 1, HALF);
    popnn::pooling::pool(f.graph, p, f.var(FLOAT, {1, 1, 4, 4}), f.prog);
  });
}

TEST_CASE("empty tensors through every family", "[ops][error]") {
  requireBuilt("popnn::calcLoss", [](Fixture &f) {
    f.prog.add(popnn::calcLoss(f.graph, f.var(FLOAT, {0, 10}), f.var(UNSIGNED_INT, {0}), f.var(FLOAT, {0}),
                               f.var(FLOAT, {0, 10}), f.var(UNSIGNED_INT, {1}), popnn::CROSS_ENTROPY_LOSS));
  });
  requireBuilt("poplin::matMulGrouped", [](Fixture &f) {
    poplin::matMulGrouped(f.graph, f.var(FLOAT, {0, 2, 3}), f.var(FLOAT, {0, 3, 4}), f.prog, FLOAT);
  });
  requireBuilt("popops::reduce", [](Fixture &f) {
    popops::reduce(f.graph, f.var(HALF, {0, 5}), FLOAT, {1}, popops::Operation::SQUARE_ADD, f.prog);
  });
  requireBuilt("popops::sort", [](Fixture &f) { popops::sort(f.graph, f.var(INT, {0}), 0, f.prog); });
  requireHandled("popops::topK", [](Fixture &f) {
    popops::topK(f.graph, f.prog, f.var(FLOAT, {0, 5}), popops::TopKParams(2, true, popops::SortOrder::NONE));
  });
  requireBuilt("popops::dynamicSlice", [](Fixture &f) {
    popops::dynamicSlice(f.graph, f.var(FLOAT, {4, 5}), f.var(UNSIGNED_INT, {1}), {0}, {0}, f.prog);
  });
  requireBuilt("popops::scaledSubtractFrom", [](Fixture &f) {
    popops::scaledSubtractFrom(f.graph, f.var(HALF, {0, 2}), f.var(HALF, {0, 2}), f.var(FLOAT, {}), f.prog);
  });
  requireBuilt("popops::cast", [](Fixture &f) { popops::cast(f.graph, f.var(BOOL, {0}), FLOAT, f.prog); });
  requireBuilt("poprand::dropout", [](Fixture &f) {
    poprand::dropout(f.graph, nullptr, 0, f.var(HALF, {0}), f.var(HALF, {0}), 0.5, 2.0, f.prog);
  });
  requireBuilt("popnn::logSoftmax", [](Fixture &f) {
    popnn::logSoftmax(f.graph, f.var(HALF, {0, 7}), f.prog);
  });
}

TEST_CASE("hostile inputs to poprand", "[poprand][error]") {
  requireBuilt("poprand::uniform", [](Fixture &f) {
    poprand::uniform(f.graph, nullptr, 0, f.var(FLOAT, {0}), FLOAT, 0.0, 1.0, f.prog);
  });
  requireBuilt("poprand::normal", [](Fixture &f) {
    poprand::normal(f.graph, nullptr, 0, f.var(FLOAT, {}), HALF, 0.0, 1.0, f.prog);
  });
  requireRejected("poprand::uniform", [](Fixture &f) {
    Tensor seed = f.var(FLOAT, {2});
    poprand::uniform(f.graph, &seed, 0, f.var(FLOAT, {4}), FLOAT, 0.0, 1.0, f.prog);
  });
  requireRejected("poprand::normal", [](Fixture &f) {
    poprand::normal(f.graph, nullptr, 0, f.var(FLOAT, {4}), FLOAT, 0.0, -1.0, f.prog);
  });
  requireRejected("poprand::bernoulli", [](Fixture &f) {
    poprand::bernoulli(f.graph, nullptr, 0, f.var(FLOAT, {4}), BOOL, 0.5, f.prog);
  });
  requireRejected("poprand::dropout", [](Fixture &f) {
    poprand::dropout(f.graph, nullptr, 0, f.var(INT, {4}), f.var(INT, {4}), 0.5, 2.0, f.prog);
  });
  requireRejected("poprand::dropout", [](Fixture &f) {
    poprand::dropout(f.graph, nullptr, 0, f.var(FLOAT, {4}), f.var(FLOAT, {4}), 1.5, 2.0, f.prog);
  });
  requireRejected("poprand::uniform", [](Fixture &f) {
    poprand::uniform(f.graph, nullptr, 0, Tensor(), FLOAT, 0.0, 1.0, f.prog);
  });
}

TEST_CASE("a vertex library that is not where the environment variable says", "[ops][error]") {
  struct Library {
    const char *envVar, *op;
    void (*addCodelets)(Graph &);
  };
  const Library libraries[] = {{"ASPEN_POPOPS_GP", "popops::addCodelets", &popops::addCodelets},
                               {"ASPEN_POPLIN_GP", "poplin::addCodelets", &poplin::addCodelets},
                               {"ASPEN_POPNN_GP", "popnn::addCodelets", &popnn::addCodelets},
                               {"ASPEN_POPRAND_GP", "poprand::addCodelets", &poprand::addCodelets}};
  for (const Library &lib : libraries) {
    INFO(lib.envVar);
    Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
    const char *previous = std::getenv(lib.envVar);
    const std::string saved = previous ? previous : "";
    ::setenv(lib.envVar, "/nonexistent/library.gp", 1);
    try {
      lib.addCodelets(graph);
      FAIL_CHECK("no error");
    } catch (const poplar::graph_object_load_error &e) {
      const std::string what = e.what();
      CHECK(what.find(lib.op) != std::string::npos);
      CHECK(what.find("/nonexistent/library.gp") != std::string::npos);
      CHECK(what.find(lib.envVar) != std::string::npos);
    }
    if (previous)
      ::setenv(lib.envVar, saved.c_str(), 1);
    else
      ::unsetenv(lib.envVar);
    CHECK_NOTHROW(lib.addCodelets(graph));
  }
}
