// Copyright (c) Aspen contributors.
#include "codelets/VertexLibrary.hpp"

#include "codelets/CodeletCache.hpp"
#include "codelets/ContentHash.hpp"
#include "codelets/GpFile.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <memory>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aspen::codelets {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<LoadedVertexLibrary>> bySharedObject;
  std::unordered_map<std::string, const LoadedVertexLibrary *> byGp;
  std::vector<std::unique_ptr<LoadedVertexLibrary>> composites; // linked libraries
};

Registry &registry() {
  static Registry *r = new Registry; // never destroyed: libraries stay loaded until exit
  return *r;
}

std::string describeName(const std::string &name, const std::string &fallback) {
  return name.empty() ? fallback : name;
}

/// dlopen's the shared object, from the cache or (if the cache is not writable)
/// from an anonymous memory file.
const LoadedVertexLibrary &loadLocked(Registry &r, const std::string &soHash, const std::uint8_t *bytes,
                                      std::size_t size, const std::string &name) {
  auto it = r.bySharedObject.find(soHash);
  if (it != r.bySharedObject.end())
    return *it->second;
  std::string path;
  try {
    const std::string cacheDir = codeletCacheDir();
    const std::string dir = cacheDir + "/lib";
    if (!cacheDir.empty() && makeDirectories(dir)) {
      const std::string candidate = dir + "/" + soHash + ".so";
      // Reuse a cached copy only if it holds exactly these bytes; a damaged (or
      // swapped) one is replaced, so the cache heals itself.
      bool intact = false;
      if (auto existing = readCacheFile(candidate)) {
        intact = existing->size() == size && (size == 0 || std::memcmp(existing->data(), bytes, size) == 0);
        if (!intact)
          ASPEN_LOG(Warn, "codelet cache: " << candidate << " does not hold the shared object of '" << name
                                            << "' (damaged); rewriting it");
      }
      if (intact || writeFileAtomic(candidate, bytes, size))
        path = candidate;
    }
  } catch (const poplar::poplar_error &) {
    // fall back to a memory file below
  }
  if (path.empty()) {
    const int fd = ::memfd_create(("aspen-" + soHash).c_str(), MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, bytes, size) != static_cast<ssize_t>(size))
      throw poplar::graph_object_load_error("Cannot load vertex library '" + name +
                                            "': no writable place for its shared object");
    path = "/proc/self/fd/" + std::to_string(fd); // the descriptor stays open: dlopen needs the file
  }
  // Which of its writable bytes each tile owns, known before it is opened.
  DataLayout layout = analyseWritableData(bytes, size, name);
  ::dlerror();
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = ::dlerror();
    throw poplar::graph_object_load_error("Cannot load vertex library '" + name +
                                          "': " + (err ? err : "dlopen failed"));
  }
  std::unique_ptr<TileData> data;
  if (layout.stateful()) {
    // A tile's first copy: the bytes as loading left them, after the library's
    // constructors ran and before any vertex of it runs.
    static std::atomic<std::uint64_t> nextOrder{0};
    link_map *map = nullptr;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
      throw poplar::graph_object_load_error("Cannot load vertex library '" + name +
                                            "': its load address is unknown");
    data = std::make_unique<TileData>();
    data->layout = std::move(layout);
    data->base = reinterpret_cast<std::uint8_t *>(map->l_addr);
    data->initial.assign(data->layout.bytes, 0);
    data->copyOut(data->initial.data());
    data->order = nextOrder++;
    std::string symbols;
    for (const std::string &s : data->layout.symbols)
      symbols += (symbols.empty() ? "" : ", ") + s;
    ASPEN_LOG(Debug, "vertex library " << name << " has " << data->layout.bytes
                                       << " bytes of per-tile data in " << data->layout.pieces.size()
                                       << " pieces (" << symbols << ")");
  }
  auto lib = std::make_unique<LoadedVertexLibrary>(handle, soHash, path, std::move(data));
  const LoadedVertexLibrary &ref = *lib;
  r.bySharedObject.emplace(soHash, std::move(lib));
  ASPEN_LOG(Debug,
            "loaded vertex library " << name << " (" << ref.numEntries() << " vertex types) from " << path);
  return ref;
}

} // namespace

// Initial-exec, as the fault handler's thread record (VertexFaults.cpp): instrumented code
// reaches it at every return of a codelet function, so it must cost a few instructions.
__thread std::uint64_t aspenCycleCounter __attribute__((tls_model("initial-exec"))) = 0;

// Checked writes (docs/tile-model.md): instrumented code reads it at every function entry.
__thread TileWriteRange aspenTileWriteRange __attribute__((tls_model("initial-exec"))) = {0, 0, 0, 0};

namespace {
const AspenCodeletRuntime *codeletRuntime = nullptr;
} // namespace

void setCodeletRuntime(const AspenCodeletRuntime *table) {
  codeletRuntime = table;
}

namespace {
/// `variable`'s offset from the thread pointer (%fs base), the same in every thread.
std::int64_t threadPointerOffset(const void *variable) {
  std::uintptr_t threadPointer = 0;
  asm("movq %%fs:0, %0" : "=r"(threadPointer));
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(variable) - threadPointer);
}

std::atomic<void (*)(void *)> gTileWriteFault{nullptr};

/// What instrumented code calls on a write into another tile: the runtime's handler.
void tileWriteFault(void *address) {
  if (void (*handler)(void *) = gTileWriteFault.load(std::memory_order_relaxed))
    handler(address);
}
} // namespace

void setTileWriteFaultHandler(void (*handler)(void *address)) {
  gTileWriteFault.store(handler, std::memory_order_relaxed);
}

LoadedVertexLibrary::LoadedVertexLibrary(void *handle, std::string sharedObjectHash, std::string path,
                                         std::unique_ptr<TileData> data)
    : handle_(handle), hash_(std::move(sharedObjectHash)), path_(std::move(path)), data_(std::move(data)) {
  using EntriesFn = const AspenVertexEntry *(*)(unsigned *);
  using VersionFn = uint32_t (*)();
  auto entries = reinterpret_cast<EntriesFn>(::dlsym(handle_, "aspen_codelet_entries"));
  auto version = reinterpret_cast<VersionFn>(::dlsym(handle_, "aspen_codelet_abi_version"));
  setSink_ =
      reinterpret_cast<void (*)(AspenPrintSink, void *)>(::dlsym(handle_, "aspen_codelet_set_print_sink"));
  // Counted cycles: the library adds to the running thread's counter at this offset.
  using SetCounterFn = void (*)(std::int64_t);
  if (auto setCounter = reinterpret_cast<SetCounterFn>(::dlsym(handle_, "aspen_codelet_set_cycle_counter"))) {
    setCounter(threadPointerOffset(&aspenCycleCounter));
    countsCycles_ = true;
  }
  // The IPU builtins backed by the runtime (a library made before them has no setter).
  using SetRuntimeFn = void (*)(const AspenCodeletRuntime *);
  // Exported only by a library whose code calls one (and by every library made before that).
  if (auto setRuntime = reinterpret_cast<SetRuntimeFn>(::dlsym(handle_, "aspen_codelet_set_runtime"))) {
    setRuntime(codeletRuntime);
    usesBuiltins_ = true;
  }
  // Checked writes: the library reads the running thread's tile range at this offset.
  using SetWriteCheckFn = void (*)(std::int64_t, void (*)(void *));
  if (auto setCheck = reinterpret_cast<SetWriteCheckFn>(::dlsym(handle_, "aspen_codelet_set_write_check"))) {
    setCheck(threadPointerOffset(&aspenTileWriteRange), &tileWriteFault);
    checksWrites_ = true;
  }
  if (!entries || !version || !setSink_)
    throw poplar::graph_object_load_error("Vertex library '" + path_ + "' is not an Aspen vertex library");
  if (version() != ASPEN_CODELET_ABI_VERSION)
    throw poplar::graph_object_load_error("Vertex library '" + path_ + "' has vertex ABI version " +
                                          std::to_string(version()) + ", but this Aspen uses version " +
                                          std::to_string(ASPEN_CODELET_ABI_VERSION));
  unsigned count = 0;
  const AspenVertexEntry *table = entries(&count);
  count_ = count;
  for (std::size_t i = 0; i < count_; ++i) {
    entries_.push_back(&table[i]);
    byName_.emplace(std::string_view(table[i].name), &table[i]);
  }
}

LoadedVertexLibrary::LoadedVertexLibrary(const std::vector<const LoadedVertexLibrary *> &parts,
                                         std::string hash)
    : hash_(std::move(hash)), parts_(parts) {
  for (const LoadedVertexLibrary *part : parts) {
    path_ += (path_.empty() ? "" : " + ") + part->path();
    for (std::size_t i = 0; i < part->numEntries(); ++i) {
      const AspenVertexEntry *e = &part->entry(i);
      if (byName_.emplace(std::string_view(e->name), e).second)
        entries_.push_back(e);
    }
  }
  count_ = entries_.size();
}

const AspenVertexEntry *LoadedVertexLibrary::find(std::string_view name) const {
  auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : it->second;
}

std::vector<const LoadedVertexLibrary *> LoadedVertexLibrary::sharedObjects() const {
  if (parts_.empty())
    return {this};
  return parts_;
}

bool LoadedVertexLibrary::checksWrites(const AspenVertexEntry *e) const {
  if (parts_.empty())
    return checksWrites_;
  const LoadedVertexLibrary *part = partOf(e);
  return part && part->checksWrites_;
}

bool LoadedVertexLibrary::usesBuiltins(const AspenVertexEntry *e) const {
  if (parts_.empty())
    return usesBuiltins_;
  const LoadedVertexLibrary *part = partOf(e);
  return part && part->usesBuiltins_;
}

bool LoadedVertexLibrary::countsCycles(const AspenVertexEntry *e) const {
  if (parts_.empty())
    return countsCycles_;
  const LoadedVertexLibrary *part = partOf(e);
  return part && part->countsCycles_;
}

const LoadedVertexLibrary *LoadedVertexLibrary::partOf(const AspenVertexEntry *e) const {
  for (const LoadedVertexLibrary *part : sharedObjects())
    if (part->find(e->name) == e)
      return part;
  return nullptr;
}

void LoadedVertexLibrary::setPrintSink(AspenPrintSink sink, void *context) const {
  if (setSink_)
    setSink_(sink, context);
  for (const LoadedVertexLibrary *part : parts_)
    part->setPrintSink(sink, context);
}

std::vector<ir::VertexTypeInfo> LoadedVertexLibrary::describe() const {
  std::vector<ir::VertexTypeInfo> out;
  out.reserve(count_);
  for (std::size_t i = 0; i < count_; ++i) {
    const AspenVertexEntry &e = *entries_[i];
    ir::VertexTypeInfo v;
    v.name = e.name;
    v.objectSize = e.size;
    v.objectAlign = e.align;
    v.isMultiVertex = (e.flags & ASPEN_VERTEX_MULTI) != 0;
    v.isSupervisor = (e.flags & ASPEN_VERTEX_SUPERVISOR) != 0;
    v.isExternal = (e.flags & ASPEN_VERTEX_EXTERNAL) != 0;
    v.inputsReadOnly = (e.flags & ASPEN_VERTEX_INPUTS_READ_ONLY) != 0;
    for (std::uint32_t k = 0; k < e.numFields; ++k) {
      const AspenFieldEntry &f = e.fields[k];
      ir::FieldInfo info;
      info.name = f.name;
      info.kind = static_cast<ir::FieldKind>(f.kind);
      info.shape = static_cast<ir::FieldShape>(f.shape);
      info.elementType = poplar::Type(static_cast<poplar::Type::Id>(f.elementType));
      info.layout = static_cast<ir::Layout>(f.layout);
      info.outerLayout = static_cast<ir::Layout>(f.outerLayout);
      info.minAlign = f.minAlign;
      info.offset = f.offset;
      info.size = f.size;
      info.isConst = f.isConst != 0;
      v.fields.push_back(std::move(info));
    }
    out.push_back(std::move(v));
  }
  return out;
}

const LoadedVertexLibrary &loadSharedObject(const std::string &soHash, const std::uint8_t *bytes,
                                            std::size_t size, const std::string &nameForMessages) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return loadLocked(r, soHash, bytes, size, nameForMessages);
}

namespace {

/// The metadata a .gp records must be what its shared object says of itself: the
/// graph compiler lays out vertex objects from the metadata, the code reads them as
/// the host compiler laid them out.
void checkMetadataAgainstCode(const GpContents &gp, const LoadedVertexLibrary &lib, const std::string &name) {
  auto mismatch = [&](const std::string &what) {
    throw poplar::graph_object_load_error("Cannot load vertex library '" + name + "': " + what +
                                          " in its metadata disagrees with its shared object (the file was "
                                          "edited or assembled from different libraries)");
  };
  if (gp.metadata.vertexTypes.size() != lib.numEntries())
    mismatch("the number of vertex types (" + std::to_string(gp.metadata.vertexTypes.size()) + " vs " +
             std::to_string(lib.numEntries()) + ")");
  for (const ir::VertexTypeInfo &v : gp.metadata.vertexTypes) {
    const AspenVertexEntry *e = lib.find(v.name);
    const std::string vertex = "vertex type '" + v.name + "'";
    if (!e)
      mismatch(vertex);
    if (e->size != v.objectSize || e->align != v.objectAlign || e->numFields != v.fields.size() ||
        ((e->flags & ASPEN_VERTEX_MULTI) != 0) != v.isMultiVertex ||
        ((e->flags & ASPEN_VERTEX_SUPERVISOR) != 0) != v.isSupervisor ||
        ((e->flags & ASPEN_VERTEX_EXTERNAL) != 0) != v.isExternal ||
        ((e->flags & ASPEN_VERTEX_INPUTS_READ_ONLY) != 0) != v.inputsReadOnly)
      mismatch("the size, alignment, kind, read-only inputs or number of fields of " + vertex);
    for (std::size_t k = 0; k < v.fields.size(); ++k) {
      const ir::FieldInfo &f = v.fields[k];
      const AspenFieldEntry &c = e->fields[k];
      if (f.name != (c.name ? c.name : "") || f.offset != c.offset || f.size != c.size ||
          static_cast<unsigned>(f.kind) != c.kind || static_cast<unsigned>(f.shape) != c.shape ||
          static_cast<unsigned>(f.elementType.id()) != c.elementType ||
          static_cast<unsigned>(f.layout) != c.layout ||
          static_cast<unsigned>(f.outerLayout) != c.outerLayout || f.minAlign != c.minAlign ||
          f.isConst != (c.isConst != 0))
        mismatch("field '" + f.name + "' of " + vertex);
    }
  }
}

} // namespace

const LoadedVertexLibrary &loadVertexLibrary(const std::string &gpHash, const std::uint8_t *gpBytes,
                                             std::size_t size, const std::string &nameForMessages) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.byGp.find(gpHash);
  if (it != r.byGp.end())
    return *it->second;
  const std::string name = describeName(nameForMessages, "vertex library " + gpHash);
  if (contentHash(gpBytes, size) != gpHash)
    throw poplar::graph_object_load_error("Cannot load vertex library '" + name +
                                          "': its bytes do not have the content hash recorded for it (" +
                                          gpHash + "); it changed after it was added to the graph");
  const GpContents gp = decodeGp(gpBytes, size, name);
  // Its shared object has stubs for what it uses and does not define: never run it.
  if (!gp.metadata.undefined.empty())
    throw poplar::graph_object_load_error(
        "Cannot load vertex library '" + name + "' to run it: it uses " +
        std::to_string(gp.metadata.undefined.size()) + " symbols no linked library defined (first '" +
        gp.metadata.undefined.front() + "'); link it with the libraries that define them");
  std::vector<const LoadedVertexLibrary *> parts;
  for (std::size_t p = 0; p < gp.parts.size(); ++p) {
    const std::uint8_t *so = gpBytes + gp.parts[p].offset;
    const std::string soHash = contentHash(so, gp.parts[p].size);
    if (soHash != gp.metadata.sharedObjects[p].hash)
      throw poplar::graph_object_load_error("Cannot load vertex library '" + name + "': shared object " +
                                            std::to_string(p) + " does not match its recorded hash");
    parts.push_back(&loadLocked(r, soHash, so, gp.parts[p].size, name));
  }
  const LoadedVertexLibrary *lib = parts.front();
  if (parts.size() > 1) {
    auto composite = std::make_unique<LoadedVertexLibrary>(parts, gpHash);
    lib = composite.get();
    r.composites.push_back(std::move(composite));
  }
  checkMetadataAgainstCode(gp, *lib, name);
  r.byGp.emplace(gpHash, lib);
  return *lib;
}

const LoadedVertexLibrary &loadVertexLibrary(const std::string &gpHash,
                                             const std::vector<std::uint8_t> &gpBytes,
                                             const std::string &nameForMessages) {
  return loadVertexLibrary(gpHash, gpBytes.data(), gpBytes.size(), nameForMessages);
}

} // namespace aspen::codelets
