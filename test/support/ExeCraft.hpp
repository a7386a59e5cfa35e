// Copyright (c) Aspen contributors.
// Crafting executables the way an attacker would: split a serialised executable
// into its sections (docs/executable-format.md), change any of them, and put it
// back together with a valid checksum, so that the structure checks are what
// stands between the bytes and the runtime. Used by test/error and test/fuzz.
#pragma once

#include "exe/Hash.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace aspen::test {

inline constexpr std::size_t kExeHeaderBytes = 48;
inline constexpr std::uint64_t kExeChecksumSeed = 0x4173706e45786531ull; // docs/executable-format.md

inline std::uint64_t exeGet64(const std::uint8_t *p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void exePut64(std::uint8_t *p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}

/// Makes the header's payload size and checksum agree with the bytes after it
/// (the payload is whatever follows the header).
inline void repairChecksum(std::vector<std::uint8_t> &bytes) {
  if (bytes.size() < kExeHeaderBytes)
    return;
  const std::uint64_t payload = bytes.size() - kExeHeaderBytes;
  exePut64(bytes.data() + 16, payload);
  exePut64(bytes.data() + 24, exe::hash64(bytes.data() + kExeHeaderBytes, payload, kExeChecksumSeed));
}

/// The five sections of a well-formed executable, decoded.
struct ExeParts {
  std::vector<std::uint8_t> header; // 48 bytes
  nlohmann::json ident;
  nlohmann::json meta;
  std::vector<std::uint8_t> data;
  std::vector<std::uint8_t> code;
  std::vector<std::uint8_t> profile;

  static ExeParts split(const std::vector<std::uint8_t> &bytes) {
    ExeParts parts;
    if (bytes.size() < kExeHeaderBytes)
      throw std::runtime_error("ExeParts::split: not an executable");
    parts.header.assign(bytes.begin(), bytes.begin() + kExeHeaderBytes);
    std::size_t at = kExeHeaderBytes;
    std::vector<std::uint8_t> raw[5];
    for (auto &section : raw) {
      const std::uint64_t n = exeGet64(bytes.data() + at + 8);
      section.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at + 16),
                     bytes.begin() + static_cast<std::ptrdiff_t>(at + 16 + n));
      at = (at + 16 + n + 7) / 8 * 8;
    }
    parts.ident = nlohmann::json::from_cbor(raw[0]);
    parts.meta = nlohmann::json::from_cbor(raw[1]);
    parts.data = std::move(raw[2]);
    parts.code = std::move(raw[3]);
    parts.profile = std::move(raw[4]);
    return parts;
  }

  /// The executable again, with a valid checksum.
  std::vector<std::uint8_t> join() const {
    std::vector<std::uint8_t> out = header;
    auto append = [&](std::uint32_t tag, const std::vector<std::uint8_t> &bytes) {
      std::uint8_t head[16] = {};
      std::memcpy(head, &tag, 4);
      exePut64(head + 8, bytes.size());
      out.insert(out.end(), head, head + 16);
      out.insert(out.end(), bytes.begin(), bytes.end());
      out.resize((out.size() + 7) / 8 * 8, 0);
    };
    append(1, nlohmann::json::to_cbor(ident));
    append(2, nlohmann::json::to_cbor(meta));
    append(3, data);
    append(4, code);
    append(5, profile);
    repairChecksum(out);
    return out;
  }
};

} // namespace aspen::test
