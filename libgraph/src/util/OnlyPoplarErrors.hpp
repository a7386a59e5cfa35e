// Copyright (c) Aspen contributors.
// Only Poplar's exceptions cross the API (issue 25): a public entry point that does much
// (an Engine's construction, compileGraph) runs its work through onlyPoplarErrors, so that a
// JSON library or filesystem exception escaping from deep inside (an internal fault: every
// error a user can cause is a poplar_error already) reaches the program as a poplar_error
// naming the entry point, which a program catching poplar_error handles.
#pragma once

#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>

namespace aspen {

template <class F> decltype(auto) onlyPoplarErrors(const char *where, F &&work) {
  try {
    return std::forward<F>(work)();
  } catch (const nlohmann::json::exception &e) {
    throw poplar::poplar_error(std::string(where) + ": unexpected JSON content (" + e.what() + ")");
  } catch (const std::filesystem::filesystem_error &e) {
    throw poplar::poplar_error(std::string(where) + ": " + e.what());
  }
}

} // namespace aspen
