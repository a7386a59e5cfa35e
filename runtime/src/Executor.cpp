// Copyright (c) Aspen contributors.
#include "Executor.hpp"

#include "DeviceScalar.hpp"
#include "HostClock.hpp"
#include "PrintTensor.hpp"
#include "TileBuiltins.hpp"
#include "codelets/VertexLibrary.hpp"
#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"
#include "util/Log.hpp"
#include "util/Trace.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <sstream>
#include <sys/mman.h>
#include <type_traits>

namespace aspen::rt {

using exe::StepKind;

namespace {

std::string formatSeconds(double s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

/// Runs `runOne(k, vt)` for k in [begin, end) until `*stop` is set. Not inlined
/// into the function that sets the recovery point, where the compiler keeps no
/// value in a register across calls.
template <class F>
__attribute__((noinline)) void runRange(const std::atomic<bool> *stop, std::size_t begin, std::size_t end,
                                        const F &runOne, VertexThread &vt) {
  for (std::size_t k = begin; k < end; ++k) {
    if (stop && stop->load(std::memory_order_relaxed))
      break;
    runOne(k, vt);
  }
}

/// The lowest vertex of a compute step that faulted, and how.
struct FaultRecord {
  static constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::mutex mutex;
  std::size_t vertex = none;
  VertexFault fault;
  void note(std::size_t at, const VertexFault &f) {
    std::lock_guard<std::mutex> lock(mutex);
    if (at < vertex) {
      vertex = at;
      fault = f;
    }
  }
};

// Whether some run of `plan` reads bytes that another run writes: then every
// read must happen before any write (as in the hardware's exchange), so the
// plan runs through a staging buffer.
bool readsWhatItWrites(const exe::CopyPlan &plan, std::uint64_t bytesPerTile) {
  using Range = std::pair<std::uint64_t, std::uint64_t>;
  std::vector<Range> reads, writes;
  reads.reserve(plan.runs.size());
  writes.reserve(plan.runs.size());
  for (const exe::CopyRun &r : plan.runs) {
    if (r.bytes == 0)
      continue;
    reads.emplace_back(r.src.tile * bytesPerTile + r.src.addr,
                       r.src.tile * bytesPerTile + r.src.addr + r.bytes);
    writes.emplace_back(r.dst.tile * bytesPerTile + r.dst.addr,
                        r.dst.tile * bytesPerTile + r.dst.addr + r.bytes);
  }
  // Runs come grouped by destination tile, often in address order: no sort then.
  if (!std::is_sorted(reads.begin(), reads.end()))
    std::sort(reads.begin(), reads.end());
  if (!std::is_sorted(writes.begin(), writes.end()))
    std::sort(writes.begin(), writes.end());
  std::size_t i = 0, j = 0;
  while (i < reads.size() && j < writes.size()) {
    if (reads[i].second <= writes[j].first)
      ++i;
    else if (writes[j].second <= reads[i].first)
      ++j;
    else
      return true;
  }
  return false;
}

/// One chunk: every tile on the calling thread (aspen.checkTileWrites).
const TileChunks serial;

/// Alignment of the thread scratch area (a page: data keeps its address modulo this).
constexpr std::uint64_t kScratchAlign = 4096;

/// Host scratch memory of the calling thread (docs/exchange.md): at least `bytes` (a multiple
/// of kScratchAlign) of read-write pages ending at a PROT_NONE guard page, so a vertex reading
/// past its window faults as it would past tile memory. Returns the guard page's address (the
/// end of the usable bytes). Where gathers one tile of `step` reads are copied just before
/// that tile runs. Throws system_runtime_error naming `step` when the host has no memory.
std::uint8_t *threadScratch(std::uint64_t bytes, const std::string &step) {
  struct Area {
    std::uint8_t *data = nullptr;
    std::uint64_t bytes = 0; // usable, before the guard page
    ~Area() {
      if (data)
        ::munmap(data, bytes + kScratchAlign);
    }
  };
  thread_local Area area;
  if (area.bytes < bytes) {
    if (area.data)
      ::munmap(area.data, area.bytes + kScratchAlign);
    area.data = nullptr;
    area.bytes = 0;
    void *p =
        ::mmap(nullptr, bytes + kScratchAlign, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED ||
        ::mprotect(static_cast<std::uint8_t *>(p) + bytes, kScratchAlign, PROT_NONE) != 0) {
      const int error = errno;
      if (p != MAP_FAILED)
        ::munmap(p, bytes + kScratchAlign);
      throw poplar::system_runtime_error("Cannot map " + std::to_string(bytes) +
                                         " bytes of host scratch memory for the exchange of compute set '" +
                                         step + "': " + std::strerror(error));
    }
    area.data = static_cast<std::uint8_t *>(p);
    area.bytes = bytes;
  }
  return area.data + area.bytes;
}

/// Runs `body(begin, end)` over every chunk of tile indices, in parallel when
/// there are several chunks.
template <class Body> void runChunks(const TileChunks &chunks, std::size_t numTiles, const Body &body) {
  if (!chunks.parallel()) {
    body(std::size_t(0), numTiles);
    return;
  }
  const std::uint32_t *bounds = chunks.bounds.data();
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, chunks.bounds.size() - 1, 1),
      [&](const tbb::blocked_range<std::size_t> &r) {
        for (std::size_t c = r.begin(); c != r.end(); ++c)
          body(std::size_t(bounds[c]), std::size_t(bounds[c + 1]));
      },
      tbb::simple_partitioner());
}

} // namespace

Executor::Executor(const exe::ExecutableData &exe, TileMemory &memory, std::vector<VertexCode> vertexCode,
                   HostContext host)
    : exe_(exe), memory_(memory), host_(host), counters_(exe.numCounters) {
  ASPEN_ASSERT(host_.streams && host_.remoteBuffers && host_.printStream && host_.profile,
               "executor needs its host context");
  ASPEN_ASSERT(vertexCode.size() == exe.vertexTypes.size(), "one entry per vertex type");
  installVertexFaultHandlers();
  const std::uint32_t contexts = std::max(1u, exe.target.numWorkerContexts);
  generators_.resize(2 * std::size_t(exe.target.numTiles()) * contexts);
  seedGenerators(generators_.data(), exe.target.numTiles(), contexts);
  generatorAt_.resize(std::size_t(exe.target.numTiles()) * contexts);
  for (std::size_t g = 0; g < generatorAt_.size(); ++g)
    generatorAt_[g] = reinterpret_cast<std::uint8_t *>(&generators_[2 * g]);
  // A graph with hardware seeds (poplar::setHwSeeds/getHwSeeds): the generators are that
  // variable, in each tile's memory (4 words per worker context).
  if (exe.hwSeedsTransfer != ~0u)
    for (const exe::HostRun &r : exe.hostTransfers[exe.hwSeedsTransfer].runs)
      for (std::uint64_t g = (r.hostOffset + 15) / 16; 16 * g + 16 <= r.hostOffset + r.bytes; ++g)
        generatorAt_[g] =
            memory_.at(r.device.tile, r.device.addr + static_cast<std::uint32_t>(16 * g - r.hostOffset));
  for (const VertexCode &code : vertexCode)
    registerVertexCode(reinterpret_cast<const void *>(code.compute));
  prepare(vertexCode);
}

void Executor::prepare(const std::vector<VertexCode> &vertexCode) {
  const std::uint32_t workers = std::max(1u, exe_.target.numWorkerContexts);
  prepared_.resize(exe_.computeSteps.size());
  // An exchange reads variables and writes edge buffers (or the reverse), so it never
  // reads what it writes: guaranteed for an executable compiled in this process;
  // analysed (a sort of every run) for one read from a file, which is most of
  // preparing such an executable: the plans are analysed in parallel.
  const bool compiled = exe_.provenance == exe::Provenance::Compiled;
  copyPlans_.resize(exe_.copies.size());
  const std::size_t numSteps = exe_.computeSteps.size();
  // Reading in place (docs/exchange.md): a step with bindings runs the exchange-in of its
  // in-place reads, and fills its part of the staging area first.
  std::uint64_t stagingBytes = 0;
  for (std::size_t k = 0; k < numSteps; ++k) {
    const exe::ComputeStep &cs = exe_.computeSteps[k];
    const bool inPlace = host_.exchangeInPlace && !cs.inPlace.empty();
    prepared_[k].in = inPlace ? &cs.inPlace.exchangeIn : &cs.exchangeIn;
    if (inPlace)
      stagingBytes = std::max(stagingBytes, cs.inPlace.stagingBytes);
  }
  if (stagingBytes != 0) {
    const std::uint64_t page = TileMemory::pageSize();
    inPlaceStaging_.reset(
        static_cast<std::uint8_t *>(std::aligned_alloc(page, (stagingBytes + page - 1) / page * page)));
    if (!inPlaceStaging_)
      throw std::bad_alloc();
  }
  tbb::parallel_for(std::size_t(0), numSteps + exe_.copies.size(), [&](std::size_t k) {
    if (k < numSteps) {
      prepared_[k].exchangeIn = analyse(*prepared_[k].in, !compiled);
      prepared_[k].exchangeOut = analyse(exe_.computeSteps[k].exchangeOut, !compiled);
    } else {
      copyPlans_[k - numSteps] = analyse(exe_.copies[k - numSteps]);
    }
  });
  // Per vertex type: summed cycles and instances of the step (zeroed again after
  // each step), and the types the step uses.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> perType(vertexCode.size());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> perTypeCounting(vertexCode.size()); // counted, not
  std::vector<std::uint8_t> warned(vertexCode.size(), 0);
  std::vector<std::uint32_t> typesUsed;
  for (std::size_t c = 0; c < exe_.computeSteps.size(); ++c) {
    const exe::ComputeStep &cs = exe_.computeSteps[c];
    PreparedComputeStep &p = prepared_[c];
    p.vertices.resize(cs.vertices.size());
    p.staticBefore.resize(cs.vertices.size());
    p.tileType.assign(cs.tiles.size(), kMixedTypes);
    p.roundRobin.assign(cs.tiles.size(), 0);
    std::vector<std::uint64_t> tileWork(cs.tiles.size(), 0);
    std::vector<std::uint64_t> load(std::min<std::uint32_t>(workers, kAlone));
    for (std::size_t k = 0; k < cs.tiles.size(); ++k) {
      std::uint8_t *const tile = memory_.at(cs.tiles[k], 0);
      std::uint64_t work = 0, aloneBefore = 0;
      std::fill(load.begin(), load.end(), 0);
      for (std::uint32_t i = cs.tileBegin[k]; i < cs.tileBegin[k + 1]; ++i) {
        const exe::VertexInstance &v = cs.vertices[i];
        const VertexCode &code = vertexCode[v.type];
        const std::uint32_t vertexWorkers = code.isMultiVertex ? workers : 1u;
        // Counted cycles (docs/cost-model.md): a vertex without an estimate of its own is
        // priced from what its code counts; one whose library cannot count is named.
        const bool counted = v.counted && code.countsCycles;
        // The worker the compiler's packing gives it (from the static estimates, as Poplar
        // assigns workers when it compiles: EstimateCycles.cpp), or kAlone for a MultiVertex
        // or Supervisor.
        std::uint8_t worker = kAlone;
        if (!code.isMultiVertex && !code.isSupervisor) {
          const auto least = std::min_element(load.begin(), load.end());
          p.staticBefore[i] = load.size() * *least + aloneBefore;
          *least += v.cycles;
          worker = static_cast<std::uint8_t>(least - load.begin());
        } else {
          p.staticBefore[i] = load.size() * *std::max_element(load.begin(), load.end()) + aloneBefore;
          aloneBefore += v.cycles;
        }
        p.vertices[i] = PreparedVertex{
            code.compute, tile + v.state, v.type, static_cast<std::uint16_t>(vertexWorkers), worker, counted};
        p.anyCounted = p.anyCounted || counted;
        p.anyBuiltins = p.anyBuiltins || code.usesBuiltins;
        p.anyChecked = p.anyChecked || code.checksWrites;
        work += v.cycles + vertexCallWork * vertexWorkers;
        auto &t = perType[v.type];
        if (t.second++ == 0)
          typesUsed.push_back(v.type);
        t.first += v.cycles;
        if (counted)
          ++perTypeCounting[v.type].first;
        else if (v.counted)
          ++perTypeCounting[v.type].second;
        if (v.counted && !code.countsCycles && !warned[v.type]) {
          warned[v.type] = 1;
          ASPEN_LOG(Warn, "Vertex type '" << exe_.vertexTypes[v.type].name
                                          << "' has no cycle estimate and its code does not count its cycles "
                                             "(its library was not compiled with clang++-16 and Aspen's "
                                             "cycle-counting plugin): priced by the default estimate "
                                             "(docs/cost-model.md)");
        }
      }
      tileWork[k] = work;
      const std::uint32_t first = cs.tileBegin[k];
      if (first < cs.tileBegin[k + 1] &&
          std::all_of(cs.vertices.begin() + first, cs.vertices.begin() + cs.tileBegin[k + 1],
                      [&](const exe::VertexInstance &v) { return v.type == cs.vertices[first].type; }))
        p.tileType[k] = cs.vertices[first].type;
      // One vertex type, every vertex counted, the j-th on worker j mod the workers (the packing
      // of vertices of one estimate; each alone on its worker when there are no more than workers).
      bool robin = p.tileType[k] != kMixedTypes;
      for (std::uint32_t i = first; robin && i < cs.tileBegin[k + 1]; ++i)
        robin = p.vertices[i].counted && p.vertices[i].workers == 1 &&
                p.vertices[i].worker == (i - first) % load.size();
      p.roundRobin[k] = robin;
      if (k == 0)
        p.uniformType = robin ? p.tileType[0] : kMixedTypes;
      else if (!robin || p.tileType[k] != p.uniformType)
        p.uniformType = kMixedTypes;
    }
    std::sort(typesUsed.begin(), typesUsed.end());
    for (std::uint32_t type : typesUsed) {
      p.typeCycles.emplace_back(type, perType[type].first);
      p.typeInstances.emplace_back(type, perType[type].second);
      if (perTypeCounting[type].first)
        p.typeCounted.emplace_back(type, perTypeCounting[type].first);
      if (perTypeCounting[type].second)
        p.typeNotCounted.emplace_back(type, perTypeCounting[type].second);
      perType[type] = {0, 0};
      perTypeCounting[type] = {0, 0};
    }
    typesUsed.clear();
    // A large step whose tiles share operand blocks walks them in an order that keeps the
    // blocks in the host's caches (shareOrder); the chunks cut that order.
    const bool fusedStep = cs.fuseExchangeIn && !p.in->empty() && !p.exchangeIn.snapshot;
    if (!fusedStep)
      p.order = shareOrder(cs, *p.in, tileWork);
    if (!p.order.empty())
      ASPEN_LOG(Debug, "compute step '" << cs.name << "': " << p.order.size()
                                        << " tiles walked in the order of what they share");
    if (!p.order.empty()) {
      std::vector<std::uint64_t> orderedWork(tileWork.size());
      for (std::size_t j = 0; j < p.order.size(); ++j)
        orderedWork[j] = tileWork[p.order[j]];
      p.chunks = makeChunks(orderedWork, inlineComputeWork);
    } else {
      p.chunks = makeChunks(tileWork, inlineComputeWork);
    }
    if (host_.codeletData && !host_.codeletData->empty()) {
      std::vector<std::uint32_t> typeImage(vertexCode.size());
      for (std::size_t t = 0; t < vertexCode.size(); ++t)
        typeImage[t] = vertexCode[t].dataImage;
      p.dataSwaps = planStepSwaps(exe_, cs, typeImage, *host_.codeletData, memory_);
    }
    // A plan that reads what it writes needs every read before any write, so
    // it cannot be split per tile (exchange-in never does; this is a guard).
    p.fused = fusedStep;
    if (p.fused)
      prepareFused(cs, tileWork, p);
    if (p.fused && p.in == &cs.inPlace.exchangeIn && !cs.inPlace.scratch.empty()) {
      p.scratchOf.assign(p.in->tiles.size(), noTile);
      p.scratchZeroBegin.assign(1, 0);
      for (std::size_t s = 0; s < cs.inPlace.scratch.size(); ++s) {
        const exe::InPlaceScratchTile &t = cs.inPlace.scratch[s];
        p.scratchOf[t.planTile] = static_cast<std::uint32_t>(s);
        // The window's pages end at the guard; the bytes of them no run fills are zeroed
        // as the tile runs (from the page's start, so that they never show another tile's).
        const std::uint64_t head = t.lo % kScratchAlign;
        const std::uint64_t pages = (head + t.bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
        p.scratchBytes = std::max(p.scratchBytes, pages);
        std::vector<std::pair<std::uint64_t, std::uint64_t>> filled; // [begin, end) from the page
        for (std::uint32_t r = p.in->tileBegin[t.planTile], e = r + t.runs; r < e; ++r) {
          p.scratchRunBytes += p.in->runs[r].bytes;
          const std::uint64_t at = head + (p.in->runs[r].dst.addr - t.lo);
          filled.push_back({at, at + p.in->runs[r].bytes});
        }
        filled.push_back({pages, pages});
        std::sort(filled.begin(), filled.end());
        std::uint64_t zeroFrom = 0;
        for (const auto &f : filled) {
          if (f.first > zeroFrom)
            p.scratchZero.push_back(
                {static_cast<std::uint32_t>(zeroFrom), static_cast<std::uint32_t>(f.first - zeroFrom)});
          zeroFrom = std::max(zeroFrom, f.second);
        }
        p.scratchZeroBegin.push_back(static_cast<std::uint32_t>(p.scratchZero.size()));
      }
      ASPEN_LOG(Debug, "compute step '" << cs.name << "': " << cs.inPlace.scratch.size()
                                        << " tiles read gathers from thread scratch (" << p.scratchRunBytes
                                        << " bytes a run)");
    }
  }

  typeScratch_.assign(vertexCode.size(), 0);

  // Streams made by poplar::cycleCount / cycleStamp: "<prefix>stamp/<id>",
  // "<prefix>begin/<id>" and "<prefix>end/<id>".
  const std::string prefix = cycleStreamPrefix;
  std::map<std::string, std::uint32_t> slots;
  cycleStreams_.assign(exe_.streams.size(), CycleStream::None);
  cycleStreamSlot_.assign(exe_.streams.size(), 0);
  for (std::size_t s = 0; s < exe_.streams.size(); ++s) {
    const std::string &h = exe_.streams[s].handle;
    if (h.compare(0, prefix.size(), prefix) != 0)
      continue;
    const std::string rest = h.substr(prefix.size());
    const auto slash = rest.find('/');
    const std::string role = rest.substr(0, slash);
    const std::string id = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (role == "stamp")
      cycleStreams_[s] = CycleStream::Stamp;
    else if (role == "begin")
      cycleStreams_[s] = CycleStream::CountBegin;
    else if (role == "end")
      cycleStreams_[s] = CycleStream::CountEnd;
    else
      continue;
    auto [it, inserted] = slots.emplace(id, static_cast<std::uint32_t>(slots.size()));
    cycleStreamSlot_[s] = it->second;
  }
  cycleCountStart_.assign(slots.size(), 0);
}

void Executor::prepareFused(const exe::ComputeStep &cs, const std::vector<std::uint64_t> &computeWork,
                            PreparedComputeStep &p) const {
  const exe::CopyPlan &in = *p.in;
  std::vector<std::uint64_t> work;
  std::uint64_t totalCompute = 0, totalBytes = 0;
  std::size_t i = 0, k = 0;
  while (i < in.tiles.size() || k < cs.tiles.size()) {
    const std::uint32_t tile =
        std::min(i < in.tiles.size() ? in.tiles[i] : noTile, k < cs.tiles.size() ? cs.tiles[k] : noTile);
    FusedTile f{noTile, noTile};
    std::uint64_t w = 0;
    if (i < in.tiles.size() && in.tiles[i] == tile) {
      f.exchangeIn = static_cast<std::uint32_t>(i);
      std::uint64_t bytes = 0;
      for (std::uint32_t r = in.tileBegin[i]; r < in.tileBegin[i + 1]; ++r)
        bytes += in.runs[r].bytes + 64; // as analyse() weighs a run
      totalBytes += bytes;
      w += bytes;
      ++i;
    }
    if (k < cs.tiles.size() && cs.tiles[k] == tile) {
      f.compute = static_cast<std::uint32_t>(k);
      totalCompute += computeWork[k];
      w += computeWork[k];
      ++k;
    }
    p.fusedTiles.push_back(f);
    work.push_back(w);
  }
  // Inline only when both phases would have run inline on their own.
  const bool small = totalCompute < inlineComputeWork && totalBytes < inlineExchangeBytes;
  p.fusedChunks = makeChunks(work, small ? std::numeric_limits<std::uint64_t>::max() : 0);
}

std::vector<std::uint32_t> Executor::shareOrder(const exe::ComputeStep &cs, const exe::CopyPlan &in,
                                                const std::vector<std::uint64_t> &tileWork) {
  // Keys of what each tile reads: the start of each range its fields read in place (a staging
  // offset or a tile address) and the source of each run it still receives.
  const std::size_t n = cs.tiles.size();
  std::uint64_t total = 0;
  for (std::uint64_t w : tileWork)
    total += w;
  if (n < shareOrderMinTiles || total < shareOrderMinWork ||
      !std::is_sorted(cs.tiles.begin(), cs.tiles.end()))
    return {};
  auto key = [](const exe::TileAddr &a) { return (std::uint64_t(a.tile) << 32) | a.addr; };
  std::vector<std::pair<std::uint64_t, std::uint32_t>> reads; // (key, step tile)
  auto stepTile = [&](std::uint32_t tile) {
    const auto it = std::lower_bound(cs.tiles.begin(), cs.tiles.end(), tile);
    return it != cs.tiles.end() && *it == tile ? static_cast<std::uint32_t>(it - cs.tiles.begin()) : noTile;
  };
  for (const exe::InPlaceBinding &b : cs.inPlace.bindings) {
    const std::uint32_t k = stepTile(b.where.tile);
    if (k != noTile)
      reads.emplace_back(key(b.target), k);
  }
  for (std::size_t i = 0; i < in.tiles.size(); ++i) {
    const std::uint32_t k = stepTile(in.tiles[i]);
    for (std::uint32_t r = in.tileBegin[i]; k != noTile && r < in.tileBegin[i + 1]; ++r)
      reads.emplace_back(key(in.runs[r].src), k);
  }
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  // Per key, its readers (ascending); per tile, its keys. Only keys read by two tiles or more.
  std::vector<std::uint32_t> keyBegin{0}, keyTiles;
  std::vector<std::vector<std::uint32_t>> tileKeys(n);
  for (std::size_t r = 0; r < reads.size();) {
    std::size_t e = r;
    while (e < reads.size() && reads[e].first == reads[r].first)
      ++e;
    if (e - r >= 2) {
      const auto id = static_cast<std::uint32_t>(keyBegin.size() - 1);
      for (std::size_t q = r; q < e; ++q) {
        keyTiles.push_back(reads[q].second);
        tileKeys[reads[q].second].push_back(id);
      }
      keyBegin.push_back(static_cast<std::uint32_t>(keyTiles.size()));
    }
    r = e;
  }
  const std::size_t numKeys = keyBegin.size() - 1;
  if (numKeys == 0)
    return {};
  // A snake: walk the readers of one key (`along`, they share that block); when it has none
  // left, step to an unvisited reader of another key of the last tile and walk along a key of
  // that one other than the key stepped by. For a matrix product (tile i,j,k reads A i,k and
  // B k,j) this walks a row of tiles sharing A, then steps down sharing B to walk the next
  // row back, so a slab of B blocks stays in cache while each A block is read once.
  std::vector<std::uint32_t> cursor(keyBegin.begin(), keyBegin.end() - 1); // first maybe-unvisited
  std::vector<std::uint8_t> visited(n, 0);
  auto nextOf = [&](std::uint32_t id) {
    std::uint32_t &c = cursor[id];
    while (c < keyBegin[id + 1] && visited[keyTiles[c]])
      ++c;
    return c < keyBegin[id + 1] ? keyTiles[c] : noTile;
  };
  std::vector<std::uint32_t> order;
  order.reserve(n);
  std::uint32_t along = noTile, cur = noTile;
  std::size_t scan = 0;
  while (order.size() < n) {
    if (cur == noTile) {
      while (visited[scan])
        ++scan;
      cur = static_cast<std::uint32_t>(scan);
      along = tileKeys[cur].empty() ? noTile : tileKeys[cur].front();
    }
    visited[cur] = 1;
    order.push_back(cur);
    std::uint32_t next = along != noTile ? nextOf(along) : noTile;
    if (next == noTile) {
      for (std::uint32_t id : tileKeys[cur]) {
        next = id != along ? nextOf(id) : noTile;
        if (next == noTile)
          continue;
        along = noTile;
        for (std::uint32_t other : tileKeys[next])
          if (other != id && (along == noTile || nextOf(other) != noTile))
            along = other;
        break;
      }
    }
    cur = next;
  }
  return order;
}

Executor::PlanInfo Executor::analyse(const exe::CopyPlan &plan, bool mayOverlap) const {
  PlanInfo info;
  std::vector<std::uint64_t> tileBytes(plan.tiles.size(), 0);
  for (std::size_t k = 0; k < plan.tiles.size(); ++k)
    for (std::uint32_t r = plan.tileBegin[k]; r < plan.tileBegin[k + 1]; ++r)
      tileBytes[k] += plan.runs[r].bytes + 64; // + the cost of a run
  info.chunks = makeChunks(tileBytes, inlineExchangeBytes);
  info.snapshot = mayOverlap && readsWhatItWrites(plan, memory_.bytesPerTile());
  if (info.snapshot) {
    info.tileStagingOffset.assign(plan.tiles.size() + 1, 0);
    for (std::size_t k = 0; k < plan.tiles.size(); ++k) {
      std::uint64_t bytes = 0;
      for (std::uint32_t r = plan.tileBegin[k]; r < plan.tileBegin[k + 1]; ++r)
        bytes += plan.runs[r].bytes;
      info.tileStagingOffset[k + 1] = info.tileStagingOffset[k] + bytes;
    }
  }
  return info;
}

TileChunks Executor::makeChunks(const std::vector<std::uint64_t> &tileWork, std::uint64_t inlineBelow) const {
  TileChunks chunks;
  std::uint64_t total = 0;
  for (std::uint64_t w : tileWork)
    total += w;
  const auto n = static_cast<std::uint32_t>(tileWork.size());
  const unsigned threads = static_cast<unsigned>(std::max(1, tbb::this_task_arena::max_concurrency()));
  const std::uint64_t wanted = std::min<std::uint64_t>(n, std::uint64_t(threads) * chunksPerThread);
  if (n < 2 || total < inlineBelow || threads == 1 || wanted < 2) {
    chunks.bounds = {0, n};
    return chunks;
  }
  // Cut where the running work passes each multiple of total / wanted.
  chunks.bounds.push_back(0);
  std::uint64_t running = 0;
  std::uint64_t next = total / wanted;
  for (std::uint32_t k = 0; k < n; ++k) {
    running += tileWork[k];
    if (running >= next && k + 1 < n) {
      chunks.bounds.push_back(k + 1);
      while (next <= running)
        next += total / wanted;
    }
  }
  chunks.bounds.push_back(n);
  return chunks;
}

// ---- the step loop ----------------------------------------------------------------

void Executor::run(unsigned program) {
  begin(program);
  if (resume() == Pause::Collective)
    throw poplar::runtime_error("Collective step " + std::to_string(paused_) +
                                " run outside a replica set (internal: use the engine)");
}

void Executor::begin(unsigned program) {
  ASPEN_ASSERT(program < exe_.programEntry.size(), "program index checked by the engine");
  if (faulted())
    throw poplar::application_runtime_error("Cannot run program " + std::to_string(program) +
                                            ": the engine must be loaded again (Engine::load) after its last "
                                            "run stopped: " +
                                            faultMessage_);
  ExecutionProfile &profile = *host_.profile;
  profile.trace.closeRun();
  if (profile.enabled) {
    ++profile.runs;
    profile.launchCycles += exe_.target.launchCycles();
    if (program < profile.runsPerProgram.size())
      ++profile.runsPerProgram[program];
  }
  callStack_.clear();
  pc_ = exe_.programEntry[program];
  program_ = program;
  runStartCycles_ = cycles_;
}

Executor::Pause Executor::resume() {
  ExecutionProfile &profile = *host_.profile;
  const std::uint64_t start = profile.enabled ? hostclock::now() : 0; // read only when enabled
  std::uint32_t &pc = pc_;
  struct WallTime {
    ExecutionProfile &profile;
    std::uint64_t start;
    bool enabled;
    ~WallTime() {
      if (enabled)
        profile.hostTicks += hostclock::now() - start;
    }
  } wallTime{profile, start, profile.enabled};

  for (;;) {
    const exe::Step &step = exe_.steps[pc];
    const std::uint32_t here = pc++;
    if (stop_ && stop_->load(std::memory_order_relaxed))
      stoppedByWatchdog(here);
    switch (step.kind) {
    case StepKind::Execute: {
      const exe::ComputeStep &cs = exe_.computeSteps[step.a];
      const PreparedComputeStep &p = prepared_[step.a];
      const std::uint64_t exchange = cs.exchangeIn.cycles + cs.exchangeOut.cycles;
      // Per-step host time only under aspen.profileHostComputeTime: two clock reads a step.
      const bool timeStep = profile.enabled && profile.hostComputeTimes;
      const std::uint64_t t0 = timeStep ? hostclock::now() : 0;
      if (!p.anyCounted) {
        const std::uint64_t compute = cs.computeCycles;
        const std::uint64_t total = std::max(step.cycles, compute + exchange);
        // The step's time: sync, exchange in, compute, exchange out (docs/codelets.md).
        computeStart_ = cycles_ + (total - compute - exchange) + cs.exchangeIn.cycles;
        account(here, total);
        execute(step);
        if (timeStep)
          profile.hostComputeTicks += hostclock::now() - t0;
        if (profile.enabled) {
          profile.computeCycles += compute;
          profile.exchangeCycles += exchange;
          profile.syncCycles += total - compute - exchange;
          for (const auto &[type, cycles] : p.typeCycles)
            profile.vertexTypeCycles[type] += cycles;
        }
      } else {
        // Counted cycles are known once the vertices ran: the step is accounted after it
        // (the static estimate's sync term, step.cycles - computeCycles - exchange, kept).
        std::uint64_t *tileTotals = nullptr; // per tile, summed over the step's executions
        if (profile.enabled) {
          std::vector<std::uint64_t> &t = profile.stepTileCycles[here];
          if (t.size() != cs.tiles.size())
            t.assign(cs.tiles.size(), 0);
          tileTotals = t.data();
        }
        const std::uint64_t sync = step.cycles - std::min(step.cycles, cs.computeCycles + exchange);
        computeStart_ = cycles_ + sync + cs.exchangeIn.cycles;
        execute(step, tileTotals);
        const std::uint64_t compute = countedWorst_.load(std::memory_order_relaxed);
        const std::uint64_t total = compute + exchange + sync;
        account(here, total);
        if (timeStep)
          profile.hostComputeTicks += hostclock::now() - t0;
        if (profile.enabled) {
          profile.computeCycles += compute;
          profile.exchangeCycles += exchange;
          profile.syncCycles += sync;
          for (const auto &[type, cycles] : p.typeCycles) {
            profile.vertexTypeCycles[type] += typeScratch_[type];
            typeScratch_[type] = 0;
          }
        }
      }
      if (profile.enabled) {
        for (const auto &[type, count] : p.typeInstances)
          profile.vertexTypeInstances[type] += count;
        for (const auto &[type, count] : p.typeCounted)
          profile.vertexTypeCounted[type] += count;
        for (const auto &[type, count] : p.typeNotCounted)
          profile.vertexTypeNotCounted[type] += count;
      }
      break;
    }
    case StepKind::Copy: {
      const exe::CopyPlan &plan = exe_.copies[step.a];
      const std::uint64_t total = std::max(step.cycles, plan.cycles);
      account(here, total, CycleCategory::Exchange);
      runCopyPlan(plan, copyPlans_[step.a]);
      break;
    }
    case StepKind::StreamToDevice:
      if (cycleStreams_[step.a] != CycleStream::None) {
        account(here, 0, CycleCategory::Control);
        runCycleStream(step.a, exe_.hostTransfers[step.b]);
        break;
      }
      account(here, step.cycles, CycleCategory::HostExchange);
      if (tracing_)
        pvti::Tracepoint::begin(traceChannel(), "stream to device");
      host_.streams->toDevice(step.a, exe_.hostTransfers[step.b], memory_);
      if (tracing_)
        pvti::Tracepoint::end(traceChannel(), "stream to device");
      break;
    case StepKind::DeviceToStream:
      account(here, step.cycles, CycleCategory::HostExchange);
      if (tracing_)
        pvti::Tracepoint::begin(traceChannel(), "stream from device");
      host_.streams->fromDevice(step.a, exe_.hostTransfers[step.b], memory_);
      if (tracing_)
        pvti::Tracepoint::end(traceChannel(), "stream from device");
      break;
    case StepKind::RemoteToDevice:
      account(here, step.cycles, CycleCategory::StreamingMemory);
      remoteCopy(step, true);
      break;
    case StepKind::DeviceToRemote:
      account(here, step.cycles, CycleCategory::StreamingMemory);
      remoteCopy(step, false);
      break;
    case StepKind::SetCounter:
      account(here, step.cycles, CycleCategory::Control);
      counters_[step.a] = step.value;
      break;
    case StepKind::LoopTest:
      account(here, step.cycles, CycleCategory::Control);
      if (counters_[step.a] == 0)
        pc = step.target;
      else
        --counters_[step.a];
      break;
    case StepKind::Jump:
      account(here, step.cycles, CycleCategory::Control);
      pc = step.target;
      break;
    case StepKind::JumpIfZero:
      account(here, step.cycles, CycleCategory::Control);
      if (!predicate(step.scalar))
        pc = step.target;
      break;
    case StepKind::JumpIfNonZero:
      account(here, step.cycles, CycleCategory::Control);
      if (predicate(step.scalar))
        pc = step.target;
      break;
    case StepKind::SwitchJump: {
      account(here, step.cycles, CycleCategory::Control);
      const exe::SwitchTable &table = exe_.switchTables[step.a];
      const std::int64_t value = readScalarAsInt(memory_.at(table.control.where), table.control.type);
      pc = table.defaultTarget;
      for (std::size_t i = 0; i < table.values.size(); ++i)
        if (table.values[i] == value) {
          pc = table.targets[i];
          break;
        }
      break;
    }
    case StepKind::Call:
      account(here, step.cycles, CycleCategory::Control);
      if (callStack_.size() >= maxCallDepth)
        throw poplar::runtime_error("Function calls nested deeper than " + std::to_string(maxCallDepth));
      callStack_.push_back(pc);
      pc = step.target;
      break;
    case StepKind::Return:
      account(here, step.cycles, CycleCategory::Control);
      if (callStack_.empty())
        throw poplar::runtime_error("Corrupt executable: a function returned without being called (step " +
                                    std::to_string(here) + ")");
      pc = callStack_.back();
      callStack_.pop_back();
      break;
    case StepKind::Print:
      account(here, step.cycles, CycleCategory::HostExchange);
      print(exe_.prints[step.a]);
      break;
    case StepKind::Abort:
      account(here, step.cycles, CycleCategory::Control);
      throw poplar::application_runtime_error(step.message.empty()
                                                  ? std::string("Program aborted by an Abort program")
                                                  : "Program aborted: " + step.message);
    case StepKind::AbortIf:
      account(here, step.cycles, CycleCategory::Control);
      if (predicate(step.scalar))
        throw poplar::application_runtime_error(
            step.message.empty() ? std::string("Program aborted by an AbortOnCondition program")
                                 : "Program aborted: " + step.message);
      break;
    case StepKind::Sync:
      account(here, step.cycles, CycleCategory::Sync);
      break;
    case StepKind::WriteUndef:
    case StepKind::BlockBegin:
    case StepKind::BlockEnd:
      account(here, step.cycles, CycleCategory::Control);
      break;
    case StepKind::End:
      return Pause::Finished;
    case StepKind::Collective: // the replica set runs it (and accounts its cycles) with every replica
      paused_ = here;
      account(here, step.cycles, CycleCategory::Exchange);
      return Pause::Collective;
    default: // rejected by validateExecutable
      ASPEN_ASSERT(false, "unknown step kind");
    }
  }
}

void Executor::account(std::uint32_t stepIndex, std::uint64_t cycles) {
  if (maxRunCycles_ != 0 && cycles_ - runStartCycles_ + cycles > maxRunCycles_)
    cycleBoundReached(stepIndex, cycles);
  ExecutionProfile &profile = *host_.profile;
  if (profile.enabled) {
    profile.totalCycles += cycles;
    ++profile.stepExecutions[stepIndex];
    profile.stepCycles[stepIndex] += cycles;
    if (profile.trace.size() < ExecutionProfile::maxTraceEntries)
      profile.trace.add({stepIndex, static_cast<std::uint32_t>(profile.runs - 1), cycles_, cycles});
    else
      ++profile.traceDropped;
  }
  cycles_ += cycles;
}

void Executor::account(std::uint32_t stepIndex, std::uint64_t cycles, CycleCategory category) {
  account(stepIndex, cycles);
  ExecutionProfile &profile = *host_.profile;
  if (!profile.enabled)
    return;
  switch (category) {
  case CycleCategory::Compute:
    profile.computeCycles += cycles;
    break;
  case CycleCategory::Exchange:
    profile.exchangeCycles += cycles;
    break;
  case CycleCategory::HostExchange:
    profile.hostExchangeCycles += cycles;
    break;
  case CycleCategory::StreamingMemory:
    profile.streamingMemoryCycles += cycles;
    break;
  case CycleCategory::Sync:
    profile.syncCycles += cycles;
    break;
  case CycleCategory::Control:
    profile.controlCycles += cycles;
    break;
  }
}

// ---- compute sets and exchange ------------------------------------------------------

void Executor::execute(const exe::Step &step, std::uint64_t *tileTotals) {
  const exe::ComputeStep &cs = exe_.computeSteps[step.a];
  const PreparedComputeStep &p = prepared_[step.a];
  if (p.in != &cs.exchangeIn && !cs.inPlace.staging.empty())
    stageInPlace(cs.inPlace);
  bytesCopied_ += p.in->totalBytes + cs.exchangeOut.totalBytes;
  if (!p.fused)
    runCopyPlan(*p.in, p.exchangeIn);

  // The lowest failing vertex index, so that the error does not depend on
  // which thread saw a failure first. A tile stops at its first failure.
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::atomic<std::size_t> firstFailure{none};
  const std::uint32_t *tileBegin = cs.tileBegin.data();
  // `vt.vertex` names the vertex running for the fault handler (VertexFaults.hpp).
  // What the IPU builtins of the step's vertices read (TileBuiltins.hpp).
  BuiltinStep builtins;
  builtins.tiles = cs.tiles.data();
  builtins.staticBefore = p.staticBefore.data();
  builtins.counted = p.anyCounted;
  builtins.numWorkers = std::max(1u, std::min<std::uint32_t>(exe_.target.numWorkerContexts, kAlone));
  builtins.tilesPerIpu = std::max(1u, exe_.target.tilesPerIPU);
  builtins.workerContexts = std::max(1u, exe_.target.numWorkerContexts);
  builtins.computeStart = computeStart_;
  builtins.generators = generatorAt_.data();
  // Checked writes (docs/tile-model.md): the running tile's pages, with the guards on either
  // side, are where the thread's vertex code may write; the arena is set per chunk, below.
  const std::uint32_t *stepTiles = cs.tiles.data();
  const std::uintptr_t ownBase =
      reinterpret_cast<std::uintptr_t>(memory_.firstPage()) - TileMemory::guardBytes();
  const std::uint64_t stride = memory_.stride();
  // The step's tiles run through one loop per chunk (runPlainTiles, runCountedTiles), chosen
  // for what the step's vertices need: the IPU builtins' per-call record only when some
  // library calls a builtin, the tile's write range only when some code checks its writes,
  // and a step with counted vertices (docs/cost-model.md, "Compute") prices each tile as it
  // goes, its per-type sums only when profiling.
  TileLoop loop{p.vertices.data(),
                cs.vertices.data(),
                tileBegin,
                p.tileType.data(),
                p.roundRobin.data(),
                p.uniformType,
                tileTotals,
                typeScratch_.data(),
                &firstFailure,
                stop_,
                std::max(1u, std::min<std::uint32_t>(exe_.target.numWorkerContexts, kAlone)),
                &builtins,
                stepTiles,
                ownBase,
                stride,
                p.anyChecked};
  std::uint64_t *const typeTotals = typeScratch_.data();
  const bool counting = p.anyCounted;
  const PlainTilesFn runPlain = p.anyBuiltins ? &runPlainTiles<true> : &runPlainTiles<false>;
  const CountedTilesFn runCounted =
      p.uniformType != kMixedTypes
          ? (p.anyBuiltins ? (tileTotals ? &runUniformTiles<true, true> : &runUniformTiles<true, false>)
                           : (tileTotals ? &runUniformTiles<false, true> : &runUniformTiles<false, false>))
          : (p.anyBuiltins ? (tileTotals ? &runCountedTiles<true, true> : &runCountedTiles<true, false>)
                           : (tileTotals ? &runCountedTiles<false, true> : &runCountedTiles<false, false>));
  countedWorst_.store(0, std::memory_order_relaxed);
  auto runTile = [&](std::size_t k, VertexThread &vt, CountedTotals &totals) {
    if (counting)
      runCounted(loop, k, k + 1, vt, totals);
    else
      runPlain(loop, k, k + 1, vt);
  };
  // Faults: the lowest faulting vertex (a chunk stops at its first fault, so
  // every vertex before it has run whatever the chunking), and its fault.
  FaultRecord fault;
  const std::atomic<bool> *stop = stop_;
  const std::size_t workerStackBytes = workerStackBytes_;
  // (The thread's record comes from the caller: a function setting a recovery point
  // keeps few values in registers.)
  // Under aspen.checkTileWrites the pages' protection checks every write (set below), and the
  // checked writes are off.
  std::uint64_t arenaBytes = TileMemory::guardBytes() + std::uint64_t(memory_.numTiles()) * stride;
  auto guarded = [&](VertexThread &vt, std::size_t begin, std::size_t end, auto &&runOne) {
    RecoveryPoint point;
    if (ASPEN_SET_RECOVERY_POINT(point) != 0) {
      // Here from the signal handler or a checked write: vertex code faulted, or the
      // watchdog stopped it.
      codelets::aspenTileWriteRange.arenaBytes = 0;
      const std::uint32_t at = vt.vertex.load(std::memory_order_relaxed);
      const VertexFault f = vt.fault;
      vt.abandonTile();
      leaveHeldTileData(); // codelet data swapped in: copied back, its locks freed
      vt.leave();
      fault.note(at, f);
      return;
    }
    vt.enter(&point, stop);
    codelets::TileWriteRange &range = codelets::aspenTileWriteRange;
    range.ownBytes = stride + TileMemory::guardBytes();
    range.arenaLo = ownBase;
    range.arenaBytes = arenaBytes;
    auto body = [&] {
      if constexpr (std::is_same_v<std::decay_t<decltype(runOne)>, TileRange>) {
        if (runOne.totals)
          runCounted(loop, begin, end, vt, *runOne.totals);
        else
          runPlain(loop, begin, end, vt);
      } else {
        runRange(stop, begin, end, runOne, vt);
      }
    };
    runOnWorkerStack(
        vt, workerStackBytes, [](void *f) { (*static_cast<decltype(&body)>(f))(); }, &body);
    range.arenaBytes = 0;
    vt.leave();
  };
  // A tile whose vertices have codelet data of their own (globals, statics) runs
  // them with its copies swapped in, under the libraries' locks (TileData.hpp);
  // `held` keeps them across consecutive such tiles of a chunk, and is left by the
  // recovery path above if a vertex faults. A step without such tiles takes the
  // plain loop: one branch per chunk.
  const std::uint32_t *swapBegin = p.dataSwaps.empty() ? nullptr : p.dataSwaps.begin.data();
  const TileDataSwap *swaps = p.dataSwaps.swaps.data();
  auto runHeld = [&](TileDataHolder &held, std::size_t k, VertexThread &vt, CountedTotals &totals) {
    if (swapBegin)
      held.moveTo(swaps + swapBegin[k], swaps + swapBegin[k + 1]);
    runTile(k, vt, totals);
  };
  // aspen.checkTileWrites: one thread, every tile read-only until it runs.
  TileWriteCheck check;
  struct Unprotect {
    TileMemory *memory = nullptr;
    ~Unprotect() {
      if (memory) {
        VertexThread::current().writeCheck = nullptr;
        memory->setTilesWritable(true);
      }
    }
  } unprotect;
  const bool checking = checkTileWrites_ && !cs.tiles.empty() && memory_.setTilesWritable(false);
  if (checking) {
    arenaBytes = 0;
    check.first = memory_.firstPage();
    check.stride = memory_.stride();
    check.pages = memory_.tilePageBytes();
    check.numTiles = memory_.numTiles();
    check.tileBegin = cs.tileBegin.data();
    check.tiles = cs.tiles.data();
    check.numStepTiles = cs.tiles.size();
    unprotect.memory = &memory_;
    VertexThread::current().writeCheck = &check;
  } else if (checkTileWrites_ && !cs.tiles.empty() && !warnedUnchecked_) {
    warnedUnchecked_ = true;
    ASPEN_LOG(Warn, "aspen.checkTileWrites: the host refuses to make tile memory read-only (mprotect); "
                    "writes into other tiles are not checked");
  }
  if (p.fused) {
    // Each tile's inputs arrive just before its vertices use them (still in cache).
    const exe::CopyRun *runs = p.in->runs.data();
    const std::uint32_t *runBegin = p.in->tileBegin.data();
    const FusedTile *fusedTiles = p.fusedTiles.data();
    TileMemory &memory = memory_;
    // Gathers one tile reads (docs/exchange.md): copied into the running thread's scratch
    // memory, the tile's fields pointed at it while the tile runs, instead of into the tile's
    // (cold) edge buffer. Not under checked writes (the fields then stay at the edge buffer).
    const bool toScratch = !p.scratchOf.empty() && !checking;
    const std::uint32_t *scratchOf = toScratch ? p.scratchOf.data() : nullptr;
    const exe::InPlaceScratchTile *scratchTiles = cs.inPlace.scratch.data();
    const std::size_t numScratch = cs.inPlace.scratch.size();
    const exe::InPlaceBinding *scratchBindings = cs.inPlace.scratchBindings.data();
    const std::size_t numScratchBindings = cs.inPlace.scratchBindings.size();
    if (toScratch)
      bytesToScratch_ += p.scratchRunBytes;
    const std::uint64_t scratchBytes = p.scratchBytes;
    const std::pair<std::uint32_t, std::uint32_t> *scratchZero = p.scratchZero.data();
    const std::uint32_t *scratchZeroBegin = p.scratchZeroBegin.data();
    // Points the fields of scratch tile `s` at its copy at `window`, or (null) back at its edge
    // buffer, so that no host pointer into a thread's scratch outlives the tile.
    auto pointFields = [&](std::uint32_t s, const std::uint8_t *window) {
      const exe::InPlaceScratchTile &t = scratchTiles[s];
      const std::size_t bindEnd = s + 1 < numScratch ? scratchTiles[s + 1].bindBegin : numScratchBindings;
      for (std::size_t b = t.bindBegin; b < bindEnd; ++b) {
        const exe::InPlaceBinding &binding = scratchBindings[b];
        const std::uint8_t *target =
            window ? window + (binding.target.addr - t.lo) : memory.at(binding.target);
        std::memcpy(memory.at(binding.where), &target, sizeof target);
      }
    };
    const bool fusedParallel = !checking && p.fusedChunks.parallel();
    runChunks(
        checking ? serial : p.fusedChunks, p.fusedTiles.size(), [&](std::size_t jBegin, std::size_t jEnd) {
          TileDataHolder held;
          CountedTotals totals;
          std::uint8_t *const guard = scratchOf ? threadScratch(scratchBytes, cs.name) : nullptr;
          volatile std::uint32_t bound = noTile; // the tile whose fields point into the scratch
          guarded(VertexThread::current(), jBegin, jEnd, [&](std::size_t j, VertexThread &vt) {
            const FusedTile &f = fusedTiles[j];
            if (f.exchangeIn != noTile) {
              std::uint32_t r = runBegin[f.exchangeIn];
              const std::uint32_t s = scratchOf ? scratchOf[f.exchangeIn] : noTile;
              if (s != noTile) {
                // The window's pages end at the guard page: reading past them faults.
                const exe::InPlaceScratchTile &t = scratchTiles[s];
                const std::uint64_t head = t.lo % kScratchAlign;
                std::uint8_t *const page =
                    guard - (head + t.bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
                for (std::uint32_t z = scratchZeroBegin[s]; z < scratchZeroBegin[s + 1]; ++z)
                  std::memset(page + scratchZero[z].first, 0, scratchZero[z].second);
                std::uint8_t *const window = page + head;
                for (const std::uint32_t e = r + t.runs; r < e; ++r)
                  std::memcpy(window + (runs[r].dst.addr - t.lo), memory.at(runs[r].src), runs[r].bytes);
                pointFields(s, window);
                bound = s;
              }
              for (const std::uint32_t e = runBegin[f.exchangeIn + 1]; r < e; ++r)
                std::memcpy(memory.at(runs[r].dst), memory.at(runs[r].src), runs[r].bytes);
            }
            if (f.compute != noTile)
              runHeld(held, f.compute, vt, totals);
            if (bound != noTile) {
              pointFields(bound, nullptr);
              bound = noTile;
            }
          });
          if (bound != noTile) // a vertex faulted
            pointFields(bound, nullptr);
          if (counting)
            totals.combineInto(countedWorst_, typeTotals, !fusedParallel);
        });
  } else if (!cs.tiles.empty() && !p.order.empty()) {
    // The same per-tile loops, walked in the step's sharing order (shareOrder).
    const std::uint32_t *order = p.order.data();
    const bool chunksParallel = !checking && p.chunks.parallel();
    runChunks(checking ? serial : p.chunks, cs.tiles.size(), [&](std::size_t jBegin, std::size_t jEnd) {
      CountedTotals totals;
      TileDataHolder held;
      guarded(VertexThread::current(), jBegin, jEnd, [&](std::size_t j, VertexThread &vt) {
        const std::uint32_t k = order[j];
        if (swapBegin)
          held.moveTo(swaps + swapBegin[k], swaps + swapBegin[k + 1]);
        runTile(k, vt, totals);
      });
      if (counting)
        totals.combineInto(countedWorst_, typeTotals, !chunksParallel);
    });
  } else if (!cs.tiles.empty()) {
    const bool chunksParallel = !checking && p.chunks.parallel();
    runChunks(checking ? serial : p.chunks, cs.tiles.size(), [&](std::size_t kBegin, std::size_t kEnd) {
      if (!swapBegin && !counting) {
        guarded(VertexThread::current(), kBegin, kEnd, TileRange{nullptr});
        return;
      }
      CountedTotals totals;
      if (!swapBegin) {
        guarded(VertexThread::current(), kBegin, kEnd, TileRange{&totals});
      } else {
        TileDataHolder held;
        guarded(VertexThread::current(), kBegin, kEnd,
                [&](std::size_t k, VertexThread &vt) { runHeld(held, k, vt, totals); });
      }
      if (counting)
        totals.combineInto(countedWorst_, typeTotals, !chunksParallel);
    });
  }

  if (checking) {
    VertexThread::current().writeCheck = nullptr;
    memory_.setTilesWritable(true);
    unprotect.memory = nullptr;
  }
  if (fault.vertex != FaultRecord::none)
    vertexFaulted(cs, fault.vertex, fault.fault);
  if (stop && stop->load(std::memory_order_relaxed))
    stoppedByWatchdog(static_cast<std::uint32_t>(&step - exe_.steps.data()));
  const std::size_t failed = firstFailure.load();
  if (step.scalar.type != poplar::Type::Id::Invalid) {
    // Execute(cs, flag): the failure is reported in the flag, not thrown.
    writeScalarInt(memory_.at(step.scalar.where), step.scalar.type, failed == none ? 0 : 1);
  } else if (failed != none) {
    vertexFailed(cs, failed);
  }
  runCopyPlan(cs.exchangeOut, p.exchangeOut);
}

void Executor::bindInPlace() {
  // A field reading in place holds the host address of the data it reads (docs/exchange.md).
  for (std::size_t c = 0; c < exe_.computeSteps.size(); ++c) {
    const exe::ComputeStep &cs = exe_.computeSteps[c];
    if (prepared_[c].in == &cs.exchangeIn)
      continue;
    for (const exe::InPlaceBinding &b : cs.inPlace.bindings) {
      const std::uint8_t *target =
          b.target.tile == exe::kStagingTile ? inPlaceStaging_.get() + b.target.addr : memory_.at(b.target);
      std::memcpy(memory_.at(b.where), &target, sizeof target);
    }
  }
}

void Executor::stageInPlace(const exe::InPlaceReads &ip) {
  // Gathered edge data that several tiles read: one copy, before any vertex runs.
  std::uint8_t *const area = inPlaceStaging_.get();
  const exe::CopyRun *const runs = ip.staging.data();
  TileMemory &memory = memory_;
  auto copy = [=, &memory](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r)
      std::memcpy(area + runs[r].dst.addr, memory.at(runs[r].src), runs[r].bytes);
  };
  std::uint64_t bytes = 0;
  for (const exe::CopyRun &r : ip.staging)
    bytes += r.bytes;
  bytesCopied_ += bytes;
  if (bytes < inlineExchangeBytes) {
    copy(0, ip.staging.size());
    return;
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, ip.staging.size(), 8),
                    [&](const tbb::blocked_range<std::size_t> &r) { copy(r.begin(), r.end()); });
}

namespace {
/// Notes vertex `i` as failed: the step reports its lowest failing vertex.
void noteFailure(std::atomic<std::size_t> &firstFailure, std::size_t i) {
  std::size_t seen = firstFailure.load(std::memory_order_relaxed);
  while (i < seen && !firstFailure.compare_exchange_weak(seen, i, std::memory_order_relaxed)) {
  }
}
} // namespace

template <bool kBuiltins>
void Executor::runPlainTiles(const TileLoop &step, std::size_t begin, std::size_t end, VertexThread &vt) {
  // Everything the loop reads, in locals (registers or the frame): the vertex calls cannot
  // change them, so nothing is reloaded through pointers after each call.
  const PreparedVertex *const vs = step.vertices;
  const std::uint32_t *const tileBegin = step.tileBegin;
  const std::atomic<bool> *const stop = step.stop;
  const std::uint32_t *const stepTiles = step.stepTiles;
  const std::uintptr_t ownBase = step.ownBase;
  const std::uint64_t stride = step.stride;
  const bool writeRange = step.writeRange;
  [[maybe_unused]] std::uint64_t &counter = codelets::cycleCounter();
  if constexpr (kBuiltins)
    vt.builtins = step.builtins;
  for (std::size_t k = begin; k < end; ++k) {
    if (stop && stop->load(std::memory_order_relaxed))
      break;
    if (writeRange)
      codelets::aspenTileWriteRange.ownLo = ownBase + stepTiles[k] * stride;
    if constexpr (kBuiltins)
      vt.builtinTile = static_cast<std::uint32_t>(k);
    for (std::uint32_t i = tileBegin[k], e = tileBegin[k + 1]; i < e; ++i) {
      const PreparedVertex &v = vs[i];
      vt.vertex.store(i, std::memory_order_relaxed);
      int ok;
      if (v.workers == 1) [[likely]] {
        if constexpr (kBuiltins) {
          vt.builtinWorker = v.worker == kAlone ? 0 : v.worker;
          vt.builtinCounterStart = counter;
        }
        ok = v.compute(v.object, 0);
      } else {
        ok = 1;
        for (std::uint32_t w = 0; w < v.workers; ++w) {
          if constexpr (kBuiltins) {
            vt.builtinWorker = v.worker == kAlone ? w : v.worker;
            vt.builtinCounterStart = counter;
          }
          ok &= v.compute(v.object, w);
        }
      }
      if (!ok) [[unlikely]] { // the tile's later vertices do not run
        noteFailure(*step.firstFailure, i);
        break;
      }
    }
  }
  vt.vertex.store(VertexThread::kNoVertex, std::memory_order_relaxed);
}

template <bool kBuiltins>
inline __attribute__((always_inline)) std::uint64_t
Executor::runRoundRobin(const PreparedVertex *vs, std::uint32_t i, const std::uint32_t e,
                        const std::uint64_t nw, VertexThread &vt, std::uint64_t &last, std::uint64_t *load,
                        std::atomic<std::size_t> *firstFailure) {
  std::uint64_t &counter = codelets::cycleCounter();
  std::uint64_t at = last; // the counter after the last vertex (a local: in a register)
  const std::uint32_t firstRow = e - i <= nw ? e : i + static_cast<std::uint32_t>(nw);
  std::uint64_t slowest = 0;
  for (std::uint32_t j = 0; i < firstRow; ++i, ++j) {
    const PreparedVertex &v = vs[i];
    vt.vertex.store(i, std::memory_order_relaxed);
    if constexpr (kBuiltins) {
      vt.builtinBefore = 0; // its worker starts with the tile
      vt.builtinWorker = v.worker;
      vt.builtinCounterStart = at;
    }
    const int ok = v.compute(v.object, 0);
    const std::uint64_t now = counter;
    const std::uint64_t c = now - at;
    at = now;
    slowest = std::max(slowest, c);
    load[j] = c;
    if (!ok) [[unlikely]] { // the tile's later vertices do not run: they cost nothing
      noteFailure(*firstFailure, i);
      last = at;
      return slowest;
    }
  }
  if (i == e) [[likely]] { // each vertex alone on its worker
    last = at;
    return slowest;
  }
  for (std::uint32_t j = 0; i < e; ++i) {
    const PreparedVertex &v = vs[i];
    vt.vertex.store(i, std::memory_order_relaxed);
    if constexpr (kBuiltins) {
      vt.builtinBefore = nw * load[j]; // the tile's time before it on its worker
      vt.builtinWorker = v.worker;
      vt.builtinCounterStart = at;
    }
    const int ok = v.compute(v.object, 0);
    const std::uint64_t now = counter;
    const std::uint64_t l = load[j] + (now - at);
    load[j] = l;
    slowest = std::max(slowest, l); // (loads only grow: the busiest's final load is the maximum)
    at = now;
    if (!ok) [[unlikely]] {
      noteFailure(*firstFailure, i);
      break;
    }
    if (++j == nw)
      j = 0;
  }
  last = at;
  return slowest;
}

template <bool kBuiltins, bool kProfile>
void Executor::runUniformTiles(const TileLoop &step, std::size_t begin, std::size_t end, VertexThread &vt,
                               CountedTotals &totals) {
  // As runCountedTiles, for a step whose tiles are all roundRobin of one type (the usual
  // compute set: one vertex type, a vertex per worker or dealt to them in turn): no per-tile
  // flags or types, and the type's cycles are what the counter grew by. A function of its own,
  // so that its few values stay in registers across the vertex calls.
  const PreparedVertex *const vs = step.vertices;
  const std::uint32_t *const tileBegin = step.tileBegin;
  [[maybe_unused]] std::uint64_t *const tileTotals = step.tileTotals;
  const std::atomic<bool> *const stop = step.stop;
  const std::uint32_t *const stepTiles = step.stepTiles;
  const std::uintptr_t ownBase = step.ownBase;
  const std::uint64_t stride = step.stride;
  const bool writeRange = step.writeRange;
  const std::uint64_t nw = step.numWorkers;
  std::atomic<std::size_t> *const firstFailure = step.firstFailure;
  std::uint64_t worst = totals.worst;
  std::uint64_t load[kAlone]; // per worker: its vertices' cycles (tiles of more vertices than workers)
  if constexpr (kBuiltins)
    vt.builtins = step.builtins;
  std::uint64_t last = codelets::cycleCounter();
  const std::uint64_t chunkStart = last;
  if (tileBegin[end] - tileBegin[begin] == end - begin) {
    // One vertex a tile (every tile here has one at least): a flat loop, the tile's time its
    // vertex's (a superstep of a vertex a tile; a few cycles a tile count there).
    std::uint64_t &counter = codelets::cycleCounter();
    for (std::size_t k = begin; k < end; ++k) {
      if (stop && stop->load(std::memory_order_relaxed))
        break;
      if (writeRange)
        codelets::aspenTileWriteRange.ownLo = ownBase + stepTiles[k] * stride;
      const std::uint32_t i = tileBegin[k];
      const PreparedVertex &v = vs[i];
      vt.vertex.store(i, std::memory_order_relaxed);
      if constexpr (kBuiltins) {
        vt.builtinTile = static_cast<std::uint32_t>(k);
        vt.builtinBefore = 0;
        vt.builtinWorker = v.worker;
        vt.builtinCounterStart = last;
      }
      const int ok = v.compute(v.object, 0);
      const std::uint64_t now = counter;
      const std::uint64_t tileCycles = (now - last) * nw;
      last = now;
      worst = std::max(worst, tileCycles);
      if constexpr (kProfile)
        tileTotals[k] += tileCycles;
      if (!ok) [[unlikely]]
        noteFailure(*firstFailure, i);
    }
  } else {
    for (std::size_t k = begin; k < end; ++k) {
      if (stop && stop->load(std::memory_order_relaxed))
        break;
      if (writeRange)
        codelets::aspenTileWriteRange.ownLo = ownBase + stepTiles[k] * stride;
      if constexpr (kBuiltins)
        vt.builtinTile = static_cast<std::uint32_t>(k);
      const std::uint64_t tileCycles =
          runRoundRobin<kBuiltins>(vs, tileBegin[k], tileBegin[k + 1], nw, vt, last, load, firstFailure) * nw;
      worst = std::max(worst, tileCycles);
      if constexpr (kProfile)
        tileTotals[k] += tileCycles;
    }
  }
  if constexpr (kProfile)
    if (last != chunkStart)
      totals.add(step.uniformType, last - chunkStart, step.typeTotals);
  totals.worst = worst;
  vt.vertex.store(VertexThread::kNoVertex, std::memory_order_relaxed);
}

template <bool kBuiltins, bool kProfile>
void Executor::runCountedTiles(const TileLoop &step, std::size_t begin, std::size_t end, VertexThread &vt,
                               CountedTotals &totals) {
  // Everything the loop reads, in locals (registers or the frame): the vertex calls cannot
  // change them, so nothing is reloaded through pointers after each call.
  const PreparedVertex *const vs = step.vertices;
  const exe::VertexInstance *const instances = step.instances;
  const std::uint32_t *const tileBegin = step.tileBegin;
  [[maybe_unused]] const std::uint32_t *const tileType = step.tileType;
  [[maybe_unused]] std::uint64_t *const tileTotals = step.tileTotals;
  [[maybe_unused]] std::uint64_t *const typeTotals = step.typeTotals;
  const std::uint8_t *const roundRobin = step.roundRobin;
  const std::atomic<bool> *const stop = step.stop;
  const std::uint32_t *const stepTiles = step.stepTiles;
  const std::uintptr_t ownBase = step.ownBase;
  const std::uint64_t stride = step.stride;
  const bool writeRange = step.writeRange;
  const std::uint64_t nw = step.numWorkers;
  std::uint64_t &counter = codelets::cycleCounter();
  std::uint64_t worst = totals.worst;
  // Per worker, the cycles of the vertices packed on it.
  std::uint64_t load[kAlone];
  // The type of the last one-type tiles and their cycles (added to `totals` when it changes).
  [[maybe_unused]] std::uint32_t lastType = kMixedTypes;
  [[maybe_unused]] std::uint64_t lastCycles = 0;
  if constexpr (kBuiltins)
    vt.builtins = step.builtins;
  // The counter after the last vertex that ran.
  std::uint64_t last = counter;
  for (std::size_t k = begin; k < end; ++k) {
    if (stop && stop->load(std::memory_order_relaxed))
      break;
    std::uint32_t i = tileBegin[k];
    const std::uint32_t e = tileBegin[k + 1];
    if (writeRange)
      codelets::aspenTileWriteRange.ownLo = ownBase + stepTiles[k] * stride;
    if constexpr (kBuiltins)
      vt.builtinTile = static_cast<std::uint32_t>(k);
    if (roundRobin[k]) {
      // All counted, of one type, dealt to the workers in turn: the tile's time is its busiest
      // worker's, and its vertices' sum is what the counter grew by.
      const std::uint64_t start = last;
      const std::uint64_t tileCycles =
          runRoundRobin<kBuiltins>(vs, i, e, nw, vt, last, load, step.firstFailure) * nw;
      worst = std::max(worst, tileCycles);
      if constexpr (kProfile) {
        tileTotals[k] += tileCycles;
        const std::uint32_t type = tileType[k]; // such a tile has one vertex type
        if (type != lastType) {
          if (lastCycles)
            totals.add(lastType, lastCycles, typeTotals);
          lastType = type;
          lastCycles = 0;
        }
        lastCycles += last - start;
      }
      continue;
    }
    // A fixed-size clear (inline stores): a loop over only the used loads became a call to
    // memset per tile, slower on 1,472 tiles x 8 vertices (runtime_bench, session 24).
    if (nw <= 8)
      std::memset(load, 0, 8 * sizeof(std::uint64_t));
    else
      std::memset(load, 0, nw * sizeof(std::uint64_t));
    std::uint64_t maxLoad = 0, alone = 0, before = counter;
    [[maybe_unused]] std::uint64_t total = 0;
    [[maybe_unused]] std::uint32_t type = 0;
    [[maybe_unused]] bool mixed = false;
    [[maybe_unused]] std::uint32_t runType = 0; // a run of vertices of one type (mixed tiles)
    [[maybe_unused]] std::uint64_t runCycles = 0;
    if constexpr (kProfile) {
      type = tileType[k];
      mixed = type == kMixedTypes;
      runType = mixed && i < e ? vs[i].type : 0;
    }
    for (; i < e; ++i) {
      const PreparedVertex &v = vs[i];
      vt.vertex.store(i, std::memory_order_relaxed);
      // The tile's time before this vertex, for __builtin_ipu_get_scount (TileBuiltins.hpp).
      if constexpr (kBuiltins)
        vt.builtinBefore = (v.worker == kAlone ? nw * maxLoad : nw * load[v.worker]) + alone;
      int ok;
      std::uint64_t c;
      if (v.counted && v.workers == 1) [[likely]] {
        if constexpr (kBuiltins) {
          vt.builtinWorker = v.worker == kAlone ? 0 : v.worker;
          vt.builtinCounterStart = before;
        }
        ok = v.compute(v.object, 0);
        const std::uint64_t now = counter;
        c = now - before;
        before = now;
      } else {
        ok = 1;
        if (!v.counted) {
          for (std::uint32_t w = 0; w < v.workers; ++w) {
            if constexpr (kBuiltins) {
              vt.builtinWorker = v.worker == kAlone ? w : v.worker;
              vt.builtinCounterStart = counter;
            }
            ok &= v.compute(v.object, w);
          }
          c = instances[i].cycles;
        } else {
          std::uint64_t slowest = 0;
          for (std::uint32_t w = 0; w < v.workers; ++w) {
            const std::uint64_t b = counter;
            if constexpr (kBuiltins) {
              vt.builtinWorker = v.worker == kAlone ? w : v.worker;
              vt.builtinCounterStart = b;
            }
            ok &= v.compute(v.object, w);
            slowest = std::max(slowest, counter - b);
          }
          c = slowest;
        }
        before = counter; // (code of a vertex with an estimate may count too)
      }
      const std::uint8_t w = v.worker;
      if (w == kAlone) { // a MultiVertex or Supervisor: in machine cycles
        if (v.counted)
          c *= nw;
        alone += c;
      } else {
        const std::uint64_t l = load[w] + c;
        load[w] = l;
        maxLoad = std::max(maxLoad, l);
      }
      if constexpr (kProfile) {
        total += c;
        if (mixed) {
          if (v.type != runType) {
            totals.add(runType, runCycles, typeTotals);
            runType = v.type;
            runCycles = 0;
          }
          runCycles += c;
        }
      }
      if (!ok) [[unlikely]] { // the tile's later vertices do not run: they cost nothing
        noteFailure(*step.firstFailure, i);
        break;
      }
    }
    if constexpr (kProfile) {
      if (mixed) {
        if (runCycles)
          totals.add(runType, runCycles, typeTotals);
      } else if (type == lastType) {
        lastCycles += total;
      } else {
        if (lastCycles)
          totals.add(lastType, lastCycles, typeTotals);
        lastType = type;
        lastCycles = total;
      }
    }
    const std::uint64_t tileCycles = maxLoad * nw + alone;
    worst = std::max(worst, tileCycles);
    if constexpr (kProfile)
      tileTotals[k] += tileCycles;
    last = counter;
  }
  if constexpr (kProfile)
    if (lastCycles)
      totals.add(lastType, lastCycles, typeTotals);
  totals.worst = worst;
  vt.vertex.store(VertexThread::kNoVertex, std::memory_order_relaxed);
}

std::string Executor::describeVertex(const exe::ComputeStep &cs, std::size_t vertexIndex) const {
  const exe::VertexInstance &v = cs.vertices[vertexIndex];
  const auto k = static_cast<std::size_t>(
      std::upper_bound(cs.tileBegin.begin(), cs.tileBegin.end(), static_cast<std::uint32_t>(vertexIndex)) -
      cs.tileBegin.begin() - 1);
  return "vertex " + std::to_string(v.graphVertex) + " of type '" + exe_.vertexTypes[v.type].name +
         "' on tile " + std::to_string(cs.tiles[k]) + " in compute set '" + cs.name + "'";
}

void Executor::vertexFailed(const exe::ComputeStep &cs, std::size_t vertexIndex) const {
  std::string what = describeVertex(cs, vertexIndex);
  what[0] = 'V';
  throw poplar::application_runtime_error(what + " returned false from compute()");
}

void Executor::vertexFaulted(const exe::ComputeStep &cs, std::size_t vertexIndex, const VertexFault &fault) {
  std::string what = describeVertex(cs, vertexIndex);
  const auto k = static_cast<std::size_t>(
      std::upper_bound(cs.tileBegin.begin(), cs.tileBegin.end(), static_cast<std::uint32_t>(vertexIndex)) -
      cs.tileBegin.begin() - 1);
  const std::uint32_t tile = cs.tiles[k];
  // The vertex may have written anywhere in its tile: the next load clears all of it.
  memory_.markUnbounded();
  std::string message;
  if (fault.timeout) {
    message = "Run of program " + std::to_string(program_) + " stopped by aspen.maxRunSeconds (" +
              formatSeconds(maxRunSeconds_) + " s): " + what + " was still running";
  } else {
    std::string detail;
    unsigned at = 0;
    std::uint64_t offset = 0;
    if (fault.stackOverflow && fault.workerStack)
      detail = ": the vertex overflowed its worker stack (" + std::to_string(workerStackBytes_) +
               " bytes of host stack for " + workerStackWhat_ + ")";
    else if (fault.stackOverflow)
      detail = ": the vertex overflowed its host thread's stack";
    else if ((fault.signal == SIGSEGV || fault.signal == SIGBUS || fault.checkedWrite) &&
             memory_.locate(fault.address, at, offset)) {
      if (fault.checkedWrite && offset >= memory_.bytesPerTile())
        detail = ": " + std::to_string(offset - memory_.bytesPerTile()) + " bytes past the end of tile " +
                 std::to_string(at) + "'s memory (" + std::to_string(memory_.bytesPerTile()) +
                 " bytes), stopped before it was made";
      else if (fault.checkedWrite)
        detail = ": a write to byte " + std::to_string(offset) + " of tile " + std::to_string(at) +
                 "'s memory, which belongs to another tile; stopped before it changed tile " +
                 std::to_string(at);
      else if (fault.otherTile)
        detail = ": a write to byte " + std::to_string(offset) + " of tile " + std::to_string(at) +
                 "'s memory, which belongs to another tile; aspen.checkTileWrites stopped it before it "
                 "changed tile " +
                 std::to_string(at);
      else if (offset >= memory_.bytesPerTile())
        detail = ": an access " + std::to_string(offset - memory_.bytesPerTile()) +
                 " bytes past the end of tile " + std::to_string(at) + "'s memory (" +
                 std::to_string(memory_.bytesPerTile()) + " bytes)";
      else
        detail =
            ": an access to byte " + std::to_string(offset) + " of tile " + std::to_string(at) + "'s memory";
    }
    what[0] = 'V';
    message = what + " faulted: " + describeSignal(fault) + detail + " (an IPU exception on tile " +
              std::to_string(tile) + ")";
  }
  faultMessage_ = message;
  throw poplar::application_runtime_error(message +
                                          "; the engine must be loaded again (Engine::load) before it "
                                          "runs another program");
}

std::string Executor::describeStep(std::uint32_t stepIndex) const {
  const exe::Step &s = exe_.steps[stepIndex];
  std::string d = "step " + std::to_string(stepIndex) + " (" + exe::stepKindName(s.kind);
  if (s.kind == StepKind::Execute)
    d += " of compute set '" + exe_.computeSteps[s.a].name + "'";
  else if (!s.message.empty() && s.kind != StepKind::Abort && s.kind != StepKind::AbortIf)
    d += " '" + s.message + "'";
  return d + ")";
}

void Executor::cycleBoundReached(std::uint32_t stepIndex, std::uint64_t cycles) const {
  throw poplar::application_runtime_error("Run of program " + std::to_string(program_) +
                                          " stopped by aspen.maxRunCycles (" + std::to_string(maxRunCycles_) +
                                          " cycles): " + describeStep(stepIndex) + " would take it to " +
                                          std::to_string(cycles_ - runStartCycles_ + cycles) + " cycles");
}

void Executor::stoppedByWatchdog(std::uint32_t stepIndex) const {
  throw poplar::application_runtime_error(
      "Run of program " + std::to_string(program_) + " stopped by aspen.maxRunSeconds (" +
      formatSeconds(maxRunSeconds_) + " s) at " + describeStep(stepIndex));
}

void Executor::runCopyPlan(const exe::CopyPlan &plan, const PlanInfo &info) {
  if (plan.runs.empty())
    return;
  const exe::CopyRun *runs = plan.runs.data();
  const std::uint32_t *tileBegin = plan.tileBegin.data();
  TileMemory &memory = memory_;

  if (!info.snapshot) {
    auto copyTiles = [&](std::size_t kBegin, std::size_t kEnd) {
      for (std::uint32_t r = tileBegin[kBegin], e = tileBegin[kEnd]; r < e; ++r)
        std::memcpy(memory.at(runs[r].dst), memory.at(runs[r].src), runs[r].bytes);
    };
    runChunks(info.chunks, plan.tiles.size(), copyTiles);
    return;
  }

  // Every read before any write: gather into staging, then scatter.
  if (staging_.size() < info.tileStagingOffset.back())
    staging_.resize(info.tileStagingOffset.back());
  std::uint8_t *staging = staging_.data();
  auto phase = [&](bool gather, std::size_t kBegin, std::size_t kEnd) {
    for (std::size_t k = kBegin; k < kEnd; ++k) {
      std::uint8_t *s = staging + info.tileStagingOffset[k];
      for (std::uint32_t r = tileBegin[k]; r < tileBegin[k + 1]; ++r) {
        if (gather)
          std::memcpy(s, memory.at(runs[r].src), runs[r].bytes);
        else
          std::memcpy(memory.at(runs[r].dst), s, runs[r].bytes);
        s += runs[r].bytes;
      }
    }
  };
  for (bool gather : {true, false})
    runChunks(info.chunks, plan.tiles.size(), [&](std::size_t b, std::size_t e) { phase(gather, b, e); });
}

// ---- host side --------------------------------------------------------------------

void Executor::runCycleStream(unsigned stream, const exe::HostTransfer &transfer) {
  std::uint64_t value = cycles_;
  const std::uint32_t slot = cycleStreamSlot_[stream];
  switch (cycleStreams_[stream]) {
  case CycleStream::CountBegin:
    cycleCountStart_[slot] = cycles_;
    break;
  case CycleStream::CountEnd:
    value = cycles_ - cycleCountStart_[slot];
    break;
  default:
    break;
  }
  // UNSIGNED_INT[2]: low word, then high word (little-endian host order).
  std::uint8_t bytes[8];
  std::memcpy(bytes, &value, sizeof bytes);
  if (transfer.bytes <= sizeof bytes)
    scatterToDevice(transfer, bytes, memory_);
}

void Executor::remoteCopy(const exe::Step &step, bool toDevice) {
  RemoteBuffers &buffers = *host_.remoteBuffers;
  const exe::HostTransfer &transfer = exe_.hostTransfers[step.b];
  const exe::RemoteBufferInfo &info = buffers.info(step.a);
  const std::uint64_t rowBytes = buffers.rowBytes(step.a);
  const std::uint64_t rows = rowBytes == 0 ? 0 : (transfer.bytes + rowBytes - 1) / rowBytes;
  std::vector<std::uint64_t> rowOfChunk(rows);
  const bool hasOffset = step.scalar.type != poplar::Type::Id::Invalid;
  const std::size_t offsetBytes = hasOffset ? deviceTypeSize(step.scalar.type) : 0;
  for (std::uint64_t i = 0; i < rows; ++i) {
    // The offsets of a multi-row copy are consecutive elements of one tensor.
    std::int64_t row = static_cast<std::int64_t>(i);
    if (hasOffset) {
      exe::TileAddr where = step.scalar.where;
      where.addr += static_cast<std::uint32_t>(i * offsetBytes);
      row = readScalarAsInt(memory_.at(where), step.scalar.type);
    }
    if (row < 0 || static_cast<std::uint64_t>(row) >= std::max<std::uint64_t>(1, info.repeats))
      throw poplar::application_runtime_error("Offset " + std::to_string(row) + " into remote buffer '" +
                                              info.handle + "' is out of range (the buffer has " +
                                              std::to_string(info.repeats) + " rows)");
    rowOfChunk[i] = static_cast<std::uint64_t>(row);
  }
  buffers.copy(step.a, transfer, rowOfChunk, memory_, toDevice);
}

void Executor::print(const exe::PrintSpec &spec) {
  const exe::HostTransfer &transfer = exe_.hostTransfers[spec.transfer];
  std::vector<std::uint8_t> bytes(transfer.bytes);
  gatherFromDevice(transfer, bytes.data(), memory_);
  std::unique_lock<std::mutex> lock;
  if (host_.printMutex)
    lock = std::unique_lock<std::mutex>(*host_.printMutex);
  printTensor(*host_.printStream, spec.title, spec.type, spec.shape, bytes.data());
  host_.printStream->flush();
}

bool Executor::predicate(const exe::ScalarRef &scalar) const {
  return scalarIsNonZero(memory_.at(scalar.where), scalar.type);
}

} // namespace aspen::rt
