// Copyright (c) Aspen contributors.
// OptionFlags lookups and the JSON reader/writer (nlohmann/json).
#include "poplar/OptionFlags.hpp"

#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <iterator>
#include <sstream>

namespace poplar {

StringRef OptionFlags::at(StringRef option) const {
  auto it = map_.find(option.str());
  if (it == map_.end())
    throw invalid_option("Option '" + option.str() + "' is not set in these OptionFlags");
  return it->second;
}

namespace {

/// The option value a JSON scalar stands for: strings as written, numbers and
/// booleans in their JSON spelling ("4", "0.5", "true").
std::string scalarToOptionValue(const std::string &key, const nlohmann::json &value) {
  if (value.is_string())
    return value.get<std::string>();
  if (value.is_boolean() || value.is_number())
    return value.dump();
  throw parse_error("Option '" + key + "' in JSON options must be a string, number or boolean, not " +
                    std::string(value.type_name()));
}

void readJSONText(const std::string &text, OptionFlags &flags) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    throw parse_error(std::string("Malformed JSON options: ") + e.what());
  }
  if (!document.is_object())
    throw parse_error("JSON options must be an object of option names and values, not " +
                      std::string(document.type_name()));
  for (auto it = document.begin(); it != document.end(); ++it)
    flags.set(it.key(), scalarToOptionValue(it.key(), it.value()));
}

} // namespace

void readJSON(StringRef string, OptionFlags &flags) {
  readJSONText(string.str(), flags);
}

void readJSON(std::istream &stream, OptionFlags &flags) {
  std::string text((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  readJSONText(text, flags);
}

std::ostream &operator<<(std::ostream &os, const OptionFlags &flags) {
  // A JSON object, so that the output can be read back with readJSON.
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto &kv : flags)
    object[kv.first] = kv.second;
  return os << object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace poplar
