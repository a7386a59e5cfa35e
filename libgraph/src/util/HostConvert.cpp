// Copyright (c) Aspen contributors.
#include "util/HostConvert.hpp"

#include "poplar/exceptions.hpp"
#include "util/Half.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace aspen::util {

namespace {

/// Stands for a binary16 element (stored as its bit pattern).
struct HalfBits {
  std::uint16_t bits;
};

template <class To, class From> To convertValue(From v) {
  if constexpr (std::is_same_v<To, HalfBits>) {
    if constexpr (std::is_same_v<From, HalfBits>)
      return v;
    else
      return HalfBits{doubleToHalf(static_cast<double>(v))};
  } else if constexpr (std::is_same_v<From, HalfBits>) {
    return convertValue<To>(halfToDouble(v.bits));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Saturate instead of the undefined behaviour of an out-of-range cast.
    if (std::isnan(v))
      return To(0);
    const long double x = std::trunc(static_cast<long double>(v));
    if (x <= static_cast<long double>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (x >= static_cast<long double>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    return static_cast<To>(v);
  }
}

template <class To, class From> void convertArray(const void *src, void *dst, std::size_t count) {
  const auto *in = static_cast<const unsigned char *>(src);
  auto *out = static_cast<unsigned char *>(dst);
  if constexpr (std::is_same_v<To, From>) {
    std::memcpy(out, in, count * sizeof(To));
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      From value;
      std::memcpy(&value, in + i * sizeof(From), sizeof(From));
      const To result = convertValue<To>(value);
      std::memcpy(out + i * sizeof(To), &result, sizeof(To));
    }
  }
}

/// Calls `f(T{})` with the C++ type that holds one element of `type`.
template <class F> void withElementType(const poplar::Type &type, const char *role, F &&f) {
  using Id = poplar::Type::Id;
  switch (type.id()) {
  case Id::Bool:
    return f(bool{});
  case Id::Char:
    return f(char{});
  case Id::SignedChar:
    return f((signed char){});
  case Id::UnsignedChar:
    return f((unsigned char){});
  case Id::Short:
    return f(short{});
  case Id::UnsignedShort:
    return f((unsigned short){});
  case Id::Int:
    return f(int{});
  case Id::UnsignedInt:
    return f(unsigned{});
  case Id::Long:
    return f(long{});
  case Id::UnsignedLong:
    return f((unsigned long){});
  case Id::LongLong:
    return f((long long){});
  case Id::UnsignedLongLong:
    return f((unsigned long long){});
  case Id::Half:
    return f(HalfBits{});
  case Id::Float:
    return f(float{});
  case Id::Double:
    return f(double{});
  default:
    throw poplar::type_error(std::string("Cannot convert ") + role + " elements of type " +
                             (type.valid() ? type.toString().str() : std::string("<invalid>")) +
                             " (quarter types need format metadata)");
  }
}

} // namespace

namespace {

bool isByteInteger(const poplar::Type &type) {
  return type == poplar::CHAR || type == poplar::SIGNED_CHAR || type == poplar::UNSIGNED_CHAR;
}

/// QUARTER_METADATA elements are bytes (QuarterMetadata::getBinary()): they convert
/// bit for bit to and from QUARTER_METADATA and the 8-bit integer types, and to no
/// other type (docs/fp8.md). Returns false when neither type is QUARTER_METADATA.
bool copyMetadataBytes(const poplar::Type &from, const char *fromRole, const void *src,
                       const poplar::Type &to, const char *toRole, void *dst, std::size_t count) {
  const bool fromMd = from == poplar::QUARTER_METADATA;
  const bool toMd = to == poplar::QUARTER_METADATA;
  if (!fromMd && !toMd)
    return false;
  if ((fromMd || isByteInteger(from)) && (toMd || isByteInteger(to))) {
    if (count)
      std::memcpy(dst, src, count);
    return true;
  }
  auto name = [](const poplar::Type &t) { return t.valid() ? t.toString().str() : std::string("<invalid>"); };
  throw poplar::type_error(
      std::string("Cannot convert ") + fromRole + " elements of type " + name(from) + " to " + toRole +
      " elements of type " + name(to) +
      ": a quarter_metadata element is one byte, QuarterMetadata::getBinary(), which "
      "converts only to and from the 8-bit integer types (unsigned char, char, signed char)");
}

} // namespace

void convertHostToDevice(const poplar::Type &hostType, const void *src, const poplar::Type &deviceType,
                         void *dst, std::size_t count) {
  if (copyMetadataBytes(hostType, "host", src, deviceType, "device", dst, count))
    return;
  withElementType(hostType, "host", [&](auto host) {
    withElementType(deviceType, "device",
                    [&](auto device) { convertArray<decltype(device), decltype(host)>(src, dst, count); });
  });
}

void convertDeviceToHost(const poplar::Type &deviceType, const void *src, const poplar::Type &hostType,
                         void *dst, std::size_t count) {
  if (copyMetadataBytes(deviceType, "device", src, hostType, "host", dst, count))
    return;
  withElementType(deviceType, "device", [&](auto device) {
    withElementType(hostType, "host",
                    [&](auto host) { convertArray<decltype(host), decltype(device)>(src, dst, count); });
  });
}

} // namespace aspen::util
