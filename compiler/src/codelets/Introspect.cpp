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
  unsigned computeDecls = 0;
  /// A base the pattern cannot resolve whose spelling names a vertex base.
  bool baseDeferred = false;
  std::vector<std::string> fields;
  std::vector<std::string> fieldTypes;
};

void addField(ClassWalk &walk, CXCursor field) {
  if (clang_Cursor_isBitField(field))
    return; // a bit-field has no address, so it cannot be a vertex field
  std::string name = take(clang_getCursorSpelling(field));
  if (!name.empty()) {
    walk.fields.push_back(std::move(name));
    walk.fieldTypes.push_back(take(clang_getTypeSpelling(clang_getCursorType(field))));
  }
}

void walkClass(CXCursor decl, CXType type, ClassWalk &walk, int depth);

bool isClassOrTemplate(CXCursor decl) {
  const CXCursorKind k = kindOf(decl);
  return isClassLike(k) || k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization;
}

/// Whether a base specifier's spelling names, anywhere in it, a vertex base or a class
/// deriving from one (`std::conditional_t<C, poplar::SupervisorVertex, MultiVertex>`,
/// `std::conditional_t<C, MyBase<T>, poplar::Vertex>`).
bool spellingNamesVertexBase(CXCursor spec, int depth) {
  struct State {
    bool names;
    int depth;
  } state{false, depth};
  clang_visitChildren(
      spec,
      [](CXCursor child, CXCursor, CXClientData data) {
        State &s = *static_cast<State *>(data);
        const CXCursorKind k = kindOf(child);
        if (k == CXCursor_TypeRef || k == CXCursor_TemplateRef) {
          CXCursor referenced = clang_getCursorReferenced(child);
          const CXCursorKind rk = isNull(referenced) ? CXCursor_NoDeclFound : kindOf(referenced);
          if (isClassOrTemplate(referenced)) {
            ClassWalk probe;
            walkClass(referenced, clang_getCursorType(referenced), probe, s.depth + 1);
            s.names = s.names || probe.base != VertexBase::None || probe.baseDeferred;
          } else if ((rk == CXCursor_TypeAliasTemplateDecl || rk == CXCursor_TypeAliasDecl ||
                      rk == CXCursor_TypedefDecl) &&
                     s.depth < 32) {
            // An alias of the user's (`template <Kind K> using BaseOf = std::conditional_t<...>`):
            // what it stands for.
            s.names = spellingNamesVertexBase(referenced, s.depth + 1);
          }
        }
        return s.names ? CXChildVisit_Break : CXChildVisit_Recurse;
      },
      &state);
  return state.names;
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
    if (kindOf(child) != CXCursor_CXXBaseSpecifier)
      return;
    const CXCursor baseDecl = baseDeclOf(child);
    if (isNull(baseDecl) || !isClassOrTemplate(baseDecl)) {
      // An alias template, a template parameter, a member type of a dependent type: only
      // the instantiation knows the class. Deferred to the host compiler when it can be a
      // vertex base.
      if (spellingNamesVertexBase(child, depth))
        walk.baseDeferred = true;
      return;
    }
    walkClass(baseDecl, clang_getCursorType(child), walk, depth + 1);
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
        take(clang_getCursorSpelling(child)) == "compute") {
      walk.hasCompute = true;
      ++walk.computeDecls;
    }
  });
}

/// Whether libclang shows a class body (bases, members) under this specialization.
bool hasBodyChildren(CXCursor c) {
  bool hasBody = false;
  forEachChild(c, [&](CXCursor child) {
    const CXCursorKind k = kindOf(child);
    hasBody = hasBody || clang_isDeclaration(k) || k == CXCursor_CXXBaseSpecifier;
  });
  return hasBody;
}

/// True for an explicit instantiation (`template class Foo<float>;`), however it is
/// spelled: written out, produced by a macro from another header, nested macros.
/// libclang visits the body (bases, fields, methods) of an explicit specialization
/// (`template <> class Foo<int> {...}`) but never that of an explicit instantiation,
/// whose children only name the template and its arguments; an implicit instantiation
/// is not a declaration of the translation unit at all. The tokens only tell an
/// explicit instantiation declaration (`extern template class ...`) apart, when it is
/// written out (through a macro the tokens are the macro's name).
bool isExplicitInstantiation(CXCursor c) {
  if (hasBodyChildren(c))
    return false;
  CXTranslationUnit tu = clang_Cursor_getTranslationUnit(c);
  CXToken *tokens = nullptr;
  unsigned count = 0;
  clang_tokenize(tu, clang_getCursorExtent(c), &tokens, &count);
  bool isExtern = false;
  for (unsigned i = 0; i < count && i < 2; ++i)
    isExtern = isExtern || take(clang_getTokenSpelling(tu, tokens[i])) == "extern";
  bool isSpecialization = false;
  if (count >= 2)
    isSpecialization = take(clang_getTokenSpelling(tu, tokens[0])) == "template" &&
                       take(clang_getTokenSpelling(tu, tokens[1])) == "<";
  clang_disposeTokens(tu, tokens, count);
  return !isExtern && !isSpecialization;
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

/// Poplar's spelling of a type argument: no space after commas, `>>` closers, no
/// `(anonymous namespace)::` (a name the generated unit could not spell; it sees the
/// source's anonymous namespace anyway).
/// The name <ipudef.h> gives a vector of `count` elements spelled `element` (float2,
/// half4, uint2, ...), or "" for a vector type it does not declare.
std::string ipuVectorName(const std::string &element, const std::string &count) {
  static const char *const kElements[][2] = {{"float", "float"},
                                             {"int", "int"},
                                             {"unsigned int", "uint"},
                                             {"short", "short"},
                                             {"unsigned short", "ushort"},
                                             {"char", "char"},
                                             {"unsigned char", "uchar"},
                                             {"signed char", "schar"},
                                             {"long", "long"},
                                             {"long long", "longlong"},
                                             {"unsigned long long", "ulonglong"},
                                             {"__fp16", "half"},
                                             {"_Float16", "half"},
                                             {"half", "half"}};
  static const char *const kDeclared[] = {"float2",     "float4", "int2",    "int4",    "uint2", "uint4",
                                          "short2",     "short4", "ushort2", "ushort4", "char2", "char4",
                                          "uchar2",     "uchar4", "schar2",  "schar4",  "long2", "longlong2",
                                          "ulonglong2", "half2",  "half4"};
  for (const auto &e : kElements)
    if (element == e[0])
      for (const char *declared : kDeclared)
        if (std::string(e[1]) + count == declared)
          return declared;
  return "";
}

/// Clang's spelling of the IPU's vector types as <ipudef.h> names them:
/// `float __attribute__((ext_vector_type(2)))` and
/// `__attribute__((__vector_size__(2 * sizeof(float)))) float` are `float2`.
std::string ipuVectorSpelling(const std::string &spellingIn) {
  std::string spelling = spellingIn;
  // (Built from two literals: GCC 12 misparses a literal ending in "type(" before ");".)
  static const std::string kExt = std::string(" __attribute__((ext_vector_type") + "(";
  for (std::size_t at; (at = spelling.find(kExt)) != std::string::npos;) {
    std::size_t begin = at; // the element type: words back to a delimiter
    while (begin > 0 && std::strchr("<,( ", spelling[begin - 1]) == nullptr)
      --begin;
    while (begin > 1 && spelling[begin - 1] == ' ' && std::strchr("<,(", spelling[begin - 2]) == nullptr) {
      --begin;
      while (begin > 0 && std::strchr("<,( ", spelling[begin - 1]) == nullptr)
        --begin;
    }
    const std::size_t countBegin = at + kExt.size();
    const std::size_t countEnd = spelling.find(')', countBegin);
    if (countEnd == std::string::npos || spelling.compare(countEnd, 3, ")))") != 0)
      break;
    const std::string name = ipuVectorName(trim(spelling.substr(begin, at - begin)),
                                           spelling.substr(countBegin, countEnd - countBegin));
    if (name.empty())
      break;
    spelling.replace(begin, countEnd + 3 - begin, name);
  }
  static const std::string kSize = std::string("__attribute__((__vector_size__") + "(";
  for (std::size_t at; (at = spelling.find(kSize)) != std::string::npos;) {
    const std::size_t countBegin = at + kSize.size();
    const std::size_t times = spelling.find(" * sizeof(", countBegin);
    const std::size_t close = times == std::string::npos ? times : spelling.find(")))) ", times);
    if (close == std::string::npos)
      break;
    const std::string element = spelling.substr(times + 10, close - times - 10);
    if (spelling.compare(close + 5, element.size(), element) != 0)
      break;
    const std::string name = ipuVectorName(element, spelling.substr(countBegin, times - countBegin));
    if (name.empty())
      break;
    spelling.replace(at, close + 5 + element.size() - at, name);
  }
  return spelling;
}

/// `half` for clang's 16-bit float types, as whole words.
std::string halfSpelling(const std::string &spellingIn) {
  std::string spelling = spellingIn;
  for (const char *builtin : {"__fp16", "_Float16"}) {
    const std::size_t n = std::strlen(builtin);
    for (std::size_t at = spelling.find(builtin); at != std::string::npos; at = spelling.find(builtin, at)) {
      const bool wordStart =
          at == 0 || !(std::isalnum(static_cast<unsigned char>(spelling[at - 1])) || spelling[at - 1] == '_');
      const bool wordEnd =
          at + n == spelling.size() ||
          !(std::isalnum(static_cast<unsigned char>(spelling[at + n])) || spelling[at + n] == '_');
      if (wordStart && wordEnd) {
        spelling.replace(at, n, "half");
        at += 4;
      } else {
        at += n;
      }
    }
  }
  return spelling;
}

std::string normaliseTypeSpelling(const std::string &spellingIn) {
  std::string spelling = halfSpelling(ipuVectorSpelling(spellingIn));
  for (std::size_t at; (at = spelling.find("(anonymous namespace)::")) != std::string::npos;)
    spelling.erase(at, 23);
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

/// Poplar's spelling of an integral template argument of parameter `param`:
/// `true`, `3`, `ns::Enum::VALUE`.
std::string integralSpelling(long long value, unsigned long long unsignedValue, const CXCursor *param) {
  CXType type = param ? clang_getCanonicalType(clang_getCursorType(*param)) : CXType{};
  const bool isUnsigned = type.kind == CXType_UInt || type.kind == CXType_ULong ||
                          type.kind == CXType_ULongLong || type.kind == CXType_UShort ||
                          type.kind == CXType_UChar || type.kind == CXType_Char16 ||
                          type.kind == CXType_Char32 || type.kind == CXType_UInt128;
  if (type.kind == CXType_Bool)
    return value ? "true" : "false";
  if (type.kind == CXType_Enum) {
    CXCursor decl = clang_getTypeDeclaration(type);
    std::string enumerator;
    forEachChild(decl, [&](CXCursor child) {
      if (enumerator.empty() && kindOf(child) == CXCursor_EnumConstantDecl &&
          clang_getEnumConstantDeclValue(child) == value)
        enumerator = take(clang_getCursorSpelling(child));
    });
    if (!enumerator.empty())
      return qualifiedName(decl) + "::" + enumerator;
    return "(" + qualifiedName(decl) + ")" + std::to_string(value);
  }
  return isUnsigned ? std::to_string(unsignedValue) : std::to_string(value);
}

/// The value of a non-type template parameter's default argument, spelled as above;
/// empty if it has none or it cannot be evaluated on its own (it depends on other
/// parameters).
std::string defaultArgument(const CXCursor &param) {
  if (kindOf(param) != CXCursor_NonTypeTemplateParameter)
    return "";
  std::string out;
  forEachChild(param, [&](CXCursor child) {
    if (!out.empty() || !clang_isExpression(kindOf(child)))
      return;
    CXEvalResult result = clang_Cursor_Evaluate(child);
    if (!result)
      return;
    if (clang_EvalResult_getKind(result) == CXEval_Int)
      out = integralSpelling(clang_EvalResult_getAsLongLong(result), clang_EvalResult_getAsUnsigned(result),
                             &param);
    clang_EvalResult_dispose(result);
  });
  return out;
}

/// The canonical name of the explicit instantiation `specialization` of `pattern`.
/// `alias` receives the name with only the arguments the source wrote, when it left
/// defaulted ones out (`Foo<float>`), else "".
std::string canonicalSpecialisationName(CXCursor specialization, CXType type, CXCursor pattern,
                                        std::string &alias) {
  alias.clear();
  CXCursor primary = pattern;
  if (kindOf(primary) == CXCursor_ClassTemplatePartialSpecialization)
    primary = clang_getSpecializedCursorTemplate(primary);
  const std::vector<CXCursor> params = templateParameters(primary);
  const std::string spelled = take(clang_getTypeSpelling(type));
  const std::vector<std::string> written = splitTemplateArguments(spelled);
  const int count = clang_Type_getNumTemplateArguments(type);
  const int cursorCount = clang_Cursor_getNumTemplateArguments(specialization);
  if (count < 0 && cursorCount < 0)
    return normaliseTypeSpelling(spelled);
  // Every argument, defaulted ones included (`Foo<float,2,float,false>` for
  // `template class Foo<float>;`), however the instantiation was written, so that a
  // type has one name; never an empty argument (`Foo<float,>`).
  const int n = std::max(count, cursorCount);
  std::string name = qualifiedName(primary) + "<";
  const bool wroteFewer =
      spelled.find('<') != std::string::npos && !written.empty() && static_cast<int>(written.size()) < n;
  for (int i = 0; i < n; ++i) {
    if (wroteFewer && static_cast<std::size_t>(i) == written.size())
      alias = name + ">";
    if (i)
      name += ",";
    const auto u = static_cast<unsigned>(i);
    const CXCursor *param = u < params.size() ? &params[u] : nullptr;
    CXType arg = i < count ? clang_Type_getTemplateArgumentAsType(type, u) : CXType{};
    if (arg.kind != CXType_Invalid) {
      name += normaliseTypeSpelling(take(clang_getTypeSpelling(clang_getCanonicalType(arg))));
      continue;
    }
    const CXTemplateArgumentKind kind = i < cursorCount
                                            ? clang_Cursor_getTemplateArgumentKind(specialization, u)
                                            : CXTemplateArgumentKind_Invalid;
    if (kind == CXTemplateArgumentKind_Integral) {
      name += integralSpelling(clang_Cursor_getTemplateArgumentValue(specialization, u),
                               clang_Cursor_getTemplateArgumentUnsignedValue(specialization, u), param);
    } else if (u < written.size()) {
      name += canonicalValue(written[u], param);
    } else if (param) {
      name += defaultArgument(*param); // empty (and so rejected by name) if it cannot be evaluated
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
  std::set<std::string> seen_, notVertexSeen_;

  void considerClass(CXCursor c) {
    CXCursor pattern = clang_getSpecializedCursorTemplate(c);
    ClassWalk walk;
    std::string name, alias;
    if (!isNull(pattern)) {
      // An explicit instantiation, or an explicit specialization with a body (a
      // complete class of its own, as PopLibs writes some vertices).
      if (!isExplicitInstantiation(c) && !(hasBodyChildren(c) && clang_isCursorDefinition(c)))
        return;
      CXType type = clang_getCursorType(c);
      walkClass(c, type, walk, 0);
      name = canonicalSpecialisationName(c, type, pattern, alias);
      const bool deferred = walk.base == VertexBase::None && walk.baseDeferred && walk.hasCompute;
      if (!deferred && (walk.base == VertexBase::None || !walk.hasCompute)) {
        if (notVertexSeen_.insert(name).second)
          result.notVertices.push_back(name);
        return;
      }
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
    v.alias = alias;
    v.fields = std::move(walk.fields);
    v.fieldTypes = std::move(walk.fieldTypes);
    v.baseDeferred = walk.base == VertexBase::None;
    v.computeOverloaded = walk.computeDecls > 1;
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
