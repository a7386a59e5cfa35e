// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Tile constants used by portable codelets (the ipu2 values), and the names of the
// IPU's control and status registers (<tilearch.h>, Aspen's numbering; docs/codelets.md,
// "Control and status registers"), which PopLibs' IPU paths take from here.
#ifndef POPLAR_TILECONSTANTS_HPP
#define POPLAR_TILECONSTANTS_HPP

#include <tilearch.h>

/// Worker contexts per tile (MultiVertex::numWorkers()).
#define CTXT_WORKERS 6
/// The same, under the name PopLibs' codelets also use.
#ifndef NUM_WORKERS
#define NUM_WORKERS (CTXT_WORKERS)
#endif
/// An attribute for a vertex class, as PopLibs writes `class WORKER_ALIGN Name : public
/// Vertex`: its objects 8-byte aligned (the 64-bit load/store width).
#define WORKER_ALIGN __attribute__((aligned(8)))
/// Bits of a stride in the IPU's packed-stride load/store instructions (ipu1, ipu2).
#define NUM_STRIDE_BITS (10)
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
