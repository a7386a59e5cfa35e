// Copyright (c) Aspen contributors.
// poplin::ConvParams: sizes after each transform, validation, comparison, printing, hashing.
#include "poplin/ConvParams.hpp"

#include "ConvInternal.hpp"

#include <poputil/exceptions.hpp>

#include <ostream>
#include <sstream>

namespace {

template <class T> std::vector<T> orDefault(const std::vector<T> &v, std::size_t n, T value) {
  return v.empty() ? std::vector<T>(n, value) : v;
}

template <class T> void hashCombine(std::size_t &seed, const T &v) {
  seed ^= std::hash<T>()(v) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

template <class T> void hashVector(std::size_t &seed, const std::vector<T> &v) {
  hashCombine(seed, v.size());
  for (const auto &x : v)
    hashCombine(seed, static_cast<std::size_t>(x));
}

template <class T> std::string list(const std::vector<T> &v) {
  std::ostringstream os;
  os << "{";
  for (std::size_t i = 0; i < v.size(); ++i)
    os << (i ? "," : "") << v[i];
  os << "}";
  return os.str();
}

std::size_t dilated(std::size_t n, unsigned d) {
  return n == 0 ? 0 : (n - 1) * d + 1;
}

} // namespace

namespace poplin {

ConvParams::InputTransform::InputTransform(const std::size_t size)
    : truncationLower(size, 0), truncationUpper(size, 0), dilation(size, 1), paddingLower(size, 0),
      paddingUpper(size, 0), flip(size, false) {}

ConvParams::InputTransform::InputTransform(std::vector<unsigned> truncationLower,
                                           std::vector<unsigned> truncationUpper,
                                           std::vector<unsigned> dilation, std::vector<unsigned> paddingLower,
                                           std::vector<unsigned> paddingUpper, std::vector<bool> flip)
    : truncationLower(std::move(truncationLower)), truncationUpper(std::move(truncationUpper)),
      dilation(std::move(dilation)), paddingLower(std::move(paddingLower)),
      paddingUpper(std::move(paddingUpper)), flip(std::move(flip)) {}

ConvParams::OutputTransform::OutputTransform(const std::size_t size)
    : truncationLower(size, 0), truncationUpper(size, 0), stride(size, 1), paddingLower(size, 0),
      paddingUpper(size, 0) {}

ConvParams::OutputTransform::OutputTransform(std::vector<unsigned> truncationLower,
                                             std::vector<unsigned> truncationUpper,
                                             std::vector<unsigned> striding,
                                             std::vector<unsigned> paddingLower,
                                             std::vector<unsigned> paddingUpper)
    : truncationLower(std::move(truncationLower)), truncationUpper(std::move(truncationUpper)),
      stride(std::move(striding)), paddingLower(std::move(paddingLower)),
      paddingUpper(std::move(paddingUpper)) {}

static auto tie(const ConvParams::InputTransform &t) {
  return std::tie(t.truncationLower, t.truncationUpper, t.dilation, t.paddingLower, t.paddingUpper, t.flip);
}
static auto tie(const ConvParams::OutputTransform &t) {
  return std::tie(t.truncationLower, t.truncationUpper, t.stride, t.paddingLower, t.paddingUpper);
}
static auto tie(const ConvParams &p) {
  return std::tie(p.inputType, p.outputType, p.batchSize, p.inputFieldShape, p.kernelShape,
                  p.inputChannelsPerConvGroup, p.outputChannelsPerConvGroup, p.numConvGroups,
                  p.inputTransform, p.kernelTransform, p.outputTransform);
}

bool operator<(const ConvParams::InputTransform &a, const ConvParams::InputTransform &b) {
  return tie(a) < tie(b);
}
bool operator==(const ConvParams::InputTransform &a, const ConvParams::InputTransform &b) {
  return tie(a) == tie(b);
}
bool operator!=(const ConvParams::InputTransform &a, const ConvParams::InputTransform &b) {
  return !(a == b);
}
bool operator<(const ConvParams::OutputTransform &a, const ConvParams::OutputTransform &b) {
  return tie(a) < tie(b);
}
bool operator==(const ConvParams::OutputTransform &a, const ConvParams::OutputTransform &b) {
  return tie(a) == tie(b);
}
bool operator!=(const ConvParams::OutputTransform &a, const ConvParams::OutputTransform &b) {
  return !(a == b);
}
bool operator<(const ConvParams &a, const ConvParams &b) {
  return tie(a) < tie(b);
}
bool operator==(const ConvParams &a, const ConvParams &b) {
  return tie(a) == tie(b);
}
bool operator!=(const ConvParams &a, const ConvParams &b) {
  return !(a == b);
}

ConvParams::ConvParams(poplar::Type dataType, std::size_t batchSize, std::vector<std::size_t> inputFieldShape,
                       std::vector<std::size_t> kernelShape, std::size_t inputChannels,
                       std::size_t outputChannels, std::size_t numConvGroups)
    : ConvParams(dataType, dataType, batchSize, std::move(inputFieldShape), std::move(kernelShape),
                 inputChannels, outputChannels, numConvGroups) {}

ConvParams::ConvParams(poplar::Type inputType, poplar::Type outputType, std::size_t batchSize,
                       std::vector<std::size_t> inputFieldShape, std::vector<std::size_t> kernelShape,
                       std::size_t inputChannels, std::size_t outputChannels, std::size_t numConvGroups)
    : inputType(inputType), outputType(outputType), batchSize(batchSize), inputFieldShape(inputFieldShape),
      kernelShape(std::move(kernelShape)), inputChannelsPerConvGroup(inputChannels),
      outputChannelsPerConvGroup(outputChannels), numConvGroups(numConvGroups),
      inputTransform(inputFieldShape.size()), kernelTransform(inputFieldShape.size()),
      outputTransform(inputFieldShape.size()) {}

ConvParams::ConvParams(poplar::Type inputType, poplar::Type outputType, std::size_t batchSize,
                       std::vector<std::size_t> inputFieldShape, std::vector<std::size_t> kernelShape,
                       std::size_t inputChannels, std::size_t outputChannels, std::size_t numConvGroups,
                       InputTransform inputTransform, InputTransform kernelTransform,
                       OutputTransform outputTransform)
    : inputType(inputType), outputType(outputType), batchSize(batchSize),
      inputFieldShape(std::move(inputFieldShape)), kernelShape(std::move(kernelShape)),
      inputChannelsPerConvGroup(inputChannels), outputChannelsPerConvGroup(outputChannels),
      numConvGroups(numConvGroups), inputTransform(std::move(inputTransform)),
      kernelTransform(std::move(kernelTransform)), outputTransform(std::move(outputTransform)) {}

unsigned ConvParams::getTruncatedInputSize(unsigned dim) const {
  const ConvParams p = aspen::conv::filled(*this);
  const std::size_t cut = p.inputTransform.truncationLower[dim] + p.inputTransform.truncationUpper[dim];
  return static_cast<unsigned>(cut >= p.inputFieldShape[dim] ? 0 : p.inputFieldShape[dim] - cut);
}

unsigned ConvParams::getTruncatedKernelSize(unsigned dim) const {
  const ConvParams p = aspen::conv::filled(*this);
  const std::size_t cut = p.kernelTransform.truncationLower[dim] + p.kernelTransform.truncationUpper[dim];
  return static_cast<unsigned>(cut >= p.kernelShape[dim] ? 0 : p.kernelShape[dim] - cut);
}

unsigned ConvParams::getTransformedInputSize(unsigned dim) const {
  const ConvParams p = aspen::conv::filled(*this);
  return static_cast<unsigned>(dilated(getTruncatedInputSize(dim), p.inputTransform.dilation[dim]) +
                               p.inputTransform.paddingLower[dim] + p.inputTransform.paddingUpper[dim]);
}

unsigned ConvParams::getTransformedKernelSize(unsigned dim) const {
  const ConvParams p = aspen::conv::filled(*this);
  return static_cast<unsigned>(dilated(getTruncatedKernelSize(dim), p.kernelTransform.dilation[dim]) +
                               p.kernelTransform.paddingLower[dim] + p.kernelTransform.paddingUpper[dim]);
}

std::size_t ConvParams::getUntransformedOutputSize(unsigned dim) const {
  const std::size_t in = getTransformedInputSize(dim), k = getTransformedKernelSize(dim);
  return in >= k ? in - k + 1 : 0;
}

std::size_t ConvParams::getOutputSize(unsigned dim) const {
  const ConvParams p = aspen::conv::filled(*this);
  const auto &t = p.outputTransform;
  const std::size_t u = getUntransformedOutputSize(dim);
  const std::size_t cut = t.truncationLower[dim] + t.truncationUpper[dim];
  const std::size_t truncated = cut >= u ? 0 : u - cut;
  const std::size_t strided = t.stride[dim] == 0 ? 0 : (truncated + t.stride[dim] - 1) / t.stride[dim];
  return strided + t.paddingLower[dim] + t.paddingUpper[dim];
}

std::vector<std::size_t> ConvParams::getOutputFieldShape() const {
  std::vector<std::size_t> s;
  for (unsigned d = 0; d < getNumFieldDims(); ++d)
    s.push_back(getOutputSize(d));
  return s;
}

void ConvParams::validate() const {
  aspen::conv::validateParams(*this, "poplin::ConvParams::validate");
}

ConvParams ConvParams::canonicalize() const {
  return aspen::conv::filled(*this);
}

std::ostream &operator<<(std::ostream &os, const ConvParams &p) {
  os << "Params: inputType                  " << p.inputType << "\n"
     << "        outputType                 " << p.outputType << "\n"
     << "        batchSize                  " << p.batchSize << "\n"
     << "        numConvGroups              " << p.numConvGroups << "\n"
     << "        inputFieldShape            " << list(p.inputFieldShape) << "\n"
     << "        kernelShape                " << list(p.kernelShape) << "\n"
     << "        inputChannelsPerConvGroup  " << p.inputChannelsPerConvGroup << "\n"
     << "        outputChannelsPerConvGroup " << p.outputChannelsPerConvGroup << "\n"
     << "        inputTruncationLower       " << list(p.inputTransform.truncationLower) << "\n"
     << "        inputTruncationUpper       " << list(p.inputTransform.truncationUpper) << "\n"
     << "        inputDilation              " << list(p.inputTransform.dilation) << "\n"
     << "        inputPaddingLower          " << list(p.inputTransform.paddingLower) << "\n"
     << "        inputPaddingUpper          " << list(p.inputTransform.paddingUpper) << "\n"
     << "        flipInput                  " << list(p.inputTransform.flip) << "\n"
     << "        kernelTruncationLower      " << list(p.kernelTransform.truncationLower) << "\n"
     << "        kernelTruncationUpper      " << list(p.kernelTransform.truncationUpper) << "\n"
     << "        kernelDilation             " << list(p.kernelTransform.dilation) << "\n"
     << "        kernelPaddingLower         " << list(p.kernelTransform.paddingLower) << "\n"
     << "        kernelPaddingUpper         " << list(p.kernelTransform.paddingUpper) << "\n"
     << "        flipKernel                 " << list(p.kernelTransform.flip) << "\n"
     << "        outputTruncationLower      " << list(p.outputTransform.truncationLower) << "\n"
     << "        outputTruncationUpper      " << list(p.outputTransform.truncationUpper) << "\n"
     << "        stride                     " << list(p.outputTransform.stride) << "\n"
     << "        outputPaddingLower         " << list(p.outputTransform.paddingLower) << "\n"
     << "        outputPaddingUpper         " << list(p.outputTransform.paddingUpper) << "\n";
  return os;
}

std::size_t hash_value(const ConvParams::InputTransform &it) {
  std::size_t seed = 0;
  hashVector(seed, it.truncationLower);
  hashVector(seed, it.truncationUpper);
  hashVector(seed, it.dilation);
  hashVector(seed, it.paddingLower);
  hashVector(seed, it.paddingUpper);
  hashVector(seed, it.flip);
  return seed;
}

std::size_t hash_value(const ConvParams::OutputTransform &ot) {
  std::size_t seed = 0;
  hashVector(seed, ot.truncationLower);
  hashVector(seed, ot.truncationUpper);
  hashVector(seed, ot.stride);
  hashVector(seed, ot.paddingLower);
  hashVector(seed, ot.paddingUpper);
  return seed;
}

} // namespace poplin

namespace aspen::conv {

poplin::ConvParams filled(const poplin::ConvParams &p) {
  poplin::ConvParams f = p;
  const std::size_t n = p.inputFieldShape.size();
  auto fillIn = [n](poplin::ConvParams::InputTransform &t) {
    t.truncationLower = orDefault(t.truncationLower, n, 0u);
    t.truncationUpper = orDefault(t.truncationUpper, n, 0u);
    t.dilation = orDefault(t.dilation, n, 1u);
    t.paddingLower = orDefault(t.paddingLower, n, 0u);
    t.paddingUpper = orDefault(t.paddingUpper, n, 0u);
    t.flip = orDefault(t.flip, n, false);
  };
  fillIn(f.inputTransform);
  fillIn(f.kernelTransform);
  auto &o = f.outputTransform;
  o.truncationLower = orDefault(o.truncationLower, n, 0u);
  o.truncationUpper = orDefault(o.truncationUpper, n, 0u);
  o.stride = orDefault(o.stride, n, 1u);
  o.paddingLower = orDefault(o.paddingLower, n, 0u);
  o.paddingUpper = orDefault(o.paddingUpper, n, 0u);
  return f;
}

void validateParams(const poplin::ConvParams &params, const std::string &op) {
  auto fail = [&op](const std::string &what) { throw poputil::poplibs_error(op + ": " + what); };
  const std::size_t n = params.inputFieldShape.size();
  if (params.kernelShape.size() != n)
    fail("kernelShape " + list(params.kernelShape) +
         " must have one entry per dimension of inputFieldShape " + list(params.inputFieldShape));
  if (params.inputType != poplar::FLOAT && params.inputType != poplar::HALF)
    fail("inputType " + params.inputType.toString().str() + " is not supported (float or half)");
  if (params.outputType != poplar::FLOAT && params.outputType != poplar::HALF)
    fail("outputType " + params.outputType.toString().str() + " is not supported (float or half)");
  if (params.batchSize == 0)
    fail("batchSize must be at least 1");
  if (params.numConvGroups == 0)
    fail("numConvGroups must be at least 1");
  if (params.inputChannelsPerConvGroup == 0)
    fail("inputChannelsPerConvGroup must be at least 1");
  if (params.outputChannelsPerConvGroup == 0)
    fail("outputChannelsPerConvGroup must be at least 1");
  auto sized = [&](const auto &v, const std::string &name) {
    if (!v.empty() && v.size() != n)
      fail(name + " " + list(v) + " must have " + std::to_string(n) + " entries (one per field dimension)");
  };
  const std::pair<const poplin::ConvParams::InputTransform *, std::string> ins[] = {
      {&params.inputTransform, "inputTransform"}, {&params.kernelTransform, "kernelTransform"}};
  for (const auto &[t, name] : ins) {
    sized(t->truncationLower, name + ".truncationLower");
    sized(t->truncationUpper, name + ".truncationUpper");
    sized(t->dilation, name + ".dilation");
    sized(t->paddingLower, name + ".paddingLower");
    sized(t->paddingUpper, name + ".paddingUpper");
    sized(t->flip, name + ".flip");
    for (unsigned d : t->dilation)
      if (d == 0)
        fail(name + ".dilation " + list(t->dilation) + " must be at least 1");
  }
  const auto &o = params.outputTransform;
  sized(o.truncationLower, "outputTransform.truncationLower");
  sized(o.truncationUpper, "outputTransform.truncationUpper");
  sized(o.stride, "outputTransform.stride");
  sized(o.paddingLower, "outputTransform.paddingLower");
  sized(o.paddingUpper, "outputTransform.paddingUpper");
  for (unsigned s : o.stride)
    if (s == 0)
      fail("outputTransform.stride " + list(o.stride) + " must be at least 1");
  const poplin::ConvParams f = filled(params);
  for (unsigned d = 0; d < n; ++d) {
    if (f.inputTransform.truncationLower[d] + f.inputTransform.truncationUpper[d] > f.inputFieldShape[d])
      fail("the input truncation of dimension " + std::to_string(d) + " exceeds the field size " +
           std::to_string(f.inputFieldShape[d]));
    if (f.kernelTransform.truncationLower[d] + f.kernelTransform.truncationUpper[d] > f.kernelShape[d])
      fail("the kernel truncation of dimension " + std::to_string(d) + " exceeds the kernel size " +
           std::to_string(f.kernelShape[d]));
    if (f.getTransformedKernelSize(d) == 0)
      fail("the kernel of dimension " + std::to_string(d) + " is empty (kernelShape " + list(f.kernelShape) +
           ")");
    if (f.getTransformedKernelSize(d) > f.getTransformedInputSize(d))
      fail("the transformed kernel (" + std::to_string(f.getTransformedKernelSize(d)) +
           ") is larger than the transformed input (" + std::to_string(f.getTransformedInputSize(d)) +
           ") in dimension " + std::to_string(d));
    const std::size_t u = f.getUntransformedOutputSize(d);
    if (f.outputTransform.truncationLower[d] + f.outputTransform.truncationUpper[d] > u)
      fail("the output truncation of dimension " + std::to_string(d) + " exceeds the output size " +
           std::to_string(u));
  }
}

} // namespace aspen::conv

std::size_t std::hash<poplin::ConvParams::InputTransform>::operator()(
    const poplin::ConvParams::InputTransform &it) const {
  return poplin::hash_value(it);
}

std::size_t std::hash<poplin::ConvParams::OutputTransform>::operator()(
    const poplin::ConvParams::OutputTransform &ot) const {
  return poplin::hash_value(ot);
}

std::size_t std::hash<poplin::ConvParams>::operator()(const poplin::ConvParams &p) const {
  std::size_t seed = 0;
  hashCombine(seed, p.inputType.toString().str());
  hashCombine(seed, p.outputType.toString().str());
  hashCombine(seed, p.batchSize);
  hashVector(seed, p.inputFieldShape);
  hashVector(seed, p.kernelShape);
  hashCombine(seed, p.inputChannelsPerConvGroup);
  hashCombine(seed, p.outputChannelsPerConvGroup);
  hashCombine(seed, p.numConvGroups);
  hashCombine(seed, poplin::hash_value(p.inputTransform));
  hashCombine(seed, poplin::hash_value(p.kernelTransform));
  hashCombine(seed, poplin::hash_value(p.outputTransform));
  return seed;
}
