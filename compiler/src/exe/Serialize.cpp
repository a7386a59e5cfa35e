// Copyright (c) Aspen contributors.
#include "exe/Serialize.hpp"

#include "exe/BuildInfo.hpp"
#include "exe/Hash.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstring>
#include <istream>
#include <ostream>

static_assert(std::endian::native == std::endian::little, "the executable format is little-endian");

namespace aspen::exe {
namespace {

using nlohmann::json;

constexpr char kMagic[8] = {'A', 'S', 'P', 'E', 'N', 'E', 'X', 'E'};
enum SectionTag : std::uint32_t { kIdent = 1, kMeta = 2, kData = 3, kCode = 4, kProfile = 5 };
constexpr std::uint64_t kChecksumSeed = 0x4173706e45786531ull;

[[noreturn]] void fail(const std::string &what, const std::string &problem) {
  throw poplar::graph_object_load_error("Executable::deserialize: " + what + " " + problem);
}

// ---- raw arrays ---------------------------------------------------------------------

class DataWriter {
public:
  std::vector<std::uint8_t> bytes;

  /// Appends `count` records of `size` bytes written by `put(i, ptr)`; returns [offset, count].
  template <class F> json array(std::size_t count, std::size_t size, F &&put) {
    bytes.resize((bytes.size() + 7) / 8 * 8, 0);
    const std::size_t at = bytes.size();
    bytes.resize(at + count * size, 0);
    std::uint8_t *p = bytes.data() + at;
    for (std::size_t i = 0; i < count; ++i, p += size)
      put(i, p);
    return json::array({at, count});
  }
  /// Appends raw bytes; returns their offset.
  std::uint64_t raw(const std::uint8_t *data, std::size_t n) {
    bytes.resize((bytes.size() + 7) / 8 * 8, 0);
    const std::size_t at = bytes.size();
    bytes.insert(bytes.end(), data, data + n);
    return at;
  }
  json u32s(const std::vector<std::uint32_t> &v) {
    return array(v.size(), 4, [&](std::size_t i, std::uint8_t *p) { std::memcpy(p, &v[i], 4); });
  }
  json u64s(const std::vector<std::uint64_t> &v) {
    return array(v.size(), 8, [&](std::size_t i, std::uint8_t *p) { std::memcpy(p, &v[i], 8); });
  }
};

inline void put32(std::uint8_t *p, std::uint32_t v) {
  std::memcpy(p, &v, 4);
}
inline void put64(std::uint8_t *p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}
inline std::uint32_t get32(const std::uint8_t *p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t get64(const std::uint8_t *p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

class DataReader {
public:
  DataReader(const std::uint8_t *data, std::size_t size, const std::string &what)
      : data_(data), size_(size), what_(what) {}

  template <class F> void array(const json &ref, std::size_t size, F &&get) const {
    if (!ref.is_array() || ref.size() != 2)
      fail(what_, "is corrupt: a malformed array reference");
    const std::uint64_t at = ref[0].get<std::uint64_t>(), count = ref[1].get<std::uint64_t>();
    if (at > size_ || count > (size_ - at) / size)
      fail(what_, "is corrupt: an array lies outside its section");
    const std::uint8_t *p = data_ + at;
    for (std::uint64_t i = 0; i < count; ++i, p += size)
      get(static_cast<std::size_t>(i), p);
  }
  std::uint64_t count(const json &ref) const { return ref.at(1).get<std::uint64_t>(); }
  std::vector<std::uint32_t> u32s(const json &ref) const {
    std::vector<std::uint32_t> v(count(ref));
    array(ref, 4, [&](std::size_t i, const std::uint8_t *p) { v[i] = get32(p); });
    return v;
  }
  std::vector<std::uint64_t> u64s(const json &ref) const {
    std::vector<std::uint64_t> v(count(ref));
    array(ref, 8, [&](std::size_t i, const std::uint8_t *p) { v[i] = get64(p); });
    return v;
  }
  const std::uint8_t *bytes(std::uint64_t at, std::uint64_t n) const {
    if (at > size_ || n > size_ - at)
      fail(what_, "is corrupt: a blob lies outside its section");
    return data_ + at;
  }

private:
  const std::uint8_t *data_;
  std::size_t size_;
  const std::string &what_;
};

// ---- structured parts ---------------------------------------------------------------

json targetToJson(const ir::TargetData &t) {
  json constraints = json::array();
  for (const auto &c : t.globalExchangeConstraints) {
    json flows = json::array();
    for (auto [a, b] : c.flows)
      flows.push_back({a, b});
    constraints.push_back({{"bandwidth", c.bandwidth}, {"flows", flows}});
  }
  return {{"type", static_cast<int>(t.type)},
          {"arch", t.arch},
          {"numIPUs", t.numIPUs},
          {"tilesPerIPU", t.tilesPerIPU},
          {"tilesPerSuperTile", t.tilesPerSuperTile},
          {"bytesPerTile", t.bytesPerTile},
          {"numWorkerContexts", t.numWorkerContexts},
          {"dataPathWidth", t.dataPathWidth},
          {"exchangeBytesPerCycle", t.exchangeBytesPerCycle},
          {"memcpyBytesPerCycle", t.memcpyBytesPerCycle},
          {"instructionBytes", t.instructionBytes},
          {"tileClockFrequency", t.tileClockFrequency},
          {"minIPUSyncDelay", t.minIPUSyncDelay},
          {"relativeSyncDelayAuto", t.relativeSyncDelayAuto},
          {"globalSyncCycles", t.globalSyncCycles},
          {"syncCycles", t.syncCycles},
          {"exchangeOverheadCycles", t.exchangeOverheadCycles},
          {"interleavedMemoryElementIndex", t.interleavedMemoryElementIndex},
          {"memoryElementBytes", t.memoryElementBytes},
          {"atomicStoreGranularity", t.atomicStoreGranularity},
          {"rptCountMax", t.rptCountMax},
          {"numStrideBits", t.numStrideBits},
          {"fp16AccumConvUnits", t.fp16AccumConvUnits},
          {"fp32AccumConvUnits", t.fp32AccumConvUnits},
          {"supportsSuperTileSendReceive", t.supportsSuperTileSendReceive},
          {"compileIPUCode", t.compileIPUCode},
          {"accurateHalf", t.accurateHalf},
          {"perTileOverheadBytes", t.perTileOverheadBytes},
          {"ipuLinkBandwidth", t.ipuLinkBandwidth},
          {"ipuLinkLatencyCycles", t.ipuLinkLatencyCycles},
          {"ipuLinksPerRing", t.ipuLinksPerRing},
          {"globalExchangeConstraints", constraints}};
}

ir::TargetData targetFromJson(const json &j) {
  ir::TargetData t;
  t.type = static_cast<poplar::TargetType>(j.at("type").get<int>());
  j.at("arch").get_to(t.arch);
  j.at("numIPUs").get_to(t.numIPUs);
  j.at("tilesPerIPU").get_to(t.tilesPerIPU);
  j.at("tilesPerSuperTile").get_to(t.tilesPerSuperTile);
  j.at("bytesPerTile").get_to(t.bytesPerTile);
  j.at("numWorkerContexts").get_to(t.numWorkerContexts);
  j.at("dataPathWidth").get_to(t.dataPathWidth);
  j.at("exchangeBytesPerCycle").get_to(t.exchangeBytesPerCycle);
  j.at("memcpyBytesPerCycle").get_to(t.memcpyBytesPerCycle);
  j.at("instructionBytes").get_to(t.instructionBytes);
  j.at("tileClockFrequency").get_to(t.tileClockFrequency);
  j.at("minIPUSyncDelay").get_to(t.minIPUSyncDelay);
  j.at("relativeSyncDelayAuto").get_to(t.relativeSyncDelayAuto);
  j.at("globalSyncCycles").get_to(t.globalSyncCycles);
  j.at("syncCycles").get_to(t.syncCycles);
  j.at("exchangeOverheadCycles").get_to(t.exchangeOverheadCycles);
  j.at("interleavedMemoryElementIndex").get_to(t.interleavedMemoryElementIndex);
  j.at("memoryElementBytes").get_to(t.memoryElementBytes);
  j.at("atomicStoreGranularity").get_to(t.atomicStoreGranularity);
  j.at("rptCountMax").get_to(t.rptCountMax);
  j.at("numStrideBits").get_to(t.numStrideBits);
  j.at("fp16AccumConvUnits").get_to(t.fp16AccumConvUnits);
  j.at("fp32AccumConvUnits").get_to(t.fp32AccumConvUnits);
  j.at("supportsSuperTileSendReceive").get_to(t.supportsSuperTileSendReceive);
  j.at("compileIPUCode").get_to(t.compileIPUCode);
  j.at("accurateHalf").get_to(t.accurateHalf);
  j.at("perTileOverheadBytes").get_to(t.perTileOverheadBytes);
  t.ipuLinkBandwidth = j.value("ipuLinkBandwidth", t.ipuLinkBandwidth);
  t.ipuLinkLatencyCycles = j.value("ipuLinkLatencyCycles", t.ipuLinkLatencyCycles);
  t.ipuLinksPerRing = j.value("ipuLinksPerRing", t.ipuLinksPerRing);
  for (const json &c : j.at("globalExchangeConstraints")) {
    ir::GlobalExchangeConstraintData d;
    c.at("bandwidth").get_to(d.bandwidth);
    for (const json &f : c.at("flows"))
      d.flows.push_back({f.at(0).get<unsigned>(), f.at(1).get<unsigned>()});
    t.globalExchangeConstraints.push_back(std::move(d));
  }
  return t;
}

json scalarToJson(const ScalarRef &s) {
  return json::array({s.where.tile, s.where.addr, static_cast<int>(s.type)});
}
ScalarRef scalarFromJson(const json &j) {
  ScalarRef s;
  s.where = {j.at(0).get<std::uint32_t>(), j.at(1).get<std::uint32_t>()};
  s.type = static_cast<poplar::Type::Id>(j.at(2).get<int>());
  return s;
}

constexpr std::size_t kCopyRunBytes = 20, kVertexBytes = 20, kHostRunBytes = 20, kRelocationBytes = 16,
                      kBlobBytes = 24;

json planToJson(const CopyPlan &p, DataWriter &w) {
  return {{"runs", w.array(p.runs.size(), kCopyRunBytes,
                           [&](std::size_t i, std::uint8_t *q) {
                             const CopyRun &r = p.runs[i];
                             put32(q, r.src.tile);
                             put32(q + 4, r.src.addr);
                             put32(q + 8, r.dst.tile);
                             put32(q + 12, r.dst.addr);
                             put32(q + 16, r.bytes);
                           })},
          {"tiles", w.u32s(p.tiles)},
          {"tileBegin", w.u32s(p.tileBegin)},
          {"totalBytes", p.totalBytes},
          {"cycles", p.cycles}};
}

CopyPlan planFromJson(const json &j, const DataReader &r) {
  CopyPlan p;
  p.runs.resize(r.count(j.at("runs")));
  r.array(j.at("runs"), kCopyRunBytes, [&](std::size_t i, const std::uint8_t *q) {
    p.runs[i] = CopyRun{{get32(q), get32(q + 4)}, {get32(q + 8), get32(q + 12)}, get32(q + 16)};
  });
  p.tiles = r.u32s(j.at("tiles"));
  p.tileBegin = r.u32s(j.at("tileBegin"));
  j.at("totalBytes").get_to(p.totalBytes);
  j.at("cycles").get_to(p.cycles);
  return p;
}

json metaToJson(const ExecutableData &x, DataWriter &w) {
  json m;
  m["target"] = targetToJson(x.target);
  m["programEntry"] = x.programEntry;
  m["numCounters"] = x.numCounters;
  json steps = json::array();
  for (const Step &s : x.steps)
    steps.push_back(json::array({static_cast<int>(s.kind), s.a, s.b, s.target, s.value,
                                 scalarToJson(s.scalar), s.message, s.cycles}));
  m["steps"] = std::move(steps);
  json css = json::array();
  for (const ComputeStep &c : x.computeSteps) {
    css.push_back({{"name", c.name},
                   {"exchangeIn", planToJson(c.exchangeIn, w)},
                   {"tiles", w.u32s(c.tiles)},
                   {"tileBegin", w.u32s(c.tileBegin)},
                   {"vertices", w.array(c.vertices.size(), kVertexBytes,
                                        [&](std::size_t i, std::uint8_t *q) {
                                          const VertexInstance &v = c.vertices[i];
                                          put32(q, v.type);
                                          put32(q + 4, v.state);
                                          put32(q + 8, v.graphVertex);
                                          put64(q + 12, v.cycles);
                                        })},
                   {"exchangeOut", planToJson(c.exchangeOut, w)},
                   {"computeCycles", c.computeCycles},
                   {"totalVertexCycles", c.totalVertexCycles},
                   {"fuseExchangeIn", c.fuseExchangeIn}});
  }
  m["computeSteps"] = std::move(css);
  json copies = json::array();
  for (const CopyPlan &p : x.copies)
    copies.push_back(planToJson(p, w));
  m["copies"] = std::move(copies);
  json transfers = json::array();
  for (const HostTransfer &h : x.hostTransfers)
    transfers.push_back({{"bytes", h.bytes},
                         {"runs", w.array(h.runs.size(), kHostRunBytes, [&](std::size_t i, std::uint8_t *q) {
                            const HostRun &r = h.runs[i];
                            put64(q, r.hostOffset);
                            put32(q + 8, r.device.tile);
                            put32(q + 12, r.device.addr);
                            put32(q + 16, r.bytes);
                          })}});
  m["hostTransfers"] = std::move(transfers);
  json tables = json::array();
  for (const SwitchTable &t : x.switchTables)
    tables.push_back({{"control", scalarToJson(t.control)},
                      {"values", t.values},
                      {"targets", t.targets},
                      {"default", t.defaultTarget}});
  m["switchTables"] = std::move(tables);
  json prints = json::array();
  for (const PrintSpec &p : x.prints)
    prints.push_back({{"title", p.title},
                      {"type", static_cast<int>(p.type)},
                      {"shape", p.shape},
                      {"transfer", p.transfer}});
  m["prints"] = std::move(prints);
  m["blockNames"] = x.blockNames;
  json streams = json::array();
  for (const StreamInfo &s : x.streams)
    streams.push_back({{"handle", s.handle},
                       {"type", static_cast<int>(s.type)},
                       {"numElements", s.numElements},
                       {"hostToDevice", s.hostToDevice},
                       {"broadcast", s.broadcast}});
  m["streams"] = std::move(streams);
  json remotes = json::array();
  for (const RemoteBufferInfo &r : x.remoteBuffers)
    remotes.push_back({{"handle", r.handle},
                       {"type", static_cast<int>(r.type)},
                       {"numElements", r.numElements},
                       {"repeats", r.repeats}});
  m["remoteBuffers"] = std::move(remotes);
  json handles = json::array();
  for (const HostHandleInfo &h : x.hostHandles)
    handles.push_back({{"name", h.name},
                       {"isWrite", h.isWrite},
                       {"type", static_cast<int>(h.type)},
                       {"transfer", h.transfer}});
  m["hostHandles"] = std::move(handles);
  // Blob headers, then their bytes, both in the data section.
  std::vector<std::uint64_t> blobAt(x.blobs.size());
  for (std::size_t i = 0; i < x.blobs.size(); ++i) {
    const auto &b = x.blobs[i].bytes;
    blobAt[i] = w.raw(b.data(), b.size());
  }
  m["blobs"] = w.array(x.blobs.size(), kBlobBytes, [&](std::size_t i, std::uint8_t *q) {
    put32(q, x.blobs[i].where.tile);
    put32(q + 4, x.blobs[i].where.addr);
    put64(q + 8, blobAt[i]);
    put64(q + 16, x.blobs[i].bytes.size());
  });
  m["relocations"] = w.array(x.relocations.size(), kRelocationBytes, [&](std::size_t i, std::uint8_t *q) {
    const Relocation &r = x.relocations[i];
    put32(q, r.where.tile);
    put32(q + 4, r.where.addr);
    put32(q + 8, r.target.tile);
    put32(q + 12, r.target.addr);
  });
  json types = json::array();
  for (const VertexTypeEntry &t : x.vertexTypes)
    types.push_back({{"name", t.name}, {"library", t.library}, {"isMultiVertex", t.isMultiVertex}});
  m["vertexTypes"] = std::move(types);
  m["tileBytesUsed"] = w.u64s(x.tileBytesUsed);
  m["outOfMemory"] = x.outOfMemory;
  m["outOfMemoryMessage"] = x.outOfMemoryMessage;
  // Replication (docs/replication.md); absent in single-replica executables without collectives.
  if (x.replicationFactor != 1 || !x.collectives.empty() || !x.replicaIndexTransfers.empty()) {
    json cols = json::array();
    for (const CollectiveInfo &c : x.collectives)
      cols.push_back(json::array(
          {c.kind, c.op, c.group, c.groupSize, c.root, static_cast<int>(c.type), c.src, c.dst, c.name}));
    m["replication"] = {{"factor", x.replicationFactor},
                        {"collectives", std::move(cols)},
                        {"indexTransfers", x.replicaIndexTransfers}};
  }
  return m;
}

void metaFromJson(const json &m, const DataReader &r, ExecutableData &x) {
  x.target = targetFromJson(m.at("target"));
  m.at("programEntry").get_to(x.programEntry);
  m.at("numCounters").get_to(x.numCounters);
  for (const json &s : m.at("steps")) {
    Step st;
    st.kind = static_cast<StepKind>(s.at(0).get<int>());
    s.at(1).get_to(st.a);
    s.at(2).get_to(st.b);
    s.at(3).get_to(st.target);
    s.at(4).get_to(st.value);
    st.scalar = scalarFromJson(s.at(5));
    s.at(6).get_to(st.message);
    s.at(7).get_to(st.cycles);
    x.steps.push_back(std::move(st));
  }
  for (const json &c : m.at("computeSteps")) {
    ComputeStep cs;
    c.at("name").get_to(cs.name);
    cs.exchangeIn = planFromJson(c.at("exchangeIn"), r);
    cs.tiles = r.u32s(c.at("tiles"));
    cs.tileBegin = r.u32s(c.at("tileBegin"));
    cs.vertices.resize(r.count(c.at("vertices")));
    r.array(c.at("vertices"), kVertexBytes, [&](std::size_t i, const std::uint8_t *q) {
      VertexInstance &v = cs.vertices[i];
      v.type = get32(q);
      v.state = get32(q + 4);
      v.graphVertex = get32(q + 8);
      v.cycles = get64(q + 12);
    });
    cs.exchangeOut = planFromJson(c.at("exchangeOut"), r);
    c.at("computeCycles").get_to(cs.computeCycles);
    c.at("totalVertexCycles").get_to(cs.totalVertexCycles);
    c.at("fuseExchangeIn").get_to(cs.fuseExchangeIn);
    x.computeSteps.push_back(std::move(cs));
  }
  for (const json &p : m.at("copies"))
    x.copies.push_back(planFromJson(p, r));
  for (const json &h : m.at("hostTransfers")) {
    HostTransfer t;
    h.at("bytes").get_to(t.bytes);
    t.runs.resize(r.count(h.at("runs")));
    r.array(h.at("runs"), kHostRunBytes, [&](std::size_t i, const std::uint8_t *q) {
      t.runs[i] = HostRun{get64(q), {get32(q + 8), get32(q + 12)}, get32(q + 16)};
    });
    x.hostTransfers.push_back(std::move(t));
  }
  for (const json &t : m.at("switchTables")) {
    SwitchTable st;
    st.control = scalarFromJson(t.at("control"));
    t.at("values").get_to(st.values);
    t.at("targets").get_to(st.targets);
    t.at("default").get_to(st.defaultTarget);
    x.switchTables.push_back(std::move(st));
  }
  for (const json &p : m.at("prints")) {
    PrintSpec ps;
    p.at("title").get_to(ps.title);
    ps.type = static_cast<poplar::Type::Id>(p.at("type").get<int>());
    p.at("shape").get_to(ps.shape);
    p.at("transfer").get_to(ps.transfer);
    x.prints.push_back(std::move(ps));
  }
  m.at("blockNames").get_to(x.blockNames);
  for (const json &s : m.at("streams")) {
    StreamInfo si;
    s.at("handle").get_to(si.handle);
    si.type = static_cast<poplar::Type::Id>(s.at("type").get<int>());
    s.at("numElements").get_to(si.numElements);
    s.at("hostToDevice").get_to(si.hostToDevice);
    si.broadcast = s.value("broadcast", false);
    x.streams.push_back(std::move(si));
  }
  for (const json &s : m.at("remoteBuffers")) {
    RemoteBufferInfo ri;
    s.at("handle").get_to(ri.handle);
    ri.type = static_cast<poplar::Type::Id>(s.at("type").get<int>());
    s.at("numElements").get_to(ri.numElements);
    s.at("repeats").get_to(ri.repeats);
    x.remoteBuffers.push_back(std::move(ri));
  }
  for (const json &h : m.at("hostHandles")) {
    HostHandleInfo hi;
    h.at("name").get_to(hi.name);
    h.at("isWrite").get_to(hi.isWrite);
    hi.type = static_cast<poplar::Type::Id>(h.at("type").get<int>());
    h.at("transfer").get_to(hi.transfer);
    x.hostHandles.push_back(std::move(hi));
  }
  x.blobs.resize(r.count(m.at("blobs")));
  r.array(m.at("blobs"), kBlobBytes, [&](std::size_t i, const std::uint8_t *q) {
    MemoryBlob &b = x.blobs[i];
    b.where = {get32(q), get32(q + 4)};
    const std::uint64_t at = get64(q + 8), n = get64(q + 16);
    const std::uint8_t *p = r.bytes(at, n);
    b.bytes.assign(p, p + n);
  });
  x.relocations.resize(r.count(m.at("relocations")));
  r.array(m.at("relocations"), kRelocationBytes, [&](std::size_t i, const std::uint8_t *q) {
    x.relocations[i] = Relocation{{get32(q), get32(q + 4)}, {get32(q + 8), get32(q + 12)}};
  });
  for (const json &t : m.at("vertexTypes")) {
    VertexTypeEntry e;
    t.at("name").get_to(e.name);
    t.at("library").get_to(e.library);
    t.at("isMultiVertex").get_to(e.isMultiVertex);
    x.vertexTypes.push_back(std::move(e));
  }
  x.tileBytesUsed = r.u64s(m.at("tileBytesUsed"));
  m.at("outOfMemory").get_to(x.outOfMemory);
  m.at("outOfMemoryMessage").get_to(x.outOfMemoryMessage);
  if (auto rep = m.find("replication"); rep != m.end()) {
    rep->at("factor").get_to(x.replicationFactor);
    for (const json &c : rep->at("collectives")) {
      CollectiveInfo ci;
      c.at(0).get_to(ci.kind);
      c.at(1).get_to(ci.op);
      c.at(2).get_to(ci.group);
      c.at(3).get_to(ci.groupSize);
      c.at(4).get_to(ci.root);
      ci.type = static_cast<poplar::Type::Id>(c.at(5).get<int>());
      c.at(6).get_to(ci.src);
      c.at(7).get_to(ci.dst);
      c.at(8).get_to(ci.name);
      x.collectives.push_back(std::move(ci));
    }
    rep->at("indexTransfers").get_to(x.replicaIndexTransfers);
  }
}

void appendSection(std::vector<std::uint8_t> &out, std::uint32_t tag, const std::uint8_t *data,
                   std::size_t n) {
  std::uint8_t head[16] = {};
  put32(head, tag);
  put64(head + 8, n);
  out.insert(out.end(), head, head + 16);
  out.insert(out.end(), data, data + n);
  out.resize((out.size() + 7) / 8 * 8, 0);
}

} // namespace

std::string targetFingerprint(const ir::TargetData &target) {
  return targetToJson(target).dump();
}

std::vector<std::uint8_t> serializeToBytes(const ExecutableData &x) {
  DataWriter data;
  const json meta = metaToJson(x, data);
  json code = json::array();
  std::vector<std::uint8_t> codeBytes;
  for (const CodeletLibraryBlob &lib : x.codeletLibraries) {
    code.push_back(
        {{"contentHash", lib.contentHash}, {"offset", codeBytes.size()}, {"size", lib.bytes.size()}});
    codeBytes.insert(codeBytes.end(), lib.bytes.begin(), lib.bytes.end());
  }
  const json ident = {{"format", kFormatVersion},
                      {"package", packageVersion()},
                      {"buildId", compilerBuildId()},
                      {"codeletLibraries", code}};

  std::vector<std::uint8_t> out(kHeaderBytes, 0);
  const auto identBytes = json::to_cbor(ident);
  const auto metaBytes = json::to_cbor(meta);
  appendSection(out, kIdent, identBytes.data(), identBytes.size());
  appendSection(out, kMeta, metaBytes.data(), metaBytes.size());
  appendSection(out, kData, data.bytes.data(), data.bytes.size());
  appendSection(out, kCode, codeBytes.data(), codeBytes.size());
  appendSection(out, kProfile, reinterpret_cast<const std::uint8_t *>(x.profileJson.data()),
                x.profileJson.size());

  const std::uint64_t payload = out.size() - kHeaderBytes;
  std::memcpy(out.data(), kMagic, 8);
  put32(out.data() + 8, kFormatVersion);
  put32(out.data() + 12, static_cast<std::uint32_t>(kHeaderBytes));
  put64(out.data() + 16, payload);
  put64(out.data() + 24, hash64(out.data() + kHeaderBytes, payload, kChecksumSeed));
  const std::string &id = compilerBuildId();
  std::memcpy(out.data() + 32, id.data(), std::min<std::size_t>(16, id.size()));
  return out;
}

void serialize(const ExecutableData &exe, std::ostream &out) {
  const auto bytes = serializeToBytes(exe);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw poplar::poplar_error("Executable::serialize: writing the executable failed");
}

std::unique_ptr<ExecutableData> deserializeFromBytes(const std::uint8_t *p, std::size_t size,
                                                     bool checkPackageHash, const std::string &what) {
  if (size == 0)
    fail(what, "is empty: it is not an Aspen executable");
  if (std::memcmp(p, kMagic, std::min<std::size_t>(size, 8)) != 0)
    fail(what, "is not an Aspen executable (it does not start with \"ASPENEXE\")");
  if (size < kHeaderBytes)
    fail(what, "is truncated: " + std::to_string(size) + " bytes, shorter than the " +
                   std::to_string(kHeaderBytes) + "-byte header");
  const std::uint32_t version = get32(p + 8);
  if (version != kFormatVersion)
    fail(what, "was written by format version " + std::to_string(version) + ", this Aspen reads " +
                   std::to_string(kFormatVersion) + "; recompile the graph");
  const std::uint64_t payload = get64(p + 16);
  if (get32(p + 12) != kHeaderBytes)
    fail(what, "is corrupt: a malformed header");
  if (payload > size - kHeaderBytes)
    fail(what, "is truncated: " + std::to_string(size) + " bytes, expected " +
                   std::to_string(kHeaderBytes + payload));
  const std::uint8_t *body = p + kHeaderBytes;
  if (hash64(body, payload, kChecksumSeed) != get64(p + 24))
    fail(what, "is corrupt: checksum mismatch");

  // Sections, in their fixed order.
  const std::uint8_t *sections[6] = {};
  std::uint64_t lengths[6] = {};
  std::uint64_t at = 0;
  for (std::uint32_t expect : {kIdent, kMeta, kData, kCode, kProfile}) {
    if (payload - at < 16)
      fail(what, "is corrupt: a section is missing");
    const std::uint32_t tag = get32(body + at);
    const std::uint64_t n = get64(body + at + 8);
    if (tag != expect || n > payload - at - 16)
      fail(what, "is corrupt: a malformed section");
    sections[tag] = body + at + 16;
    lengths[tag] = n;
    at = (at + 16 + n + 7) / 8 * 8;
  }

  auto x = std::make_unique<ExecutableData>();
  try {
    const json ident = json::from_cbor(sections[kIdent], sections[kIdent] + lengths[kIdent]);
    const std::string package = ident.at("package").get<std::string>();
    if (checkPackageHash && package != packageVersion())
      fail(what, "was made by " + package + " and this is " + packageVersion() +
                     "; recompile the graph or load with checkPackageHash = false");
    const json meta = json::from_cbor(sections[kMeta], sections[kMeta] + lengths[kMeta]);
    const DataReader data(sections[kData], lengths[kData], what);
    metaFromJson(meta, data, *x);
    const DataReader code(sections[kCode], lengths[kCode], what);
    for (const json &lib : ident.at("codeletLibraries")) {
      CodeletLibraryBlob b;
      lib.at("contentHash").get_to(b.contentHash);
      const std::uint64_t off = lib.at("offset").get<std::uint64_t>(),
                          n = lib.at("size").get<std::uint64_t>();
      const std::uint8_t *q = code.bytes(off, n);
      b.bytes.assign(q, q + n);
      x->codeletLibraries.push_back(std::move(b));
    }
    x->profileJson.assign(reinterpret_cast<const char *>(sections[kProfile]), lengths[kProfile]);
  } catch (const json::exception &e) {
    fail(what, std::string("is corrupt: ") + e.what());
  }
  return x;
}

std::unique_ptr<ExecutableData> deserialize(std::istream &in, bool checkPackageHash,
                                            const std::string &what) {
  std::vector<std::uint8_t> bytes(kHeaderBytes);
  in.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(kHeaderBytes));
  std::size_t got = static_cast<std::size_t>(in.gcount());
  bytes.resize(got);
  if (got == kHeaderBytes && std::memcmp(bytes.data(), kMagic, 8) == 0 &&
      get32(bytes.data() + 8) == kFormatVersion) {
    const std::uint64_t payload = get64(bytes.data() + 16);
    // Read in chunks so that a corrupt size cannot make us reserve absurd memory up front.
    constexpr std::size_t kChunk = 64 << 20;
    std::uint64_t left = payload;
    while (left > 0 && in) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kChunk));
      const std::size_t before = bytes.size();
      bytes.resize(before + n);
      in.read(reinterpret_cast<char *>(bytes.data() + before), static_cast<std::streamsize>(n));
      const std::size_t read = static_cast<std::size_t>(in.gcount());
      bytes.resize(before + read);
      left -= read;
      if (read < n)
        break;
    }
  }
  return deserializeFromBytes(bytes.data(), bytes.size(), checkPackageHash, what);
}

} // namespace aspen::exe
