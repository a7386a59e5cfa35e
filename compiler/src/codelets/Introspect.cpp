// Copyright (c) Aspen contributors.
#include "codelets/Introspect.hpp"

#include <clang-c/Index.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <set>
#include <type_traits>

namespace aspen::codelets {

namespace {

std::string take(CXString s) {
  const char *c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

CXCursorKind kindOf(CXCursor c) {
  return clang_getCursorKind(c);
}
bool isNull(CXCursor c) {
  return clang_Cursor_isNull(c) || clang_isInvalid(kindOf(c));
}
bool isClassLike(CXCursorKind k) {
  return k == CXCursor_ClassDecl || k == CXCursor_StructDecl;
}

template <class F> void forEachChild(CXCursor c, F &&f) {
  using Fn = std::remove_reference_t<F>;
  clang_visitChildren(
      c,
      [](CXCursor child, CXCursor, CXClientData data) {
        (*static_cast<Fn *>(data))(child);
        return CXChildVisit_Continue;
      },
      &f);
}

/// "ns::Outer::Name" (anonymous namespaces and linkage specs left out).
std::string qualifiedName(CXCursor c) {
  std::vector<std::string> parts;
  for (CXCursor p = c; !isNull(p) && kindOf(p) != CXCursor_TranslationUnit;
       p = clang_getCursorSemanticParent(p)) {
    const CXCursorKind k = kindOf(p);
    if (k == CXCursor_LinkageSpec)
      continue;
    std::string name = take(clang_getCursorSpelling(p));
    if (name.empty())
      continue;
    parts.push_back(std::move(name));
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty())
      out += "::";
    out += *it;
  }
  return out;
}

enum class VertexBase { None, Vertex, Multi, Supervisor };

VertexBase vertexBaseOf(const std::string &qualified) {
  if (qualified == "poplar::Vertex")
    return VertexBase::Vertex;
  if (qualified == "poplar::MultiVertex")
    return VertexBase::Multi;
  if (qualified == "poplar::SupervisorVertex")
    return VertexBase::Supervisor;
  return VertexBase::None;
}

bool hasMembers(CXCursor c) {
  bool any = false;
  forEachChild(c, [&](CXCursor child) {
    const CXCursorKind k = kindOf(child);
    if (k == CXCursor_FieldDecl || k == CXCursor_CXXBaseSpecifier || k == CXCursor_CXXMethod)
      any = true;
  });
  return any;
}

/// The cursor whose children describe the class: an implicit or explicit
/// instantiation shows no members, its template (or partial specialization) does.
CXCursor bodyOf(CXCursor decl) {
  if (isClassLike(kindOf(decl))) {
    CXCursor pattern = clang_getSpecializedCursorTemplate(decl);
    if (!isNull(pattern) && !hasMembers(decl))
      return pattern;
  }
  return decl;
}

/// The class (or class template) a base specifier names.
CXCursor baseDeclOf(CXCursor spec) {
  CXCursor decl = clang_getTypeDeclaration(clang_getCanonicalType(clang_getCursorType(spec)));
  if (!isNull(decl) && kindOf(decl) != CXCursor_NoDeclFound)
    return decl;
  CXCursor found = clang_getNullCursor();
  forEachChild(spec, [&](CXCursor child) { // a dependent base such as Base<T>
    if (clang_Cursor_isNull(found) &&
        (kindOf(child) == CXCursor_TemplateRef || kindOf(child) == CXCursor_TypeRef))
      found = clang_getCursorReferenced(child);
  });
  return found;
}

struct ClassWalk {
  VertexBase base = VertexBase::None;
  bool hasCompute = false;
  std::vector<std::string> fields;
};

void addField(ClassWalk &walk, CXCursor field) {
  if (clang_Cursor_isBitField(field))
    return; // a bit-field has no address, so it cannot be a vertex field
  std::string name = take(clang_getCursorSpelling(field));
  if (!name.empty())
    walk.fields.push_back(std::move(name));
}

void walkClass(CXCursor decl, CXType type, ClassWalk &walk, int depth) {
  if (depth > 32 || isNull(decl))
    return;
  const VertexBase vb = vertexBaseOf(qualifiedName(decl));
  if (vb != VertexBase::None) {
    if (walk.base == VertexBase::None || vb != VertexBase::Vertex)
      walk.base = vb;
    return;
  }
  const CXCursorKind k = kindOf(decl);
  if (!isClassLike(k) && k != CXCursor_ClassTemplate && k != CXCursor_ClassTemplatePartialSpecialization)
    return;
  CXCursor body = bodyOf(decl);
  forEachChild(body, [&](CXCursor child) {
    if (kindOf(child) == CXCursor_CXXBaseSpecifier)
      walkClass(baseDeclOf(child), clang_getCursorType(child), walk, depth + 1);
  });
  // Own fields: from the (instantiated) type when it is complete, else as written.
  bool fromType = false;
  const CXType canonical = clang_getCanonicalType(type);
  if (canonical.kind == CXType_Record) { // not for a dependent type such as Base<T>
    std::vector<CXCursor> fields;
    const long long status = clang_Type_visitFields(
        canonical,
        [](CXCursor field, CXClientData data) {
          static_cast<std::vector<CXCursor> *>(data)->push_back(field);
          return CXVisit_Continue;
        },
        &fields);
    if (status != CXTypeLayoutError_Invalid) {
      fromType = true;
      for (CXCursor f : fields)
        addField(walk, f);
    }
  }
  forEachChild(body, [&](CXCursor child) {
    const CXCursorKind ck = kindOf(child);
    if (ck == CXCursor_FieldDecl && !fromType)
      addField(walk, child);
    if ((ck == CXCursor_CXXMethod || ck == CXCursor_FunctionTemplate) &&
        take(clang_getCursorSpelling(child)) == "compute")
      walk.hasCompute = true;
  });
}

/// True for `template class Foo<float>;` (not for `template <> class Foo<int> {...}`
/// nor `extern template class ...`).
bool isExplicitInstantiation(CXCursor c) {
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
  CXToken *tokens = nullptr;
  unsigned count = 0;
  clang_tokenize(tu, clang_getCursorExtent(c), &tokens, &count);
  bool result = false;
  if (count >= 2) {
    const std::string first = take(clang_getTokenSpelling(tu, tokens[0]));
    const std::string second = take(clang_getTokenSpelling(tu, tokens[1]));
    result = first == "template" && second != "<";
  }
  clang_disposeTokens(tu, tokens, count);
  return result;
}

bool insideTemplateOrFunction(CXCursor c) {
  for (CXCursor p = clang_getCursorSemanticParent(c); !isNull(p) && kindOf(p) != CXCursor_TranslationUnit;
       p = clang_getCursorSemanticParent(p)) {
    const CXCursorKind k = kindOf(p);
    if (k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization ||
        k == CXCursor_FunctionDecl || k == CXCursor_FunctionTemplate || k == CXCursor_CXXMethod ||
        k == CXCursor_Constructor || k == CXCursor_Destructor)
      return true;
    if (isClassLike(k) && !isNull(clang_getSpecializedCursorTemplate(p)))
      return true;
  }
  return false;
}

std::string trim(const std::string &s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

/// Poplar's spelling of a type argument: no space after commas, `>>` closers.
std::string normaliseTypeSpelling(const std::string &spelling) {
  std::string out;
  for (std::size_t i = 0; i < spelling.size(); ++i) {
    const char ch = spelling[i];
    const bool afterComma = !out.empty() && out.back() == ',';
    const bool betweenClosers =
        !out.empty() && out.back() == '>' && i + 1 < spelling.size() && spelling[i + 1] == '>';
    if (ch == ' ' && (afterComma || betweenClosers))
      continue;
    out += ch;
  }
  return out;
}

/// The top-level template arguments of "ns::Foo<a, b<c, d>, e>" as written.
std::vector<std::string> splitTemplateArguments(const std::string &spelling) {
  std::vector<std::string> args;
  const std::size_t open = spelling.find('<');
  if (open == std::string::npos)
    return args;
  int depth = 0;
  std::string current;
  for (std::size_t i = open + 1; i < spelling.size(); ++i) {
    const char ch = spelling[i];
    if (ch == '<' || ch == '(' || ch == '[')
      ++depth;
    if (ch == '>' || ch == ')' || ch == ']') {
      if (depth == 0) {
        args.push_back(trim(current));
        break;
      }
      --depth;
    }
    if (ch == ',' && depth == 0) {
      args.push_back(trim(current));
      current.clear();
      continue;
    }
    current += ch;
  }
  return args;
}

std::vector<CXCursor> templateParameters(CXCursor primary) {
  std::vector<CXCursor> params;
  forEachChild(primary, [&](CXCursor child) {
    const CXCursorKind k = kindOf(child);
    if (k == CXCursor_TemplateTypeParameter || k == CXCursor_NonTypeTemplateParameter ||
        k == CXCursor_TemplateTemplateParameter)
      params.push_back(child);
  });
  return params;
}

/// Poplar's spelling of a non-type argument: `true`, `3`, `ns::Enum::VALUE`.
std::string canonicalValue(const std::string &text, const CXCursor *param) {
  if (text.size() == 3 && text.front() == '\'' && text.back() == '\'')
    return std::to_string(static_cast<int>(static_cast<signed char>(text[1])));
  if (!text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) {
    std::string digits = text;
    while (!digits.empty() && std::strchr("uUlL", digits.back()))
      digits.pop_back();
    return digits;
  }
  if (param && kindOf(*param) == CXCursor_NonTypeTemplateParameter) {
    CXType type = clang_getCanonicalType(clang_getCursorType(*param));
    if (type.kind == CXType_Enum) {
      const std::string enumName = qualifiedName(clang_getTypeDeclaration(type));
      const std::size_t colon = text.rfind("::");
      const std::string enumerator = colon == std::string::npos ? text : text.substr(colon + 2);
      if (!enumerator.empty() &&
          (std::isalpha(static_cast<unsigned char>(enumerator[0])) || enumerator[0] == '_'))
        return enumName + "::" + enumerator;
    }
  }
  return text;
}

std::string canonicalSpecialisationName(CXType type, CXCursor pattern) {
  CXCursor primary = pattern;
  if (kindOf(primary) == CXCursor_ClassTemplatePartialSpecialization)
    primary = clang_getSpecializedCursorTemplate(primary);
  const std::vector<CXCursor> params = templateParameters(primary);
  const std::string spelled = take(clang_getTypeSpelling(type));
  const std::vector<std::string> written = splitTemplateArguments(spelled);
  const int count = clang_Type_getNumTemplateArguments(type);
  if (count < 0)
    return normaliseTypeSpelling(spelled);
  std::string name = qualifiedName(primary) + "<";
  for (int i = 0; i < count; ++i) {
    if (i)
      name += ",";
    CXType arg = clang_Type_getTemplateArgumentAsType(type, static_cast<unsigned>(i));
    if (arg.kind != CXType_Invalid) {
      name += normaliseTypeSpelling(take(clang_getTypeSpelling(arg)));
    } else {
      const std::string text = static_cast<std::size_t>(i) < written.size() ? written[i] : "";
      name += canonicalValue(text, static_cast<std::size_t>(i) < params.size() ? &params[i] : nullptr);
    }
  }
  return name + ">";
}

class Collector {
public:
  IntrospectionResult result;

  void visitScope(CXCursor scope) {
    forEachChild(scope, [&](CXCursor c) {
      if (clang_Location_isInSystemHeader(clang_getCursorLocation(c)))
        return;
      const CXCursorKind k = kindOf(c);
      if (k == CXCursor_Namespace || k == CXCursor_LinkageSpec || k == CXCursor_UnexposedDecl)
        visitScope(c);
      else if (isClassLike(k))
        considerClass(c);
    });
  }

private:
  std::set<std::string> seen_;

  void considerClass(CXCursor c) {
    CXCursor pattern = clang_getSpecializedCursorTemplate(c);
    ClassWalk walk;
    std::string name;
    if (!isNull(pattern)) {
      if (!isExplicitInstantiation(c))
        return;
      CXType type = clang_getCursorType(c);
      walkClass(c, type, walk, 0);
      if (walk.base == VertexBase::None || !walk.hasCompute)
        return;
      name = canonicalSpecialisationName(type, pattern);
    } else {
      if (!clang_isCursorDefinition(c) || insideTemplateOrFunction(c))
        return;
      walkClass(c, clang_getCursorType(c), walk, 0);
      if (walk.base == VertexBase::None || !walk.hasCompute)
        return;
      name = qualifiedName(c);
      // Nested vertex classes are vertex types too.
      visitScope(c);
    }
    if (!seen_.insert(name).second)
      return;
    IntrospectedVertex v;
    v.name = name;
    v.fields = std::move(walk.fields);
    CXFile file;
    unsigned line = 0, column = 0, offset = 0;
    clang_getSpellingLocation(clang_getCursorLocation(c), &file, &line, &column, &offset);
    v.file = file ? take(clang_getFileName(file)) : "";
    v.line = line;
    result.vertices.push_back(std::move(v));
  }
};

} // namespace

IntrospectionResult introspectCodelets(const std::string &sourcePath,
                                       const std::vector<std::string> &clangArgs) {
  // libclang is thread-safe per index, but keep codelet parsing simple and serial.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);

  std::vector<const char *> args;
  args.reserve(clangArgs.size() + 4);
  args.push_back("-x");
  args.push_back("c++");
  for (const std::string &a : clangArgs)
    args.push_back(a.c_str());
  args.push_back("-Wno-everything");

  CXIndex index = clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0);
  CXTranslationUnit tu = nullptr;
  const unsigned options = CXTranslationUnit_SkipFunctionBodies | CXTranslationUnit_KeepGoing;
  const CXErrorCode status = clang_parseTranslationUnit2(
      index, sourcePath.c_str(), args.data(), static_cast<int>(args.size()), nullptr, 0, options, &tu);
  Collector collector;
  if (status != CXError_Success || !tu) {
    collector.result.errors = "libclang could not parse " + sourcePath + " (error " +
                              std::to_string(static_cast<int>(status)) + ")\n";
    clang_disposeIndex(index);
    return collector.result;
  }
  const unsigned numDiagnostics = clang_getNumDiagnostics(tu);
  for (unsigned i = 0; i < numDiagnostics; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error)
      collector.result.errors +=
          take(clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions())) + "\n";
    clang_disposeDiagnostic(d);
  }
  collector.visitScope(clang_getTranslationUnitCursor(tu));
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return std::move(collector.result);
}

} // namespace aspen::codelets
