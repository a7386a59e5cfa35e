// Copyright (c) Aspen contributors.
// popops dynamic slicing. The sliced tensor is viewed as rows (one per index of the
// sliced dimension) by columns (everything else); each vertex serves one column region
// of all rows, on the tile that holds that region of the result (or of the sliced
// tensor for updates). createSliceableTensor lays tensors out by columns so that a
// tile holds every row of its columns and slicing needs no exchange of the table.
// Vertices: popops::DynamicSlice1D, DynamicUpdateSlice1D, MultiSlice, MultiUpdate,
// MultiUpdateAdd, MultiUpdateMax.
#include "popops/DynamicSlice.hpp"
#include <sstream>

#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "popops/ElementWise.hpp"
#include "popops/Expr.hpp"
#include "poputil/OptionParsing.hpp"
#include "poputil/TileMapping.hpp"
#include "poputil/Util.hpp"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::SlicePlan &p) {
  return aspen::ops::streamedProfileValue(p);
}
} // namespace poputil

namespace popops {

class SlicePlanInternal {
public:
  bool valid = false;
  std::size_t groupSize = 1, numEntries = 0, outputSize = 0;
  std::vector<std::size_t> numLookups;
  bool usedForSlice = true, usedForUpdate = true;
  std::string operationForUpdate = "add";
  std::unique_ptr<SlicePlanInternal> clone() const {
    return std::unique_ptr<SlicePlanInternal>(new SlicePlanInternal(*this));
  }
  bool operator==(const SlicePlanInternal &o) const {
    return valid == o.valid && groupSize == o.groupSize && numEntries == o.numEntries &&
           outputSize == o.outputSize && numLookups == o.numLookups && usedForSlice == o.usedForSlice &&
           usedForUpdate == o.usedForUpdate && operationForUpdate == o.operationForUpdate;
  }
  bool operator<(const SlicePlanInternal &o) const {
    return std::tie(valid, groupSize, numEntries, outputSize, numLookups, usedForSlice, usedForUpdate,
                    operationForUpdate) < std::tie(o.valid, o.groupSize, o.numEntries, o.outputSize,
                                                   o.numLookups, o.usedForSlice, o.usedForUpdate,
                                                   o.operationForUpdate);
  }
};

SlicePlan::SlicePlan() : internal(new SlicePlanInternal) {}
SlicePlan::~SlicePlan() = default;
SlicePlan::SlicePlan(const SlicePlan &other) : internal(other.internal->clone()) {}
SlicePlan::SlicePlan(SlicePlan &&other) : internal(std::move(other.internal)) {
  other.internal.reset(new SlicePlanInternal);
}
SlicePlan &SlicePlan::operator=(const SlicePlan &other) {
  internal = other.internal->clone();
  return *this;
}
SlicePlan &SlicePlan::operator=(SlicePlan &&other) {
  std::swap(internal, other.internal);
  return *this;
}
SlicePlan::SlicePlan(std::unique_ptr<SlicePlanInternal> i) : internal(std::move(i)) {}
bool SlicePlan::isValid() const {
  return internal->valid;
}

std::ostream &operator<<(std::ostream &o, const SlicePlan &p) {
  const auto &i = *p.internal;
  if (!i.valid)
    return o << "SlicePlan(none)";
  o << "SlicePlan(columns over tiles, ";
  if (i.groupSize != 1)
    o << "groupSize=" << i.groupSize << ", ";
  o << "numEntries=" << i.numEntries << ", outputSize=" << i.outputSize << ", lookups={";
  for (std::size_t k = 0; k < i.numLookups.size(); ++k)
    o << (k ? "," : "") << i.numLookups[k];
  return o << "})";
}
bool operator<(const SlicePlan &a, const SlicePlan &b) noexcept {
  return *a.internal < *b.internal;
}
bool operator==(const SlicePlan &a, const SlicePlan &b) noexcept {
  return *a.internal == *b.internal;
}
bool operator!=(const SlicePlan &a, const SlicePlan &b) noexcept {
  return !(a == b);
}

namespace {

using aspen::ops::describe;
using aspen::ops::shapeString;

void checkDimsAndSizes(const poplar::Tensor &t, const std::vector<std::size_t> &dims,
                       const std::vector<std::size_t> &sizes, const std::string &op) {
  if (!t.valid())
    throw poputil::poplibs_error(op + ": the tensor to slice is not valid");
  if (dims.size() != sizes.size())
    throw poputil::poplibs_error(op + ": dims " + shapeString(dims) + " and sizes " + shapeString(sizes) +
                                 " must have the same length");
  std::set<std::size_t> seen;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= t.rank())
      throw poputil::poplibs_error(op + ": dimension " + std::to_string(dims[i]) + " is out of range for " +
                                   describe(t));
    if (!seen.insert(dims[i]).second)
      throw poputil::poplibs_error(op + ": dimension " + std::to_string(dims[i]) + " is listed twice");
    if (sizes[i] > t.dim(dims[i]))
      throw poputil::poplibs_error(op + ": slice size " + std::to_string(sizes[i]) + " exceeds dimension " +
                                   std::to_string(dims[i]) + " of " + describe(t));
  }
}

// The options of PopLibs' slicing functions (validated everywhere; Aspen's plans only keep
// what they record).
SlicePlanInternal parseSliceOptions(const poplar::OptionFlags &options, const std::string &op) {
  SlicePlanInternal p;
  double availableMemoryProportion = 0.6;
  std::string distribution = "uniform", target = "memory";
  bool sorted = false;
  const poplibs::OptionSpec spec{
      {"usedForSlice", poplibs::OptionHandler::createWithBool(p.usedForSlice)},
      {"usedForUpdate", poplibs::OptionHandler::createWithBool(p.usedForUpdate)},
      {"operationForUpdate",
       poplibs::OptionHandler::createWithEnum(
           p.operationForUpdate,
           std::map<std::string, std::string>{{"none", "none"}, {"add", "add"}, {"max", "max"}})},
      {"availableMemoryProportion", poplibs::OptionHandler::createWithDouble(availableMemoryProportion)},
      {"indicesDistribution",
       poplibs::OptionHandler::createWithEnum(
           distribution,
           std::map<std::string, std::string>{{"uniform", "uniform"}, {"onePoint", "onePoint"}})},
      {"planMinimisationTarget",
       poplibs::OptionHandler::createWithEnum(
           target, std::map<std::string, std::string>{{"memory", "memory"}, {"cycles", "cycles"}})},
      {"indicesAreSorted", poplibs::OptionHandler::createWithBool(sorted)},
  };
  aspen::ops::parseOptions(spec, options, op);
  if (!p.usedForSlice && !p.usedForUpdate)
    throw poplar::invalid_option(op + ": usedForSlice and usedForUpdate cannot both be false");
  if (availableMemoryProportion < 0)
    throw poplar::invalid_option(op + ": availableMemoryProportion must not be negative");
  return p;
}

std::vector<std::size_t> slicedShape(const std::vector<std::size_t> &shape,
                                     const std::vector<std::size_t> &dims,
                                     const std::vector<std::size_t> &sizes) {
  std::vector<std::size_t> s = shape;
  for (std::size_t i = 0; i < dims.size(); ++i)
    s[dims[i]] = sizes[i];
  return s;
}

// `t` with dimension `d` moved first and the rest flattened: [t.dim(d), columns].
poplar::Tensor rowsByColumns(const poplar::Tensor &t, unsigned d) {
  const poplar::Tensor rolled = t.dimRoll(d, 0);
  const std::size_t rows = t.dim(d);
  return rolled.reshape({rows, rows ? t.numElements() / rows : 0});
}

// The columns `regions` of a [rows, columns] tensor, all rows, flattened row-major.
poplar::Tensor columnsOf(const poplar::Tensor &m, const std::vector<poplar::Interval> &regions) {
  std::vector<poplar::Tensor> parts;
  for (const auto &r : regions)
    parts.push_back(m.slice(r.begin(), r.end(), 1));
  return (parts.size() == 1 ? parts[0] : poplar::concat(parts, 1)).flatten();
}

poplar::Tensor offsetElement(const poplar::Tensor &offset, std::size_t i) {
  poplar::Tensor o = offset.flatten()[i];
  return o.elementType() == poplar::INT ? o.reinterpret(poplar::UNSIGNED_INT) : o;
}

void checkOffsets(const poplar::Tensor &offset, std::size_t needed, const std::string &op) {
  if (!offset.valid())
    throw poputil::poplibs_error(op + ": the offset tensor is not valid");
  if (offset.elementType() != poplar::UNSIGNED_INT && offset.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": offsets " + describe(offset) + " must be UNSIGNED_INT");
  if (offset.numElements() < needed)
    throw poputil::poplibs_error(op + ": offset " + describe(offset) + " needs " + std::to_string(needed) +
                                 " element(s), one per sliced dimension");
}

// Column regions of a [rows, columns] tensor, per tile, from the mapping of its first row.
std::vector<aspen::ops::TileWork> columnWork(const poplar::Graph &graph, const poplar::Tensor &m) {
  return aspen::ops::splitByTile(graph, m[0], 4);
}

// Slices dimension d (one dimension) of t at run-time offset `off` into out.
void sliceOneDim(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &out, unsigned d,
                 const poplar::Tensor &off, poplar::ComputeSet cs, bool update) {
  const poplar::Tensor base = rowsByColumns(t, d);
  const poplar::Tensor sub = rowsByColumns(out, d);
  if (base.dim(1) == 0 || sub.dim(0) == 0)
    return;
  const poplar::Type type = t.elementType();
  const std::string vt =
      poputil::templateVertex(update ? "popops::DynamicUpdateSlice1D" : "popops::DynamicSlice1D", type);
  aspen::ops::requireVertex(graph, vt, update ? "popops::dynamicUpdate" : "popops::dynamicSlice",
                            "slicing tensors of type " + type.toString().str());
  // Slices are made where the result lives; updates where the updated tensor lives.
  for (const auto &w : columnWork(graph, update ? base : sub)) {
    poplar::VertexRef v = graph.addVertex(cs, vt);
    graph.connect(v["offset"], off);
    graph.connect(v["baseT"], columnsOf(base, w.regions));
    graph.connect(v["subT"], columnsOf(sub, w.regions));
    graph.setInitialValue(v["numBaseElements"], static_cast<unsigned>(base.dim(0)));
    graph.setInitialValue(v["numSubElements"], static_cast<unsigned>(sub.dim(0)));
    graph.setInitialValue(v["regionSize"], static_cast<unsigned>(w.numElements()));
    graph.setTileMapping(v, w.tile);
    graph.setPerfEstimate(v, cost::dynamicSlice1D(graph.getTarget(), type, w.numElements(), sub.dim(0)));
  }
}

} // namespace

poplar::Tensor createSliceableTensor(poplar::Graph &graph, const poplar::Type &type,
                                     const std::vector<size_t> &shape, const std::vector<size_t> &dims,
                                     const std::vector<size_t> &sizes, std::size_t minGrainSize,
                                     const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(type, shape, dims, sizes, minGrainSize));
  const poplar::DebugContext debugContext(di);
  poplar::Tensor t = graph.addVariable(type, shape, {debugContext, "sliceable"});
  checkDimsAndSizes(t, dims, sizes, "popops::createSliceableTensor");
  if (dims.empty() || t.numElements() == 0) {
    poputil::mapTensorLinearly(graph, t);
    return t;
  }
  // Sliced dimensions first, then columns: each tile holds a range of columns of every row.
  std::vector<unsigned> perm;
  for (std::size_t d : dims)
    perm.push_back(static_cast<unsigned>(d));
  for (unsigned d = 0; d < t.rank(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end())
      perm.push_back(d);
  std::size_t rows = 1;
  for (std::size_t d : dims)
    rows *= shape[d];
  const poplar::Tensor m = t.dimShuffle(perm).reshape({rows, t.numElements() / rows});
  const std::size_t columns = m.dim(1);
  const unsigned numTiles = graph.getTarget().getNumTiles();
  const unsigned typeSize = std::max(1u, static_cast<unsigned>(graph.getTarget().getTypeSize(type)));
  // At least 128 bytes and minGrainSize elements per tile and row.
  const std::size_t minColumns =
      std::max<std::size_t>({1, minGrainSize, (128 + rows * typeSize - 1) / (rows * typeSize)});
  const auto parts = poputil::splitRegions({poplar::Interval(0, columns)}, 1, numTiles,
                                           static_cast<unsigned>(std::min<std::size_t>(minColumns, columns)));
  for (unsigned p = 0; p < parts.size(); ++p)
    for (const auto &r : parts[p])
      graph.setTileMapping(m.slice(r.begin(), r.end(), 1), p);
  return t;
}

poplar::Tensor createSliceableTensor(poplar::Graph &graph, const poplar::Type &type,
                                     const std::vector<size_t> &shape, const std::vector<size_t> &dims,
                                     const std::vector<size_t> &sizes, const SlicePlan &plan,
                                     const poplar::OptionFlags &options,
                                     const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(type, shape, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::createSliceableTensor");
  return createSliceableTensor(graph, type, shape, dims, sizes, 0, debugContext);
}

poplar::Tensor createSliceTensor(poplar::Graph &graph, const poplar::Tensor &t,
                                 const std::vector<size_t> &dims, const std::vector<size_t> &sizes,
                                 std::size_t numIndices, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, dims, sizes, numIndices));
  const poplar::DebugContext debugContext(di);
  checkDimsAndSizes(t, dims, sizes, "popops::createSliceTensor");
  std::vector<std::size_t> shape{numIndices};
  const auto s = slicedShape(t.shape(), dims, sizes);
  shape.insert(shape.end(), s.begin(), s.end());
  poplar::Tensor out = graph.addVariable(t.elementType(), shape, {debugContext, "slice"});
  poputil::mapTensorLinearly(graph, out);
  return out;
}

poplar::Tensor createSliceTensor(poplar::Graph &graph, const poplar::Type &type,
                                 const std::vector<std::size_t> &shape, const std::vector<std::size_t> &dims,
                                 const std::vector<std::size_t> &sizes, std::size_t numIndices,
                                 const SlicePlan &plan, const poplar::OptionFlags &options,
                                 const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn,
                                 DI_ARGS(type, shape, dims, sizes, numIndices, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::createSliceTensor");
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (dims[i] >= shape.size() || i >= sizes.size() || sizes[i] > shape[dims[i]])
      throw poputil::poplibs_error("popops::createSliceTensor: dims " + shapeString(dims) + " / sizes " +
                                   shapeString(sizes) + " do not fit shape " + shapeString(shape));
  std::vector<std::size_t> outShape{numIndices};
  const auto s = slicedShape(shape, dims, sizes);
  outShape.insert(outShape.end(), s.begin(), s.end());
  poplar::Tensor out = graph.addVariable(type, outShape, {debugContext, "slice"});
  poputil::mapTensorLinearly(graph, out);
  return out;
}

poplar::Tensor createIndicesTensor(poplar::Graph &graph, const std::vector<std::size_t> &dims,
                                   std::size_t numIndices, const SlicePlan &plan,
                                   const poplar::OptionFlags &options,
                                   const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(dims, numIndices, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::createIndicesTensor");
  poplar::Tensor t =
      graph.addVariable(poplar::UNSIGNED_INT, {numIndices, dims.size()}, {debugContext, "indices"});
  poputil::mapTensorLinearly(graph, t);
  return t;
}

poplar::Graph::TileToTensorMapping getSliceMapping(poplar::Graph &graph, const poplar::Tensor &t,
                                                   const std::vector<std::size_t> &dims,
                                                   const std::vector<std::size_t> &sizes) {
  checkDimsAndSizes(t, dims, sizes, "popops::getSliceMapping");
  std::vector<std::size_t> begin(t.rank(), 0), end = t.shape();
  for (std::size_t i = 0; i < dims.size(); ++i)
    end[dims[i]] = sizes[i];
  return graph.getTileMapping(t.slice(begin, end));
}

void dynamicSliceWithOutput(poplar::Graph &graph, const poplar::Tensor &output, const poplar::Tensor &t,
                            const poplar::Tensor &offset, const std::vector<std::size_t> &dims,
                            const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                            const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(output, t, offset, dims, sizes));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::dynamicSlice";
  checkDimsAndSizes(t, dims, sizes, op);
  checkOffsets(offset, dims.size(), op);
  if (output.shape() != slicedShape(t.shape(), dims, sizes))
    throw poputil::poplibs_error(op + ": output " + describe(output) + " does not have the slice's shape " +
                                 shapeString(slicedShape(t.shape(), dims, sizes)));
  if (output.elementType() != t.elementType())
    throw poputil::poplibs_error(op + ": output " + describe(output) + " and " + describe(t) +
                                 " have different element types");
  if (dims.empty()) {
    prog.add(poplar::program::Copy(t, output, false, {debugContext, "dynamicSlice"}));
    return;
  }
  aspen::ops::mapIfUnmapped(graph, output);
  // One dimension per compute set; the intermediate results are laid out like the next slice.
  poplar::Tensor current = t;
  std::vector<std::size_t> shape = t.shape();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    shape[dims[i]] = sizes[i];
    poplar::Tensor next;
    if (i + 1 == dims.size()) {
      next = output;
    } else {
      std::vector<std::size_t> begin(shape.size(), 0);
      next = graph.clone(current.slice(begin, shape), {debugContext, "dynamicSlice/partial"});
    }
    poplar::ComputeSet cs = graph.addComputeSet({debugContext, "dynamicSlice"});
    sliceOneDim(graph, current, next, static_cast<unsigned>(dims[i]), offsetElement(offset, i), cs, false);
    prog.add(poplar::program::Execute(cs, {debugContext, "dynamicSlice"}));
    current = next;
  }
}

poplar::Tensor dynamicSlice(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offset,
                            const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                            poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, offset, dims, sizes));
  const poplar::DebugContext debugContext(di);
  checkDimsAndSizes(t, dims, sizes, "popops::dynamicSlice");
  std::vector<std::size_t> begin(t.rank(), 0);
  const auto end = slicedShape(t.shape(), dims, sizes);
  // The result is laid out like the slice at offset 0, so each tile slices its own columns.
  poplar::Tensor out = graph.clone(t.slice(begin, end), {debugContext, "dynamicSlice/out"});
  aspen::ops::mapIfUnmapped(graph, out);
  dynamicSliceWithOutput(graph, out, t, offset, dims, sizes, prog, debugContext);
  return out;
}

void dynamicUpdate(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                   const poplar::Tensor &offset, const std::vector<std::size_t> &dims,
                   const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                   const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offset, dims, sizes));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::dynamicUpdate";
  checkDimsAndSizes(t, dims, sizes, op);
  checkOffsets(offset, dims.size(), op);
  if (!s.valid() || s.shape() != slicedShape(t.shape(), dims, sizes))
    throw poputil::poplibs_error(op + ": update " + describe(s) + " does not have the slice's shape " +
                                 shapeString(slicedShape(t.shape(), dims, sizes)));
  if (s.elementType() != t.elementType())
    throw poputil::poplibs_error(op + ": update " + describe(s) + " and " + describe(t) +
                                 " have different element types");
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(op + ": " + describe(t) + " cannot be written");
  if (dims.empty()) {
    prog.add(poplar::program::Copy(s, t, false, {debugContext, "dynamicUpdate"}));
    return;
  }
  if (dims.size() > 1) {
    // Read the rows selected by the first dimension, update them in the others, write them back.
    const std::vector<std::size_t> d0{dims[0]}, s0{sizes[0]};
    const std::vector<std::size_t> restDims(dims.begin() + 1, dims.end()),
        restSizes(sizes.begin() + 1, sizes.end());
    poplar::Tensor rows = dynamicSlice(graph, t, offset.flatten().slice(0, 1), d0, s0, prog, debugContext);
    dynamicUpdate(graph, rows, s, offset.flatten().slice(1, dims.size()), restDims, restSizes, prog,
                  debugContext);
    dynamicUpdate(graph, t, rows, offset.flatten().slice(0, 1), d0, s0, prog, debugContext);
    return;
  }
  poplar::ComputeSet cs = graph.addComputeSet({debugContext, "dynamicUpdate"});
  sliceOneDim(graph, t, s, static_cast<unsigned>(dims[0]), offsetElement(offset, 0), cs, true);
  prog.add(poplar::program::Execute(cs, {debugContext, "dynamicUpdate"}));
}

namespace {

enum class MultiKind { Slice, Update, UpdateAdd, UpdateMax };

// The sliced tensor as [rows, columns], the slices as [numOffsets, columns] and the offsets as a vector.
struct MultiOperands {
  poplar::Tensor base, slices, offsets;
};

MultiOperands checkMulti(const poplar::Tensor &t, const poplar::Tensor &s, const poplar::Tensor &offsets,
                         const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                         const std::string &op) {
  checkDimsAndSizes(t, dims, sizes, op);
  if (dims.size() != 1 || sizes[0] != 1)
    throw poputil::poplibs_error(op +
                                 ": only one sliced dimension with slices of size 1 is supported (dims " +
                                 shapeString(dims) + ", sizes " + shapeString(sizes) + ")");
  if (!offsets.valid())
    throw poputil::poplibs_error(op + ": the offsets tensor is not valid");
  if (offsets.elementType() != poplar::UNSIGNED_INT && offsets.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": offsets " + describe(offsets) + " must be UNSIGNED_INT");
  if (offsets.rank() == 0 || offsets.rank() > 2 || (offsets.rank() == 2 && offsets.dim(1) != 1))
    throw poputil::poplibs_error(op + ": offsets " + describe(offsets) + " must have shape {numOffsets, 1}");
  const std::size_t numOffsets = offsets.dim(0);
  std::vector<std::size_t> sShape{numOffsets};
  const auto sl = slicedShape(t.shape(), dims, sizes);
  sShape.insert(sShape.end(), sl.begin(), sl.end());
  if (s.valid() && s.shape() != sShape)
    throw poputil::poplibs_error(op + ": slices " + describe(s) + " must have shape " + shapeString(sShape));
  if (s.valid() && s.elementType() != t.elementType())
    throw poputil::poplibs_error(op + ": slices " + describe(s) + " and " + describe(t) +
                                 " have different element types");
  MultiOperands m;
  m.base = rowsByColumns(t, static_cast<unsigned>(dims[0]));
  if (s.valid())
    m.slices = s.reshape({numOffsets, m.base.dim(1)});
  m.offsets = offsets.flatten();
  if (m.offsets.elementType() == poplar::INT)
    m.offsets = m.offsets.reinterpret(poplar::UNSIGNED_INT);
  return m;
}

void multiVertices(poplar::Graph &graph, const MultiOperands &m, MultiKind kind, const poplar::Tensor &scale,
                   poplar::program::Sequence &prog, const poplar::DebugContext &dc, const std::string &op) {
  if (m.base.dim(1) == 0 || m.offsets.numElements() == 0)
    return;
  const poplar::Type type = m.base.elementType();
  std::string vt;
  switch (kind) {
  case MultiKind::Slice:
    vt = poputil::templateVertex("popops::MultiSlice", type);
    break;
  case MultiKind::Update:
    vt = poputil::templateVertex("popops::MultiUpdate", type);
    break;
  case MultiKind::UpdateAdd:
    vt = poputil::templateVertex("popops::MultiUpdateAdd", type, scale.elementType());
    break;
  case MultiKind::UpdateMax:
    vt = poputil::templateVertex("popops::MultiUpdateMax", type);
    break;
  }
  aspen::ops::requireVertex(graph, vt, op, "tensors of type " + type.toString().str());
  poplar::ComputeSet cs = graph.addComputeSet({dc, op});
  // Slices are made where the result lives; updates where the updated tensor lives.
  const poplar::Tensor &layout = kind == MultiKind::Slice ? m.slices : m.base;
  for (const auto &w : columnWork(graph, layout)) {
    poplar::VertexRef v = graph.addVertex(cs, vt);
    graph.connect(v["offsets"], m.offsets);
    graph.connect(v["baseT"], columnsOf(m.base, w.regions));
    graph.connect(v["subT"], columnsOf(m.slices, w.regions));
    if (kind == MultiKind::UpdateAdd)
      graph.connect(v["scale"], scale.flatten()[0]);
    graph.setInitialValue(v["numBaseElements"], static_cast<unsigned>(m.base.dim(0)));
    graph.setInitialValue(v["regionSize"], static_cast<unsigned>(w.numElements()));
    graph.setTileMapping(v, w.tile);
    if (kind == MultiKind::Slice || kind == MultiKind::Update) {
      graph.setPerfEstimate(
          v, cost::multiSlice(type, w.numElements(), m.offsets.numElements(), kind == MultiKind::Update));
    } else {
      graph.setPerfEstimate(
          v, cost::multiUpdateOp(graph.getTarget(), type,
                                 kind == MultiKind::UpdateAdd ? scale.elementType() : poplar::Type(),
                                 w.numElements(), m.offsets.numElements()));
    }
  }
  prog.add(poplar::program::Execute(cs, {dc, op}));
}

} // namespace

// --- several sliced dimensions, and groups: one combined row index ---------------------------------
namespace {

// `t` with the (group dimension and the) sliced dimensions moved to the front and merged into
// one, and the offsets {numOffsets, dims.size()} (or {G, numOffsets, dims.size()} with
// groups) combined into one row index of that view. An offset out of range in any dimension
// gives a row index out of range (numRows), which the vertices treat as out of range.
struct Collapsed {
  poplar::Tensor base;    // {rows, ...rest}
  poplar::Tensor offsets; // {numOffsets total, 1}
};

Collapsed collapseMulti(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offsets,
                        const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                        bool grouped, poplar::program::Sequence &prog, const poplar::DebugContext &dc,
                        const std::string &op) {
  using namespace popops::expr;
  if (!t.valid())
    throw poputil::poplibs_error(op + ": the sliced tensor is not valid");
  if (grouped && t.rank() < 2)
    throw poputil::poplibs_error(op + ": " + describe(t) +
                                 " must have a group dimension and at least one more");
  const poplar::Tensor perGroup = grouped ? t[0] : t;
  checkDimsAndSizes(perGroup, dims, sizes, op);
  for (std::size_t s : sizes)
    if (s != 1)
      throw poputil::poplibs_error(op + ": slices of size 1 are supported (sizes " + shapeString(sizes) +
                                   ")");
  if (!offsets.valid())
    throw poputil::poplibs_error(op + ": the offsets tensor is not valid");
  if (offsets.elementType() != poplar::UNSIGNED_INT && offsets.elementType() != poplar::INT)
    throw poputil::poplibs_error(op + ": offsets " + describe(offsets) + " must be UNSIGNED_INT");
  const std::size_t k = dims.size();
  const std::size_t wantRank = grouped ? 3 : 2;
  if (offsets.rank() != wantRank || offsets.dim(wantRank - 1) != k || (grouped && offsets.dim(0) != t.dim(0)))
    throw poputil::poplibs_error(op + ": offsets " + describe(offsets) + " must have shape " +
                                 std::string(grouped ? "{groups, numOffsets, " : "{numOffsets, ") +
                                 std::to_string(k) + "}");
  const std::size_t g0 = grouped ? 1 : 0;
  std::vector<unsigned> perm;
  if (grouped)
    perm.push_back(0);
  for (std::size_t d : dims)
    perm.push_back(static_cast<unsigned>(d + g0));
  for (unsigned d = 0; d < t.rank(); ++d)
    if (std::find(perm.begin(), perm.end(), d) == perm.end())
      perm.push_back(d);
  poplar::Tensor shuffled = t.dimShuffle(perm);
  std::size_t rowsPerGroup = 1;
  for (std::size_t d : dims)
    rowsPerGroup *= perGroup.dim(d);
  const std::size_t groups = grouped ? t.dim(0) : 1;
  Collapsed c;
  c.base = shuffled.reshapePartial(0, g0 + k, {groups * rowsPerGroup});
  poplar::Tensor off =
      offsets.elementType() == poplar::INT ? offsets.reinterpret(poplar::UNSIGNED_INT) : offsets;
  off = off.reshape({offsets.numElements() / k, k});
  const std::size_t n = off.dim(0);
  // acc = acc * dim + offset, with an out-of-range marker (the running row count).
  unsigned total = static_cast<unsigned>(perGroup.dim(dims[0]));
  poplar::Tensor col0 = off.slice(0, 1, 1).reshape({n});
  poplar::Tensor acc =
      map(graph, Select(_1, Const(total), Lt(_1, Const(total))), {col0}, prog, {dc, "offsets"});
  for (std::size_t j = 1; j < k; ++j) {
    const unsigned d = static_cast<unsigned>(perGroup.dim(dims[j]));
    const unsigned prevTotal = total;
    total *= d;
    mapInPlace(
        graph,
        Select(Add(Mul(_1, Const(d)), _2), Const(total), And(Lt(_1, Const(prevTotal)), Lt(_2, Const(d)))),
        {acc, off.slice(j, j + 1, 1).reshape({n})}, prog, {dc, "offsets"});
  }
  if (grouped) {
    const std::size_t perGroupOffsets = n / groups;
    std::vector<unsigned> base(groups);
    for (std::size_t g = 0; g < groups; ++g)
      base[g] = static_cast<unsigned>(g * rowsPerGroup);
    poplar::Tensor groupBase =
        graph.addConstant(poplar::UNSIGNED_INT, {groups, 1}, base.data(), {dc, "groupBase"});
    graph.setTileMapping(groupBase, 0);
    const unsigned allRows = static_cast<unsigned>(groups * rowsPerGroup);
    acc = map(graph, Select(Add(_1, _2), Const(allRows), Lt(_1, Const(total))),
              {acc.reshape({groups, perGroupOffsets}), groupBase}, prog, {dc, "offsets"});
  }
  c.offsets = acc.reshape({n, 1});
  return c;
}

// The result shape of a (grouped) multiSlice: {[G,] numOffsets, shape with dims of size 1}.
std::vector<std::size_t> multiResultShape(const poplar::Tensor &t, const poplar::Tensor &offsets,
                                          const std::vector<std::size_t> &dims, bool grouped) {
  std::vector<std::size_t> shape;
  std::vector<std::size_t> per = t.shape();
  if (grouped) {
    shape.push_back(t.dim(0));
    shape.push_back(offsets.dim(1));
    per.erase(per.begin());
  } else {
    shape.push_back(offsets.dim(0));
  }
  for (std::size_t d : dims)
    per[d] = 1;
  shape.insert(shape.end(), per.begin(), per.end());
  return shape;
}

// The slices `s` of a (grouped) multiUpdate as the collapsed call wants them.
poplar::Tensor collapsedSlices(const poplar::Tensor &s, const Collapsed &c, const std::string &op,
                               const std::vector<std::size_t> &expected) {
  if (!s.valid())
    throw poputil::poplibs_error(op + ": the slices tensor is not valid");
  if (s.shape() != expected)
    throw poputil::poplibs_error(op + ": slices " + describe(s) + " must have shape " +
                                 shapeString(expected));
  std::vector<std::size_t> shape{c.offsets.dim(0), 1};
  for (std::size_t d = 1; d < c.base.rank(); ++d)
    shape.push_back(c.base.dim(d));
  return s.reshape(shape);
}

} // namespace

poplar::Tensor multiSlice(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offsets,
                          const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                          poplar::program::Sequence &prog, const SlicePlan &plan,
                          const poplar::OptionFlags &options, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, offsets, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::multiSlice");
  const std::string op = "popops::multiSlice";
  if (dims.size() > 1) {
    Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, false, prog, debugContext, op);
    return multiSlice(graph, c.base, c.offsets, {0}, {1}, prog, plan, options, debugContext)
        .reshape(multiResultShape(t, offsets, dims, false));
  }
  MultiOperands m = checkMulti(t, poplar::Tensor(), offsets, dims, sizes, op);
  const std::size_t numOffsets = m.offsets.numElements();
  const std::size_t columns = m.base.dim(1);
  // The result [numOffsets, columns] keeps each column region on the tile holding it in t.
  poplar::Tensor out =
      graph.addVariable(t.elementType(), {numOffsets, columns}, {debugContext, "multiSlice/out"});
  std::vector<std::vector<poplar::Interval>> mapping(graph.getTarget().getNumTiles());
  for (const auto &w : columnWork(graph, m.base))
    for (const auto &r : w.regions)
      for (std::size_t i = 0; i < numOffsets; ++i)
        mapping[w.tile].push_back(poplar::Interval(i * columns + r.begin(), i * columns + r.end()));
  for (auto &tm : mapping)
    std::sort(tm.begin(), tm.end());
  poputil::mergeAdjacentRegions(mapping);
  graph.setTileMapping(out, mapping);
  m.slices = out;
  multiVertices(graph, m, MultiKind::Slice, poplar::Tensor(), prog, debugContext, op);
  std::vector<std::size_t> shape{numOffsets};
  const auto sl = slicedShape(t.shape(), dims, sizes);
  shape.insert(shape.end(), sl.begin(), sl.end());
  return out.reshape(shape);
}

void multiUpdate(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                 const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                 const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                 const SlicePlan &plan, const poplar::OptionFlags &options,
                 const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offsets, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::multiUpdate");
  const std::string op = "popops::multiUpdate";
  if (dims.size() > 1) {
    Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, false, prog, debugContext, op);
    poplar::Tensor sc = collapsedSlices(s, c, op, multiResultShape(t, offsets, dims, false));
    multiUpdate(graph, c.base, sc, c.offsets, {0}, {1}, prog, plan, options, debugContext);
    return;
  }
  if (!s.valid())
    throw poputil::poplibs_error(op + ": the slices tensor is not valid");
  MultiOperands m = checkMulti(t, s, offsets, dims, sizes, op);
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(op + ": " + describe(t) + " cannot be written");
  multiVertices(graph, m, MultiKind::Update, poplar::Tensor(), prog, debugContext, op);
}

void multiUpdateAdd(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                    const poplar::Tensor &offsets, const poplar::Tensor &scale,
                    const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                    poplar::program::Sequence &prog, const SlicePlan &plan,
                    const poplar::OptionFlags &options, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offsets, scale, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::multiUpdateAdd");
  const std::string op = "popops::multiUpdateAdd";
  if (dims.size() > 1) {
    Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, false, prog, debugContext, op);
    poplar::Tensor sc = collapsedSlices(s, c, op, multiResultShape(t, offsets, dims, false));
    multiUpdateAdd(graph, c.base, sc, c.offsets, scale, {0}, {1}, prog, plan, options, debugContext);
    return;
  }
  if (!s.valid())
    throw poputil::poplibs_error(op + ": the slices tensor is not valid");
  MultiOperands m = checkMulti(t, s, offsets, dims, sizes, op);
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(op + ": " + describe(t) + " cannot be written");
  if (!scale.valid() || scale.numElements() != 1)
    throw poputil::poplibs_error(op + ": the scale must be a single-element tensor");
  const bool scaleOk = scale.elementType() == t.elementType() ||
                       (t.elementType() == poplar::HALF && scale.elementType() == poplar::FLOAT);
  if (!scaleOk)
    throw poputil::poplibs_error(op + ": scale " + describe(scale) + " must have the type of " + describe(t) +
                                 " (or float for half)");
  multiVertices(graph, m, MultiKind::UpdateAdd, scale, prog, debugContext, op);
}

void multiUpdateMax(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                    const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                    const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                    const SlicePlan &plan, const poplar::OptionFlags &options,
                    const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offsets, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  (void)plan;
  parseSliceOptions(options, "popops::multiUpdateMax");
  const std::string op = "popops::multiUpdateMax";
  if (dims.size() > 1) {
    Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, false, prog, debugContext, op);
    poplar::Tensor sc = collapsedSlices(s, c, op, multiResultShape(t, offsets, dims, false));
    multiUpdateMax(graph, c.base, sc, c.offsets, {0}, {1}, prog, plan, options, debugContext);
    return;
  }
  if (!s.valid())
    throw poputil::poplibs_error(op + ": the slices tensor is not valid");
  MultiOperands m = checkMulti(t, s, offsets, dims, sizes, op);
  if (!t.isParallelWriteable())
    throw poputil::poplibs_error(op + ": " + describe(t) + " cannot be written");
  multiVertices(graph, m, MultiKind::UpdateMax, poplar::Tensor(), prog, debugContext, op);
}

// --- grouped forms: the group dimension folded into the row index ----------------------------------

poplar::Tensor groupedMultiSlice(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &offsets,
                                 const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                                 poplar::program::Sequence &prog, const SlicePlan &plan,
                                 const poplar::OptionFlags &options,
                                 const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, offsets, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::groupedMultiSlice";
  parseSliceOptions(options, op);
  Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, true, prog, debugContext, op);
  return multiSlice(graph, c.base, c.offsets, {0}, {1}, prog, plan, options, debugContext)
      .reshape(multiResultShape(t, offsets, dims, true));
}

void groupedMultiUpdate(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                        const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                        const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                        const SlicePlan &plan, const poplar::OptionFlags &options,
                        const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offsets, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::groupedMultiUpdate";
  parseSliceOptions(options, op);
  Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, true, prog, debugContext, op);
  poplar::Tensor sc = collapsedSlices(s, c, op, multiResultShape(t, offsets, dims, true));
  multiUpdate(graph, c.base, sc, c.offsets, {0}, {1}, prog, plan, options, debugContext);
}

void groupedMultiUpdateAdd(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                           const poplar::Tensor &offsets, const poplar::Tensor &scale,
                           const std::vector<std::size_t> &dims, const std::vector<std::size_t> &sizes,
                           poplar::program::Sequence &prog, const SlicePlan &plan,
                           const poplar::OptionFlags &options, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offsets, scale, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::groupedMultiUpdateAdd";
  parseSliceOptions(options, op);
  Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, true, prog, debugContext, op);
  poplar::Tensor sc = collapsedSlices(s, c, op, multiResultShape(t, offsets, dims, true));
  multiUpdateAdd(graph, c.base, sc, c.offsets, scale, {0}, {1}, prog, plan, options, debugContext);
}

void groupedMultiUpdateMax(poplar::Graph &graph, const poplar::Tensor &t, const poplar::Tensor &s,
                           const poplar::Tensor &offsets, const std::vector<std::size_t> &dims,
                           const std::vector<std::size_t> &sizes, poplar::program::Sequence &prog,
                           const SlicePlan &plan, const poplar::OptionFlags &options,
                           const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, s, offsets, dims, sizes, plan, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::groupedMultiUpdateMax";
  parseSliceOptions(options, op);
  Collapsed c = collapseMulti(graph, t, offsets, dims, sizes, true, prog, debugContext, op);
  poplar::Tensor sc = collapsedSlices(s, c, op, multiResultShape(t, offsets, dims, true));
  multiUpdateMax(graph, c.base, sc, c.offsets, {0}, {1}, prog, plan, options, debugContext);
}

namespace embedding {

SlicePlan plan(const poplar::Graph &graph, const poplar::Type &dataType, const std::size_t numEntries,
               const std::size_t outputSize, const std::vector<std::size_t> &numLookups,
               const poplar::OptionFlags &options) {
  return plan(graph, dataType, 1, numEntries, outputSize, numLookups, options);
}

SlicePlan plan(const poplar::Graph &graph, const poplar::Type &dataType, const std::size_t groupSize,
               const std::size_t numEntries, const std::size_t outputSize,
               const std::vector<std::size_t> &numLookups, const poplar::OptionFlags &options) {
  (void)graph;
  (void)dataType;
  if (groupSize == 0)
    throw poputil::poplibs_error("popops::embedding::plan: groupSize is 0; a grouped plan needs at least one "
                                 "group");
  std::unique_ptr<SlicePlanInternal> p(
      new SlicePlanInternal(parseSliceOptions(options, "popops::embedding::plan")));
  p->valid = true;
  p->groupSize = groupSize;
  p->numEntries = numEntries;
  p->outputSize = outputSize;
  p->numLookups = numLookups;
  return SlicePlan(std::move(p));
}

} // namespace embedding

} // namespace popops
