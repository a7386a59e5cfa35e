// Copyright (c) Aspen contributors.
#include "SaveArchive.hpp"

#include "poplar/exceptions.hpp"

#include <cstdio>
#include <fstream>

namespace aspen::compiler {
namespace {

/// `text` left-aligned in a field of `width` characters, padded with spaces.
std::string field(const std::string &text, std::size_t width) {
  std::string s = text.substr(0, width);
  s.resize(width, ' ');
  return s;
}

} // namespace

void writeCodeArchive(const std::string &path, const exe::ExecutableData &exe) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw poplar::poplar_error("target.saveArchive: cannot write '" + path + "'");
  out << "!<arch>\n";
  for (const exe::CodeletLibraryBlob &lib : exe.codeletLibraries) {
    // GNU member names end in '/' and fit the 16-character field.
    const std::string name = lib.contentHash.substr(0, 11) + ".gp/";
    // name(16) mtime(12) uid(6) gid(6) mode(8) size(10) "`\n"
    out << field(name, 16) << field("0", 12) << field("0", 6) << field("0", 6) << field("644", 8)
        << field(std::to_string(lib.bytes.size()), 10) << "`\n";
    out.write(reinterpret_cast<const char *>(lib.bytes.data()),
              static_cast<std::streamsize>(lib.bytes.size()));
    if (lib.bytes.size() % 2)
      out << '\n'; // members start on even offsets
  }
  out.flush();
  if (!out)
    throw poplar::poplar_error("target.saveArchive: writing '" + path + "' failed");
}

} // namespace aspen::compiler
