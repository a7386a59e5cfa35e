// Copyright (c) Aspen contributors.
#include "codelets/RegistrationUnit.hpp"

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

// The library's exported functions, in the last unit. C++11.
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
    ASPEN_COLLECT_UNITS
    for (unsigned u = 0; u < ASPEN_NUM_UNITS; ++u)
      count += counts[u];
    entries = static_cast<AspenVertexEntry *>(std::calloc(count ? count : 1, sizeof(AspenVertexEntry)));
    unsigned k = 0;
    for (unsigned u = 0; u < ASPEN_NUM_UNITS; ++u)
      for (unsigned i = 0; i < counts[u]; ++i)
        entries[k++] = parts[u][i];
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

std::string generateRegistrationUnit(const std::string &sourcePath,
                                     const std::vector<IntrospectedVertex> &vertices, unsigned unitIndex,
                                     unsigned numUnits, const std::vector<std::string> &notVertices) {
  std::ostringstream os;
  const std::string ns = "u" + std::to_string(unitIndex);

  // Tags and the declarations of the friend functions the probes define.
  os << "namespace aspen_codelet {\nnamespace " << ns << " {\n";
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    os << "struct C" << v << " {};\n";
    for (std::size_t f = 0; f < vertices[v].fields.size(); ++f)
      os << "struct F" << v << "_" << f << " {};\n";
  }
  os << "} // namespace " << ns << "\n";
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    os << "int aspenCompute(" << ns << "::C" << v << ", void *, unsigned);\n";
    for (std::size_t f = 0; f < vertices[v].fields.size(); ++f)
      os << "void aspenDescribeField(" << ns << "::F" << v << "_" << f << ", AspenFieldEntry *);\n";
  }
  os << "} // namespace aspen_codelet\n\n";

  // Explicit instantiations: access checks do not apply to their arguments.
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const IntrospectedVertex &vx = vertices[v];
    const std::string &type = vx.name;
    os << "template struct aspen_codelet::ComputeProbe<aspen_codelet::" << ns << "::C" << v << ", " << type
       << ", decltype(&" << type << "::compute), &" << type << "::compute>;\n";
    for (std::size_t f = 0; f < vx.fields.size(); ++f)
      os << "template struct aspen_codelet::FieldProbe<aspen_codelet::" << ns << "::F" << v << "_" << f
         << ", " << type << ", decltype(&" << type << "::" << vx.fields[f] << "), &" << type
         << "::" << vx.fields[f] << ">;\n";
  }

  // Introspection and the host compiler must agree on what is not a vertex type.
  for (const std::string &name : notVertices) {
    std::string literal = quoted(std::string(kUnregisteredVertexMarker) + "'" + name +
                                 "': it is declared in the source, but the codelet compiler did not find it");
    os << "static_assert(!aspen_codelet::IsVertexType<" << name << " >::value, " << literal << ");\n";
  }

  // The unit's entry table, built on first use.
  os << "\nnamespace aspen_codelet {\nnamespace " << ns << " {\nnamespace {\n";
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    os << "int compute" << v << "(void *vertex, unsigned workerId) { return aspenCompute(C" << v
       << "(), vertex, workerId); }\n";
    // Per field a small function, and tables the constructor loops over: one function of
    // 2n statements made the host compiler's time grow faster than n (issue 25: 4,000 fields
    // took over 300 s).
    const IntrospectedVertex &vx = vertices[v];
    if (vx.fields.empty())
      continue;
    for (std::size_t f = 0; f < vx.fields.size(); ++f)
      os << "void describe" << v << "_" << f << "(AspenFieldEntry *e) { aspenDescribeField(F" << v << "_" << f
         << "(), e); }\n";
    os << "const char *const fieldNames" << v << "[] = {";
    for (std::size_t f = 0; f < vx.fields.size(); ++f)
      os << (f ? ", " : "") << quoted(vx.fields[f]);
    os << "};\nvoid (*const fieldDescribers" << v << "[])(AspenFieldEntry *) = {";
    for (std::size_t f = 0; f < vx.fields.size(); ++f)
      os << (f ? ", " : "") << "&describe" << v << "_" << f;
    os << "};\n";
  }
  os << "struct Table {\n";
  for (std::size_t v = 0; v < vertices.size(); ++v)
    os << "  AspenFieldEntry fields" << v << "["
       << (vertices[v].fields.empty() ? 1 : vertices[v].fields.size()) << "];\n";
  os << "  AspenVertexEntry entries[" << (vertices.empty() ? 1 : vertices.size()) << "];\n"
     << "  Table() {\n";
  for (std::size_t v = 0; v < vertices.size(); ++v) {
    const IntrospectedVertex &vx = vertices[v];
    if (!vx.fields.empty())
      os << "    for (unsigned f = 0; f < " << vx.fields.size() << "; ++f) {\n"
         << "      fields" << v << "[f].name = fieldNames" << v << "[f];\n"
         << "      fieldDescribers" << v << "[f](&fields" << v << "[f]);\n"
         << "    }\n";
    os << "    entries[" << v << "].name = " << quoted(vx.name) << ";\n"
       << "    entries[" << v << "].size = sizeof(" << vx.name << ");\n"
       << "    entries[" << v << "].align = alignof(" << vx.name << ");\n"
       << "    entries[" << v << "].flags = vertexFlags<" << vx.name << ">();\n"
       << "    entries[" << v << "].numFields = " << vx.fields.size() << ";\n"
       << "    entries[" << v << "].fields = fields" << v << ";\n"
       << "    entries[" << v << "].compute = &compute" << v << ";\n";
  }
  os << "  }\n};\n} // namespace\n} // namespace " << ns << "\n} // namespace aspen_codelet\n\n";
  os << "__attribute__((visibility(\"hidden\"))) const AspenVertexEntry *aspen_codelet_unit_entries_"
     << unitIndex << "(unsigned *count) {\n"
     << "  static aspen_codelet::" << ns << "::Table table;\n"
     << "  *count = " << vertices.size() << ";\n"
     << "  return table.entries;\n}\n";

  if (unitIndex + 1 == numUnits) {
    os << "\n#define ASPEN_NUM_UNITS " << numUnits << "\n";
    for (unsigned u = 0; u + 1 < numUnits; ++u)
      os << "__attribute__((visibility(\"hidden\"))) const AspenVertexEntry *aspen_codelet_unit_entries_" << u
         << "(unsigned *count);\n";
    os << "#define ASPEN_COLLECT_UNITS";
    for (unsigned u = 0; u < numUnits; ++u)
      os << " parts[" << u << "] = aspen_codelet_unit_entries_" << u << "(&counts[" << u << "]);";
    os << "\n" << kEntryPoints;
  }
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
