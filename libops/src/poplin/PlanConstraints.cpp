// Copyright (c) Aspen contributors.
#include "PlanConstraints.hpp"

#include <poplar/exceptions.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <limits>

namespace poplin::planning {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string &op, const std::string &path, const std::string &what) {
  throw poplar::invalid_option(
      op + ": option 'planConstraints': " + (path.empty() ? "" : "'" + path + "': ") + what);
}

bool isIndex(const std::string &s) {
  return !s.empty() && s.size() < 10 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); });
}

// An unsigned value: a JSON number, or a string of digits (PopLibs reads the option into a Boost
// property tree, where every value is text).
unsigned unsignedValue(const json &v, const std::string &op, const std::string &path) {
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= std::numeric_limits<unsigned>::max())
    return v.get<unsigned>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0 &&
      v.get<std::int64_t>() <= std::numeric_limits<unsigned>::max())
    return unsigned(v.get<std::int64_t>());
  if (v.is_string() && isIndex(v.get<std::string>()))
    return unsigned(std::stoul(v.get<std::string>()));
  fail(op, path, "not a valid unsigned integer (" + v.dump() + ")");
}

bool boolValue(const json &v, const std::string &op, const std::string &path) {
  if (v.is_boolean())
    return v.get<bool>();
  if (v.is_string() && (v.get<std::string>() == "true" || v.get<std::string>() == "false"))
    return v.get<std::string>() == "true";
  fail(op, path, "not a boolean value (" + v.dump() + ")");
}

const json &object(const json &v, const std::string &op, const std::string &path) {
  if (!v.is_object())
    fail(op, path, "must be an object");
  return v;
}

void unsignedArray(const json &v, const std::string &op, const std::string &path) {
  // An empty array as a Boost property tree writes it (PopLibs' planConstraintsOutputFilename
  // files): an empty string.
  if (v.is_string() && v.get<std::string>().empty())
    return;
  if (!v.is_array())
    fail(op, path, "must be an array");
  for (const json &e : v)
    (void)unsignedValue(e, op, path);
}

SplitConstraint split(const json &v, const std::string &op, const std::string &path) {
  return {unsignedValue(v, op, path), path};
}

void parseMethod(const json &v, const std::string &op, ConvPlanConstraints &c) {
  for (const auto &[key, value] : object(v, op, "method").items()) {
    const std::string path = "method." + key;
    if (key == "type") {
      static const char *const kTypes[] = {"AMP", "SLIC", "HMAC", "VMAC", "OUTER_PRODUCT"};
      const std::string type = value.is_string() ? value.get<std::string>() : std::string();
      if (std::none_of(std::begin(kTypes), std::end(kTypes), [&type](const char *t) { return type == t; }))
        fail(op, path,
             "not a valid method type (" + value.dump() + "; AMP, SLIC, HMAC, VMAC or OUTER_PRODUCT)");
    } else if (key == "useLimitedVersion") {
      (void)boolValue(value, op, path);
    } else if (key == "convUnits" || key == "convUnitChainsRequired" || key == "windowWidth") {
      (void)unsignedValue(value, op, path);
    } // PopLibs ignores other keys of the method
    c.ignored.push_back(path);
  }
}

void parseTransform(const json &v, const std::string &path, bool tileLevel, const std::string &op,
                    ConvPlanConstraints &c) {
  for (const auto &[key, value] : object(v, op, path).items()) {
    const std::string sub = path + "." + key;
    if (key == "swapOperands") {
      const bool swap = boolValue(value, op, sub);
      if (tileLevel) {
        c.ignored.push_back(sub);
      } else {
        c.swapOperands = swap;
        c.swapOperandsKey = sub;
      }
    } else if (key == "expandDims" || key == "outChanFlattenDims" || key == "combineConvGroupsFactor") {
      unsignedArray(value, op, sub);
      c.ignored.push_back(sub);
    } else {
      fail(op, sub, key + " is not currently handled or does not exist");
    }
  }
}

void parsePartition(const json &v, const std::string &path, bool tileLevel, const std::string &op,
                    ConvPlanConstraints &c) {
  ConvPlanConstraints scratch; // the tile level has no partition: validated, then ignored
  ConvPlanConstraints &into = tileLevel ? scratch : c;
  for (const auto &[key, value] : object(v, op, path).items()) {
    const std::string sub = path + "." + key;
    if (key == "convGroupSplit") {
      into.convGroupSplit = split(value, op, sub);
    } else if (key == "batchSplit") {
      into.batchSplit = split(value, op, sub);
    } else if (key == "fieldSplit" || key == "kernelSplit") {
      auto &dims = key == "fieldSplit" ? into.fieldSplit : into.kernelSplit;
      for (const auto &[index, s] : object(value, op, sub).items()) {
        if (!isIndex(index))
          fail(op, sub + "." + index, "index not a non-negative integer");
        dims[unsigned(std::stoul(index))] = split(s, op, sub + "." + index);
      }
    } else if (key == "inChanSplit" || key == "outChanSplit") {
      for (const auto &[kind, s] : object(value, op, sub).items()) {
        const std::string at = sub + "." + kind;
        const bool in = key == "inChanSplit";
        if (kind == "parallel")
          (in ? into.inChanParallel : into.outChanParallel) = split(s, op, at);
        else if (kind == "serial")
          (in ? into.inChanSerial : into.outChanSerial) = split(s, op, at);
        else
          fail(op, at, kind + " is not either 'parallel' or 'serial'");
      }
    } else {
      fail(op, sub, key + " is not currently handled or does not exist");
    }
    if (tileLevel)
      c.ignored.push_back(sub);
  }
}

/// The product of the splits of several keys, and their names joined.
SplitConstraint combine(const std::vector<SplitConstraint> &parts) {
  SplitConstraint out;
  for (const SplitConstraint &s : parts) {
    if (!s.set())
      continue;
    out.value *= s.value;
    out.key += (out.key.empty() ? "" : " x ") + s.key;
  }
  return out;
}

void requireWithin(const SplitConstraint &s, std::size_t size, const std::string &what,
                   const std::string &op) {
  if (!s.set())
    return;
  if (s.value == 0)
    fail(op, s.key, "a split of 0 cannot be met (splits are at least 1)");
  if (s.value > std::max<std::size_t>(size, 1))
    fail(op, s.key,
         "a split of " + std::to_string(s.value) + " cannot be met: " + what + " has " +
             std::to_string(size) + (size == 1 ? " element" : " elements"));
}

void requireOne(const SplitConstraint &s, const std::string &why, const std::string &op) {
  if (s.set() && s.value != 1)
    fail(op, s.key, "a split of " + std::to_string(s.value) + " cannot be met: " + why);
}

} // namespace

ConvPlanConstraints parsePlanConstraints(const std::string &text, const std::string &op) {
  ConvPlanConstraints c;
  if (text.empty())
    return c;
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error &e) {
    fail(op, "", std::string("not valid JSON: ") + e.what());
  }
  if (!root.is_object())
    fail(op, "", "plan constraints must be an object");
  for (const auto &[key, value] : root.items()) {
    if (key == "method") {
      parseMethod(value, op, c);
    } else if (key == "convGroupsPerGroup" || key == "inChansPerGroup" || key == "partialChansPerGroup") {
      (void)unsignedValue(value, op, key);
      c.ignored.push_back(key);
    } else {
      if (!isIndex(key))
        fail(op, key,
             "index not a non-negative integer (a level of the plan's hierarchy, or method, "
             "convGroupsPerGroup, inChansPerGroup, partialChansPerGroup)");
      const unsigned level = unsigned(std::stoul(key));
      // PopLibs' hierarchy has two levels: 0, the partition over tiles; 1, the tile.
      if (level > 1)
        fail(op, key, "not a valid level of the plan's hierarchy (0 or 1)");
      for (const auto &[part, v] : object(value, op, key).items()) {
        const std::string path = key + "." + part;
        if (part == "transform")
          parseTransform(v, path, level == 1, op, c);
        else if (part == "partition")
          parsePartition(v, path, level == 1, op, c);
        else
          fail(op, path,
               part + " is not a valid sub-domain of the plan: must be either 'transform' or 'partition'");
      }
    }
  }
  return c;
}

MatMulConstraints matMulConstraints(const ConvPlanConstraints &c, const std::string &text,
                                    const std::string &op) {
  MatMulConstraints m;
  m.text = text;
  m.op = op;
  m.ignored = c.ignored;
  m.groupSplit = c.convGroupSplit;
  m.depthSplit = c.inChanParallel;
  m.serialInner = c.inChanSerial;
  if (c.swapOperands) { // the transposed product: batch n, output channels m
    m.rowSplit = c.outChanParallel;
    m.colSplit = c.batchSplit;
    m.serialRows = c.outChanSerial;
  } else {
    m.rowSplit = c.batchSplit;
    m.colSplit = c.outChanParallel;
    m.serialCols = c.outChanSerial;
  }
  for (const auto &[d, s] : c.fieldSplit) {
    if (d != 0)
      fail(op, s.key, "a matrix product has one field dimension (index 0)");
    requireOne(s, "a matrix product's field has one element", op);
  }
  for (const auto &[d, s] : c.kernelSplit) {
    if (d != 0)
      fail(op, s.key, "a matrix product has one kernel dimension (index 0)");
    requireOne(s, "a matrix product's kernel has one element", op);
  }
  return m;
}

std::string convToMatMulConstraints(const ConvPlanConstraints &given, const ConvSizes &sizes,
                                    ConvProduct which, const std::string &op) {
  const bool forward = which == ConvProduct::Forward;
  // swapOperands: the partition names PopLibs' swapped convolution, whose batch is the output
  // channels, whose output channels are the batch and whose kernel is the input field (the output
  // field and input channels stay). Aspen's product is the same either way (its planner treats rows
  // and columns alike); the splits are taken in the unswapped convolution's terms, keeping the
  // keys' names. Serial passes over the swapped output channels (the batch) are passes over the
  // forward product's columns.
  ConvPlanConstraints c = given;
  SplitConstraint batchSerial;
  if (given.swapOperands) {
    std::swap(c.batchSplit, c.outChanParallel);
    batchSerial = given.outChanSerial;
    c.outChanSerial = SplitConstraint{};
    requireWithin(batchSerial, sizes.batch, "the batch (the output channels of the swapped convolution)", op);
    if (!forward && batchSerial.set() && batchSerial.value > 1)
      fail(op, batchSerial.key,
           "a serial split of " + std::to_string(batchSerial.value) +
               " cannot be met in the weight-update pass with swapOperands (the batch is its inner "
               "dimension)");
  }
  const std::vector<std::size_t> &kernelDims = given.swapOperands ? sizes.inField : sizes.kernel;
  requireWithin(c.convGroupSplit, sizes.groups, "the convolution groups", op);
  requireWithin(c.batchSplit, sizes.batch, "the batch", op);
  requireWithin(c.inChanParallel, sizes.inChans, "the input channels", op);
  requireWithin(c.outChanParallel, sizes.outChans, "the output channels", op);
  requireWithin(c.inChanSerial, sizes.inChans, "the input channels", op);
  requireWithin(c.outChanSerial, sizes.outChans, "the output channels", op);
  const bool inSerial = c.inChanSerial.set() && c.inChanSerial.value > 1;
  const SplitConstraint &otherSerial = given.swapOperands ? batchSerial : c.outChanSerial;
  const bool outSerial = otherSerial.set() && otherSerial.value > 1;
  if (inSerial && outSerial)
    fail(op, c.inChanSerial.key + ", " + otherSerial.key,
         "serial splits of " + std::to_string(c.inChanSerial.value) + " and " +
             std::to_string(otherSerial.value) +
             " cannot both be met: a plan splits serially over one dimension at a time (as PopLibs')");
  std::vector<SplitConstraint> field{c.batchSplit}, kernel{c.inChanParallel};
  std::size_t kernelElements = 1;
  for (std::size_t k : sizes.kernel)
    kernelElements *= k;
  for (const auto &[d, s] : c.fieldSplit) {
    if (d >= sizes.outField.size())
      fail(op, s.key, "the convolution has " + std::to_string(sizes.outField.size()) + " field dimensions");
    requireWithin(s, sizes.outField[d], "output field dimension " + std::to_string(d), op);
    field.push_back(s);
  }
  const std::string kernelWhat = given.swapOperands ? "input field dimension " : "kernel dimension ";
  for (const auto &[d, s] : c.kernelSplit) {
    if (d >= kernelDims.size())
      fail(op, s.key, "the convolution has " + std::to_string(kernelDims.size()) + " kernel dimensions");
    requireWithin(s, kernelDims[d], kernelWhat + std::to_string(d), op);
    kernel.push_back(s);
  }
  const SplitConstraint columns = combine(field), inner = combine(kernel);
  if (given.swapOperands) // the swapped kernel is the input field: its pieces must fit kernel x channels
    requireWithin(inner, kernelElements * sizes.inChans, "the kernel positions x input channels", op);
  const SplitConstraint tiles = combine({c.convGroupSplit, c.outChanParallel, columns, inner});
  if (sizes.numTiles != 0 && tiles.value > sizes.numTiles)
    fail(op, tiles.key,
         "the parallel splits asked for use " + std::to_string(tiles.value) + " tiles; the target has " +
             std::to_string(sizes.numTiles));
  // A serial pass over the output channels takes its share of them; one over the input channels
  // its share of the kernel positions x input channels (rows of Aspen's product, in that order).
  auto fitsPasses = [&op](const SplitConstraint &parallel, const SplitConstraint &serial, std::size_t size,
                          const char *what) {
    if (!parallel.set() || !serial.set() || serial.value == 0)
      return;
    const std::size_t width = (size + serial.value - 1) / serial.value;
    if (parallel.value > width)
      fail(op, parallel.key + ", " + serial.key,
           "a parallel split of " + std::to_string(parallel.value) + " cannot be met in " +
               std::to_string(serial.value) + " serial passes over " + std::to_string(size) + " " + what);
  };
  fitsPasses(c.outChanParallel, c.outChanSerial, sizes.outChans, "output channels");
  fitsPasses(inner, c.inChanSerial, kernelElements * sizes.inChans, "kernel positions x input channels");
  std::size_t fieldElements = sizes.batch;
  for (std::size_t f : sizes.outField)
    fieldElements *= f;
  fitsPasses(columns, batchSerial, fieldElements, "batch x output field");
  // Forward: rows output channels, inner kernel x input channels, columns batch x field.
  // Weight update: rows output channels, inner batch x field, columns kernel x input channels.
  // The product is written as PopLibs' transposed matMul (swapOperands: batchSplit the columns,
  // outChanSplit the rows and their serial passes), except for serial passes over the columns
  // (the weight update's input channels), which only the untransposed form names.
  const SplitConstraint &depth = forward ? inner : columns;
  const SplitConstraint &cols = forward ? columns : inner;
  const bool serialColumns = forward ? outSerial && given.swapOperands : inSerial;
  const unsigned columnPasses = forward ? batchSerial.value : c.inChanSerial.value;
  json partition = json::object();
  if (c.convGroupSplit.set())
    partition["convGroupSplit"] = c.convGroupSplit.value;
  const char *rowKey = serialColumns ? "batchSplit" : "outChanSplit";
  if (c.outChanParallel.set()) {
    if (serialColumns)
      partition[rowKey] = c.outChanParallel.value;
    else
      partition[rowKey]["parallel"] = c.outChanParallel.value;
  }
  if (c.outChanSerial.set() && !serialColumns)
    partition["outChanSplit"]["serial"] = c.outChanSerial.value;
  if (cols.set()) {
    if (serialColumns)
      partition["outChanSplit"]["parallel"] = cols.value;
    else
      partition["batchSplit"] = cols.value;
  }
  if (serialColumns)
    partition["outChanSplit"]["serial"] = columnPasses;
  if (depth.set())
    partition["inChanSplit"]["parallel"] = depth.value;
  if (forward && c.inChanSerial.set())
    partition["inChanSplit"]["serial"] = c.inChanSerial.value;
  if (partition.empty())
    return "";
  json level = {{"partition", partition}};
  if (!serialColumns)
    level["transform"] = {{"swapOperands", true}};
  return json{{"0", level}}.dump();
}

namespace {

/// Factors f[i] <= max(dims[i], 1) of `value` with f[0] * f[1] * ... == value, or false.
bool factorOver(unsigned value, const std::vector<std::size_t> &dims, std::size_t at,
                std::vector<unsigned> &f) {
  if (at == dims.size())
    return value == 1;
  const std::size_t limit = std::max<std::size_t>(dims[at], 1);
  for (unsigned d = unsigned(std::min<std::size_t>(value, limit)); d >= 1; --d) {
    if (value % d != 0)
      continue;
    f[at] = d;
    if (factorOver(value / d, dims, at + 1, f))
      return true;
  }
  return false;
}

/// The factors of the largest split not above `value` that factors over `dims` (1 always does).
std::vector<unsigned> factorsOf(unsigned value, const std::vector<std::size_t> &dims, bool &exact) {
  std::vector<unsigned> f(dims.size(), 1);
  for (unsigned v = std::max(1u, value); v >= 1; --v)
    if (factorOver(v, dims, 0, f)) {
      exact = exact && v == value;
      return f;
    }
  exact = false;
  return std::vector<unsigned>(dims.size(), 1);
}

} // namespace

std::string convConstraintsOfPlan(const ProductSplits &s, const ConvSizes &sizes, ConvProduct which,
                                  bool *exactOut) {
  bool exact = true;
  const bool forward = which == ConvProduct::Forward;
  // The dimensions the product's columns (forward) or inner dimension (weight update) flatten:
  // batch, then the output field; and the other one: input channels, then the kernel.
  std::vector<std::size_t> field{sizes.batch}, kernel{sizes.inChans};
  field.insert(field.end(), sizes.outField.begin(), sizes.outField.end());
  kernel.insert(kernel.end(), sizes.kernel.begin(), sizes.kernel.end());
  const std::vector<unsigned> fieldF = factorsOf(forward ? s.cols : s.depth, field, exact);
  const std::vector<unsigned> kernelF = factorsOf(forward ? s.depth : s.cols, kernel, exact);
  // Serial passes PopLibs' keys name: over the output channels (rows); over the input channels
  // (forward: the inner dimension; weight update: the columns), at most one pass a channel.
  const unsigned inSerialPasses = forward ? s.serialInner : s.serialCols;
  const unsigned inSerial =
      unsigned(std::min<std::size_t>(inSerialPasses, std::max<std::size_t>(sizes.inChans, 1)));
  if (inSerial != inSerialPasses || (forward ? s.serialCols : s.serialInner) != 1)
    exact = false;
  json partition = json::object();
  partition["convGroupSplit"] = s.groups;
  partition["batchSplit"] = fieldF[0];
  partition["fieldSplit"] = json::object();
  for (std::size_t d = 1; d < fieldF.size(); ++d)
    partition["fieldSplit"][std::to_string(d - 1)] = fieldF[d];
  partition["kernelSplit"] = json::object();
  for (std::size_t d = 1; d < kernelF.size(); ++d)
    partition["kernelSplit"][std::to_string(d - 1)] = kernelF[d];
  partition["outChanSplit"] = {{"parallel", s.rows}, {"serial", s.serialRows}};
  partition["inChanSplit"] = {{"parallel", kernelF[0]}, {"serial", inSerial}};
  const json transform = {{"swapOperands", false},
                          {"expandDims", json::array()},
                          {"outChanFlattenDims", json::array()},
                          {"combineConvGroupsFactor", json::array({1})}};
  if (exactOut)
    *exactOut = exact;
  return json{{"0", {{"transform", transform}, {"partition", partition}}}}.dump(2) + "\n";
}

} // namespace poplin::planning
