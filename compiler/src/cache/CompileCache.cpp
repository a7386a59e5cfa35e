// Copyright (c) Aspen contributors.
#include "cache/CompileCache.hpp"

#include "cache/CacheFiles.hpp"

#include "exe/BuildInfo.hpp"
#include "exe/Hash.hpp"
#include "exe/Serialize.hpp"
#include "ir/DebugRecord.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"

#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace aspen::cache {
namespace fs = std::filesystem;

namespace {

constexpr const char *kSuffix = ".aspenexe";
/// An entry starts with this line and its key's line, then the executable: an entry copied
/// under another key is told apart from the graph's own (docs/caches.md).
constexpr std::string_view kEntryMagic = "aspen-compile-cache-entry 1\n";

using KeyHash = exe::Hash128;

void hashEdge(KeyHash &h, const ir::FieldValue &f, std::size_t i) {
  f.visitEdge(i, [&](poplar::Type type, std::uint32_t count, bool scalarShape,
                     std::span<const ir::Segment> segments) {
    h.value<std::uint8_t>(type.valid()).value(type.id()).value(count).value(scalarShape);
    h.value<std::uint64_t>(segments.size());
    for (const ir::Segment &s : segments)
      h.value(s.var).value(s.start).value(s.stride).value(s.count);
  });
}

void hashView(KeyHash &h, const poplar::Tensor &t) {
  if (!t.valid()) {
    h.value<std::uint8_t>(0);
    return;
  }
  const ir::TensorView &v = t.getImpl();
  h.value<std::uint8_t>(1).value(v.elementType.id()).value<std::uint64_t>(v.shape.size());
  for (std::size_t d : v.shape)
    h.value<std::uint64_t>(d);
  const std::size_t n = v.segments ? v.segments->size() : 0;
  h.value<std::uint64_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const ir::Segment &s = (*v.segments)[i];
    h.value(s.var).value(s.start).value(s.stride).value(s.count);
  }
}

/// Debug ids are numbered process-wide, so the same graph built twice in one process has the
/// same ids shifted by how many DebugInfos came before. The key hashes ids relative to `base`
/// (the smallest id the graph and its programs use), so both builds share a cache entry.
struct DebugIdBase {
  poplar::DebugId base = 0;
  poplar::DebugId operator()(poplar::DebugId id) const { return id == 0 ? 0 : id - base + 1; }
  /// debugContextsJson(records) with every "id" and "parent" rebased, as CBOR bytes.
  std::string json(const std::vector<std::shared_ptr<const ir::DebugRecord>> &records) const {
    nlohmann::json j = ir::debugContextsJson(records);
    for (auto &e : j) {
      e["id"] = (*this)(e["id"].get<poplar::DebugId>());
      e["parent"] = (*this)(e["parent"].get<poplar::DebugId>());
    }
    // CBOR, not JSON text: names are bytes, and text would have to replace (and so merge)
    // those that are not UTF-8.
    const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(j);
    return std::string(bytes.begin(), bytes.end());
  }
};

DebugIdBase debugIdBaseOf(const ir::GraphData &g, const std::vector<const ir::ProgramNode *> &programs) {
  poplar::DebugId base = ~poplar::DebugId(0);
  auto see = [&](poplar::DebugId id) {
    if (id != 0)
      base = std::min(base, id);
  };
  for (const auto &kv : g.debugRecords)
    see(kv.first);
  // Program trees may nest thousands deep: an explicit stack, not recursion.
  std::vector<const ir::ProgramNode *> stack(programs.begin(), programs.end());
  for (const auto &f : g.functions)
    stack.push_back(f.get());
  std::unordered_set<const ir::ProgramNode *> seen;
  while (!stack.empty()) {
    const ir::ProgramNode *n = stack.back();
    stack.pop_back();
    if (!n || !seen.insert(n).second)
      continue;
    see(n->debugId);
    if (n->debugInfo)
      see(n->debugInfo->id);
    for (const auto &c : n->children)
      stack.push_back(c.get());
  }
  return DebugIdBase{base == ~poplar::DebugId(0) ? 0 : base};
}

class ProgramHasher {
public:
  explicit ProgramHasher(DebugIdBase ids) : ids_(ids) {}
  std::pair<std::uint64_t, std::uint64_t> hash(const ir::ProgramNode *node) {
    if (!node)
      return {0, 0};
    if (auto it = memo_.find(node); it != memo_.end())
      return it->second;
    // Children first, so that no hash state is live across the recursion (the
    // trees may nest thousands deep; compileGraph gives such trees a deep stack).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> children;
    children.reserve(node->children.size());
    for (const auto &c : node->children)
      children.push_back(hash(c.get()));
    KeyHash h;
    h.value(node->kind).string(node->debugName).value<std::uint64_t>(node->children.size());
    // The profile carries the debug information (ids, op arguments): part of the key.
    h.value(ids_(node->debugId));
    if (node->debugInfo)
      h.string(ids_.json({node->debugInfo}));
    for (const auto &c : children)
      h.digestValue(c);
    hashView(h, node->src);
    hashView(h, node->dst);
    hashView(h, node->predicate);
    hashView(h, node->offset);
    h.value(node->computeSet)
        .value(node->stream)
        .value(node->remoteBuffer)
        .value(node->function)
        .value(node->count);
    h.value<std::uint64_t>(node->caseValues.size());
    for (std::int32_t c : node->caseValues)
      h.value(c);
    h.value(node->hasDefault).value(node->flag).value(node->syncType).string(node->message);
    h.value(node->collective.kind)
        .value(node->collective.op)
        .value(node->collective.group)
        .value(node->collective.groupSize)
        .value(node->collective.root);
    return memo_[node] = h.digest();
  }

private:
  DebugIdBase ids_;
  std::unordered_map<const ir::ProgramNode *, std::pair<std::uint64_t, std::uint64_t>> memo_;
};

/// Hashes items [0, n) in parallel chunks, then the chunk digests in order.
template <class F> void hashInChunks(KeyHash &h, std::size_t n, F &&item) {
  constexpr std::size_t kChunk = 8192;
  const std::size_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> digests(chunks);
  tbb::parallel_for(std::size_t(0), chunks, [&](std::size_t c) {
    KeyHash local;
    for (std::size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i)
      item(local, i);
    digests[c] = local.digest();
  });
  h.value<std::uint64_t>(n);
  for (const auto &d : digests)
    h.digestValue(d);
}

std::uint64_t envBytes(const char *name, std::uint64_t otherwise) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return otherwise;
  char *end = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' ? n : otherwise;
}

/// The writer pid of a temporary file name `<key>.tmp.<pid>.<n>`, or 0.
pid_t tempFileWriter(const std::string &name) {
  const std::size_t at = name.find(".tmp.");
  if (at == std::string::npos)
    return 0;
  const char *p = name.c_str() + at + 5;
  char *end = nullptr;
  const long pid = std::strtol(p, &end, 10);
  return end != p && *end == '.' && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

bool processAlive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

} // namespace

EvictionReport evict(const CacheConfig &config, const fs::path &keep) {
  struct Entry {
    fs::path path;
    std::uint64_t size;
    fs::file_time_type used;
  };
  EvictionReport report;
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  std::error_code ec;
  const auto staleBefore = fs::file_time_type::clock::now() - kStaleTempAge;
  for (const auto &e : fs::directory_iterator(config.directory, ec)) {
    std::error_code e0, e1, e2;
    if (!e.is_regular_file(e0) || e.is_symlink(e0))
      continue; // a link or anything else is not ours to count
    const std::uint64_t size = e.file_size(e1);
    const auto used = e.last_write_time(e2);
    if (e1 || e2)
      continue;
    const std::string name = e.path().filename().string();
    if (const pid_t writer = tempFileWriter(name)) {
      if (!processAlive(writer) || used < staleBefore) {
        std::error_code ignored;
        if (fs::remove(e.path(), ignored)) {
          ++report.tempFilesRemoved;
          ASPEN_LOG(Info,
                    "compile cache: removed " << name << " (" << size << " bytes) left by a dead writer");
          continue;
        }
      }
      total += size; // a live writer's file takes room too
      continue;
    }
    if (e.path().extension() != kSuffix)
      continue;
    entries.push_back({e.path(), size, used});
    total += size;
  }
  if (total > config.maxBytes) {
    std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
      return a.used != b.used ? a.used < b.used : a.path < b.path;
    });
    for (const Entry &e : entries) {
      if (total <= config.maxBytes)
        break;
      if (e.path == keep)
        continue;
      if (fs::remove(e.path, ec)) {
        total -= e.size;
        ++report.entriesRemoved;
        ASPEN_LOG(Info,
                  "compile cache: evicted " << e.path.filename().string() << " (" << e.size << " bytes)");
      }
    }
  }
  report.bytesAfter = total;
  return report;
}

CacheConfig CacheConfig::fromEnvironment() {
  CacheConfig c;
  if (const char *d = std::getenv("ASPEN_CACHE_DIR"); d && *d)
    c.directory = fs::path(d) / "executables";
  else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    c.directory = fs::path(x) / "aspen" / "executables";
  else if (const char *home = std::getenv("HOME"); home && *home)
    c.directory = fs::path(home) / ".cache" / "aspen" / "executables";
  else if (const std::string root = perUserTempRoot(); !root.empty())
    c.directory = fs::path(root) / "executables";
  // else: no directory, nothing cached (perUserTempRoot warned)
  c.maxBytes = envBytes("ASPEN_COMPILE_CACHE_MAX_BYTES", c.maxBytes);
  return c;
}

fs::path entryPath(const CacheConfig &config, const std::string &key) {
  return config.directory / (key + kSuffix);
}

std::string computeCacheKey(const ir::GraphData &g, const std::vector<const ir::ProgramNode *> &programs,
                            const compiler::CompileOptions &options) {
  KeyHash h;
  h.string("aspen-compile-cache-key-1").string(exe::compilerBuildId()).value(exe::kFormatVersion);
  h.string(exe::targetFingerprint(g.target)).value(g.replicationFactor);
  h.value<std::uint64_t>(g.replicationIndexVars.size());
  for (std::uint32_t v : g.replicationIndexVars)
    h.value(v);
  h.value(options.allowOutOfMemory);
  h.value(options.streamingMemoryAuto);
  h.value<std::uint64_t>(options.streamingMemoryPinned.size());
  for (const std::string &name : options.streamingMemoryPinned)
    h.string(name);
  h.value(options.workerStackBytes).value(options.supervisorStackBytes);
  const DebugIdBase ids = debugIdBaseOf(g, programs);

  hashInChunks(h, g.variables.size(), [&](KeyHash &k, std::size_t i) {
    const ir::Variable &v = g.variables[i];
    k.value(v.type.id())
        .value(v.numElements)
        .value(v.isConstant)
        .string(v.name)
        .value(ids(v.debugId))
        .value<std::uint64_t>(v.shape.size());
    for (std::size_t d : v.shape)
      k.value<std::uint64_t>(d);
    k.value<std::uint64_t>(v.mapping.size());
    for (const ir::TileInterval &t : v.mapping)
      k.value(t.begin).value(t.end).value(t.tile);
  });
  // fp8: which metadata tensor each quarter variable carries (edges read it).
  std::vector<ir::VarId> quarters;
  for (const auto &kv : g.quarterMetadata)
    quarters.push_back(kv.first);
  std::sort(quarters.begin(), quarters.end());
  h.value<std::uint64_t>(quarters.size());
  for (ir::VarId v : quarters) {
    h.value(v);
    hashView(h, g.quarterMetadata.at(v));
  }
  std::vector<ir::VarId> initialised;
  for (const auto &kv : g.initialValues)
    initialised.push_back(kv.first);
  std::sort(initialised.begin(), initialised.end());
  h.value<std::uint64_t>(initialised.size());
  for (ir::VarId v : initialised) {
    const auto &bytes = g.initialValues.at(v);
    h.value(v).value<std::uint64_t>(bytes.size()).update(bytes.data(), bytes.size());
  }

  h.value<std::uint64_t>(g.vertexTypes.size());
  for (const ir::VertexTypeInfo &t : g.vertexTypes) {
    h.string(t.name).value(t.library).value(t.objectSize).value(t.objectAlign).value(t.isMultiVertex);
    h.value(t.isSupervisor).value<std::uint64_t>(t.fields.size());
    for (const ir::FieldInfo &f : t.fields)
      h.string(f.name)
          .value(f.kind)
          .value(f.shape)
          .value(f.elementType.id())
          .value(f.layout)
          .value(f.outerLayout)
          .value(f.minAlign)
          .value(f.offset)
          .value(f.size)
          .value(f.isConst);
  }
  h.value<std::uint64_t>(g.codeletLibraries.size());
  for (const ir::CodeletLibrary &l : g.codeletLibraries)
    h.string(l.contentHash);
  // Estimator code cannot be hashed; its presence is (see docs/compiler.md).
  h.value<std::uint64_t>(g.perfEstimators.size());
  for (const auto &kv : g.perfEstimators)
    h.string(kv.first);

  h.value<std::uint64_t>(g.computeSets.size());
  for (const ir::ComputeSetRecord &cs : g.computeSets) {
    h.string(cs.name).value(ids(cs.debugId)).value<std::uint64_t>(cs.vertices.size());
    h.update(cs.vertices.data(), cs.vertices.size() * sizeof(std::uint32_t));
  }
  hashInChunks(h, g.vertices.size(), [&](KeyHash &k, std::size_t i) {
    const ir::Vertex &v = g.vertices[i];
    k.value(v.type).value(v.computeSet).value(v.tile);
    const poplar::VertexPerfEstimate *estimate = g.estimateOf(static_cast<std::uint32_t>(i));
    k.value<std::uint8_t>(estimate != nullptr);
    if (estimate)
      k.value(estimate->cycles).value(estimate->flops);
    k.value<std::uint64_t>(v.fields.size());
    for (const ir::FieldValue &f : v.fields) {
      const auto state = f.stateBytes();
      k.value(f.set).value(f.declaredSize).value<std::uint32_t>(f.stateCount);
      k.value<std::uint64_t>(state.size());
      if (!state.empty())
        k.update(state.data(), state.size());
      const std::size_t numEdges = f.edges().size();
      k.value<std::uint64_t>(numEdges);
      for (std::size_t e = 0; e < numEdges; ++e)
        hashEdge(k, f, e);
    }
  });

  {
    std::vector<std::shared_ptr<const ir::DebugRecord>> records;
    for (const auto &kv : g.debugRecords)
      records.push_back(kv.second);
    h.string(ids.json(records));
  }
  h.value<std::uint64_t>(g.hostHandles.size());
  for (const ir::HostHandle &hh : g.hostHandles) {
    h.string(hh.name).value(hh.isWrite);
    hashView(h, hh.tensor);
  }
  h.value<std::uint64_t>(g.streams.size());
  for (const ir::StreamRecord &s : g.streams)
    h.string(s.handle).value(s.type.id()).value(s.numElements).value(s.hostToDevice).value(s.mode);
  h.value<std::uint64_t>(g.remoteBuffers.size());
  for (const ir::RemoteBufferRecord &r : g.remoteBuffers)
    h.string(r.handle).value(r.type.id()).value(r.numElements).value(r.repeats);

  ProgramHasher ph(ids);
  h.value<std::uint64_t>(g.functions.size());
  for (const auto &f : g.functions)
    h.digestValue(ph.hash(f.get()));
  h.value<std::uint64_t>(programs.size());
  for (const ir::ProgramNode *p : programs)
    h.digestValue(ph.hash(p));
  return h.hex();
}

namespace {

/// Whether the cache directory may be used; warns once when it may not.
bool usable(const CacheConfig &config) {
  if (config.directory.empty())
    return false;
  const std::string why = prepareDirectory(config.directory.string());
  if (why.empty())
    return true;
  warnOnce("compile cache: not using '" + config.directory.string() + "': " + why +
           "; executables are not cached (see docs/caches.md)");
  return false;
}

} // namespace

std::unique_ptr<exe::ExecutableData> lookup(const CacheConfig &config, const std::string &key) {
  if (!usable(config))
    return nullptr;
  const fs::path path = entryPath(config, key);
  std::string why;
  const int fd = openEntry(path.string(), why);
  if (fd < 0) {
    if (!why.empty())
      ASPEN_LOG(Warn, "compile cache: not using " << path.string() << " (" << why << "); recompiling");
    return nullptr;
  }
  auto bytes = readAll(fd);
  bool own = false;
  if (bytes) {
    const std::string_view text(reinterpret_cast<const char *>(bytes->data()), bytes->size());
    const std::string header = std::string(kEntryMagic) + key + "\n";
    own = text.substr(0, header.size()) == header;
    if (!own) {
      ASPEN_LOG(Warn, "compile cache: " << path.string()
                                        << " does not hold the executable of this graph (its recorded key "
                                           "differs); recompiling");
      ::close(fd);
      std::error_code ec;
      fs::remove(path, ec);
      return nullptr;
    }
  }
  try {
    if (!bytes)
      throw poplar::poplar_error("cannot read it");
    const std::size_t skip = kEntryMagic.size() + key.size() + 1;
    auto exe = exe::deserializeFromBytes(bytes->data() + skip, bytes->size() - skip, true,
                                         "compile cache entry '" + path.string() + "'");
    ::futimens(fd, nullptr); // mark as recently used
    ::close(fd);
    return exe;
  } catch (const poplar::poplar_error &e) {
    ::close(fd);
    ASPEN_LOG(Warn, "compile cache: discarding a bad entry: " << e.what());
    std::error_code ec;
    fs::remove(path, ec);
    return nullptr;
  }
}

void store(const CacheConfig &config, const std::string &key, const exe::ExecutableData &exe) {
  if (!usable(config))
    return;
  const fs::path path = entryPath(config, key);
  std::string why;
  bool stored = false;
  try {
    std::vector<std::uint8_t> bytes(kEntryMagic.begin(), kEntryMagic.end());
    bytes.insert(bytes.end(), key.begin(), key.end());
    bytes.push_back('\n');
    const std::vector<std::uint8_t> body = exe::serializeToBytes(exe);
    bytes.insert(bytes.end(), body.begin(), body.end());
    stored = writeAtomic(path.string(), bytes.data(), bytes.size(), FileMode::Cache, why);
  } catch (const std::exception &e) {
    why = e.what();
  }
  if (!stored) {
    ASPEN_LOG(Warn, "compile cache: could not store " << path.string() << " (not cached): " << why);
    evict(config); // frees what dead writers left, so that a later store may fit
    return;
  }
  evict(config, path);
}

} // namespace aspen::cache
