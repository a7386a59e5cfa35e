// Copyright (c) Aspen contributors.
// Element types: spellings, device sizes and classification.
#include "poplar/Type.hpp"

#include "util/Assert.hpp"

#include <type_traits>

namespace poplar {

const Type BOOL(Type::Id::Bool);
const Type CHAR(Type::Id::Char);
const Type SIGNED_CHAR(Type::Id::SignedChar);
const Type UNSIGNED_CHAR(Type::Id::UnsignedChar);
const Type SHORT(Type::Id::Short);
const Type UNSIGNED_SHORT(Type::Id::UnsignedShort);
const Type INT(Type::Id::Int);
const Type UNSIGNED_INT(Type::Id::UnsignedInt);
const Type LONG(Type::Id::Long);
const Type UNSIGNED_LONG(Type::Id::UnsignedLong);
const Type LONGLONG(Type::Id::LongLong);
const Type UNSIGNED_LONGLONG(Type::Id::UnsignedLongLong);
const Type HALF(Type::Id::Half);
const Type FLOAT(Type::Id::Float);
const Type DOUBLE(Type::Id::Double);
const Type QUARTER(Type::Id::Quarter);
const Type QUARTER_METADATA(Type::Id::QuarterMetadata);

namespace {

struct TypeInfo {
  const char *name;
  std::size_t size;
  bool isFloat;
  bool isIntegral;
  bool isSigned;
};

// Indexed by Type::Id. Codelets are compiled for the host, so the device sizes
// of the C integer types are the host's (`long` is 8 bytes, as the vertex
// objects the runtime builds see it).
constexpr TypeInfo typeTable[] = {
    {"<invalid>", 0, false, false, false},
    {"bool", sizeof(bool), false, true, false},
    {"char", 1, false, true, std::is_signed<char>::value},
    {"signed char", 1, false, true, true},
    {"unsigned char", 1, false, true, false},
    {"short", 2, false, true, true},
    {"unsigned short", 2, false, true, false},
    {"int", 4, false, true, true},
    {"unsigned int", 4, false, true, false},
    {"long", sizeof(long), false, true, true},
    {"unsigned long", sizeof(unsigned long), false, true, false},
    {"long long", 8, false, true, true},
    {"unsigned long long", 8, false, true, false},
    {"half", 2, true, false, true},
    {"float", 4, true, false, true},
    {"double", 8, true, false, true},
    {"quarter", 1, true, false, true},
    {"quarter_metadata", 1, false, false, false},
};
static_assert(sizeof(typeTable) / sizeof(typeTable[0]) ==
                  static_cast<std::size_t>(Type::Id::QuarterMetadata) + 1,
              "typeTable must list every Type::Id");

const TypeInfo &info(Type::Id id) {
  auto index = static_cast<std::size_t>(id);
  ASPEN_ASSERT(index < sizeof(typeTable) / sizeof(typeTable[0]), "Type id out of range");
  return typeTable[index];
}

} // namespace

StringRef Type::toString() const {
  return info(id_).name;
}
std::size_t Type::size() const {
  return info(id_).size;
}
bool Type::isFloatingPoint() const {
  return info(id_).isFloat;
}
bool Type::isIntegral() const {
  return info(id_).isIntegral;
}
bool Type::isSigned() const {
  return info(id_).isSigned;
}

std::ostream &operator<<(std::ostream &os, const Type &t) {
  return os << t.toString();
}

} // namespace poplar
