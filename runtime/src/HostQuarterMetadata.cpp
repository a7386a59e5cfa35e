// Copyright (c) Aspen contributors.
// The table of host buffers' quarter metadata (HostQuarterMetadata.hpp).
#include "HostQuarterMetadata.hpp"

#include "ir/GraphData.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <map>
#include <mutex>

namespace aspen::rt {
namespace {

struct Entry {
  const char *end;
  MetadataCell cell;
};

struct Table {
  std::mutex mutex;
  std::map<const char *, Entry> entries; // by first byte; ranges never overlap
  std::atomic<bool> empty{true};         // lets plain reads skip the lock
};

Table &table() {
  static Table *t = new Table; // never destroyed: streams may run during static destruction
  return *t;
}

const char *bytes(const void *p) {
  return static_cast<const char *>(p);
}

// Erases the entries overlapping [begin, end); the caller holds the lock.
void eraseOverlapping(Table &t, const char *begin, const char *end) {
  auto it = t.entries.upper_bound(begin);
  if (it != t.entries.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > begin || prev->first == begin)
      it = prev;
  }
  while (it != t.entries.end() && it->first < std::max(end, begin + 1))
    it = t.entries.erase(it);
}

void insert(Table &t, const char *begin, const char *end, MetadataCell cell) {
  eraseOverlapping(t, begin, end);
  t.entries.emplace(begin, Entry{end, std::move(cell)});
  t.empty.store(false, std::memory_order_relaxed);
}

} // namespace

void noteHostMetadata(const void *begin, const void *end, std::uint8_t binary) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.entries.find(bytes(begin));
  if (it != t.entries.end() && bytes(end) <= it->second.end) {
    *it->second.cell = binary; // keeps a stream's cell (poplar_test's buffers) attached
    return;
  }
  insert(t, bytes(begin), bytes(end), std::make_shared<std::uint8_t>(binary));
}

void attachHostMetadataCell(const void *begin, const void *end, MetadataCell cell) {
  Table &t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  insert(t, bytes(begin), bytes(end), std::move(cell));
}

void forgetHostMetadata(const void *begin, const void *end) {
  Table &t = table();
  if (t.empty.load(std::memory_order_relaxed))
    return;
  std::lock_guard<std::mutex> lock(t.mutex);
  eraseOverlapping(t, bytes(begin), bytes(end));
  if (t.entries.empty())
    t.empty.store(true, std::memory_order_relaxed);
}

std::optional<std::uint8_t> hostMetadata(const void *begin) {
  Table &t = table();
  if (t.empty.load(std::memory_order_relaxed))
    return std::nullopt;
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto it = t.entries.find(bytes(begin));
  if (it == t.entries.end())
    return std::nullopt;
  return *it->second.cell;
}

std::optional<std::uint8_t> knownMetadataValue(const poplar::Tensor &metadata) {
  if (!metadata.valid() || metadata.elementType() != poplar::QUARTER_METADATA || metadata.numElements() != 1)
    return std::nullopt;
  const auto graph = metadata.getImpl().lockGraph();
  if (!graph || metadata.getImpl().segments->empty())
    return std::nullopt;
  const ir::Segment &s = metadata.getImpl().segments->front();
  const auto it = graph->initialValues.find(s.var);
  if (it == graph->initialValues.end() || static_cast<std::size_t>(s.start) >= it->second.size())
    return std::nullopt;
  return it->second[static_cast<std::size_t>(s.start)];
}

} // namespace aspen::rt
