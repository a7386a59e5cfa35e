// Copyright (c) Aspen contributors.
#include "VisionHtml.hpp"

#include "ReportFile.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace aspen::profile {

// web/vision.{html,css,js}, generated into VisionAssets.cpp by EmbedWeb.cmake.
extern const char kVisionHtmlTemplate[];
extern const char kVisionCss[];
extern const char kVisionJs[];

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void replaceOnce(std::string &text, const std::string &placeholder, const std::string &value) {
  const auto at = text.find(placeholder);
  if (at != std::string::npos)
    text.replace(at, placeholder.size(), value);
}

/// JSON safe inside <script>: every '<' as \u003c (it can only occur in strings).
std::string scriptSafe(const std::string &jsonText) {
  std::string out;
  out.reserve(jsonText.size() + 64);
  for (char c : jsonText) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

std::string htmlEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

} // namespace

std::string visionHtml(const std::vector<PageReport> &reports) {
  json data = {{"reports", json::array()}};
  std::string title = "Aspen Vision";
  for (const PageReport &r : reports) {
    json events = json::array();
    if (r.host.is_array())
      events = r.host;
    data["reports"].push_back({{"file", r.file}, {"report", r.report}, {"host", events}});
    title += (title.size() > 12 ? " vs " : " \xe2\x80\x94 ") + r.file;
  }
  std::string page = kVisionHtmlTemplate;
  // The data goes in last so that no placeholder text inside it is replaced.
  replaceOnce(page, "@TITLE@", htmlEscape(title));
  replaceOnce(page, "@CSS@", kVisionCss);
  const std::string js = kVisionJs;
  const std::string dataText = scriptSafe(data.dump(-1, ' ', false, json::error_handler_t::replace));
  const auto dataAt = page.find("@DATA@");
  const auto jsAt = page.find("@JS@");
  if (dataAt != std::string::npos && jsAt != std::string::npos && dataAt < jsAt) {
    page = page.substr(0, dataAt) + dataText + page.substr(dataAt + 6, jsAt - dataAt - 6) + js +
           page.substr(jsAt + 4);
  }
  return page;
}

json readHostTraces(const std::string &directory) {
  json files = json::array();
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    return files;
  std::vector<fs::path> paths;
  for (const auto &entry : fs::directory_iterator(directory, ec))
    if (entry.path().extension() == ".pvti")
      paths.push_back(entry.path());
  std::sort(paths.begin(), paths.end());
  for (const fs::path &path : paths) {
    std::ifstream is(path);
    std::string line;
    json events = json::array();
    // Per (thread, channel): open trace points, to pair begin with end.
    std::map<std::pair<std::uint64_t, std::string>, std::vector<json>> open;
    while (std::getline(is, line)) {
      const json e = json::parse(line, nullptr, false);
      if (e.is_discarded() || !e.is_object() || !e.contains("ph"))
        continue;
      const std::string ph = e.value("ph", "");
      const auto key = std::make_pair(e.value("tid", std::uint64_t(0)), e.value("ch", std::string()));
      auto &stack = open[key];
      if (ph == "B") {
        stack.push_back(e);
      } else if (ph == "E" && !stack.empty()) {
        const json b = stack.back();
        stack.pop_back();
        events.push_back({{"channel", key.second},
                          {"name", b.value("name", std::string())},
                          {"begin", b.value("ts", 0.0)},
                          {"end", e.value("ts", 0.0)},
                          {"depth", stack.size()}});
      }
    }
    files.push_back({{"file", path.filename().string()}, {"events", std::move(events)}});
  }
  return files;
}

void writeVisionHtml(const std::string &directory, const json &report) {
  const fs::path dir = directory.empty() ? fs::path(".") : fs::path(directory);
  const std::string html = visionHtml({PageReport{"profile.json", report, readHostTraces(dir.string())}});
  writeFileAtomically((dir / "report.html").string(), html);
}

} // namespace aspen::profile
