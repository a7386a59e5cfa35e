// Copyright (c) Aspen contributors.
// The content hash of codelet sources, .gp files and shared objects: exe::Hash128
// (Aspen's one hash) spelled as 32 hex digits. Not cryptographic: it guards
// against accidents, not attacks.
#pragma once

#include "exe/Hash.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace aspen::codelets {

class ContentHasher {
public:
  ContentHasher &add(const void *data, std::size_t size) {
    hash_.update(data, size);
    return *this;
  }
  ContentHasher &add(std::string_view text) { return add(text.data(), text.size()); }
  /// Adds a length-prefixed string, so that ("ab","c") and ("a","bc") differ.
  ContentHasher &addField(std::string_view text) {
    hash_.string(text);
    return *this;
  }
  /// 32 lowercase hex digits.
  std::string hex() const { return exe::Hash128(hash_).hex(); }

private:
  exe::Hash128 hash_;
};

/// The hash of `size` bytes at `data`, as 32 hex digits.
inline std::string contentHash(const void *data, std::size_t size) {
  return ContentHasher().add(data, size).hex();
}

} // namespace aspen::codelets
