// Copyright (c) Aspen contributors.
// poplar_test: the host-side test helpers PopLibs' tests use beside Poplar's API
// (Graphcore's own library is closed; this is Aspen's, written from how PopLibs'
// tests call it, docs/poplibs-from-source.md):
//
//  - allocateHostMemoryForTensor(t, name, graph, upload, download, map) allocates a
//    host buffer for tensor `t`, adds a host-to-device copy into `t` to `upload` and a
//    device-to-host copy out of `t` to `download` (either may be boost::none), and
//    records the buffer in `map` under `name`;
//  - attachStreams(engine, map) connects every buffer of `map` to its streams;
//  - copy(target, ...) converts between host values and the device representation of
//    an element type (FLOAT, HALF, QUARTER with metadata, the integer types, BOOL).
//
// Library: libpoplar_test (target Aspen::poplar_test; find_package(poplar_test)).
#ifndef POPLAR_TEST_UTIL_HPP
#define POPLAR_TEST_UTIL_HPP

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>
#include <poplar/TypeConversion.hpp> // PopLibs' poplibs_test/Util.cpp relies on it through this header
#include <poplar/exceptions.hpp>

#include <boost/optional.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace poplar_test {

/// A host buffer recorded for a tensor's streams. It does not own the bytes: the
/// std::unique_ptr that allocateHostMemoryForTensor returns does, and must outlive
/// the engine runs that use it. `replicas` copies of `bytesPerReplica` bytes each.
class HostMemory {
public:
  HostMemory() = default;
  HostMemory(char *data, std::size_t bytesPerReplica, unsigned replicas, bool upload, bool download)
      : data_(data), bytesPerReplica_(bytesPerReplica), replicas_(replicas), upload_(upload),
        download_(download) {}
  char *data() const { return data_; }
  std::size_t bytesPerReplica() const { return bytesPerReplica_; }
  unsigned replicas() const { return replicas_; }
  std::size_t size() const { return bytesPerReplica_ * replicas_; }
  /// Whether an upload (host to device) and a download stream were made for it.
  bool hasUpload() const { return upload_; }
  bool hasDownload() const { return download_; }

private:
  char *data_ = nullptr;
  std::size_t bytesPerReplica_ = 0;
  unsigned replicas_ = 1;
  bool upload_ = false;
  bool download_ = false;
};

/// Handles of the streams allocateHostMemoryForTensor creates for `name`.
std::string uploadStreamHandle(const std::string &name);
std::string downloadStreamHandle(const std::string &name);

/// A zero-filled host buffer for `replicationFactor` copies of `t` in the device
/// representation of its element type.
std::unique_ptr<char[]> allocateHostMemoryForTensor(const poplar::Target &target, const poplar::Tensor &t,
                                                    unsigned replicationFactor);
/// As above; `allocatedSizeInBytes` receives the buffer's size.
std::unique_ptr<char[]> allocateHostMemoryForTensor(const poplar::Target &target, const poplar::Tensor &t,
                                                    unsigned replicationFactor,
                                                    std::size_t &allocatedSizeInBytes);
/// A buffer for `t` (one copy per replica of `graph`), streamed into `t` by
/// `uploadProg` and out of `t` by `downloadProg` when given; recorded in `map` as
/// `name`. Throws poplar::poplar_error when `name` is already in `map`.
/// A quarter tensor's buffer carries its metadata as well (kept beside the bytes, one
/// per replica): the upload writes it to `t.getMetadata()` (unless that is a constant)
/// and the download reads it back, through streams `<name>/upload/metadata` and
/// `<name>/download/metadata`. It starts as the metadata tensor's value when the graph
/// knows it (a constant or initial value), else F143 scale 0; copy(..., QUARTER,
/// metadata, buffer) sets it, copy(..., QUARTER, QuarterMetadata &, buffer, ...) reads it.
std::unique_ptr<char[]>
allocateHostMemoryForTensor(const poplar::Tensor &t, const std::string &name, poplar::Graph &graph,
                            const boost::optional<poplar::program::Sequence &> &uploadProg,
                            const boost::optional<poplar::program::Sequence &> &downloadProg,
                            std::vector<std::pair<std::string, HostMemory>> &map);

/// Connects each buffer of `map` to the upload and download streams made for it
/// (one connection per replica in a replicated graph). Throws
/// poplar::stream_connection_error when `e` does not have them (an engine of another graph).
void attachStreams(poplar::Engine &e, const std::vector<std::pair<std::string, HostMemory>> &map);

namespace detail {
// The conversions every copy() overload ends in: host values as double (floating
// point host types), std::int64_t (signed integers) or std::uint64_t (unsigned
// integers and bool). `metadata` is null except for QUARTER.
void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const double *src, std::size_t n, void *dst);
void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const std::int64_t *src, std::size_t n, void *dst);
void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const std::uint64_t *src, std::size_t n, void *dst);
void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, double *dst, std::size_t n);
void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, std::int64_t *dst, std::size_t n);
void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, std::uint64_t *dst, std::size_t n);

/// Sets `metadata` to the metadata the host buffer at `src` carries, when `type` is
/// QUARTER and the buffer's metadata is known (see copy); leaves it otherwise.
void bufferMetadata(const poplar::Type &type, const void *src, poplar::QuarterMetadata &metadata);

template <class T> struct Wide {
  typedef typename std::conditional<
      std::is_floating_point<T>::value, double,
      typename std::conditional<std::is_signed<T>::value, std::int64_t, std::uint64_t>::type>::type type;
};

template <class T>
void toDevice(const poplar::Target &target, const poplar::Type &type, const poplar::QuarterMetadata *metadata,
              const T *src, std::size_t n, void *dst) {
  typedef typename Wide<T>::type W;
  std::vector<W> wide(n);
  for (std::size_t i = 0; i != n; ++i)
    wide[i] = static_cast<W>(src[i]);
  toDevice(target, type, metadata, wide.data(), n, dst);
}

template <class T>
void fromDevice(const poplar::Target &target, const poplar::Type &type,
                const poplar::QuarterMetadata *metadata, const void *src, T *dst, std::size_t n) {
  typedef typename Wide<T>::type W;
  std::vector<W> wide(n);
  fromDevice(target, type, metadata, src, wide.data(), n);
  for (std::size_t i = 0; i != n; ++i)
    dst[i] = static_cast<T>(wide[i]);
}

// A contiguous host container: data() and an element count, num_elements() when it
// has one (a boost::multi_array's size() is its first extent), else size().
template <class C>
auto elementCount(const C &c, int) -> decltype(static_cast<std::size_t>(c.num_elements())) {
  return static_cast<std::size_t>(c.num_elements());
}
template <class C> auto elementCount(const C &c, long) -> decltype(static_cast<std::size_t>(c.size())) {
  return static_cast<std::size_t>(c.size());
}
template <class C, class = void> struct IsContainer : std::false_type {};
template <class C>
struct IsContainer<C,
                   typename std::conditional<false,
                                             std::pair<decltype(std::declval<C &>().data()),
                                                       decltype(elementCount(std::declval<const C &>(), 0))>,
                                             void>::type>
    : std::integral_constant<bool, std::is_pointer<decltype(std::declval<C &>().data())>::value> {};
template <class C>
struct EnableContainer
    : std::enable_if<
          IsContainer<typename std::remove_cv<typename std::remove_reference<C>::type>::type>::value> {};
} // namespace detail

/// Host values src[0..n) to device elements of `dstType` at `dst`.
template <class T>
void copy(const poplar::Target &target, const T *src, std::size_t n, const poplar::Type &dstType, void *dst) {
  detail::toDevice(target, dstType, nullptr, src, n, dst);
}
/// Host values to QUARTER elements with `metadata`.
template <class T>
void copy(const poplar::Target &target, const T *src, std::size_t n, const poplar::Type &dstType,
          const poplar::QuarterMetadata &metadata, void *dst) {
  detail::toDevice(target, dstType, &metadata, src, n, dst);
}
/// Device elements of `srcType` at `src` to host values dst[0..n).
template <class T>
void copy(const poplar::Target &target, const poplar::Type &srcType, const void *src, T *dst, std::size_t n) {
  detail::fromDevice(target, srcType, nullptr, src, dst, n);
}
/// QUARTER elements with `metadata` to host values.
template <class T>
void copy(const poplar::Target &target, const poplar::Type &srcType, const poplar::QuarterMetadata &metadata,
          const void *src, T *dst, std::size_t n) {
  detail::fromDevice(target, srcType, &metadata, src, dst, n);
}
/// QUARTER elements to host values with the metadata the buffer at `src` carries,
/// which is stored in `metadata`: that of the last copy into it with metadata, of
/// the last Engine::readTensor/writeTensor of it with metadata, or the tensor's (by
/// its download stream) for a buffer of allocateHostMemoryForTensor. A buffer without
/// known metadata is decoded with `metadata` as given (docs/fp8.md).
template <class T>
void copy(const poplar::Target &target, const poplar::Type &srcType, poplar::QuarterMetadata &metadata,
          const void *src, T *dst, std::size_t n) {
  detail::bufferMetadata(srcType, src, metadata);
  detail::fromDevice(target, srcType, &metadata, src, dst, n);
}
/// A contiguous host container (std::vector, boost::multi_array, ...) to device elements.
template <class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const C &src, const poplar::Type &dstType, void *dst) {
  copy(target, src.data(), detail::elementCount(src, 0), dstType, dst);
}
template <class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const C &src, const poplar::Type &dstType,
          const poplar::QuarterMetadata &metadata, void *dst) {
  copy(target, src.data(), detail::elementCount(src, 0), dstType, metadata, dst);
}
/// Device elements to a contiguous host container, filling all of it.
template <class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const poplar::Type &srcType, const void *src, C &&dst) {
  copy(target, srcType, src, dst.data(), detail::elementCount(dst, 0));
}
template <class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const poplar::Type &srcType, const poplar::QuarterMetadata &metadata,
          const void *src, C &&dst) {
  copy(target, srcType, metadata, src, dst.data(), detail::elementCount(dst, 0));
}
template <class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const poplar::Type &srcType, poplar::QuarterMetadata &metadata,
          const void *src, C &&dst) {
  copy(target, srcType, metadata, src, dst.data(), detail::elementCount(dst, 0));
}

/// One host container per device buffer, in order (PopLibs' tools keep a convolution's pieces as
/// `std::vector<boost::multi_array<T, N>>` beside one raw buffer each): `copy<T, N>(target, type,
/// hosts, buffers)` and back. The containers hold `T` in `N` dimensions; the lists have one length.
template <class T, std::size_t N, class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const poplar::Type &dstType, const std::vector<C> &src,
          const std::vector<std::unique_ptr<char[]>> &dst) {
  static_assert(std::is_same<typename C::element, T>::value && C::dimensionality == N,
                "copy<T, N>: the host containers must hold T in N dimensions");
  if (src.size() != dst.size())
    throw poplar::poplar_error("poplar_test::copy: " + std::to_string(src.size()) + " host containers but " +
                               std::to_string(dst.size()) + " device buffers");
  for (std::size_t i = 0; i < src.size(); ++i)
    copy(target, src[i], dstType, static_cast<void *>(dst[i].get()));
}
template <class T, std::size_t N, class C, class = typename detail::EnableContainer<C>::type>
void copy(const poplar::Target &target, const poplar::Type &srcType,
          const std::vector<std::unique_ptr<char[]>> &src, std::vector<C> &dst) {
  static_assert(std::is_same<typename C::element, T>::value && C::dimensionality == N,
                "copy<T, N>: the host containers must hold T in N dimensions");
  if (src.size() != dst.size())
    throw poplar::poplar_error("poplar_test::copy: " + std::to_string(src.size()) + " device buffers but " +
                               std::to_string(dst.size()) + " host containers");
  for (std::size_t i = 0; i < src.size(); ++i)
    copy(target, srcType, static_cast<const void *>(src[i].get()), dst[i]);
}

} // namespace poplar_test

#endif
