// Copyright (c) Aspen contributors.
// Unit tests of how a graph holds vertices (libgraph/src/ir/Vertices.hpp): the
// vertex table never moves what it holds, field values keep edges and state
// bytes inline or out of line without losing any, and an edge made back into a
// tensor lists the same elements as the tensor that was connected.
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"

#include <poplar/Tensor.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

using namespace aspen::ir;

namespace {

std::shared_ptr<GraphData> graphWithVariable(std::size_t elements) {
  auto graph = std::make_shared<GraphData>();
  Variable v;
  v.type = poplar::FLOAT;
  v.numElements = elements;
  v.name = "x";
  v.shape = {elements};
  graph->variables.push_back(v);
  return graph;
}

std::vector<std::uint8_t> bytesOf(std::size_t n) {
  std::vector<std::uint8_t> b(n);
  std::iota(b.begin(), b.end(), std::uint8_t(1));
  return b;
}

} // namespace

TEST_CASE("graph_vertices: the table keeps vertices and their fields in place as it grows", "[graph]") {
  VertexTable table;
  const std::size_t n = 3 * 4096 + 17; // several chunks of vertices and of fields
  std::vector<const Vertex *> where;
  std::vector<const FieldValue *> firstField;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t id =
        table.add(static_cast<std::uint32_t>(i % 5), static_cast<std::uint32_t>(i % 3), i % 4);
    REQUIRE(id == i);
    where.push_back(&table[id]);
    firstField.push_back(table[id].fields.empty() ? nullptr : table[id].fields.data());
  }
  REQUIRE(table.size() == n);
  std::size_t visited = 0;
  for (const Vertex &v : table) {
    REQUIRE(&v == where[visited]);
    REQUIRE(v.type == visited % 5);
    REQUIRE(v.computeSet == visited % 3);
    REQUIRE(v.tile == -1);
    REQUIRE(v.fields.size() == visited % 4);
    REQUIRE((v.fields.empty() ? nullptr : v.fields.data()) == firstField[visited]);
    for (const FieldValue &f : v.fields)
      REQUIRE((!f.set && f.edges().empty() && f.stateBytes().empty()));
    ++visited;
  }
  REQUIRE(visited == n);
  // One vertex's fields never overlap the next one's.
  for (std::size_t i = 1; i + 1 < n; ++i)
    if (!table[i].fields.empty() && !table[i + 1].fields.empty())
      REQUIRE((table[i].fields.data() + table[i].fields.size() <= table[i + 1].fields.data() ||
               table[i + 1].fields.data() + table[i + 1].fields.size() <= table[i].fields.data()));
}

TEST_CASE("graph_vertices: state bytes inline and out of line", "[graph]") {
  for (std::size_t size : {0u, 1u, 4u, 15u, 16u, 17u, 48u, 200u}) {
    FieldValue f;
    const auto bytes = bytesOf(size);
    f.setStateBytes(bytes);
    const auto held = f.stateBytes();
    REQUIRE(std::vector<std::uint8_t>(held.begin(), held.end()) == bytes);
    REQUIRE(f.edges().empty());
    // Growing keeps the old bytes and zero-fills the rest; shrinking keeps a prefix.
    f.resizeStateBytes(size + 60);
    auto grown = std::vector<std::uint8_t>(f.stateBytes().begin(), f.stateBytes().end());
    REQUIRE(grown.size() == size + 60);
    REQUIRE(std::equal(bytes.begin(), bytes.end(), grown.begin()));
    REQUIRE(std::all_of(grown.begin() + static_cast<std::ptrdiff_t>(size), grown.end(),
                        [](std::uint8_t b) { return b == 0; }));
    f.resizeStateBytes(size / 2);
    REQUIRE(std::equal(f.stateBytes().begin(), f.stateBytes().end(), bytes.begin()));
    REQUIRE(f.stateBytes().size() == size / 2);
  }
}

TEST_CASE("graph_vertices: edges and lists of edges", "[graph]") {
  auto graph = graphWithVariable(64);
  const poplar::Tensor x = makeVariableTensor(graph, 0, poplar::FLOAT, {8, 8});

  FieldValue single;
  REQUIRE(single.edges().empty());
  single.setEdge(Edge::of(x[2].slice(1, 5)));
  REQUIRE(single.edges().size() == 1);
  REQUIRE(single.edges()[0].numElements() == 4);
  REQUIRE(edgeTensor(*graph, single.edges()[0]) == x[2].slice(1, 5));
  // A scalar keeps its rank for messages; a column is gathered as it was connected.
  single.setEdge(Edge::of(x[3][4]));
  REQUIRE(edgeTensor(*graph, single.edges()[0]).rank() == 0);
  REQUIRE(edgeTensor(*graph, single.edges()[0]) == x[3][4]);
  // Connected through Graph::connect's path: a vector field's edge is rank 1 even
  // for a scalar tensor (it was held flattened); a scalar field's keeps rank 0.
  single.setEdge(x[3][4].getImpl(), true);
  REQUIRE(edgeTensor(*graph, single.edges()[0]) == x[3][4].flatten());
  single.setEdge(x[3][4].getImpl(), false);
  REQUIRE(edgeTensor(*graph, single.edges()[0]) == x[3][4]);
  single.setEdge(x.transpose()[2].getImpl(), true); // strided: held out of line
  REQUIRE(edgeTensor(*graph, single.edges()[0]) == x.transpose()[2]);

  FieldValue list;
  list.setListEdge(3, Edge::of(x.transpose()[1])); // a strided column, entries 0..2 unconnected
  REQUIRE(list.edges().size() == 4);
  REQUIRE(!list.edges()[0].connected());
  REQUIRE(list.edges()[3].connected());
  REQUIRE(edgeTensor(*graph, list.edges()[3]) == x.transpose()[1]);
  list.resizeEdgeList(2);
  REQUIRE(list.edges().size() == 2);
  std::vector<Edge> rows;
  for (std::size_t r = 0; r < 8; ++r)
    rows.push_back(Edge::of(x[r]));
  list.setEdgeList(std::move(rows));
  REQUIRE(list.edges().size() == 8);
  for (std::size_t r = 0; r < 8; ++r)
    REQUIRE(edgeTensor(*graph, list.edges()[r]) == x[r]);
  // An empty list is a list (its edges are none), not an unconnected single edge.
  list.setEdgeList({});
  REQUIRE(list.edges().empty());
}
