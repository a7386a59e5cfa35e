// Copyright (c) Aspen contributors. PopLibs-compatible option parsing helpers.
#ifndef POPUTIL_OPTIONPARSING_HPP
#define POPUTIL_OPTIONPARSING_HPP

#include <poplar/OptionFlags.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/exceptions.hpp>

#include <functional>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

namespace poplibs {

/// Parses one option's value into a variable; throws `poplar::invalid_option`
/// naming the value and what was expected when it does not parse.
class OptionHandler {
public:
  using Handler = std::function<void(const std::string &option, const std::string &value)>;
  explicit OptionHandler(Handler h) : handler_(std::move(h)) {}

  void parseValue(const std::string &option, const std::string &value) const { handler_(option, value); }

  /// "true" or "false".
  static OptionHandler createWithBool(bool &output) {
    return OptionHandler([&output](const std::string &option, const std::string &value) {
      if (value == "true")
        output = true;
      else if (value == "false")
        output = false;
      else
        throw poplar::invalid_option("Option '" + option + "': value '" + value +
                                     "' is not valid (expected true or false)");
    });
  }
  /// One of the keys of `values`.
  template <class T> static OptionHandler createWithEnum(T &output, std::map<std::string, T> values) {
    return OptionHandler([&output, values](const std::string &option, const std::string &value) {
      auto it = values.find(value);
      if (it == values.end()) {
        std::string expected;
        for (const auto &kv : values)
          expected += (expected.empty() ? "" : ", ") + kv.first;
        throw poplar::invalid_option("Option '" + option + "': value '" + value + "' is not one of " +
                                     expected);
      }
      output = it->second;
    });
  }
  /// A number that parses completely as `T` (integers, unsigned or floating point).
  template <class T> static OptionHandler createWithNumber(T &output) {
    return OptionHandler([&output](const std::string &option, const std::string &value) {
      std::istringstream is(value);
      T parsed;
      is >> parsed;
      if (!is || !is.eof() || (std::is_unsigned<T>::value && value.find('-') != std::string::npos))
        throw poplar::invalid_option("Option '" + option + "': value '" + value + "' is not a valid number");
      output = parsed;
    });
  }
  static OptionHandler createWithInteger(int &output) { return createWithNumber(output); }
  static OptionHandler createWithUnsignedInt(unsigned &output) { return createWithNumber(output); }
  static OptionHandler createWithDouble(double &output) { return createWithNumber(output); }
  /// Any string.
  static OptionHandler createWithString(std::string &output) {
    return OptionHandler([&output](const std::string &, const std::string &value) { output = value; });
  }

private:
  Handler handler_;
};

/// The options an operation accepts. `parse` throws `poplar::invalid_option`
/// naming an unknown key.
///
/// Example:
///   bool fuse = true;
///   OptionSpec spec{{"enableGenerateCodelet", OptionHandler::createWithBool(fuse)}};
///   for (const auto &kv : options) spec.parse(kv.first, kv.second);
class OptionSpec {
public:
  OptionSpec(std::initializer_list<std::pair<const std::string, OptionHandler>> handlers)
      : handlers_(handlers) {}
  void parse(const std::string &option, const std::string &value, bool ignoreUnknown = false) const {
    auto it = handlers_.find(option);
    if (it == handlers_.end()) {
      if (ignoreUnknown)
        return;
      std::string known;
      for (const auto &kv : handlers_)
        known += (known.empty() ? "" : ", ") + kv.first;
      throw poplar::invalid_option("Unrecognised option '" + option + "' (known options: " + known + ")");
    }
    it->second.parseValue(option, value);
  }
  /// Parses every option of `flags`.
  void parse(const poplar::OptionFlags &flags, bool ignoreUnknown = false) const {
    for (const auto &kv : flags)
      parse(kv.first, kv.second, ignoreUnknown);
  }

private:
  std::map<std::string, OptionHandler> handlers_;
};

} // namespace poplibs

#endif
