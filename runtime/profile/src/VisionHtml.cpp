// Copyright (c) Aspen contributors.
#include "VisionHtml.hpp"

#include "ReportFile.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <type_traits>

namespace aspen::profile {

// web/vision.{html,css,js}, generated into VisionAssets.cpp by EmbedWeb.cmake.
extern const char kVisionHtmlTemplate[];
extern const char kVisionCss[];
extern const char kVisionJs[];

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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

/// `e[key]` if it has the type of `otherwise`, else `otherwise`: a malformed trace line
/// is skipped or shown with defaults, never an exception.
template <class T> T field(const json &e, const char *key, T otherwise) {
  const auto it = e.find(key);
  if (it == e.end())
    return otherwise;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : otherwise;
  } else if constexpr (std::is_floating_point_v<T>) {
    return it->is_number() ? it->get<T>() : otherwise;
  } else {
    return it->is_number_unsigned() ? it->get<T>() : otherwise;
  }
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
  // One pass over the template: what is put in (a title naming a file called "@CSS@", the
  // data, the script) is never searched for placeholders again.
  const std::map<std::string, std::string> values = {
      {"@TITLE@", htmlEscape(title)},
      {"@CSS@", kVisionCss},
      {"@DATA@", scriptSafe(dumpText(data))},
      {"@JS@", kVisionJs},
  };
  const std::string page = kVisionHtmlTemplate;
  std::string out;
  out.reserve(page.size() + values.at("@DATA@").size() + values.at("@JS@").size() +
              values.at("@CSS@").size());
  std::set<std::string> done;
  for (std::size_t at = 0; at < page.size();) {
    const std::size_t next = page.find('@', at);
    if (next == std::string::npos) {
      out.append(page, at, std::string::npos);
      break;
    }
    out.append(page, at, next - at);
    bool replaced = false;
    for (const auto &[placeholder, value] : values)
      if (!done.count(placeholder) && page.compare(next, placeholder.size(), placeholder) == 0) {
        out += value;
        done.insert(placeholder);
        at = next + placeholder.size();
        replaced = true;
        break;
      }
    if (!replaced) {
      out += '@';
      at = next + 1;
    }
  }
  return out;
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
    // A trace file is anyone's: a line that is not a trace point (malformed, nested without
    // end, fields of other types) is skipped, never an exception.
    while (std::getline(is, line)) {
      json e;
      try {
        if (!parseLimited(line, false, e, 8))
          continue;
      } catch (const json::exception &) {
        continue;
      }
      if (!e.is_object() || !e.contains("ph"))
        continue;
      const std::string ph = field(e, "ph", std::string());
      const auto key = std::make_pair(field(e, "tid", std::uint64_t(0)), field(e, "ch", std::string()));
      auto &stack = open[key];
      if (ph == "B") {
        stack.push_back(e);
      } else if (ph == "E" && !stack.empty()) {
        const json b = stack.back();
        stack.pop_back();
        events.push_back({{"channel", key.second},
                          {"name", field(b, "name", std::string())},
                          {"begin", field(b, "ts", 0.0)},
                          {"end", field(e, "ts", 0.0)},
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
