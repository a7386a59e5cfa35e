// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_SERIALIZATIONFORMAT_HPP
#define POPLAR_SERIALIZATIONFORMAT_HPP

namespace poplar {

/// The format of `Graph::serialize`: Aspen's binary form or a JSON document
/// (docs/graph-serialization.md).
enum class SerializationFormat { Binary, JSON };

} // namespace poplar

#endif
