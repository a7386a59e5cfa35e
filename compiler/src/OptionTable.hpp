// Copyright (c) Aspen contributors.
// The one table of option keys that Engine and compileGraph accept: every key of
// Poplar 3.x's engine/compile option tables, plus Aspen's own `aspen.*` keys.
#pragma once

#include <string>
#include <vector>

namespace aspen::compiler {

enum class OptionKind { Bool, Text, Unsigned, Choice };

/// One row: an exact key, or a family when `key` ends in ".*" (every key with
/// that prefix). `effect` says what Aspen does with it (docs, README table).
struct OptionRow {
  const char *key;
  OptionKind kind;
  std::vector<const char *> choices;
  const char *effect;
};

/// Every row, exact keys before the families that contain them.
const std::vector<OptionRow> &optionTable();

/// Throws `poplar::invalid_option` naming `key` when no row accepts it, or
/// naming the key and the value when the value does not fit the row's kind.
void checkOption(const std::string &key, const std::string &value);

} // namespace aspen::compiler
