// Copyright (c) Aspen contributors.
#include "codelets/RegistrationUnit.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace aspen::codelets {

namespace {

/// A C string literal holding `text`.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    out += ch;
  }
  return out + "\"";
}

// The library's exported functions, in the entry unit the link adds. C++11.
const char *const kEntryPoints = R"(
namespace {
AspenPrintSink aspenPrintSink = 0;
void *aspenPrintContext = 0;

struct AspenEntryTable {
  AspenVertexEntry *entries;
  unsigned count;
  AspenEntryTable() : entries(0), count(0) {
    const AspenVertexEntry *parts[ASPEN_NUM_UNITS];
    unsigned counts[ASPEN_NUM_UNITS];
    static const uint32_t unitFlags[ASPEN_NUM_UNITS] = {ASPEN_UNIT_FLAGS};
    ASPEN_COLLECT_UNITS
    for (unsigned u = 0; u < ASPEN_NUM_UNITS; ++u)
      count += counts[u];
    entries = static_cast<AspenVertexEntry *>(std::calloc(count ? count : 1, sizeof(AspenVertexEntry)));
    unsigned k = 0;
    for (unsigned u = 0; u < ASPEN_NUM_UNITS; ++u)
      for (unsigned i = 0; i < counts[u]; ++i) {
        entries[k] = parts[u][i];
        entries[k++].flags |= unitFlags[u];
      }
  }
};
} // namespace

extern "C" __attribute__((visibility("default"))) const AspenVertexEntry *aspen_codelet_entries(unsigned *count) {
  static AspenEntryTable table;
  *count = table.count;
  return table.entries;
}

extern "C" __attribute__((visibility("default"))) uint32_t aspen_codelet_abi_version(void) {
  return ASPEN_CODELET_ABI_VERSION;
}

extern "C" __attribute__((visibility("default"))) void aspen_codelet_set_print_sink(AspenPrintSink sink,
                                                                                   void *context) {
  aspenPrintContext = context;
  aspenPrintSink = sink;
}

#ifdef __ASPEN_CYCLE_COUNT__
// Counted cycles (docs/cost-model.md): the instrumented code adds what each function ran to
// the running thread's counter in Aspen's runtime, an initial-exec thread-local at this offset
// from the thread pointer (0: none yet). Not per-tile data (CodeletData.hpp leaves
// aspen_codelet* out of the tiles' copies).
extern "C" __attribute__((visibility("hidden"))) int64_t aspen_codelet_cycle_offset = 0;
extern "C" __attribute__((visibility("default"))) void aspen_codelet_set_cycle_counter(int64_t offset) {
  aspen_codelet_cycle_offset = offset;
}
#endif
#ifdef __ASPEN_WRITE_CHECK__
// Checked writes (docs/tile-model.md): the instrumented code reads the running thread's
// tile range at this offset from the thread pointer (0: none yet, nothing checked) and calls
// the fault function below for a write into another tile, which hands it to the runtime.
extern "C" __attribute__((visibility("hidden"))) int64_t aspen_codelet_write_range_offset = 0;
extern "C" __attribute__((visibility("hidden"))) void (*aspen_codelet_write_fault_handler)(void *) = 0;
extern "C" __attribute__((visibility("hidden"), cold, noinline)) void aspen_codelet_tile_write_fault(void *a) {
  if (aspen_codelet_write_fault_handler)
    aspen_codelet_write_fault_handler(a);
}
extern "C" __attribute__((visibility("default"))) void aspen_codelet_set_write_check(int64_t offset,
                                                                                    void (*fault)(void *)) {
  aspen_codelet_write_fault_handler = fault;
  aspen_codelet_write_range_offset = offset;
}
#endif

#ifdef __ASPEN_TILE_BUILTINS__
// The IPU builtins backed by the runtime (<ipu_tile_builtins.h>): the runtime's table. Its
// name starts aspen_codelet, so tiles share it (CodeletData.cpp). Defined (and the setter
// exported) only when some object of the library calls a builtin: the loader reads the
// setter's presence as "its vertices may call the builtins".
extern "C" __attribute__((visibility("hidden"))) const AspenCodeletRuntime *aspen_codelet_runtime = 0;
extern "C" __attribute__((visibility("default"))) void aspen_codelet_set_runtime(const AspenCodeletRuntime *r) {
  aspen_codelet_runtime = r;
}
// The tile's cycle counter. A call the cycle-counting pass finds by this name: it first adds
// what the calling function has counted so far to the thread's counter (CycleCountPass.cpp).
extern "C" __attribute__((visibility("hidden"))) uint64_t aspen_codelet_scount(void) {
  return aspen_codelet_runtime ? aspen_codelet_runtime->scount() : 0;
}
#endif

extern "C" __attribute__((visibility("hidden"))) int aspen_codelet_printf(const char *format, ...) {
  char local[1024];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(local, sizeof local, format, args);
  va_end(args);
  if (n < 0)
    return n;
  char *text = local;
  if (static_cast<unsigned>(n) >= sizeof local) {
    text = static_cast<char *>(std::malloc(static_cast<std::size_t>(n) + 1));
    if (!text)
      return -1;
    va_start(args, format);
    std::vsnprintf(text, static_cast<std::size_t>(n) + 1, format, args);
    va_end(args);
  }
  if (aspenPrintSink)
    aspenPrintSink(aspenPrintContext, text, static_cast<std::size_t>(n));
  else {
    std::fwrite(text, 1, static_cast<std::size_t>(n), stdout);
    std::fflush(stdout);
  }
  if (text != local)
    std::free(text);
  return n;
}
)";

/// The identifiers of `code` (outside string literals) that a source's macro could
/// replace: not keywords, not reserved names (`__x`), not the macros the code uses.
std::set<std::string> identifiersToUndefine(const std::string &code) {
  static const std::set<std::string> kKeep = {
      "alignas",   "alignof",  "auto",     "bool",          "char",        "class",  "const",    "constexpr",
      "decltype",  "define",   "delete",   "double",        "else",        "enum",   "explicit", "extern",
      "false",     "float",    "for",      "friend",        "if",          "inline", "int",      "long",
      "namespace", "new",      "nullptr",  "operator",      "private",     "public", "return",   "short",
      "signed",    "sizeof",   "static",   "static_assert", "static_cast", "struct", "template", "this",
      "true",      "typedef",  "typename", "unsigned",      "using",       "void",   "volatile", "while",
      "va_list",   "va_start", "va_end",   "va_arg",        "va_copy",     "stdout", "NULL",     "offsetof",
      "include"};
  std::set<std::string> names;
  for (std::size_t i = 0; i < code.size();) {
    const char ch = code[i];
    if (ch == '"') { // a string literal: skip it, escapes included
      for (++i; i < code.size() && code[i] != '"'; ++i)
        if (code[i] == '\\')
          ++i;
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      std::size_t end = i;
      while (end < code.size() && (std::isalnum(static_cast<unsigned char>(code[end])) || code[end] == '_'))
        ++end;
      const std::string word = code.substr(i, end - i);
      if (!kKeep.count(word) && word.rfind("__", 0) != 0 && word.rfind("ASPEN_", 0) != 0)
        names.insert(word);
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(ch))) {
      while (i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '.'))
        ++i;
    } else {
      ++i;
    }
  }
  return names;
}

} // namespace

std::string generateEntryUnit(const std::vector<std::string> &unitTokens,
                              const std::vector<std::uint32_t> &unitFlags) {
  std::ostringstream os;
  os << "// Generated by Aspen's codelet compiler: the entry points of a linked vertex library\n"
     << "#include <aspen/CodeletAbi.h>\n#include <cstdarg>\n#include <cstdint>\n#include <cstdio>\n"
     << "#include <cstdlib>\n\n";
  for (const std::string &t : unitTokens)
    os << "__attribute__((visibility(\"hidden\"))) const AspenVertexEntry *aspen_codelet_unit_entries_" << t
       << "(unsigned *count);\n";
  os << "\n#define ASPEN_NUM_UNITS " << (unitTokens.empty() ? 1 : unitTokens.size()) << "\n";
  // Flags the link decides per unit (ASPEN_VERTEX_INPUTS_READ_ONLY), added to its entries.
  os << "#define ASPEN_UNIT_FLAGS";
  for (std::size_t u = 0; u < std::max<std::size_t>(unitTokens.size(), 1); ++u)
    os << (u ? ", " : " ") << (u < unitFlags.size() ? unitFlags[u] : 0u) << "u";
  os << "\n#define ASPEN_COLLECT_UNITS";
  if (unitTokens.empty())
    os << " counts[0] = 0; parts[0] = 0;";
  for (std::size_t u = 0; u < unitTokens.size(); ++u)
    os << " parts[" << u << "] = aspen_codelet_unit_entries_" << unitTokens[u] << "(&counts[" << u << "]);";
  os << "\n" << kEntryPoints;
  return os.str();
}

std::string generateRegistrationUnit(const std::string &sourcePath,
                                     const std::vector<IntrospectedVertex> &vertices,
                                     const std::string &token, const std::vector<std::string> &notVertices) {
  std::ostringstream os;
  const std::string ns = "u" + token;

  // The probes: a namespace per vertex (c<v>) and per field (f<v>_<f>), each with its own
  // probe template and the one function its explicit instantiation defines. One probe template
  // shared by every field made each call an overload resolution over every field's function:
  // quadratic in the number of fields (issue 25: 10,000 fields took 278 s), and in the number
  // of vertex types for compute.
  static const char *const kComputeProbe =
      " { template <class V, class P, P M> struct Probe { friend int compute(void *v, unsigned w) "
      "{ return ::aspen_codelet::invoke(static_cast<V *>(v), M, w); } }; int compute(void *v, unsigned w); "
      "}\n";
  static const char *const kFieldProbe =
      " { template <class V, class P, P M> struct Probe { friend void describe(AspenFieldEntry *e) "
      "{ ::aspen_codelet::describeMember<V, P, M>(e); } }; void describe(AspenFieldEntry *e); }\n";
  // A vertex whose base the host compiler decides, or whose compute is overloaded: compute is
  // called (ComputeCall), not taken by address.
  static const char *const kCallProbe =
      " { template <class V> struct CallProbe { friend int compute(void *v, unsigned w) "
      "{ return ::aspen_codelet::ComputeCall<V>::run(v, w); } }; int compute(void *v, unsigned w); }\n";
  const auto byCall = [](const IntrospectedVertex &vx) { return vx.baseDeferred || vx.computeOverloaded; };
  os << "namespace aspen_codelet {\nnamespace " << ns << " {\n";
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    os << "namespace c" << v << (byCall(vertices[v]) ? kCallProbe : kComputeProbe);
    for (std::size_t f = 0; f < vertices[v].fields.size(); ++f)
      os << "namespace f" << v << "_" << f << kFieldProbe;
  }
  os << "} // namespace " << ns << "\n} // namespace aspen_codelet\n\n";

  // Explicit instantiations: access checks do not apply to their arguments.
  const std::string probes = "aspen_codelet::" + ns + "::";
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const IntrospectedVertex &vx = vertices[v];
    const std::string &type = vx.name;
    if (byCall(vx))
      os << "template struct " << probes << "c" << v << "::CallProbe<" << type << " >;\n";
    else
      os << "template struct " << probes << "c" << v << "::Probe<" << type << ", decltype(&" << type
         << "::compute), &" << type << "::compute>;\n";
    for (std::size_t f = 0; f < vx.fields.size(); ++f)
      os << "template struct " << probes << "f" << v << "_" << f << "::Probe<" << type << ", decltype(&"
         << type << "::" << vx.fields[f] << "), &" << type << "::" << vx.fields[f] << ">;\n";
  }

  // Introspection and the host compiler must agree on what is not a vertex type.
  for (const std::string &name : notVertices) {
    std::string literal = quoted(std::string(kUnregisteredVertexMarker) + "'" + name +
                                 "': it is declared in the source, but the codelet compiler did not find it");
    os << "static_assert(!aspen_codelet::IsVertexType<" << name << " >::value, " << literal << ");\n";
  }

  // The unit's entry table: constant data (names, sizes, flags, compute entries, where each
  // vertex's fields are) and one loop that fills in the fields on first use. Code that grew
  // with the number of vertex types (a constructor with a loop and 7 statements per type) made
  // the optimiser's time grow faster than the count: 4,000 types took 77 s (issue 25).
  std::size_t totalFields = 0;
  for (const IntrospectedVertex &vx : vertices)
    totalFields += vx.fields.size();
  os << "\nnamespace aspen_codelet {\nnamespace " << ns << " {\nnamespace {\n";
  os << "AspenFieldEntry fields[" << std::max<std::size_t>(totalFields, 1) << "];\n";
  os << "const char *const fieldNames[] = {";
  bool first = true;
  for (const IntrospectedVertex &vx : vertices)
    for (const std::string &field : vx.fields) {
      os << (first ? "" : ",\n  ") << quoted(field);
      first = false;
    }
  os << (first ? "nullptr" : "") << "};\nvoid (*const fieldDescribers[])(AspenFieldEntry *) = {";
  first = true;
  for (std::size_t v = 0; v < vertices.size(); ++v)
    for (std::size_t f = 0; f < vertices[v].fields.size(); ++f) {
      os << (first ? "" : ",\n  ") << "&f" << v << "_" << f << "::describe";
      first = false;
    }
  os << (first ? "nullptr" : "") << "};\n";
  os << "const AspenVertexEntry entries[] = {\n";
  std::size_t fieldStart = 0;
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const IntrospectedVertex &vx = vertices[v];
    os << "  {" << quoted(vx.name) << ", sizeof(" << vx.name << "), alignof(" << vx.name << "), vertexFlags<"
       << vx.name << " >(), " << vx.fields.size() << ", fields + " << fieldStart << ", &c" << v
       << "::compute},\n";
    fieldStart += vx.fields.size();
  }
  if (vertices.empty())
    os << "  {nullptr, 0, 0, 0, 0, nullptr, nullptr}\n";
  os << "};\n";
  // Which entries are vertex types: those whose base the host compiler decides are kept only
  // if it finds a vertex type (a helper class with a dependent base is not one).
  os << "const bool isVertex[] = {";
  for (std::size_t v = 0; v < vertices.size(); ++v)
    os << (v ? ",\n  " : "")
       << (vertices[v].baseDeferred ? "IsVertexType<" + vertices[v].name + " >::value" : std::string("true"));
  os << (vertices.empty() ? "false" : "") << "};\n";
  os << "AspenVertexEntry kept[" << std::max<std::size_t>(vertices.size(), 1) << "];\n";
  os << "unsigned keptCount = 0;\n";
  os << "bool describeFields() {\n"
     << "  for (unsigned f = 0; f < " << totalFields << "; ++f) {\n"
     << "    fields[f].name = fieldNames[f];\n"
     << "    fieldDescribers[f](&fields[f]);\n"
     << "  }\n"
     << "  for (unsigned v = 0; v < " << vertices.size() << "; ++v)\n"
     << "    if (isVertex[v])\n"
     << "      kept[keptCount++] = entries[v];\n"
     << "  return true;\n}\n";
  os << "} // namespace\n} // namespace " << ns << "\n} // namespace aspen_codelet\n\n";
  os << "__attribute__((visibility(\"hidden\"))) const AspenVertexEntry *aspen_codelet_unit_entries_" << token
     << "(unsigned *count) {\n"
     << "  static const bool described = aspen_codelet::" << ns << "::describeFields();\n"
     << "  (void)described;\n"
     << "  *count = aspen_codelet::" << ns << "::keptCount;\n"
     << "  return aspen_codelet::" << ns << "::kept;\n}\n";

  // The support header comes first, so that the source's macros (`quarter`, `half`,
  // `Input`, `min`, ...) cannot change it; after the source, every name the generated
  // code spells is no macro (a vertex type's name is libclang's, macros expanded).
  std::string head = "// Generated by Aspen's codelet compiler: the vertex types of " + sourcePath + "\n";
  head += "#include <aspen/RegistrationSupport.hpp>\n";
  if (!sourcePath.empty())
    head += "#include " + quoted(sourcePath) + "\n";
  for (const std::string &name : identifiersToUndefine(os.str()))
    head += "#undef " + name + "\n";
  return head + "\n" + os.str();
}

} // namespace aspen::codelets
