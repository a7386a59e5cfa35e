// Copyright (c) Aspen contributors.
// program::* constructors: each records one ProgramNode (see ir/ProgramNode.hpp)
// and checks what can be checked without the graph (predicate sizes, copy
// types and sizes, stream directions).
#include "poplar/Program.hpp"

#include "ir/DebugRecord.hpp"
#include "ir/ProgramNode.hpp"
#include "ir/TensorView.hpp"
#include "poplar/exceptions.hpp"

#include <algorithm>
#include <string>

namespace poplar {
namespace program {

using aspen::ir::ProgramKind;
using aspen::ir::ProgramNode;

namespace {

std::shared_ptr<ProgramNode> makeNode(ProgramKind kind, const DebugContext &dc) {
  auto node = std::make_shared<ProgramNode>();
  node->kind = kind;
  node->debugName = dc.getPathName();
  node->debugId = dc.getId();
  node->debugInfo = aspen::ir::findDebugRecord(node->debugId);
  return node;
}

/// The node of `p`, or a new empty Sequence for an empty program, so that
/// recorded trees never hold null children.
std::shared_ptr<ProgramNode> nodeOf(const Program &p) {
  if (p.getImpl())
    return p.getImpl();
  return std::make_shared<ProgramNode>();
}

std::string shapeOf(const Tensor &t) {
  std::string s = "{";
  const auto shape = t.shape();
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "}";
}

void requireValid(const Tensor &t, const char *program, const char *role) {
  if (!t.valid())
    throw control_program_error(std::string(program) + ": the " + role + " tensor is not valid");
}

/// Predicates and switch controls are read as one scalar.
void requireScalar(const Tensor &t, const char *program, const char *role) {
  requireValid(t, program, role);
  if (t.numElements() != 1)
    throw control_program_error(std::string(program) + ": the " + role + " " + t.shortString() +
                                " must have exactly one element, not " + std::to_string(t.numElements()));
}

void requireSameType(const Tensor &a, const Tensor &b, const char *program) {
  if (a.elementType() != b.elementType())
    throw type_error(std::string(program) + ": source " + a.shortString() + " and destination " +
                     b.shortString() + " have different element types");
}

void requireStreamCopy(const DataStream &stream, const Tensor &t, bool toDevice) {
  const char *what = toDevice ? "Copy from stream" : "Copy to stream";
  if (!stream.valid())
    throw control_program_error(std::string(what) + ": the stream is not valid");
  requireValid(t, what, toDevice ? "destination" : "source");
  const bool streamToDevice = stream.direction() == DataStream::Direction::HostToDevice;
  if (streamToDevice != toDevice)
    throw control_program_error(std::string(what) + ": stream '" + stream.handle() + "' is a " +
                                (streamToDevice ? "host-to-device" : "device-to-host") + " stream");
  if (stream.elementType() != t.elementType())
    throw type_error(std::string(what) + ": stream '" + stream.handle() + "' carries " +
                     stream.elementType().toString().str() + " but tensor " + t.shortString() + " is " +
                     t.elementType().toString().str());
  if (stream.numElements() != t.numElements())
    throw control_program_error(std::string(what) + ": stream '" + stream.handle() + "' carries " +
                                std::to_string(stream.numElements()) + " elements but tensor " +
                                t.shortString() + " has " + std::to_string(t.numElements()));
}

void requireRemoteCopy(const RemoteBuffer &buffer, const Tensor &t, const Tensor *offset, bool toDevice) {
  const char *what = toDevice ? "Copy from remote buffer" : "Copy to remote buffer";
  if (!buffer.valid())
    throw control_program_error(std::string(what) + ": the remote buffer is not valid");
  requireValid(t, what, toDevice ? "destination" : "source");
  if (buffer.elementType() != t.elementType())
    throw type_error(std::string(what) + ": remote buffer '" + buffer.handle() + "' holds " +
                     buffer.elementType().toString().str() + " but tensor " + t.shortString() + " is " +
                     t.elementType().toString().str());
  std::size_t rows = 1;
  if (offset) {
    requireValid(*offset, what, "offset");
    if (!offset->elementType().isIntegral())
      throw type_error(std::string(what) + ": the offset " + offset->shortString() +
                       " must hold integer row indices");
    rows = offset->numElements();
  }
  if (t.numElements() != rows * buffer.numElements())
    throw control_program_error(std::string(what) + ": tensor " + t.shortString() + " has " +
                                std::to_string(t.numElements()) + " elements but " + std::to_string(rows) +
                                " row(s) of remote buffer '" + buffer.handle() + "' hold " +
                                std::to_string(rows * buffer.numElements()));
}

} // namespace

// ---- Program ---------------------------------------------------------------------

Program::Program() = default;
Program::Program(std::shared_ptr<ProgramNode> node) : node_(std::move(node)) {}
Program::~Program() = default;

bool Program::isEmpty() const {
  if (!node_)
    return true;
  if (node_->kind != ProgramKind::Sequence)
    return false;
  return std::all_of(node_->children.begin(), node_->children.end(),
                     [](const std::shared_ptr<ProgramNode> &c) { return Program(c).isEmpty(); });
}

// ---- Sequence ----------------------------------------------------------------------

Sequence::Sequence(const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Sequence, debugContext)) {}

Sequence::Sequence(std::initializer_list<Program> programs, const DebugContext &debugContext)
    : Sequence(debugContext) {
  for (const Program &p : programs)
    add(p);
}

Sequence::Sequence(const Program &program) : Sequence(DebugContext()) {
  add(program);
}

void Sequence::add(const Program &p) {
  if (!p.getImpl())
    return; // an empty program adds nothing
  if (p.getImpl() == node_)
    throw control_program_error("Sequence::add: a sequence cannot contain itself" +
                                (node_->debugName.empty() ? std::string() : " ('" + node_->debugName + "')"));
  node_->children.push_back(p.getImpl());
}

// ---- Execute, Repeat, conditionals ----------------------------------------------

Execute::Execute(ComputeSet cs, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Execute, debugContext)) {
  if (cs.getId() == ~0u)
    throw control_program_error("Execute: the compute set is not valid (default-constructed)");
  node_->computeSet = cs.getId();
}

Execute::Execute(ComputeSet cs, const Tensor &t, const DebugContext &debugContext)
    : Execute(cs, debugContext) {
  requireScalar(t, "Execute", "failure flag");
  node_->predicate = t;
}

Repeat::Repeat(unsigned count, const Program &body, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Repeat, debugContext)) {
  node_->count = count;
  node_->children.push_back(nodeOf(body));
}

RepeatForever::RepeatForever(const Program &body, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::RepeatForever, debugContext)) {
  node_->children.push_back(nodeOf(body));
}

RepeatWhileTrue::RepeatWhileTrue(const Program &cond, const Tensor &predicate, const Program &body,
                                 const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::RepeatWhileTrue, debugContext)) {
  requireScalar(predicate, "RepeatWhileTrue", "predicate");
  node_->predicate = predicate;
  node_->children = {nodeOf(cond), nodeOf(body)};
}

RepeatWhileFalse::RepeatWhileFalse(const Program &cond, const Tensor &predicate, const Program &body,
                                   const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::RepeatWhileFalse, debugContext)) {
  requireScalar(predicate, "RepeatWhileFalse", "predicate");
  node_->predicate = predicate;
  node_->children = {nodeOf(cond), nodeOf(body)};
}

If::If(const Tensor &predicate, const Program &trueBody, const Program &falseBody,
       const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::If, debugContext)) {
  requireScalar(predicate, "If", "predicate");
  node_->predicate = predicate;
  node_->children = {nodeOf(trueBody), nodeOf(falseBody)};
}

If::If(const Tensor &predicate, const Program &trueBody, const DebugContext &debugContext)
    : If(predicate, trueBody, Program(), debugContext) {}

// ---- Switch ------------------------------------------------------------------------

Switch::Switch(const Tensor &control, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Switch, debugContext)) {
  requireScalar(control, "Switch", "control");
  if (!control.elementType().isIntegral())
    throw type_error("Switch: the control " + control.shortString() + " must have an integer type");
  node_->predicate = control;
}

Switch::Switch(const Tensor &control, const Program &defaultCaseBody, const DebugContext &debugContext)
    : Switch(control, debugContext) {
  node_->children.push_back(nodeOf(defaultCaseBody));
  node_->hasDefault = true;
}

Switch::Switch(const Tensor &control, const std::vector<std::pair<std::int32_t, Program>> &cases,
               const DebugContext &debugContext)
    : Switch(control, debugContext) {
  for (const auto &c : cases)
    add(c.first, c.second);
}

Switch::Switch(const Tensor &control, const std::vector<std::pair<std::int32_t, Program>> &cases,
               const Program &defaultCaseBody, const DebugContext &debugContext)
    : Switch(control, defaultCaseBody, debugContext) {
  for (const auto &c : cases)
    add(c.first, c.second);
}

Switch &Switch::add(std::int32_t value, const Program &body) {
  auto &values = node_->caseValues;
  if (std::find(values.begin(), values.end(), value) != values.end())
    throw control_program_error("Switch on " + node_->predicate.shortString() + ": case " +
                                std::to_string(value) + " is given twice");
  // Cases come first, in order; the default (if any) stays last.
  const auto position = node_->children.end() - (node_->hasDefault ? 1 : 0);
  node_->children.insert(position, nodeOf(body));
  values.push_back(value);
  return *this;
}

// ---- Copy ----------------------------------------------------------------------------

Copy::Copy(const Tensor &src, const Tensor &dst, bool dontOutline, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Copy, debugContext)) {
  requireValid(src, "Copy", "source");
  requireValid(dst, "Copy", "destination");
  requireSameType(src, dst, "Copy");
  if (src.numElements() != dst.numElements())
    throw control_program_error("Copy: source " + src.shortString() + " has " +
                                std::to_string(src.numElements()) + " elements (shape " + shapeOf(src) +
                                ") but destination " + dst.shortString() + " has " +
                                std::to_string(dst.numElements()) + " (shape " + shapeOf(dst) + ")");
  node_->src = src;
  node_->dst = dst;
  node_->flag = dontOutline;
}

Copy::Copy(const DataStream &stream, const Tensor &dst, bool optimiseMemory, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::StreamToTensor, debugContext)) {
  requireStreamCopy(stream, dst, true);
  node_->stream = stream.getId();
  node_->dst = dst;
  node_->flag = optimiseMemory;
}

Copy::Copy(const Tensor &src, const DataStream &stream, bool optimiseMemory, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::TensorToStream, debugContext)) {
  requireStreamCopy(stream, src, false);
  node_->stream = stream.getId();
  node_->src = src;
  node_->flag = optimiseMemory;
}

Copy::Copy(const RemoteBuffer &buffer, const Tensor &dst, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::RemoteToTensor, debugContext)) {
  requireRemoteCopy(buffer, dst, nullptr, true);
  node_->remoteBuffer = buffer.getId();
  node_->dst = dst;
}

Copy::Copy(const RemoteBuffer &buffer, const Tensor &dst, const Tensor &offset,
           const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::RemoteToTensor, debugContext)) {
  requireRemoteCopy(buffer, dst, &offset, true);
  node_->remoteBuffer = buffer.getId();
  node_->dst = dst;
  node_->offset = offset;
}

Copy::Copy(const Tensor &src, const RemoteBuffer &buffer, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::TensorToRemote, debugContext)) {
  requireRemoteCopy(buffer, src, nullptr, false);
  node_->remoteBuffer = buffer.getId();
  node_->src = src;
}

Copy::Copy(const Tensor &src, const RemoteBuffer &buffer, const Tensor &offset,
           const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::TensorToRemote, debugContext)) {
  requireRemoteCopy(buffer, src, &offset, false);
  node_->remoteBuffer = buffer.getId();
  node_->src = src;
  node_->offset = offset;
}

// ---- the rest ---------------------------------------------------------------------------

Call::Call(Function f, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Call, debugContext)) {
  if (f.getId() == ~0u)
    throw control_program_error("Call: the function is not valid (default-constructed)");
  node_->function = f.getId();
}

WriteUndef::WriteUndef(const Tensor &t, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::WriteUndef, debugContext)) {
  requireValid(t, "WriteUndef", "argument");
  node_->dst = t;
}

Sync::Sync(SyncType type, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Sync, debugContext)) {
  node_->syncType = type;
}

PrintTensor::PrintTensor(const Tensor &t, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::PrintTensor, debugContext)) {
  requireValid(t, "PrintTensor", "argument");
  node_->src = t;
}

PrintTensor::PrintTensor(StringRef title, const Tensor &t, const DebugContext &debugContext)
    : PrintTensor(t, debugContext) {
  node_->message = title.str();
}

Abort::Abort(const DebugContext &debugContext) : Program(makeNode(ProgramKind::Abort, debugContext)) {}

Abort::Abort(const std::string &message, const DebugContext &debugContext) : Abort(debugContext) {
  node_->message = message;
}

Abort::Abort(const char *message, const DebugContext &debugContext)
    : Abort(std::string(message ? message : ""), debugContext) {}

AbortOnCondition::AbortOnCondition(const Tensor &predicate, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::AbortOnCondition, debugContext)) {
  requireScalar(predicate, "AbortOnCondition", "predicate");
  node_->predicate = predicate;
}

AbortOnCondition::AbortOnCondition(const Tensor &predicate, const std::string &message,
                                   const DebugContext &debugContext)
    : AbortOnCondition(predicate, debugContext) {
  node_->message = message;
}

AbortOnCondition::AbortOnCondition(const Tensor &predicate, const char *message,
                                   const DebugContext &debugContext)
    : AbortOnCondition(predicate, std::string(message ? message : ""), debugContext) {}

Block::Block(const Program &p, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Block, debugContext)) {
  node_->children.push_back(nodeOf(p));
}

AssumeEqualAcrossReplicas::AssumeEqualAcrossReplicas(const Tensor &t, const DebugContext &debugContext)
    : Program(makeNode(ProgramKind::Sequence, debugContext)) {
  // A single replica is always equal to itself: an empty program.
  requireValid(t, "AssumeEqualAcrossReplicas", "argument");
}

} // namespace program
} // namespace poplar
