// Copyright (c) Aspen contributors.
// The host end of data streams and remote buffers: what each stream is
// connected to, and the copies between host buffers and tile memory.
#pragma once

#include "TileMemory.hpp"
#include "exe/ExecutableData.hpp"
#include "poplar/StreamCallback.hpp"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace aspen::rt {

/// Copies a host buffer laid out as `transfer` describes into tile memory.
void scatterToDevice(const exe::HostTransfer &transfer, const std::uint8_t *host, TileMemory &memory);
/// Copies the device bytes of `transfer` into a host buffer.
void gatherFromDevice(const exe::HostTransfer &transfer, std::uint8_t *host, const TileMemory &memory);

/// What one stream is connected to. A circular buffer's position carries over
/// between runs and is reset only by connecting again.
struct StreamConnection {
  enum class Kind { None, Fixed, Circular, Callback };
  Kind kind = Kind::None;
  std::uint8_t *begin = nullptr;
  std::uint64_t size = 0;     // circular buffer bytes
  std::uint64_t position = 0; // circular buffer: offset of the next chunk
  std::unique_ptr<poplar::StreamCallback> callback;
};

/// The connections of every stream of an executable (replica 0) and the
/// staging buffer callbacks read and write.
class HostStreams {
public:
  explicit HostStreams(const std::vector<exe::StreamInfo> &streams);

  /// The index of the stream called `handle`, or -1.
  int find(const std::string &handle) const;
  const exe::StreamInfo &info(unsigned stream) const { return (*streams_)[stream]; }
  /// Bytes that one copy of `stream` moves.
  std::uint64_t chunkBytes(unsigned stream) const;

  void connectFixed(unsigned stream, void *p);
  /// Throws stream_connection_error unless `[begin, end)` holds a whole number of chunks.
  void connectCircular(unsigned stream, void *begin, void *end);
  void connectCallback(unsigned stream, std::unique_ptr<poplar::StreamCallback> callback);

  /// Runs one host-to-device copy of `stream`; throws stream_connection_error naming
  /// the stream if it was never connected.
  void toDevice(unsigned stream, const exe::HostTransfer &transfer, TileMemory &memory);
  /// Runs one device-to-host copy of `stream`.
  void fromDevice(unsigned stream, const exe::HostTransfer &transfer, const TileMemory &memory);

private:
  std::uint8_t *hostChunk(unsigned stream, std::uint64_t bytes);
  const std::vector<exe::StreamInfo> *streams_;
  std::vector<StreamConnection> connections_;
  std::vector<std::uint8_t> staging_;
};

/// Host memory behind each remote buffer: `repeats` rows of
/// `numElements` elements, zero until written.
class RemoteBuffers {
public:
  explicit RemoteBuffers(const std::vector<exe::RemoteBufferInfo> &buffers);

  int find(const std::string &handle) const;
  const exe::RemoteBufferInfo &info(unsigned buffer) const { return (*infos_)[buffer]; }
  std::uint64_t rowBytes(unsigned buffer) const { return rows_[buffer].rowBytes; }
  /// The host bytes of row `row` (range-checked by the caller).
  std::uint8_t *row(unsigned buffer, std::uint64_t row);

  /// Runs a RemoteToDevice (toDevice) or DeviceToRemote copy: host byte `o` of
  /// the transfer belongs to row `rowOfChunk[o / rowBytes]` of the buffer.
  void copy(unsigned buffer, const exe::HostTransfer &transfer, const std::vector<std::uint64_t> &rowOfChunk,
            TileMemory &memory, bool toDevice);

private:
  struct Storage {
    std::uint64_t rowBytes = 0;
    std::unique_ptr<std::uint8_t, decltype(&std::free)> bytes{nullptr, &std::free};
  };
  const std::vector<exe::RemoteBufferInfo> *infos_;
  std::vector<Storage> rows_;
};

} // namespace aspen::rt
