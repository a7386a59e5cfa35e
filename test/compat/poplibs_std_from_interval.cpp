// Copyright (c) Aspen contributors.
// Issue 24: PopLibs' poplibs_support/Algorithms.cpp uses std::map having included only
// <poplar/Interval.hpp> of the standard-library-bringing headers; Poplar's Interval.hpp brings
// <map>. Nothing else is included here, so this file stops compiling if Aspen's stops bringing it.
#include <poplar/Interval.hpp>

#include <vector>

std::size_t poplibsInverseMapSize(const std::vector<poplar::Interval> &intervals) {
  std::map<std::size_t, std::size_t> inverse;
  for (const auto &i : intervals)
    inverse.emplace(i.begin(), i.end());
  return inverse.size();
}
