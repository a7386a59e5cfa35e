// Copyright (c) Aspen contributors.
// Errors: bad input to poplar::Tensor view operations. Each case checks the
// exception type and that the message names the tensor and the bad value.
#include "ErrorCheck.hpp"
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"

#include <poplar/Graph.hpp>
#include <poplar/Interval.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <functional>
#include <sstream>
#include <vector>

using namespace poplar;
using aspen::test::requireError;

namespace {

struct Fixture {
  std::shared_ptr<aspen::ir::GraphData> graph = std::make_shared<aspen::ir::GraphData>();

  Tensor var(const std::string &name, const std::vector<std::size_t> &shape, Type type = FLOAT) {
    const auto id = static_cast<aspen::ir::VarId>(graph->variables.size());
    aspen::ir::Variable v;
    v.type = type;
    v.numElements = 1;
    for (auto d : shape)
      v.numElements *= d;
    v.name = name;
    v.shape = shape;
    graph->variables.push_back(v);
    return aspen::ir::makeVariableTensor(graph, id, type, shape);
  }
};

} // namespace

TEST_CASE("tensor error: slice beyond the end of a dimension", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.slice(5, 9, 0); },
                            {"slice(5, 9, 0) is out of range for tensor 'weights' of shape {4,3}"});
}

TEST_CASE("tensor error: slice with begin after end", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.slice(2, 1, 1); }, {"slice(2, 1, 1)", "'weights'", "{4,3}"});
}

TEST_CASE("tensor error: slice of a dimension the tensor does not have", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.slice(0, 1, 2); }, {"dimension 2", "'weights'", "rank 2"});
}

TEST_CASE("tensor error: multi-dimensional slice out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>(
      [&] {
        (void)w.slice({0, 1}, {2, 4});
      },
      {"slice({0,1}, {2,4})", "'weights'", "dimension 1"});
}

TEST_CASE("tensor error: multi-dimensional slice with the wrong number of bounds", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  // Fewer bounds than dimensions slice the leading ones (compat/tensor_views covers it); unequal
  // counts, or more bounds than dimensions, are refused.
  const std::vector<std::size_t> begin = {0}, end = {2, 3};
  requireError<index_error>([&] { (void)w.slice(begin, end); }, {"slice({0}, {2,3})", "'weights'"});
  const std::vector<std::size_t> begin3 = {0, 0, 0}, end3 = {1, 1, 1};
  requireError<index_error>([&] { (void)w.slice(begin3, end3); }, {"slice({0,0,0}, {1,1,1})", "'weights'"});
}

TEST_CASE("tensor error: operator[] out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("rows", {4, 3});
  requireError<index_error>([&] { (void)w[4]; }, {"index 4", "'rows'", "size 4"});
}

TEST_CASE("tensor error: operator[] on a scalar", "[tensor][error]") {
  Fixture f;
  const Tensor s = f.var("scalar", {});
  requireError<index_error>([&] { (void)s[0]; }, {"operator[](0)", "'scalar'", "scalar"});
}

TEST_CASE("tensor error: index out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("cube", {2, 3, 4});
  requireError<index_error>(
      [&] {
        (void)w.index({1, 3});
      },
      {"index({1,3})", "index 3", "'cube'", "dimension 1"});
}

TEST_CASE("tensor error: index with more indices than dimensions", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("cube", {2, 3});
  requireError<index_error>([&] { (void)w.index({1, 1, 1}); }, {"index({1,1,1})", "'cube'"});
}

TEST_CASE("tensor error: dim out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.dim(2); }, {"dim(2)", "'weights'"});
}

TEST_CASE("tensor error: reshape to a different element count", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<tensor_creation_error>(
      [&] {
        (void)w.reshape({5, 3});
      },
      {"reshape({5,3})", "'weights'", "{4,3}", "15", "12"});
}

TEST_CASE("tensor error: reshapePartial to a different element count", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3, 2});
  requireError<tensor_creation_error>([&] { (void)w.reshapePartial(1, 3, {7}); },
                                      {"reshapePartial(1, 3, {7})", "'weights'", "{4,3,2}"});
}

TEST_CASE("tensor error: reshapePartial with a bad dimension range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.reshapePartial(1, 3, {3}); },
                            {"reshapePartial(1, 3, {3})", "'weights'"});
}

TEST_CASE("tensor error: flatten with a bad dimension range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.flatten(1, 3); }, {"flatten(1, 3)", "'weights'", "rank 2"});
}

TEST_CASE("tensor error: dimShuffle with a repeated dimension", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("activations", {2, 3, 4});
  requireError<index_error>(
      [&] {
        (void)w.dimShuffle({0, 0, 1});
      },
      {"dimShuffle({0,0,1})", "'activations'", "permutation"});
}

TEST_CASE("tensor error: dimShuffle with the wrong number of dimensions", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("activations", {2, 3, 4});
  requireError<index_error>([&] { (void)w.dimShuffle({1, 0}); }, {"dimShuffle({1,0})", "'activations'"});
}

TEST_CASE("tensor error: dimShuffle with a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("activations", {2, 3});
  requireError<index_error>([&] { (void)w.dimShuffle({0, 5}); }, {"dimShuffle({0,5})", "'activations'"});
}

TEST_CASE("tensor error: dimShufflePartial with a repeated destination", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("activations", {2, 3, 4});
  requireError<index_error>(
      [&] {
        (void)w.dimShufflePartial({0, 1}, {2, 2});
      },
      {"dimShufflePartial({0,1}, {2,2})", "dimension 2", "'activations'"});
}

TEST_CASE("tensor error: dimShufflePartial with lists of different lengths", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("activations", {2, 3, 4});
  requireError<index_error>(
      [&] {
        (void)w.dimShufflePartial({0, 1}, {2});
      },
      {"dimShufflePartial({0,1}, {2})", "'activations'"});
}

TEST_CASE("tensor error: dimRoll out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("activations", {2, 3});
  requireError<index_error>([&] { (void)w.dimRoll(3, 0); },
                            {"dimRoll(3, 0)", "dimension 3", "'activations'"});
}

TEST_CASE("tensor error: transpose of a tensor that is not 2-D", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("cube", {2, 3, 4});
  requireError<index_error>([&] { (void)w.transpose(); }, {"transpose()", "'cube'", "rank 3"});
}

TEST_CASE("tensor error: expand at a position beyond the rank", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 3});
  requireError<index_error>([&] { (void)w.expand({3}); }, {"expand({3})", "index 3", "'weights'"});
}

TEST_CASE("tensor error: squeeze of a dimension that is not 1", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 1, 3});
  requireError<index_error>([&] { (void)w.squeeze({0}); },
                            {"squeeze({0})", "dimension 0", "size 4", "'weights'"});
}

TEST_CASE("tensor error: squeeze of a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4, 1});
  requireError<index_error>([&] { (void)w.squeeze({2}); }, {"squeeze({2})", "dimension 2", "'weights'"});
}

TEST_CASE("tensor error: subSample with stride 0", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("signal", {8});
  requireError<index_error>([&] { (void)w.subSample(0, 0); }, {"subSample(0, 0)", "stride 0", "'signal'"});
}

TEST_CASE("tensor error: subSample of a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("signal", {8});
  requireError<index_error>([&] { (void)w.subSample(2, 1); }, {"subSample(2, 1)", "dimension 1", "'signal'"});
}

TEST_CASE("tensor error: broadcast along a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("bias", {8});
  requireError<index_error>([&] { (void)w.broadcast(4, 1); }, {"broadcast(4, 1)", "dimension 1", "'bias'"});
}

TEST_CASE("tensor error: upsample along a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("bias", {8});
  requireError<index_error>([&] { (void)w.upsample(2, 3, UpsampleMethod::REPEAT); },
                            {"upsample(2, 3)", "dimension 3", "'bias'"});
}

TEST_CASE("tensor error: reverse of a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("bias", {8});
  requireError<index_error>([&] { (void)w.reverse(1); }, {"reverse(1)", "dimension 1", "'bias'"});
}

TEST_CASE("tensor error: concat of tensors whose other dimensions differ", "[tensor][error]") {
  Fixture f;
  const Tensor a = f.var("left", {2, 3}), b = f.var("right", {2, 4});
  requireError<index_error>([&] { (void)concat(a, b, 0); },
                            {"concat along dimension 0", "'left' of shape {2,3}", "'right' of shape {2,4}"});
}

TEST_CASE("tensor error: concat of tensors of different ranks", "[tensor][error]") {
  Fixture f;
  const Tensor a = f.var("left", {2, 3}), b = f.var("right", {2, 3, 1});
  requireError<index_error>([&] { (void)concat(a, b, 1); },
                            {"'left' of shape {2,3}", "'right' of shape {2,3,1}"});
}

TEST_CASE("tensor error: concat of tensors of different element types", "[tensor][error]") {
  Fixture f;
  const Tensor a = f.var("floats", {2}, FLOAT), b = f.var("ints", {2}, INT);
  requireError<index_error>([&] { (void)concat(a, b); },
                            {"element types", "'floats'", "float", "'ints'", "int"});
}

TEST_CASE("tensor error: concat along a dimension out of range", "[tensor][error]") {
  Fixture f;
  const Tensor a = f.var("left", {2, 3}), b = f.var("right", {2, 3});
  requireError<index_error>([&] { (void)concat(a, b, 2); }, {"dimension 2", "'left'"});
}

TEST_CASE("tensor error: concat of no tensors", "[tensor][error]") {
  requireError<index_error>([&] { (void)concat(std::vector<Tensor>{}); }, {"empty list"});
}

TEST_CASE("tensor error: append of mismatched shapes", "[tensor][error]") {
  Fixture f;
  const Tensor a = f.var("rows", {2, 3}), b = f.var("row", {4});
  requireError<index_error>([&] { (void)append(a, b); }, {"'rows' of shape {2,3}", "'row' of shape {1,4}"});
}

TEST_CASE("tensor error: reinterpret to a type that does not divide the innermost dimension",
          "[tensor][error]") {
  Fixture f;
  const Tensor h = f.var("halves", {2, 3}, HALF);
  requireError<type_error>([&] { (void)h.reinterpret(FLOAT); },
                           {"reinterpret", "'halves'", "{2,3}", "as float", "6 bytes"});
}

TEST_CASE("tensor error: reinterpret of misaligned elements", "[tensor][error]") {
  Fixture f;
  const Tensor h = f.var("halves", {8}, HALF);
  requireError<type_error>([&] { (void)h.slice(1, 5).reinterpret(FLOAT); },
                           {"reinterpret", "'halves'", "as float", "aligned"});
}

TEST_CASE("tensor error: reinterpret of elements that are not contiguous", "[tensor][error]") {
  Fixture f;
  const Tensor h = f.var("halves", {8}, HALF);
  requireError<type_error>([&] { (void)h.subSample(2, 0).reinterpret(FLOAT); },
                           {"reinterpret", "'halves'", "as float", "contiguous"});
}

TEST_CASE("tensor error: reinterpret of a scalar to a wider type", "[tensor][error]") {
  Fixture f;
  const Tensor h = f.var("half scalar", {}, HALF);
  requireError<type_error>([&] { (void)h.reinterpret(FLOAT); }, {"reinterpret", "'half scalar'", "as float"});
}

TEST_CASE("tensor error: reinterpret to an unknown type", "[tensor][error]") {
  Fixture f;
  const Tensor w = f.var("weights", {4});
  requireError<type_error>([&] { (void)w.reinterpret(Type()); },
                           {"reinterpret", "'weights'", "unknown type"});
}

TEST_CASE("tensor error: an invalid tensor cannot be used", "[tensor][error]") {
  requireError<poplar_error>([&] { (void)Tensor().shape(); }, {"shape()", "invalid"});
  requireError<poplar_error>([&] { (void)Tensor().slice(0, 1); }, {"slice()", "invalid"});
  std::ostringstream os;
  requireError<poplar_error>([&] { Tensor().outputRegions(os); }, {"outputRegions()", "invalid"});
  CHECK(os.str().empty());
}

TEST_CASE("tensor error: a tensor of an unnamed variable is named by its number", "[tensor][error]") {
  Fixture f;
  (void)f.var("first", {2});
  const Tensor w = f.var("", {4, 3});
  requireError<index_error>([&] { (void)w.slice(0, 5, 0); }, {"slice(0, 5, 0)", "variable 1", "{4,3}"});
}

TEST_CASE("tensor error: a view of several variables names them", "[tensor][error]") {
  Fixture f;
  const Tensor w = concat(f.var("a", {2}), f.var("b", {3}));
  requireError<index_error>([&] { (void)w[7]; }, {"index 7", "'a'+'b'", "{5}"});
}

TEST_CASE("tensor error: messages still work when the graph is gone", "[tensor][error]") {
  Tensor w;
  {
    Fixture f;
    w = f.var("gone", {4});
  }
  requireError<index_error>([&] { (void)w[9]; }, {"index 9", "variable 0", "{4}"});
}

TEST_CASE("tensor error: a tensor of another graph, or of a graph that is gone, is rejected",
          "[tensor][error]") {
  const Target target = Target::createIPUTarget(1, 4, "ipu2");
  Graph g(target);
  Tensor theirs, gone;
  {
    Graph other(target);
    theirs = other.addVariable(FLOAT, {8}, "theirs");
    // Variable 0 of each graph: only the graphs tell them apart.
    REQUIRE(g.addVariable(FLOAT, {8}, "mine").getVarRegions()[0].var.getId() ==
            theirs.getVarRegions()[0].var.getId());
    requireError<invalid_tile_mapping>([&] { g.setTileMapping(theirs, 0); },
                                       {"setTileMapping", "'theirs'", "belongs to a different graph"});
    gone = theirs.slice(2, 6);
  }
  // The other graph is gone; its views still describe themselves (by variable
  // number) and are still not this graph's, also for a graph made after it.
  Graph later(target);
  (void)later.addVariable(FLOAT, {8}, "later");
  for (Graph *graph : {&g, &later})
    requireError<invalid_tile_mapping>(
        [&] { graph->setTileMapping(gone, 0); },
        {"setTileMapping", "variable 0", "{4}", "belongs to a different graph"});
}

TEST_CASE("tensor error: slices() out of range, except a one-element tensor's", "[tensor][error]") {
  // slices() of a one-element tensor by wider intervals broadcasts it (popops' generated
  // element-wise vertices rely on it); every other out-of-range slice still throws.
  Fixture f;
  const Tensor w = f.var("weights", {4});
  const std::vector<Interval> wide{{0, 6}};
  requireError<index_error>([&] { (void)w.slices(wide); }, {"slice(0, 6, 0)", "'weights'", "{4}"});
  requireError<index_error>(
      [&] {
        (void)w.slices(std::vector<std::vector<Interval>>{{{2, 3}, {3, 5}}});
      },
      {"slice(3, 5, 0)", "'weights'"});
  const Tensor s = f.var("scale", {1});
  requireError<index_error>([&] { (void)s.slice(0, 20, 0); }, {"slice(0, 20, 0)", "'scale'", "{1}"});
  requireError<index_error>(
      [&] {
        (void)s.slices(std::vector<Interval>{{3, 2}});
      },
      {"slice(3, 2, 0)", "'scale'"});
  CHECK(s.slices(wide).at(0).numElements() == 6);
}
