// Copyright (c) Aspen contributors.
// Issue 10 item 2: Graph::serialize(ostream, SerializationFormat) and the overload with
// programs. JSON is read back with nlohmann/json and checked against what the graph
// holds; Binary is the same document as CBOR behind the "ASPG" header.
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace {

struct SmallGraph {
  poplar::Device device;
  poplar::Graph graph;
  poplar::Tensor x, c;
  poplar::program::Sequence prog;

  SmallGraph() : device(makeDevice()), graph(device.getTarget()) {
    x = graph.addVariable(poplar::FLOAT, {2, 3}, "x");
    graph.setTileMapping(x[0], 0);
    graph.setTileMapping(x[1], 3);
    c = graph.addConstant<int>(poplar::INT, {2}, {7, -1}, "c");
    graph.setTileMapping(c, 1);
    graph.createHostWrite("x-write", x);
    poplar::DataStream s = graph.addDeviceToHostFIFO("x-out", poplar::FLOAT, 6);
    prog.add(poplar::program::Repeat(3, poplar::program::Copy(x, s)));
  }
  static poplar::Device makeDevice() {
    poplar::IPUModel model;
    model.tilesPerIPU = 4;
    return model.createDevice();
  }
};

} // namespace

TEST_CASE("Graph::serialize as JSON holds the graph and programs", "[compat][serialize]") {
  SmallGraph g;
  std::stringstream ss;
  g.graph.serialize(ss, {g.prog}, poplar::SerializationFormat::JSON);
  const nlohmann::json doc = nlohmann::json::parse(ss.str());
  CHECK(doc["format"] == "aspen-graph");
  CHECK(doc["target"]["tilesPerIPU"] == 4);
  REQUIRE(doc["variables"].size() == 2);
  const auto &x = doc["variables"][0];
  CHECK(x["name"] == "x");
  CHECK(x["type"] == "float");
  CHECK(x["shape"] == nlohmann::json::array({2, 3}));
  // Tile mapping as [tile, begin, end] intervals of the flattened elements.
  CHECK(x["mapping"] == nlohmann::json::parse("[[0,0,3],[3,3,6]]"));
  const auto &c = doc["variables"][1];
  CHECK(c["constant"] == true);
  // Device bytes of {7, -1} as little-endian ints, in hex.
  CHECK(c["initialValue"] == "07000000ffffffff");
  CHECK(doc["hostHandles"][0]["name"] == "x-write");
  CHECK(doc["streams"][0]["handle"] == "x-out");
  REQUIRE(doc["programs"].size() == 1);
  const auto &rep = doc["programs"][0]["children"][0];
  CHECK(rep["kind"] == "Repeat");
  CHECK(rep["count"] == 3);
  CHECK(rep["children"][0]["kind"] == "Copy (tensor to stream)");
  CHECK(rep["children"][0]["stream"] == "x-out");

  // Without programs: the same graph, no programs.
  std::stringstream noProgs;
  g.graph.serialize(noProgs, poplar::SerializationFormat::JSON);
  const nlohmann::json doc2 = nlohmann::json::parse(noProgs.str());
  CHECK(doc2["programs"].empty());
  CHECK(doc2["variables"] == doc["variables"]);
}

TEST_CASE("Graph::serialize as Binary is the JSON document in CBOR", "[compat][serialize]") {
  SmallGraph g;
  std::stringstream json, binary;
  g.graph.serialize(json, {g.prog}, poplar::SerializationFormat::JSON);
  g.graph.serialize(binary, {g.prog}, poplar::SerializationFormat::Binary);
  const std::string bytes = binary.str();
  REQUIRE(bytes.size() > 8);
  CHECK(bytes.substr(0, 4) == "ASPG");
  CHECK(bytes[4] == 1); // format version, little-endian
  const std::vector<std::uint8_t> body(bytes.begin() + 8, bytes.end());
  CHECK(nlohmann::json::from_cbor(body) == nlohmann::json::parse(json.str()));
}
