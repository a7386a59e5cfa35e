// Copyright (c) Aspen contributors.
// What a poplar::DebugInfo records, shared between the DebugInfo, the graph
// elements made under it and the compiler, which writes the records into the
// profile (docs/profile-format.md, "debugContexts").
#pragma once

#include "poplar/DebugContext.hpp"
#include "poplar/ProfileValue.hpp"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aspen::ir {

/// One DebugInfo: its id, its parent (the DebugInfo its DebugContext came
/// from), layer, path name, source location and values. The DebugInfo owns it
/// and sets values while it lives; graph elements made under it keep it alive.
struct DebugRecord {
  poplar::DebugId id = 0;
  poplar::DebugId parentId = 0;
  /// The parent's record when it was alive at construction (null otherwise).
  std::shared_ptr<const DebugRecord> parent;
  std::string layer;
  std::string path;
  poplar::SourceLocation location;
  poplar::ProfileValue::Map values;
};

/// The record of the live DebugInfo `id`; null for 0 or an id whose DebugInfo
/// is gone (its record lives on only in the elements that hold it).
std::shared_ptr<const DebugRecord> findDebugRecord(poplar::DebugId id);

/// `value` as JSON (numbers as numbers, Maps as objects).
nlohmann::json profileValueToJson(const poplar::ProfileValue &value);

/// The records and all their ancestors, one object each, sorted by id:
/// `{"id", "parent" (0: none), "layer", "path", "values", "location"?}`.
nlohmann::json debugContextsJson(const std::vector<std::shared_ptr<const DebugRecord>> &records);

} // namespace aspen::ir
