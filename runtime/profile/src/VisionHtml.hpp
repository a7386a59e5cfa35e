// Copyright (c) Aspen contributors.
// The analyser page: one self-contained HTML file (web/vision.{html,css,js}
// embedded at build time) with one or two reports as data.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace aspen::profile {

struct PageReport {
  std::string file;              // shown as the report's name
  nlohmann::json report;         // already checked by checkReport
  nlohmann::json host = nullptr; // host trace files (readHostTraces), or null
};

/// The page for one report, or two side by side (compare mode).
std::string visionHtml(const std::vector<PageReport> &reports);

/// The pvti trace files (`*.pvti`) in `directory`, as the page shows them:
/// an array of {"file", "events": [{channel, name, begin, end, depth}]}.
/// Unreadable lines are skipped; a missing directory gives an empty array.
nlohmann::json readHostTraces(const std::string &directory);

/// Writes `<directory>/report.html` for `report`, with the host traces found there.
void writeVisionHtml(const std::string &directory, const nlohmann::json &report);

} // namespace aspen::profile
