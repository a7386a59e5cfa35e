// Copyright (c) Aspen contributors.
#include "exe/Serialize.hpp"

#include "codelets/ContentHash.hpp"
#include "exe/BuildInfo.hpp"
#include "exe/Hash.hpp"
#include "exe/Validate.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <bit>
#include <cstring>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <type_traits>

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

  /// The records of an array reference `[offset, count]` of `size`-byte records,
  /// checked to lie inside the section before anything is allocated for them.
  struct Span {
    const std::uint8_t *at;
    std::size_t count;
  };
  Span span(const json &ref, std::size_t size) const {
    if (!ref.is_array() || ref.size() != 2 || !ref[0].is_number_unsigned() || !ref[1].is_number_unsigned())
      fail(what_, "is corrupt: " + field() + " is not an array reference [offset, count]");
    const std::uint64_t at = ref[0].get<std::uint64_t>(), count = ref[1].get<std::uint64_t>();
    if (at > size_ || count > (size_ - at) / size)
      fail(what_, "is corrupt: " + field() + " (" + std::to_string(count) + " records of " +
                      std::to_string(size) + " bytes at offset " + std::to_string(at) +
                      ") lies outside the data section (" + std::to_string(size_) + " bytes)");
    return {data_ + at, static_cast<std::size_t>(count)};
  }
  /// Resizes `out` to the records of `ref` and reads each with `get(record, bytes)`.
  template <class T, class F>
  void array(const json &ref, std::size_t size, std::vector<T> &out, F &&get) const {
    const Span s = span(ref, size);
    out.resize(s.count);
    const std::uint8_t *p = s.at;
    for (std::size_t i = 0; i < s.count; ++i, p += size)
      get(out[i], p);
  }
  std::vector<std::uint32_t> u32s(const json &ref) const {
    std::vector<std::uint32_t> v;
    array(ref, 4, v, [](std::uint32_t &x, const std::uint8_t *p) { x = get32(p); });
    return v;
  }
  std::vector<std::uint64_t> u64s(const json &ref) const {
    std::vector<std::uint64_t> v;
    array(ref, 8, v, [](std::uint64_t &x, const std::uint8_t *p) { x = get64(p); });
    return v;
  }
  const std::uint8_t *bytes(std::uint64_t at, std::uint64_t n) const {
    if (at > size_ || n > size_ - at)
      fail(what_, "is corrupt: " + field() + " (" + std::to_string(n) + " bytes at offset " +
                      std::to_string(at) + ") lies outside its section (" + std::to_string(size_) +
                      " bytes)");
    return data_ + at;
  }

  /// The field being read, for messages: `table[index].name`.
  void at(const char *table, std::size_t index = npos, const char *name = nullptr) const {
    table_ = table;
    index_ = index;
    name_ = name;
  }
  std::string field() const {
    std::string f = table_ ? table_ : "a field";
    if (index_ != npos)
      f += "[" + std::to_string(index_) + "]";
    if (name_)
      f += std::string(".") + name_;
    return f;
  }

private:
  static constexpr std::size_t npos = ~std::size_t(0);
  const std::uint8_t *data_;
  std::size_t size_;
  const std::string &what_;
  mutable const char *table_ = nullptr;
  mutable std::size_t index_ = npos;
  mutable const char *name_ = nullptr;
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
          {"exchangeSourceCycles", t.exchangeSourceCycles},
          {"interleavedMemoryElementIndex", t.interleavedMemoryElementIndex},
          {"memoryElementBytes", t.memoryElementBytes},
          {"atomicStoreGranularity", t.atomicStoreGranularity},
          {"rptCountMax", t.rptCountMax},
          {"numStrideBits", t.numStrideBits},
          {"fp16AccumConvUnits", t.fp16AccumConvUnits},
          {"fp32AccumConvUnits", t.fp32AccumConvUnits},
          {"fp32InFp32OutConvUnits", t.fp32InFp32OutConvUnits},
          {"fp32ConvUnitInputLoadElems", t.fp32ConvUnitInputLoadElems},
          {"fp16ConvUnitInputLoadElems", t.fp16ConvUnitInputLoadElems},
          {"fp8ConvUnitInputLoadElems", t.fp8ConvUnitInputLoadElems},
          {"fp16ConvUnitPipelineDepth", t.fp16ConvUnitPipelineDepth},
          {"fp32ConvUnitPipelineDepth", t.fp32ConvUnitPipelineDepth},
          {"supportsSuperTileSendReceive", t.supportsSuperTileSendReceive},
          {"compileIPUCode", t.compileIPUCode},
          {"accurateHalf", t.accurateHalf},
          {"perTileOverheadBytes", t.perTileOverheadBytes},
          {"ipuLinkBandwidth", t.ipuLinkBandwidth},
          {"ipuLinkLatencyCycles", t.ipuLinkLatencyCycles},
          {"ipuLinksPerRing", t.ipuLinksPerRing},
          {"hostLinkBandwidth", t.hostLinkBandwidth},
          {"hostLinkLatencyCycles", t.hostLinkLatencyCycles},
          {"streamingMemoryBytes", t.streamingMemoryBytes},
          {"streamingMemoryBandwidth", t.streamingMemoryBandwidth},
          {"streamingMemoryLatencyCycles", t.streamingMemoryLatencyCycles},
          {"globalExchangeConstraints", constraints}};
}

json streamingRunsToJson(const std::vector<StreamingRun> &runs) {
  json out = json::array();
  for (const StreamingRun &r : runs)
    out.push_back(
        {{"hostOffset", r.hostOffset}, {"layout", r.layout}, {"offset", r.offset}, {"bytes", r.bytes}});
  return out;
}

/// A field of the wrong kind or out of range; the reader adds which field.
struct FieldError {
  std::string problem;
};

/// The value of `j` as T, refusing what T cannot hold exactly (negative or
/// fractional numbers for unsigned fields, out-of-range values, wrong kinds):
/// nlohmann's own conversions would wrap, truncate or cast out of range.
template <class T> T num(const json &j) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean())
      throw FieldError{"is not a boolean"};
    return j.get<bool>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number())
      throw FieldError{"is not a number"};
    return j.get<T>();
  } else if constexpr (std::is_unsigned_v<T>) {
    if (!j.is_number_unsigned() || j.get<std::uint64_t>() > std::numeric_limits<T>::max())
      throw FieldError{"is not an unsigned " + std::to_string(sizeof(T) * 8) + "-bit integer"};
    return static_cast<T>(j.get<std::uint64_t>());
  } else {
    static_assert(std::is_signed_v<T> && std::is_integral_v<T>);
    if (!j.is_number_integer())
      throw FieldError{"is not an integer"};
    if (j.is_number_unsigned() ? j.get<std::uint64_t>() > std::uint64_t(std::numeric_limits<T>::max())
                               : (j.get<std::int64_t>() < std::numeric_limits<T>::min() ||
                                  j.get<std::int64_t>() > std::numeric_limits<T>::max()))
      throw FieldError{"is not a signed " + std::to_string(sizeof(T) * 8) + "-bit integer"};
    return static_cast<T>(j.get<std::int64_t>());
  }
}
template <class T> void read(const json &j, const char *key, T &out) {
  const auto it = j.find(key);
  if (!j.is_object() || it == j.end())
    throw FieldError{std::string("has no field '") + key + "'"};
  try {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!it->is_string())
        throw FieldError{"is not a string"};
      out = it->template get<std::string>();
    } else {
      out = num<T>(*it);
    }
  } catch (const FieldError &e) {
    throw FieldError{std::string("field '") + key + "' " + e.problem};
  }
}
template <class T> std::vector<T> numbers(const json &j) {
  if (!j.is_array())
    throw FieldError{"is not an array"};
  std::vector<T> v;
  v.reserve(j.size());
  for (const json &e : j)
    v.push_back(num<T>(e));
  return v;
}
template <class T> void readArray(const json &j, const char *key, std::vector<T> &out) {
  const auto it = j.find(key);
  if (!j.is_object() || it == j.end())
    throw FieldError{std::string("has no field '") + key + "'"};
  try {
    out = numbers<T>(*it);
  } catch (const FieldError &e) {
    throw FieldError{std::string("field '") + key + "' " + e.problem};
  }
}
const json &member(const json &j, const char *key) {
  const auto it = j.find(key);
  if (!j.is_object() || it == j.end())
    throw FieldError{std::string("has no field '") + key + "'"};
  return *it;
}
const json &arrayMember(const json &j, const char *key) {
  const json &a = member(j, key);
  if (!a.is_array())
    throw FieldError{std::string("field '") + key + "' is not an array"};
  return a;
}
/// A Type::Id (Invalid allowed: the structure check says where it is not).
poplar::Type::Id typeId(const json &j) {
  const auto id = num<std::uint8_t>(j);
  if (id > static_cast<std::uint8_t>(poplar::Type::Id::QuarterMetadata))
    throw FieldError{"type id " + std::to_string(id) + " is not a type"};
  return static_cast<poplar::Type::Id>(id);
}
poplar::Type::Id typeId(const json &j, const char *key) {
  try {
    return typeId(member(j, key));
  } catch (const FieldError &e) {
    throw FieldError{std::string("field '") + key + "' " + e.problem};
  }
}

/// The deepest nesting of arrays and maps in the CBOR at `[p, p + n)`, found
/// without recursion (nlohmann's CBOR reader recurses once per level, so a few
/// hundred thousand nested arrays would overflow the stack); stops early once
/// past `limit`. Malformed CBOR is left to the reader to refuse.
std::size_t cborDepth(const std::uint8_t *p, std::size_t n, std::size_t limit) {
  // Items still expected at each open level (~0: indefinite length, until a 0xff break).
  std::vector<std::uint64_t> open;
  std::size_t at = 0, deepest = 0;
  auto argument = [&](std::uint8_t info, std::uint64_t &value) {
    if (info < 24) {
      value = info;
      return true;
    }
    const std::size_t bytes = info == 24 ? 1 : info == 25 ? 2 : info == 26 ? 4 : info == 27 ? 8 : 0;
    if (bytes == 0 || n - at < bytes)
      return false;
    value = 0;
    for (std::size_t i = 0; i < bytes; ++i)
      value = value << 8 | p[at + i];
    at += bytes;
    return true;
  };
  while (at < n) {
    const std::uint8_t head = p[at++];
    bool item = true; // whether this byte completed an item of the enclosing level
    if (head == 0xff) {
      if (!open.empty() && open.back() == ~std::uint64_t(0))
        open.pop_back();
      else
        return deepest; // malformed: the reader says so
    } else {
      const std::uint8_t major = head >> 5, info = head & 31;
      std::uint64_t value = 0;
      if (info == 31) {
        if (major == 4 || major == 5) { // indefinite array or map
          open.push_back(~std::uint64_t(0));
          deepest = std::max(deepest, open.size());
          item = false;
        } else if (major == 2 || major == 3) { // indefinite string: chunks until a break
          open.push_back(~std::uint64_t(0));
          item = false;
        }
      } else if (!argument(info, value)) {
        return deepest;
      } else if (major == 2 || major == 3) {
        if (value > n - at)
          return deepest;
        at += value;
      } else if (major == 4 || major == 5) {
        const std::uint64_t items = major == 5 ? value * 2 : value;
        if (major == 5 && value > (~std::uint64_t(0)) / 4)
          return deepest;
        if (items != 0) {
          open.push_back(items);
          deepest = std::max(deepest, open.size());
          item = false;
        }
      } else if (major == 6) {
        item = false; // a tag applies to the next item
      }
    }
    if (deepest > limit)
      return deepest;
    // Close every level whose last item this was.
    while (item && !open.empty() && open.back() != ~std::uint64_t(0)) {
      if (--open.back() != 0)
        break;
      open.pop_back();
    }
  }
  return deepest;
}

/// Parses CBOR whose nesting is at most kMaxCborDepth.
json fromCbor(const std::uint8_t *p, std::size_t n) {
  constexpr std::size_t kMaxCborDepth = 64;
  if (cborDepth(p, n, kMaxCborDepth) > kMaxCborDepth)
    throw FieldError{"nests arrays or maps more than " + std::to_string(kMaxCborDepth) + " deep"};
  return json::from_cbor(p, p + n);
}

ir::TargetData targetFromJson(const json &j) {
  ir::TargetData t;
  int type = 0;
  read(j, "type", type);
  if (type < static_cast<int>(poplar::TargetType::IPU) || type > static_cast<int>(poplar::TargetType::CPU))
    throw FieldError{"field 'type' " + std::to_string(type) + " is not a target type"};
  t.type = static_cast<poplar::TargetType>(type);
  read(j, "arch", t.arch);
  read(j, "numIPUs", t.numIPUs);
  read(j, "tilesPerIPU", t.tilesPerIPU);
  read(j, "tilesPerSuperTile", t.tilesPerSuperTile);
  read(j, "bytesPerTile", t.bytesPerTile);
  read(j, "numWorkerContexts", t.numWorkerContexts);
  read(j, "dataPathWidth", t.dataPathWidth);
  read(j, "exchangeBytesPerCycle", t.exchangeBytesPerCycle);
  read(j, "memcpyBytesPerCycle", t.memcpyBytesPerCycle);
  read(j, "instructionBytes", t.instructionBytes);
  read(j, "tileClockFrequency", t.tileClockFrequency);
  read(j, "minIPUSyncDelay", t.minIPUSyncDelay);
  read(j, "relativeSyncDelayAuto", t.relativeSyncDelayAuto);
  read(j, "globalSyncCycles", t.globalSyncCycles);
  read(j, "syncCycles", t.syncCycles);
  read(j, "exchangeOverheadCycles", t.exchangeOverheadCycles);
  if (j.contains("exchangeSourceCycles"))
    read(j, "exchangeSourceCycles", t.exchangeSourceCycles);
  read(j, "interleavedMemoryElementIndex", t.interleavedMemoryElementIndex);
  read(j, "memoryElementBytes", t.memoryElementBytes);
  read(j, "atomicStoreGranularity", t.atomicStoreGranularity);
  read(j, "rptCountMax", t.rptCountMax);
  read(j, "numStrideBits", t.numStrideBits);
  read(j, "fp16AccumConvUnits", t.fp16AccumConvUnits);
  read(j, "fp32AccumConvUnits", t.fp32AccumConvUnits);
  // The conv units' other parameters (IPUModel's fields); absent in older files: the defaults, and
  // float-in units as many as half-in float-out ones, as those files meant.
  t.fp32InFp32OutConvUnits = t.fp32AccumConvUnits;
  if (j.contains("fp32InFp32OutConvUnits"))
    read(j, "fp32InFp32OutConvUnits", t.fp32InFp32OutConvUnits);
  for (auto [key, field] :
       {std::pair<const char *, unsigned *>{"fp32ConvUnitInputLoadElems", &t.fp32ConvUnitInputLoadElems},
        {"fp16ConvUnitInputLoadElems", &t.fp16ConvUnitInputLoadElems},
        {"fp8ConvUnitInputLoadElems", &t.fp8ConvUnitInputLoadElems},
        {"fp16ConvUnitPipelineDepth", &t.fp16ConvUnitPipelineDepth},
        {"fp32ConvUnitPipelineDepth", &t.fp32ConvUnitPipelineDepth}})
    if (j.contains(key))
      read(j, key, *field);
  read(j, "supportsSuperTileSendReceive", t.supportsSuperTileSendReceive);
  read(j, "compileIPUCode", t.compileIPUCode);
  read(j, "accurateHalf", t.accurateHalf);
  read(j, "perTileOverheadBytes", t.perTileOverheadBytes);
  // IPU-Link parameters (replication); absent in older files.
  for (const char *key : {"ipuLinkBandwidth", "ipuLinkLatencyCycles", "ipuLinksPerRing"})
    if (j.contains(key)) {
      if (std::string(key) == "ipuLinkBandwidth")
        read(j, key, t.ipuLinkBandwidth);
      else if (std::string(key) == "ipuLinkLatencyCycles")
        read(j, key, t.ipuLinkLatencyCycles);
      else
        read(j, key, t.ipuLinksPerRing);
    }
  // Host-link parameters; absent in older files (their defaults then).
  if (j.contains("hostLinkBandwidth"))
    read(j, "hostLinkBandwidth", t.hostLinkBandwidth);
  if (j.contains("hostLinkLatencyCycles"))
    read(j, "hostLinkLatencyCycles", t.hostLinkLatencyCycles);
  // Streaming Memory parameters; absent in older files (their defaults then).
  if (j.contains("streamingMemoryBytes"))
    read(j, "streamingMemoryBytes", t.streamingMemoryBytes);
  if (j.contains("streamingMemoryBandwidth"))
    read(j, "streamingMemoryBandwidth", t.streamingMemoryBandwidth);
  if (j.contains("streamingMemoryLatencyCycles"))
    read(j, "streamingMemoryLatencyCycles", t.streamingMemoryLatencyCycles);
  for (const json &c : arrayMember(j, "globalExchangeConstraints")) {
    ir::GlobalExchangeConstraintData d;
    read(c, "bandwidth", d.bandwidth);
    for (const json &f : arrayMember(c, "flows")) {
      if (!f.is_array() || f.size() != 2)
        throw FieldError{"field 'globalExchangeConstraints' has a malformed flow"};
      d.flows.push_back({num<unsigned>(f[0]), num<unsigned>(f[1])});
    }
    t.globalExchangeConstraints.push_back(std::move(d));
  }
  return t;
}

json scalarToJson(const ScalarRef &s) {
  return json::array({s.where.tile, s.where.addr, static_cast<int>(s.type)});
}
ScalarRef scalarFromJson(const json &j) {
  if (!j.is_array() || j.size() != 3)
    throw FieldError{"is not a scalar reference [tile, address, type]"};
  ScalarRef s;
  s.where = {num<std::uint32_t>(j[0]), num<std::uint32_t>(j[1])};
  s.type = typeId(j[2]);
  return s;
}

constexpr std::size_t kCopyRunBytes = 20, kVertexBytes = 21, kHostRunBytes = 20, kRelocationBytes = 16,
                      kScratchTileBytes = 20, kBlobBytes = 24;

// Copy runs (a plan's, an in-place step's staging) as one binary array each.
json copyRunsToJson(const std::vector<CopyRun> &runs, DataWriter &w) {
  return w.array(runs.size(), kCopyRunBytes, [&](std::size_t i, std::uint8_t *q) {
    const CopyRun &r = runs[i];
    put32(q, r.src.tile);
    put32(q + 4, r.src.addr);
    put32(q + 8, r.dst.tile);
    put32(q + 12, r.dst.addr);
    put32(q + 16, r.bytes);
  });
}

void copyRunsFromJson(const json &j, const DataReader &r, std::vector<CopyRun> &runs) {
  r.array(j, kCopyRunBytes, runs, [](CopyRun &run, const std::uint8_t *q) {
    run = CopyRun{{get32(q), get32(q + 4)}, {get32(q + 8), get32(q + 12)}, get32(q + 16)};
  });
}

json planToJson(const CopyPlan &p, DataWriter &w) {
  return {{"runs", copyRunsToJson(p.runs, w)}, {"tiles", w.u32s(p.tiles)}, {"tileBegin", w.u32s(p.tileBegin)},
          {"totalBytes", p.totalBytes},        {"cycles", p.cycles},       {"tileCycles", p.tileCycles}};
}

/// Pointers an in-place read rebinds (InPlaceReads::bindings, ::scratchBindings).
json bindingsToJson(const std::vector<InPlaceBinding> &bindings, DataWriter &w) {
  return w.array(bindings.size(), kRelocationBytes, [&](std::size_t i, std::uint8_t *q) {
    const InPlaceBinding &b = bindings[i];
    put32(q, b.where.tile);
    put32(q + 4, b.where.addr);
    put32(q + 8, b.target.tile);
    put32(q + 12, b.target.addr);
  });
}

void bindingsFromJson(const json &j, const DataReader &r, std::vector<InPlaceBinding> &bindings) {
  r.array(j, kRelocationBytes, bindings, [](InPlaceBinding &b, const std::uint8_t *q) {
    b = InPlaceBinding{{get32(q), get32(q + 4)}, {get32(q + 8), get32(q + 12)}};
  });
}

CopyPlan planFromJson(const json &j, const DataReader &r, const char *table, std::size_t index,
                      const char *name) {
  CopyPlan p;
  r.at(table, index, name);
  copyRunsFromJson(member(j, "runs"), r, p.runs);
  p.tiles = r.u32s(member(j, "tiles"));
  p.tileBegin = r.u32s(member(j, "tileBegin"));
  read(j, "totalBytes", p.totalBytes);
  read(j, "cycles", p.cycles);
  if (j.contains("tileCycles"))
    read(j, "tileCycles", p.tileCycles);
  return p;
}

json metaToJson(const ExecutableData &x, DataWriter &w) {
  json m;
  m["target"] = targetToJson(x.target);
  m["programEntry"] = x.programEntry;
  m["numCounters"] = x.numCounters;
  if (x.hwSeedsTransfer != ~0u) // absent: no hardware seeds variable (docs/codelets.md)
    m["hwSeedsTransfer"] = x.hwSeedsTransfer;
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
                                          q[20] = v.counted ? 1 : 0;
                                        })},
                   {"exchangeOut", planToJson(c.exchangeOut, w)},
                   {"computeCycles", c.computeCycles},
                   {"totalVertexCycles", c.totalVertexCycles},
                   {"fuseExchangeIn", c.fuseExchangeIn}});
    if (!c.inPlace.empty()) { // absent: the step reads nothing in place (docs/exchange.md)
      const InPlaceReads &ip = c.inPlace;
      css.back()["inPlace"] = {{"exchangeIn", planToJson(ip.exchangeIn, w)},
                               {"staging", copyRunsToJson(ip.staging, w)},
                               {"stagingBytes", ip.stagingBytes},
                               {"bindings", bindingsToJson(ip.bindings, w)}};
      if (!ip.scratch.empty()) { // absent: no lone gathers (docs/executable-format.md)
        json &j = css.back()["inPlace"];
        j["scratch"] = w.array(ip.scratch.size(), kScratchTileBytes, [&](std::size_t i, std::uint8_t *q) {
          const InPlaceScratchTile &t = ip.scratch[i];
          put32(q, t.planTile);
          put32(q + 4, t.runs);
          put32(q + 8, t.lo);
          put32(q + 12, t.bytes);
          put32(q + 16, t.bindBegin);
        });
        j["scratchBindings"] = bindingsToJson(ip.scratchBindings, w);
      }
    }
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
                       {"transfer", h.transfer},
                       {"streamingRuns", streamingRunsToJson(h.streamingRuns)}});
  m["hostHandles"] = std::move(handles);
  // Streaming Memory: offloaded variables in arena (first-read) order, initial bytes in the data section.
  json layout = json::array();
  for (const StreamingVariable &v : x.streamingLayout)
    layout.push_back({{"name", v.name},
                      {"variable", v.variable},
                      {"remoteBuffer", v.remoteBuffer},
                      {"offset", v.offset},
                      {"bytes", v.bytes},
                      {"firstStep", v.firstStep},
                      {"loads", v.loads},
                      {"stores", v.stores},
                      {"initialAt", w.raw(v.initial.data(), v.initial.size())},
                      {"initialBytes", v.initial.size()}});
  m["streamingLayout"] = std::move(layout);
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
    types.push_back({{"name", t.name},
                     {"library", t.library},
                     {"isMultiVertex", t.isMultiVertex},
                     {"isSupervisor", t.isSupervisor}});
  m["vertexTypes"] = std::move(types);
  json data = json::array();
  for (const CodeletDataImage &d : x.codeletData) {
    std::vector<std::uint32_t> regions;
    regions.reserve(d.regions.size() * 2);
    for (const TileAddr &a : d.regions) {
      regions.push_back(a.tile);
      regions.push_back(a.addr);
    }
    data.push_back({{"library", d.library}, {"bytes", d.bytes}, {"regions", std::move(regions)}});
  }
  m["codeletData"] = std::move(data);
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
  r.at("target");
  x.target = targetFromJson(member(m, "target"));
  r.at("meta");
  readArray(m, "programEntry", x.programEntry);
  read(m, "numCounters", x.numCounters);
  if (m.contains("hwSeedsTransfer"))
    read(m, "hwSeedsTransfer", x.hwSeedsTransfer);
  const json &steps = arrayMember(m, "steps");
  x.steps.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    r.at("steps", i);
    const json &s = steps[i];
    if (!s.is_array() || s.size() != 8)
      throw FieldError{"is not a step [kind, a, b, target, value, scalar, message, cycles]"};
    Step st;
    const auto kind = num<std::uint8_t>(s[0]);
    if (kind > static_cast<std::uint8_t>(StepKind::Collective)) // the last kind
      throw FieldError{"kind " + std::to_string(kind) + " is not a step kind"};
    st.kind = static_cast<StepKind>(kind);
    st.a = num<std::uint32_t>(s[1]);
    st.b = num<std::uint32_t>(s[2]);
    st.target = num<std::uint32_t>(s[3]);
    st.value = num<std::uint64_t>(s[4]);
    st.scalar = scalarFromJson(s[5]);
    if (!s[6].is_string())
      throw FieldError{"message is not a string"};
    st.message = s[6].get<std::string>();
    st.cycles = num<std::uint64_t>(s[7]);
    x.steps.push_back(std::move(st));
  }
  const json &css = arrayMember(m, "computeSteps");
  x.computeSteps.reserve(css.size());
  for (std::size_t i = 0; i < css.size(); ++i) {
    const json &c = css[i];
    ComputeStep cs;
    r.at("computeSteps", i);
    read(c, "name", cs.name);
    cs.exchangeIn = planFromJson(member(c, "exchangeIn"), r, "computeSteps", i, "exchangeIn");
    r.at("computeSteps", i, "tiles");
    cs.tiles = r.u32s(member(c, "tiles"));
    r.at("computeSteps", i, "tileBegin");
    cs.tileBegin = r.u32s(member(c, "tileBegin"));
    r.at("computeSteps", i, "vertices");
    r.array(member(c, "vertices"), kVertexBytes, cs.vertices, [](VertexInstance &v, const std::uint8_t *q) {
      v.type = get32(q);
      v.state = get32(q + 4);
      v.graphVertex = get32(q + 8);
      v.cycles = get64(q + 12);
      v.counted = q[20] != 0;
    });
    cs.exchangeOut = planFromJson(member(c, "exchangeOut"), r, "computeSteps", i, "exchangeOut");
    r.at("computeSteps", i);
    read(c, "computeCycles", cs.computeCycles);
    read(c, "totalVertexCycles", cs.totalVertexCycles);
    read(c, "fuseExchangeIn", cs.fuseExchangeIn);
    if (c.contains("inPlace")) {
      const json &ip = member(c, "inPlace");
      cs.inPlace.exchangeIn =
          planFromJson(member(ip, "exchangeIn"), r, "computeSteps", i, "inPlace.exchangeIn");
      r.at("computeSteps", i, "inPlace.staging");
      copyRunsFromJson(member(ip, "staging"), r, cs.inPlace.staging);
      r.at("computeSteps", i, "inPlace");
      read(ip, "stagingBytes", cs.inPlace.stagingBytes);
      r.at("computeSteps", i, "inPlace.bindings");
      bindingsFromJson(member(ip, "bindings"), r, cs.inPlace.bindings);
      if (ip.contains("scratch")) {
        r.at("computeSteps", i, "inPlace.scratch");
        r.array(member(ip, "scratch"), kScratchTileBytes, cs.inPlace.scratch,
                [](InPlaceScratchTile &t, const std::uint8_t *q) {
                  t = InPlaceScratchTile{get32(q), get32(q + 4), get32(q + 8), get32(q + 12), get32(q + 16)};
                });
        r.at("computeSteps", i, "inPlace.scratchBindings");
        bindingsFromJson(member(ip, "scratchBindings"), r, cs.inPlace.scratchBindings);
      }
    }
    x.computeSteps.push_back(std::move(cs));
  }
  const json &copies = arrayMember(m, "copies");
  x.copies.reserve(copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i)
    x.copies.push_back(planFromJson(copies[i], r, "copies", i, nullptr));
  const json &transfers = arrayMember(m, "hostTransfers");
  x.hostTransfers.reserve(transfers.size());
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const json &h = transfers[i];
    r.at("hostTransfers", i);
    HostTransfer t;
    read(h, "bytes", t.bytes);
    r.at("hostTransfers", i, "runs");
    r.array(member(h, "runs"), kHostRunBytes, t.runs, [](HostRun &run, const std::uint8_t *q) {
      run = HostRun{get64(q), {get32(q + 8), get32(q + 12)}, get32(q + 16)};
    });
    x.hostTransfers.push_back(std::move(t));
  }
  const json &tables = arrayMember(m, "switchTables");
  x.switchTables.reserve(tables.size());
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const json &t = tables[i];
    r.at("switchTables", i);
    SwitchTable st;
    r.at("switchTables", i, "control");
    st.control = scalarFromJson(member(t, "control"));
    r.at("switchTables", i);
    readArray(t, "values", st.values);
    readArray(t, "targets", st.targets);
    read(t, "default", st.defaultTarget);
    x.switchTables.push_back(std::move(st));
  }
  const json &prints = arrayMember(m, "prints");
  x.prints.reserve(prints.size());
  for (std::size_t i = 0; i < prints.size(); ++i) {
    const json &p = prints[i];
    r.at("prints", i);
    PrintSpec ps;
    read(p, "title", ps.title);
    ps.type = typeId(p, "type");
    readArray(p, "shape", ps.shape);
    read(p, "transfer", ps.transfer);
    x.prints.push_back(std::move(ps));
  }
  r.at("blockNames");
  for (const json &n : arrayMember(m, "blockNames")) {
    if (!n.is_string())
      throw FieldError{"has an entry that is not a string"};
    x.blockNames.push_back(n.get<std::string>());
  }
  const json &streams = arrayMember(m, "streams");
  x.streams.reserve(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const json &s = streams[i];
    r.at("streams", i);
    StreamInfo si;
    read(s, "handle", si.handle);
    si.type = typeId(s, "type");
    read(s, "numElements", si.numElements);
    read(s, "hostToDevice", si.hostToDevice);
    if (s.contains("broadcast"))
      read(s, "broadcast", si.broadcast);
    x.streams.push_back(std::move(si));
  }
  const json &remotes = arrayMember(m, "remoteBuffers");
  x.remoteBuffers.reserve(remotes.size());
  for (std::size_t i = 0; i < remotes.size(); ++i) {
    const json &s = remotes[i];
    r.at("remoteBuffers", i);
    RemoteBufferInfo ri;
    read(s, "handle", ri.handle);
    ri.type = typeId(s, "type");
    read(s, "numElements", ri.numElements);
    read(s, "repeats", ri.repeats);
    x.remoteBuffers.push_back(std::move(ri));
  }
  const json &handles = arrayMember(m, "hostHandles");
  x.hostHandles.reserve(handles.size());
  for (std::size_t i = 0; i < handles.size(); ++i) {
    const json &h = handles[i];
    r.at("hostHandles", i);
    HostHandleInfo hi;
    read(h, "name", hi.name);
    read(h, "isWrite", hi.isWrite);
    hi.type = typeId(h, "type");
    read(h, "transfer", hi.transfer);
    r.at("hostHandles", i);
    for (const json &run : h.contains("streamingRuns") ? arrayMember(h, "streamingRuns") : json::array()) {
      StreamingRun sr;
      read(run, "hostOffset", sr.hostOffset);
      read(run, "layout", sr.layout);
      read(run, "offset", sr.offset);
      read(run, "bytes", sr.bytes);
      hi.streamingRuns.push_back(sr);
    }
    x.hostHandles.push_back(std::move(hi));
  }
  const json noLayout = json::array();
  const json &layout = m.contains("streamingLayout") ? arrayMember(m, "streamingLayout") : noLayout;
  x.streamingLayout.reserve(layout.size());
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const json &v = layout[i];
    r.at("streamingLayout", i);
    StreamingVariable sv;
    read(v, "name", sv.name);
    read(v, "variable", sv.variable);
    read(v, "remoteBuffer", sv.remoteBuffer);
    read(v, "offset", sv.offset);
    read(v, "bytes", sv.bytes);
    read(v, "firstStep", sv.firstStep);
    read(v, "loads", sv.loads);
    read(v, "stores", sv.stores);
    std::uint64_t at = 0, n = 0;
    read(v, "initialAt", at);
    read(v, "initialBytes", n);
    const std::uint8_t *p = r.bytes(at, n);
    sv.initial.assign(p, p + n);
    x.streamingLayout.push_back(std::move(sv));
  }
  r.at("blobs");
  r.array(member(m, "blobs"), kBlobBytes, x.blobs, [&](MemoryBlob &b, const std::uint8_t *q) {
    b.where = {get32(q), get32(q + 4)};
    const std::uint64_t at = get64(q + 8), n = get64(q + 16);
    const std::uint8_t *p = r.bytes(at, n);
    b.bytes.assign(p, p + n);
  });
  r.at("relocations");
  r.array(member(m, "relocations"), kRelocationBytes, x.relocations,
          [](Relocation &rel, const std::uint8_t *q) {
            rel = Relocation{{get32(q), get32(q + 4)}, {get32(q + 8), get32(q + 12)}};
          });
  const json &types = arrayMember(m, "vertexTypes");
  x.vertexTypes.reserve(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    const json &t = types[i];
    r.at("vertexTypes", i);
    VertexTypeEntry e;
    read(t, "name", e.name);
    read(t, "library", e.library);
    read(t, "isMultiVertex", e.isMultiVertex);
    read(t, "isSupervisor", e.isSupervisor);
    x.vertexTypes.push_back(std::move(e));
  }
  const json &data = arrayMember(m, "codeletData");
  x.codeletData.reserve(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    r.at("codeletData", i);
    CodeletDataImage d;
    std::vector<std::uint32_t> regions;
    read(data[i], "library", d.library);
    read(data[i], "bytes", d.bytes);
    readArray(data[i], "regions", regions);
    if (regions.size() % 2 != 0)
      throw FieldError{"field 'regions' does not hold (tile, address) pairs"};
    for (std::size_t k = 0; k < regions.size(); k += 2)
      d.regions.push_back({regions[k], regions[k + 1]});
    x.codeletData.push_back(std::move(d));
  }
  r.at("tileBytesUsed");
  x.tileBytesUsed = r.u64s(member(m, "tileBytesUsed"));
  r.at("meta");
  read(m, "outOfMemory", x.outOfMemory);
  read(m, "outOfMemoryMessage", x.outOfMemoryMessage);
  // Replication (docs/replication.md); absent in executables without replicas or collectives.
  if (m.is_object() && m.contains("replication")) {
    r.at("replication");
    const json &rep = m.at("replication");
    read(rep, "factor", x.replicationFactor);
    const json &collectives = arrayMember(rep, "collectives");
    x.collectives.reserve(collectives.size());
    for (std::size_t i = 0; i < collectives.size(); ++i) {
      r.at("replication.collectives", i);
      const json &c = collectives[i];
      if (!c.is_array() || c.size() != 9 || !c[8].is_string())
        throw FieldError{"is not [kind, op, group, groupSize, root, type, src, dst, name]"};
      CollectiveInfo ci;
      ci.kind = num<std::uint8_t>(c[0]);
      ci.op = num<std::uint8_t>(c[1]);
      ci.group = num<std::uint8_t>(c[2]);
      ci.groupSize = num<std::uint32_t>(c[3]);
      ci.root = num<std::uint32_t>(c[4]);
      const auto type = num<std::uint32_t>(c[5]);
      if (!isValidTypeId(type))
        throw FieldError{"has type id " + std::to_string(type) + ", which is not a type"};
      ci.type = static_cast<poplar::Type::Id>(type);
      ci.src = num<std::uint32_t>(c[6]);
      ci.dst = num<std::uint32_t>(c[7]);
      ci.name = c[8].get<std::string>();
      x.collectives.push_back(std::move(ci));
    }
    readArray(rep, "indexTransfers", x.replicaIndexTransfers);
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
  return targetToJson(target).dump(-1, ' ', false, json::error_handler_t::replace);
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

  // Sections, in their fixed order; each is padded to a multiple of 8 bytes,
  // and the padding too must lie inside the payload.
  static constexpr const char *kSectionNames[6] = {"", "ident", "meta", "data", "code", "profile"};
  const std::uint8_t *sections[6] = {};
  std::uint64_t lengths[6] = {};
  std::uint64_t at = 0;
  for (std::uint32_t expect : {kIdent, kMeta, kData, kCode, kProfile}) {
    const std::string name =
        std::string("section ") + std::to_string(expect) + " (" + kSectionNames[expect] + ")";
    if (at > payload || payload - at < 16)
      fail(what, "is corrupt: " + name + " is missing");
    const std::uint32_t tag = get32(body + at);
    const std::uint64_t n = get64(body + at + 8);
    if (tag != expect)
      fail(what, "is corrupt: " + name + " has tag " + std::to_string(tag));
    if (n > payload - at - 16)
      fail(what, "is corrupt: " + name + " length " + std::to_string(n) + " runs past the payload (" +
                     std::to_string(payload - at - 16) + " bytes left)");
    sections[tag] = body + at + 16;
    lengths[tag] = n;
    const std::uint64_t end = at + 16 + n;
    const std::uint64_t padded = (end + 7) / 8 * 8;
    if (padded > payload)
      fail(what, "is corrupt: the padding of " + name + " runs past the payload");
    at = padded;
  }

  auto x = std::make_unique<ExecutableData>();
  const DataReader data(sections[kData], lengths[kData], what);
  const DataReader code(sections[kCode], lengths[kCode], what);
  const DataReader *reader = &data;
  try {
    code.at("ident");
    reader = &code;
    const json ident = fromCbor(sections[kIdent], lengths[kIdent]);
    std::string package;
    read(ident, "package", package);
    if (checkPackageHash && package != packageVersion())
      fail(what, "was made by " + package + " and this is " + packageVersion() +
                     "; recompile the graph or load with checkPackageHash = false");
    data.at("meta");
    reader = &data;
    const json meta = fromCbor(sections[kMeta], lengths[kMeta]);
    if (!meta.is_object())
      throw FieldError{"is not an object"};
    metaFromJson(meta, data, *x);
    reader = &code;
    const json &libs = arrayMember(ident, "codeletLibraries");
    for (std::size_t i = 0; i < libs.size(); ++i) {
      code.at("codeletLibraries", i);
      CodeletLibraryBlob b;
      read(libs[i], "contentHash", b.contentHash);
      std::uint64_t off = 0, n = 0;
      read(libs[i], "offset", off);
      read(libs[i], "size", n);
      const std::uint8_t *q = code.bytes(off, n);
      // The hash names the library in the process-wide registry: it must be
      // the hash of these bytes, or the file could stand in for another library.
      if (codelets::contentHash(q, n) != b.contentHash)
        throw FieldError{"contentHash '" + b.contentHash + "' is not the hash of the library's bytes"};
      b.bytes.assign(q, q + n);
      x->codeletLibraries.push_back(std::move(b));
    }
    x->profileJson.assign(reinterpret_cast<const char *>(sections[kProfile]), lengths[kProfile]);
  } catch (const FieldError &e) {
    fail(what, "is corrupt: " + reader->field() + ": " + e.problem);
  } catch (const json::exception &e) {
    fail(what, "is corrupt: " + reader->field() + " is malformed (" + e.what() + ")");
  }
  validateStructure(*x, what);
  x->provenance = Provenance::Validated;
  return x;
}

namespace {

/// How many bytes a seekable stream (a file, a string) holds after its read
/// position; nullopt for one that cannot tell (a pipe). The position is kept: a
/// stream that seeks to its end but not back is reported (`what`), never read
/// from the wrong place.
std::optional<std::uint64_t> bytesLeft(std::istream &in, const std::string &what) {
  const std::streampos here = in.tellg();
  if (here == std::streampos(-1)) {
    in.clear(in.rdstate() & ~std::ios::failbit);
    return std::nullopt;
  }
  in.seekg(0, std::ios::end);
  const std::streampos end = in.fail() ? std::streampos(-1) : in.tellg();
  in.clear(in.rdstate() & ~std::ios::failbit);
  in.seekg(here);
  if (in.fail())
    fail(what, "could not be read: its stream did not return to position " +
                   std::to_string(static_cast<long long>(here)) + " after measuring its size");
  if (end == std::streampos(-1) || end < here)
    return std::nullopt;
  return static_cast<std::uint64_t>(end - here);
}

} // namespace

std::unique_ptr<ExecutableData> deserialize(std::istream &in, bool checkPackageHash,
                                            const std::string &what) {
  std::vector<std::uint8_t> bytes(kHeaderBytes);
  in.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(kHeaderBytes));
  std::size_t got = static_cast<std::size_t>(in.gcount());
  bytes.resize(got);
  if (got == kHeaderBytes && std::memcmp(bytes.data(), kMagic, 8) == 0 &&
      get32(bytes.data() + 8) == kFormatVersion) {
    const std::uint64_t payload = get64(bytes.data() + 16);
    // A stream that holds the whole payload (files and string streams say how
    // much they hold): one buffer, one read, no zero-fill. Memory is still what
    // the stream holds, never what the header claims.
    const std::optional<std::uint64_t> held = bytesLeft(in, what);
    if (held && *held >= payload && payload <= std::numeric_limits<std::size_t>::max() - kHeaderBytes) {
      const std::size_t total = kHeaderBytes + static_cast<std::size_t>(payload);
      auto whole = std::make_unique_for_overwrite<std::uint8_t[]>(total);
      std::memcpy(whole.get(), bytes.data(), kHeaderBytes);
      in.read(reinterpret_cast<char *>(whole.get() + kHeaderBytes), static_cast<std::streamsize>(payload));
      const std::size_t read = static_cast<std::size_t>(in.gcount());
      return deserializeFromBytes(whole.get(), kHeaderBytes + read, checkPackageHash, what);
    }
    // Memory follows the bytes that actually arrive, never the size the header
    // claims: read in 1 MiB chunks into a buffer that grows geometrically, so a
    // header claiming a terabyte costs what the stream holds.
    constexpr std::size_t kChunk = 1 << 20;
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
