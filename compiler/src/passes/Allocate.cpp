// Copyright (c) Aspen contributors.
#include "passes/Allocate.hpp"

#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <queue>
#include <sstream>
#include <unordered_map>

namespace aspen::compiler {
namespace {

constexpr std::uint64_t kUnbounded = std::numeric_limits<std::uint64_t>::max() / 2;

std::uint64_t alignUp(std::uint64_t x, std::uint64_t a) {
  return a <= 1 ? x : (x + a - 1) / a * a;
}

std::uint32_t toAddress(std::uint64_t a) {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(a, std::numeric_limits<std::uint32_t>::max()));
}

/// Free address ranges above the always-live region; the last one is unbounded.
class FreeList {
public:
  explicit FreeList(std::uint64_t base) { free_[base] = kUnbounded; }

  /// First fit: the lowest aligned address where `size` bytes fit.
  std::uint64_t take(std::uint64_t size, std::uint64_t align) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const std::uint64_t start = alignUp(it->first, align);
      if (start + size > it->second)
        continue;
      const std::uint64_t begin = it->first, end = it->second;
      free_.erase(it);
      if (begin < start)
        free_[begin] = start;
      if (start + size < end)
        free_[start + size] = end;
      return start;
    }
    ASPEN_ASSERT(false, "the free list has no unbounded range");
    return 0;
  }

  void give(std::uint64_t begin, std::uint64_t end) {
    if (begin == end)
      return;
    auto next = free_.lower_bound(begin);
    if (next != free_.end() && next->first == end) {
      end = next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->second == begin) {
        prev->second = end;
        return;
      }
    }
    free_[begin] = end;
  }

private:
  std::map<std::uint64_t, std::uint64_t> free_;
};

struct TileWork {
  std::vector<std::uint32_t> objects; // ids on this tile, ascending
};

} // namespace

AllocationResult allocateMemory(const ir::GraphData &g, const LoweredProgram &lp, const ExchangePlan &plan,
                                const LivenessResult &live, bool allowOutOfMemory,
                                std::uint64_t overheadBytes) {
  const ir::TargetData &target = g.target;
  const std::uint64_t overhead =
      overheadBytes == kTargetOverhead ? target.perTileOverheadBytes : overheadBytes;
  const unsigned numTiles = target.numTiles();
  const std::size_t numObjects = plan.memory.objects.size();
  const std::uint32_t numPieces = static_cast<std::uint32_t>(plan.memory.numPieces());
  AllocationResult res;
  res.address.assign(numObjects, 0);
  res.tiles.resize(numTiles);
  res.overheadBytes = overhead;

  // Objects by tile (counting sort keeps ids ascending within a tile).
  std::vector<std::uint32_t> tileBegin(numTiles + 1, 0), order(numObjects);
  for (const MemObject &o : plan.memory.objects) {
    ASPEN_ASSERT(o.tile < numTiles, "a memory object on a tile beyond the target");
    ++tileBegin[o.tile + 1];
  }
  for (unsigned t = 0; t < numTiles; ++t)
    tileBegin[t + 1] += tileBegin[t];
  {
    std::vector<std::uint32_t> fill(tileBegin.begin(), tileBegin.end() - 1);
    for (std::uint32_t i = 0; i < numObjects; ++i)
      order[fill[plan.memory.objects[i].tile]++] = i;
  }

  // Pieces live as their variable; edge buffers over their compute set's
  // steps; every other object (vertex state) always.
  auto isAlwaysLive = [&](std::uint32_t obj) {
    if (obj >= numPieces)
      return plan.memory.objects[obj].computeSet == kNoObject;
    return live.alwaysLive[plan.memory.objects[obj].owner] != 0;
  };
  auto liveBegin = [&](std::uint32_t obj) {
    const MemObject &o = plan.memory.objects[obj];
    return obj >= numPieces ? plan.computeSetSteps[o.computeSet].first : live.liveBegin[o.owner];
  };
  auto liveEnd = [&](std::uint32_t obj) {
    const MemObject &o = plan.memory.objects[obj];
    return obj >= numPieces ? plan.computeSetSteps[o.computeSet].second : live.liveEnd[o.owner];
  };
  auto isLive = [&](std::uint32_t obj) { return isAlwaysLive(obj) || liveBegin(obj) <= liveEnd(obj); };

  tbb::parallel_for(0u, numTiles, [&](unsigned tile) {
    TileMemoryStats &st = res.tiles[tile];
    std::uint64_t addr = overhead;
    // Always-live objects, grouped by category for a readable memory map.
    std::vector<std::uint32_t> always, notAlways;
    for (std::uint32_t k = tileBegin[tile]; k < tileBegin[tile + 1]; ++k) {
      const std::uint32_t obj = order[k];
      if (!isLive(obj) || plan.memory.objects[obj].size == 0)
        continue;
      (isAlwaysLive(obj) ? always : notAlways).push_back(obj);
    }
    std::stable_sort(always.begin(), always.end(), [&](std::uint32_t a, std::uint32_t b) {
      return plan.memory.objects[a].category < plan.memory.objects[b].category;
    });
    for (std::uint32_t obj : always) {
      const MemObject &o = plan.memory.objects[obj];
      addr = alignUp(addr, o.align);
      res.address[obj] = toAddress(addr);
      addr += o.size;
      st.categoryBytes[static_cast<int>(o.category)] += o.size;
      st.categoryNonOverlapped[static_cast<int>(o.category)] += o.size;
    }
    st.alwaysLiveBytes = addr;
    std::uint64_t peak = addr;

    // Not-always-live pieces: first fit in order of first live step; of those starting together,
    // the one live longest first (lowest), so that shorter-lived ones lie above it and, freed, rejoin
    // the free space above instead of leaving a hole below it that a slightly larger object of a
    // later step does not fit (a matMul's partial sums kept across serial passes, each pass's edge
    // buffers a few bytes larger or smaller than the last: docs/ops-nn.md "Serial passes").
    std::sort(notAlways.begin(), notAlways.end(), [&](std::uint32_t a, std::uint32_t b) {
      const std::uint32_t ba = liveBegin(a), bb = liveBegin(b);
      if (ba != bb)
        return ba < bb;
      const std::uint32_t ea = liveEnd(a), eb = liveEnd(b);
      if (ea != eb)
        return ea > eb;
      if (plan.memory.objects[a].size != plan.memory.objects[b].size)
        return plan.memory.objects[a].size > plan.memory.objects[b].size;
      return a < b;
    });
    FreeList freeList(addr);
    using Active = std::pair<std::uint32_t, std::uint32_t>; // (live end, object)
    std::priority_queue<Active, std::vector<Active>, std::greater<Active>> active;
    std::vector<std::uint64_t> placedAt(notAlways.size());
    for (std::size_t i = 0; i < notAlways.size(); ++i) {
      const std::uint32_t obj = notAlways[i];
      const MemObject &o = plan.memory.objects[obj];
      const std::uint32_t begin = liveBegin(obj);
      while (!active.empty() && active.top().first < begin) {
        const std::uint32_t done = active.top().second;
        active.pop();
        freeList.give(res.address[done], res.address[done] + plan.memory.objects[done].size);
      }
      const std::uint64_t at = freeList.take(o.size, o.align);
      res.address[obj] = toAddress(at);
      peak = std::max(peak, at + o.size);
      active.push({liveEnd(obj), obj});
      st.categoryBytes[static_cast<int>(o.category)] += o.size;
    }
    st.peakBytes = peak;

    // The address space the not-always-live objects cover, by category: sweep their
    // [address, end) boundaries, giving each covered stretch to its first covering category.
    {
      constexpr int kCategories = static_cast<int>(MemCategory::Count);
      std::vector<std::pair<std::uint64_t, int>> bounds; // (address, +-(category + 1))
      bounds.reserve(notAlways.size() * 2);
      for (std::uint32_t obj : notAlways) {
        const MemObject &o = plan.memory.objects[obj];
        const int c = static_cast<int>(o.category) + 1;
        bounds.push_back({res.address[obj], c});
        bounds.push_back({std::uint64_t(res.address[obj]) + o.size, -c});
      }
      std::sort(bounds.begin(), bounds.end());
      std::uint32_t covering[kCategories] = {};
      std::uint64_t at = 0;
      for (const auto &[address, change] : bounds) {
        for (int c = 0; c < kCategories; ++c)
          if (covering[c]) {
            st.categoryNonOverlapped[c] += address - at;
            break;
          }
        at = address;
        if (change > 0)
          ++covering[change - 1];
        else
          --covering[-change - 1];
      }
    }

    // Live not-always-live bytes per step on this tile: its peak and where.
    std::vector<std::pair<std::uint32_t, std::int64_t>> events;
    events.reserve(notAlways.size() * 2);
    for (std::uint32_t obj : notAlways) {
      const MemObject &o = plan.memory.objects[obj];
      events.push_back({liveBegin(obj), static_cast<std::int64_t>(o.size)});
      events.push_back({liveEnd(obj) + 1, -static_cast<std::int64_t>(o.size)});
    }
    std::sort(events.begin(), events.end());
    std::int64_t cur = 0;
    for (std::size_t i = 0; i < events.size();) {
      const std::uint32_t step = events[i].first;
      for (; i < events.size() && events[i].first == step; ++i)
        cur += events[i].second;
      if (static_cast<std::uint64_t>(cur) > st.notAlwaysLivePeak) {
        st.notAlwaysLivePeak = static_cast<std::uint64_t>(cur);
        st.peakStep = step;
      }
    }
  });

  if (target.type == poplar::TargetType::CPU)
    return res;

  // Out of memory: report the fullest tile.
  std::uint32_t worst = 0, numOver = 0;
  for (unsigned t = 0; t < numTiles; ++t) {
    if (res.tiles[t].peakBytes > target.bytesPerTile)
      ++numOver;
    if (res.tiles[t].peakBytes > res.tiles[worst].peakBytes)
      worst = t;
  }
  if (numOver == 0)
    return res;

  const TileMemoryStats &st = res.tiles[worst];
  std::ostringstream msg;
  msg << "Out of memory on tile " << worst << ": " << st.peakBytes << " bytes used but tiles only have "
      << target.bytesPerTile << " bytes of memory";
  msg << "\n  " << numOver << (numOver == 1 ? " tile is" : " tiles are") << " out of memory; tile " << worst
      << " needs the most.";
  msg << "\n  Always-live on tile " << worst << ": " << st.alwaysLiveBytes << " bytes (including " << overhead
      << " bytes of stack and control code); not-always-live peak: " << st.notAlwaysLivePeak << " bytes";
  if (st.peakStep < lp.steps.size()) {
    const exe::Step &s = lp.steps[st.peakStep];
    msg << " at program step " << st.peakStep;
    if (!s.message.empty())
      msg << " ('" << s.message << "')";
  }
  msg << ".\n  By category:";
  for (int c = 0; c < static_cast<int>(MemCategory::Count); ++c)
    if (st.categoryBytes[c])
      msg << " " << categoryName(static_cast<MemCategory>(c)) << " " << st.categoryBytes[c] << ";";

  // Largest variables and vertex types on that tile.
  std::unordered_map<std::uint32_t, std::uint64_t> varBytes;
  std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> typeBytes; // type -> (bytes, vertices)
  std::vector<std::pair<std::uint64_t, std::uint32_t>> libraryBytes;          // (bytes, library)
  for (std::uint32_t k = tileBegin[worst]; k < tileBegin[worst + 1]; ++k) {
    const std::uint32_t obj = order[k];
    const MemObject &o = plan.memory.objects[obj];
    if (!isLive(obj))
      continue;
    if (o.category == MemCategory::CodeletData) {
      libraryBytes.push_back({o.size, o.owner});
      continue;
    }
    if (obj < numPieces) {
      varBytes[o.owner] += o.size;
    } else {
      auto &tb = typeBytes[g.vertices[o.owner].type];
      tb.first += o.size;
      tb.second += o.category == MemCategory::VertexObject;
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> vars;
  for (auto [v, b] : varBytes)
    vars.push_back({b, v});
  std::sort(vars.begin(), vars.end(),
            [](auto &a, auto &b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  constexpr std::size_t kTop = 8;
  if (!vars.empty()) {
    msg << "\n  Largest variables on tile " << worst << ":";
    for (std::size_t i = 0; i < vars.size() && i < kTop; ++i) {
      const std::uint32_t v = vars[i].second;
      msg << "\n    " << g.describeVariable(v) << ": " << vars[i].first << " bytes ("
          << (v < plan.offloaded.size() && plan.offloaded[v] ? "offloaded to Streaming Memory; staged here"
              : live.alwaysLive[v]                           ? "always-live"
                                                             : "not-always-live")
          << ")";
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint32_t>> types;
  for (auto &[t, b] : typeBytes)
    types.push_back({b.first, t});
  std::sort(types.begin(), types.end(),
            [](auto &a, auto &b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (!types.empty()) {
    msg << "\n  Vertex data on tile " << worst
        << " by vertex type (instances, field data, descriptors, edge buffers):";
    for (std::size_t i = 0; i < types.size() && i < kTop; ++i) {
      const std::uint64_t n = typeBytes[types[i].second].second;
      msg << "\n    " << g.vertexTypes[types[i].second].name << ": " << n
          << (n == 1 ? " vertex, " : " vertices, ") << types[i].first << " bytes";
    }
  }
  if (!libraryBytes.empty()) {
    // A tile's copy of its codelets' globals and statics (docs/tile-model.md).
    std::sort(libraryBytes.rbegin(), libraryBytes.rend());
    msg << "\n  Global and static variables of codelets on tile " << worst << ":";
    for (const auto &[bytes, lib] : libraryBytes) {
      const ir::CodeletLibrary &l = g.codeletLibraries[lib];
      msg << "\n    codelets from '" << (l.origin.empty() ? l.path : l.origin) << "': " << bytes << " bytes";
    }
  }
  msg << "\n  To fit: map fewer or smaller tensors and vertices to tile " << worst
      << ", spread them over more tiles, or mark dead tensors with WriteUndef.";
  res.outOfMemory = true;
  res.outOfMemoryMessage = msg.str();
  if (!allowOutOfMemory)
    throw poplar::graph_memory_allocation_error(res.outOfMemoryMessage);
  return res;
}

} // namespace aspen::compiler
