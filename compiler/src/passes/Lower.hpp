// Copyright (c) Aspen contributors.
// Pass 2: program trees to a flat step list with explicit control flow.
#pragma once

#include "passes/PassData.hpp"

#include <vector>

namespace aspen::compiler {

/// Lowers each program tree (and every function reachable from them) to steps:
///  - Repeat(n): `SetCounter c=n; L: LoopTest c -> exit; body; Jump L; exit:`
///  - RepeatWhileTrue/False: `L: cond; JumpIfZero/NonZero p -> exit; body; Jump L; exit:`
///  - If: `JumpIfZero p -> else; then; Jump end; else: ...; end:`
///  - Switch: `SwitchJump table; case_i: ...; Jump end; ...; default: ...; end:`
///  - Call: `Call -> function entry`; a function body ends with Return.
///  - Block: `BlockBegin; body; BlockEnd`; every program ends with End.
/// Program i starts at `programEntry[i]`; function bodies follow all programs.
/// Steps still name graph objects (Execute: a = compute set id; streams: a =
/// stream id); Exchange turns them into executable tables.
/// Throws `graph_cycle_error` for a program that contains itself or a function
/// that calls itself (directly or not).
LoweredProgram lowerPrograms(const ir::GraphData &graph,
                             const std::vector<const ir::ProgramNode *> &programs);

} // namespace aspen::compiler
