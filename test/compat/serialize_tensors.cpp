// Copyright (c) Aspen contributors.
// Issue 24: Graph::serializeTensors / Graph::deserializeTensors as Poplar programs
// use them (PopLibs' reduce_op reads a tensor file Poplar wrote; its conv and norm
// tools write one). Tensors written from one graph come back in another as the
// same views of new variables, with the same element types, shapes and tile
// mappings. Values are checked through an engine against host-side views.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

using poplar::Graph;
using poplar::SerializationFormat;
using poplar::Tensor;

namespace {

poplar::Device device(unsigned tiles) {
  poplar::IPUModel model;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

std::vector<std::string> variableNames(const Graph &g) {
  std::stringstream ss;
  g.serialize(ss, SerializationFormat::JSON);
  std::vector<std::string> names;
  const nlohmann::json doc = nlohmann::json::parse(ss.str());
  for (const auto &v : doc["variables"])
    names.push_back(v["name"]);
  return names;
}

/// The values of `t` after writing 0, 1, 2, ... into `base` (both of graph `g`).
std::vector<float> valuesThrough(Graph &g, const poplar::Device &d, const Tensor &base, const Tensor &t) {
  g.createHostWrite("base", base);
  g.createHostRead("view", t);
  poplar::Engine engine(g, poplar::program::Sequence{});
  engine.load(d);
  std::vector<float> in(base.numElements());
  std::iota(in.begin(), in.end(), 0.0f);
  engine.writeTensor("base", in.data(), in.data() + in.size());
  std::vector<float> out(t.numElements());
  engine.readTensor("view", out.data(), out.data() + out.size());
  return out;
}

void roundTrip(SerializationFormat format) {
  poplar::Device d1 = device(4), d2 = device(8);
  Graph g1(d1.getTarget());
  Tensor x = g1.addVariable(poplar::FLOAT, {4, 6}, "weights");
  for (unsigned r = 0; r < 4; ++r)
    g1.setTileMapping(x[r], r);
  Tensor y = g1.addVariable(poplar::HALF, {5}, "bias");
  g1.setTileMapping(y.slice(0, 3), 2); // elements 3 and 4 unmapped

  const std::vector<Tensor> written = {
      x,                                                // a whole variable
      x.transpose(),                                    // a dimShuffle
      x.slice({1, 2}, {3, 5}),                          // a strided window
      x.reshape({2, 12})[1].reverse(0).subSample(2, 0), // reversed, every other element
      x[0].slice(0, 1).broadcast(3, 0),                 // one element three times
      y,                                                // partly mapped, another type
      x.reinterpret(poplar::INT),                       // another element type, same bytes
  };
  std::stringstream file;
  g1.serializeTensors(file, written, format);

  Graph g2(d2.getTarget());
  Tensor other = g2.addVariable(poplar::FLOAT, {3}, "already-there");
  g2.setTileMapping(other, 7);
  const std::vector<Tensor> read = g2.deserializeTensors(file, format);
  REQUIRE(read.size() == written.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    INFO("tensor " << i);
    CHECK(read[i].shape() == written[i].shape());
    CHECK(read[i].elementType() == written[i].elementType());
    CHECK(g2.getTileMapping(read[i], false) == [&] {
      auto m = g1.getTileMapping(written[i], false);
      m.resize(8); // g2 has 8 tiles
      return m;
    }());
  }
  // One new variable for each variable the tensors view, named as it was.
  CHECK(variableNames(g2) == std::vector<std::string>{"already-there", "weights", "bias"});
  // The views keep their relations: each is the same view of the first.
  const Tensor &rx = read[0];
  CHECK(read[1] == rx.transpose());
  CHECK(read[2] == rx.slice({1, 2}, {3, 5}));
  CHECK(read[3] == rx.reshape({2, 12})[1].reverse(0).subSample(2, 0));
  CHECK(read[4] == rx[0].slice(0, 1).broadcast(3, 0));
  CHECK(read[6] == rx.reinterpret(poplar::INT));
  CHECK_FALSE(read[5].intersectsWith(rx));
  CHECK_FALSE(rx.intersectsWith(other));
  CHECK(g2.getTileMapping(read[5], false)[2] == std::vector<poplar::Interval>{{0, 3}});

  // And the values: what is written into the new 'weights' is what each view reads
  // (once the elements of 'bias' that were not mapped are).
  g2.setTileMapping(read[5].slice(3, 5), 0);
  const std::vector<float> got = valuesThrough(g2, d2, rx, read[3]);
  // Host reference: rows 12..23 of 0..23 reversed, every other one.
  CHECK(got == std::vector<float>{23, 21, 19, 17, 15, 13});
}

} // namespace

TEST_CASE("serializeTensors then deserializeTensors (binary) recreates the views in another graph",
          "[compat][serialize]") {
  roundTrip(SerializationFormat::Binary);
}

TEST_CASE("serializeTensors then deserializeTensors (JSON) recreates the views in another graph",
          "[compat][serialize]") {
  roundTrip(SerializationFormat::JSON);
}

TEST_CASE("serializeTensors as JSON is a readable document", "[compat][serialize]") {
  poplar::Device d = device(4);
  Graph g(d.getTarget());
  Tensor x = g.addVariable(poplar::FLOAT, {2, 3}, "x");
  g.setTileMapping(x[0], 0);
  g.setTileMapping(x[1], 3);
  std::stringstream ss;
  g.serializeTensors(ss, {x, x.slice(1, 3, 1)}, SerializationFormat::JSON);
  const auto doc = nlohmann::json::parse(ss.str());
  CHECK(doc["format"] == "aspen-tensors");
  REQUIRE(doc["variables"].size() == 1);
  CHECK(doc["variables"][0]["name"] == "x");
  CHECK(doc["variables"][0]["numElements"] == 6);
  CHECK(doc["tensors"][0]["view"] == nlohmann::json::parse(R"({"variable": 0})"));
  CHECK(doc["tensors"][0]["mapping"] == nlohmann::json::parse("[[0,0,3],[3,3,6]]"));
  CHECK(doc["tensors"][1]["shape"] == nlohmann::json::array({2, 2}));
  // Elements 1, 2 and 4, 5 of x: two runs.
  CHECK(doc["tensors"][1]["view"]["regions"] == nlohmann::json::parse("[[0,1,1,2],[0,4,1,2]]"));
}

TEST_CASE("serializeTensors of no tensors reads back as no tensors", "[compat][serialize]") {
  poplar::Device d = device(4);
  Graph g(d.getTarget());
  for (auto format : {SerializationFormat::Binary, SerializationFormat::JSON}) {
    std::stringstream ss;
    g.serializeTensors(ss, {}, format);
    CHECK(g.deserializeTensors(ss, format).empty());
  }
}

namespace {

/// Words of one Cap'n Proto segment, laid out by hand.
struct Segment {
  std::vector<std::uint64_t> w;
  std::size_t alloc(std::size_t n) {
    w.resize(w.size() + n, 0);
    return w.size() - n;
  }
  static std::uint64_t off(std::size_t ptr, std::size_t target) {
    return (static_cast<std::uint64_t>(static_cast<std::int64_t>(target) - static_cast<std::int64_t>(ptr) -
                                       1) &
            0x3fffffff)
           << 2;
  }
  void structAt(std::size_t ptr, std::size_t target, unsigned ds, unsigned pc) {
    w[ptr] = off(ptr, target) | (std::uint64_t(ds) << 32) | (std::uint64_t(pc) << 48);
  }
  void listAt(std::size_t ptr, std::size_t target, unsigned size, std::uint64_t n) {
    w[ptr] = off(ptr, target) | 1 | (std::uint64_t(size) << 32) | (n << 35);
  }
  /// A struct list of n elements of ds + pc words; returns the first element.
  std::size_t structList(std::size_t ptr, std::uint64_t n, unsigned ds, unsigned pc) {
    const std::size_t at = alloc(1 + n * (ds + pc));
    listAt(ptr, at, 7, n * (ds + pc));
    w[at] = (n << 2) | (std::uint64_t(ds) << 32) | (std::uint64_t(pc) << 48);
    return at + 1;
  }
};

/// A Cap'n Proto message laid out as the tensor file Poplar wrote that PopLibs'
/// reduce_op test reads (docs/graph-serialization.md): one float tensor of shape
/// {1, 2, 6} that is the transpose of a 12-element variable 'zDeltas' seen as
/// {6, 2} (view kind 2 over kind 0), mapped [0, 8) on tile 1 and [8, 12) on
/// tile 2 of 3 listed tiles; the root struct sits in a second segment behind a
/// far pointer (Poplar's file has four segments).
std::string poplarLayoutMessage() {
  Segment s0, s1;
  s0.alloc(1);
  s0.w[0] = 2 | (std::uint64_t(0) << 3) | (std::uint64_t(1) << 32); // far: segment 1, word 0
  const std::size_t pad = s1.alloc(1);
  const std::size_t root = s1.alloc(2);
  s1.structAt(pad, root, 0, 2);
  const std::size_t tensor = s1.structList(root, 1, 1, 3);
  s1.w[tensor] = 16; // type code: float
  const std::size_t shape = s1.alloc(3);
  s1.listAt(tensor + 1, shape, 5, 3);
  s1.w[shape] = 1, s1.w[shape + 1] = 2, s1.w[shape + 2] = 6;
  const std::size_t tiles = s1.alloc(3);
  s1.listAt(tensor + 2, tiles, 6, 3);
  s1.structList(tiles + 0, 0, 1, 0);
  s1.w[s1.structList(tiles + 1, 1, 1, 0)] = 0 | (std::uint64_t(8) << 32);
  s1.w[s1.structList(tiles + 2, 1, 1, 0)] = 8 | (std::uint64_t(12) << 32);
  const std::size_t node = s1.alloc(2);
  s1.structAt(tensor + 3, node, 1, 1);
  s1.w[node] = 2; // dimShuffle
  const std::size_t body = s1.alloc(3);
  s1.structAt(node + 1, body, 0, 3);
  const std::size_t input = s1.alloc(2);
  s1.structAt(body, input, 1, 1);
  s1.w[input] = 0; // a variable
  const std::size_t var = s1.alloc(1);
  s1.structAt(input + 1, var, 1, 0);
  s1.w[var] = 0; // variable 0
  const std::size_t perm = s1.alloc(1);
  s1.listAt(body + 1, perm, 4, 2);
  s1.w[perm] = 1 | (std::uint64_t(0) << 32); // {1, 0}
  const std::size_t inShape = s1.alloc(2);
  s1.listAt(body + 2, inShape, 5, 2);
  s1.w[inShape] = 6, s1.w[inShape + 1] = 2;
  const std::size_t variable = s1.structList(root + 1, 1, 2, 1);
  s1.w[variable] = std::uint64_t(12) << 32; // element count
  s1.w[variable + 1] = 16;                  // type code
  const std::size_t name = s1.alloc(1);
  s1.listAt(variable + 2, name, 2, 8);
  std::memcpy(&s1.w[name], "zDeltas", 8);

  std::string bytes;
  auto put32 = [&](std::uint32_t v) { bytes.append(reinterpret_cast<const char *>(&v), 4); };
  put32(1); // two segments
  put32(static_cast<std::uint32_t>(s0.w.size()));
  put32(static_cast<std::uint32_t>(s1.w.size()));
  put32(0); // padding to a whole word
  bytes.append(reinterpret_cast<const char *>(s0.w.data()), s0.w.size() * 8);
  bytes.append(reinterpret_cast<const char *>(s1.w.data()), s1.w.size() * 8);
  return bytes;
}

} // namespace

TEST_CASE("deserializeTensors reads a message laid out as Poplar's tensor files", "[compat][serialize]") {
  poplar::Device d = device(4);
  Graph g(d.getTarget());
  std::stringstream file(poplarLayoutMessage());
  const auto read = g.deserializeTensors(file, SerializationFormat::Binary);
  REQUIRE(read.size() == 1);
  const Tensor &t = read[0];
  CHECK(t.elementType() == poplar::FLOAT);
  CHECK(t.shape() == std::vector<std::size_t>{1, 2, 6});
  const auto mapping = g.getTileMapping(t);
  CHECK(mapping[0].empty());
  CHECK(mapping[1] == std::vector<poplar::Interval>{{0, 8}});
  CHECK(mapping[2] == std::vector<poplar::Interval>{{8, 12}});
  CHECK(mapping[3].empty());
  CHECK(variableNames(g) == std::vector<std::string>{"zDeltas"});
  // The transpose of {6, 2}: the even elements of the variable, then the odd ones.
  std::stringstream json;
  g.serializeTensors(json, {t}, SerializationFormat::JSON);
  CHECK(nlohmann::json::parse(json.str())["tensors"][0]["view"]["regions"] ==
        nlohmann::json::parse("[[0,0,2,6],[0,1,2,6]]"));
}

TEST_CASE("serializeTensors' binary form is a Cap'n Proto message in Poplar's layout",
          "[compat][serialize]") {
  poplar::Device d = device(2);
  Graph g(d.getTarget());
  Tensor x = g.addVariable(poplar::FLOAT, {3, 4}, "zDeltas");
  g.setTileMapping(x, 1);
  std::stringstream ss;
  g.serializeTensors(ss, {x}, SerializationFormat::Binary);
  const std::string bytes = ss.str();
  REQUIRE(bytes.size() >= 16);
  auto word = [&](std::size_t i) {
    std::uint64_t v;
    std::memcpy(&v, bytes.data() + 8 + 8 * i, 8);
    return v;
  };
  std::uint32_t header[2];
  std::memcpy(header, bytes.data(), 8);
  CHECK(header[0] == 0); // one segment
  CHECK(8 + 8 * std::size_t(header[1]) == bytes.size());
  // The root pointer: a struct of no data words and two pointers.
  CHECK((word(0) & 3) == 0);
  CHECK((word(0) >> 32) == (std::uint64_t(2) << 16));
  // Its first pointer: a list of structs (tensors) of one data word.
  const std::size_t rootAt = 1 + ((word(0) >> 2) & 0x3fffffff);
  const std::uint64_t tensors = word(rootAt);
  CHECK((tensors & 3) == 1);
  CHECK(((tensors >> 32) & 7) == 7);
  const std::size_t tagAt = rootAt + 1 + ((tensors >> 2) & 0x3fffffff);
  CHECK(((word(tagAt) >> 2) & 0x3fffffff) == 1); // one tensor
  CHECK(((word(tagAt) >> 32) & 0xffff) == 1);    // one data word
  CHECK((word(tagAt + 1) & 0xffff) == 16);       // float's code, as in Poplar's file
}
