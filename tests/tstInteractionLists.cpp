// SPDX-License-Identifier: BSD-3-Clause
// Interaction lists: for every target particle the near and far lists cover every particle
// exactly once (fmm and treecode), the acceptance test holds for every far pair, a sparse
// leaf never expands a pair whose larger cell it is, the lists are deterministic, periodic
// lists cover every particle of every near image once, and bad theta is rejected.
#include <kfmm/Options.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

using Catch::Matchers::ContainsSubstring;
using kfmm::Method;

namespace
{

template <class View>
auto toHost(View const &v)
{
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
}

/// Checks one list's CSR shape, and that no row holds a source twice, and returns its host
/// copy.
template <class List>
auto hostList(List const &list, int rows)
{
  auto offsets = toHost(list.offsets);
  auto sources = toHost(list.sources);
  REQUIRE(list.numRows() == rows);
  REQUIRE(offsets(0) == 0);
  for (int r = 0; r < rows; ++r)
  {
    REQUIRE(offsets(r) <= offsets(r + 1));
    std::vector<int> row(sources.data() + offsets(r), sources.data() + offsets(r + 1));
    std::sort(row.begin(), row.end());
    REQUIRE(std::adjacent_find(row.begin(), row.end()) == row.end());
  }
  REQUIRE(offsets(rows) == list.size);
  REQUIRE(static_cast<std::int64_t>(sources.extent(0)) == list.size);
  return std::make_pair(offsets, sources);
}

/// Host copies of a tree's arrays that the checks read.
template <class Tree>
struct HostTree
{
  explicit HostTree(Tree const &tree)
      : n(static_cast<int>(tree.numParticles())), num_cells(tree.numCells()),
        num_leaves(tree.numLeaves()), begin(toHost(tree.particle_begin)),
        end(toHost(tree.particle_end)), parent(toHost(tree.parent)),
        child_count(toHost(tree.child_count)), centre(toHost(tree.centre)),
        radius(toHost(tree.radius)), level(toHost(tree.level)), leaves(toHost(tree.leaves))
  {
  }

  int n, num_cells, num_leaves;
  decltype(toHost(std::declval<Tree>().particle_begin)) begin, end;
  decltype(toHost(std::declval<Tree>().parent)) parent;
  decltype(toHost(std::declval<Tree>().child_count)) child_count;
  decltype(toHost(std::declval<Tree>().centre)) centre;
  decltype(toHost(std::declval<Tree>().radius)) radius;
  decltype(toHost(std::declval<Tree>().level)) level;
  decltype(toHost(std::declval<Tree>().leaves)) leaves;
};

/// Whether `ranges` of cells' particles, nested or disjoint, cover [0, n) each particle
/// exactly once: sorted, they follow one another from 0 to n. Sorts them.
inline bool coverOnce(std::vector<std::pair<int, int>> &ranges, int n)
{
  std::sort(ranges.begin(), ranges.end());
  int next = 0;
  for (auto const &r : ranges)
    next = r.first == next ? r.second : -1;
  return next == n;
}

/// For every target leaf (hence every target particle): the particle ranges of its P2P
/// sources and of its far-field cells (M2L of the leaf and its ancestors in fmm mode, M2P of
/// the leaf in treecode mode) tile [0, N) exactly: every particle once. Also: the acceptance
/// test holds for every far pair and fails for every near pair but those of a sparse leaf
/// (at most lists.sparse.leaf particles) within lists.sparse.pairs particle pairs, no such
/// far pair's larger cell is a sparse leaf (of the sources only, in treecode mode, which
/// expands no target cell), near
/// sources are leaves, each leaf is in its own P2P row, and the lists' count of near pairs
/// is that of their P2P rows.
template <class Tree, class Lists>
void checkLists(Tree const &tree, Lists const &lists)
{
  HostTree<Tree> const h(tree);
  auto const [m2l_offsets, m2l] = hostList(lists.m2l, h.num_cells);
  auto const [m2p_offsets, m2p] = hostList(lists.m2p, h.num_leaves);
  auto const [p2p_offsets, p2p] = hostList(lists.p2p, h.num_leaves);
  bool const treecode = lists.method == Method::treecode;
  if (treecode)
    CHECK(lists.m2l.size == 0);
  else
    CHECK(lists.m2p.size == 0);

  // The acceptance test, evaluated with a relative slack of `slack` on the distance: the
  // device may round the distance differently (fused multiply-adds), so a far pair is
  // checked with slack 1e-12 and a near pair with -1e-12. The classic rule is checked on
  // the boxes: their gap along the widest axis, a whole number of finer sides, is at least
  // the larger side; the slack is a quarter of the finer side.
  double const theta = lists.theta;
  bool const classic = lists.acceptance == kfmm::Acceptance::classic;
  auto const accepted = [&](int t, int s, double slack) {
    double const dx = h.centre(t, 0) - h.centre(s, 0);
    double const dy = h.centre(t, 1) - h.centre(s, 1);
    double const dz = h.centre(t, 2) - h.centre(s, 2);
    if (classic)
    {
      double const ht = std::ldexp(tree.cube.side, -h.level(t));
      double const hs = std::ldexp(tree.cube.side, -h.level(s));
      double const gap = std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) - (ht + hs) / 2;
      return gap >= std::max(ht, hs) - (slack > 0 ? 0.25 : -0.25) * std::min(ht, hs) &&
             std::sqrt(dx * dx + dy * dy + dz * dz) * (1 + slack) - h.radius(t) - h.radius(s) >=
                 lists.separation;
    }
    // The theta rule (tree::detail::thetaAccepts), the particles at least the lists'
    // separation apart.
    double const d = std::sqrt(dx * dx + dy * dy + dz * dz) * (1 + slack);
    double const ratio = theta / (2 - theta);
    bool const ratios = !lists.equal_ratios || (h.radius(s) < ratio * (d - h.radius(t)) &&
                                                h.radius(t) < ratio * (d - h.radius(s)));
    return h.radius(t) + h.radius(s) < theta * d && ratios &&
           d - h.radius(t) - h.radius(s) >= lists.separation;
  };
  // A sparse leaf (tree::detail::PairRule::sparseLeafPair): a leaf of at most
  // lists.sparse.leaf particles. `larger` is the cell the traversal splits first (the
  // larger radius, or the coarser box of the classic rule), where the two differ;
  // `direct`, whether a pair is within the rule's particle pairs.
  auto const sparse = [&](int c) {
    return h.child_count(c) == 0 && h.end(c) - h.begin(c) <= lists.sparse.leaf;
  };
  auto const direct = [&](int a, int b) {
    return double(h.end(a) - h.begin(a)) * double(h.end(b) - h.begin(b)) <= lists.sparse.pairs;
  };
  auto const larger = [&](int a, int b) {
    return classic ? h.level(a) < h.level(b) : h.radius(a) > h.radius(b);
  };
  // Plain loops that remember the first failure: one assertion per property, not per entry.
  int bad_m2l = -1, sparse_m2l = -1;
  for (int c = 0; c < h.num_cells && bad_m2l < 0; ++c)
    for (auto e = m2l_offsets(c); e < m2l_offsets(c + 1); ++e)
    {
      int const s = m2l(e);
      if (!accepted(c, s, 1e-12))
        bad_m2l = c;
      if (direct(c, s) && ((sparse(c) && larger(c, s)) || (sparse(s) && larger(s, c))))
        sparse_m2l = sparse_m2l < 0 ? c : sparse_m2l;
    }
  CHECK(bad_m2l == -1);
  CHECK(sparse_m2l == -1); // first cell with an M2L pair whose larger cell is a sparse leaf

  int bad_near = -1, missing_self = -1, bad_far = -1, bad_cover = -1;
  std::uint64_t near_pairs = 0;
  std::vector<std::pair<int, int>> ranges;
  for (int j = 0; j < h.num_leaves; ++j)
  {
    int const leaf = h.leaves(j);
    ranges.clear();
    bool self = false;
    for (auto e = p2p_offsets(j); e < p2p_offsets(j + 1); ++e)
    {
      int const s = p2p(e);
      // An accepted pair of leaves is near only for a sparse leaf, which splits no further.
      bool const sparse_pair = direct(leaf, s) && (sparse(s) || (!treecode && sparse(leaf)));
      if (h.child_count(s) != 0 || (s != leaf && !sparse_pair && accepted(leaf, s, -1e-12)))
        bad_near = bad_near < 0 ? j : bad_near;
      self = self || s == leaf;
      ranges.emplace_back(h.begin(s), h.end(s));
      near_pairs +=
          std::uint64_t(h.end(leaf) - h.begin(leaf)) * std::uint64_t(h.end(s) - h.begin(s));
    }
    if (!self)
      missing_self = missing_self < 0 ? j : missing_self;
    for (auto e = m2p_offsets(j); e < m2p_offsets(j + 1); ++e)
    {
      int const s = m2p(e);
      if (!accepted(leaf, s, 1e-12) || (direct(leaf, s) && sparse(s) && larger(s, leaf)))
        bad_far = bad_far < 0 ? j : bad_far;
      ranges.emplace_back(h.begin(m2p(e)), h.end(m2p(e)));
    }
    for (int c = leaf; c >= 0; c = h.parent(c))
      for (auto e = m2l_offsets(c); e < m2l_offsets(c + 1); ++e)
        ranges.emplace_back(h.begin(m2l(e)), h.end(m2l(e)));
    if (!coverOnce(ranges, h.n))
      bad_cover = bad_cover < 0 ? j : bad_cover;
  }
  CHECK(bad_near == -1);     // first leaf row with a near source that is not a leaf or is far
  CHECK(missing_self == -1); // first leaf row without itself
  CHECK(bad_far == -1);      // first leaf row with an M2P source failing the test or sparse
  CHECK(bad_cover == -1);    // first leaf row whose particles do not see all once
  CHECK(lists.near_pairs == near_pairs);
}

/// Periodic lists (fmm, one tree whose cube is the period): for every target leaf and every
/// near image n (|n_d| <= PeriodicImage::reach), the particle ranges of its P2P sources and of
/// its ancestors' M2L sources in image n tile [0, N) exactly, so that every target particle
/// meets every particle of every near image once; every far pair passes the theta test at its
/// translated distance and every near pair of two different cells fails it; near sources are
/// leaves; and the lists' count of near pairs is that of their P2P rows.
template <class Tree, class Lists>
void checkPeriodicLists(Tree const &tree, Lists const &lists)
{
  using kfmm::tree::PeriodicImage;
  HostTree<Tree> const h(tree);
  auto const [m2l_offsets, m2l] = hostList(lists.m2l, h.num_cells);
  auto const [p2p_offsets, p2p] = hostList(lists.p2p, h.num_leaves);
  REQUIRE(lists.shift.period == tree.cube.side);
  int const images = 2 * PeriodicImage::reach + 1;
  auto const image = [&](int s) {
    return ((PeriodicImage::offset(s, 0) + PeriodicImage::reach) * images +
            PeriodicImage::offset(s, 1) + PeriodicImage::reach) *
               images +
           PeriodicImage::offset(s, 2) + PeriodicImage::reach;
  };
  auto const accepted = [&](int t, int s, double slack) {
    int const c = PeriodicImage::cellOf(s);
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
    {
      double const dk = h.centre(t, k) - h.centre(c, k) - lists.shift(s, k);
      d2 += dk * dk;
    }
    return h.radius(t) + h.radius(c) < lists.theta * std::sqrt(d2) * (1 + slack);
  };
  int bad_m2l = -1;
  for (int c = 0; c < h.num_cells && bad_m2l < 0; ++c)
    for (auto e = m2l_offsets(c); e < m2l_offsets(c + 1); ++e)
      if (!accepted(c, m2l(e), 1e-12))
        bad_m2l = c;
  CHECK(bad_m2l == -1); // first cell with an M2L pair failing the test

  int bad_near = -1, bad_cover = -1;
  std::uint64_t near_pairs = 0;
  std::vector<std::vector<std::pair<int, int>>> ranges(images * images * images);
  for (int j = 0; j < h.num_leaves; ++j)
  {
    int const leaf = h.leaves(j);
    for (auto &r : ranges)
      r.clear();
    for (auto e = p2p_offsets(j); e < p2p_offsets(j + 1); ++e)
    {
      int const s = p2p(e);
      int const c = PeriodicImage::cellOf(s);
      if (h.child_count(c) != 0 || (s != leaf && accepted(leaf, s, -1e-12)))
        bad_near = bad_near < 0 ? j : bad_near;
      ranges[image(s)].emplace_back(h.begin(c), h.end(c));
      near_pairs +=
          std::uint64_t(h.end(leaf) - h.begin(leaf)) * std::uint64_t(h.end(c) - h.begin(c));
    }
    for (int c = leaf; c >= 0; c = h.parent(c))
      for (auto e = m2l_offsets(c); e < m2l_offsets(c + 1); ++e)
      {
        int const s = m2l(e);
        ranges[image(s)].emplace_back(h.begin(PeriodicImage::cellOf(s)),
                                      h.end(PeriodicImage::cellOf(s)));
      }
    for (auto &r : ranges)
      if (!coverOnce(r, h.n))
        bad_cover = bad_cover < 0 ? j : bad_cover;
  }
  CHECK(bad_near == -1);  // first leaf row with a near source that is not a leaf or is far
  CHECK(bad_cover == -1); // first leaf row missing a particle of an image, or meeting it twice
  CHECK(lists.near_pairs == near_pairs);
}

using kfmm::test::generated;
using kfmm::test::handMade;
using kfmm::test::Positions;

/// checkLists on the lists of both methods and both rules.
template <class Config>
void checkBothMethods(Positions<Config> const &x, int leaf_size, double theta,
                      double separation = 0, bool equal_ratios = false,
                      kfmm::tree::SparseLeaves sparse = {})
{
  typename Config::execution_space space;
  auto const tree = kfmm::tree::buildOctree(space, x, leaf_size);
  for (auto const method : {Method::fmm, Method::treecode})
    for (auto const acceptance : {kfmm::Acceptance::theta, kfmm::Acceptance::classic})
    {
      CAPTURE(method == Method::fmm ? "fmm" : "treecode", kfmm::acceptanceName(acceptance), theta,
              leaf_size);
      auto const lists = kfmm::tree::buildInteractionLists(space, tree, theta, method, acceptance,
                                                           separation, equal_ratios, sparse);
      CHECK(lists.sparse.leaf == sparse.leaf);
      CHECK(lists.sparse.pairs == sparse.pairs);
      CHECK(lists.separation == separation);
      CHECK(lists.equal_ratios == equal_ratios);
      CHECK(lists.method == method);
      CHECK(lists.theta == theta);
      CHECK(lists.acceptance == acceptance);
      checkLists(tree, lists);
    }
}

template <class List>
bool sameList(List const &a, List const &b)
{
  auto const ao = toHost(a.offsets);
  auto const bo = toHost(b.offsets);
  auto const as = toHost(a.sources);
  auto const bs = toHost(b.sources);
  return ao.size() == bo.size() && as.size() == bs.size() &&
         std::equal(ao.data(), ao.data() + ao.size(), bo.data()) &&
         std::equal(as.data(), as.data() + as.size(), bs.data());
}

} // namespace

TEMPLATE_LIST_TEST_CASE("interaction lists cover every particle once on the five distributions",
                        "[tree][lists]", kfmm::test::Configs)
{
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer,
                                     kfmm::Distribution::sphere, kfmm::Distribution::ellipsoid,
                                     kfmm::Distribution::cylinder);
  double const theta = GENERATE(0.4, 1.0);
  // The plain rule, and the rule with a least separation of far pairs (what softening asks
  // for) and the test of unequal cells that separate targets take (thetaAccepts); without
  // and with the sparse leaves' direct pairs (leaves of up to 3 of at most 8 particles), all
  // of them or those of up to 40 particle pairs.
  bool const equal_ratios = GENERATE(false, true);
  double const separation = equal_ratios ? 0.2 : 0.0;
  double const sparse_leaf = GENERATE(0.0, 3.0);
  double const sparse_pairs = GENERATE(40.0, 1e9);
  CAPTURE(kfmm::distributionName(distribution), separation, equal_ratios, sparse_leaf,
          sparse_pairs);
  auto const x = generated<TestType>(distribution, 2000);
  checkBothMethods<TestType>(x, 8, theta, separation, equal_ratios, {sparse_leaf, sparse_pairs});
}

TEMPLATE_LIST_TEST_CASE("interaction lists of degenerate inputs", "[tree][lists]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  SECTION("no particles")
  {
    Positions<TestType> x("kfmm::test::positions", 0);
    typename TestType::execution_space space;
    auto const tree = kfmm::tree::buildOctree(space, x, 4);
    auto const lists = kfmm::tree::buildInteractionLists(space, tree, 0.5);
    CHECK(lists.m2l.size == 0);
    CHECK(lists.p2p.size == 0);
    checkBothMethods<TestType>(x, 4, 0.5);
  }
  SECTION("one particle")
  {
    auto const x = handMade<TestType>(1, [](auto &h) { h(0, 0) = h(0, 1) = h(0, 2) = Real(3); });
    checkBothMethods<TestType>(x, 1, 0.5);
  }
  SECTION("two particles")
  {
    auto const x = handMade<TestType>(2, [](auto &h) {
      h(0, 0) = Real(-1);
      h(0, 1) = h(0, 2) = Real(0);
      h(1, 0) = Real(1);
      h(1, 1) = h(1, 2) = Real(0);
    });
    checkBothMethods<TestType>(x, 1, 1.0);
    checkBothMethods<TestType>(x, 1, 0.1);
  }
  SECTION("all particles at one point")
  {
    auto const x = handMade<TestType>(40, [](auto &h) {
      for (std::size_t i = 0; i < h.extent(0); ++i)
      {
        h(i, 0) = Real(-0.5);
        h(i, 1) = Real(2);
        h(i, 2) = Real(1);
      }
    });
    checkBothMethods<TestType>(x, 3, 0.5);
  }
  SECTION("two tight clusters far apart")
  {
    auto const x = handMade<TestType>(600, [](auto &h) {
      for (std::size_t i = 0; i < h.extent(0); ++i)
      {
        double const spread = 1e-3 * double(i % 20) / 20;
        double const side = i % 2 == 0 ? -100 : 100;
        h(i, 0) = Real(side + spread);
        h(i, 1) = Real(spread * double((i / 20) % 5));
        h(i, 2) = Real(-spread * double(i % 7));
      }
    });
    checkBothMethods<TestType>(x, 4, 0.5);
  }
}

TEMPLATE_LIST_TEST_CASE("interaction lists of a Plummer sphere deeper than 15 levels",
                        "[tree][lists]", kfmm::test::Configs)
{
  typename TestType::execution_space space;
  auto const x = generated<TestType>(kfmm::Distribution::plummer, 100000, 3);
  auto const tree = kfmm::tree::buildOctree(space, x, 1);
  CAPTURE(tree.depth(), tree.numLeaves());
  REQUIRE(tree.depth() > 15);
  // theta = 1 keeps the lists (and the test) short: with leaf size 1 a leaf's treecode list
  // holds about 200 cells at theta 1 and 700 at theta 0.6. The treecode lists, four times
  // longer than the fmm ones, are checked once per execution space (in double).
  checkLists(tree, kfmm::tree::buildInteractionLists(space, tree, 1.0, Method::fmm));
  if (std::is_same<typename TestType::real_type, double>::value)
    checkLists(tree, kfmm::tree::buildInteractionLists(space, tree, 1.0, Method::treecode));
}

TEMPLATE_LIST_TEST_CASE("classic lists of a full grid are the textbook neighbour and "
                        "interaction lists",
                        "[tree][lists]", kfmm::test::Configs)
{
  // One particle at the centre of each cell of an 8 x 8 x 8 grid, leaf size 1: every leaf is
  // at level 3. A leaf's near list is its 3 x 3 x 3 block of neighbours clipped to the grid,
  // and a cell's M2L list holds the children of its parent's neighbours that are not its own
  // neighbours: at most 6^3 - 3^3 = 189 (Greengard & Rokhlin 1987).
  using Real = typename TestType::real_type;
  int const side = 8;
  auto const x = handMade<TestType>(side * side * side, [&](auto &h) {
    for (int i = 0; i < side * side * side; ++i)
    {
      h(i, 0) = Real(i % side) + Real(0.5);
      h(i, 1) = Real((i / side) % side) + Real(0.5);
      h(i, 2) = Real(i / (side * side)) + Real(0.5);
    }
  });
  typename TestType::execution_space space;
  auto const tree = kfmm::tree::buildOctree(space, x, 1);
  REQUIRE(tree.depth() == 3);
  REQUIRE(tree.numLeaves() == side * side * side);
  auto const lists =
      kfmm::tree::buildInteractionLists(space, tree, 0.5, Method::fmm, kfmm::Acceptance::classic);
  checkLists(tree, lists);

  auto const [p2p_offsets, p2p] = hostList(lists.p2p, tree.numLeaves());
  auto const [m2l_offsets, m2l] = hostList(lists.m2l, tree.numCells());
  auto const leaves = toHost(tree.leaves);
  auto const begin = toHost(tree.particle_begin);
  auto const permutation = toHost(tree.permutation);
  auto const hx = toHost(x);
  // The grid index of a leaf, from its one particle (x is in the caller's order).
  auto const index = [&](int leaf, int axis) {
    return static_cast<int>(std::floor(hx(permutation(begin(leaf)), axis)));
  };
  auto const span = [&](int i) { return std::min(i + 1, side - 1) - std::max(i - 1, 0) + 1; };
  int wrong_near = -1;
  for (int j = 0; j < tree.numLeaves(); ++j)
  {
    int const leaf = leaves(j);
    auto const expected = span(index(leaf, 0)) * span(index(leaf, 1)) * span(index(leaf, 2));
    if (p2p_offsets(j + 1) - p2p_offsets(j) != expected)
      wrong_near = wrong_near < 0 ? j : wrong_near;
  }
  CHECK(wrong_near == -1);
  std::int64_t longest = 0;
  for (int c = 0; c < tree.numCells(); ++c)
    longest = std::max(longest, m2l_offsets(c + 1) - m2l_offsets(c));
  CHECK(longest == 189);
}

TEMPLATE_LIST_TEST_CASE("interaction lists are deterministic", "[tree][lists]", kfmm::test::Configs)
{
  typename TestType::execution_space space;
  auto const x = generated<TestType>(kfmm::Distribution::ellipsoid, 5000, 9);
  auto const tree = kfmm::tree::buildOctree(space, x, 16);
  for (auto const method : {Method::fmm, Method::treecode})
  {
    auto const a = kfmm::tree::buildInteractionLists(space, tree, 0.5, method);
    auto const b = kfmm::tree::buildInteractionLists(space, kfmm::tree::buildOctree(space, x, 16),
                                                     0.5, method);
    CHECK(sameList(a.m2l, b.m2l));
    CHECK(sameList(a.m2p, b.m2p));
    CHECK(sameList(a.p2p, b.p2p));
    CHECK(a.rounds == b.rounds);
  }
}

TEMPLATE_LIST_TEST_CASE("interaction lists do not depend on the traversal's first capacities",
                        "[tree][lists]", kfmm::test::Configs)
{
  // Capacities a thousandth of the expected sizes overflow in the first rounds: the
  // traversal runs again with more room, until everything fits.
  typename TestType::execution_space space;
  auto const x = generated<TestType>(kfmm::Distribution::plummer, 5000, 4);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto &memory = kfmm::detail::Workspace<typename TestType::memory_space>::direct();
  for (auto const method : {Method::fmm, Method::treecode})
  {
    CAPTURE(method == Method::fmm ? "fmm" : "treecode");
    auto const expected = kfmm::tree::buildInteractionLists(space, tree, 0.5, method);
    auto const grown = kfmm::tree::detail::buildInteractionListsIn(
        space, memory, tree, tree, 0.5, method, kfmm::Acceptance::theta, 0, false, {}, 1e-3);
    CHECK(sameList(expected.m2l, grown.m2l));
    CHECK(sameList(expected.m2p, grown.m2p));
    CHECK(sameList(expected.p2p, grown.p2p));
    CHECK(expected.rounds == grown.rounds);
    checkLists(tree, grown);
  }
}

TEMPLATE_LIST_TEST_CASE("periodic interaction lists cover every particle of every near image once",
                        "[tree][lists][periodic]", kfmm::test::Configs)
{
  // Both ways of pairing cells with images (tree::ImagePairs): mutual pairs, where (a, b + n)
  // also gives (b, a - n), and directed ones.
  using kfmm::tree::ImagePairs;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  double const theta = GENERATE(0.5, 0.8);
  auto const image_pairs = GENERATE(ImagePairs::mutual, ImagePairs::directed);
  CAPTURE(kfmm::distributionName(distribution), theta, image_pairs == ImagePairs::mutual);
  auto const x = generated<TestType>(distribution, 2000, 3);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto &memory = kfmm::detail::Workspace<typename TestType::memory_space>::direct();
  auto const build = [&](double capacity_factor) {
    return kfmm::tree::detail::buildInteractionListsIn(
        space, memory, tree, tree, theta, Method::fmm, kfmm::Acceptance::theta, 0, false, {},
        capacity_factor, static_cast<kfmm::tree::detail::NoFarEntriesHook *>(nullptr), true,
        image_pairs);
  };
  auto const lists = build(1);
  checkPeriodicLists(tree, lists);
  // Capacities a thousandth of the expected ones: the same lists after the traversal's retry.
  auto const grown = build(1e-3);
  CHECK(sameList(lists.m2l, grown.m2l));
  CHECK(sameList(lists.p2p, grown.p2p));
}

TEMPLATE_LIST_TEST_CASE("interaction lists reject theta outside (0, 1]",
                        "[tree][lists][validation]", kfmm::test::Configs)
{
  typename TestType::execution_space space;
  auto const x = generated<TestType>(kfmm::Distribution::uniform, 100);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  double const theta = GENERATE(0.0, -0.5, 1.0000001, 2.0, std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::infinity());
  CAPTURE(theta);
  auto const method = GENERATE(Method::fmm, Method::treecode);
  CHECK_THROWS_AS(kfmm::tree::buildInteractionLists(space, tree, theta, method), kfmm::Exception);
  CHECK_THROWS_WITH(kfmm::tree::buildInteractionLists(space, tree, theta, method),
                    ContainsSubstring("'theta'"));
  CHECK_NOTHROW(kfmm::tree::buildInteractionLists(space, tree, 1.0, method));
}

TEMPLATE_LIST_TEST_CASE("interaction lists reject negative bounds of sparse leaves",
                        "[tree][lists][validation]", kfmm::test::Configs)
{
  typename TestType::execution_space space;
  auto const x = generated<TestType>(kfmm::Distribution::uniform, 100);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto const build = [&](Method method, double sparse_leaf, double sparse_pairs) {
    return kfmm::tree::buildInteractionLists(space, tree, 0.5, method, kfmm::Acceptance::theta, 0,
                                             false, {sparse_leaf, sparse_pairs});
  };
  for (auto const method : {Method::fmm, Method::treecode})
  {
    CHECK_THROWS_WITH(build(method, -1, 100), ContainsSubstring("'sparse' must be >= 0"));
    CHECK_THROWS_WITH(build(method, 4, -1), ContainsSubstring("'sparse' must be >= 0"));
    CHECK_NOTHROW(build(method, 4, 100));
  }
}

TEMPLATE_LIST_TEST_CASE("a sparse leaf beside a cluster meets it directly", "[tree][lists]",
                        kfmm::test::Configs)
{
  // 300 coincident points and one more: the lone point's leaf is a large cell, and the
  // cluster's cells that it accepts are small. Without the sparse leaves' rule the pair is
  // far (M2L, or M2P both ways in the treecode); with it, the cluster's P2P row holds the
  // lone leaf, and the lone leaf's row the cluster (fmm) or its M2P row the cluster's
  // cells (treecode, which expands no target cell).
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  Positions<TestType> x("kfmm::test::positions", 301);
  auto const h = Kokkos::create_mirror_view(x);
  Kokkos::deep_copy(h, Real(0));
  h(300, 0) = 1;
  Kokkos::deep_copy(x, h);
  auto const tree = kfmm::tree::buildOctree(space, x, 64);
  for (auto const method : {Method::fmm, Method::treecode})
    for (double const sparse_leaf : {0.0, 1.0})
    {
      CAPTURE(method == Method::fmm ? "fmm" : "treecode", sparse_leaf);
      auto const lists = kfmm::tree::buildInteractionLists(
          space, tree, 0.7, method, kfmm::Acceptance::theta, 0, false, {sparse_leaf, 300});
      checkLists(tree, lists);
      bool const treecode = method == Method::treecode;
      CHECK((lists.m2l.size + lists.m2p.size > 0) == (sparse_leaf == 0 || treecode));
      std::uint64_t const direct = sparse_leaf == 0 ? 0 : treecode ? 300 : 2 * 300;
      CHECK(lists.near_pairs == 300u * 300 + 1 + direct);
    }
}
