// Sample: pipelining a model over 4 IPUs with gradient accumulation.
//
// A 4-layer linear network (d x d weights, layer k on IPU k) is trained on a
// least-squares loss. Each training step streams in M micro-batches and runs
// them through the pipeline as the Poplar programming guide describes: in
// pipeline cycle t, the stage on IPU k works on micro-batch t - k, so once the
// pipeline is full every IPU computes in the same superstep (one compute set
// holds all four stages' vertices), and the activations cross the IPU-Links in
// its exchange. The backward pass runs the same way from the last stage to the
// first, accumulating each layer's weight gradient over the micro-batches, and
// one SGD update per step applies the accumulated gradient.
//
// The same step is also built without pipelining (one stage and one
// micro-batch per superstep, so one IPU at a time). poplar::cycleCount measures
// both: the pipelined step needs fewer simulated cycles because the IPUs
// overlap. The weights are checked against the same training on the host.
#include <poplar/CycleCount.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#ifndef ASPEN_SAMPLE_DIR
#define ASPEN_SAMPLE_DIR "."
#endif

using namespace poplar;
using namespace poplar::program;

namespace {
const unsigned S = 4;  // stages = IPUs
const unsigned d = 16; // layer width
const unsigned M = 8;  // micro-batches accumulated per step
const unsigned steps = 6;
const float learningRate = 0.01f;
} // namespace

int main() {
  IPUModel model("ipu2");
  model.numIPUs = S;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/pipeline_codelets.cpp", CodeletFileType::Auto, "-O2");
  const unsigned tilesPerIPU = graph.getTarget().getTilesPerIPU();
  auto tileOf = [&](unsigned stage) { return stage * tilesPerIPU; }; // the first tile of IPU `stage`

  // Weights, gradients, activations (act[k] feeds stage k) and back-propagated gradients.
  std::mt19937 rng(99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> w0(S, std::vector<float>(d * d));
  std::vector<Tensor> W(S), dW(S), act(S + 1), grad(S + 1);
  for (unsigned k = 0; k < S; ++k) {
    for (float &v : w0[k])
      v = 0.35f * normal(rng);
    W[k] = graph.addVariable(FLOAT, {d * d}, "W" + std::to_string(k));
    dW[k] = graph.addVariable(FLOAT, {d * d}, "dW" + std::to_string(k));
    graph.setTileMapping(W[k], tileOf(k));
    graph.setTileMapping(dW[k], tileOf(k));
    graph.setInitialValue(W[k], w0[k]);
    graph.setInitialValue(dW[k], std::vector<float>(d * d, 0.0f));
    graph.createHostRead("W" + std::to_string(k), W[k]);
  }
  for (unsigned k = 0; k <= S; ++k) {
    act[k] = graph.addVariable(FLOAT, {M, d}, "act" + std::to_string(k));
    graph.setTileMapping(act[k], k == 0 ? tileOf(0) : tileOf(k - 1)); // where the stage that made it ran
    grad[k] = graph.addVariable(FLOAT, {M, d}, "grad" + std::to_string(k));
    graph.setTileMapping(grad[k], k == S ? tileOf(S - 1) : tileOf(k));
  }
  Tensor target = graph.addVariable(FLOAT, {M, d}, "target");
  graph.setTileMapping(target, tileOf(S - 1));
  DataStream inputs = graph.addHostToDeviceFIFO("inputs", FLOAT, M * d);
  DataStream targets = graph.addHostToDeviceFIFO("targets", FLOAT, M * d);

  auto forward = [&](ComputeSet cs, unsigned k, unsigned m) {
    VertexRef v = graph.addVertex(cs, "MatVec", {{"w", W[k]}, {"x", act[k][m]}, {"y", act[k + 1][m]}});
    graph.setTileMapping(v, tileOf(k));
  };
  auto backward = [&](ComputeSet cs, unsigned k, unsigned m) {
    VertexRef acc =
        graph.addVertex(cs, "OuterAccumulate", {{"dw", dW[k]}, {"gy", grad[k + 1][m]}, {"x", act[k][m]}});
    graph.setTileMapping(acc, tileOf(k));
    if (k > 0) {
      VertexRef back =
          graph.addVertex(cs, "MatTVec", {{"w", W[k]}, {"gy", grad[k + 1][m]}, {"gx", grad[k][m]}});
      graph.setTileMapping(back, tileOf(k));
    }
  };
  ComputeSet residual = graph.addComputeSet("residual");
  for (unsigned m = 0; m < M; ++m) {
    VertexRef v =
        graph.addVertex(residual, "Residual", {{"y", act[S][m]}, {"target", target[m]}, {"g", grad[S][m]}});
    graph.setTileMapping(v, tileOf(S - 1));
  }
  ComputeSet update = graph.addComputeSet("sgd");
  for (unsigned k = 0; k < S; ++k) {
    VertexRef v = graph.addVertex(update, "SgdStep", {{"w", W[k]}, {"dw", dW[k]}});
    graph.setInitialValue(v["scale"], learningRate / M);
    graph.setTileMapping(v, tileOf(k));
  }

  // The pipelined step: cycle t runs stage k on micro-batch t - k (forward),
  // stage k on micro-batch t - (S - 1 - k) (backward).
  Sequence pipelined;
  pipelined.add(Copy(inputs, act[0].flatten()));
  pipelined.add(Copy(targets, target.flatten()));
  Sequence pipelinedBody;
  unsigned fullCycles = 0;
  for (unsigned t = 0; t + 1 < M + S; ++t) {
    ComputeSet cs = graph.addComputeSet("fwd" + std::to_string(t));
    unsigned active = 0;
    for (unsigned k = 0; k < S; ++k)
      if (t >= k && t - k < M) {
        forward(cs, k, t - k);
        ++active;
      }
    fullCycles += active == S;
    pipelinedBody.add(Execute(cs));
  }
  pipelinedBody.add(Execute(residual));
  for (unsigned t = 0; t + 1 < M + S; ++t) {
    ComputeSet cs = graph.addComputeSet("bwd" + std::to_string(t));
    unsigned active = 0;
    for (unsigned k = 0; k < S; ++k)
      if (t >= S - 1 - k && t - (S - 1 - k) < M) {
        backward(cs, k, t - (S - 1 - k));
        ++active;
      }
    fullCycles += active == S;
    pipelinedBody.add(Execute(cs));
  }
  pipelinedBody.add(Execute(update));
  Tensor pipelinedCycles = cycleCount(graph, pipelinedBody, 0, SyncType::EXTERNAL, "pipelinedCycles");
  pipelined.add(pipelinedBody);

  // The same step without pipelining: one stage and one micro-batch per superstep.
  Sequence sequential;
  sequential.add(Copy(inputs, act[0].flatten()));
  sequential.add(Copy(targets, target.flatten()));
  Sequence sequentialBody;
  for (unsigned m = 0; m < M; ++m)
    for (unsigned k = 0; k < S; ++k) {
      ComputeSet cs = graph.addComputeSet("seqFwd" + std::to_string(m) + "_" + std::to_string(k));
      forward(cs, k, m);
      sequentialBody.add(Execute(cs));
    }
  sequentialBody.add(Execute(residual));
  for (unsigned m = 0; m < M; ++m)
    for (unsigned k = S; k-- > 0;) {
      ComputeSet cs = graph.addComputeSet("seqBwd" + std::to_string(m) + "_" + std::to_string(k));
      backward(cs, k, m);
      sequentialBody.add(Execute(cs));
    }
  sequentialBody.add(Execute(update));
  Tensor sequentialCycles = cycleCount(graph, sequentialBody, 0, SyncType::EXTERNAL, "sequentialCycles");
  sequential.add(sequentialBody);
  graph.createHostRead("pipelinedCycles", pipelinedCycles);
  graph.createHostRead("sequentialCycles", sequentialCycles);

  Engine engine(graph, {pipelined, sequential});
  engine.load(device);

  // Data: targets from a fixed "teacher" network of the same shape.
  const unsigned totalSteps = steps + 1; // the last step runs without pipelining
  std::vector<float> xs(totalSteps * M * d), ys(totalSteps * M * d);
  std::vector<float> teacher(d * d);
  for (float &v : teacher)
    v = 0.3f * normal(rng);
  for (unsigned s = 0; s < totalSteps * M; ++s) {
    for (unsigned j = 0; j < d; ++j)
      xs[s * d + j] = normal(rng);
    for (unsigned i = 0; i < d; ++i) {
      float sum = 0.0f;
      for (unsigned j = 0; j < d; ++j)
        sum += teacher[i * d + j] * xs[s * d + j];
      ys[s * d + i] = sum;
    }
  }
  engine.connectStream("inputs", xs.data(), xs.data() + xs.size());
  engine.connectStream("targets", ys.data(), ys.data() + ys.size());

  // The host reference: the same arithmetic in the same order, in float.
  std::vector<std::vector<float>> hw = w0;
  auto hostStep = [&](unsigned step) {
    std::vector<std::vector<float>> a(S + 1, std::vector<float>(M * d)), g(S + 1, std::vector<float>(M * d));
    std::vector<std::vector<float>> hdw(S, std::vector<float>(d * d, 0.0f));
    double loss = 0.0;
    for (unsigned m = 0; m < M; ++m)
      for (unsigned j = 0; j < d; ++j)
        a[0][m * d + j] = xs[(step * M + m) * d + j];
    for (unsigned m = 0; m < M; ++m)
      for (unsigned k = 0; k < S; ++k)
        for (unsigned i = 0; i < d; ++i) {
          float s = 0.0f;
          for (unsigned j = 0; j < d; ++j)
            s += hw[k][i * d + j] * a[k][m * d + j];
          a[k + 1][m * d + i] = s;
        }
    for (unsigned m = 0; m < M; ++m)
      for (unsigned i = 0; i < d; ++i) {
        g[S][m * d + i] = a[S][m * d + i] - ys[(step * M + m) * d + i];
        loss += 0.5 * double(g[S][m * d + i]) * g[S][m * d + i];
      }
    for (unsigned m = 0; m < M; ++m)
      for (unsigned k = S; k-- > 0;) {
        for (unsigned i = 0; i < d; ++i)
          for (unsigned j = 0; j < d; ++j)
            hdw[k][i * d + j] += g[k + 1][m * d + i] * a[k][m * d + j];
        if (k > 0)
          for (unsigned j = 0; j < d; ++j) {
            float s = 0.0f;
            for (unsigned i = 0; i < d; ++i)
              s += hw[k][i * d + j] * g[k + 1][m * d + i];
            g[k][m * d + j] = s;
          }
      }
    for (unsigned k = 0; k < S; ++k)
      for (unsigned i = 0; i < d * d; ++i)
        hw[k][i] -= learningRate / M * hdw[k][i];
    return loss / M;
  };

  double worst = 0.0, firstLoss = 0.0, lastLoss = 0.0;
  std::uint64_t pipeCycles = 0, seqCycles = 0;
  for (unsigned s = 0; s < totalSteps; ++s) {
    engine.run(s < steps ? 0 : 1);
    const double loss = hostStep(s);
    if (s == 0)
      firstLoss = loss;
    lastLoss = loss;
    for (unsigned k = 0; k < S; ++k) {
      std::vector<float> w(d * d);
      engine.readTensor("W" + std::to_string(k), w.data(), w.data() + w.size());
      for (unsigned i = 0; i < d * d; ++i)
        worst = std::max(worst, double(std::fabs(w[i] - hw[k][i])) / (1e-3 + std::fabs(hw[k][i])));
    }
    std::cout << "step " << s + 1 << (s < steps ? " (pipelined)" : " (not pipelined)") << ": host loss "
              << loss << "\n";
  }
  engine.readTensor("pipelinedCycles", &pipeCycles, &pipeCycles + 1);
  engine.readTensor("sequentialCycles", &seqCycles, &seqCycles + 1);
  std::cout << "pipelined step: " << pipeCycles << " cycles (" << fullCycles << " of " << 2 * (M + S - 1)
            << " supersteps keep all " << S << " IPUs busy)\n"
            << "same step, one IPU at a time: " << seqCycles << " cycles ("
            << double(seqCycles) / double(pipeCycles) << "x)\n"
            << "largest relative weight difference from the host: " << worst << "\n";
  const bool ok = worst < 1e-3 && lastLoss < firstLoss && pipeCycles > 0 && pipeCycles < seqCycles;
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
