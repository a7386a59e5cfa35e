// Copyright (c) Aspen contributors.
// Reading edge data in place (docs/exchange.md, "Reading in place"; issue 28 item 1): a
// read-only edge whose bytes are one run of another tile's memory is bound to that memory,
// a gathered range several tiles read is staged once, and their edge-buffer copies are
// skipped, for vertices whose library declares its Inputs read-only. Results and simulated
// cycles are those of copying everything (aspen.exchangeInPlace=false), at one host thread and
// at two; vertices of other libraries (which may write through an Input) still get their
// edge buffers; a vertex writing in place what another tile reads is not read in place.
#include "EngineImpl.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

// A library that declares its Inputs read-only, and one that does not (and writes through one).
const char *const kReadOnlyCodelets = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

// out = sum of in[i] * (i + 1): order-sensitive, so a misplaced byte shows.
class WeightedSum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i] * float(i + 1);
    *out = s;
    return true;
  }
};

// x[i] = 0.25 (first + i) - 3 + 100 * index: each replica's own values.
class FillIndexed : public Vertex {
public:
  Input<unsigned> index;
  Output<Vector<float>> x;
  unsigned first;
  bool compute() {
    for (unsigned i = 0; i < x.size(); ++i)
      x[i] = 0.25f * float(first + i) - 3.0f + 100.0f * float(*index);
    return true;
  }
};

// out = sum of a[i] * b[i] * (i + 1).
class WeightedDot : public Vertex {
public:
  Input<Vector<float>> a, b;
  Output<float> out;
  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < a.size(); ++i)
      s += a[i] * b[i] * float(i + 1);
    *out = s;
    return true;
  }
};

// Reads 4,096 bytes past the end of its Input: past the thread scratch's guard page when the
// Input was copied there (a faulty codelet).
class OverRead : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    const volatile float *p = &in[0];
    *out = p[in.size() + 1024];
    return true;
  }
};

// The first float past the end of its Input, and the Input's weighted sum.
class PeekPast : public Vertex {
public:
  Input<Vector<float>> in;
  Output<Vector<float>> out;
  bool compute() {
    const volatile float *p = &in[0];
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i] * float(i + 1);
    out[0] = s;
    out[1] = p[in.size()];
    return true;
  }
};

class AddOneInPlace : public Vertex {
public:
  InOut<Vector<float>> x;
  bool compute() {
    for (unsigned i = 0; i < x.size(); ++i)
      x[i] += 1.0f;
    return true;
  }
};
)";

const char *const kPlainCodelets = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;

// Writes through its Input (as some codelets do), then sums what it wrote.
class ScribbleSum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float *p = const_cast<float *>(&in[0]);
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i) {
      p[i] = p[i] * 2.0f;
      s += in[i];
    }
    *out = s;
    return true;
  }
};
)";

struct Result {
  std::vector<float> out;
  std::vector<float> x;
  std::uint64_t cycles = 0;
  std::uint64_t copied = 0;
  std::uint64_t toScratch = 0; // of `copied`, into the running thread's scratch
  bool inPlace = false;
  std::string error;             // what the run threw, if it did
  std::size_t scratchFields = 0; // pointers rebound to thread scratch while their tile runs
  std::size_t atEdgeBuffer = 0;  // of them, pointing at their edge buffer after the run
};

/// Counts the fields of `engine`'s scratch windows, and those holding the host address of
/// their edge buffer (as loading wrote them), into `res`.
void checkScratchFields(Engine &engine, Result &res) {
  aspen::rt::Executor &e = *engine.getImpl().executor_;
  for (const auto &cs : engine.getImpl().exe().computeSteps)
    for (const auto &b : cs.inPlace.scratchBindings) {
      const std::uint8_t *held = nullptr;
      std::memcpy(&held, e.memory().at(b.where), sizeof held);
      ++res.scratchFields;
      res.atEdgeBuffer += held == e.memory().at(b.target);
    }
}

Device makeDevice(unsigned tiles) {
  IPUModel model("ipu2");
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

/// `x` (n floats) is spread over `sourceTiles` tiles (tile 0 first); vertices of `type` on
/// each of `readers` (other tiles) read all of it. Optionally a vertex on tile 0 adds one to
/// x in place in the same compute set. Run twice, as the engine options say.
Result run(const std::string &type, unsigned sourceTiles, std::vector<unsigned> readers, bool writeInPlace,
           OptionFlags options, unsigned threads, bool serialise = false) {
  std::unique_ptr<tbb::global_control> limit;
  if (threads)
    limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
  constexpr unsigned n = 96;
  Device device = makeDevice(8);
  Graph g(device.getTarget());
  std::stringstream a(kReadOnlyCodelets), b(kPlainCodelets);
  g.addCodelets(a, "-O2");
  g.addCodelets(b, "-O2");
  Tensor x = g.addVariable(FLOAT, {n}, "x");
  for (unsigned s = 0; s < sourceTiles; ++s)
    g.setTileMapping(x.slice(s * n / sourceTiles, (s + 1) * n / sourceTiles), s);
  const std::size_t outPerReader = type == "PeekPast" ? 2 : 1;
  Tensor out = g.addVariable(FLOAT, {readers.size() * outPerReader}, "out");
  ComputeSet cs = g.addComputeSet("read");
  for (std::size_t r = 0; r < readers.size(); ++r) {
    const Tensor o = outPerReader == 1 ? out[r] : out.slice(r * outPerReader, (r + 1) * outPerReader);
    VertexRef v = g.addVertex(cs, type, {{"in", x}, {"out", o}});
    g.setTileMapping(v, readers[r]);
    g.setTileMapping(o, readers[r]);
  }
  if (writeInPlace) {
    VertexRef w = g.addVertex(cs, "AddOneInPlace", {{"x", x.slice(0, n / sourceTiles)}});
    g.setTileMapping(w, 0);
  }
  g.createHostWrite("x", x);
  g.createHostRead("x", x);
  g.createHostRead("out", out);
  options.set("aspen.compileCache", "false");
  std::unique_ptr<Engine> engine;
  if (serialise) {
    Executable exe = compileGraph(g, {Repeat(2, Execute(cs))}, options);
    std::stringstream file;
    exe.serialize(file);
    engine = std::make_unique<Engine>(Executable::deserialize(file), options);
  } else {
    engine = std::make_unique<Engine>(g, Repeat(2, Execute(cs)), options);
  }
  engine->load(device);
  std::vector<float> xs(n);
  for (unsigned i = 0; i < n; ++i)
    xs[i] = 0.25f * float(i) - 3.0f;
  engine->writeTensor("x", xs.data(), xs.data() + n);
  Result res;
  try {
    engine->run(0);
    res.out.resize(readers.size() * outPerReader);
    res.x.resize(n);
    engine->readTensor("out", res.out.data(), res.out.data() + res.out.size());
    engine->readTensor("x", res.x.data(), res.x.data() + n);
  } catch (const poplar::application_runtime_error &error) {
    res.error = error.what();
  }
  checkScratchFields(*engine, res);
  aspen::rt::Executor &e = *engine->getImpl().executor_;
  res.cycles = e.cycles();
  res.copied = e.exchangeBytesCopied();
  res.toScratch = e.exchangeBytesToScratch();
  res.inPlace = e.readsInPlace(0);
  return res;
}

float weighted(const std::vector<float> &x) {
  float s = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    s += x[i] * float(i + 1);
  return s;
}

std::vector<float> initialX() {
  std::vector<float> xs(96);
  for (unsigned i = 0; i < 96; ++i)
    xs[i] = 0.25f * float(i) - 3.0f;
  return xs;
}

const OptionFlags kCopyAll{{"aspen.exchangeInPlace", "false"}};

} // namespace

TEST_CASE("exchange in place: one remote run is read where it is, results and cycles unchanged",
          "[exchange][inplace]") {
  for (unsigned threads : {1u, 2u}) {
    const Result in = run("WeightedSum", 1, {1, 2, 3}, false, {}, threads);
    const Result copy = run("WeightedSum", 1, {1, 2, 3}, false, kCopyAll, threads);
    const float expected = weighted(initialX());
    CHECK(in.out == std::vector<float>(3, expected));
    CHECK(copy.out == in.out);
    CHECK(in.cycles == copy.cycles);
    CHECK(in.inPlace);
    CHECK_FALSE(copy.inPlace);
    // Two runs of the step, three readers of 384 bytes each: copied only without in place.
    CHECK(copy.copied == 2 * 3 * 384);
    CHECK(in.copied == 0);
    CHECK(in.x == initialX());
  }
}

TEST_CASE("exchange in place: a gathered range several tiles read is staged once", "[exchange][inplace]") {
  for (unsigned threads : {1u, 2u}) {
    // x on tiles 0..2 (three runs); read whole by tiles 4..7.
    const Result in = run("WeightedSum", 3, {4, 5, 6, 7}, false, {}, threads);
    const Result copy = run("WeightedSum", 3, {4, 5, 6, 7}, false, kCopyAll, threads);
    CHECK(in.out == std::vector<float>(4, weighted(initialX())));
    CHECK(copy.out == in.out);
    CHECK(in.cycles == copy.cycles);
    CHECK(in.inPlace);
    CHECK(copy.copied == 2 * 4 * 384);
    CHECK(in.copied == 2 * 384); // one staging copy per run of the step
  }
}

TEST_CASE("exchange in place: a gathered range one tile reads is copied into thread scratch",
          "[exchange][inplace]") {
  // x on tiles 0..2 (three runs), read whole by tile 4 alone: a staging copy would cost what
  // its edge buffer does, so the fused step copies it into the running thread's scratch just
  // before tile 4 runs, and points the field there. Same bytes copied, same results and cycles.
  for (unsigned threads : {1u, 2u})
    for (bool serialise : {false, true}) {
      const Result one = run("WeightedSum", 3, {4}, false, {}, threads, serialise);
      const Result copy = run("WeightedSum", 3, {4}, false, kCopyAll, threads, serialise);
      CHECK(one.out == std::vector<float>(1, weighted(initialX())));
      CHECK(copy.out == one.out);
      CHECK(one.cycles == copy.cycles);
      CHECK(one.inPlace);
      CHECK(one.copied == 2 * 384);
      CHECK(one.toScratch == 2 * 384);
      CHECK(copy.copied == 2 * 384);
      CHECK(copy.toScratch == 0);
    }
  // Under checked writes the copy goes to the edge buffer, as planned.
  const Result checked = run("WeightedSum", 3, {4}, false, {{"aspen.checkTileWrites", "true"}}, 1);
  CHECK(checked.out == std::vector<float>(1, weighted(initialX())));
  CHECK(checked.toScratch == 0);
  // A vertex that may write through its Input keeps its edge buffer.
  const Result scribble = run("ScribbleSum", 3, {4}, false, {}, 1);
  CHECK(scribble.toScratch == 0);
  CHECK(scribble.x == initialX());
}

TEST_CASE("exchange in place: thread scratch leaves no pointer behind and faults past its end",
          "[exchange][inplace]") {
  for (unsigned threads : {1u, 2u}) {
    // After the step, the rebound field holds its edge buffer's address again.
    const Result one = run("WeightedSum", 3, {4}, false, {}, threads);
    CHECK(one.error.empty());
    CHECK(one.toScratch == 2 * 384);
    CHECK(one.scratchFields == 1);
    CHECK(one.atEdgeBuffer == 1);
    // Past the window: zeros up to the guard page, never what another tile left there.
    const Result peek = run("PeekPast", 3, {4}, false, {}, threads);
    REQUIRE(peek.error.empty());
    CHECK(peek.toScratch == 2 * 384);
    CHECK(peek.out == std::vector<float>{weighted(initialX()), 0.0f});
    CHECK(peek.atEdgeBuffer == peek.scratchFields);
    // A codelet reading 4,096 bytes past its Input reaches the guard page: the usual fault
    // error (as past tile memory), not a host crash, and the field is pointed back.
    const Result over = run("OverRead", 3, {4}, false, {}, threads);
    CHECK(over.toScratch == 384); // the first run of the step faults
    CHECK_THAT(over.error, Catch::Contains("OverRead") && Catch::Contains("faulted: ") &&
                               Catch::Contains("(an IPU exception on tile 4)"));
    CHECK(over.scratchFields == 1);
    CHECK(over.atEdgeBuffer == 1);
  }
}

TEST_CASE("exchange in place: a vertex's own gather buffer is copied into thread scratch",
          "[exchange][inplace]") {
  // Pieces of x in another order than x's (no one range of x): the reader gets an edge
  // buffer of its own, filled by a gather (as a matMul reduction's partial sums are).
  auto runGather = [](OptionFlags options, unsigned threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    Device device = makeDevice(8);
    Graph g(device.getTarget());
    std::stringstream a(kReadOnlyCodelets);
    g.addCodelets(a, "-O2");
    Tensor x = g.addVariable(FLOAT, {96}, "x");
    for (unsigned s = 0; s < 3; ++s)
      g.setTileMapping(x.slice(s * 32, (s + 1) * 32), s);
    Tensor out = g.addVariable(FLOAT, {2}, "out");
    ComputeSet cs = g.addComputeSet("read");
    const Tensor gathered = concat({x.slice(64, 96), x.slice(0, 16), x.slice(40, 48)});
    for (unsigned r = 0; r < 2; ++r) {
      VertexRef v =
          g.addVertex(cs, "WeightedSum", {{"in", r == 0 ? gathered : gathered.reverse(0)}, {"out", out[r]}});
      g.setTileMapping(v, 4 + r);
      g.setTileMapping(out[r], 4 + r);
    }
    g.createHostWrite("x", x);
    g.createHostRead("out", out);
    options.set("aspen.compileCache", "false");
    Engine engine(g, Repeat(2, Execute(cs)), options);
    engine.load(device);
    const std::vector<float> xs = initialX();
    engine.writeTensor("x", xs.data(), xs.data() + xs.size());
    engine.run(0);
    Result res;
    res.out.resize(2);
    engine.readTensor("out", res.out.data(), res.out.data() + 2);
    aspen::rt::Executor &e = *engine.getImpl().executor_;
    res.cycles = e.cycles();
    res.copied = e.exchangeBytesCopied();
    res.toScratch = e.exchangeBytesToScratch();
    return res;
  };
  std::vector<float> in;
  const std::vector<float> xs = initialX();
  for (unsigned i = 64; i < 96; ++i)
    in.push_back(xs[i]);
  for (unsigned i = 0; i < 16; ++i)
    in.push_back(xs[i]);
  for (unsigned i = 40; i < 48; ++i)
    in.push_back(xs[i]);
  const std::vector<float> reversed(in.rbegin(), in.rend());
  for (unsigned threads : {1u, 2u}) {
    const Result scratch = runGather({}, threads);
    const Result copy = runGather(kCopyAll, threads);
    CHECK(scratch.out == std::vector<float>{weighted(in), weighted(reversed)});
    CHECK(copy.out == scratch.out);
    CHECK(scratch.cycles == copy.cycles);
    CHECK(scratch.copied == copy.copied);
    CHECK(scratch.toScratch == 2 * 2 * 56 * 4); // two readers, two runs of the step
    CHECK(copy.toScratch == 0);
  }
}

TEST_CASE("exchange in place: survives serialisation of the executable", "[exchange][inplace]") {
  const Result in = run("WeightedSum", 3, {4, 5}, false, {}, 0, true);
  const Result copy = run("WeightedSum", 3, {4, 5}, false, kCopyAll, 0, true);
  CHECK(in.out == std::vector<float>(2, weighted(initialX())));
  CHECK(in.inPlace);
  CHECK(in.copied == 2 * 384);
  CHECK(copy.copied == 2 * 2 * 384);
  CHECK(in.cycles == copy.cycles);
}

TEST_CASE("exchange in place: a vertex that may write through its Input keeps its edge buffer",
          "[exchange][inplace]") {
  for (unsigned sources : {1u, 3u}) {
    const Result r = run("ScribbleSum", sources, {4, 5}, false, {}, 0);
    // Each reader doubled its own copy: the sum of 2x, and x itself unchanged.
    float sum = 0;
    for (float v : initialX())
      sum += 2.0f * v;
    CHECK(r.out == std::vector<float>(2, sum));
    CHECK(r.x == initialX());
    CHECK_FALSE(r.inPlace);
    CHECK(r.copied == 2 * 2 * 384);
  }
}

TEST_CASE("exchange in place: data a vertex writes in place in the same step is copied",
          "[exchange][inplace]") {
  // Tile 0 adds one to x in place while tiles 1 and 2 read x: they must see x as the step
  // began (BSP), in both runs of the step.
  const Result r = run("WeightedSum", 1, {1, 2}, true, {}, 2);
  const Result copy = run("WeightedSum", 1, {1, 2}, true, kCopyAll, 2);
  std::vector<float> second = initialX();
  for (float &v : second)
    v += 1.0f;
  CHECK(r.out == std::vector<float>(2, weighted(second)));
  CHECK(r.out == copy.out);
  CHECK(r.cycles == copy.cycles);
  CHECK(r.copied == copy.copied);
}

namespace {

// Two libraries that call each other, so the graph links them into one image: trust stays
// with the object that defines each vertex type (docs/exchange.md, "Reading in place").
const char *const kLinkedReadOnly = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

float linkedScale() { return 2.0f; }

class WeightedSum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i] * float(i + 1);
    *out = s;
    return true;
  }
};
)";

const char *const kLinkedPlain = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
float linkedScale(); // defined by the other library

class ScribbleSum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float *p = const_cast<float *>(&in[0]);
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i) {
      p[i] = p[i] * linkedScale();
      s += in[i];
    }
    *out = s;
    return true;
  }
};
)";

// Names the declaration only in a comment and a string: not a declaration.
const char *const kMentionsReadOnly = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
// aspen_codelet_inputs_read_only
__attribute__((used)) static const char note[] = "aspen_codelet_inputs_read_only";
extern "C" __attribute__((used)) const char *aspenNote() { return note; }

class ScribbleSum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float *p = const_cast<float *>(&in[0]);
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i) {
      p[i] = p[i] * 2.0f;
      s += in[i];
    }
    *out = s;
    return true;
  }
};
)";

/// x (96 floats) on tile 0; WeightedSum on tiles 1 and 2 (when `weighted`), ScribbleSum on
/// tiles 3 and 4 read all of it, twice, with the libraries of `sources`.
Result runMixed(const std::vector<const char *> &sources, bool weighted, OptionFlags options) {
  constexpr unsigned n = 96;
  Device device = makeDevice(8);
  Graph g(device.getTarget());
  for (const char *text : sources) {
    std::stringstream src(text);
    g.addCodelets(src, "-O2");
  }
  Tensor x = g.addVariable(FLOAT, {n}, "x");
  g.setTileMapping(x, 0);
  Tensor out = g.addVariable(FLOAT, {4}, "out");
  ComputeSet cs = g.addComputeSet("read");
  for (unsigned r = weighted ? 0 : 2; r < 4; ++r) {
    VertexRef v = g.addVertex(cs, r < 2 ? "WeightedSum" : "ScribbleSum", {{"in", x}, {"out", out[r]}});
    g.setTileMapping(v, 1 + r);
  }
  for (unsigned r = 0; r < 4; ++r)
    g.setTileMapping(out[r], 1 + r);
  g.createHostWrite("x", x);
  g.createHostRead("x", x);
  g.createHostRead("out", out);
  options.set("aspen.compileCache", "false");
  Engine engine(g, Repeat(2, Execute(cs)), options);
  engine.load(device);
  const std::vector<float> xs = initialX();
  engine.writeTensor("x", xs.data(), xs.data() + n);
  engine.run(0);
  Result res;
  res.out.resize(4);
  res.x.resize(n);
  engine.readTensor("out", res.out.data(), res.out.data() + 4);
  engine.readTensor("x", res.x.data(), res.x.data() + n);
  aspen::rt::Executor &e = *engine.getImpl().executor_;
  res.cycles = e.cycles();
  res.copied = e.exchangeBytesCopied();
  res.toScratch = e.exchangeBytesToScratch();
  res.inPlace = e.readsInPlace(0);
  return res;
}

float doubledSum() {
  float sum = 0;
  for (float v : initialX())
    sum += 2.0f * v;
  return sum;
}

} // namespace

TEST_CASE("exchange in place: a linked library trusts the vertices of the declaring object only",
          "[exchange][inplace][link]") {
  // The graph links the two libraries into one (ScribbleSum calls linkedScale, which the other
  // defines). WeightedSum's object declares its Inputs read-only: read in place. ScribbleSum's
  // does not, and it writes through its Input: it keeps its edge buffer, x stays as written.
  const Result r = runMixed({kLinkedReadOnly, kLinkedPlain}, true, {});
  const Result copy = runMixed({kLinkedReadOnly, kLinkedPlain}, true, kCopyAll);
  CHECK(r.out[0] == weighted(initialX()));
  CHECK(r.out[1] == weighted(initialX()));
  CHECK(r.out[2] == doubledSum());
  CHECK(r.out[3] == doubledSum());
  CHECK(r.out == copy.out);
  CHECK(r.x == initialX());
  CHECK(r.cycles == copy.cycles);
  CHECK(r.inPlace);
  CHECK(copy.copied == 2 * 4 * 384);
  CHECK(r.copied == 2 * 2 * 384); // only the two ScribbleSum readers' copies, each run
}

TEST_CASE("exchange in place: a library naming the declaration only in a string is not trusted",
          "[exchange][inplace]") {
  const Result r = runMixed({kMentionsReadOnly}, false, {});
  CHECK(r.out[2] == doubledSum());
  CHECK(r.out[3] == doubledSum());
  CHECK(r.x == initialX());
  CHECK_FALSE(r.inPlace);
  CHECK(r.copied == 2 * 2 * 384);
}

namespace {

const char *const kAlignedCodelets = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

// Needs its input 8-byte aligned (as vectorised library vertices do).
class AlignedSum : public Vertex {
public:
  Input<Vector<float, VectorLayout::SPAN, 8>> in;
  Output<float> out;
  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i] * float(i + 1);
    *out = s;
    return true;
  }
};
)";

/// Six worker vertices on tile 1 read x[offset, offset + k) (x on tile `xTile`). Returns
/// tile 1's peak bytes, or 0 when it does not fit in `bytesPerTile` (0: the default).
std::uint64_t sixReaders(unsigned offset, unsigned xTile, unsigned bytesPerTile, std::vector<float> *out) {
  constexpr unsigned k = 2000;
  IPUModel model("ipu1");
  model.tilesPerIPU = 4;
  if (bytesPerTile)
    model.memoryBytesPerTile = bytesPerTile;
  Device device = model.createDevice();
  Graph g(device.getTarget());
  std::stringstream src(kAlignedCodelets);
  g.addCodelets(src, "-O2");
  Tensor x = g.addVariable(FLOAT, {k + 8}, "x");
  g.setTileMapping(x, xTile);
  Tensor sums = g.addVariable(FLOAT, {6}, "sums");
  g.setTileMapping(sums, 1);
  ComputeSet cs = g.addComputeSet("sum");
  for (unsigned w = 0; w < 6; ++w) {
    VertexRef v = g.addVertex(cs, "AlignedSum", {{"in", x.slice(offset, offset + k)}, {"out", sums[w]}});
    g.setTileMapping(v, 1);
  }
  g.createHostWrite("x", x);
  g.createHostRead("sums", sums);
  try {
    Engine engine(g, Execute(cs), {{"aspen.compileCache", "false"}});
    engine.load(device);
    std::vector<float> xs(k + 8);
    for (unsigned i = 0; i < xs.size(); ++i)
      xs[i] = float(i % 17) - 8.0f;
    engine.writeTensor("x", xs.data(), xs.data() + xs.size());
    engine.run(0);
    if (out) {
      out->resize(6);
      engine.readTensor("sums", out->data(), out->data() + 6);
      std::vector<float> slice(xs.begin() + offset, xs.begin() + offset + k);
      CHECK(*out == std::vector<float>(6, weighted(slice)));
    }
    return engine.getImpl().exe().tileBytesUsed[1];
  } catch (const graph_memory_allocation_error &) {
    return 0;
  }
}

} // namespace

TEST_CASE("exchange: edges at odd offsets share one edge buffer instead of one each", "[exchange][odd]") {
  // Local data: aligned, the six read x in place; at an odd offset (4 bytes off the 8-byte
  // alignment the field needs) they share one aligned copy, where each had its own before.
  std::vector<float> out;
  const std::uint64_t aligned = sixReaders(0, 1, 0, &out);
  const std::uint64_t odd = sixReaders(1, 1, 0, &out);
  REQUIRE(aligned != 0);
  REQUIRE(odd != 0);
  CHECK(odd - aligned <= 2000 * 4 + 64);
  // A tile with room for one copy, not six, runs it (six copies needed 40 KB more).
  const unsigned budget = static_cast<unsigned>((odd + 1023) / 1024 * 1024);
  CHECK(budget < aligned + 6 * 2000 * 4);
  CHECK(sixReaders(1, 1, budget, &out) != 0);
  // Remote data at an odd offset: one shared buffer on the readers' tile, read in place
  // when the source keeps the alignment, else copied once.
  CHECK(sixReaders(1, 0, 0, &out) != 0);
  CHECK(sixReaders(2, 0, 0, &out) != 0);
}

TEST_CASE("exchange in place: each replica reads its own data", "[exchange][inplace][replicas]") {
  constexpr unsigned R = 2, tiles = 4, n = 96;
  for (unsigned sources : {1u, 2u}) {
    for (bool inPlace : {true, false}) {
      IPUModel model("ipu2");
      model.numIPUs = R;
      model.tilesPerIPU = tiles;
      Device d = model.createDevice();
      Graph g(d.getTarget(), replication_factor(R));
      std::stringstream a(kReadOnlyCodelets);
      g.addCodelets(a, "-O2");
      Tensor index = g.addReplicationIndexConstant();
      g.setTileMapping(index, 0);
      Tensor x = g.addVariable(FLOAT, {n}, "x");
      ComputeSet fill = g.addComputeSet("fill"), read = g.addComputeSet("read");
      for (unsigned s = 0; s < sources; ++s) {
        const unsigned first = s * n / sources;
        Tensor slice = x.slice(first, (s + 1) * n / sources);
        g.setTileMapping(slice, s);
        VertexRef v = g.addVertex(fill, "FillIndexed", {{"index", index}, {"x", slice}});
        g.setInitialValue(v["first"], first);
        g.setTileMapping(v, s);
      }
      Tensor out = g.addVariable(FLOAT, {2}, "out");
      for (unsigned r = 0; r < 2; ++r) {
        g.setTileMapping(g.addVertex(read, "WeightedSum", {{"in", x}, {"out", out[r]}}), 2 + r);
        g.setTileMapping(out[r], 2 + r);
      }
      g.createHostRead("out", out);
      Engine engine(g, Sequence{Execute(fill), Execute(read)},
                    {{"aspen.compileCache", "false"}, {"aspen.exchangeInPlace", inPlace ? "true" : "false"}});
      engine.load(d);
      engine.run(0);
      std::vector<float> got(R * 2);
      engine.readTensor("out", got.data(), got.data() + got.size());
      std::vector<float> expected;
      for (unsigned r = 0; r < R; ++r) {
        std::vector<float> xs(n);
        for (unsigned i = 0; i < n; ++i)
          xs[i] = 0.25f * float(i) - 3.0f + 100.0f * float(r);
        expected.insert(expected.end(), 2, weighted(xs));
      }
      CHECK(got == expected);
      CHECK(engine.getImpl().executor_->readsInPlace(1) == inPlace);
    }
  }
}

TEST_CASE("exchange in place: tiles sharing staged blocks are walked in a sharing order",
          "[exchange][inplace][order]") {
  // A product's pattern: reader tile (r, c) reads row block r of `a` and column block c of `b`,
  // most gathered from two source tiles (so staged once). The step is large enough (estimates)
  // for the host to walk its tiles so that consecutive ones share a block; results and cycles
  // are those of copying everything (a fused step, walked in tile order), on 1 and 2 threads.
  constexpr unsigned rows = 8, cols = 10, len = 32, sources = 16;
  auto runGrid = [&](bool inPlace, unsigned threads, std::vector<std::uint32_t> *order) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    Device device = makeDevice(sources + rows * cols);
    Graph g(device.getTarget());
    std::stringstream lib(kReadOnlyCodelets);
    g.addCodelets(lib, "-O2");
    Tensor a = g.addVariable(FLOAT, {rows * len}, "a"), b = g.addVariable(FLOAT, {cols * len}, "b");
    // Tile boundaries off the blocks' (a: 16 floats in, b: every 40), so most blocks are gathers.
    auto cut = [](unsigned s, unsigned n, unsigned shift) {
      return s == 0 ? 0u : s == 8 ? n : s * n / 8 - shift;
    };
    for (unsigned s = 0; s < sources / 2; ++s) {
      g.setTileMapping(a.slice(cut(s, rows * len, 16), cut(s + 1, rows * len, 16)), s);
      g.setTileMapping(b.slice(cut(s, cols * len, 0), cut(s + 1, cols * len, 0)), sources / 2 + s);
    }
    Tensor out = g.addVariable(FLOAT, {rows * cols}, "out");
    ComputeSet cs = g.addComputeSet("grid");
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned c = 0; c < cols; ++c) {
        // Reader tiles column-major, so that tile order is not already the sharing order.
        const unsigned tile = sources + c * rows + r;
        VertexRef v = g.addVertex(cs, "WeightedDot",
                                  {{"a", a.slice(r * len, (r + 1) * len)},
                                   {"b", b.slice(c * len, (c + 1) * len)},
                                   {"out", out[r * cols + c]}});
        g.setPerfEstimate(v, 20000);
        g.setTileMapping(v, tile);
        g.setTileMapping(out[r * cols + c], tile);
      }
    g.createHostWrite("a", a);
    g.createHostWrite("b", b);
    g.createHostRead("out", out);
    Engine engine(g, Repeat(2, Execute(cs)),
                  {{"aspen.compileCache", "false"}, {"aspen.exchangeInPlace", inPlace ? "true" : "false"}});
    engine.load(device);
    std::vector<float> av(rows * len), bv(cols * len);
    for (unsigned i = 0; i < av.size(); ++i)
      av[i] = 0.125f * float(i % 29) - 1.0f;
    for (unsigned i = 0; i < bv.size(); ++i)
      bv[i] = 0.25f * float(i % 13) - 1.5f;
    engine.writeTensor("a", av.data(), av.data() + av.size());
    engine.writeTensor("b", bv.data(), bv.data() + bv.size());
    engine.run(0);
    std::vector<float> got(rows * cols);
    engine.readTensor("out", got.data(), got.data() + got.size());
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned c = 0; c < cols; ++c) {
        float s = 0;
        for (unsigned i = 0; i < len; ++i)
          s += av[r * len + i] * bv[c * len + i] * float(i + 1);
        INFO("tile (" << r << ", " << c << ")");
        CHECK(got[r * cols + c] == s);
      }
    aspen::rt::Executor &e = *engine.getImpl().executor_;
    if (order)
      *order = e.computeOrder(0);
    return e.cycles();
  };
  for (unsigned threads : {1u, 2u}) {
    std::vector<std::uint32_t> order, none;
    const std::uint64_t ordered = runGrid(true, threads, &order);
    const std::uint64_t copied = runGrid(false, threads, &none);
    CHECK(ordered == copied);
    CHECK(none.empty());
    // A permutation of the step's tiles (its tiles ascending: reader (r, c) is index c * rows + r)
    // in which each tile after the first of a block of rows shares its row block or column block
    // with the one before.
    REQUIRE(order.size() == rows * cols);
    std::vector<std::uint32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (std::uint32_t k = 0; k < rows * cols; ++k)
      CHECK(sorted[k] == k);
    unsigned sharing = 0;
    for (std::size_t j = 1; j < order.size(); ++j)
      sharing += order[j] % rows == order[j - 1] % rows || order[j] / rows == order[j - 1] / rows;
    CHECK(sharing == rows * cols - 1);
  }
}
