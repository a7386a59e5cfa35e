// Copyright (c) Aspen contributors.
#include "exe/Validate.hpp"

#include <cmath>

#include "poplar/Type.hpp"
#include "poplar/exceptions.hpp"

#include <algorithm>
#include <string>

namespace aspen::exe {

bool isValidTypeId(std::uint64_t id) {
  return id > static_cast<std::uint64_t>(poplar::Type::Id::Invalid) &&
         id <= static_cast<std::uint64_t>(poplar::Type::Id::QuarterMetadata);
}

namespace {

/// `a * b` when it does not exceed `limit`, else false.
bool mulWithin(std::uint64_t a, std::uint64_t b, std::uint64_t limit, std::uint64_t &out) {
  std::uint64_t p;
  if (__builtin_mul_overflow(a, b, &p) || p > limit)
    return false;
  out = p;
  return true;
}

std::string indexed(const std::string &table, std::size_t i) {
  return table + "[" + std::to_string(i) + "]";
}

/// One pass over an executable. Messages are built only when a check fails, so
/// that the pass costs a few comparisons per record.
class Checker {
public:
  Checker(const ExecutableData &x, const std::string &what) : x_(x), what_(what) {}

  void all() {
    target();
    const std::size_t numSteps = x_.steps.size();
    if (numSteps == 0 && !x_.programEntry.empty())
      fail("steps", "is empty but there are " + std::to_string(x_.programEntry.size()) + " programs");
    if (numSteps != 0) {
      const StepKind last = x_.steps.back().kind;
      if (last != StepKind::End && last != StepKind::Jump && last != StepKind::Return &&
          last != StepKind::Abort)
        fail("steps", "does not end with an End, Jump, Return or Abort step");
    }
    if (numSteps > 0xffffffffu)
      fail("steps", "has more than 2^32 entries");
    for (std::size_t p = 0; p < x_.programEntry.size(); ++p)
      if (x_.programEntry[p] >= numSteps)
        index(indexed("programEntry", p), x_.programEntry[p], numSteps, "steps");
    // Every counter is set by a SetCounter step, so there are at most as many counters as steps.
    if (x_.numCounters > numSteps)
      fail("numCounters", std::to_string(x_.numCounters) + " is more than the number of steps (" +
                              std::to_string(numSteps) + ")");
    // Tables first: the step checks below rely on them.
    for (std::size_t t = 0; t < x_.hostTransfers.size(); ++t)
      hostTransfer(t, x_.hostTransfers[t]);
    for (std::size_t s = 0; s < x_.streams.size(); ++s) {
      const StreamInfo &info = x_.streams[s];
      const std::string field = "streams[" + std::to_string(s) + "] ('" + info.handle + "')";
      type(info.type, field + ".type");
      std::uint64_t bytes;
      if (!mulWithin(info.numElements, typeSize(info.type), kMaxHostBufferBytes, bytes))
        fail(field + ".numElements",
             std::to_string(info.numElements) + " makes a chunk larger than 2^47 bytes");
    }
    for (std::size_t b = 0; b < x_.remoteBuffers.size(); ++b) {
      const RemoteBufferInfo &info = x_.remoteBuffers[b];
      const std::string field = "remoteBuffers[" + std::to_string(b) + "] ('" + info.handle + "')";
      type(info.type, field + ".type");
      std::uint64_t row, total;
      if (!mulWithin(info.numElements, typeSize(info.type), kMaxHostBufferBytes, row) ||
          !mulWithin(row, info.repeats == 0 ? 1 : info.repeats, kMaxHostBufferBytes, total))
        fail(field, "numElements " + std::to_string(info.numElements) + " x repeats " +
                        std::to_string(info.repeats) + " makes a buffer larger than 2^47 bytes");
    }
    for (std::size_t i = 0; i < numSteps; ++i)
      step(i, x_.steps[i]);
    for (std::size_t c = 0; c < x_.computeSteps.size(); ++c)
      computeStep(c, x_.computeSteps[c]);
    for (std::size_t c = 0; c < x_.copies.size(); ++c)
      if (!planOk(x_.copies[c]))
        planFail(indexed("copies", c), x_.copies[c]);
    for (std::size_t s = 0; s < x_.switchTables.size(); ++s) {
      const SwitchTable &t = x_.switchTables[s];
      const std::string field = indexed("switchTables", s);
      scalar(t.control, field + ".control");
      if (t.values.size() != t.targets.size())
        fail(field, "has " + std::to_string(t.values.size()) + " case values but " +
                        std::to_string(t.targets.size()) + " targets");
      for (std::size_t k = 0; k < t.targets.size(); ++k)
        if (t.targets[k] >= numSteps)
          index(field + ".targets[" + std::to_string(k) + "]", t.targets[k], numSteps, "steps");
      if (t.defaultTarget >= numSteps)
        index(field + ".default", t.defaultTarget, numSteps, "steps");
    }
    for (std::size_t p = 0; p < x_.prints.size(); ++p)
      print(p, x_.prints[p]);
    for (std::size_t h = 0; h < x_.hostHandles.size(); ++h) {
      const HostHandleInfo &info = x_.hostHandles[h];
      const std::string field = "hostHandles[" + std::to_string(h) + "] ('" + info.name + "')";
      type(info.type, field + ".type");
      if (info.transfer >= x_.hostTransfers.size())
        index(field + ".transfer", info.transfer, x_.hostTransfers.size(), "hostTransfers");
      for (std::size_t k = 0; k < info.streamingRuns.size(); ++k) {
        const StreamingRun &run = info.streamingRuns[k];
        const std::string f = field + ".streamingRuns[" + std::to_string(k) + "]";
        if (run.layout >= x_.streamingLayout.size())
          index(f + ".layout", run.layout, x_.streamingLayout.size(), "streamingLayout");
        const std::uint64_t size = x_.streamingLayout[run.layout].bytes;
        if (run.bytes > size || run.offset > size - run.bytes ||
            run.hostOffset > x_.hostTransfers[info.transfer].bytes ||
            run.bytes > x_.hostTransfers[info.transfer].bytes - run.hostOffset)
          fail(f, "lies outside its variable or its handle");
      }
    }
    for (std::size_t v = 0; v < x_.streamingLayout.size(); ++v) {
      const StreamingVariable &sv = x_.streamingLayout[v];
      const std::string field = indexed("streamingLayout", v);
      if (sv.remoteBuffer >= x_.remoteBuffers.size())
        index(field + ".remoteBuffer", sv.remoteBuffer, x_.remoteBuffers.size(), "remoteBuffers");
      const RemoteBufferInfo &buffer = x_.remoteBuffers[sv.remoteBuffer];
      std::uint64_t size = 0;
      if (!mulWithin(buffer.numElements, typeSize(buffer.type), kMaxHostBufferBytes, size) ||
          size != sv.bytes)
        fail(field, "has " + std::to_string(sv.bytes) + " bytes but its remote buffer a row of " +
                        std::to_string(size));
      if (!sv.initial.empty() && sv.initial.size() != sv.bytes)
        fail(field + ".initial",
             "holds " + std::to_string(sv.initial.size()) + " bytes, not " + std::to_string(sv.bytes));
    }
    replication();
    for (std::size_t b = 0; b < x_.blobs.size(); ++b)
      if (!inside(x_.blobs[b].where, x_.blobs[b].bytes.size()))
        outside(indexed("blobs", b), x_.blobs[b].where, x_.blobs[b].bytes.size());
    for (std::size_t r = 0; r < x_.relocations.size(); ++r) {
      const Relocation &rel = x_.relocations[r];
      if (!inside(rel.where, 8))
        outside(indexed("relocations", r) + ".where", rel.where, 8);
      if (!inside(rel.target, 0))
        outside(indexed("relocations", r) + ".target", rel.target, 0);
    }
    for (std::size_t t = 0; t < x_.vertexTypes.size(); ++t)
      if (x_.vertexTypes[t].library >= x_.codeletLibraries.size())
        index("vertexTypes[" + std::to_string(t) + "] ('" + x_.vertexTypes[t].name + "').library",
              x_.vertexTypes[t].library, x_.codeletLibraries.size(), "codeletLibraries");
    std::vector<bool> hasData(x_.codeletLibraries.size(), false);
    for (std::size_t d = 0; d < x_.codeletData.size(); ++d) {
      const CodeletDataImage &img = x_.codeletData[d];
      const std::string field = indexed("codeletData", d);
      if (img.library >= x_.codeletLibraries.size())
        index(field + ".library", img.library, x_.codeletLibraries.size(), "codeletLibraries");
      if (hasData[img.library])
        fail(field + ".library", "names a library that another codeletData entry also names");
      hasData[img.library] = true;
      if (img.bytes == 0)
        fail(field + ".bytes", "is 0");
      for (std::size_t k = 0; k < img.regions.size(); ++k) {
        if (!inside(img.regions[k], img.bytes))
          outside(field + ".regions[" + std::to_string(k) + "]", img.regions[k], img.bytes);
        if (k > 0 && img.regions[k].tile <= img.regions[k - 1].tile)
          fail(field + ".regions", "are not in ascending tile order");
      }
    }
    if (!x_.tileBytesUsed.empty() && x_.tileBytesUsed.size() != numTiles_)
      fail("tileBytesUsed", "has " + std::to_string(x_.tileBytesUsed.size()) + " entries for " +
                                std::to_string(numTiles_) + " tiles");
  }

private:
  /// The replication tables (docs/replication.md): index constants of 4 bytes, and collectives
  /// whose sizes agree with their kind and group. Whether cross-replica groups divide the
  /// replicas depends on the launch; the engine checks it against its transport.
  void replication() const {
    if (x_.replicationFactor == 0)
      fail("replicationFactor", "is 0");
    const std::size_t transfers = x_.hostTransfers.size();
    if (x_.hwSeedsTransfer != ~0u) { // the random builtins' states: 16 bytes per tile and worker
      if (x_.hwSeedsTransfer >= transfers)
        index("hwSeedsTransfer", x_.hwSeedsTransfer, transfers, "hostTransfers");
      if (x_.hostTransfers[x_.hwSeedsTransfer].bytes !=
          16ull * x_.target.numTiles() * std::max(1u, x_.target.numWorkerContexts))
        fail("hwSeedsTransfer", "names a transfer that is not 16 bytes per tile and worker context");
    }
    for (std::size_t i = 0; i < x_.replicaIndexTransfers.size(); ++i) {
      const std::uint32_t t = x_.replicaIndexTransfers[i];
      if (t >= transfers)
        index(indexed("replicaIndexTransfers", i), t, transfers, "hostTransfers");
      if (x_.hostTransfers[t].bytes != 4)
        fail(indexed("replicaIndexTransfers", i), "names a transfer that is not 4 bytes");
    }
    for (std::size_t i = 0; i < x_.collectives.size(); ++i) {
      const CollectiveInfo &c = x_.collectives[i];
      const std::string field = indexed("collectives", i) + " ('" + c.name + "')";
      if (c.src >= transfers)
        index(field + ".src", c.src, transfers, "hostTransfers");
      if (c.dst >= transfers)
        index(field + ".dst", c.dst, transfers, "hostTransfers");
      if (c.kind > 7 || c.op > 8 || c.group > 2)
        fail(field, "has an unknown kind, operator or group");
      type(c.type, field + ".type");
      const bool within = c.kind >= 5; // between the IPUs of one replica: the groups are its IPUs
      if (c.groupSize == 0 || (within && c.groupSize != x_.target.numIPUs))
        fail(field + ".groupSize",
             std::to_string(c.groupSize) + " does not fit the " + (within ? "IPUs per replica" : "replicas"));
      const std::uint64_t in = x_.hostTransfers[c.src].bytes, out = x_.hostTransfers[c.dst].bytes;
      const std::uint64_t elem = typeSize(c.type), g = c.groupSize;
      if (elem == 0 || in % elem != 0 || out % elem != 0)
        fail(field, "sizes are not whole elements");
      std::uint64_t n = in / elem;
      if (within) { // sizes per row
        if (n % g != 0 || out % (g * elem) != 0)
          fail(field, "rows do not divide evenly");
        n /= g;
      }
      const std::uint64_t rowIn = within ? in / g : in, rowOut = within ? out / g : out;
      bool ok = false;
      switch (within ? c.kind - 5 : c.kind) { // a within kind checks like its cross-replica kind
      case 0:                                 // AllReduce
      case 4:                                 // Broadcast
        ok = rowOut == rowIn && (c.kind != 4 || c.root < g);
        break;
      case 1: // ReduceScatter
        ok = rowOut / elem == (n + g - 1) / g;
        break;
      case 2: // AllGather
        ok = rowIn <= (std::uint64_t(1) << 62) / g && rowOut == rowIn * g;
        break;
      case 3: // AllToAll
        ok = rowOut == rowIn && n % g == 0;
        break;
      default:
        break;
      }
      if (!ok)
        fail(field, "input and output sizes do not match the collective");
    }
  }

  [[noreturn]] void fail(const std::string &field, const std::string &problem) const {
    throw poplar::graph_object_load_error(what_ + " is corrupt: " + field + " " + problem);
  }
  [[noreturn]] void index(const std::string &field, std::uint64_t i, std::uint64_t size,
                          const char *table) const {
    fail(field, std::to_string(i) + " is out of range (" + table + " has " + std::to_string(size) + ")");
  }
  [[noreturn]] void outside(const std::string &field, TileAddr where, std::uint64_t bytes) const {
    fail(field, "(tile " + std::to_string(where.tile) + ", address " + std::to_string(where.addr) + ", " +
                    std::to_string(bytes) + " bytes) lies outside tile memory (" + std::to_string(numTiles_) +
                    " tiles of " + std::to_string(bytesPerTile_) + " bytes)");
  }

  bool inside(TileAddr where, std::uint64_t bytes) const {
    return where.tile < numTiles_ && bytes <= bytesPerTile_ && where.addr <= bytesPerTile_ - bytes;
  }
  static std::uint64_t typeSize(poplar::Type::Id id) { return poplar::Type(id).size(); }
  void type(poplar::Type::Id id, const std::string &field) const {
    if (!isValidTypeId(static_cast<std::uint64_t>(id)))
      fail(field, std::to_string(static_cast<unsigned>(id)) + " is not a type id");
  }
  void scalar(const ScalarRef &s, const std::string &field, std::uint64_t elements = 1) const {
    type(s.type, field + ".type");
    std::uint64_t bytes = 0;
    if (!mulWithin(elements, typeSize(s.type), kMaxDeviceBytes, bytes) || !inside(s.where, bytes))
      outside(field, s.where, bytes);
  }

  void target() {
    const ir::TargetData &t = x_.target;
    const auto type = static_cast<int>(t.type);
    if (type < static_cast<int>(poplar::TargetType::IPU) || type > static_cast<int>(poplar::TargetType::CPU))
      fail("target.type", std::to_string(type) + " is not a target type");
    std::uint64_t tiles;
    if (t.numIPUs == 0 || t.tilesPerIPU == 0 || !mulWithin(t.numIPUs, t.tilesPerIPU, kMaxTiles, tiles))
      fail("target", "has " + std::to_string(t.numIPUs) + " IPUs of " + std::to_string(t.tilesPerIPU) +
                         " tiles (from 1 to 2^20 tiles are allowed)");
    numTiles_ = tiles;
    if (t.bytesPerTile == 0 || t.bytesPerTile > kMaxBytesPerTile)
      fail("target.bytesPerTile", std::to_string(t.bytesPerTile) + " is not from 1 to 2^32");
    std::uint64_t device;
    if (!mulWithin(numTiles_, t.bytesPerTile, kMaxDeviceBytes, device))
      fail("target", "describes more than 2^40 bytes of tile memory");
    bytesPerTile_ = t.bytesPerTile;
    if (t.numWorkerContexts > kMaxWorkerContexts)
      fail("target.numWorkerContexts",
           std::to_string(t.numWorkerContexts) + " is more than " + std::to_string(kMaxWorkerContexts));
    // The cost model's rates (docs/cost-model.md): a zero, negative or infinite one would price
    // every step at nothing or forever.
    const struct {
      const char *name;
      double value;
    } rates[] = {{"target.tileClockFrequency", t.tileClockFrequency},
                 {"target.hostLinkBandwidth", t.hostLinkBandwidth},
                 {"target.ipuLinkBandwidth", t.ipuLinkBandwidth},
                 {"target.streamingMemoryBandwidth", t.streamingMemoryBandwidth},
                 {"target.exchangeBytesPerCycle", double(t.exchangeBytesPerCycle)},
                 {"target.memcpyBytesPerCycle", double(t.memcpyBytesPerCycle)},
                 {"target.ipuLinksPerRing", double(t.ipuLinksPerRing)}};
    for (const auto &r : rates)
      if (!(std::isfinite(r.value) && r.value > 0))
        fail(r.name, std::to_string(r.value) + " is not a positive, finite number");
  }

  void step(std::size_t i, const Step &s) const {
    const std::size_t numSteps = x_.steps.size();
    auto field = [&](const char *name) { return indexed("steps", i) + "." + name; };
    auto stepIndex = [&](std::uint32_t v, const char *name) {
      if (v >= numSteps)
        index(field(name), v, numSteps, "steps");
    };
    auto tableIndex = [&](std::uint32_t v, std::size_t size, const char *name, const char *table) {
      if (v >= size)
        index(field(name), v, size, table);
    };
    switch (s.kind) {
    case StepKind::Execute:
      tableIndex(s.a, x_.computeSteps.size(), "a", "computeSteps");
      if (s.scalar.type != poplar::Type::Id::Invalid)
        scalar(s.scalar, field("scalar"));
      break;
    case StepKind::Copy:
      tableIndex(s.a, x_.copies.size(), "a", "copies");
      break;
    case StepKind::StreamToDevice:
    case StepKind::DeviceToStream: {
      tableIndex(s.a, x_.streams.size(), "a", "streams");
      tableIndex(s.b, x_.hostTransfers.size(), "b", "hostTransfers");
      const StreamInfo &stream = x_.streams[s.a];
      type(stream.type, "streams[" + std::to_string(s.a) + "].type");
      std::uint64_t chunk = 0;
      if (!mulWithin(stream.numElements, typeSize(stream.type), kMaxHostBufferBytes, chunk) ||
          x_.hostTransfers[s.b].bytes > chunk)
        fail(indexed("steps", i), "copies " + std::to_string(x_.hostTransfers[s.b].bytes) +
                                      " bytes, more than a chunk of stream '" + stream.handle + "'");
      break;
    }
    case StepKind::RemoteToDevice:
    case StepKind::DeviceToRemote: {
      tableIndex(s.a, x_.remoteBuffers.size(), "a", "remoteBuffers");
      tableIndex(s.b, x_.hostTransfers.size(), "b", "hostTransfers");
      if (s.scalar.type != poplar::Type::Id::Invalid) {
        // One offset element per row the transfer touches.
        const RemoteBufferInfo &info = x_.remoteBuffers[s.a];
        type(info.type, "remoteBuffers[" + std::to_string(s.a) + "].type");
        std::uint64_t rowBytes = 0;
        if (!mulWithin(info.numElements, typeSize(info.type), kMaxHostBufferBytes, rowBytes))
          fail("remoteBuffers[" + std::to_string(s.a) + "].numElements", "is too large");
        const std::uint64_t bytes = x_.hostTransfers[s.b].bytes;
        const std::uint64_t rows = rowBytes == 0 ? 0 : bytes / rowBytes + (bytes % rowBytes != 0);
        scalar(s.scalar, field("scalar"), rows);
      }
      break;
    }
    case StepKind::SetCounter:
    case StepKind::LoopTest:
      tableIndex(s.a, x_.numCounters, "a", "numCounters");
      stepIndex(s.target, "target");
      break;
    case StepKind::JumpIfZero:
    case StepKind::JumpIfNonZero:
      scalar(s.scalar, field("scalar"));
      stepIndex(s.target, "target");
      break;
    case StepKind::Jump:
    case StepKind::Call:
      stepIndex(s.target, "target");
      break;
    case StepKind::SwitchJump:
      tableIndex(s.a, x_.switchTables.size(), "a", "switchTables");
      break;
    case StepKind::Print:
      tableIndex(s.a, x_.prints.size(), "a", "prints");
      break;
    case StepKind::AbortIf:
      scalar(s.scalar, field("scalar"));
      break;
    case StepKind::BlockBegin:
      tableIndex(s.a, x_.blockNames.size(), "a", "blockNames");
      break;
    case StepKind::Collective:
      tableIndex(s.a, x_.collectives.size(), "a", "collectives");
      break;
    case StepKind::Return:
    case StepKind::Abort:
    case StepKind::Sync:
    case StepKind::WriteUndef:
    case StepKind::BlockEnd:
    case StepKind::End:
      break;
    default:
      fail(field("kind"), std::to_string(static_cast<int>(s.kind)) + " is not a step kind");
    }
  }

  /// A CSR tile table: `tiles` ascending and on the device, `begin` one longer,
  /// from 0 to `count`, ascending. An empty table may also be `tiles = {}, begin = {}`.
  bool tableOk(const std::vector<std::uint32_t> &tiles, const std::vector<std::uint32_t> &begin,
               std::size_t count) const {
    if (tiles.empty() && count == 0 && begin.size() <= 1)
      return begin.empty() || begin[0] == 0;
    if (begin.size() != tiles.size() + 1 || begin.front() != 0 || begin.back() != count)
      return false;
    for (std::size_t k = 0; k < tiles.size(); ++k)
      if (tiles[k] >= numTiles_ || (k != 0 && tiles[k - 1] >= tiles[k]) || begin[k] > begin[k + 1])
        return false;
    return true;
  }

  bool planOk(const CopyPlan &p) const {
    if (!tableOk(p.tiles, p.tileBegin, p.runs.size()))
      return false;
    for (std::size_t k = 0; k < p.tiles.size(); ++k)
      for (std::uint32_t r = p.tileBegin[k]; r < p.tileBegin[k + 1]; ++r) {
        const CopyRun &run = p.runs[r];
        if (run.dst.tile != p.tiles[k] || !inside(run.src, run.bytes) || !inside(run.dst, run.bytes))
          return false;
      }
    return true;
  }
  /// Names the first fault of a plan that planOk refused.
  [[noreturn]] void planFail(const std::string &field, const CopyPlan &p) const {
    if (!tableOk(p.tiles, p.tileBegin, p.runs.size()))
      fail(field, "has a malformed tile table (" + std::to_string(p.tiles.size()) + " tiles, " +
                      std::to_string(p.tileBegin.size()) + " bounds, " + std::to_string(p.runs.size()) +
                      " runs; tiles must be ascending and on the device, bounds ascending from 0 to the "
                      "number of runs)");
    for (std::size_t k = 0; k < p.tiles.size(); ++k)
      for (std::uint32_t r = p.tileBegin[k]; r < p.tileBegin[k + 1]; ++r) {
        const CopyRun &run = p.runs[r];
        const std::string f = field + ".runs[" + std::to_string(r) + "]";
        if (run.dst.tile != p.tiles[k])
          fail(f, "is listed under tile " + std::to_string(p.tiles[k]) + " but writes tile " +
                      std::to_string(run.dst.tile));
        if (!inside(run.src, run.bytes))
          outside(f + ".src", run.src, run.bytes);
        outside(f + ".dst", run.dst, run.bytes);
      }
    fail(field, "is malformed");
  }

  void computeStep(std::size_t c, const ComputeStep &cs) const {
    auto field = [&] { return "computeSteps[" + std::to_string(c) + "] ('" + cs.name + "')"; };
    if (!tableOk(cs.tiles, cs.tileBegin, cs.vertices.size()))
      fail(field(), "has a malformed tile table (" + std::to_string(cs.tiles.size()) + " tiles, " +
                        std::to_string(cs.tileBegin.size()) + " bounds, " +
                        std::to_string(cs.vertices.size()) + " vertices)");
    const std::size_t numTypes = x_.vertexTypes.size();
    for (std::size_t v = 0; v < cs.vertices.size(); ++v) {
      const VertexInstance &vi = cs.vertices[v];
      if (vi.type >= numTypes)
        index(field() + ".vertices[" + std::to_string(v) + "].type", vi.type, numTypes, "vertexTypes");
      if (vi.state >= bytesPerTile_)
        fail(field() + ".vertices[" + std::to_string(v) + "].state",
             std::to_string(vi.state) + " lies outside tile memory");
    }
    if (!planOk(cs.exchangeIn))
      planFail(field() + ".exchangeIn", cs.exchangeIn);
    if (!planOk(cs.exchangeOut))
      planFail(field() + ".exchangeOut", cs.exchangeOut);
    inPlace(field() + ".inPlace", cs.inPlace);
  }

  /// Reading in place: a copy plan, staging runs into a staging area no larger than the
  /// device's memory, and pointers in tile memory bound to tile memory or the staging area.
  void inPlace(const std::string &field, const InPlaceReads &ip) const {
    if (ip.empty() && (!ip.staging.empty() || ip.stagingBytes != 0 || !ip.exchangeIn.runs.empty()))
      fail(field, "has staging or runs but no bindings");
    if (!planOk(ip.exchangeIn))
      planFail(field + ".exchangeIn", ip.exchangeIn);
    if (ip.stagingBytes > std::uint64_t(numTiles_) * bytesPerTile_)
      fail(field + ".stagingBytes", std::to_string(ip.stagingBytes) + " is more than the device's memory");
    auto inStaging = [&](TileAddr a, std::uint64_t bytes) {
      return a.tile == kStagingTile && bytes <= ip.stagingBytes && a.addr <= ip.stagingBytes - bytes;
    };
    for (std::size_t r = 0; r < ip.staging.size(); ++r) {
      const CopyRun &run = ip.staging[r];
      const std::string f = field + ".staging[" + std::to_string(r) + "]";
      if (!inside(run.src, run.bytes))
        outside(f + ".src", run.src, run.bytes);
      if (!inStaging(run.dst, run.bytes))
        fail(f + ".dst", "(address " + std::to_string(run.dst.addr) + ", " + std::to_string(run.bytes) +
                             " bytes) lies outside the staging area of " + std::to_string(ip.stagingBytes) +
                             " bytes");
    }
    for (std::size_t b = 0; b < ip.bindings.size(); ++b) {
      const InPlaceBinding &bind = ip.bindings[b];
      const std::string f = field + ".bindings[" + std::to_string(b) + "]";
      if (!inside(bind.where, 8))
        outside(f + ".where", bind.where, 8);
      if (!inside(bind.target, 0) && !inStaging(bind.target, 0))
        outside(f + ".target", bind.target, 0);
    }
    // Scratch windows: a tile of the plan, its leading runs inside the window, bindings in
    // order and pointing into the window on that tile.
    for (std::size_t s = 0; s < ip.scratch.size(); ++s) {
      const InPlaceScratchTile &t = ip.scratch[s];
      const std::string f = field + ".scratch[" + std::to_string(s) + "]";
      if (t.planTile >= ip.exchangeIn.tiles.size())
        index(f + ".planTile", t.planTile, ip.exchangeIn.tiles.size(), "the step's exchange-in tiles");
      if (s > 0 && t.planTile <= ip.scratch[s - 1].planTile)
        fail(f + ".planTile", "does not ascend");
      const std::uint32_t tile = ip.exchangeIn.tiles[t.planTile];
      const std::uint32_t begin = ip.exchangeIn.tileBegin[t.planTile];
      if (t.runs == 0 || t.runs > ip.exchangeIn.tileBegin[t.planTile + 1] - begin)
        fail(f + ".runs", std::to_string(t.runs) + " is not a count of the tile's runs");
      if (!inside({tile, t.lo}, t.bytes))
        outside(f, {tile, t.lo}, t.bytes);
      for (std::uint32_t r = begin; r < begin + t.runs; ++r) {
        const CopyRun &run = ip.exchangeIn.runs[r];
        if (run.dst.addr < t.lo || run.bytes > t.bytes || run.dst.addr - t.lo > t.bytes - run.bytes)
          fail(f + ".runs", "run " + std::to_string(r) + " lands outside the window");
      }
      const std::size_t end =
          s + 1 < ip.scratch.size() ? ip.scratch[s + 1].bindBegin : ip.scratchBindings.size();
      if (t.bindBegin > end || end > ip.scratchBindings.size())
        fail(f + ".bindBegin", std::to_string(t.bindBegin) + " is out of order or range");
      for (std::size_t b = t.bindBegin; b < end; ++b) {
        const InPlaceBinding &bind = ip.scratchBindings[b];
        const std::string fb = field + ".scratchBindings[" + std::to_string(b) + "]";
        if (!inside(bind.where, 8))
          outside(fb + ".where", bind.where, 8);
        if (bind.where.tile != tile)
          fail(fb + ".where", "is not on the window's tile " + std::to_string(tile));
        if (bind.target.tile != tile || bind.target.addr < t.lo || bind.target.addr - t.lo >= t.bytes)
          fail(fb + ".target", "lies outside its scratch window");
      }
    }
    if (!ip.scratch.empty() && ip.scratch.front().bindBegin != 0)
      fail(field + ".scratch[0].bindBegin", "is not 0");
    if (ip.scratch.empty() && !ip.scratchBindings.empty())
      fail(field + ".scratchBindings", "has bindings but no scratch windows");
  }

  /// Runs place consecutive host bytes, together exactly `bytes`, on the device.
  void hostTransfer(std::size_t t, const HostTransfer &h) const {
    std::uint64_t next = 0;
    for (std::size_t r = 0; r < h.runs.size(); ++r) {
      const HostRun &run = h.runs[r];
      const std::string f = "hostTransfers[" + std::to_string(t) + "].runs[" + std::to_string(r) + "]";
      if (run.hostOffset != next || run.bytes > h.bytes - next)
        fail(f, "(host bytes " + std::to_string(run.hostOffset) + " + " + std::to_string(run.bytes) +
                    ") does not continue the transfer at byte " + std::to_string(next) + " of " +
                    std::to_string(h.bytes));
      next += run.bytes;
      if (!inside(run.device, run.bytes))
        outside(f + ".device", run.device, run.bytes);
    }
    if (next != h.bytes)
      fail(indexed("hostTransfers", t),
           "runs cover " + std::to_string(next) + " of its " + std::to_string(h.bytes) + " bytes");
  }

  void print(std::size_t p, const PrintSpec &spec) const {
    const std::string field = indexed("prints", p);
    type(spec.type, field + ".type");
    if (spec.transfer >= x_.hostTransfers.size())
      index(field + ".transfer", spec.transfer, x_.hostTransfers.size(), "hostTransfers");
    // The printer recurses once per dimension and visits every prefix of the
    // shape, so the rank is bounded, and so are the prefix products of a shape
    // with a zero dimension (a {2^40, 0} tensor has no elements but 2^40 rows).
    if (spec.shape.size() > kMaxPrintRank)
      fail(field + ".shape", "has " + std::to_string(spec.shape.size()) + " dimensions (at most " +
                                 std::to_string(kMaxPrintRank) + ")");
    std::uint64_t elements = 1;
    for (std::uint64_t d : spec.shape)
      if (!mulWithin(elements, d, kMaxHostBufferBytes, elements))
        fail(field + ".shape", "has more than 2^47 elements");
    std::uint64_t prefix = 1;
    for (std::uint64_t d : spec.shape) {
      if (d == 0)
        break;
      if (!mulWithin(prefix, d, std::max<std::uint64_t>(elements, kMaxEmptyPrintRows), prefix))
        fail(field + ".shape", "has more rows than elements");
    }
    std::uint64_t bytes;
    if (!mulWithin(elements, typeSize(spec.type), kMaxHostBufferBytes, bytes) ||
        bytes != x_.hostTransfers[spec.transfer].bytes)
      fail(field, "'" + spec.title + "': its shape and type do not match the size of its transfer");
  }

  const ExecutableData &x_;
  const std::string &what_;
  std::uint64_t numTiles_ = 0;
  std::uint64_t bytesPerTile_ = 0;
};

} // namespace

void validateStructure(const ExecutableData &x, const std::string &what) {
  Checker(x, what).all();
}

} // namespace aspen::exe
