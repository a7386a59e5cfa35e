// Copyright (c) Aspen contributors.
// fp8: QuarterMetadata, host conversions (poplar/TypeConversion.hpp).
#include "poplar/Quarter.hpp"
#include "poplar/TypeConversion.hpp"
#include "poplar/exceptions.hpp"

#include "util/HostConvert.hpp"
#include "util/QuarterConvert.hpp"

#include <sstream>

namespace poplar {

QuarterMetadata::QuarterMetadata(Format format, std::int8_t scale) {
  if (format != Format::F143 && format != Format::F152)
    throw poplar_error("QuarterMetadata: invalid format " + std::to_string(static_cast<int>(format)));
  if (scale < -32 || scale > 31)
    throw poplar_error("QuarterMetadata: scale " + std::to_string(scale) +
                       " is outside the range -32..31 of the metadata's 6-bit scale");
  binary_ = static_cast<std::uint8_t>((format == Format::F143 ? 0x80 : 0x00) |
                                      (static_cast<unsigned>(scale) & 0x3f));
}

QuarterMetadata::QuarterMetadata(std::uint8_t binary) {
  if (binary & 0x40) {
    std::ostringstream os;
    os << "QuarterMetadata: binary 0x" << std::hex << static_cast<unsigned>(binary)
       << " has an invalid format field (bit 6 must be 0; bit 7 is 1 for F143, 0 for F152)";
    throw poplar_error(os.str());
  }
  binary_ = binary; // bit 7 the format, bits 0-5 the scale in two's complement
}

std::string QuarterMetadata::toString() const {
  std::ostringstream os;
  os << *this;
  return os.str();
}

std::ostream &operator<<(std::ostream &os, const QuarterMetadata &md) {
  return os << (md.getFormat() == QuarterMetadata::Format::F143 ? "F143" : "F152") << " scale "
            << static_cast<int>(md.getScale());
}

namespace {

void requireQuarter(const Type &type, const char *what) {
  if (type != QUARTER)
    throw type_error(std::string(what) + ": metadata is given but the type is " + type.toString().str() +
                     ", not quarter");
}

template <class T> void toDevice(Type dstType, ArrayRef<T> src, void *dst) {
  aspen::util::convertHostToDevice(equivalent_device_type<T>().value, src.data(), dstType, dst, src.size());
}

template <class T> void fromDevice(Type srcType, const void *src, ArrayRef<T> dst) {
  aspen::util::convertDeviceToHost(srcType, src, equivalent_device_type<T>().value,
                                   const_cast<T *>(dst.data()), dst.size());
}

template <class T>
void toQuarter(Type dstType, const QuarterMetadata &md, ArrayRef<T> src, void *dst, bool nanOnOverflow) {
  requireQuarter(dstType, "convertToDeviceType");
  auto *out = static_cast<std::uint8_t *>(dst);
  for (std::size_t i = 0; i < src.size(); ++i)
    out[i] = aspen::util::encodeQuarter(static_cast<double>(src[i]), md, nanOnOverflow);
}

template <class T>
void fromQuarter(Type srcType, const QuarterMetadata &md, const void *src, ArrayRef<T> dst) {
  requireQuarter(srcType, "convertFromDeviceType");
  const auto *in = static_cast<const std::uint8_t *>(src);
  T *out = const_cast<T *>(dst.data());
  for (std::size_t i = 0; i < dst.size(); ++i)
    out[i] = static_cast<T>(aspen::util::decodeQuarter(in[i], md));
}

} // namespace

void convertToDeviceType(Type dstType, ArrayRef<float> src, void *dst) {
  toDevice(dstType, src, dst);
}
void convertToDeviceType(Type dstType, ArrayRef<double> src, void *dst) {
  toDevice(dstType, src, dst);
}
void convertToDeviceType(Type dstType, const QuarterMetadata &metadata, ArrayRef<float> src, void *dst,
                         bool nanOnOverflow) {
  toQuarter(dstType, metadata, src, dst, nanOnOverflow);
}
void convertToDeviceType(Type dstType, const QuarterMetadata &metadata, ArrayRef<double> src, void *dst,
                         bool nanOnOverflow) {
  toQuarter(dstType, metadata, src, dst, nanOnOverflow);
}
void convertFromDeviceType(Type srcType, const void *src, ArrayRef<float> dst) {
  fromDevice(srcType, src, dst);
}
void convertFromDeviceType(Type srcType, const void *src, ArrayRef<double> dst) {
  fromDevice(srcType, src, dst);
}
void convertFromDeviceType(Type srcType, const QuarterMetadata &metadata, const void *src,
                           ArrayRef<float> dst) {
  fromQuarter(srcType, metadata, src, dst);
}
void convertFromDeviceType(Type srcType, const QuarterMetadata &metadata, const void *src,
                           ArrayRef<double> dst) {
  fromQuarter(srcType, metadata, src, dst);
}

} // namespace poplar
