// Copyright (c) Aspen contributors.
// The gccs headers as PopLibs' sources use them (issue 24): integer helpers with mixed
// argument types, StructHelper in constant expressions, class template argument deduction of
// gccs::ArrayRef passed to Poplar's API, GC_DEPRECATED, generic_id, and popsolver's API in the
// shapes PopLibs' planners call it (namespace alias, call<T> with lambdas, DataType).
#include <catch2/catch.hpp>

#include <gccs/Algorithm.hpp>
#include <gccs/ArrayRef.hpp>
#include <gccs/CompilerFeatures.hpp>
#include <gccs/StructHelper.hpp>
#include <gccs/generic_id.hpp>
#include <gccs/popsolver/Model.hpp>

#include <poplar/ArrayRef.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/Target.hpp>
#include <poplar/TypeConversion.hpp>

#include <boost/optional.hpp>
#include <boost/property_tree/ptree.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace popsolver = gccs::popsolver;

namespace {

struct Params {
  unsigned a;
  std::string b;
  std::vector<std::size_t> c;
};
// As PopLibs writes it: a constexpr helper, by CTAD or by makeStructHelper.
static constexpr gccs::StructHelper paramsHelper(&Params::a, &Params::b, &Params::c);
bool operator<(const Params &x, const Params &y) {
  return paramsHelper.lt(x, y);
}
bool operator==(const Params &x, const Params &y) {
  return paramsHelper.eq(x, y);
}

struct Options {
  double proportion = 0.6;
  bool flag = false;
  static constexpr auto helper = gccs::makeStructHelper(&Options::proportion, &Options::flag);
  bool operator<(const Options &o) const { return helper.lt(*this, o); }
};

GC_DEPRECATED inline int oldApi() {
  return 1;
}

using NodeId = gccs::generic_id<struct NodeTag>;
using EdgeId = gccs::generic_id<struct EdgeTag, std::uint64_t>;

} // namespace

TEST_CASE("gccs Algorithm: integer helpers with PopLibs' argument types", "[gccs][compat]") {
  const std::size_t n = 10;
  const unsigned d = 4;
  // The common type of the arguments, as the built-in operators give it.
  static_assert(std::is_same<decltype(gccs::ceildiv(n, d)), std::size_t>::value, "");
  static_assert(std::is_same<decltype(gccs::ceildiv(7u, 2u)), unsigned>::value, "");
  static_assert(gccs::ceildiv(7u, 2u) == 4 && gccs::ceildiv(8u, 2u) == 4 && gccs::ceildiv(0u, 3u) == 0, "");
  static_assert(gccs::floordiv(7u, 2u) == 3, "");
  static_assert(gccs::alignNext(10u, 4u) == 12 && gccs::alignNext(12u, 4u) == 12, "");
  static_assert(gccs::alignPrev(10u, 4u) == 8, "");
  static_assert(gccs::ceilLog2(1u) == 0 && gccs::ceilLog2(5u) == 3 && gccs::ceilLog2(8u) == 3, "");
  static_assert(gccs::nthTriangular(4u) == 10, "");
  CHECK(gccs::ceildiv(n, d) == 3);
  CHECK(gccs::ceildiv0(0u, 0u) == 0);
  CHECK(gccs::ceildiv0(9u, 4u) == 3);
  CHECK(gccs::ceildiv(std::uint64_t(1) << 63, 3u) == ((std::uint64_t(1) << 63) + 2) / 3); // no overflow
  for (unsigned items = 0; items < 40; ++items)
    for (unsigned parts = 0; parts < 9; ++parts) {
      const auto [big, small] = gccs::balancedPartition(items, parts);
      CAPTURE(items, parts);
      if (parts == 0) {
        CHECK(big + small == 0);
        continue;
      }
      CHECK(big + small == parts);
      CHECK(big * gccs::ceildiv(items, parts) + small * (items / parts) == items);
      if (items % parts == 0)
        CHECK(small == 0);
    }
}

TEST_CASE("gccs StructHelper: lexicographic comparisons over named members", "[gccs][compat]") {
  const Params p1{1, "b", {2}}, p2{1, "b", {3}}, p3{0, "z", {9}};
  CHECK(p1 < p2);
  CHECK_FALSE(p2 < p1);
  CHECK(p3 < p1);
  CHECK_FALSE(p1 < p1);
  CHECK(p1 == Params{1, "b", {2}});
  CHECK_FALSE(p1 == p2);
  std::set<Params> sorted{p2, p1, p3};
  CHECK(sorted.begin()->a == 0);
  Options o1, o2;
  o2.flag = true;
  CHECK(o1 < o2);
  CHECK(std::get<1>(Options::helper.tie(o2)) == true);
  // GC_DEPRECATED is a real deprecation (the build's -Werror would reject the call).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CHECK(oldApi() == 1);
#pragma GCC diagnostic pop
}

TEST_CASE("gccs ArrayRef is poplar::ArrayRef, deduced from a vector", "[gccs][compat]") {
  static_assert(std::is_same<poplar::ArrayRef<float>, gccs::ArrayRef<float>>::value, "");
  const std::vector<float> in{1.0f, -2.0f, 0.5f};
  auto ref = gccs::ArrayRef(in); // CTAD, as PopLibs' tests write it
  static_assert(std::is_same<decltype(ref), gccs::ArrayRef<float>>::value, "");
  CHECK(ref.size() == 3);
  // Passed to Poplar's API taking ArrayRef<float>.
  std::vector<char> raw(in.size() * 4);
  poplar::convertToDeviceType(poplar::FLOAT, gccs::ArrayRef(in), raw.data());
  std::vector<float> out(in.size());
  poplar::convertFromDeviceType(poplar::FLOAT, raw.data(), gccs::ArrayRef(out));
  CHECK(out == in);
  CHECK(gccs::ArrayRef<int>({1, 2}) == poplar::ArrayRef<int>(std::vector<int>{1, 2}));
}

TEST_CASE("gccs generic_id: typed identifiers", "[gccs][compat]") {
  const NodeId a(3), b(5);
  CHECK(a < b);
  CHECK(a != b);
  CHECK(a.id == 3);
  CHECK(static_cast<std::uint32_t>(b) == 5);
  CHECK(NodeId() == NodeId(0));
  std::unordered_set<EdgeId> edges{EdgeId(1), EdgeId(1), EdgeId(2)};
  CHECK(edges.size() == 2);
  static_assert(!std::is_convertible<NodeId, EdgeId>::value, "ids of different tags do not mix");
  static_assert(!std::is_convertible<unsigned, NodeId>::value, "an integer is not an id unless asked");
}

// A planner written the way PopLibs' reduction and conv planners write theirs.
struct Estimates {
  popsolver::Variable cycles;
  popsolver::Variable tempBytes;
};

static Estimates buildModel(popsolver::Model &m, unsigned numElems, unsigned numTiles, unsigned vectorWidth) {
  const auto tiles = m.addVariable(1, numTiles, "tiles");
  const auto perTile = m.ceildiv(m.addConstant(numElems), tiles, "perTile");
  const auto cycles = m.call<unsigned>(
      {perTile, tiles}, [vectorWidth](const std::vector<unsigned> &values) -> popsolver::DataType {
        const auto elems = values[0];
        const auto usedTiles = values[1];
        return popsolver::DataType{gccs::ceildiv(elems, vectorWidth) * 2 + 10 + usedTiles / 4};
      });
  const auto limited =
      m.call<unsigned>({perTile}, [](const auto &values) -> boost::optional<popsolver::DataType> {
        if (values[0] > 1000)
          return boost::none;
        return popsolver::DataType{values[0]};
      });
  const auto bytes = m.product({limited, m.addConstant(4u)});
  m.lessOrEqual(bytes, popsolver::DataType{4000});
  return {cycles, bytes};
}

TEST_CASE("gccs popsolver: PopLibs-shaped planner", "[gccs][compat]") {
  popsolver::Model m;
  const auto e = buildModel(m, 5000, 16, 4);
  popsolver::Solution s;
  s = m.minimize({e.cycles, e.tempBytes});
  REQUIRE(s.validSolution());
  unsigned best = ~0u, bestTiles = 0;
  for (unsigned t = 1; t <= 16; ++t) {
    const unsigned per = gccs::ceildiv(5000u, t);
    if (per > 1000)
      continue;
    const unsigned c = gccs::ceildiv(per, 4u) * 2 + 10 + t / 4;
    if (c < best) {
      best = c;
      bestTiles = t;
    }
  }
  CHECK(s[e.cycles].getAs<unsigned>() == best);
  CHECK(s[e.tempBytes].getAs<std::size_t>() == gccs::ceildiv(5000u, bestTiles) * 4);
  const popsolver::ConstraintEvaluationSummary evaluated = s.constraintsEvaluated();
  CHECK(evaluated > 0);
  // Plan constraints read from a property tree, as ConvOptions reads them.
  boost::property_tree::ptree planConstraints;
  planConstraints.put("tiles", "7");
  const auto fixed = planConstraints.get_optional<popsolver::DataType>("tiles");
  REQUIRE(fixed);
  CHECK(*fixed == popsolver::DataType{7});
  const auto highest = popsolver::DataType::max();
  CHECK(highest != s[e.cycles]);
}

TEST_CASE("gccs::ArrayRef<const T> is the same view as ArrayRef<T> (issue 24)", "[compat][gccs]") {
  const std::vector<float> values = {1.0f, -2.0f, 0.5f};
  const gccs::ArrayRef<const float> view(values); // from a vector of float
  CHECK(view.size() == 3);
  CHECK(view.vec() == values);
  const gccs::ArrayRef<float> plain = view; // and to the view without const
  CHECK(plain.data() == values.data());
  const gccs::ArrayRef<const float> back = plain;
  CHECK(back.size() == 3);
  // As PopLibs' UnaryCodeletsTest converts one float to fp8: through Poplar's ArrayRef<float>
  // parameter, giving the same bytes as the plain view.
  const poplar::QuarterMetadata md(poplar::QuarterMetadata::Format::F143, 0);
  const float one = values[0];
  unsigned char fromConst = 0, fromPlain = 1;
  poplar::convertToDeviceType(poplar::QUARTER, md, gccs::ArrayRef<const float>(&one, 1U), &fromConst);
  poplar::convertToDeviceType(poplar::QUARTER, md, gccs::ArrayRef<float>(&one, 1U), &fromPlain);
  CHECK(fromConst == fromPlain);
  float roundTrip = 0;
  poplar::convertFromDeviceType(poplar::QUARTER, md, &fromConst, gccs::ArrayRef<float>(&roundTrip, 1U));
  CHECK(roundTrip == 1.0f); // 1.0 is exact in F143
}
