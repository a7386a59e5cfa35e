// Copyright (c) Aspen contributors.
// Unit tests: poplar::OptionFlags (set/at/remove/iteration) and readJSON / operator<<.
#include <poplar/OptionFlags.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

using namespace poplar;

namespace {
std::map<std::string, std::string> asMap(const OptionFlags &flags) {
  std::map<std::string, std::string> m;
  for (const auto &kv : flags)
    m[kv.first] = kv.second;
  return m;
}
} // namespace

TEST_CASE("OptionFlags set, at, remove, clear and iterate", "[options]") {
  OptionFlags opts{{"debug.instrument", "true"}, {"autoReport.directory", "./r"}};
  CHECK(opts.size() == 2);
  CHECK(opts.at("debug.instrument") == StringRef("true"));
  opts.set("debug.instrument", "false");
  CHECK(opts.at("debug.instrument") == StringRef("false"));
  opts.set({{"a", "1"}, {"b", "2"}});
  CHECK(asMap(opts) ==
        std::map<std::string, std::string>{
            {"a", "1"}, {"autoReport.directory", "./r"}, {"b", "2"}, {"debug.instrument", "false"}});
  CHECK(opts.contains("a"));
  opts.remove("a");
  CHECK_FALSE(opts.contains("a"));
  opts.remove("not-there"); // no effect
  CHECK(opts.size() == 3);
  OptionFlags copy = opts;
  CHECK(copy == opts);
  copy.set("b", "3");
  CHECK(copy != opts);
  opts.clear();
  CHECK(opts.empty());
}

TEST_CASE("readJSON turns strings, numbers and booleans into option strings", "[options]") {
  OptionFlags opts{{"keep", "me"}, {"autoReport.all", "false"}};
  std::istringstream in(R"({"autoReport.all": "true", "profiler.replicaToProfile": 0,
                            "ratio": 0.5, "debug.instrument": true, "neg": -12})");
  readJSON(in, opts);
  CHECK(asMap(opts) == std::map<std::string, std::string>{{"autoReport.all", "true"},
                                                          {"debug.instrument", "true"},
                                                          {"keep", "me"},
                                                          {"neg", "-12"},
                                                          {"profiler.replicaToProfile", "0"},
                                                          {"ratio", "0.5"}});
  OptionFlags fromString;
  readJSON(StringRef(R"({"x": "y"})"), fromString);
  CHECK(fromString.at("x") == StringRef("y"));
  OptionFlags empty;
  readJSON(StringRef("{}"), empty);
  CHECK(empty.empty());
}

TEST_CASE("operator<< writes JSON that readJSON reads back", "[options]") {
  OptionFlags opts{{"quote\"d", "va\\lue"}, {"plain", "x y"}, {"empty", ""}};
  std::ostringstream os;
  os << opts;
  OptionFlags back;
  readJSON(StringRef(os.str()), back);
  CHECK(back == opts);
  std::ostringstream none;
  none << OptionFlags();
  CHECK(none.str() == "{}");
}

TEST_CASE("readJSON rejects non-scalar values", "[options]") {
  OptionFlags opts;
  try {
    readJSON(StringRef(R"({"nested": {"a": "b"}})"), opts);
    FAIL("expected parse_error");
  } catch (const parse_error &e) {
    CHECK_THAT(e.what(), Catch::Contains("nested"));
  }
  CHECK_THROWS_AS(readJSON(StringRef(R"(["a", "b"])"), opts), parse_error);
}
