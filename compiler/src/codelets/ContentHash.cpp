// Copyright (c) Aspen contributors.
#include "codelets/ContentHash.hpp"

namespace aspen::codelets {

namespace {
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}
} // namespace

ContentHasher &ContentHasher::add(const void *data, std::size_t size) {
  const auto *p = static_cast<const unsigned char *>(data);
  std::uint64_t a = a_, b = b_;
  for (std::size_t i = 0; i < size; ++i) {
    a = (a ^ p[i]) * 0x100000001b3ull; // FNV-1a
    b = (b ^ p[i]) * 0xd6e8feb86659fd93ull;
    b ^= b >> 32;
  }
  a_ = a;
  b_ = b;
  length_ += size;
  return *this;
}

ContentHasher &ContentHasher::addField(std::string_view text) {
  const std::uint64_t n = text.size();
  add(&n, sizeof n);
  return add(text);
}

std::string ContentHasher::hex() const {
  static const char digits[] = "0123456789abcdef";
  const std::uint64_t lanes[2] = {mix(a_ ^ length_), mix(b_ + 0x632be59bd9b4e019ull * length_)};
  std::string out(32, '0');
  for (int lane = 0; lane < 2; ++lane)
    for (int i = 0; i < 16; ++i)
      out[lane * 16 + i] = digits[(lanes[lane] >> (60 - 4 * i)) & 0xf];
  return out;
}

std::string contentHash(const void *data, std::size_t size) {
  return ContentHasher().add(data, size).hex();
}

} // namespace aspen::codelets
