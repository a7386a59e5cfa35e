// Copyright (c) Aspen contributors.
#include "codelets/CodeletData.hpp"

#include "codelets/GpFile.hpp"
#include "poplar/exceptions.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace aspen::codelets {

namespace {

/// Reads a T at `offset` of the file, or throws when it does not fit.
template <class T>
T readAt(const std::uint8_t *so, std::size_t size, std::uint64_t offset, const std::string &name) {
  if (offset > size || size - offset < sizeof(T))
    throw poplar::graph_object_load_error("Cannot use vertex library '" + name +
                                          "': its shared object is truncated or not an ELF file");
  T value;
  std::memcpy(&value, so + offset, sizeof(T));
  return value;
}

bool startsWith(const std::string &s, const char *prefix) {
  return s.rfind(prefix, 0) == 0;
}

/// Writable objects the toolchain or Aspen's registration code put in every
/// library: the same on every tile (set while loading, never by a vertex), so
/// no tile needs a copy of them.
bool isSharedByAllTiles(const std::string &symbol) {
  static const char *const exact[] = {"__dso_handle",   "__TMC_END__",  "__cpu_model",      "__cpu_features2",
                                      "_ZStL8__ioinit", "__data_start", "data_start",       "__bss_start",
                                      "_edata",         "_end",         "__stack_chk_guard"};
  for (const char *e : exact)
    if (symbol == e)
      return true;
  return startsWith(symbol, "completed.") || startsWith(symbol, "DW.ref.") ||
         symbol.find("aspen_codelet") != std::string::npos || symbol.find("aspenPrint") != std::string::npos;
}

using Range = std::pair<std::uint64_t, std::uint64_t>; // [first, second)

/// `ranges` less `cut` (both sorted, disjoint).
std::vector<Range> subtract(const std::vector<Range> &ranges, const std::vector<Range> &cut) {
  std::vector<Range> out;
  std::size_t j = 0;
  for (Range r : ranges) {
    while (j < cut.size() && cut[j].second <= r.first)
      ++j;
    std::uint64_t at = r.first;
    for (std::size_t k = j; k < cut.size() && cut[k].first < r.second; ++k) {
      if (cut[k].first > at)
        out.push_back({at, cut[k].first});
      at = std::max(at, cut[k].second);
    }
    if (at < r.second)
      out.push_back({at, r.second});
  }
  return out;
}

/// Sorts and merges overlapping or touching ranges.
std::vector<Range> normalise(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<Range> out;
  for (Range r : ranges) {
    if (r.first >= r.second)
      continue;
    if (!out.empty() && r.first <= out.back().second)
      out.back().second = std::max(out.back().second, r.second);
    else
      out.push_back(r);
  }
  return out;
}

} // namespace

DataLayout analyseWritableData(const std::uint8_t *so, std::size_t size, const std::string &name) {
  auto bad = [&](const std::string &what) {
    return poplar::graph_object_load_error("Cannot use vertex library '" + name + "': " + what);
  };
  const auto eh = readAt<Elf64_Ehdr>(so, size, 0, name);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    throw bad("its shared object is not a 64-bit little-endian ELF file");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || (eh.e_shnum && eh.e_shentsize != sizeof(Elf64_Shdr)))
    throw bad("its shared object has malformed ELF headers");

  // Writable memory: PT_LOAD segments with PF_W, less what is read-only after relocation.
  std::vector<Range> writable, relro;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    const auto ph = readAt<Elf64_Phdr>(so, size, eh.e_phoff + std::uint64_t(i) * sizeof(Elf64_Phdr), name);
    if (ph.p_vaddr > kMaxDataBytes * 1024 || ph.p_memsz > kMaxDataBytes * 1024)
      throw bad("its shared object has a segment beyond any plausible size");
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W))
      writable.push_back({ph.p_vaddr, ph.p_vaddr + ph.p_memsz});
    else if (ph.p_type == PT_GNU_RELRO)
      relro.push_back({ph.p_vaddr, ph.p_vaddr + ph.p_memsz});
  }
  writable = subtract(normalise(writable), normalise(relro));
  DataLayout out;
  if (writable.empty())
    return out;

  // The symbol table names what lies there.
  std::vector<Elf64_Shdr> sections;
  for (unsigned i = 0; i < eh.e_shnum; ++i)
    sections.push_back(
        readAt<Elf64_Shdr>(so, size, eh.e_shoff + std::uint64_t(i) * sizeof(Elf64_Shdr), name));
  const Elf64_Shdr *symtab = nullptr;
  for (const Elf64_Shdr &s : sections)
    if (s.sh_type == SHT_SYMTAB)
      symtab = &s;
  if (!symtab)
    throw bad("its shared object has writable data but no symbol table (it was stripped), so its global and "
              "static variables cannot be told apart to give each tile its own copy; build it without "
              "-s or strip");
  if (symtab->sh_link >= sections.size() || symtab->sh_entsize != sizeof(Elf64_Sym))
    throw bad("its shared object has a malformed symbol table");
  const Elf64_Shdr &strtab = sections[symtab->sh_link];
  if (strtab.sh_offset > size || strtab.sh_size > size - strtab.sh_offset)
    throw bad("its shared object has a malformed string table");
  const char *strings = reinterpret_cast<const char *>(so + strtab.sh_offset);
  auto symbolName = [&](std::uint32_t at) {
    if (at >= strtab.sh_size)
      return std::string();
    const void *end = std::memchr(strings + at, 0, strtab.sh_size - at);
    return end ? std::string(strings + at) : std::string();
  };
  auto inWritable = [&](std::uint64_t a) {
    auto it = std::upper_bound(writable.begin(), writable.end(), Range{a, ~std::uint64_t(0)});
    return it != writable.begin() && a < std::prev(it)->second;
  };

  std::vector<Range> excluded, user;
  const std::uint64_t count = symtab->sh_size / sizeof(Elf64_Sym);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto sym = readAt<Elf64_Sym>(so, size, symtab->sh_offset + i * sizeof(Elf64_Sym), name);
    const unsigned type = ELF64_ST_TYPE(sym.st_info);
    if (sym.st_size == 0 || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
        (type != STT_OBJECT && type != STT_NOTYPE) || !inWritable(sym.st_value))
      continue;
    const Range r{sym.st_value, sym.st_value + sym.st_size};
    const std::string symbol = symbolName(sym.st_name);
    if (isSharedByAllTiles(symbol)) {
      excluded.push_back(r);
    } else {
      user.push_back(r);
      if (out.symbols.size() < 8)
        out.symbols.push_back(symbol);
    }
  }
  if (user.empty())
    return out; // only the toolchain's and Aspen's own: stateless
  const std::vector<Range> runs = subtract(writable, normalise(excluded));
  user = normalise(user);
  std::uint64_t total = 0;
  for (Range r : runs) {
    // Keep a run if some user object lies in it.
    auto it = std::lower_bound(user.begin(), user.end(), Range{r.first, 0});
    const bool holds =
        (it != user.end() && it->first < r.second) || (it != user.begin() && std::prev(it)->second > r.first);
    if (!holds)
      continue;
    total = (total + kDataAlign - 1) / kDataAlign * kDataAlign;
    out.pieces.push_back(
        {r.first, static_cast<std::uint32_t>(r.second - r.first), static_cast<std::uint32_t>(total)});
    total += r.second - r.first;
    if (total > kMaxDataBytes)
      throw bad("its global and static variables take " + std::to_string(total) +
                " bytes or more, more than a tile's memory (variables: " + out.symbols.front() + ", ...)");
  }
  out.bytes = static_cast<std::uint32_t>(total);
  return out;
}

std::uint32_t layOutLibraryData(const std::vector<const DataLayout *> &parts,
                                std::vector<std::uint32_t> &offsets) {
  std::uint64_t total = 0;
  offsets.assign(parts.size(), 0);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (!parts[p] || !parts[p]->stateful())
      continue;
    total = (total + kDataAlign - 1) / kDataAlign * kDataAlign;
    offsets[p] = static_cast<std::uint32_t>(total);
    total += parts[p]->bytes;
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(total, kMaxDataBytes));
}

std::uint32_t libraryDataBytes(const ir::CodeletLibrary &library, const std::string &neededBy) {
  static std::mutex mutex;
  static auto *known = new std::map<std::string, std::uint32_t>; // by content hash; never destroyed
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = known->find(library.contentHash);
    if (it != known->end())
      return it->second;
  }
  const std::vector<std::uint8_t> bytes = readCodeletLibrary(library, neededBy);
  const std::string name = library.origin.empty() ? library.path : library.origin;
  // addCodelets accepted the library; a graph built by other means (a hand-made IR)
  // may hold bytes that are no .gp: it reserves nothing, and loading the executable
  // refuses the library with the reader's own message.
  GpContents gp;
  try {
    gp = decodeGp(bytes.data(), bytes.size(), name);
  } catch (const poplar::graph_object_load_error &) {
    return 0;
  }
  std::vector<DataLayout> layouts;
  try {
    for (const GpContents::Part &part : gp.parts)
      layouts.push_back(analyseWritableData(bytes.data() + part.offset, part.size, name));
  } catch (const poplar::graph_object_load_error &e) {
    throw poplar::graph_object_load_error(std::string(e.what()) + " (needed by " + neededBy + ")");
  }
  std::vector<const DataLayout *> parts;
  for (const DataLayout &d : layouts)
    parts.push_back(&d);
  std::vector<std::uint32_t> offsets;
  const std::uint32_t total = layOutLibraryData(parts, offsets);
  std::lock_guard<std::mutex> lock(mutex);
  known->emplace(library.contentHash, total);
  return total;
}

} // namespace aspen::codelets
