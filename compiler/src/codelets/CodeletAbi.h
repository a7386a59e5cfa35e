/* Copyright (c) Aspen contributors.
 * The C ABI between a compiled vertex library (a host shared object inside a
 * .gp file) and Aspen. Included by Aspen and by the registration unit that the
 * codelet compiler generates for every library, so it must stay plain C.
 * docs/internals.md, "Codelet libraries (.gp)", describes the contract. */
#ifndef ASPEN_CODELET_ABI_H
#define ASPEN_CODELET_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below or the meaning of a field changes. */
#define ASPEN_CODELET_ABI_VERSION 2u

/* AspenVertexEntry::flags */
#define ASPEN_VERTEX_MULTI 1u      /* derives from poplar::MultiVertex: compute(workerId) per worker */
#define ASPEN_VERTEX_SUPERVISOR 2u /* derives from poplar::SupervisorVertex */
#define ASPEN_VERTEX_EXTERNAL 4u   /* isExternalCodelet is true: on an IPU its compute is assembly */
/* The object that defines the vertex type also defines `extern "C" const int
 * aspen_codelet_inputs_read_only` (non-zero): its vertices never write through an Input, so
 * they may read exchanged data in place (docs/exchange.md). Set by the entry unit at link
 * time, per registration unit, from each object's symbol table; a library made before it
 * existed never sets it (its vertices keep their edge buffers). */
#define ASPEN_VERTEX_INPUTS_READ_ONLY 8u

/* AspenFieldEntry::kind (= aspen::ir::FieldKind) */
#define ASPEN_FIELD_INPUT 0u
#define ASPEN_FIELD_OUTPUT 1u
#define ASPEN_FIELD_INOUT 2u
#define ASPEN_FIELD_STATE 3u

/* AspenFieldEntry::shape (= aspen::ir::FieldShape) */
#define ASPEN_SHAPE_SCALAR 0u
#define ASPEN_SHAPE_VECTOR 1u
#define ASPEN_SHAPE_VECTOR_OF_EDGES 2u
#define ASPEN_SHAPE_VECTOR_OF_SCALAR_EDGES 3u

/* Host layout of edge and state-array fields (docs/internals.md, "Host layout
 * of vertex fields"): a scalar edge is a pointer; every vector form (vector
 * edge, state array, list of edges) is a pointer followed by a uint32 element
 * count, padded to 16 bytes. A list of vector edges points at a table of
 * descriptors of that same form; a list of scalar edges at a table of
 * pointers. Checked against poplar/Vertex.hpp in RegistrationSupport.hpp. */
#define ASPEN_FIELD_POINTER_BYTES 8u      /* Input<T>: T *ptr */
#define ASPEN_FIELD_SIZE_OFFSET 8u        /* vector forms: the uint32 count follows the pointer */
#define ASPEN_FIELD_SIZED_BYTES 12u       /* the least a field holding a count occupies */
#define ASPEN_FIELD_VECTOR_BYTES 16u      /* Input<Vector<T>>, Vector<T>, Vector<Input<...>> */
#define ASPEN_FIELD_DESCRIPTOR_BYTES 16u  /* one entry of a list of vector edges */
#define ASPEN_FIELD_SCALAR_ENTRY_BYTES 8u /* one entry of a list of scalar edges */
/* fp8: a field of quarter edges (Input<quarter>, Input<Vector<quarter>>, lists of them,
 * Input<VectorList<quarter>>, also Output/InOut) ends with a pointer to its tensor's
 * metadata (one QUARTER_METADATA byte), at offset size - ASPEN_FIELD_METADATA_POINTER_BYTES.
 * The entries of a list are the ordinary descriptors or pointers: a list has one metadata,
 * shared by all its tensors. */
#define ASPEN_FIELD_METADATA_POINTER_BYTES 8u
#define ASPEN_FIELD_QUARTER_SCALAR_BYTES 16u /* Input<quarter>: {ptr, metadata ptr} */
#define ASPEN_FIELD_QUARTER_VECTOR_BYTES 24u /* Input<Vector<quarter>>, lists: {ptr, size, metadata ptr} */

/* AspenFieldEntry::elementType is a poplar::Type::Id value (0 = not a known
 * element type, e.g. a struct-valued state member). AspenFieldEntry::layout and
 * outerLayout are aspen::ir::Layout values. */

/* One field of a vertex type, as the host compiler laid it out. */
typedef struct AspenFieldEntry {
  const char *name;
  uint32_t offset; /* offsetof in the vertex object */
  uint32_t size;   /* sizeof the member */
  uint32_t minAlign;
  uint8_t kind;
  uint8_t shape;
  uint8_t elementType;
  uint8_t layout;
  uint8_t outerLayout;
  uint8_t isConst;
  uint8_t unsupported; /* 1: the member's type is not one a vertex field may have (an edge of a
                          type that is not an element type, a member that is not trivially
                          copyable); the codelet compiler rejects the library. Since ABI 2. */
  uint8_t reserved;
} AspenFieldEntry;

/* compute(vertex, workerId): 1 = success, 0 = compute() returned false. */
typedef int (*AspenComputeFn)(void *vertex, unsigned workerId);

/* One vertex type: its canonical name ("ns::Foo<unsigned int,true>"), object
 * size and alignment, flags and compute entry. */
typedef struct AspenVertexEntry {
  const char *name;
  uint32_t size;
  uint32_t align;
  uint32_t flags;
  uint32_t numFields;
  const AspenFieldEntry *fields;
  AspenComputeFn compute;
} AspenVertexEntry;

/* Receives the text a codelet prints (not NUL-terminated). */
typedef void (*AspenPrintSink)(void *context, const char *text, size_t length);

/* What the IPU builtins backed by the runtime call (<ipu_tile_builtins.h>, docs/codelets.md,
 * "IPU builtins backed by the runtime"). Aspen's runtime gives every library it loads one
 * table, through aspen_codelet_set_runtime() (optional export, found by name: a library made
 * before it existed has none and calls no builtin). Each function reads what the executor
 * recorded for the calling thread's running vertex (its tile, its worker context, the
 * tile's generator); outside a vertex they return 0. */
typedef struct AspenCodeletRuntime {
  uint32_t size;              /* sizeof(AspenCodeletRuntime) of the runtime that filled it */
  uint32_t (*tileId)(void);   /* __builtin_ipu_get_tile_id */
  uint32_t (*workerId)(void); /* __builtin_ipu_get_worker_id */
  uint64_t (*scount)(void);   /* __builtin_ipu_get_scount_l / _h: the tile's cycle counter */
  uint64_t (*urand64)(void);  /* the running worker context's generator: 64 bits */
} AspenCodeletRuntime;

/* Exported by every vertex library. */
const AspenVertexEntry *aspen_codelet_entries(unsigned *count);
uint32_t aspen_codelet_abi_version(void);
/* Where printf() from this library's codelets goes; a null sink restores stdout. */
void aspen_codelet_set_print_sink(AspenPrintSink sink, void *context);

#ifdef __cplusplus
}
#endif

#endif
