// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Tile constants used by portable codelets. The IPU's control-register
// constants are only meaningful under __IPU__ and are not provided.
#ifndef POPLAR_TILECONSTANTS_HPP
#define POPLAR_TILECONSTANTS_HPP

/// Worker contexts per tile (MultiVertex::numWorkers()).
#define CTXT_WORKERS 6

#endif
