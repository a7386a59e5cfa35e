// Copyright (c) Aspen contributors.
#include "ReportFile.hpp"

#include "cache/CacheFiles.hpp"
#include "poplar/exceptions.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>

namespace aspen::profile {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string &file, const std::string &what) {
  throw poplar::poplar_error("Cannot read the profile report '" + file + "': " + what);
}

/// A DOM builder that stops at `maxDepth` levels of nesting.
class DepthLimitedSax : public nlohmann::detail::json_sax_dom_parser<json> {
public:
  using Base = nlohmann::detail::json_sax_dom_parser<json>;
  DepthLimitedSax(json &out, std::size_t maxDepth) : Base(out, true), maxDepth_(maxDepth) {}
  bool start_object(std::size_t n) { return enter() && Base::start_object(n); }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool start_array(std::size_t n) { return enter() && Base::start_array(n); }
  bool end_array() {
    --depth_;
    return Base::end_array();
  }
  bool tooDeep() const { return tooDeep_; }

private:
  bool enter() {
    if (++depth_ <= maxDepth_)
      return true;
    tooDeep_ = true;
    return false;
  }
  std::size_t maxDepth_;
  std::size_t depth_ = 0;
  bool tooDeep_ = false;
};

/// An unsigned count of the target at most `limit`, if present.
void checkCount(const json &target, const char *key, std::uint64_t limit, const std::string &file) {
  const auto it = target.find(key);
  if (it == target.end())
    return;
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
    fail(file, std::string("\"target\".\"") + key + "\" is not an unsigned integer");
  if (it->get<std::uint64_t>() > limit)
    fail(file, std::string("\"target\".\"") + key + "\" is " + std::to_string(it->get<std::uint64_t>()) +
                   ", more than " + std::to_string(limit));
}

} // namespace

bool parseLimited(const std::string &bytes, bool cbor, json &out, std::size_t maxDepth) {
  json result;
  DepthLimitedSax sax(result, maxDepth);
  const bool ok =
      json::sax_parse(bytes, &sax, cbor ? json::input_format_t::cbor : json::input_format_t::json);
  if (sax.tooDeep())
    return false;
  if (!ok) // the SAX parser reports errors by exception; this is a defence
    throw json::parse_error::create(101, bytes.size(), "incomplete input", nullptr);
  out = std::move(result);
  return true;
}

std::string dumpText(const json &j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

void checkReport(const json &report, const std::string &file) {
  if (!report.is_object())
    fail(file, "it is not a JSON object");
  const auto format = report.find("format");
  if (format == report.end() || !format->is_string() || *format != "aspen-profile")
    fail(file, "it is not an Aspen profile (no \"format\": \"aspen-profile\" key)");
  const auto version = report.find("version");
  if (version == report.end() || !version->is_number_integer())
    fail(file, "it has no integer \"version\"");
  const auto v = version->get<std::int64_t>();
  if (v < 1)
    fail(file, "format version " + std::to_string(v) + " is not valid");
  if (v > kReportVersion)
    fail(file, "format version " + std::to_string(v) + " is newer than this reader understands (" +
                   std::to_string(kReportVersion) + "); use the Aspen that wrote it");
  const auto target = report.find("target");
  if (target != report.end() && !target->is_object())
    fail(file, "\"target\" is not an object");
  if (target != report.end()) {
    checkCount(*target, "numTiles", kMaxReportTiles, file);
    checkCount(*target, "tilesPerIPU", kMaxReportTiles, file);
    checkCount(*target, "numIPUs", kMaxReportTiles, file);
    checkCount(*target, "numWorkerContexts", 1024, file);
    checkCount(*target, "replicationFactor", kMaxReportTiles, file);
  }
  const auto execution = report.find("execution");
  if (execution != report.end() && !execution->is_object())
    fail(file, "\"execution\" is not an object");
}

json readReport(const std::string &path, std::string *resolvedPath) {
  fs::path file = path;
  std::error_code ec;
  if (fs::is_directory(file, ec)) {
    if (fs::exists(file / "profile.json"))
      file /= "profile.json";
    else if (fs::exists(file / "profile.pop"))
      file /= "profile.pop";
    else
      fail(path, "the directory holds no profile.json or profile.pop");
  }
  const std::string name = file.string();
  std::ifstream is(file, std::ios::binary);
  if (!fs::exists(file, ec) || !is)
    fail(name, "no such file");
  const std::string bytes((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  if (bytes.empty())
    fail(name, "the file is empty");
  json report;
  // A JSON report starts with printable text (after white space: '{', or '[' of a file that
  // is not a report); a CBOR report with a map's header byte (0xa0 and up).
  const auto first = bytes.find_first_not_of(" \t\r\n");
  const bool isJson = first != std::string::npos && static_cast<unsigned char>(bytes[first]) >= 0x20 &&
                      static_cast<unsigned char>(bytes[first]) < 0x7f;
  try {
    if (!parseLimited(bytes, !isJson, report))
      fail(name,
           "it nests deeper than " + std::to_string(kMaxReportDepth) + " levels (not an Aspen profile)");
  } catch (const json::parse_error &e) {
    // The parser stops at the end of a cut-off file: that is a truncated report.
    const bool truncated = isJson
                               ? e.byte >= bytes.size()
                               : std::string(e.what()).find("unexpected end of input") != std::string::npos;
    fail(name, std::string(truncated ? "the file is truncated (" : "it is not valid JSON or CBOR (") +
                   e.what() + ")");
  } catch (const json::exception &e) {
    fail(name, std::string("it is not valid JSON or CBOR (") + e.what() + ")");
  }
  checkReport(report, name);
  if (resolvedPath)
    *resolvedPath = name;
  return report;
}

// Through the caches' writer: a temporary name nobody can predict, created exclusively, so a
// file or symbolic link planted in a shared report directory is never written through.
void writeFileAtomically(const std::string &fileName, const std::string &contents) {
  std::string why;
  if (!aspen::cache::writeAtomic(fileName, contents.data(), contents.size(), aspen::cache::FileMode::User,
                                 why))
    throw poplar::poplar_error("Cannot write '" + fileName + "': " + why);
}

void writeReportFiles(const std::string &directory, const json &report, bool pop) {
  const fs::path dir = directory.empty() ? fs::path(".") : fs::path(directory);
  std::error_code ec;
  fs::create_directories(dir, ec);
  writeFileAtomically((dir / "profile.json").string(), dumpText(report, 1) + "\n");
  if (pop) {
    const std::vector<std::uint8_t> cbor = json::to_cbor(report);
    writeFileAtomically((dir / "profile.pop").string(), std::string(cbor.begin(), cbor.end()));
  }
}

} // namespace aspen::profile
