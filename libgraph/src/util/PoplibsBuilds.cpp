// Copyright (c) Aspen contributors.
// One process, one build of the PopLibs libraries (PoplibsBuilds.hpp).
#include "util/PoplibsBuilds.hpp"

#include <poplar/exceptions.hpp>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

namespace aspen::util {
namespace {

// The libraries a PopLibs build has. Aspen builds all but popsparse, poplibs_support and
// poplibs_test (PopLibs' test support, linked by every PopLibs test program), so a loaded
// libpopsparse.so, libpoplibs_support.so or libpoplibs_test.so is always another build's.
const char *const kFamily[] = {"popops",   "poplin",    "popnn",           "poputil",     "poprand",
                               "popfloat", "popsparse", "poplibs_support", "poplibs_test"};

/// "popops" for ".../libpopops.so" or ".../libpopops.so.0.1.0"; nullopt for other objects.
std::optional<std::string> familyName(const std::string &path) {
  const std::string file = std::filesystem::path(path).filename().string();
  for (const char *name : kFamily) {
    const std::string stem = std::string("lib") + name + ".so";
    if (file == stem || file.rfind(stem + ".", 0) == 0)
      return std::string(name);
  }
  return std::nullopt;
}

struct LoadedObject {
  std::string path;
  std::uintptr_t begin = 0, end = 0; // the address range of its loaded segments
  std::string soname;                // DT_SONAME, if any
  std::vector<std::string> needed;   // DT_NEEDED entries, as the object was linked
};

/// Reads DT_SONAME and DT_NEEDED from the object's dynamic section in memory. glibc relocates the
/// section's address entries in place on x86-64 and AArch64; an entry still below the load base
/// is an unrelocated offset and is rebased here.
void readDynamicNames(const dl_phdr_info *info, const ElfW(Phdr) & dynamicHeader, LoadedObject &o) {
  const auto *dyn = reinterpret_cast<const ElfW(Dyn) *>(info->dlpi_addr + dynamicHeader.p_vaddr);
  std::uintptr_t strtab = 0;
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_STRTAB)
      strtab = d->d_un.d_ptr;
  if (!strtab)
    return;
  if (strtab < info->dlpi_addr)
    strtab += info->dlpi_addr;
  const char *strings = reinterpret_cast<const char *>(strtab);
  for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_NEEDED)
      o.needed.emplace_back(strings + d->d_un.d_val);
    else if (d->d_tag == DT_SONAME)
      o.soname = strings + d->d_un.d_val;
  }
}

int collect(dl_phdr_info *info, std::size_t size, void *out) {
  auto &objects = *static_cast<std::vector<LoadedObject> *>(out);
  (void)size;
  LoadedObject o;
  const bool program = objects.empty(); // the first entry is the program itself, named ""
  if (!info->dlpi_name || !*info->dlpi_name) {
    if (!program)
      return 0; // the vDSO
    std::error_code ec;
    o.path = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (o.path.empty())
      o.path = "the program";
  } else {
    o.path = info->dlpi_name;
  }
  o.begin = UINTPTR_MAX;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto &ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC)
      readDynamicNames(info, ph, o);
    if (ph.p_type != PT_LOAD)
      continue;
    o.begin = std::min<std::uintptr_t>(o.begin, info->dlpi_addr + ph.p_vaddr);
    o.end = std::max<std::uintptr_t>(o.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
  }
  objects.push_back(std::move(o));
  return 0;
}

/// Whether the object defines Aspen's marker for `name` itself (not through a dependency).
bool definesAspenMarker(const LoadedObject &object, const std::string &name) {
  void *handle = ::dlopen(object.path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!handle)
    return false;
  const void *marker = ::dlsym(handle, ("aspen_library_" + name).c_str());
  ::dlclose(handle);
  const auto at = reinterpret_cast<std::uintptr_t>(marker);
  return marker && at >= object.begin && at < object.end;
}

/// An object that needs a PopLibs-family library by another build's SONAME while Aspen's was loaded.
struct ForeignLink {
  std::string object, needed;
  PoplibsLibrary loaded;
};

std::mutex cacheMutex;
unsigned long long cachedAdds = ~0ull, cachedSubs = ~0ull;
std::vector<PoplibsLibrary> cached;
std::optional<ForeignLink> cachedForeignLink;

int counters(dl_phdr_info *info, std::size_t size, void *out) {
  auto *c = static_cast<std::pair<unsigned long long, unsigned long long> *>(out);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
    *c = {info->dlpi_adds, info->dlpi_subs};
  return 1; // the counters are the same in every entry
}

std::string describe(const PoplibsLibrary &l) {
  return "lib" + l.name + ".so (" + l.path + ", " +
         (l.aspens ? "Aspen's" : "not Aspen's: PopLibs built from source?") + ")";
}

std::string canonical(const std::string &path) {
  std::error_code ec;
  const auto c = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : c.string();
}

const char *kAdvice =
    "A program uses one build of PopLibs: Aspen's libraries with Aspen's .gp files, or PopLibs "
    "built from source with its own; link one set, and put only its library directory on "
    "LD_LIBRARY_PATH (docs/poplibs-from-source.md, \"Which PopLibs a program uses\")";

} // namespace

namespace {

/// Rescans the loaded objects when their set changed; call with cacheMutex held.
void rescanLocked() {
  std::pair<unsigned long long, unsigned long long> now{~0ull, ~0ull};
  ::dl_iterate_phdr(counters, &now);
  if (now.first != ~0ull && now.first == cachedAdds && now.second == cachedSubs)
    return;
  std::vector<LoadedObject> objects;
  ::dl_iterate_phdr(collect, &objects);
  std::vector<PoplibsLibrary> found;
  for (const LoadedObject &o : objects) {
    if (auto name = familyName(o.path))
      found.push_back({*name, o.path, definesAspenMarker(o, *name), o.soname});
  }
  // A DT_NEEDED entry names the SONAME of the library the object was linked against. Aspen's
  // libraries are lib<lib>.so.0; PopLibs' own build gives plain lib<lib>.so. An object that needs
  // the plain name but got Aspen's library was linked against another build.
  std::optional<ForeignLink> foreignLink;
  for (const LoadedObject &o : objects) {
    for (const std::string &needed : o.needed) {
      const auto name = familyName(needed);
      if (!name)
        continue;
      for (const PoplibsLibrary &l : found)
        if (l.name == *name && l.aspens && !l.soname.empty() && l.soname != needed && !foreignLink)
          foreignLink = ForeignLink{o.path, needed, l};
    }
  }
  cached = std::move(found);
  cachedForeignLink = std::move(foreignLink);
  cachedAdds = now.first;
  cachedSubs = now.second;
}

} // namespace

std::vector<PoplibsLibrary> loadedPoplibsLibraries() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  rescanLocked();
  return cached;
}

void checkOnePoplibsBuild(const std::string &operation) {
  const auto libraries = loadedPoplibsLibraries();
  const auto aspens =
      std::find_if(libraries.begin(), libraries.end(), [](const auto &l) { return l.aspens; });
  const auto other =
      std::find_if(libraries.begin(), libraries.end(), [](const auto &l) { return !l.aspens; });
  if (aspens != libraries.end() && other != libraries.end())
    throw poplar::poplar_error(operation + ": this process has loaded PopLibs libraries of two builds, " +
                               describe(*aspens) + " and " + describe(*other) + ". " + kAdvice);
  std::optional<ForeignLink> link;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    link = cachedForeignLink;
  }
  if (link)
    throw poplar::poplar_error(
        operation + ": " + link->object + " was linked against another build of lib" + link->loaded.name +
        ".so (it needs '" + link->needed + "'; Aspen's is '" + link->loaded.soname +
        "'), but the dynamic loader gave it " + describe(link->loaded) +
        ": PopLibs built from source run with Aspen's lib/ ahead of its own on LD_LIBRARY_PATH? " + kAdvice);
}

void checkVertexLibraryBuild(const std::string &gpPath, const std::string &operation) {
  const std::string file = std::filesystem::path(gpPath).filename().string();
  if (file.size() < 4 || file.compare(file.size() - 3, 3, ".gp") != 0)
    return;
  const std::string name = file.substr(0, file.size() - 3);
  if (!familyName("lib" + name + ".so"))
    return;
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  const std::string gp = canonical(gpPath);
  for (const char *var : {"ASPEN_", "IPU_"}) {
    const char *override = std::getenv((var + upper + "_GP").c_str());
    if (override && *override && canonical(override) == gp)
      return;
  }
  for (const PoplibsLibrary &l : loadedPoplibsLibraries()) {
    if (l.name != name)
      continue;
    const std::string dir = std::filesystem::path(canonical(l.path)).parent_path().string();
    if (std::filesystem::path(gp).parent_path().string() == dir)
      return;
    throw poplar::poplar_error(operation + ": " + gpPath + " is the vertex library of another build of " +
                               name + " than the " + describe(l) + " this process loaded, whose " + file +
                               " is the one beside it (" + dir + "/" + file + "). " + kAdvice);
  }
}

} // namespace aspen::util
