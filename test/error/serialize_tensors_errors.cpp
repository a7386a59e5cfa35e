// Copyright (c) Aspen contributors.
// Issue 24: bad input to Graph::serializeTensors / deserializeTensors. A stream that
// is not a tensor file, a truncated or damaged one, or one that names variables,
// elements or tiles the graph cannot have throws poplar::parse_error naming the
// part at fault, and leaves the graph as it was; writing a tensor of another
// graph throws poplar_error naming the tensor.
#include "ErrorCheck.hpp"

#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

using aspen::test::requireError;
using poplar::SerializationFormat;

namespace {

poplar::Device device(unsigned tiles) {
  poplar::IPUModel model;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

std::size_t variableCount(const poplar::Graph &g) {
  std::stringstream ss;
  g.serialize(ss, SerializationFormat::JSON);
  return nlohmann::json::parse(ss.str())["variables"].size();
}

/// A file of one tensor {2, 3} of variable 'x', mapped across 4 tiles.
std::string tensorFile(SerializationFormat format) {
  poplar::Device d = device(4);
  poplar::Graph g(d.getTarget());
  poplar::Tensor x = g.addVariable(poplar::FLOAT, {2, 3}, "x");
  g.setTileMapping(x[0], 0);
  g.setTileMapping(x[1], 3);
  std::stringstream ss;
  g.serializeTensors(ss, {x, x.transpose()}, format);
  return ss.str();
}

} // namespace

TEST_CASE("deserializeTensors of an empty or unopened stream", "[error][serialize]") {
  poplar::Device d = device(4);
  poplar::Graph g(d.getTarget());
  std::stringstream empty;
  requireError<poplar::parse_error>([&] { g.deserializeTensors(empty, SerializationFormat::Binary); },
                                    {"deserializeTensors", "empty"});
  std::ifstream missing("/nonexistent/tensors.bin");
  requireError<poplar::parse_error>([&] { g.deserializeTensors(missing, SerializationFormat::Binary); },
                                    {"deserializeTensors", "not readable"});
  CHECK(variableCount(g) == 0);
}

TEST_CASE("deserializeTensors of a stream that is not a tensor file", "[error][serialize]") {
  poplar::Device d = device(4);
  poplar::Graph g(d.getTarget());
  std::stringstream text("hello, this is not a Cap'n Proto message at all");
  requireError<poplar::parse_error>([&] { g.deserializeTensors(text, SerializationFormat::Binary); },
                                    {"deserializeTensors", "segments"});
  std::stringstream notJson("{\"tensors\": [");
  requireError<poplar::parse_error>([&] { g.deserializeTensors(notJson, SerializationFormat::JSON); },
                                    {"deserializeTensors", "not a JSON document"});
  std::stringstream otherJson("{\"format\": \"aspen-graph\"}");
  requireError<poplar::parse_error>([&] { g.deserializeTensors(otherJson, SerializationFormat::JSON); },
                                    {"aspen-tensors"});
  // A binary file read as JSON.
  std::stringstream binary(tensorFile(SerializationFormat::Binary));
  requireError<poplar::parse_error>([&] { g.deserializeTensors(binary, SerializationFormat::JSON); },
                                    {"not a JSON document"});
  CHECK(variableCount(g) == 0);
}

TEST_CASE("deserializeTensors of a truncated or damaged binary file", "[error][serialize]") {
  poplar::Device d = device(4);
  poplar::Graph g(d.getTarget());
  const std::string file = tensorFile(SerializationFormat::Binary);
  std::stringstream half(file.substr(0, file.size() / 2));
  requireError<poplar::parse_error>([&] { g.deserializeTensors(half, SerializationFormat::Binary); },
                                    {"ends inside segment 0"});
  // The root pointer pointing far outside the message.
  std::string damaged = file;
  damaged[8 + 2] = '\x7f';
  std::stringstream bad(damaged);
  requireError<poplar::parse_error>([&] { g.deserializeTensors(bad, SerializationFormat::Binary); },
                                    {"the root", "past the end"});
  CHECK(variableCount(g) == 0);
}

TEST_CASE("deserializeTensors of a file naming what the graph cannot have", "[error][serialize]") {
  poplar::Device d = device(2);
  poplar::Graph g(d.getTarget());
  auto doc = nlohmann::json::parse(tensorFile(SerializationFormat::JSON));
  auto read = [&](const nlohmann::json &j) {
    std::stringstream ss(j.dump());
    g.deserializeTensors(ss, SerializationFormat::JSON);
  };
  // Mapped to tile 3 of a 2-tile graph.
  requireError<poplar::parse_error>([&] { read(doc); }, {"tensor 0", "tile 3", "2 tiles"});
  for (auto *t : {&doc["tensors"][0], &doc["tensors"][1]})
    (*t)["mapping"] = nlohmann::json::array();

  auto wrongVar = doc;
  wrongVar["tensors"][1]["view"]["regions"][0][0] = 5;
  requireError<poplar::parse_error>([&] { read(wrongVar); }, {"tensor 1", "variable 5", "1 variables"});
  auto outside = doc;
  outside["tensors"][1]["view"]["regions"][0][1] = 6;
  requireError<poplar::parse_error>([&] { read(outside); }, {"tensor 1", "of variable 'x'", "which has 6"});
  auto shape = doc;
  shape["tensors"][0]["shape"] = {4, 3};
  requireError<poplar::parse_error>([&] { read(shape); }, {"tensor 0", "{4,3}", "holds 6"});
  auto type = doc;
  type["variables"][0]["type"] = "complex";
  requireError<poplar::parse_error>([&] { read(type); }, {"variable 0 ('x')", "'complex'"});
  auto kind = doc;
  kind["tensors"][0]["view"] = {{"concat", 1}};
  requireError<poplar::parse_error>([&] { read(kind); }, {"tensor 0's view"});
  auto interval = doc;
  interval["tensors"][0]["mapping"] = nlohmann::json::parse("[[1, 4, 9]]");
  requireError<poplar::parse_error>([&] { read(interval); }, {"tensor 0", "tile 1", "[4, 9)", "6 elements"});
  // Nothing was added by any of them.
  CHECK(variableCount(g) == 0);
  read(doc);
  CHECK(variableCount(g) == 1);
}

TEST_CASE("serializeTensors of a tensor that is not of this graph", "[error][serialize]") {
  poplar::Device d = device(4);
  poplar::Graph g(d.getTarget()), other(d.getTarget());
  poplar::Tensor x = g.addVariable(poplar::FLOAT, {4}, "x");
  poplar::Tensor y = other.addVariable(poplar::FLOAT, {4}, "elsewhere");
  std::stringstream ss;
  requireError<poplar::poplar_error>(
      [&] {
        g.serializeTensors(ss, {x, y}, SerializationFormat::Binary);
      },
      {"serializeTensors", "tensor 1", "elsewhere", "different graph"});
  requireError<poplar::poplar_error>(
      [&] { g.serializeTensors(ss, {poplar::Tensor()}, SerializationFormat::JSON); },
      {"serializeTensors", "tensor 0", "not valid"});
}
