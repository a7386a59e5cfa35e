// Copyright (c) Aspen contributors.
#include "poplar/Executable.hpp"

#include "exe/ExecutableData.hpp"
#include "exe/Serialize.hpp"
#include "poplar/exceptions.hpp"

namespace poplar {

Executable::Executable() = default;
Executable::Executable(std::unique_ptr<aspen::exe::ExecutableData> impl) : impl_(std::move(impl)) {}
Executable::Executable(Executable &&other) noexcept = default;
Executable &Executable::operator=(Executable &&other) noexcept = default;
Executable::~Executable() = default;

void Executable::serialize(std::ostream &out) const {
  if (!impl_)
    throw poplar_error("Executable::serialize: this executable is empty (default-constructed or moved from)");
  aspen::exe::serialize(*impl_, out);
}

Executable Executable::deserialize(std::istream &in, bool checkPackageHash) {
  return Executable(aspen::exe::deserialize(in, checkPackageHash, "the stream"));
}

Executable Executable::deserialize(std::unique_ptr<std::istream> in, bool checkPackageHash) {
  if (!in)
    throw graph_object_load_error("Executable::deserialize: no stream given");
  return deserialize(*in, checkPackageHash);
}

} // namespace poplar
