// Copyright (c) Aspen contributors.
#include "ReportFile.hpp"

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

} // namespace

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
  // A JSON report starts with '{' (after white space); anything else is read as CBOR.
  const auto first = bytes.find_first_not_of(" \t\r\n");
  try {
    if (first != std::string::npos && bytes[first] == '{')
      report = json::parse(bytes);
    else
      report = json::from_cbor(bytes);
  } catch (const json::parse_error &e) {
    // The parser stops at the end of a cut-off file: that is a truncated report.
    const bool isJson = first != std::string::npos && bytes[first] == '{';
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

void writeFileAtomically(const std::string &fileName, const std::string &contents) {
  const fs::path file = fileName;
  const fs::path temporary = file.string() + ".tmp";
  {
    std::ofstream os(temporary, std::ios::binary | std::ios::trunc);
    if (!os)
      throw poplar::poplar_error("Cannot write '" + file.string() + "'");
    os.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!os)
      throw poplar::poplar_error("Cannot write '" + file.string() + "'");
  }
  std::error_code ec;
  fs::rename(temporary, file, ec);
  if (ec)
    throw poplar::poplar_error("Cannot write '" + file.string() + "': " + ec.message());
}

void writeReportFiles(const std::string &directory, const json &report, bool pop) {
  const fs::path dir = directory.empty() ? fs::path(".") : fs::path(directory);
  std::error_code ec;
  fs::create_directories(dir, ec);
  writeFileAtomically((dir / "profile.json").string(), report.dump(1) + "\n");
  if (pop) {
    const std::vector<std::uint8_t> cbor = json::to_cbor(report);
    writeFileAtomically((dir / "profile.pop").string(), std::string(cbor.begin(), cbor.end()));
  }
}

} // namespace aspen::profile
