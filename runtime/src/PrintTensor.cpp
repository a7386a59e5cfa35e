// Copyright (c) Aspen contributors.
#include "PrintTensor.hpp"

#include "DeviceScalar.hpp"

#include <cstdio>
#include <cstring>

namespace aspen::rt {

std::string formatElement(poplar::Type::Id type, const std::uint8_t *p) {
  char buffer[64];
  if (isFloatingPointType(type)) {
    std::snprintf(buffer, sizeof buffer, "%.7f", readScalarAsDouble(p, type));
    return buffer;
  }
  if (isSignedType(type))
    std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(readScalarAsInt(p, type)));
  else
    std::snprintf(buffer, sizeof buffer, "%llu", static_cast<unsigned long long>(readScalarAsInt(p, type)));
  return buffer;
}

namespace {

struct Printer {
  std::ostream &os;
  poplar::Type::Id type;
  std::size_t elementBytes;
  const std::vector<std::uint64_t> &shape;

  // Prints the sub-array of dimension `dim` whose first element is `data`;
  // the caller has already written the indentation or the title.
  const std::uint8_t *print(unsigned dim, const std::uint8_t *data, unsigned indent) {
    if (dim + 1 == shape.size()) {
      os << '[';
      for (std::uint64_t i = 0; i < shape[dim]; ++i) {
        if (i != 0)
          os << ' ';
        os << formatElement(type, data);
        data += elementBytes;
      }
      os << ']';
      return data;
    }
    os << "[\n";
    for (std::uint64_t i = 0; i < shape[dim]; ++i) {
      os << std::string(indent + 2, ' ');
      data = print(dim + 1, data, indent + 2);
      os << '\n';
    }
    os << std::string(indent, ' ') << ']';
    return data;
  }
};

} // namespace

void printTensor(std::ostream &os, const std::string &title, poplar::Type::Id type,
                 const std::vector<std::uint64_t> &shape, const std::uint8_t *data) {
  if (!title.empty())
    os << title << ": ";
  if (shape.empty()) {
    os << formatElement(type, data) << '\n';
    return;
  }
  Printer printer{os, type, deviceTypeSize(type), shape};
  printer.print(0, data, 0);
  os << '\n';
}

} // namespace aspen::rt
