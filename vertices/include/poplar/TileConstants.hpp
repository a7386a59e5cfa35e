// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Tile constants used by portable codelets (the ipu2 values). The IPU's
// control-register constants are only meaningful under __IPU__ and are not
// provided.
#ifndef POPLAR_TILECONSTANTS_HPP
#define POPLAR_TILECONSTANTS_HPP

/// Worker contexts per tile (MultiVertex::numWorkers()).
#define CTXT_WORKERS 6
/// The same, under the name PopLibs' codelets also use.
#ifndef NUM_WORKERS
#define NUM_WORKERS (CTXT_WORKERS)
#endif
/// Bytes a worker's share of a vector is aligned to when work is divided between
/// workers (the 64-bit load/store width).
#define WORKER_ALIGN 8
/// Elements the convolution unit loads per cycle.
#define CONV_UNIT_INPUT_LOAD_ELEMS_FLOAT (2)
#define CONV_UNIT_INPUT_LOAD_ELEMS_HALF (4)
#define CONV_UNIT_INPUT_LOAD_ELEMS_QUARTER (8)
/// Tile memory element size and address width (ipu2).
#define TMEM_ELEMSIZE (0x4000)
#define TMEM_BYTE_MAX_ADDRESS_WIDTH (21)
/// Bytes of the 64-bit data path.
#define DATA_PATH_BYTES 8

#endif
