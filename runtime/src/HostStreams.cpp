// Copyright (c) Aspen contributors.
#include "HostStreams.hpp"

#include "DeviceScalar.hpp"
#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <algorithm>
#include <cstring>

namespace aspen::rt {

void scatterToDevice(const exe::HostTransfer &transfer, const std::uint8_t *host, TileMemory &memory) {
  for (const exe::HostRun &run : transfer.runs)
    std::memcpy(memory.at(run.device), host + run.hostOffset, run.bytes);
}

void gatherFromDevice(const exe::HostTransfer &transfer, std::uint8_t *host, const TileMemory &memory) {
  for (const exe::HostRun &run : transfer.runs)
    std::memcpy(host + run.hostOffset, memory.at(run.device), run.bytes);
}

// ---- streams ------------------------------------------------------------------

HostStreams::HostStreams(const std::vector<exe::StreamInfo> &streams)
    : streams_(&streams), connections_(streams.size()) {}

int HostStreams::find(const std::string &handle) const {
  for (std::size_t i = 0; i < streams_->size(); ++i)
    if ((*streams_)[i].handle == handle)
      return static_cast<int>(i);
  return -1;
}

std::uint64_t HostStreams::chunkBytes(unsigned stream) const {
  const exe::StreamInfo &s = info(stream);
  return s.numElements * deviceTypeSize(s.type);
}

void HostStreams::connectFixed(unsigned stream, void *p) {
  StreamConnection c;
  c.kind = StreamConnection::Kind::Fixed;
  c.begin = static_cast<std::uint8_t *>(p);
  c.size = chunkBytes(stream);
  connections_[stream] = std::move(c);
}

void HostStreams::connectCircular(unsigned stream, void *begin, void *end) {
  auto *b = static_cast<std::uint8_t *>(begin);
  auto *e = static_cast<std::uint8_t *>(end);
  const std::uint64_t chunk = chunkBytes(stream);
  const std::string &handle = info(stream).handle;
  if (e < b)
    throw poplar::stream_connection_error("Buffer connected to stream '" + handle +
                                          "' ends before it begins");
  if (!b && e != b)
    throw poplar::stream_connection_error("connectStream: null buffer for stream '" + handle + "'");
  const auto bytes = static_cast<std::uint64_t>(e - b);
  if (chunk == 0 ? bytes != 0 : (bytes == 0 || bytes % chunk != 0))
    throw poplar::stream_connection_error("Buffer connected to stream '" + handle + "' holds " +
                                          std::to_string(bytes) + " bytes, which is not a whole number of " +
                                          std::to_string(chunk) + "-byte stream transfers");
  StreamConnection c;
  c.kind = StreamConnection::Kind::Circular;
  c.begin = b;
  c.size = bytes;
  connections_[stream] = std::move(c);
}

void HostStreams::connectCallback(unsigned stream, std::unique_ptr<poplar::StreamCallback> callback) {
  if (!callback)
    throw poplar::stream_connection_error("Null callback connected to stream '" + info(stream).handle + "'");
  StreamConnection c;
  c.kind = StreamConnection::Kind::Callback;
  c.callback = std::move(callback);
  connections_[stream] = std::move(c);
}

std::uint8_t *HostStreams::hostChunk(unsigned stream, std::uint64_t bytes) {
  StreamConnection &c = connections_[stream];
  switch (c.kind) {
  case StreamConnection::Kind::None:
    throw poplar::stream_connection_error("Stream '" + info(stream).handle +
                                          "' is used by the program but was never connected: call "
                                          "Engine::connectStream or Engine::connectStreamToCallback first");
  case StreamConnection::Kind::Fixed:
    return c.begin;
  case StreamConnection::Kind::Circular: {
    std::uint8_t *p = c.begin + c.position;
    c.position += chunkBytes(stream);
    if (c.position >= c.size)
      c.position = 0;
    return p;
  }
  case StreamConnection::Kind::Callback:
    if (staging_.size() < bytes)
      staging_.resize(bytes);
    return staging_.data();
  }
  return nullptr;
}

void HostStreams::toDevice(unsigned stream, const exe::HostTransfer &transfer, TileMemory &memory) {
  std::uint8_t *host = hostChunk(stream, transfer.bytes);
  StreamConnection &c = connections_[stream];
  if (c.kind == StreamConnection::Kind::Callback) {
    if (c.callback->prefetch(host) == poplar::StreamCallback::Result::NotAvailable)
      c.callback->fetch(host);
    scatterToDevice(transfer, host, memory);
    c.callback->complete();
    return;
  }
  scatterToDevice(transfer, host, memory);
}

void HostStreams::fromDevice(unsigned stream, const exe::HostTransfer &transfer, const TileMemory &memory) {
  std::uint8_t *host = hostChunk(stream, transfer.bytes);
  gatherFromDevice(transfer, host, memory);
  StreamConnection &c = connections_[stream];
  if (c.kind == StreamConnection::Kind::Callback) {
    c.callback->fetch(host);
    c.callback->complete();
  }
}

// ---- remote buffers -------------------------------------------------------------

RemoteBuffers::RemoteBuffers(const std::vector<exe::RemoteBufferInfo> &buffers)
    : infos_(&buffers), rows_(buffers.size()) {
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    Storage &s = rows_[i];
    // Overflow-checked (exe::validateStructure bounds these; a wrapped product would under-allocate).
    std::uint64_t total = 0;
    if (__builtin_mul_overflow(buffers[i].numElements, deviceTypeSize(buffers[i].type), &s.rowBytes) ||
        __builtin_mul_overflow(s.rowBytes, std::max<std::uint64_t>(1, buffers[i].repeats), &total))
      throw poplar::graph_object_load_error("Remote buffer '" + buffers[i].handle +
                                            "': numElements x repeats overflows 64 bits");
    // calloc: large buffers come from fresh zero pages, touched only when used.
    s.bytes.reset(static_cast<std::uint8_t *>(std::calloc(std::max<std::uint64_t>(1, total), 1)));
    if (!s.bytes)
      throw poplar::stream_memory_allocation_error("Cannot allocate " + std::to_string(total) +
                                                   " bytes of host memory for remote buffer '" +
                                                   buffers[i].handle + "'");
  }
}

int RemoteBuffers::find(const std::string &handle) const {
  for (std::size_t i = 0; i < infos_->size(); ++i)
    if ((*infos_)[i].handle == handle)
      return static_cast<int>(i);
  return -1;
}

std::uint8_t *RemoteBuffers::row(unsigned buffer, std::uint64_t row) {
  return rows_[buffer].bytes.get() + row * rows_[buffer].rowBytes;
}

void RemoteBuffers::copy(unsigned buffer, const exe::HostTransfer &transfer,
                         const std::vector<std::uint64_t> &rowOfChunk, TileMemory &memory, bool toDevice) {
  const std::uint64_t rowBytes = rows_[buffer].rowBytes;
  if (rowBytes == 0)
    return;
  for (const exe::HostRun &run : transfer.runs) {
    // A run may cross row boundaries of the destination; split it there.
    std::uint64_t offset = run.hostOffset;
    std::uint64_t remaining = run.bytes;
    std::uint8_t *device = memory.at(run.device);
    while (remaining != 0) {
      const std::uint64_t chunk = offset / rowBytes;
      const std::uint64_t within = offset % rowBytes;
      const std::uint64_t n = std::min(remaining, rowBytes - within);
      ASPEN_ASSERT(chunk < rowOfChunk.size(), "remote buffer transfer larger than its rows");
      std::uint8_t *host = row(buffer, rowOfChunk[chunk]) + within;
      if (toDevice)
        std::memcpy(device, host, n);
      else
        std::memcpy(host, device, n);
      device += n;
      offset += n;
      remaining -= n;
    }
  }
}

} // namespace aspen::rt
