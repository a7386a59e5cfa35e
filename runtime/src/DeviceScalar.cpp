// Copyright (c) Aspen contributors.
#include "DeviceScalar.hpp"

#include "util/Half.hpp"

#include <cstring>

namespace aspen::rt {

using Id = poplar::Type::Id;

std::size_t deviceTypeSize(Id type) {
  return poplar::Type(type).size();
}
bool isFloatingPointType(Id type) {
  return poplar::Type(type).isFloatingPoint();
}
bool isSignedType(Id type) {
  return poplar::Type(type).isSigned();
}

namespace {
template <class T> T load(const std::uint8_t *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}
template <class T> void store(std::uint8_t *p, T value) {
  std::memcpy(p, &value, sizeof value);
}

std::uint64_t loadUnsigned(const std::uint8_t *p, std::size_t bytes) {
  switch (bytes) {
  case 1:
    return load<std::uint8_t>(p);
  case 2:
    return load<std::uint16_t>(p);
  case 4:
    return load<std::uint32_t>(p);
  default:
    return load<std::uint64_t>(p);
  }
}

std::int64_t loadSigned(const std::uint8_t *p, std::size_t bytes) {
  switch (bytes) {
  case 1:
    return load<std::int8_t>(p);
  case 2:
    return load<std::int16_t>(p);
  case 4:
    return load<std::int32_t>(p);
  default:
    return load<std::int64_t>(p);
  }
}
} // namespace

double readScalarAsDouble(const std::uint8_t *p, Id type) {
  switch (type) {
  case Id::Half:
    return util::halfToDouble(load<std::uint16_t>(p));
  case Id::Float:
    return load<float>(p);
  case Id::Double:
    return load<double>(p);
  default:
    break;
  }
  if (isSignedType(type))
    return static_cast<double>(loadSigned(p, deviceTypeSize(type)));
  return static_cast<double>(loadUnsigned(p, deviceTypeSize(type)));
}

std::int64_t readScalarAsInt(const std::uint8_t *p, Id type) {
  if (isFloatingPointType(type))
    return static_cast<std::int64_t>(readScalarAsDouble(p, type));
  if (isSignedType(type))
    return loadSigned(p, deviceTypeSize(type));
  return static_cast<std::int64_t>(loadUnsigned(p, deviceTypeSize(type)));
}

bool scalarIsNonZero(const std::uint8_t *p, Id type) {
  if (isFloatingPointType(type))
    return readScalarAsDouble(p, type) != 0.0;
  return loadUnsigned(p, deviceTypeSize(type)) != 0;
}

void writeScalarInt(std::uint8_t *p, Id type, std::int64_t value) {
  switch (type) {
  case Id::Half:
    store(p, util::doubleToHalf(static_cast<double>(value)));
    return;
  case Id::Float:
    store(p, static_cast<float>(value));
    return;
  case Id::Double:
    store(p, static_cast<double>(value));
    return;
  default:
    break;
  }
  switch (deviceTypeSize(type)) {
  case 1:
    store(p, static_cast<std::uint8_t>(value));
    return;
  case 2:
    store(p, static_cast<std::uint16_t>(value));
    return;
  case 4:
    store(p, static_cast<std::uint32_t>(value));
    return;
  default:
    store(p, static_cast<std::uint64_t>(value));
    return;
  }
}

} // namespace aspen::rt
