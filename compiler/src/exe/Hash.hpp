// Copyright (c) Aspen contributors.
// A fast 64-bit non-cryptographic hash (four multiply-rotate lanes over 32-byte
// stripes, then an avalanche), and a 128-bit pair of them: Aspen's one hash,
// for executable and .gp checksums, cache keys and content identities.
// Written for Aspen; stable across platforms of the same endianness.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace aspen::exe {

/// Incremental 64-bit hash: `update` any number of times, then `digest`.
/// `Hash64(seed).update(p, n).digest()` equals `hash64(p, n, seed)`.
class Hash64 {
public:
  explicit Hash64(std::uint64_t seed = 0) {
    lane_[0] = seed + kP1 + kP2;
    lane_[1] = seed + kP2;
    lane_[2] = seed;
    lane_[3] = seed - kP1;
    seed_ = seed;
  }

  Hash64 &update(const void *data, std::size_t n) {
    if (n == 0)
      return *this; // `data` may be null (an empty vector): memcpy must not see it
    const auto *p = static_cast<const std::uint8_t *>(data);
    total_ += n;
    if (used_) {
      const std::size_t take = n < kStripe - used_ ? n : kStripe - used_;
      std::memcpy(buf_ + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ < kStripe)
        return *this;
      stripe(buf_);
      used_ = 0;
    }
    while (n >= kStripe) {
      stripe(p);
      p += kStripe;
      n -= kStripe;
    }
    std::memcpy(buf_, p, n);
    used_ = n;
    return *this;
  }
  template <class T> Hash64 &value(const T &v) { return update(&v, sizeof v); }
  Hash64 &string(const std::string &s) {
    value<std::uint64_t>(s.size());
    return update(s.data(), s.size());
  }

  std::uint64_t digest() const {
    std::uint64_t h;
    if (total_ >= kStripe) {
      h = std::rotl(lane_[0], 1) + std::rotl(lane_[1], 7) + std::rotl(lane_[2], 12) + std::rotl(lane_[3], 18);
      for (std::uint64_t l : lane_)
        h = (h ^ round(0, l)) * kP1 + kP4;
    } else {
      h = seed_ + kP5;
    }
    h += total_;
    std::size_t i = 0;
    for (; i + 8 <= used_; i += 8)
      h = std::rotl(h ^ round(0, load64(buf_ + i)), 27) * kP1 + kP4;
    for (; i < used_; ++i)
      h = std::rotl(h ^ (buf_[i] * kP5), 11) * kP1;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP3;
    h ^= h >> 32;
    return h;
  }

private:
  static constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull;
  static constexpr std::uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
  static constexpr std::uint64_t kP3 = 0x165667B19E3779F9ull;
  static constexpr std::uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
  static constexpr std::uint64_t kP5 = 0x27D4EB2F165667C5ull;
  static constexpr std::size_t kStripe = 32;

  static std::uint64_t load64(const std::uint8_t *p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  static std::uint64_t round(std::uint64_t acc, std::uint64_t in) {
    return std::rotl(acc + in * kP2, 31) * kP1;
  }
  void stripe(const std::uint8_t *p) {
    lane_[0] = round(lane_[0], load64(p));
    lane_[1] = round(lane_[1], load64(p + 8));
    lane_[2] = round(lane_[2], load64(p + 16));
    lane_[3] = round(lane_[3], load64(p + 24));
  }

  std::uint64_t lane_[4];
  std::uint64_t seed_ = 0;
  std::uint64_t total_ = 0;
  std::uint8_t buf_[kStripe] = {};
  std::size_t used_ = 0;
};

/// One-shot form of Hash64.
inline std::uint64_t hash64(const void *data, std::size_t n, std::uint64_t seed = 0) {
  return Hash64(seed).update(data, n).digest();
}

/// 16 lowercase hex digits.
inline std::string toHex(std::uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4)
    s[static_cast<std::size_t>(i)] = digits[v & 15];
  return s;
}

/// A 128-bit hash: two Hash64 lanes with different seeds fed the same bytes.
/// Small values are gathered in a buffer and hashed in blocks. Used for cache
/// keys, executable and vertex-library checksums, and file identities.
class Hash128 {
public:
  Hash128() : a_(0x61737065), b_(0x6b657932) {}
  Hash128 &update(const void *p, std::size_t n) {
    if (n == 0)
      return *this; // `p` may be null
    if (used_ + n > kBlock)
      return updateBlock(p, n);
    std::memcpy(buf_ + used_, p, n);
    used_ += n;
    return *this;
  }
  /// A small value: a copy into the buffer, inlined (callers hash millions of
  /// them, e.g. a graph's vertices for a cache key); the hashing runs per block.
  template <class T> Hash128 &value(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    static_assert(sizeof v <= 64, "value() is for small values; use update()");
    const std::size_t used = used_; // one load: the byte copy below may alias used_
    if (used + sizeof v > kBlock) [[unlikely]]
      return updateBlock(&v, sizeof v);
    std::memcpy(buf_ + used, &v, sizeof v);
    used_ = used + sizeof v;
    return *this;
  }
  /// Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
  Hash128 &string(std::string_view s) {
    value<std::uint64_t>(s.size());
    return update(s.data(), s.size());
  }
  Hash128 &digestValue(const std::pair<std::uint64_t, std::uint64_t> &d) {
    return value(d.first).value(d.second);
  }
  std::pair<std::uint64_t, std::uint64_t> digest() {
    flush();
    return {a_.digest(), b_.digest()};
  }
  /// 32 lowercase hex digits.
  std::string hex() {
    const auto [a, b] = digest();
    return toHex(a) + toHex(b);
  }

private:
  static constexpr std::size_t kBlock = 512;
  /// The buffer is full: hash it, then `p` (buffered when it is small).
  [[gnu::noinline]] Hash128 &updateBlock(const void *p, std::size_t n) {
    flush();
    if (n > kBlock) {
      a_.update(p, n);
      b_.update(p, n);
      return *this;
    }
    std::memcpy(buf_, p, n);
    used_ = n;
    return *this;
  }
  void flush() {
    a_.update(buf_, used_);
    b_.update(buf_, used_);
    used_ = 0;
  }
  Hash64 a_, b_;
  std::size_t used_ = 0;
  std::uint8_t buf_[kBlock] = {};
};

} // namespace aspen::exe
