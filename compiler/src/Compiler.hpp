// Copyright (c) Aspen contributors.
// The pass pipeline, for compileGraph and for tests.
#pragma once

#include "CompileOptions.hpp"
#include "exe/ExecutableData.hpp"
#include "ir/GraphData.hpp"
#include "poplar/Executable.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace aspen::compiler {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizedBuild = true;
#else
inline constexpr bool kAddressSanitizedBuild = false;
#endif
#else
inline constexpr bool kAddressSanitizedBuild = false;
#endif

/// Program trees deeper than this are compiled on a thread with a stack sized for
/// them: hashing, validation and lowering walk the trees recursively.
inline constexpr std::size_t kDeepProgramLevels = 2000;
/// Stack per level of nesting on that thread. Measured by the test "hardening: the
/// compile thread's stack per level of program nesting" (which checks this holds
/// 1.5 times the measured need): 0.9 KiB in a GCC release build, 1.1 KiB under TSan,
/// 6.4 KiB under clang's ASan+UBSan, whose redzones enlarge every frame (4 KiB per level
/// is too little there).
inline constexpr std::size_t kStackBytesPerLevel = kAddressSanitizedBuild ? 16384 : 4096;
/// Plus a base for everything else the compile does on that thread.
inline constexpr std::size_t kDeepProgramStackBase = std::size_t(64) << 20;

/// Runs every pass on `graph` and `programs` (program i = roots[i]; null =
/// empty program). Reports `progress(step, total)` after each pass.
std::unique_ptr<exe::ExecutableData> compile(const ir::GraphData &graph,
                                             const std::vector<const ir::ProgramNode *> &programs,
                                             const CompileOptions &options,
                                             const poplar::ProgressFunc &progress = {});

} // namespace aspen::compiler
