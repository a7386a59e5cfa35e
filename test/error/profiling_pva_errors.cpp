// Copyright (c) Aspen contributors.
// pva::openReport on reports it cannot read: pva::Exception naming the file and the fault.
#include <pva/pva.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("aspen_pva_errors_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path &file, const std::string &text) {
  std::ofstream(file, std::ios::binary) << text;
}

std::string openError(const std::string &path) {
  try {
    pva::openReport(path);
  } catch (const pva::Exception &e) {
    return e.what();
  }
  return "no exception";
}

} // namespace

TEST_CASE("pva::openReport names the file and what is wrong with it", "[error][pva]") {
  const fs::path dir = scratch();
  const std::string good = R"({"format":"aspen-profile","version":2,"target":{"numTiles":4}})";
  write(dir / "truncated.pop", good.substr(0, 30));
  write(dir / "foreign.pop", R"({"traceEvents":[]})");
  write(dir / "newer.pop", R"({"format":"aspen-profile","version":99,"target":{"numTiles":4}})");
  fs::create_directories(dir / "empty");

  CHECK_THAT(openError((dir / "truncated.pop").string()),
             Catch::Contains((dir / "truncated.pop").string()) && Catch::Contains("the file is truncated"));
  CHECK_THAT(openError((dir / "foreign.pop").string()),
             Catch::Contains("foreign.pop") && Catch::Contains("not an Aspen profile"));
  CHECK_THAT(openError((dir / "newer.pop").string()),
             Catch::Contains("newer.pop") && Catch::Contains("format version 99 is newer"));
  CHECK_THAT(openError((dir / "empty").string()),
             Catch::Contains("empty") && Catch::Contains("holds no profile.json or profile.pop"));
  CHECK_THAT(openError((dir / "absent.pop").string()), Catch::Contains("absent.pop': no such file"));

  // A report whose trace is not what the format says.
  write(dir / "badtrace.pop",
        R"({"format":"aspen-profile","version":2,"target":{"numTiles":4},"execution":{"trace":[[1,2]]}})");
  CHECK_THAT(openError((dir / "badtrace.pop").string()),
             Catch::Contains("badtrace.pop") && Catch::Contains("execution.trace entry"));
  // profile.pop as the engine writes it (CBOR), cut short.
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(nlohmann::json::parse(good));
  write(dir / "cut.pop", std::string(cbor.begin(), cbor.begin() + cbor.size() / 2));
  CHECK_THAT(openError((dir / "cut.pop").string()),
             Catch::Contains("cut.pop") && Catch::Contains("the file is truncated"));
  write(dir / "whole.pop", std::string(cbor.begin(), cbor.end()));
  CHECK(pva::openReport((dir / "whole.pop").string()).compilation().target().numTiles() == 4);
  // The good one opens.
  write(dir / "good.pop", good);
  CHECK(pva::openReport((dir / "good.pop").string()).compilation().target().numTiles() == 4);
  fs::remove_all(dir);
}
