// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_OPTIONFLAGS_HPP
#define POPLAR_OPTIONFLAGS_HPP

#include <poplar/ProfileValue.hpp>
#include <poplar/StringRef.hpp>

#include <initializer_list>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <utility>

namespace poplar {

/// String key/value options for engines, compilation and library operations.
/// Example: `OptionFlags opts{{"autoReport.all", "true"}};`
class OptionFlags {
public:
  using value_type = std::pair<const std::string, std::string>;
  using initializer_list = std::initializer_list<value_type>;
  using const_iterator = std::map<std::string, std::string>::const_iterator;
  using iterator = const_iterator;

  OptionFlags() {}
  OptionFlags(initializer_list init) : map_(init) {}

  /// Sets (or replaces) one option.
  void set(StringRef option, StringRef value) { map_[option.str()] = value.str(); }
  /// Sets each pair in `l`.
  void set(initializer_list l) {
    for (const auto &kv : l)
      map_[kv.first] = kv.second;
  }
  /// The value of `option`; throws `invalid_option` naming it when it is absent.
  StringRef at(StringRef option) const;
  /// Removes `option` if present.
  void remove(StringRef option) { map_.erase(option.str()); }
  void clear() { map_.clear(); }
  bool empty() const { return map_.empty(); }
  std::size_t size() const { return map_.size(); }
  bool contains(StringRef option) const { return map_.count(option.str()) != 0; }
  /// The entry of `option`, or `end()` when it is not set.
  const_iterator find(StringRef option) const { return map_.find(option.str()); }

  const_iterator begin() const { return map_.begin(); }
  const_iterator end() const { return map_.end(); }

  bool operator==(const OptionFlags &o) const { return map_ == o.map_; }
  bool operator!=(const OptionFlags &o) const { return map_ != o.map_; }

private:
  std::map<std::string, std::string> map_;
};

/// Reads a JSON object of string (or number/bool) values into `flags`; throws
/// `parse_error` on malformed input.
void readJSON(StringRef string, OptionFlags &flags);
void readJSON(std::istream &stream, OptionFlags &flags);
std::ostream &operator<<(std::ostream &os, const OptionFlags &flags);
/// The options as a ProfileValue Map of strings (for debug information).
ProfileValue getAsProfileValue(const OptionFlags &flags);

} // namespace poplar

#endif
