// Copyright (c) Aspen contributors.
#include "codelets/CodeletCompiler.hpp"

#include "cache/CacheFiles.hpp"

#include "codelets/CodeletCache.hpp"
#include "codelets/ContentHash.hpp"
#include "codelets/EmbeddedFiles.hpp"
#include "codelets/Introspect.hpp"
#include "codelets/RegistrationUnit.hpp"
#include "codelets/VertexLibrary.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"
#include "util/TerminalProgress.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace aspen::codelets {

namespace {

std::string absolutePath(const std::string &path) {
  if (!path.empty() && path[0] == '/')
    return path;
  char buffer[4096];
  const char *cwd = ::getcwd(buffer, sizeof buffer);
  return std::string(cwd ? cwd : ".") + "/" + path;
}

std::string shellQuote(const std::string &arg) {
  std::string out = "'";
  for (char ch : arg) {
    if (ch == '\'')
      out += "'\\''";
    else
      out += ch;
  }
  return out + "'";
}

/// Runs `command` through the shell; returns its exit status and output (stdout and stderr).
int runCommand(const std::string &command, std::string &output) {
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    output.append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// Drops the lines that only point into the generated units ("In file included
/// from .../unit0.cpp:2:"), so that diagnostics name the user's files.
std::string cleanDiagnostics(const std::string &output, const std::string &workDir) {
  std::string out;
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t end = output.find('\n', pos);
    if (end == std::string::npos)
      end = output.size();
    const std::string line = output.substr(pos, end - pos);
    if (!(line.rfind("In file included from " + workDir, 0) == 0))
      out += line + "\n";
    pos = end + 1;
  }
  return out;
}

void removeDirectory(const std::string &dir) {
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..")
        ::unlink((dir + "/" + name).c_str());
    }
    ::closedir(d);
  }
  ::rmdir(dir.c_str());
}

std::string makeWorkDir(const std::string &root) {
  static std::atomic<unsigned> counter{0};
  const std::string tmpRoot = root + "/tmp";
  // `<pid>-<n>-<random>`: the pid tells removeDeadWriterLeftovers whose it is; mkdtemp makes
  // it exclusively (never a directory someone planted) and unpredictably.
  const std::string dir = makeDirectories(tmpRoot)
                              ? aspen::cache::makeTempDirectory(tmpRoot, std::to_string(::getpid()) + "-" +
                                                                             std::to_string(counter++) + "-")
                              : std::string();
  if (dir.empty())
    throw poplar::graph_object_creation_error("Cannot create a work directory for the codelet compiler in '" +
                                              tmpRoot + "'");
  return dir;
}

std::vector<std::string> splitFlags(std::string_view text) {
  std::vector<std::string> out;
  std::string current;
  bool inToken = false;
  char quote = 0;
  for (char ch : text) {
    if (quote) {
      if (ch == quote)
        quote = 0;
      else
        current += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      inToken = true;
    } else if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      if (inToken)
        out.push_back(current);
      current.clear();
      inToken = false;
    } else {
      current += ch;
      inToken = true;
    }
  }
  if (inToken)
    out.push_back(current);
  return out;
}

/// The arguments every codelet compile gets before the user's (see docs/codelets.md,
/// "The dialect"). Both compilers: no floating-point contraction (`b + q * c` rounds
/// twice, as a host reference written the same way). Clang >= 16: each `half`
/// operation rounds to half, not to float at the end of the expression. GCC:
/// `-fno-gnu-unique` (a template's static data stays local to its library, as
/// RTLD_LOCAL promises) and `-fpermissive`, whose warnings are errors again except
/// "changes meaning" (see permissiveErrors).
std::vector<std::string> fixedArgs(bool userGaveStd, int clangMajor) {
  std::vector<std::string> args;
  if (!userGaveStd)
    args.push_back("-std=c++17");
  for (const char *a : {"-O2", "-fPIC", "-shared", "-mavx2", "-mfma", "-mf16c", "-fvisibility=hidden"})
    args.push_back(a);
  args.push_back("-ffp-contract=off");
  if (clangMajor >= 16)
    for (const char *a : {"-Xclang", "-ffloat16-excess-precision=none"})
      args.push_back(a);
  if (clangMajor == 0)
    for (const char *a : {"-fno-gnu-unique", "-fpermissive"})
      args.push_back(a);
  // relro + now: the GOT is read-only once loaded, so a library's writable
  // memory is its data alone (what each tile gets a copy of, CodeletData.hpp).
  for (const char *a : {"-Wno-attributes", "-Wl,-z,defs", "-Wl,-z,relro", "-Wl,-z,now", "-D__POPC__"})
    args.push_back(a);
  args.push_back("-isystem");
  args.push_back(embeddedIncludeDir());
  return args;
}

/// The lines of a compiler's `output` that `keep` selects, each with its newline.
template <class Keep> std::string linesWhere(const std::string &output, Keep keep) {
  std::string lines;
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t end = output.find('\n', pos);
    if (end == std::string::npos)
      end = output.size();
    const std::string line = output.substr(pos, end - pos);
    if (keep(line))
      lines += line + "\n";
    pos = end + 1;
  }
  return lines;
}

bool has(const std::string &line, const char *text) {
  return line.find(text) != std::string::npos;
}

/// GCC rejects a class member declaration that "changes meaning" of a name used
/// earlier in the class ([basic.scope.class], no diagnostic required); clang, and so
/// Poplar's popc, accepts it. -fpermissive makes it a warning, and every other
/// diagnostic that -fpermissive downgraded: those are errors here, as without it.
std::string permissiveErrors(const std::string &output) {
  return linesWhere(output, [](const std::string &line) {
    return has(line, "warning: ") && has(line, "[-fpermissive]") && !has(line, "changes meaning");
  });
}

/// The -Wdouble-promotion warnings of `output` that are not half -> float: errors, as
/// the user's -Werror asked (see compileCodelets).
std::string doublePromotionErrors(const std::string &output) {
  return linesWhere(output, [](const std::string &line) {
    return has(line, "warning: ") && has(line, "[-Wdouble-promotion]") &&
           !has(line, "_Float16' to 'float'") && !has(line, "_Float16') to 'float'");
  });
}

/// Whether a C++ name as the introspection spelled it can name the type in the
/// generated unit: no empty template argument (`Foo<float,>`), balanced brackets.
bool wellFormedTypeName(const std::string &name) {
  if (name.empty())
    return false;
  int depth = 0;
  char previous = 0;
  for (char ch : name) {
    if (ch == '<')
      ++depth;
    if (ch == '>' && --depth < 0)
      return false;
    if ((ch == ',' || ch == '>') && (previous == '<' || previous == ','))
      return false;
    previous = ch;
  }
  return depth == 0;
}

/// The vertex types whose generated lines the diagnostics point at
/// ("<workDir>/unit3.cpp:17:..."): the ones that could not be registered.
std::set<std::string> verticesNamedByDiagnostics(const std::string &output, const std::string &workDir,
                                                 const std::vector<std::string> &unitTexts,
                                                 const std::vector<std::vector<std::string>> &unitVertices) {
  std::set<std::string> names;
  for (std::size_t u = 0; u < unitTexts.size(); ++u) {
    const std::string marker = workDir + "/unit" + std::to_string(u) + ".cpp:";
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (pos <= unitTexts[u].size()) {
      std::size_t end = unitTexts[u].find('\n', pos);
      if (end == std::string::npos)
        end = unitTexts[u].size();
      lines.push_back(unitTexts[u].substr(pos, end - pos));
      pos = end + 1;
    }
    for (std::size_t at = output.find(marker); at != std::string::npos; at = output.find(marker, at + 1)) {
      const std::size_t line = std::strtoul(output.c_str() + at + marker.size(), nullptr, 10);
      if (line == 0 || line > lines.size())
        continue;
      const std::string &text = lines[line - 1];
      for (const std::string &v : unitVertices[u])
        if (text.find(" " + v + ",") != std::string::npos || text.find("(" + v + ")") != std::string::npos ||
            text.find("<" + v + ">") != std::string::npos ||
            text.find("\"" + v + "\"") != std::string::npos || text.find("&" + v + "::") != std::string::npos)
          names.insert(v);
    }
  }
  return names;
}

std::string joinNames(const std::set<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

/// A relocatable object to link and the name messages give it ("a.cpp", "lib.gp(a.cpp)").
struct ObjectFile {
  std::string path;
  std::string name;
};

/// The symbols whose presence in an object's symbol table (defined or referenced) decides what
/// the entry unit of its library defines (linkObjects): bit i of ObjectSymbols::linkNames.
constexpr const char *kLinkFlagNames[] = {
    "aspen_codelet_cycle_offset",       // counting cycles (docs/cost-model.md)
    "aspen_codelet_write_checked",      // checking writes (docs/tile-model.md)
    "aspen_codelet_write_range_offset", // ... too
    "aspen_codelet_runtime",            // calling an IPU builtin backed by the runtime
    "aspen_codelet_scount",             // ... too
};
enum LinkFlagName : unsigned { kCycleOffset, kWriteChecked, kWriteRangeOffset, kRuntime, kScount };

/// What a relocatable object's symbol table says of it (docs/exchange.md, "Reading in place").
struct ObjectSymbols {
  bool symbolTable = false;       // it is an ELF64 relocatable object and its symbol table was read
  std::vector<std::string> units; // tokens of the registration units it defines
  bool inputsReadOnly = false;    // it defines aspen_codelet_inputs_read_only, non-zero
  std::uint32_t linkNames = 0;    // bit i: its table names kLinkFlagNames[i] (defined or not)
};

/// Reads the symbol table of `bytes`, a 64-bit little-endian ELF relocatable object (as the
/// host compiler makes them, or as a .gp carries them: anyone's bytes, so every offset is
/// checked; anything malformed or of another kind says nothing). A symbol counts only where
/// the object defines it (global or weak, in one of its sections): a mention in a string,
/// a comment or debug information, or a reference to another object's definition, does not.
/// `linkNames` counts references too (an object that uses the slot another defines), but
/// still never a mention outside the symbol table.
ObjectSymbols readObjectSymbols(const std::string &bytes) {
  ObjectSymbols out;
  const std::uint8_t *const data = reinterpret_cast<const std::uint8_t *>(bytes.data());
  const std::size_t size = bytes.size();
  auto fits = [&](std::uint64_t offset, std::uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  Elf64_Ehdr eh;
  if (!fits(0, sizeof eh))
    return out;
  std::memcpy(&eh, data, sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_REL || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      !fits(eh.e_shoff, std::uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr)))
    return out;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  if (eh.e_shnum)
    std::memcpy(sections.data(), data + eh.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  constexpr char kUnitPrefix[] = "aspen_codelet_unit_entries_";
  constexpr char kReadOnly[] = "aspen_codelet_inputs_read_only";
  for (const Elf64_Shdr &symtab : sections) {
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_entsize != sizeof(Elf64_Sym) ||
        symtab.sh_link >= sections.size() || !fits(symtab.sh_offset, symtab.sh_size))
      continue;
    const Elf64_Shdr &strtab = sections[symtab.sh_link];
    if (strtab.sh_type != SHT_STRTAB || !fits(strtab.sh_offset, strtab.sh_size))
      continue;
    const char *const strings = reinterpret_cast<const char *>(data + strtab.sh_offset);
    out.symbolTable = true;
    for (std::uint64_t i = 0; i < symtab.sh_size / sizeof(Elf64_Sym); ++i) {
      Elf64_Sym sym;
      std::memcpy(&sym, data + symtab.sh_offset + i * sizeof(Elf64_Sym), sizeof sym);
      const unsigned binding = ELF64_ST_BIND(sym.st_info), type = ELF64_ST_TYPE(sym.st_info);
      if (sym.st_name == 0 || sym.st_name >= strtab.sh_size ||
          !std::memchr(strings + sym.st_name, 0, strtab.sh_size - sym.st_name))
        continue;
      const std::string_view name(strings + sym.st_name);
      if (name.size() > 14 && name.compare(0, 14, "aspen_codelet_") == 0)
        for (unsigned f = 0; f < std::size(kLinkFlagNames); ++f)
          if (name == kLinkFlagNames[f])
            out.linkNames |= 1u << f;
      if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size() ||
          (binding != STB_GLOBAL && binding != STB_WEAK))
        continue;
      if (type == STT_FUNC) {
        // A unit's entry function is C++ (RegistrationUnit.cpp): "_Z<length><name><parameters>".
        std::string_view id;
        std::size_t length = 0, at = 2;
        if (name.substr(0, 2) == "_Z") {
          for (; at < name.size() && name[at] >= '0' && name[at] <= '9' && length < name.size(); ++at)
            length = length * 10 + static_cast<std::size_t>(name[at] - '0');
          if (length <= name.size() - at)
            id = name.substr(at, length);
        }
        if (id.size() > sizeof kUnitPrefix - 1 && id.substr(0, sizeof kUnitPrefix - 1) == kUnitPrefix)
          out.units.emplace_back(id.substr(sizeof kUnitPrefix - 1));
      } else if (type == STT_OBJECT && name == kReadOnly) {
        // Its value, from the section's bytes: 0 (or a .bss definition) declares nothing.
        const Elf64_Shdr &in = sections[sym.st_shndx];
        if (in.sh_type != SHT_PROGBITS || sym.st_size == 0 || sym.st_value > in.sh_size ||
            sym.st_size > in.sh_size - sym.st_value || !fits(in.sh_offset + sym.st_value, sym.st_size))
          continue;
        const std::uint8_t *value = data + in.sh_offset + sym.st_value;
        out.inputsReadOnly = std::any_of(value, value + sym.st_size, [](std::uint8_t b) { return b != 0; });
      }
    }
  }
  return out;
}

struct LinkedObjects {
  int status = 0;
  std::string output;                 // the linker's messages, objects named as the user knows them
  std::string soPath;                 // the shared object (when status is 0)
  std::vector<std::string> undefined; // mangled symbols no object defines (stubbed in soPath)
};

/// The symbols of a GNU linker's "undefined reference to `X'" lines, each once.
std::vector<std::string> undefinedReferences(const std::string &output) {
  std::set<std::string> seen;
  std::vector<std::string> out;
  const std::string marker = "undefined reference to `";
  for (std::size_t at = output.find(marker); at != std::string::npos; at = output.find(marker, at + 1)) {
    const std::size_t begin = at + marker.size();
    const std::size_t end = output.find('\'', begin);
    if (end == std::string::npos)
      break;
    const std::string symbol = output.substr(begin, end - begin);
    if (seen.insert(symbol).second)
      out.push_back(symbol);
  }
  return out;
}

/// Whether `symbol` can be written in an assembler directive as it is.
bool plainSymbol(const std::string &symbol) {
  return !symbol.empty() && symbol.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz"
                                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ_.$") == std::string::npos;
}

std::string replaceAll(std::string text, const std::string &from, const std::string &to) {
  if (from.empty())
    return text;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/// A fresh work directory under the codelet cache, removed however the compile ends: an
/// exception, or (in popc) SIGINT or SIGTERM.
class ScopedWorkDir {
public:
  ScopedWorkDir() : dir_(makeWorkDir(codeletWorkRoot())) { registerWorkDir(dir_); }
  ~ScopedWorkDir() {
    unregisterWorkDir(dir_);
    removeDirectory(dir_);
  }
  ScopedWorkDir(const ScopedWorkDir &) = delete;
  ScopedWorkDir &operator=(const ScopedWorkDir &) = delete;
  const std::string &path() const { return dir_; }

private:
  std::string dir_;
};

/// Links `objects` and the entry unit of `unitTokens` into `<workDir>/codelets.so`, as
/// the IPU linker makes one image of them: a function one object defines, another
/// calls; a symbol two define is the linker's error, naming both (by their `name`s).
/// Symbols no object defines are not an error here: they are listed in `undefined`
/// and given stubs, so that the vertex types can be described; such a shared object
/// must never run (docs/codelets.md, "Linking").
LinkedObjects linkObjects(const std::string &cxx, const std::vector<ObjectFile> &objects,
                          const std::vector<std::string> &unitTokens, const std::string &workDir,
                          const std::vector<std::string> &linkFlags) {
  LinkedObjects r;
  const std::string entrySource = workDir + "/entry.cpp", entryObject = workDir + "/entry.o";
  // What the objects need of the entry unit, from the symbols they name (each object read once).
  bool counting = false, checking = false, builtins = false;
  std::set<std::string> readOnlyUnits;
  for (const ObjectFile &o : objects) {
    std::ifstream in(o.path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Trust is per object, from its symbol table (docs/exchange.md, "Reading in place"): the
    // vertex types of the registration units an object defines read their Inputs only if
    // that same object defines the declaration. No mention of the name elsewhere counts.
    const ObjectSymbols symbols = readObjectSymbols(bytes);
    if (symbols.inputsReadOnly)
      readOnlyUnits.insert(symbols.units.begin(), symbols.units.end());
    // The flags below, from the names in its symbol table (defined or referenced): a string
    // equal to one in a data section is no reference. An object whose table cannot be read
    // (not ELF64) is searched for the names anywhere in its bytes, so a reference is never
    // missed (that would stub a symbol the code uses); that errs towards more work only.
    auto names = [&](LinkFlagName f) {
      return symbols.symbolTable ? (symbols.linkNames >> f & 1u) != 0
                                 : bytes.find(kLinkFlagNames[f]) != std::string::npos;
    };
    // Objects compiled counting cycles add to the slot the entry unit gives the library; the
    // loader tells the library where its thread's counter is (docs/cost-model.md).
    counting = counting || names(kCycleOffset);
    // Objects compiled with the write check (not under ASPEN_WRITE_CHECK=0) read the tile range
    // the entry unit's setter is given; only then does the library export it, so the loader
    // learns the truth about which code checks its writes (docs/tile-model.md).
    checking = checking || names(kWriteChecked) || names(kWriteRangeOffset);
    // Objects calling an IPU builtin backed by the runtime refer to the table slot or the
    // counter reading the entry unit defines; only then does the library export the table's
    // setter, so the loader learns which libraries' vertices need the executor's per-call
    // record for the builtins (docs/codelets.md, "IPU builtins backed by the runtime").
    builtins = builtins || names(kRuntime) || names(kScount);
  }
  std::vector<std::uint32_t> unitFlags;
  for (const std::string &token : unitTokens)
    unitFlags.push_back(readOnlyUnits.count(token) ? ASPEN_VERTEX_INPUTS_READ_ONLY : 0u);
  const std::string entryText = generateEntryUnit(unitTokens, unitFlags);
  if (!writeFileAtomic(entrySource, entryText.data(), entryText.size())) {
    r.status = 1;
    r.output = "error: cannot write '" + entrySource + "'\n";
    return r;
  }
  std::string command = cxx + " -std=c++17 -O2 -fPIC -fvisibility=hidden -isystem " +
                        shellQuote(embeddedIncludeDir()) +
                        (counting ? std::string(" -D") + kCycleCountMacro + "=1" : std::string()) +
                        (checking ? std::string(" -D") + kWriteCheckMacro + "=1" : std::string()) +
                        (builtins ? std::string(" -D") + kTileBuiltinsMacro + "=1" : std::string()) + " -c " +
                        shellQuote(entrySource) + " -o " + shellQuote(entryObject);
  if ((r.status = runCommand(command, r.output)) != 0) {
    r.output = "error: cannot compile the vertex library's entry unit:\n" + r.output;
    return r;
  }
  r.output.clear();
  r.soPath = workDir + "/codelets.so";
  auto link = [&](const std::string &extra, std::string &out) {
    // relro + now: the GOT is read-only once loaded, so a library's writable
    // memory is its data alone (what each tile gets a copy of, CodeletData.hpp).
    std::string c = cxx + " -shared -fPIC -Wl,-z,defs -Wl,-z,relro -Wl,-z,now" + extra;
    for (const std::string &f : linkFlags)
      c += " " + shellQuote(f);
    for (const ObjectFile &o : objects)
      c += " " + shellQuote(o.path);
    c += " " + shellQuote(entryObject) + " -o " + shellQuote(r.soPath);
    ASPEN_LOG(Debug, "codelet link: " << c);
    return runCommand(c, out);
  };
  std::string out;
  r.status = link("", out);
  if (r.status != 0 && out.find("undefined reference to `") != std::string::npos &&
      out.find("multiple definition of") == std::string::npos) {
    // Defined by a library this one is linked with later (popc with .gp inputs, or
    // Graph::addCodelets): record them, and stub them to describe the vertex types.
    std::string mangled;
    link(" -Wl,--no-demangle", mangled);
    std::vector<std::string> undefined = undefinedReferences(mangled);
    bool plain = !undefined.empty();
    std::string stubs = ".text\n.p2align 4\n";
    for (const std::string &sym : undefined) {
      plain = plain && plainSymbol(sym);
      stubs += ".weak " + sym + "\n.hidden " + sym + "\n.type " + sym + ",@function\n" + sym + ":\n";
    }
    stubs += "xorl %eax, %eax\nret\n.section .note.GNU-stack,\"\",@progbits\n";
    const std::string stubSource = workDir + "/stubs.s", stubObject = workDir + "/stubs.o";
    std::string stubOutput;
    if (plain && writeFileAtomic(stubSource, stubs.data(), stubs.size()) &&
        runCommand(cxx + " -c -x assembler " + shellQuote(stubSource) + " -o " + shellQuote(stubObject),
                   stubOutput) == 0 &&
        link(" " + shellQuote(stubObject), stubOutput) == 0) {
      r.status = 0;
      r.undefined = std::move(undefined);
      out.clear();
    }
  }
  r.output = out;
  for (const ObjectFile &o : objects)
    r.output = replaceAll(r.output, o.path, o.name);
  r.output = replaceAll(r.output, entryObject, "<entry unit>");
  return r;
}

/// "symbol 'f(int)' is defined by both 'a.cpp' and 'b.cpp'" for each symbol the
/// linker's `output` says is defined twice, naming the objects by `objects`' names.
std::string duplicateSymbols(const std::string &output, const std::vector<ObjectFile> &objects) {
  std::string out;
  std::set<std::string> seen;
  const std::string marker = "multiple definition of `";
  for (std::size_t at = output.find(marker); at != std::string::npos; at = output.find(marker, at + 1)) {
    const std::size_t begin = at + marker.size();
    const std::size_t end = output.find('\'', begin);
    if (end == std::string::npos)
      break;
    const std::string symbol = output.substr(begin, end - begin);
    // The objects named on this line and the one before ("obj: in function `f':").
    std::size_t from = output.rfind('\n', at);
    from = from == std::string::npos || from == 0 ? 0 : output.rfind('\n', from - 1);
    from = from == std::string::npos ? 0 : from;
    std::size_t to = output.find('\n', end);
    to = to == std::string::npos ? output.size() : to;
    std::vector<std::pair<std::size_t, std::string>> named;
    for (const ObjectFile &o : objects)
      for (std::size_t p = output.find(o.name + ":", from); p != std::string::npos && p < to;
           p = output.find(o.name + ":", p + 1))
        if (p == 0 || output[p - 1] == ' ' || output[p - 1] == '\n' || output[p - 1] == ';')
          named.push_back({p, o.name});
    std::sort(named.begin(), named.end());
    std::vector<std::string> files;
    for (const auto &n : named)
      if (std::find(files.begin(), files.end(), n.second) == files.end())
        files.push_back(n.second);
    if (!seen.insert(symbol).second)
      continue;
    out += (out.empty() ? "" : "; ") + std::string("symbol '") + symbol + "' is defined by " +
           (files.size() >= 2 ? "both '" + files[0] + "' and '" + files[1] + "'" : "two objects");
  }
  return out;
}

/// Link flags among the compile flags (sanitizers need their runtimes at link time).
std::vector<std::string> linkFlagsOf(const std::vector<std::string> &args) {
  std::vector<std::string> out;
  for (const std::string &a : args)
    if (a.rfind("-fsanitize", 0) == 0 || a.rfind("-fno-sanitize", 0) == 0 || a.rfind("-Wl,", 0) == 0)
      if (a != "-Wl,-z,defs" && a != "-Wl,-z,relro" && a != "-Wl,-z,now")
        out.push_back(a);
  return out;
}

} // namespace

std::string extensionOf(const std::string &path) {
  const std::size_t slash = path.rfind('/');
  const std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return "";
  return path.substr(dot);
}

SourceLanguage languageOf(const std::string &path) {
  const std::string ext = extensionOf(path);
  if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".c++" || ext == ".C" || ext == ".cp")
    return SourceLanguage::Cpp;
  if (ext == ".c")
    return SourceLanguage::C;
  if (ext == ".S" || ext == ".s" || ext == ".asm")
    return SourceLanguage::Assembly;
  return SourceLanguage::Unknown;
}

namespace {
bool onPath(const std::string &program) {
  const char *path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t colon = dirs.find(':', start);
    if (colon == std::string::npos)
      colon = dirs.size();
    const std::string dir = colon > start ? dirs.substr(start, colon - start) : ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0)
      return true;
    start = colon + 1;
  }
  return false;
}
} // namespace

std::string hostCompiler() {
  const char *cxx = std::getenv("ASPEN_CXX");
  if (cxx && *cxx)
    return cxx;
  // Graphcore's popc is clang: clang 16 (or 15) gives its dialect natively, _Float16
  // for half included. Without either, GCC, with `half` a class (docs/codelets.md).
  static const std::string chosen = [] {
    for (const char *candidate : {"clang++-16", "clang++-15"})
      if (onPath(candidate))
        return std::string(candidate);
    ASPEN_LOG(Warn, "codelets are compiled with g++: clang++-16 (Debian package clang-16) is not installed, "
                    "so clang's dialect of Graphcore's popc (vector types, a built-in half) is missing");
    return std::string("g++");
  }();
  return chosen;
}

bool hostCompilerIsClang(const std::string &cxx) {
  return clangMajorVersion(cxx) != 0;
}

int clangMajorVersion(const std::string &cxx) {
  const std::string &id = compilerIdentity(cxx);
  const std::size_t at = id.find("clang version ");
  if (at == std::string::npos)
    return 0;
  const int major = std::atoi(id.c_str() + at + 14);
  return major > 0 ? major : 1;
}

std::string cycleCountPlugin(const std::string &cxx) {
  const int major = clangMajorVersion(cxx);
  static const std::string plugin = [] {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<const void *>(&cycleCountPlugin), &info) == 0 || !info.dli_fname)
      return std::string();
    std::string path = info.dli_fname;
    const std::size_t slash = path.rfind('/');
    path = (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/aspen-cyclecount.so";
    return ::access(path.c_str(), R_OK) == 0 ? path : std::string();
  }();
  // ASPEN_CYCLE_COUNT=0: compile without counting (docs/cost-model.md).
  const char *setting = std::getenv("ASPEN_CYCLE_COUNT");
  const bool off = setting && std::string(setting) == "0";
  if (major == 16 && !plugin.empty() && !off)
    return plugin;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    ASPEN_LOG(Warn, "codelets compiled with "
                        << cxx << " do not count their cycles nor check their writes into other tiles ("
                        << (off           ? "ASPEN_CYCLE_COUNT=0"
                            : major != 16 ? "the cycle-counting plugin needs clang++-16"
                                          : "aspen-cyclecount.so is not beside libpoplar")
                        << "): custom vertices without an estimate are priced by the "
                           "default estimate and named as not counted when they run "
                           "(docs/cost-model.md); aspen.checkTileWrites checks their writes "
                           "(docs/tile-model.md)");
  });
  return std::string();
}

namespace {

const char *const kKnownTargets[] = {"ipu1", "ipu2", "ipu21", "cpu", "ipumodel"};

void checkTarget(const std::string &arch, const std::string &list) {
  for (const char *known : kKnownTargets)
    if (arch == known)
      return;
  throw poplar::graph_object_creation_error("Unknown codelet target '" + arch + "' in '" + list +
                                            "' (targets: ipu1, ipu2, ipu21, cpu, ipumodel)");
}

/// Adds the targets of a `--target` value: "ipu2,cpu", or popc's JSON list
/// (`["ipu2", {"name": "ipu2:cpp", "arch": "ipu2", "compile-flags": ["-DX"]}]`), whose
/// compile flags apply to the compile (every target runs the same host code, so the
/// flags of every target listed are applied, each once).
void addTargets(CodeletFlags &flags, const std::string &list) {
  const std::size_t first = list.find_first_not_of(" \t");
  if (first == std::string::npos || (list[first] != '[' && list[first] != '{')) {
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = list.find(',', start);
      const std::string t =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!t.empty()) {
        checkTarget(t.substr(0, t.find(':')), list);
        flags.targets.push_back(t);
      }
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    return;
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(list);
  } catch (const nlohmann::json::exception &e) {
    throw poplar::graph_object_creation_error("Codelet target list '" + list +
                                              "' is not valid JSON: " + e.what());
  }
  if (doc.is_object())
    doc = nlohmann::json::array({doc});
  std::vector<std::string> targetFlags;
  for (const nlohmann::json &t : doc) {
    std::string name, arch;
    if (t.is_string()) {
      name = arch = t.get<std::string>();
    } else if (t.is_object() && t.contains("name") && t["name"].is_string()) {
      name = t["name"].get<std::string>();
      arch = t.contains("arch") && t["arch"].is_string() ? t["arch"].get<std::string>() : name;
      if (t.contains("compile-flags")) {
        if (!t["compile-flags"].is_array())
          throw poplar::graph_object_creation_error("Codelet target '" + name + "' in '" + list +
                                                    "': \"compile-flags\" must be a list of strings");
        for (const nlohmann::json &f : t["compile-flags"]) {
          if (!f.is_string())
            throw poplar::graph_object_creation_error("Codelet target '" + name + "' in '" + list +
                                                      "': \"compile-flags\" must be a list of strings");
          if (std::find(targetFlags.begin(), targetFlags.end(), f.get<std::string>()) == targetFlags.end())
            targetFlags.push_back(f.get<std::string>());
        }
      }
    } else {
      throw poplar::graph_object_creation_error("Codelet target list '" + list +
                                                "': each target is a name or an object with a \"name\"");
    }
    checkTarget(arch.substr(0, arch.find(':')), list);
    flags.targets.push_back(name);
  }
  if (!targetFlags.empty()) {
    const CodeletFlags extra = parseCodeletFlags(targetFlags);
    flags.compilerArgs.insert(flags.compilerArgs.end(), extra.compilerArgs.begin(), extra.compilerArgs.end());
    flags.clangArgs.insert(flags.clangArgs.end(), extra.clangArgs.begin(), extra.clangArgs.end());
    flags.includeDirs.insert(flags.includeDirs.end(), extra.includeDirs.begin(), extra.includeDirs.end());
  }
}

} // namespace

CodeletFlags parseCodeletFlags(const std::vector<std::string> &args) {
  CodeletFlags flags;
  auto both = [&](const std::string &a) {
    flags.compilerArgs.push_back(a);
    flags.clangArgs.push_back(a);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](std::size_t prefix, const char *what) -> std::string {
      if (a.size() > prefix)
        return a.substr(prefix);
      if (i + 1 >= args.size())
        throw poplar::graph_object_creation_error("Codelet compile flag '" + a + "' needs " + what);
      return args[++i];
    };
    if (a.empty())
      continue;
    if (a.rfind("-I", 0) == 0) {
      const std::string dir = absolutePath(value(2, "a directory"));
      flags.includeDirs.push_back(dir);
      both("-I" + dir);
    } else if (a == "-isystem") {
      const std::string dir = absolutePath(value(8, "a directory"));
      flags.includeDirs.push_back(dir);
      both("-isystem");
      both(dir);
    } else if (a.rfind("-D", 0) == 0) {
      both("-D" + value(2, "a macro"));
    } else if (a.rfind("-U", 0) == 0) {
      both("-U" + value(2, "a macro"));
    } else if (a == "-include") {
      both("-include");
      both(absolutePath(value(8, "a file")));
    } else if (a.rfind("-std=", 0) == 0) {
      if (a.find("++") != std::string::npos)
        both(a);
      else
        flags.compilerArgs.push_back(a); // -std=c11: the C sources' standard
    } else if (a == "--target" || a == "-target" || a.rfind("--target=", 0) == 0 ||
               a.rfind("-target=", 0) == 0) {
      const std::size_t eq = a.find('=');
      addTargets(flags, eq != std::string::npos ? a.substr(eq + 1) : value(a.size(), "a target list"));
    } else if (a == "-X") {
      // popc's pass-through: the next argument goes to the compiler as it is (and to the
      // introspection when it changes parsing).
      const std::string passed = value(2, "a compiler flag");
      flags.compilerArgs.push_back(passed);
      if (passed.rfind("-D", 0) == 0 || passed.rfind("-U", 0) == 0 ||
          (passed.rfind("-std=", 0) == 0 && passed.find("++") != std::string::npos))
        flags.clangArgs.push_back(passed);
    } else if (a == "-o" || a == "-c" || a == "-S" || a == "-E" || a == "-shared" || a == "-x") {
      if (a == "-o" || a == "-x")
        ++i;
      ASPEN_LOG(Warn,
                "codelet compile flag '" << a << "' ignored: the codelet compiler chooses its own outputs");
    } else if (a[0] == '-') {
      flags.compilerArgs.push_back(a); // -O3, -g, -ffast-math, -W..., -march=...
    } else {
      throw poplar::graph_object_creation_error("Unexpected codelet compile flag '" + a +
                                                "' (sources are passed separately)");
    }
  }
  return flags;
}

CodeletFlags parseCodeletFlags(std::string_view flags) {
  return parseCodeletFlags(splitFlags(flags));
}

CompiledCodelets compileCodelets(const std::vector<std::string> &sourcesIn, const CodeletFlags &flags,
                                 std::ostream *compileOutput,
                                 const std::vector<std::string> &displayNamesIn) {
  if (sourcesIn.empty())
    throw poplar::graph_object_creation_error("No codelet sources to compile");
  std::vector<std::string> sources, displayNames;
  std::string allNames;
  for (std::size_t i = 0; i < sourcesIn.size(); ++i) {
    sources.push_back(absolutePath(sourcesIn[i]));
    displayNames.push_back(i < displayNamesIn.size() ? displayNamesIn[i] : sourcesIn[i]);
    allNames += (i ? ", " : "") + ("'" + displayNames.back() + "'");
    const SourceLanguage lang = languageOf(sources.back());
    if (lang == SourceLanguage::Assembly)
      throw poplar::graph_object_creation_error(
          "Cannot compile codelet '" + displayNames.back() + "': " + displayNames.back() +
          ":1: error: IPU assembly is IPU machine code; Aspen's simulated IPU runs C and C++ vertex code "
          "only (Graphcore's popc assembles it for IPU targets; build the C++ version of the vertex)");
    if (lang == SourceLanguage::Unknown)
      throw poplar::graph_object_creation_error("Cannot compile codelet '" + displayNames.back() +
                                                "': unknown source type (expected .cpp, .cc, .cxx or .c)");
    if (::access(sources.back().c_str(), R_OK) != 0)
      throw poplar::graph_object_creation_error("Cannot read codelet source '" + displayNames.back() + "'");
  }

  const std::string cxx = hostCompiler();
  bool userGaveStd = false;
  for (const std::string &a : flags.compilerArgs)
    userGaveStd = userGaveStd || (a.rfind("-std=", 0) == 0 && a.find("++") != std::string::npos);
  const int clangMajor = clangMajorVersion(cxx);
  const bool clang = clangMajor != 0;
  std::vector<std::string> args = fixedArgs(userGaveStd, clangMajor);
  args.insert(args.end(), flags.compilerArgs.begin(), flags.compilerArgs.end());
  // -Wdouble-promotion: clang also flags half -> float, which Graphcore's popc does not
  // (PopLibs builds with -Werror -Wdouble-promotion); such warnings stay warnings, and
  // every other one is an error again when the user asked (doublePromotionErrors).
  bool werror = false, doublePromotionError = false, wantsDoublePromotion = false;
  for (const std::string &a : flags.compilerArgs) {
    werror = (werror || a == "-Werror") && a != "-Wno-error";
    wantsDoublePromotion =
        (wantsDoublePromotion || a == "-Wdouble-promotion") && a != "-Wno-double-promotion";
    doublePromotionError =
        (doublePromotionError || a == "-Werror=double-promotion") && a != "-Wno-error=double-promotion";
  }
  doublePromotionError = doublePromotionError || (werror && wantsDoublePromotion);
  if (clang && doublePromotionError)
    args.push_back("-Wno-error=double-promotion");

  const std::string cacheDir = codeletCacheDir();
  CodeletCacheKeyInput keyInput{sources, args, flags.includeDirs, cxx};
  keyInput.compilerArgs.push_back("generator-v3");
  // Counted cycles (docs/cost-model.md): whether the code counts is part of the key, the
  // plugin's identity too (through kCodeletCompilerSourceHash: its sources are codelet compiler
  // inputs), its path not (the SDK tree may move).
  const std::string plugin = cycleCountPlugin(cxx);
  if (!plugin.empty()) {
    keyInput.compilerArgs.push_back("cycle-count");
    // The plugin's write check (docs/tile-model.md) reads ASPEN_WRITE_CHECK in clang's process.
    const char *writeCheck = std::getenv("ASPEN_WRITE_CHECK");
    if (writeCheck && std::string(writeCheck) == "0")
      keyInput.compilerArgs.push_back("no-write-check");
    args.push_back("-fpass-plugin=" + plugin);
    args.push_back(std::string("-D") + kCycleCountMacro + "=1");
  }
  const std::string key = codeletCacheKey(keyInput);
  const std::string gpPath = cacheDir.empty() ? std::string() : cacheDir + "/" + key + ".gp";

  if (auto cached = gpPath.empty() ? std::nullopt : readCacheFile(gpPath)) {
    try {
      CompiledCodelets out;
      out.metadata = decodeGp(cached->data(), cached->size(), gpPath).metadata;
      // The entry must say it was compiled under this key: a library of other sources
      // copied under this name is never run.
      if (out.metadata.cacheKey != key)
        throw poplar::graph_object_load_error("it holds codelets compiled from other sources (its recorded "
                                              "cache key differs)");
      out.gpPath = gpPath;
      out.contentHash = contentHash(cached->data(), cached->size());
      out.gpBytes = std::move(*cached);
      out.fromCache = true;
      if (compileOutput)
        *compileOutput << out.metadata.compilerOutput;
      ASPEN_LOG(Debug, "codelets " << allNames << ": cache hit " << gpPath);
      return out;
    } catch (const poplar::graph_object_load_error &e) {
      ASPEN_LOG(Warn, "recompiling codelets " << allNames << ": cached library " << gpPath << " unusable ("
                                              << e.what() << ")");
    }
  }

  const auto start = std::chrono::steady_clock::now();
  // Introspection: the vertex types of every C++ source, each registered once.
  std::vector<std::string> clangArgs;
  clangArgs.push_back(userGaveStd ? "" : "-std=c++17");
  clangArgs.push_back("-D__POPC__");
  // libclang only parses: `half` is its __fp16 there when it has no _Float16 (HalfFloat.hpp).
  for (const char *a : {"-D__ASPEN_INTROSPECTION__", "-Xclang", "-fnative-half-type", "-Xclang",
                        "-fnative-half-arguments-and-returns"})
    clangArgs.push_back(a);
  clangArgs.push_back("-isystem");
  clangArgs.push_back(embeddedIncludeDir());
  // What the compile sees before the source (RegistrationSupport.hpp): the IPU builtins and
  // <ipudef.h>'s types, which headers written for the IPU use without including them.
  clangArgs.push_back("-include");
  clangArgs.push_back("ipu_builtins.h");
  clangArgs.insert(clangArgs.end(), flags.clangArgs.begin(), flags.clangArgs.end());
  if (clangArgs.front().empty())
    clangArgs.erase(clangArgs.begin());

  const ScopedWorkDir scopedWorkDir;
  const std::string &workDir = scopedWorkDir.path();

  std::map<std::string, std::string> fieldTypeSpelling; // "vertex\nfield" -> C++ type
  std::map<std::string, std::string> aliases;
  std::vector<std::size_t> cppSources;
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (languageOf(sources[i]) == SourceLanguage::Cpp)
      cppSources.push_back(i);
  std::set<std::string> registered;
  // Classes whose base the host compiler decides: registered only if it finds a vertex type.
  std::set<std::string> baseDeferred;
  std::string introspectionErrors;
  std::vector<std::string> units, unitTexts, unitTokens;
  std::vector<std::vector<std::string>> unitVertices;
  std::vector<std::uint32_t> vertexCounts(sources.size(), 0);
  std::set<std::string> malformed;
  const unsigned numUnits = cppSources.empty() ? 1u : static_cast<unsigned>(cppSources.size());
  for (unsigned u = 0; u < numUnits; ++u) {
    std::vector<IntrospectedVertex> vertices;
    std::vector<std::string> notVertices;
    std::string sourcePath;
    if (!cppSources.empty()) {
      sourcePath = sources[cppSources[u]];
      IntrospectionResult found = introspectCodelets(sourcePath, clangArgs);
      introspectionErrors += found.errors;
      for (IntrospectedVertex &v : found.vertices) {
        if (!wellFormedTypeName(v.name))
          malformed.insert(v.name + " (" + v.file + ":" + std::to_string(v.line) + ")");
        else if (registered.insert(v.name).second) {
          if (v.baseDeferred)
            baseDeferred.insert(v.name);
          vertices.push_back(std::move(v));
        }
      }
      vertexCounts[cppSources[u]] = static_cast<std::uint32_t>(vertices.size());
      for (const std::string &n : found.notVertices)
        if (wellFormedTypeName(n))
          notVertices.push_back(n);
    }
    unitVertices.emplace_back();
    for (const IntrospectedVertex &v : vertices) {
      unitVertices.back().push_back(v.name);
      if (!v.alias.empty() && wellFormedTypeName(v.alias))
        aliases.emplace(v.alias, v.name);
    }
    for (const IntrospectedVertex &v : vertices)
      for (std::size_t f = 0; f < v.fields.size(); ++f)
        fieldTypeSpelling[v.name + "\n" + v.fields[f]] = f < v.fieldTypes.size() ? v.fieldTypes[f] : "";
    const std::string unitPath = workDir + "/unit" + std::to_string(u) + ".cpp";
    // Unique among the units of every library this one may be linked with.
    const std::string tokenText = key + "/" + std::to_string(u);
    unitTokens.push_back(contentHash(tokenText.data(), tokenText.size()).substr(0, 20));
    const std::string text =
        sourcePath.empty() ? generateRegistrationUnit("", {}, unitTokens.back())
                           : generateRegistrationUnit(sourcePath, vertices, unitTokens.back(), notVertices);
    if (!writeFileAtomic(unitPath, text.data(), text.size()))
      throw poplar::graph_object_creation_error("Cannot write the codelet registration unit '" + unitPath +
                                                "'");
    units.push_back(unitPath);
    unitTexts.push_back(text);
  }
  if (!malformed.empty())
    throw poplar::graph_object_creation_error("Cannot register vertex types of codelets " + allNames +
                                              ": the codelet compiler could not spell their names: " + [&] {
                                                std::string list;
                                                for (const std::string &m : malformed)
                                                  list += (list.empty() ? "'" : ", '") + m + "'";
                                                return list;
                                              }());

  // Every source becomes an object in its own host-compiler run, several at once
  // (a library such as popops.gp has many sources, and one g++ run would compile
  // them one after another); C sources without the C++ language level. Then one
  // link builds the shared object.
  struct ObjectJob {
    std::string command;
    std::string object;
    std::string output;
    int status = 0;
    std::string name; // the source's display name
  };
  std::vector<ObjectJob> jobs;
  auto compileCommand = [&](const std::string &input, const std::string &object, bool isC) {
    std::string command = cxx;
    for (const std::string &a : args) {
      const bool std = a.rfind("-std=", 0) == 0;
      const bool cxxOnly = (std && a.find("++") != std::string::npos) || a == "-fpermissive";
      if (a != "-shared" && a.rfind("-Wl,", 0) != 0 && // link flags: link only
          (isC ? !cxxOnly : !(std && !cxxOnly)))       // -std=c11 for C sources, -std=c++17 for C++
        command += " " + shellQuote(a);
    }
    command += isC ? " -c -x c " : " -c ";
    return command + shellQuote(input) + " -o " + shellQuote(object);
  };
  for (std::size_t u = 0; u < units.size(); ++u) {
    const std::string object = workDir + "/unit" + std::to_string(u) + ".o";
    jobs.push_back({compileCommand(units[u], object, false), object, "", 0,
                    cppSources.empty() ? std::string("<registration>") : displayNames[cppSources[u]]});
  }
  for (std::size_t i = 0; i < sources.size(); ++i)
    if (languageOf(sources[i]) == SourceLanguage::C) {
      const std::string object = workDir + "/c" + std::to_string(jobs.size()) + ".o";
      jobs.push_back({compileCommand(sources[i], object, true), object, "", 0, displayNames[i]});
    }
  {
    const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
    const std::size_t numThreads = std::min<std::size_t>(hardware, jobs.size());
    std::atomic<std::size_t> next{0};
    TerminalProgress progress("popc: compiling " + allNames, static_cast<unsigned>(jobs.size()));
    auto work = [&] {
      for (std::size_t i; (i = next.fetch_add(1)) < jobs.size();) {
        ASPEN_LOG(Debug, "codelet compile: " << jobs[i].command);
        progress.begin("unit " + std::to_string(i));
        jobs[i].status = runCommand(jobs[i].command, jobs[i].output);
        progress.advance();
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t t = 1; t < numThreads; ++t)
      threads.emplace_back(work);
    work();
    for (std::thread &t : threads)
      t.join();
  }
  std::string output;
  int status = 0;
  for (const ObjectJob &job : jobs) {
    output += job.output;
    if (status == 0)
      status = job.status;
  }
  if (clang && doublePromotionError && status == 0) {
    const std::string promotions = doublePromotionErrors(output);
    if (!promotions.empty()) {
      output += "error: -Wdouble-promotion with -Werror (only half to float is allowed, as Graphcore's popc "
                "allows it):\n" +
                promotions;
      status = 1;
    }
  }
  if (!clang && status == 0) {
    const std::string permissive = permissiveErrors(output);
    if (!permissive.empty()) {
      output +=
          "error: the codelets use what C++ does not allow (only GCC's \"changes meaning\" is accepted, as "
          "clang accepts it):\n" +
          permissive;
      status = 1;
    }
  }
  LinkedObjects linked;
  if (status == 0) {
    std::vector<ObjectFile> objects;
    for (const ObjectJob &job : jobs)
      objects.push_back({job.object, job.name});
    linked = linkObjects(cxx, objects, unitTokens, workDir, linkFlagsOf(args));
    status = linked.status;
    output += linked.output;
  }
  const std::string &soPath = linked.soPath;
  std::string diagnostics = cleanDiagnostics(output, workDir);
  // IPU instructions in `asm` reach the host assembler, which names the line.
  if (status != 0 && (diagnostics.find("invalid instruction mnemonic") != std::string::npos ||
                      diagnostics.find("unknown use of instruction mnemonic") != std::string::npos ||
                      diagnostics.find("no such instruction") != std::string::npos))
    diagnostics += "note: the `asm` statements above hold IPU instructions: Aspen's simulated IPU runs C and "
                   "C++ vertex code only (Graphcore's popc assembles them for IPU targets); keep them under "
                   "#ifdef __IPU__ with a C++ version for other targets\n";
  if (compileOutput)
    *compileOutput << diagnostics;
  if (status != 0) {
    // A source that compiles on its own but whose registration does not names the
    // vertex types that could not be registered.
    std::set<std::string> unregistered = verticesNamedByDiagnostics(output, workDir, unitTexts, unitVertices);
    const std::string marker = kUnregisteredVertexMarker;
    for (std::size_t at = output.find(marker + "'"); at != std::string::npos;
         at = output.find(marker + "'", at + 1)) {
      const std::size_t begin = at + marker.size() + 1;
      const std::size_t end = output.find("'", begin);
      if (end != std::string::npos)
        unregistered.insert(output.substr(begin, end - begin));
    }
    std::string message = "Failed to compile codelets " + allNames + " with '" + cxx + "' (exit status " +
                          std::to_string(status) + ")";
    if (!unregistered.empty())
      message += ": cannot register vertex types " + joinNames(unregistered);
    std::vector<ObjectFile> named;
    for (const ObjectJob &job : jobs)
      named.push_back({job.object, job.name});
    const std::string twice = duplicateSymbols(diagnostics, named);
    if (!twice.empty())
      message += ": " + twice;
    throw poplar::graph_object_creation_error(message + ":\n" + diagnostics);
  }
  if (!introspectionErrors.empty())
    ASPEN_LOG(Warn, "codelets " << allNames << " compiled, but libclang reported errors (vertex types in the "
                                << "affected code may be missing):\n"
                                << introspectionErrors);

  auto soBytes = readFileIfExists(soPath);
  if (!soBytes)
    throw poplar::graph_object_creation_error("The codelet compiler produced no library for " + allNames);
  const std::string soHash = contentHash(soBytes->data(), soBytes->size());
  std::vector<ir::VertexTypeInfo> vertexTypes;
  try {
    vertexTypes = loadSharedObject(soHash, soBytes->data(), soBytes->size(), allNames).describe();
  } catch (const poplar::graph_object_load_error &e) {
    throw poplar::graph_object_creation_error(std::string("Codelets ") + allNames +
                                              " compiled but cannot be loaded: " + e.what());
  }

  // Introspection and registration must agree: every vertex type found is in the
  // library, and nothing else is.
  {
    std::set<std::string> inLibrary, missing, extra;
    for (const ir::VertexTypeInfo &t : vertexTypes)
      inLibrary.insert(t.name);
    for (const std::string &n : baseDeferred)
      if (!inLibrary.count(n))
        registered.erase(n); // not a vertex type after all (its base is not a vertex base)
    for (std::size_t u = 0; u < cppSources.size() && u < unitVertices.size(); ++u)
      vertexCounts[cppSources[u]] = static_cast<std::uint32_t>(
          std::count_if(unitVertices[u].begin(), unitVertices[u].end(),
                        [&](const std::string &n) { return inLibrary.count(n) != 0; }));
    for (const std::string &n : registered)
      if (!inLibrary.count(n))
        missing.insert(n);
    for (const std::string &n : inLibrary)
      if (!registered.count(n))
        extra.insert(n);
    if (!missing.empty() || !extra.empty())
      throw poplar::graph_object_creation_error(
          "Codelets " + allNames + ": the vertex types found in the sources and those registered disagree" +
          (missing.empty() ? std::string() : "; not registered: " + joinNames(missing)) +
          (extra.empty() ? std::string() : "; registered but not found: " + joinNames(extra)));
  }
  // Fields of types no vertex field may have: named at compile time, never
  // connected by mistake later.
  {
    const LoadedVertexLibrary &lib = loadSharedObject(soHash, soBytes->data(), soBytes->size(), allNames);
    std::string problems;
    for (std::size_t i = 0; i < lib.numEntries(); ++i) {
      const AspenVertexEntry &e = lib.entry(i);
      for (std::uint32_t k = 0; k < e.numFields; ++k) {
        if (!e.fields[k].unsupported)
          continue;
        const AspenFieldEntry &f = e.fields[k];
        const auto it = fieldTypeSpelling.find(std::string(e.name) + "\n" + f.name);
        const std::string type = it == fieldTypeSpelling.end() || it->second.empty() ? "?" : it->second;
        problems +=
            std::string(problems.empty() ? " " : "; ") + "vertex '" + e.name + "', field '" + f.name +
            "' of type '" + type + "': " +
            (f.kind != ASPEN_FIELD_STATE     ? "an edge's element type must be a Poplar element type "
                                               "(bool, char, short, int, long, half, float, ...)"
             : f.shape != ASPEN_SHAPE_SCALAR ? "a state Vector's element type must be a Poplar element type"
                                             : "a state member must be trivially copyable (no constructor "
                                               "runs on a vertex)");
      }
    }
    if (!problems.empty())
      throw poplar::graph_object_creation_error("Codelets " + allNames +
                                                " have vertex fields of unsupported types:" + problems + ".");
  }
  try {
    validateVertexTypes(vertexTypes, allNames);
  } catch (const poplar::graph_object_load_error &e) {
    throw poplar::graph_object_creation_error(e.what());
  }

  CompiledCodelets out;
  out.metadata.vertexCounts = vertexCounts;
  for (const auto &[alias, target] : aliases)
    if (!registered.count(alias) && registered.count(target))
      out.metadata.aliases.emplace(alias, target);
  out.metadata.aspenVersion = kAspenVersion;
  out.metadata.sharedObjectHash = soHash;
  out.metadata.sharedObjects = {SharedObjectRef{soHash, soBytes->size()}};
  out.metadata.sources = displayNames;
  out.metadata.targets = flags.targets;
  out.metadata.vertexTypes = std::move(vertexTypes);
  out.metadata.compilerOutput = diagnostics;
  out.metadata.cacheKey = key;
  out.metadata.units = unitTokens;
  out.metadata.undefined = linked.undefined;
  std::vector<std::vector<std::uint8_t>> objectBytes;
  std::vector<GpInput> objectInputs;
  for (const ObjectJob &job : jobs) {
    auto bytes = readFileIfExists(job.object);
    if (!bytes)
      throw poplar::graph_object_creation_error("The codelet compiler lost the object of " + job.name);
    objectBytes.push_back(std::move(*bytes));
  }
  for (std::size_t i = 0; i < jobs.size(); ++i)
    objectInputs.push_back({objectBytes[i].data(), objectBytes[i].size(), jobs[i].name});
  out.gpBytes = encodeGp(out.metadata, soBytes->data(), soBytes->size(), objectInputs);
  // The metadata as the file holds it (encodeGp adds the objects' hashes and sizes), so that a
  // fresh compile and a cache hit describe the library alike.
  out.metadata =
      decodeGp(out.gpBytes.data(), out.gpBytes.size(), displayNames.empty() ? "codelets" : displayNames[0])
          .metadata;
  out.contentHash = contentHash(out.gpBytes.data(), out.gpBytes.size());
  // A cache that cannot take the library (a full disk) only means "not cached":
  // the library's bytes stay in memory (gpPath empty).
  if (!gpPath.empty() && writeFileAtomic(gpPath, out.gpBytes.data(), out.gpBytes.size()))
    out.gpPath = gpPath;
  else if (!gpPath.empty()) // no cache at all was warned about once
    ASPEN_LOG(Warn, "cannot write compiled codelets to the cache ("
                        << gpPath << "); they are kept in memory, not cached");
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASPEN_LOG(Info, "compiled codelets " << allNames << " (" << out.metadata.vertexTypes.size()
                                       << " vertex types) in " << static_cast<long>(ms) << " ms");
  return out;
}

CompiledCodelets linkCodeletLibraries(const std::vector<GpInput> &inputs,
                                      const std::vector<std::string> &targets) {
  if (inputs.empty())
    throw poplar::graph_object_creation_error("No vertex libraries to link");
  std::vector<GpContents> decoded;
  std::string allNames;
  for (const GpInput &in : inputs) {
    decoded.push_back(decodeGp(in.bytes, in.size, in.name));
    allNames += (allNames.empty() ? "'" : ", '") + in.name + "'";
  }
  // Every vertex type is defined once in an image.
  std::map<std::string, std::string> definedBy;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    for (const ir::VertexTypeInfo &type : decoded[i].metadata.vertexTypes) {
      auto [it, inserted] = definedBy.emplace(type.name, inputs[i].name);
      if (!inserted)
        throw poplar::graph_object_creation_error("Cannot link vertex libraries: vertex type '" + type.name +
                                                  "' is defined by both '" + it->second + "' and '" +
                                                  inputs[i].name + "'");
    }
  std::string old;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (decoded[i].metadata.objects.empty())
      old += (old.empty() ? "'" : ", '") + inputs[i].name + "'";
  if (!old.empty()) {
    // Libraries of format 2 or 3 hold only shared objects: they stay separate parts.
    for (std::size_t i = 0; i < inputs.size(); ++i)
      if (!decoded[i].metadata.undefined.empty())
        throw poplar::graph_object_creation_error(
            "Cannot link vertex library '" + inputs[i].name +
            "', which calls functions other libraries "
            "define, with " +
            old +
            ": those were built by an older Aspen and hold no objects to link; "
            "build them again with this Aspen's popc");
    CompiledCodelets out;
    out.gpBytes = linkGp(inputs, targets);
    out.contentHash = contentHash(out.gpBytes.data(), out.gpBytes.size());
    out.metadata = decodeGp(out.gpBytes.data(), out.gpBytes.size(), "the linked library").metadata;
    return out;
  }

  const std::string cxx = hostCompiler();
  std::string keyText = "link-v3\n" + compilerIdentity(cxx) + "\n";
  for (const GpInput &in : inputs)
    keyText += contentHash(in.bytes, in.size) + "\n";
  for (const std::string &t : targets)
    keyText += t + ",";
  const std::string key = "link-" + contentHash(keyText.data(), keyText.size());
  const std::string cacheDir = codeletCacheDir();
  const std::string gpPath = cacheDir.empty() ? std::string() : cacheDir + "/" + key + ".gp";
  if (auto cached = gpPath.empty() ? std::nullopt : readCacheFile(gpPath)) {
    try {
      CompiledCodelets out;
      out.metadata = decodeGp(cached->data(), cached->size(), gpPath).metadata;
      if (out.metadata.cacheKey != key)
        throw poplar::graph_object_load_error("it holds another link (its recorded cache key differs)");
      out.gpPath = gpPath;
      out.contentHash = contentHash(cached->data(), cached->size());
      out.gpBytes = std::move(*cached);
      out.fromCache = true;
      return out;
    } catch (const poplar::graph_object_load_error &e) {
      ASPEN_LOG(Warn, "linking " << allNames << " again: cached library " << gpPath << " unusable ("
                                 << e.what() << ")");
    }
  }

  const ScopedWorkDir scopedWorkDir;
  const std::string &workDir = scopedWorkDir.path();

  LibraryMetadata m;
  std::vector<ObjectFile> objects;
  std::vector<GpInput> objectInputs;
  bool countsKnown = true;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const LibraryMetadata &in = decoded[i].metadata;
    for (std::size_t j = 0; j < in.objects.size(); ++j) {
      const GpContents::Part &part = decoded[i].objectParts[j];
      const std::string path = workDir + "/i" + std::to_string(i) + "_" + std::to_string(j) + ".o";
      if (!writeFileAtomic(path, inputs[i].bytes + part.offset, part.size))
        throw poplar::graph_object_creation_error("Cannot write '" + path + "' to link " + allNames);
      const std::string &source = in.objects[j].name;
      objects.push_back({path, inputs[i].name + "(" + source.substr(source.rfind('/') + 1) + ")"});
      objectInputs.push_back({inputs[i].bytes + part.offset, part.size, in.objects[j].name});
    }
    m.units.insert(m.units.end(), in.units.begin(), in.units.end());
    m.sources.insert(m.sources.end(), in.sources.begin(), in.sources.end());
    countsKnown = countsKnown && !in.vertexCounts.empty();
    m.vertexCounts.insert(m.vertexCounts.end(), in.vertexCounts.begin(), in.vertexCounts.end());
    for (const auto &[alias, target] : in.aliases)
      if (!definedBy.count(alias))
        m.aliases.emplace(alias, target);
    m.compilerOutput += in.compilerOutput;
  }
  if (!countsKnown)
    m.vertexCounts.clear();
  const LinkedObjects linked = linkObjects(cxx, objects, m.units, workDir, {});
  if (linked.status != 0) {
    const std::string twice = duplicateSymbols(linked.output, objects);
    throw poplar::graph_object_creation_error("Cannot link vertex libraries " + allNames + " into one image" +
                                              (twice.empty() ? "" : ": " + twice) + ":\n" + linked.output);
  }
  auto soBytes = readFileIfExists(linked.soPath);
  if (!soBytes)
    throw poplar::graph_object_creation_error("The linker produced no library for " + allNames);
  const std::string soHash = contentHash(soBytes->data(), soBytes->size());
  try {
    m.vertexTypes = loadSharedObject(soHash, soBytes->data(), soBytes->size(), allNames).describe();
  } catch (const poplar::graph_object_load_error &e) {
    throw poplar::graph_object_creation_error("Vertex libraries " + allNames +
                                              " linked but cannot be loaded: " + e.what());
  }
  if (m.vertexTypes.size() != definedBy.size())
    throw poplar::graph_object_creation_error(
        "Vertex libraries " + allNames + " linked into " + std::to_string(m.vertexTypes.size()) +
        " vertex types, not the " + std::to_string(definedBy.size()) + " they define");
  m.aspenVersion = kAspenVersion;
  m.sharedObjectHash = soHash;
  m.sharedObjects = {SharedObjectRef{soHash, soBytes->size()}};
  m.targets = targets;
  m.cacheKey = key;
  m.undefined = linked.undefined;
  for (const GpInput &o : objectInputs)
    m.objects.push_back({o.name, "", 0});
  CompiledCodelets out;
  out.gpBytes = encodeGp(m, soBytes->data(), soBytes->size(), objectInputs);
  out.contentHash = contentHash(out.gpBytes.data(), out.gpBytes.size());
  out.metadata = decodeGp(out.gpBytes.data(), out.gpBytes.size(), "the linked library").metadata;
  if (!gpPath.empty() && writeFileAtomic(gpPath, out.gpBytes.data(), out.gpBytes.size()))
    out.gpPath = gpPath;
  return out;
}

std::string demangledSymbols(const std::vector<std::string> &symbols) {
  std::string out;
  for (const std::string &s : symbols) {
    int status = 0;
    char *name = abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status);
    out += (out.empty() ? "'" : ", '") + std::string(status == 0 && name ? name : s.c_str()) + "'";
    std::free(name);
  }
  return out;
}

std::string ipuBuildArch(const std::vector<std::string> &targets) {
  bool ipu1 = false, ipu2 = false, ipu21 = false;
  for (const std::string &t : targets) {
    const std::string arch = t.substr(0, t.find(':'));
    ipu1 = ipu1 || arch == "ipu1";
    ipu2 = ipu2 || arch == "ipu2";
    ipu21 = ipu21 || arch == "ipu21";
  }
  // One IPU build: the architecture of Aspen's DeviceManager devices (ipu2) when listed.
  return ipu2 ? "ipu2" : ipu21 ? "ipu21" : ipu1 ? "ipu1" : "";
}

CodeletFlags ipuBuildFlags(const CodeletFlags &flags, const std::string &arch) {
  CodeletFlags out = flags;
  // As Graphcore's popc defines them for an IPU target: ipu1 -> 1, ipu2 -> 2, ipu21 -> 21.
  const std::string version = arch.substr(3);
  for (const std::string &define : {std::string("-D__IPU__"), "-D__IPU_ARCH_VERSION__=" + version}) {
    out.compilerArgs.push_back(define);
    out.clangArgs.push_back(define);
  }
  return out;
}

std::vector<std::uint8_t> compileIpuBuild(const std::vector<std::string> &sources, const CodeletFlags &flags,
                                          const std::string &arch,
                                          const std::vector<std::string> &displayNames, std::string &why) {
  CompiledCodelets ipu;
  std::ostringstream diagnostics;
  try {
    ipu = compileCodelets(sources, ipuBuildFlags(flags, arch), &diagnostics, displayNames);
  } catch (const poplar::graph_object_creation_error &e) {
    // The first error names the file and line (inline IPU assembly, a control register written, ...).
    const std::string text = diagnostics.str().empty() ? std::string(e.what()) : diagnostics.str();
    std::string first;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.find("error") != std::string::npos) {
        first = line;
        break;
      }
    why = "its " + arch + " build (__IPU__ defined) does not compile" + (first.empty() ? "" : ": " + first);
    return {};
  }
  std::vector<std::string> external;
  for (const ir::VertexTypeInfo &v : ipu.metadata.vertexTypes)
    if (v.isExternal)
      external.push_back(v.name);
  if (!external.empty()) {
    why = "its " + arch + " build marks " + std::to_string(external.size()) +
          " vertex type(s) isExternalCodelet (their compute is IPU assembly), first '" + external.front() +
          "'";
    return {};
  }
  return std::move(ipu.gpBytes);
}

CompiledCodelets compileForTargets(const std::vector<std::string> &sources, const CodeletFlags &flags,
                                   std::ostream *compileOutput, const std::vector<std::string> &displayNames,
                                   std::string *noIpuBuild) {
  CompiledCodelets host = compileCodelets(sources, flags, compileOutput, displayNames);
  const std::string arch = ipuBuildArch(flags.targets);
  if (arch.empty())
    return host;
  std::string why;
  const std::vector<std::uint8_t> ipu = compileIpuBuild(sources, flags, arch, displayNames, why);
  if (ipu.empty()) {
    if (noIpuBuild)
      *noIpuBuild = why;
    return host;
  }
  CompiledCodelets out;
  out.gpBytes = withIpuBuild(host.gpBytes, ipu, arch);
  out.contentHash = contentHash(out.gpBytes.data(), out.gpBytes.size());
  out.metadata = decodeGp(out.gpBytes.data(), out.gpBytes.size(), "codelets").metadata;
  out.fromCache = host.fromCache;
  return out; // gpPath empty: the cache holds the two builds, not the pair
}

} // namespace aspen::codelets
