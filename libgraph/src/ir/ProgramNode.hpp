// Copyright (c) Aspen contributors.
// The recorded program tree: what poplar::program::* objects point at.
#pragma once

#include "poplar/SyncType.hpp"
#include "poplar/Tensor.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aspen::ir {

struct DebugRecord;

enum class ProgramKind : std::uint8_t {
  Sequence,         // children run in order
  Execute,          // computeSet; optional `tensor` = failure flag output
  Copy,             // src -> dst (tensors)
  StreamToTensor,   // stream -> dst
  TensorToStream,   // src -> stream
  RemoteToTensor,   // remoteBuffer -> dst, optional offset
  TensorToRemote,   // src -> remoteBuffer, optional offset
  Repeat,           // count, children[0] = body
  RepeatForever,    // children[0] = body
  RepeatWhileTrue,  // children[0] = cond, children[1] = body, predicate
  RepeatWhileFalse, // same, loop while predicate == 0
  If,               // predicate, children[0] = true, children[1] = false
  Switch,      // control = predicate, caseValues[i] -> children[i], default = children.back() if hasDefault
  Call,        // function
  WriteUndef,  // dst
  Sync,        // syncType
  PrintTensor, // src, message = title (may be empty)
  Abort,       // message
  AbortOnCondition, // predicate, message
  Block,            // children[0]
  Collective,       // src -> dst across replicas; `collective` says how (docs/replication.md)
};

/// The program a kind of node comes from, as messages and graph dumps name it
/// (`Copy (stream to tensor)` for a StreamToTensor node).
inline const char *programKindName(ProgramKind kind) {
  switch (kind) {
  case ProgramKind::Sequence:
    return "Sequence";
  case ProgramKind::Execute:
    return "Execute";
  case ProgramKind::Copy:
    return "Copy";
  case ProgramKind::StreamToTensor:
    return "Copy (stream to tensor)";
  case ProgramKind::TensorToStream:
    return "Copy (tensor to stream)";
  case ProgramKind::RemoteToTensor:
    return "Copy (remote buffer to tensor)";
  case ProgramKind::TensorToRemote:
    return "Copy (tensor to remote buffer)";
  case ProgramKind::Repeat:
    return "Repeat";
  case ProgramKind::RepeatForever:
    return "RepeatForever";
  case ProgramKind::RepeatWhileTrue:
    return "RepeatWhileTrue";
  case ProgramKind::RepeatWhileFalse:
    return "RepeatWhileFalse";
  case ProgramKind::If:
    return "If";
  case ProgramKind::Switch:
    return "Switch";
  case ProgramKind::Call:
    return "Call";
  case ProgramKind::WriteUndef:
    return "WriteUndef";
  case ProgramKind::Sync:
    return "Sync";
  case ProgramKind::PrintTensor:
    return "PrintTensor";
  case ProgramKind::Abort:
    return "Abort";
  case ProgramKind::AbortOnCondition:
    return "AbortOnCondition";
  case ProgramKind::Block:
    return "Block";
  case ProgramKind::Collective:
    return "Collective";
  }
  return "?";
}

/// What a Collective node does (docs/replication.md). Numbering is part of the
/// executable format: append only.
/// The *Within kinds run inside one replica between its IPUs: the input is
/// one row per IPU ({numIPUs, n}) and the rows play the part of the replicas.
enum class CollectiveKind : std::uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  AllToAll,
  Broadcast,
  AllReduceWithin,
  ReduceScatterWithin,
  AllGatherWithin
};
/// The cross-replica kind a within-replica kind computes like.
inline CollectiveKind acrossKind(CollectiveKind k) {
  return k == CollectiveKind::AllReduceWithin       ? CollectiveKind::AllReduce
         : k == CollectiveKind::ReduceScatterWithin ? CollectiveKind::ReduceScatter
         : k == CollectiveKind::AllGatherWithin     ? CollectiveKind::AllGather
                                                    : k;
}
inline bool isWithinReplica(CollectiveKind k) {
  return k >= CollectiveKind::AllReduceWithin;
}
/// The reduction of a collective; the values match gcl::CollectiveOperator.
enum class CollectiveOp : std::uint8_t { Add, Mean, Mul, Min, Max, LogicalAnd, LogicalOr, SquareAdd, Local };
/// Which replicas take part together; the values match gcl::CommGroupType.
enum class CommGroupKind : std::uint8_t { All, Consecutive, Orthogonal };

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveOp op = CollectiveOp::Add;
  CommGroupKind group = CommGroupKind::All;
  std::uint32_t groupSize = 0; // replicas per group (resolved: never 0)
  std::uint32_t root = 0;      // Broadcast: the source's position in its group
};

struct ProgramNode {
  ProgramNode() = default;
  ProgramNode(const ProgramNode &) = default;
  ProgramNode &operator=(const ProgramNode &) = default;
  /// Releases the subtree without recursion: `prog = Sequence(prog, step)` in a
  /// loop nests as deep as the loop runs, deeper than the stack could unwind.
  ~ProgramNode() {
    std::vector<std::shared_ptr<ProgramNode>> pending = std::move(children);
    while (!pending.empty()) {
      std::shared_ptr<ProgramNode> node = std::move(pending.back());
      pending.pop_back();
      if (node && node.use_count() == 1)
        for (auto &child : node->children)
          pending.push_back(std::move(child));
    }
  }

  ProgramKind kind = ProgramKind::Sequence;
  std::string debugName;
  std::shared_ptr<const DebugRecord> debugInfo; // the DebugInfo it was made under (null: none)
  std::uint64_t debugId = 0;                    // its id (also when the record was gone)
  std::vector<std::shared_ptr<ProgramNode>> children;
  poplar::Tensor src;       // Copy, TensorToStream, TensorToRemote, PrintTensor
  poplar::Tensor dst;       // Copy, StreamToTensor, RemoteToTensor, WriteUndef
  poplar::Tensor predicate; // conditions, switch control, Execute failure flag
  poplar::Tensor offset;    // remote buffer row offsets
  std::uint32_t computeSet = ~0u;
  std::uint32_t stream = ~0u;
  std::uint32_t remoteBuffer = ~0u;
  std::uint32_t function = ~0u;
  std::uint64_t count = 0;
  std::vector<std::int32_t> caseValues;
  bool hasDefault = false;
  bool flag = false; // Copy: dontOutline / optimiseMemory
  poplar::SyncType syncType = poplar::SyncType::INTERNAL;
  std::string message;
  CollectiveSpec collective; // Collective
};

} // namespace aspen::ir
