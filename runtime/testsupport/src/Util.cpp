// Copyright (c) Aspen contributors.
// poplar_test: host buffers and streams for a tensor, and host <-> device element
// conversion (include/poplar_test/Util.hpp).
#include <poplar_test/Util.hpp>

#include <poplar/TypeConversion.hpp>
#include <poplar/exceptions.hpp>

#include "../../src/HostQuarterMetadata.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

namespace poplar_test {

namespace {

// The metadata cells of quarter buffers that allocateHostMemoryForTensor made, by the
// buffer's first byte (one per replica), for attachStreams. Cells are never freed: an
// engine may still hold a stream connected to one after its buffer is gone.
struct QuarterBuffer {
  std::vector<aspen::rt::MetadataCell> cells; // one per replica
  bool uploads = false;                       // the metadata has an upload stream
};
struct Cells {
  std::mutex mutex;
  std::map<const char *, QuarterBuffer> byBuffer;
  std::vector<aspen::rt::MetadataCell> all;
};
Cells &cells() {
  static Cells *c = new Cells;
  return *c;
}

std::string uploadMetadataHandle(const std::string &name) {
  return uploadStreamHandle(name) + "/metadata";
}
std::string downloadMetadataHandle(const std::string &name) {
  return downloadStreamHandle(name) + "/metadata";
}

} // namespace

std::string uploadStreamHandle(const std::string &name) {
  return name + "/upload";
}
std::string downloadStreamHandle(const std::string &name) {
  return name + "/download";
}

std::unique_ptr<char[]> allocateHostMemoryForTensor(const poplar::Target &target, const poplar::Tensor &t,
                                                    unsigned replicationFactor,
                                                    std::size_t &allocatedSizeInBytes) {
  allocatedSizeInBytes = t.numElements() * target.getTypeSize(t.elementType()) * replicationFactor;
  // Value-initialised: a download that never ran reads as zeros, not garbage.
  return std::unique_ptr<char[]>(new char[allocatedSizeInBytes]());
}

std::unique_ptr<char[]> allocateHostMemoryForTensor(const poplar::Target &target, const poplar::Tensor &t,
                                                    unsigned replicationFactor) {
  std::size_t size = 0;
  return allocateHostMemoryForTensor(target, t, replicationFactor, size);
}

std::unique_ptr<char[]>
allocateHostMemoryForTensor(const poplar::Tensor &t, const std::string &name, poplar::Graph &graph,
                            const boost::optional<poplar::program::Sequence &> &uploadProg,
                            const boost::optional<poplar::program::Sequence &> &downloadProg,
                            std::vector<std::pair<std::string, HostMemory>> &map) {
  for (const auto &entry : map) {
    if (entry.first == name)
      throw poplar::poplar_error("allocateHostMemoryForTensor: the stream map already has a buffer named '" +
                                 name + "'");
  }
  const unsigned replicas = graph.getReplicationFactor();
  std::size_t size = 0;
  auto buffer = allocateHostMemoryForTensor(graph.getTarget(), t, replicas, size);
  if (uploadProg) {
    auto stream = graph.addHostToDeviceFIFO(uploadStreamHandle(name), t.elementType(), t.numElements());
    uploadProg->add(poplar::program::Copy(stream, t));
  }
  if (downloadProg) {
    auto stream = graph.addDeviceToHostFIFO(downloadStreamHandle(name), t.elementType(), t.numElements());
    downloadProg->add(poplar::program::Copy(t, stream));
  }
  const std::size_t perReplica = size / replicas;
  std::vector<aspen::rt::MetadataCell> mdCells;
  bool mdUploads = false;
  if (t.elementType() == poplar::QUARTER && t.hasMetadata()) {
    // The metadata travels beside the elements (see the header).
    const poplar::Tensor md = t.getMetadata();
    const poplar::Tensor mdBytes = md.reinterpret(poplar::UNSIGNED_CHAR);
    if (uploadProg && !md.containsConstant()) {
      auto stream = graph.addHostToDeviceFIFO(uploadMetadataHandle(name), poplar::UNSIGNED_CHAR, 1);
      uploadProg->add(poplar::program::Copy(stream, mdBytes));
      mdUploads = true;
    }
    if (downloadProg) {
      auto stream = graph.addDeviceToHostFIFO(downloadMetadataHandle(name), poplar::UNSIGNED_CHAR, 1);
      downloadProg->add(poplar::program::Copy(mdBytes, stream));
    }
    const std::uint8_t initial =
        aspen::rt::knownMetadataValue(md).value_or(poplar::QuarterMetadata().getBinary());
    for (unsigned r = 0; r != replicas; ++r) {
      mdCells.push_back(std::make_shared<std::uint8_t>(initial));
      const char *begin = buffer.get() + r * perReplica;
      aspen::rt::attachHostMetadataCell(begin, begin + perReplica, mdCells.back());
    }
  }
  if (mdCells.empty()) // the table may remember an earlier buffer freed at this address
    aspen::rt::forgetHostMetadata(buffer.get(), buffer.get() + size);
  {
    Cells &c = cells();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.byBuffer.erase(buffer.get()); // an earlier buffer freed at this address
    if (!mdCells.empty()) {
      c.all.insert(c.all.end(), mdCells.begin(), mdCells.end());
      c.byBuffer.emplace(buffer.get(), QuarterBuffer{std::move(mdCells), mdUploads});
    }
  }
  map.emplace_back(name,
                   HostMemory(buffer.get(), perReplica, replicas, bool(uploadProg), bool(downloadProg)));
  return buffer;
}

namespace {

void connect(poplar::Engine &e, const std::string &handle, const HostMemory &memory) {
  if (memory.replicas() == 1) {
    e.connectStream(handle, memory.data(), memory.data() + memory.bytesPerReplica());
    return;
  }
  for (unsigned r = 0; r != memory.replicas(); ++r) {
    char *begin = memory.data() + r * memory.bytesPerReplica();
    e.connectStream(handle, r, begin, begin + memory.bytesPerReplica());
  }
}

void connectCells(poplar::Engine &e, const std::string &handle,
                  const std::vector<aspen::rt::MetadataCell> &cells) {
  if (cells.size() == 1) {
    e.connectStream(handle, cells[0].get(), cells[0].get() + 1);
    return;
  }
  for (unsigned r = 0; r != cells.size(); ++r)
    e.connectStream(handle, r, cells[r].get(), cells[r].get() + 1);
}

} // namespace

void attachStreams(poplar::Engine &e, const std::vector<std::pair<std::string, HostMemory>> &map) {
  for (const auto &entry : map) {
    if (entry.second.hasUpload())
      connect(e, uploadStreamHandle(entry.first), entry.second);
    if (entry.second.hasDownload())
      connect(e, downloadStreamHandle(entry.first), entry.second);
    QuarterBuffer quarter;
    {
      Cells &c = cells();
      std::lock_guard<std::mutex> lock(c.mutex);
      const auto it = c.byBuffer.find(entry.second.data());
      if (it != c.byBuffer.end())
        quarter = it->second;
    }
    if (quarter.cells.empty())
      continue;
    if (entry.second.hasUpload() && quarter.uploads)
      connectCells(e, uploadMetadataHandle(entry.first), quarter.cells);
    if (entry.second.hasDownload())
      connectCells(e, downloadMetadataHandle(entry.first), quarter.cells);
  }
}

namespace detail {
namespace {

void noteBuffer(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, void *dst, std::size_t n);

bool isFloating(const poplar::Type &type) {
  return type == poplar::FLOAT || type == poplar::HALF || type == poplar::DOUBLE || type == poplar::QUARTER;
}

void requireMetadata(const poplar::Type &type, const poplar::QuarterMetadata *metadata,
                     const char *direction) {
  if (type == poplar::QUARTER && !metadata)
    throw poplar::poplar_error(std::string("poplar_test::copy ") + direction +
                               " QUARTER needs the tensor's QuarterMetadata (the overload that takes it)");
  if (type != poplar::QUARTER && metadata)
    throw poplar::poplar_error(std::string("poplar_test::copy ") + direction + " " + type.toString().str() +
                               " was given QuarterMetadata; only QUARTER has metadata");
}

void floatingToDevice(const poplar::Target &target, const poplar::Type &type,
                      const poplar::QuarterMetadata *metadata, const double *src, std::size_t n, void *dst) {
  requireMetadata(type, metadata, "to");
  if (type == poplar::HALF) {
    poplar::copyDoubleToDeviceHalf(target, src, dst, n);
  } else if (type == poplar::FLOAT) {
    auto *out = static_cast<float *>(dst);
    for (std::size_t i = 0; i != n; ++i)
      out[i] = static_cast<float>(src[i]);
  } else if (type == poplar::DOUBLE) {
    std::memcpy(dst, src, n * sizeof(double));
  } else {
    poplar::convertToDeviceType(type, *metadata, poplar::ArrayRef<double>(src, n), dst);
  }
}

void floatingFromDevice(const poplar::Target &target, const poplar::Type &type,
                        const poplar::QuarterMetadata *metadata, const void *src, double *dst,
                        std::size_t n) {
  requireMetadata(type, metadata, "from");
  if (type == poplar::HALF) {
    poplar::copyDeviceHalfToDouble(target, src, dst, n);
  } else if (type == poplar::FLOAT) {
    const auto *in = static_cast<const float *>(src);
    for (std::size_t i = 0; i != n; ++i)
      dst[i] = in[i];
  } else if (type == poplar::DOUBLE) {
    std::memcpy(dst, src, n * sizeof(double));
  } else {
    std::vector<double> values(n);
    poplar::convertFromDeviceType(type, *metadata, src, poplar::ArrayRef<double>(values.data(), n));
    std::copy(values.begin(), values.end(), dst);
  }
}

// Integer device types: little-endian two's complement of the target's width for the
// type, truncated as a C cast to that type truncates; BOOL stores 0 or 1.
void storeInteger(const poplar::Target &target, const poplar::Type &type, std::uint64_t bits,
                  unsigned char *dst) {
  if (type == poplar::BOOL)
    bits = bits != 0;
  const std::size_t width = target.getTypeSize(type);
  for (std::size_t b = 0; b != width; ++b)
    dst[b] = static_cast<unsigned char>(b < 8 ? bits >> (8 * b) : 0);
}

std::uint64_t loadInteger(const poplar::Target &target, const poplar::Type &type, const unsigned char *src,
                          bool &negative) {
  const std::size_t width = std::min<std::size_t>(target.getTypeSize(type), 8);
  std::uint64_t bits = 0;
  for (std::size_t b = 0; b != width; ++b)
    bits |= static_cast<std::uint64_t>(src[b]) << (8 * b);
  negative = false;
  if (type.isSigned() && width < 8 && (bits >> (8 * width - 1)) & 1) {
    bits |= ~std::uint64_t(0) << (8 * width); // sign-extend
    negative = true;
  } else if (type.isSigned() && width == 8) {
    negative = (bits >> 63) & 1;
  }
  return bits;
}

void checkIntegral(const poplar::Type &type, const poplar::QuarterMetadata *metadata, const char *direction) {
  if (!type.isIntegral() && type != poplar::BOOL && type != poplar::QUARTER_METADATA)
    throw poplar::poplar_error(std::string("poplar_test::copy ") + direction + " " + type.toString().str() +
                               ": not a type with host values");
  requireMetadata(type, metadata, direction);
}

template <class I>
void integersToDevice(const poplar::Target &target, const poplar::Type &type,
                      const poplar::QuarterMetadata *metadata, const I *src, std::size_t n, void *dst) {
  noteBuffer(target, type, metadata, dst, n);
  if (isFloating(type)) {
    std::vector<double> values(src, src + n);
    floatingToDevice(target, type, metadata, values.data(), n, dst);
    return;
  }
  checkIntegral(type, metadata, "to");
  const std::size_t width = target.getTypeSize(type);
  auto *out = static_cast<unsigned char *>(dst);
  for (std::size_t i = 0; i != n; ++i)
    storeInteger(target, type, static_cast<std::uint64_t>(src[i]), out + i * width);
}

template <class I>
void integersFromDevice(const poplar::Target &target, const poplar::Type &type,
                        const poplar::QuarterMetadata *metadata, const void *src, I *dst, std::size_t n) {
  if (isFloating(type)) {
    std::vector<double> values(n);
    floatingFromDevice(target, type, metadata, src, values.data(), n);
    for (std::size_t i = 0; i != n; ++i)
      dst[i] = static_cast<I>(values[i]);
    return;
  }
  checkIntegral(type, metadata, "from");
  const std::size_t width = target.getTypeSize(type);
  const auto *in = static_cast<const unsigned char *>(src);
  for (std::size_t i = 0; i != n; ++i) {
    bool negative = false;
    dst[i] = static_cast<I>(loadInteger(target, type, in + i * width, negative));
  }
}

// What the host buffer [dst, dst + n elements) holds now: quarter elements with
// `metadata`, or other elements (copy(..., QuarterMetadata &, ...) reads it back).
void noteBuffer(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, void *dst, std::size_t n) {
  char *end = static_cast<char *>(dst) + n * target.getTypeSize(type);
  if (type == poplar::QUARTER && metadata)
    aspen::rt::noteHostMetadata(dst, end, metadata->getBinary());
  else
    aspen::rt::forgetHostMetadata(dst, end);
}

} // namespace

void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const double *src, std::size_t n, void *dst) {
  noteBuffer(target, type, metadata, dst, n);
  if (isFloating(type)) {
    floatingToDevice(target, type, metadata, src, n, dst);
    return;
  }
  checkIntegral(type, metadata, "to");
  const std::size_t width = target.getTypeSize(type);
  auto *out = static_cast<unsigned char *>(dst);
  for (std::size_t i = 0; i != n; ++i) {
    // A C cast of the value to the device type: through a signed or unsigned 64-bit
    // integer by the value's sign, so -1.0 to UNSIGNED_INT wraps as (unsigned)-1 does.
    const std::uint64_t bits = src[i] < 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(src[i]))
                                          : static_cast<std::uint64_t>(src[i]);
    storeInteger(target, type, type == poplar::BOOL ? src[i] != 0 : bits, out + i * width);
  }
}

void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const std::int64_t *src, std::size_t n, void *dst) {
  integersToDevice(target, type, metadata, src, n, dst);
}

void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const std::uint64_t *src, std::size_t n, void *dst) {
  integersToDevice(target, type, metadata, src, n, dst);
}

void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, double *dst, std::size_t n) {
  if (isFloating(type)) {
    floatingFromDevice(target, type, metadata, src, dst, n);
    return;
  }
  checkIntegral(type, metadata, "from");
  const std::size_t width = target.getTypeSize(type);
  const auto *in = static_cast<const unsigned char *>(src);
  for (std::size_t i = 0; i != n; ++i) {
    bool negative = false;
    const std::uint64_t bits = loadInteger(target, type, in + i * width, negative);
    dst[i] = negative ? static_cast<double>(static_cast<std::int64_t>(bits)) : static_cast<double>(bits);
  }
}

void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, std::int64_t *dst, std::size_t n) {
  integersFromDevice(target, type, metadata, src, dst, n);
}

void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, std::uint64_t *dst, std::size_t n) {
  integersFromDevice(target, type, metadata, src, dst, n);
}

void bufferMetadata(const poplar::Type &type, const void *src, poplar::QuarterMetadata &metadata) {
  if (type != poplar::QUARTER)
    return;
  const auto binary = aspen::rt::hostMetadata(src);
  if (!binary)
    return;
  try {
    metadata = poplar::QuarterMetadata(*binary);
  } catch (const poplar::poplar_error &e) {
    throw poplar::poplar_error(
        std::string("poplar_test::copy from QUARTER: the metadata of the host buffer is not "
                    "valid: ") +
        e.what());
  }
}

} // namespace detail
} // namespace poplar_test
