// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPNN_POOLINGDEF_HPP
#define POPNN_POOLINGDEF_HPP

namespace popnn {

/// Pooling types.
enum class PoolingType { MAX, AVG, SUM };

} // namespace popnn

#endif
