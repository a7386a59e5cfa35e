// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_PROGRAM_HPP
#define POPLAR_PROGRAM_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/GraphElements.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/SyncType.hpp>
#include <poplar/Tensor.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace aspen {
namespace ir {
struct ProgramNode;
} // namespace ir
} // namespace aspen

namespace poplar {
namespace program {

/// A control program: a value (copies share the recorded tree) that the
/// compiler lowers to steps. Default-constructed = an empty program.
class Program {
public:
  Program();
  Program(const Program &) = default;
  Program(Program &&) noexcept = default;
  Program &operator=(const Program &) = default;
  Program &operator=(Program &&) noexcept = default;
  virtual ~Program();
  bool isEmpty() const;

  /// Internal: the recorded node. Not part of Poplar's API.
  const std::shared_ptr<aspen::ir::ProgramNode> &getImpl() const { return node_; }

protected:
  explicit Program(std::shared_ptr<aspen::ir::ProgramNode> node);
  std::shared_ptr<aspen::ir::ProgramNode> node_;
};

/// Runs its programs in order.
class Sequence : public Program {
public:
  Sequence(const DebugContext &debugContext = {});
  Sequence(std::initializer_list<Program> programs, const DebugContext &debugContext = {});
  /// Legacy single-program form, not explicit as in older Poplar: `Sequence s = Repeat(n, body);`
  /// and `Sequence(prog)` give a sequence holding that one program (a Sequence argument is
  /// copied instead, as any copy).
  Sequence(const Program &program);
  /// Legacy variadic form `Sequence(p1, p2, ...)`.
  template <class... P>
  Sequence(const Program &first, const Program &second, const P &...rest) : Sequence(DebugContext()) {
    add(first);
    add(second);
    int unused[] = {0, (add(rest), 0)...};
    (void)unused;
  }
  void add(const Program &p);
};

/// Runs the vertices of a compute set as one BSP superstep.
class Execute : public Program {
public:
  explicit Execute(ComputeSet cs, const DebugContext &debugContext = {});
  /// Executes `cs`; afterwards `t` (a scalar) holds whether any vertex returned false.
  Execute(ComputeSet cs, const Tensor &t, const DebugContext &debugContext = {});
};

/// Repeats `body` `count` times.
class Repeat : public Program {
public:
  Repeat(unsigned count, const Program &body, const DebugContext &debugContext = {});
};

/// Repeats `body` for ever (until an Abort). Provided for completeness.
class RepeatForever : public Program {
public:
  explicit RepeatForever(const Program &body, const DebugContext &debugContext = {});
};

/// Runs `cond`, then `body` while the scalar `predicate` is nonzero.
class RepeatWhileTrue : public Program {
public:
  RepeatWhileTrue(const Program &cond, const Tensor &predicate, const Program &body,
                  const DebugContext &debugContext = {});
};

/// Runs `cond`, then `body` while the scalar `predicate` is zero.
class RepeatWhileFalse : public Program {
public:
  RepeatWhileFalse(const Program &cond, const Tensor &predicate, const Program &body,
                   const DebugContext &debugContext = {});
};

/// Runs `trueBody` when the scalar `predicate` is nonzero, else `falseBody`.
class If : public Program {
public:
  If(const Tensor &predicate, const Program &trueBody, const Program &falseBody,
     const DebugContext &debugContext = {});
  If(const Tensor &predicate, const Program &trueBody, const DebugContext &debugContext = {});
};

/// Runs the case whose value equals the scalar integer `control`, else the default.
class Switch : public Program {
public:
  explicit Switch(const Tensor &control, const DebugContext &debugContext = {});
  Switch(const Tensor &control, const Program &defaultCaseBody, const DebugContext &debugContext = {});
  Switch(const Tensor &control, const std::vector<std::pair<std::int32_t, Program>> &cases,
         const DebugContext &debugContext = {});
  Switch(const Tensor &control, const std::vector<std::pair<std::int32_t, Program>> &cases,
         const Program &defaultCaseBody, const DebugContext &debugContext = {});
  Switch &add(std::int32_t value, const Program &body);
};

/// Element-wise copy (row-major); between tensors, streams and remote buffers.
class Copy : public Program {
public:
  Copy(const Tensor &src, const Tensor &dst, bool dontOutline = false, const DebugContext &debugContext = {});
  Copy(const DataStream &stream, const Tensor &dst, bool optimiseMemory = false,
       const DebugContext &debugContext = {});
  Copy(const Tensor &src, const DataStream &stream, bool optimiseMemory = false,
       const DebugContext &debugContext = {});
  Copy(const RemoteBuffer &buffer, const Tensor &dst, const DebugContext &debugContext = {});
  Copy(const RemoteBuffer &buffer, const Tensor &dst, const Tensor &offset,
       const DebugContext &debugContext = {});
  Copy(const Tensor &src, const RemoteBuffer &buffer, const DebugContext &debugContext = {});
  Copy(const Tensor &src, const RemoteBuffer &buffer, const Tensor &offset,
       const DebugContext &debugContext = {});
};

/// Calls a function made by `Graph::addFunction`.
class Call : public Program {
public:
  explicit Call(Function f, const DebugContext &debugContext = {});
};

/// Marks `t` as holding no useful value (its variable may die here).
class WriteUndef : public Program {
public:
  explicit WriteUndef(const Tensor &t, const DebugContext &debugContext = {});
};

/// A barrier across tiles.
class Sync : public Program {
public:
  explicit Sync(SyncType type, const DebugContext &debugContext = {});
};

/// Prints a tensor to the engine's print stream.
class PrintTensor : public Program {
public:
  explicit PrintTensor(const Tensor &t, const DebugContext &debugContext = {});
  PrintTensor(StringRef title, const Tensor &t, const DebugContext &debugContext = {});
};

/// Stops the program with an error.
class Abort : public Program {
public:
  explicit Abort(const DebugContext &debugContext = {});
  explicit Abort(const std::string &message, const DebugContext &debugContext = {});
  /// `Abort("message")`: an exact match, so the call is not ambiguous with the DebugContext form.
  explicit Abort(const char *message, const DebugContext &debugContext = {});
};

/// Stops the program with an error when the scalar `predicate` is nonzero.
class AbortOnCondition : public Program {
public:
  explicit AbortOnCondition(const Tensor &predicate, const DebugContext &debugContext = {});
  AbortOnCondition(const Tensor &predicate, const std::string &message,
                   const DebugContext &debugContext = {});
  AbortOnCondition(const Tensor &predicate, const char *message, const DebugContext &debugContext = {});
};

/// Groups a program for the profiler; otherwise transparent.
class Block : public Program {
public:
  Block(const Program &p, const DebugContext &debugContext);
};

/// A hint that `t` is equal across replicas; no effect on a single replica.
class AssumeEqualAcrossReplicas : public Program {
public:
  explicit AssumeEqualAcrossReplicas(const Tensor &t, const DebugContext &debugContext = {});
};

} // namespace program
} // namespace poplar

#endif
