// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_DYNAMICSLICE_HPP
#define POPOPS_DYNAMICSLICE_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <vector>

namespace popops {

class SlicePlanInternal;

/// How a multi-slice/update is implemented. Aspen's plans are simple: the sliced
/// tensor is spread over tiles by columns and every tile serves all lookups.
class SlicePlan {
public:
  SlicePlan();
  ~SlicePlan();
  SlicePlan(const SlicePlan &other);
  SlicePlan(SlicePlan &&other);
  SlicePlan &operator=(const SlicePlan &other);
  SlicePlan &operator=(SlicePlan &&other);

  friend std::ostream &operator<<(std::ostream &o, const SlicePlan &p);
  friend bool operator<(const SlicePlan &a, const SlicePlan &b) noexcept;
  friend bool operator==(const SlicePlan &a, const SlicePlan &b) noexcept;

  explicit SlicePlan(std::unique_ptr<SlicePlanInternal> internal);
  SlicePlanInternal &getImpl() const { return *internal; }
  bool isValid() const;

private:
  std::unique_ptr<SlicePlanInternal> internal;
};
bool operator<(const SlicePlan &a, const SlicePlan &b) noexcept;
bool operator==(const SlicePlan &a, const SlicePlan &b) noexcept;
bool operator!=(const SlicePlan &a, const SlicePlan &b) noexcept;

/// A tensor of `shape` mapped so that slicing/updating along `dims` needs no
/// exchange of the sliced tensor: each tile holds whole columns (every index of
/// the sliced dimensions) of at least `minGrainSize` elements.
poplar::Tensor createSliceableTensor(poplar::Graph &graph, const poplar::Type &type,
                                     const std::vector<std::size_t> &shape,
                                     const std::vector<std::size_t> &dims,
                                     const std::vector<std::size_t> &sizes, std::size_t minGrainSize = 0,
                                     const poplar::DebugContext &debugContext = {});

/// As above, laid out according to `plan`.
poplar::Tensor createSliceableTensor(poplar::Graph &graph, const poplar::Type &type,
                                     const std::vector<std::size_t> &shape,
                                     const std::vector<std::size_t> &dims,
                                     const std::vector<std::size_t> &sizes, const SlicePlan &plan,
                                     const poplar::OptionFlags &options,
                                     const poplar::DebugContext &debugContext = {});

/// A tensor `{numIndices, t.shape() with dims sized}` laid out to receive slices of `t`.
poplar::Tensor createSliceTensor(poplar::Graph &graph, const poplar::Tensor &t,
                                 const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                                 std::size_t numIndices, const poplar::DebugContext &debugContext = {});

/// A tensor `{numIndices, shape with dims sized}` laid out per `plan`.
poplar::Tensor createSliceTensor(poplar::Graph &graph, const poplar::Type &type,
                                 const std::vector<std::size_t> &shape, const std::vector<std::size_t> &dims,
                                 const std::vector<std::size_t> &sizes, std::size_t numIndices,
                                 const SlicePlan &plan, const poplar::OptionFlags &options,
                                 const poplar::DebugContext &debugContext = {});

/// An UNSIGNED_INT tensor `{numIndices, dims.size()}` for the offsets of a multi-slice/update.
poplar::Tensor createIndicesTensor(poplar::Graph &graph, const std::vector<std::size_t> &dims,
                                   std::size_t numIndices, const SlicePlan &plan,
                                   const poplar::OptionFlags &options,
                                   const poplar::DebugContext &debugContext = {});

/// The slice of `t` starting at the run-time offsets `offset` (UNSIGNED_INT,
/// one per entry of `dims`) with `sizes` elements in those dimensions. Offsets
/// wrap around modulo the dimension's size.
///
/// Example: `Tensor row = popops::dynamicSlice(graph, table, idx, {0}, {1}, prog);`
poplar::Tensor dynamicSlice(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offset,
                            const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                            poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// `dynamicSlice` into the existing tensor `output`.
void dynamicSliceWithOutput(poplar::Graph &graph, const poplar::Tensor &output, const poplar::Tensor &t,
                            const poplar::Tensor &offset, const std::vector<std::size_t> &dims,
                            const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                            const poplar::DebugContext &debugContext = {});

/// The mapping a slice of `t` gets from `dynamicSlice`.
poplar::Graph::TileToTensorMapping getSliceMapping(poplar::Graph &graph, const poplar::Tensor &t,
                                                   const std::vector<std::size_t> &dims,
                                                   const std::vector<std::size_t> &sizes);

/// Writes `s` into `t` at the run-time offsets `offset` (the inverse of dynamicSlice).
void dynamicUpdate(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                   const poplar::Tensor &offset, const std::vector<std::size_t> &dims,
                   const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                   const poplar::DebugContext &debugContext = {});

/// `offsets.dim(0)` slices of `t` (one dimension in `dims`); the result is
/// `{offsets.dim(0), t.shape() with dims sized}`. Out-of-range offsets give zeros.
poplar::Tensor multiSlice(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offsets,
                          const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                          poplar::program::Sequence &prog, const SlicePlan &plan,
                          const poplar::OptionFlags &options, const poplar::DebugContext &debugContext = {});

/// `t[offsets[i]] = s[i]` for every i; out-of-range offsets are ignored.
void multiUpdate(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                 const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                 const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                 const SlicePlan &plan, const poplar::OptionFlags &options,
                 const poplar::DebugContext &debugContext = {});

/// `t[offsets[i]] += scale * s[i]` for every i (repeated offsets accumulate).
void multiUpdateAdd(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                    const poplar::Tensor &offsets, const poplar::Tensor &scale,
                    const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                    poplar::program::Sequence &prog, const SlicePlan &plan,
                    const poplar::OptionFlags &options, const poplar::DebugContext &debugContext = {});

/// `t[offsets[i]] = max(t[offsets[i]], s[i])` for every i.
void multiUpdateMax(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                    const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                    const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                    const SlicePlan &plan, const poplar::OptionFlags &options,
                    const poplar::DebugContext &debugContext = {});

/// multiSlice with a group dimension: `t` is {G, ...}, `offsets` {G, numOffsets, dims.size()},
/// `dims` index the dimensions of each group (0 = the dimension after the group dimension);
/// the result is {G, numOffsets, group shape with dims of size 1}. Slices of size 1.
poplar::Tensor groupedMultiSlice(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offsets,
                                 const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                                 poplar::program::Sequence &prog, const SlicePlan &plan,
                                 const poplar::OptionFlags &options,
                                 const poplar::DebugContext &debugContext = {});

/// multiUpdate with a group dimension (shapes as for groupedMultiSlice).
void groupedMultiUpdate(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                        const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                        const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                        const SlicePlan &plan, const poplar::OptionFlags &options,
                        const poplar::DebugContext &debugContext = {});

/// multiUpdateAdd with a group dimension: t[g][offsets[g][i]] += scale * s[g][i].
void groupedMultiUpdateAdd(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                           const poplar::Tensor &offsets, const poplar::Tensor &scale,
                           const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                           poplar::program::Sequence &prog, const SlicePlan &plan,
                           const poplar::OptionFlags &options, const poplar::DebugContext &debugContext = {});

/// multiUpdateMax with a group dimension.
void groupedMultiUpdateMax(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                           const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                           const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                           const SlicePlan &plan, const poplar::OptionFlags &options,
                           const poplar::DebugContext &debugContext = {});

namespace embedding {

/// A plan for slicing/updating an embedding matrix `{numEntries, outputSize}`.
/// Options: `usedForSlice`, `usedForUpdate` (true|false), `operationForUpdate`
/// (none|add|max), `availableMemoryProportion` (number), `indicesDistribution`
/// (uniform|onePoint), `planMinimisationTarget` (memory|cycles),
/// `indicesAreSorted` (true|false); unknown keys throw poplar::invalid_option.
SlicePlan plan(const poplar::Graph &graph, const poplar::Type &dataType, const std::size_t numEntries,
               const std::size_t outputSize, const std::vector<std::size_t> &numLookups,
               const poplar::OptionFlags &options);

/// As above for `groupSize` embedding matrices `{groupSize, numEntries, outputSize}` sliced by
/// the grouped operations (groupedMultiSlice, groupedMultiUpdate*). `groupSize` must be at
/// least 1; the other form is this one with `groupSize` 1.
SlicePlan plan(const poplar::Graph &graph, const poplar::Type &dataType, const std::size_t groupSize,
               const std::size_t numEntries, const std::size_t outputSize,
               const std::vector<std::size_t> &numLookups, const poplar::OptionFlags &options);

} // namespace embedding

} // namespace popops

#endif
