// Copyright (c) Aspen contributors.
// Golden tests of the PopLibs functions added for issue 10 item 8 (against host loops):
// popops::allTrue, encodeOneHot, countedLoop / countedForLoop, CircBuf, gather, reduceMany,
// multi-dimension multiSlice / multiUpdateAdd, groupedMultiSlice / groupedMultiUpdateAdd,
// createOutputForElementWiseOp, poputil::createPartitionableTensor / iterateTensorPartitions,
// and popnn::logSoftmax in a graph with only popops' codelets.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popnn/LogSoftmax.hpp>
#include <popops/AllTrue.hpp>
#include <popops/CircBuf.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/ElementWiseUtil.hpp>
#include <popops/Encoding.hpp>
#include <popops/Fill.hpp>
#include <popops/Gather.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <popops/Scatter.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/VarStructure.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace poplar;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using aspen::test::TestTarget;

TEST_CASE("allTrue is the AND of every element", "[popops]") {
  aspen::test::forEachTarget([](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    program::Sequence prog;
    Tensor a = mappedVariable(graph, BOOL, {3, 5}, "a");
    Tensor b = mappedVariable(graph, BOOL, {7}, "b");
    Tensor ra = popops::allTrue(graph, a, prog);
    Tensor rb = popops::allTrue(graph, b, prog);
    REQUIRE(ra.rank() == 0);
    std::vector<unsigned char> av(15, 1), bv(7, 1), outA, outB;
    bv[4] = 0;
    dev.write(graph, a, av);
    dev.write(graph, b, bv);
    dev.read(graph, ra, outA);
    dev.read(graph, rb, outB);
    dev.run(graph, prog);
    REQUIRE(outA[0] == 1);
    REQUIRE(outB[0] == 0);
  });
}

TEST_CASE("encodeOneHot writes one hot element per row, masked rows all off", "[popops]") {
  for (Type type : {FLOAT, HALF, INT}) {
    INFO("type " << type);
    TestDevice dev(TestTarget::FewTiles);
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    program::Sequence prog;
    const std::size_t n = 6, c = 5;
    Tensor idx = mappedVariable(graph, UNSIGNED_INT, {n}, "idx");
    Tensor enc = mappedVariable(graph, type, {n, c}, "enc");
    popops::encodeOneHot(graph, idx, enc, prog);
    Tensor enc2 = mappedVariable(graph, FLOAT, {n, c}, "enc2");
    Tensor on = graph.addConstant(FLOAT, {}, 3.0f), off = graph.addConstant(FLOAT, {}, -1.0f);
    graph.setTileMapping(on, 0);
    graph.setTileMapping(off, 1);
    popops::encodeOneHot(graph, idx, enc2, prog, on, off);
    std::vector<unsigned> iv{0, 4, 2, MASKED_LABEL_CODE, 1, 4};
    dev.write(graph, idx, iv);
    std::vector<float> got2;
    dev.read(graph, enc2, got2);
    std::vector<float> gotF;
    std::vector<int> gotI;
    if (type == INT)
      dev.read(graph, enc, gotI);
    else
      dev.read(graph, enc, gotF);
    dev.run(graph, prog);
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t k = 0; k < c; ++k) {
        const bool hot = iv[r] == k;
        const float got = type == INT ? float(gotI[r * c + k]) : gotF[r * c + k];
        REQUIRE(got == (hot ? 1.0f : 0.0f));
        REQUIRE(got2[r * c + k] == (hot ? 3.0f : -1.0f));
      }
  }
}

TEST_CASE("countedLoop and countedForLoop run their bodies the right number of times", "[popops]") {
  aspen::test::forEachTarget([](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    Tensor acc = mappedVariable(graph, UNSIGNED_INT, {1}, "acc");
    Tensor acc2 = mappedVariable(graph, INT, {}, "acc2");
    Tensor limit = mappedVariable(graph, INT, {}, "limit");
    program::Sequence prog;
    popops::fill(graph, acc, prog, 0u);
    popops::fill(graph, acc2, prog, 0);
    // sum of i for i = 3, 5, 7, 9
    prog.add(popops::countedLoop(graph, 3, 10, 2, [&](const Tensor &i) {
      program::Sequence body;
      popops::addInPlace(graph, acc, i, body);
      return body;
    }));
    // count = 0, 2, 4 (limit 6): count summed
    Tensor count = graph.addVariable(INT, {}, "count");
    graph.setTileMapping(count, 0);
    program::Sequence body2;
    popops::addInPlace(graph, acc2, count, body2);
    prog.add(popops::countedForLoop(graph, count, 0, limit, 2, body2));
    dev.write(graph, limit, std::vector<int>{6});
    std::vector<unsigned> got;
    std::vector<int> got2;
    dev.read(graph, acc, got);
    dev.read(graph, acc2, got2);
    dev.run(graph, prog);
    REQUIRE(got[0] == 3 + 5 + 7 + 9);
    REQUIRE(got2[0] == 0 + 2 + 4);
  });
}

TEST_CASE("CircBuf keeps the last entries", "[popops]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  popops::CircBuf buf(graph, FLOAT, 3, {2, 2}, "buf");
  Tensor x = mappedVariable(graph, FLOAT, {2, 2}, "x");
  program::Sequence step;
  buf.add(x, step);
  popops::addInPlace(graph, x, 1.0f, step);
  program::Sequence prog;
  prog.add(program::Repeat(5, step)); // adds x = 10, 11, 12, 13, 14
  Tensor p0 = buf.prev(0, prog), p2 = buf.prev(2, prog);
  dev.write(graph, x, std::vector<float>(4, 10.0f));
  std::vector<float> g0, g2;
  std::vector<unsigned> idx;
  dev.read(graph, p0, g0);
  dev.read(graph, p2, g2);
  dev.read(graph, buf.getIndex(), idx);
  dev.run(graph, prog);
  REQUIRE(buf.size() == 3);
  REQUIRE(idx[0] == 5 % 3);
  requireClose(g0, std::vector<float>(4, 14.0f), 0, 0, "prev(0)");
  requireClose(g2, std::vector<float>(4, 12.0f), 0, 0, "prev(2)");
}

TEST_CASE("gather along an axis matches numpy take", "[popops]") {
  for (Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    TestDevice dev(TestTarget::FewTiles);
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    program::Sequence prog;
    const std::size_t A = 3, B = 5, C = 4;
    Tensor in = popops::createGatherInput(graph, type, {A, B, C}, 1);
    Tensor idx = mappedVariable(graph, UNSIGNED_INT, {2, 3}, "idx");
    Tensor out = popops::gather(graph, in, idx, 1, prog, {});
    REQUIRE(out.shape() == std::vector<std::size_t>{A, 2, 3, C});
    std::vector<float> iv(A * B * C);
    for (std::size_t i = 0; i < iv.size(); ++i)
      iv[i] = float(i % 97);
    std::vector<unsigned> ix{4, 0, 2, 2, 1, 3};
    dev.write(graph, in, iv);
    dev.write(graph, idx, ix);
    std::vector<float> got;
    dev.read(graph, out, got);
    dev.run(graph, prog);
    std::vector<float> want;
    for (std::size_t a = 0; a < A; ++a)
      for (unsigned j : ix)
        for (std::size_t c = 0; c < C; ++c)
          want.push_back(iv[(a * B + j) * C + c]);
    requireClose(got, want, 0, 0, "gather");
  }
}

TEST_CASE("reduceMany performs each reduction", "[popops]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  program::Sequence prog;
  Tensor a = mappedVariable(graph, FLOAT, {4, 3}, "a");
  Tensor b = mappedVariable(graph, HALF, {2, 5}, "b");
  std::vector<Tensor> outs;
  popops::reduceMany(graph,
                     {popops::SingleReduceOp(a, {0}, popops::Operation::ADD, "sum"),
                      popops::SingleReduceOp(b, {1}, popops::Operation::ADD, FLOAT, "sumToFloat")},
                     outs, prog);
  REQUIRE(outs.size() == 2);
  REQUIRE(outs[1].elementType() == FLOAT);
  std::vector<float> av(12), bv(10);
  for (std::size_t i = 0; i < 12; ++i)
    av[i] = float(i) * 0.5f;
  for (std::size_t i = 0; i < 10; ++i)
    bv[i] = float((i * 7) % 10);
  dev.write(graph, a, av);
  dev.write(graph, b, bv);
  std::vector<float> g0, g1;
  dev.read(graph, outs[0], g0);
  dev.read(graph, outs[1], g1);
  dev.run(graph, prog);
  std::vector<float> w0(3, 0), w1(2, 0);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t c = 0; c < 3; ++c)
      w0[c] += av[r * 3 + c];
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t c = 0; c < 5; ++c)
      w1[r] += bv[r * 5 + c];
  requireClose(g0, w0, 1e-6, 0, "sum");
  requireClose(g1, w1, 0, 0, "sum to float");
}

TEST_CASE("multiSlice over two dimensions and the grouped forms", "[popops]") {
  for (Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    TestDevice dev(TestTarget::FewTiles);
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    program::Sequence prog;
    const std::size_t D0 = 4, D1 = 3, D2 = 5, G = 2, N = 4;
    Tensor t = mappedVariable(graph, type, {D0, D1, D2}, "t");
    Tensor off = mappedVariable(graph, UNSIGNED_INT, {N, 2}, "off");
    // slices t[o0, :, o1] for each (o0, o1): dims {0, 2}
    Tensor s = popops::multiSlice(graph, t, off, {0, 2}, {1, 1}, prog, {}, {});
    REQUIRE(s.shape() == std::vector<std::size_t>{N, 1, D1, 1});
    Tensor gt = mappedVariable(graph, type, {G, D0, D2}, "gt");
    Tensor goff = mappedVariable(graph, UNSIGNED_INT, {G, N, 1}, "goff");
    Tensor gs = popops::groupedMultiSlice(graph, gt, goff, {0}, {1}, prog, {}, {});
    REQUIRE(gs.shape() == std::vector<std::size_t>{G, N, 1, D2});
    Tensor upd = mappedVariable(graph, type, {G, N, 1, D2}, "upd");
    Tensor scale = graph.addConstant(type, {}, 2.0f);
    graph.setTileMapping(scale, 0);
    program::Sequence after;
    popops::groupedMultiUpdateAdd(graph, gt, upd, goff, scale, {0}, {1}, after, {}, {});
    std::vector<float> tv(D0 * D1 * D2), gv(G * D0 * D2), uv(G * N * D2);
    for (std::size_t i = 0; i < tv.size(); ++i)
      tv[i] = float(i % 50);
    for (std::size_t i = 0; i < gv.size(); ++i)
      gv[i] = float(i % 31);
    for (std::size_t i = 0; i < uv.size(); ++i)
      uv[i] = float(i % 7);
    std::vector<unsigned> ov{1, 4, 3, 0, 0, 2, 2, 1};
    std::vector<unsigned> gov{0, 3, 1, 3, 2, 2, 0, 1};
    dev.write(graph, t, tv);
    dev.write(graph, off, ov);
    dev.write(graph, gt, gv);
    dev.write(graph, goff, gov);
    dev.write(graph, upd, uv);
    std::vector<float> gotS, gotGS, gotGT;
    dev.read(graph, s, gotS);
    dev.read(graph, gs, gotGS);
    dev.read(graph, gt, gotGT);
    dev.runPrograms(graph, {prog, after}, {0, 1});
    std::vector<float> wantS, wantGS, wantGT = gv;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < D1; ++j)
        wantS.push_back(tv[(ov[2 * i] * D1 + j) * D2 + ov[2 * i + 1]]);
    for (std::size_t g = 0; g < G; ++g)
      for (std::size_t i = 0; i < N; ++i)
        for (std::size_t k = 0; k < D2; ++k) {
          wantGS.push_back(gv[(g * D0 + gov[g * N + i]) * D2 + k]);
          wantGT[(g * D0 + gov[g * N + i]) * D2 + k] += 2.0f * uv[(g * N + i) * D2 + k];
        }
    requireClose(gotS, wantS, 0, 0, "multiSlice dims {0,2}");
    requireClose(gotGS, wantGS, 0, 0, "groupedMultiSlice");
    requireClose(gotGT, wantGT, 0, 0, "groupedMultiUpdateAdd");
  }
}

TEST_CASE("createPartitionableTensor makes each partition contiguous", "[poputil]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  Tensor t = poputil::createPartitionableTensor(graph, FLOAT, {5, 7}, {2, 3});
  REQUIRE(t.shape() == std::vector<std::size_t>{5, 7});
  std::vector<std::vector<std::size_t>> seen;
  std::size_t elements = 0;
  poputil::iterateTensorPartitions(t, {2, 3}, [&](const std::vector<std::size_t> &i, const Tensor &s) {
    seen.push_back(i);
    elements += s.numElements();
    if (s.numElements())
      REQUIRE(s.getContiguousRegions().size() == 1);
  });
  REQUIRE(seen.size() == 6);
  REQUIRE(seen[4] == std::vector<std::size_t>{1, 1});
  REQUIRE(elements == 35);
  // partitions of ceil(5/2) = 3 and ceil(7/3) = 3 rows / columns
  std::vector<std::size_t> sizes;
  poputil::iterateTensorPartitions(t, {2, 3}, [&](const std::vector<std::size_t> &, const Tensor &s) {
    sizes.push_back(s.numElements());
  });
  REQUIRE(sizes == std::vector<std::size_t>{9, 9, 3, 6, 6, 2});
  // runs of 3 elements on alternating tiles give a {4, 6} variable an innermost grouping of 3
  Tensor v = graph.addVariable(FLOAT, {4, 6}, "v");
  for (unsigned i = 0; i < 8; ++i)
    graph.setTileMapping(v.flatten().slice(i * 3, i * 3 + 3), i % 2);
  REQUIRE(poputil::detectInnermostGrouping(graph, v) == 3);
}

TEST_CASE("createOutputForElementWiseOp follows the best-mapped input", "[popops]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  Tensor c = graph.addConstant(FLOAT, {8}, 1.0f);
  graph.setTileMapping(c, 0);
  Tensor a = graph.addVariable(FLOAT, {8}, "a");
  graph.setTileMapping(a.slice(0, 4), 2);
  graph.setTileMapping(a.slice(4, 8), 3);
  Tensor out = popops::createOutputForElementWiseOp(graph, {c, a}, HALF, "out");
  REQUIRE(out.elementType() == HALF);
  REQUIRE(graph.getTileMapping(out) == graph.getTileMapping(a));
}

TEST_CASE("logSoftmax works with only popops codelets", "[popnn]") {
  for (Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    TestDevice dev(TestTarget::FewTiles);
    Graph graph(dev.getTarget());
    popops::addCodelets(graph); // no popnn::addCodelets, as PopLibs allows
    program::Sequence prog;
    const std::size_t rows = 3, cols = 7;
    Tensor x = mappedVariable(graph, type, {rows, cols}, "x");
    Tensor y = popnn::logSoftmax(graph, x, prog);
    const auto xv = aspen::test::randomValues(rows * cols, -3, 3, 5, type, dev.getTarget());
    dev.write(graph, x, xv);
    std::vector<float> got;
    dev.read(graph, y, got);
    dev.run(graph, prog);
    std::vector<float> want;
    for (std::size_t r = 0; r < rows; ++r) {
      double m = -1e30, s = 0;
      for (std::size_t c = 0; c < cols; ++c)
        m = std::max<double>(m, xv[r * cols + c]);
      for (std::size_t c = 0; c < cols; ++c)
        s += std::exp(xv[r * cols + c] - m);
      for (std::size_t c = 0; c < cols; ++c)
        want.push_back(float(xv[r * cols + c] - m - std::log(s)));
    }
    requireClose(got, want, type == HALF ? 1e-2 : 1e-5, type == HALF ? 1e-2 : 1e-5, "logSoftmax");
  }
}

TEST_CASE("scatter (XLA semantics) writes rows, and accumulates with an update computation", "[popops]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  program::Sequence prog;
  const std::size_t R = 4, C = 3;
  Tensor a = mappedVariable(graph, FLOAT, {R, C}, "a");
  Tensor b = mappedVariable(graph, FLOAT, {R, C}, "b");
  Tensor idx = mappedVariable(graph, INT, {3}, "idx");
  Tensor upd = mappedVariable(graph, FLOAT, {3, C}, "upd");
  // rows idx[i] of a = upd[i]; rows idx[i] of b += upd[i] (idx has a repeat)
  popops::scatter(graph, a, idx, upd, 1, {1}, {0}, {0}, prog);
  popops::UpdateComputationFunc add = [](Graph &g, Tensor &cur, Tensor &u, program::Sequence &s) {
    return popops::add(g, cur, u, s);
  };
  popops::scatter(graph, b, idx, upd, 1, {1}, {0}, {0}, add, prog);
  // a column window: operand {R, C}, index vectors {row, col} with a {2, 1} window
  Tensor c = mappedVariable(graph, FLOAT, {R, C}, "c");
  Tensor idx2 = mappedVariable(graph, UNSIGNED_INT, {1, 2}, "idx2");
  Tensor upd2 = mappedVariable(graph, FLOAT, {1, 2, 1}, "upd2");
  popops::scatter(graph, c, idx2, upd2, 1, {1, 2}, {}, {0, 1}, prog);
  std::vector<float> av(R * C), bv(R * C, 1.0f), cv(R * C, 0.0f), uv{1, 2, 3, 4, 5, 6, 7, 8, 9};
  for (std::size_t i = 0; i < av.size(); ++i)
    av[i] = -float(i);
  std::vector<int> iv{2, 0, 2};
  dev.write(graph, a, av);
  dev.write(graph, b, bv);
  dev.write(graph, c, cv);
  dev.write(graph, idx, iv);
  dev.write(graph, upd, uv);
  dev.write(graph, idx2, std::vector<unsigned>{1, 2});
  dev.write(graph, upd2, std::vector<float>{5, 6});
  std::vector<float> ga, gb, gc;
  dev.read(graph, a, ga);
  dev.read(graph, b, gb);
  dev.read(graph, c, gc);
  dev.run(graph, prog);
  std::vector<float> wa = av, wb = bv, wc = cv;
  for (std::size_t i = 0; i < iv.size(); ++i)
    for (std::size_t k = 0; k < C; ++k) {
      wa[iv[i] * C + k] = uv[i * C + k];
      wb[iv[i] * C + k] += uv[i * C + k];
    }
  wc[1 * C + 2] = 5;
  wc[2 * C + 2] = 6;
  requireClose(ga, wa, 0, 0, "scatter");
  requireClose(gb, wb, 0, 0, "scatter-add");
  requireClose(gc, wc, 0, 0, "scatter of a {2, 1} window");
}

TEST_CASE("gather (XLA form) picks elements and rows", "[popops]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  program::Sequence prog;
  Tensor in = mappedVariable(graph, FLOAT, {3, 3}, "in");
  Tensor idx = mappedVariable(graph, INT, {2, 2}, "idx");
  // PopLibs' documented example: elements [1,1] and [2,1]
  Tensor elems = popops::gather(graph, in, idx, 1, {}, {1, 1}, {0, 1}, {0, 1}, prog);
  REQUIRE(elems.shape() == std::vector<std::size_t>{2});
  // rows 2 and 0 as {2, 3}: scalar indices, the column dimension kept at offset 1
  Tensor rowIdx = mappedVariable(graph, UNSIGNED_INT, {2}, "rowIdx");
  Tensor rows = popops::gather(graph, in, rowIdx, 1, {1}, {1, 3}, {0}, {0}, prog);
  REQUIRE(rows.shape() == std::vector<std::size_t>{2, 3});
  dev.write(graph, in, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  dev.write(graph, idx, std::vector<int>{1, 1, 2, 1});
  dev.write(graph, rowIdx, std::vector<unsigned>{2, 0});
  std::vector<float> ge, gr;
  dev.read(graph, elems, ge);
  dev.read(graph, rows, gr);
  dev.run(graph, prog);
  requireClose(ge, std::vector<float>{5, 8}, 0, 0, "elements");
  requireClose(gr, std::vector<float>{7, 8, 9, 1, 2, 3}, 0, 0, "rows");
}
