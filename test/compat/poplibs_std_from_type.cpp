// Copyright (c) Aspen contributors.
// Issue 24: PopLibs' popops/ExprOpUtil.cpp calls assert having included (of Poplar's headers)
// only <poplar/Type.hpp>; Poplar's brings <cassert> (through StringRef.hpp). Nothing else is
// included before the use, so this file stops compiling if Aspen's stops bringing it.
#include <poplar/Type.hpp>

std::size_t poplibsCheckedTypeSize(const poplar::Type &t) {
  assert(t.valid());
  return t.size();
}

#include <poplar/Interval.hpp>

#include <catch2/catch.hpp>

#include <vector>

std::size_t poplibsInverseMapSize(const std::vector<poplar::Interval> &intervals);

TEST_CASE("PopLibs' sources see <map> through Interval.hpp and assert through Type.hpp",
          "[compat][poplibs]") {
  CHECK(poplibsCheckedTypeSize(poplar::FLOAT) == 4);
  CHECK(poplibsInverseMapSize({poplar::Interval(0, 2), poplar::Interval(4, 9), poplar::Interval(0, 3)}) == 2);
}
