// Copyright (c) Aspen contributors.
// A 128-bit content hash (two independent 64-bit lanes) for cache keys and
// file identities. Not cryptographic: it guards against accidents, not attacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace aspen::codelets {

class ContentHasher {
public:
  ContentHasher &add(const void *data, std::size_t size);
  ContentHasher &add(std::string_view text) { return add(text.data(), text.size()); }
  /// Adds a length-prefixed string, so that ("ab","c") and ("a","bc") differ.
  ContentHasher &addField(std::string_view text);
  /// 32 lowercase hex digits.
  std::string hex() const;

private:
  std::uint64_t a_ = 0xcbf29ce484222325ull; // FNV-1a offset basis
  std::uint64_t b_ = 0x9e3779b97f4a7c15ull;
  std::uint64_t length_ = 0;
};

/// The hash of `size` bytes at `data`, as 32 hex digits.
std::string contentHash(const void *data, std::size_t size);

} // namespace aspen::codelets
