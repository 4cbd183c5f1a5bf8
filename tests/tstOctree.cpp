// SPDX-License-Identifier: BSD-3-Clause
// The adaptive octree: structural invariants on the five distributions and on degenerate
// inputs, agreement with a build from keys sorted on the host, leaf radii measured from
// sorted particles, and bad input.
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/Permutation.hpp>
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
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "HostReads.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

using Catch::Matchers::ContainsSubstring;

namespace
{

using kfmm::test::onHost;

/// Every structural property the tree promises, checked on the host.
template <class Tree, class HostPositions>
void checkOctree(Tree const &tree, HostPositions const &x, int leaf_size)
{
  using kfmm::tree::max_level;
  using kfmm::tree::MortonKey;
  int const n = static_cast<int>(x.extent(0));
  auto const keys = onHost(tree.keys);
  auto const perm = onHost(tree.permutation);
  auto const cell_keys = onHost(tree.cell_keys);
  auto const level = onHost(tree.level);
  auto const centre = onHost(tree.centre);
  auto const radius = onHost(tree.radius);
  auto const begin = onHost(tree.particle_begin);
  auto const end = onHost(tree.particle_end);
  auto const first_child = onHost(tree.first_child);
  auto const child_count = onHost(tree.child_count);
  auto const parent = onHost(tree.parent);
  auto const leaves = onHost(tree.leaves);
  auto const &offsets = tree.level_offsets;
  auto const &cube = tree.cube;

  REQUIRE(tree.numParticles() == static_cast<std::size_t>(n));
  REQUIRE(perm.extent(0) == static_cast<std::size_t>(n));
  CHECK(tree.leaf_size == leaf_size);

  // The permutation is one, the keys are sorted and belong to the permuted particles.
  std::vector<int> seen(n, 0);
  for (int i = 0; i < n; ++i)
  {
    REQUIRE(perm(i) < static_cast<std::uint32_t>(n));
    ++seen[perm(i)];
    auto const p = perm(i);
    CHECK(keys(i) ==
          kfmm::tree::mortonKey(cube, double(x(p, 0)), double(x(p, 1)), double(x(p, 2))));
    if (i > 0)
      CHECK(keys(i - 1) <= keys(i));
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }));

  if (n == 0)
  {
    CHECK(tree.numLevels() == 0);
    CHECK(tree.numCells() == 0);
    CHECK(tree.numLeaves() == 0);
    return;
  }
  int const num_cells = tree.numCells();
  REQUIRE(tree.numLevels() >= 1);
  REQUIRE(tree.numLevels() <= max_level + 1);
  REQUIRE(offsets[0] == 0);
  REQUIRE(offsets[1] == 1);
  REQUIRE(cell_keys.extent(0) == static_cast<std::size_t>(num_cells));
  for (int l = 0; l < tree.numLevels(); ++l)
    REQUIRE(offsets[l] < offsets[l + 1]);
  CHECK(begin(0) == 0);
  CHECK(end(0) == n);
  CHECK(parent(0) == -1);

  double const sqrt3 = std::sqrt(3.0);
  int leaf_count = 0;
  for (int l = 0; l < tree.numLevels(); ++l)
  {
    for (int c = offsets[l]; c < offsets[l + 1]; ++c)
    {
      CAPTURE(l, c);
      REQUIRE(level(c) == l);
      REQUIRE(begin(c) < end(c)); // no empty cells
      int const count = end(c) - begin(c);
      // Inside a level: Morton order, disjoint increasing ranges.
      if (c > offsets[l])
      {
        CHECK(cell_keys(c - 1) < cell_keys(c));
        CHECK(end(c - 1) <= begin(c));
      }
      // The cell's key prefix is that of all its particles; the centre is the geometric one.
      int const shift = 3 * (max_level - l);
      for (int i = begin(c); i < end(c); ++i)
        REQUIRE((keys(i) >> shift) == cell_keys(c));
      double geometric[3];
      kfmm::tree::cellCentre(cube, cell_keys(c), l, geometric);
      // (Equal up to rounding: device compilers may fuse the multiply-add.)
      for (int d = 0; d < 3; ++d)
        CHECK(std::abs(centre(c, d) - geometric[d]) <= 1e-15 * cube.side);
      // Every particle lies within the radius; the radius within the half-diagonal.
      double const half_diagonal = 0.5 * sqrt3 * cube.side / double(1u << l);
      CHECK(radius(c) >= 0);
      CHECK(radius(c) <= half_diagonal * (1 + 1e-9));
      for (int i = begin(c); i < end(c); ++i)
      {
        auto const p = perm(i);
        double const dx = double(x(p, 0)) - centre(c, 0);
        double const dy = double(x(p, 1)) - centre(c, 1);
        double const dz = double(x(p, 2)) - centre(c, 2);
        REQUIRE(std::sqrt(dx * dx + dy * dy + dz * dz) <= radius(c) * (1 + 1e-12));
      }
      // The split rule: a cell splits exactly when it holds more than leaf_size particles
      // and is above level 21.
      bool const should_split = count > leaf_size && l < max_level;
      CHECK((child_count(c) > 0) == should_split);
      if (child_count(c) == 0)
      {
        CHECK(first_child(c) == -1);
        ++leaf_count;
        continue;
      }
      // Children: next level, linked back, Morton order, partitioning the parent's range.
      REQUIRE(child_count(c) <= 8);
      REQUIRE(first_child(c) >= offsets[l + 1]);
      REQUIRE(first_child(c) + child_count(c) <= offsets[l + 2]);
      int expected_begin = begin(c);
      for (int k = first_child(c); k < first_child(c) + child_count(c); ++k)
      {
        CHECK(parent(k) == c);
        CHECK((cell_keys(k) >> 3) == cell_keys(c));
        CHECK(begin(k) == expected_begin);
        expected_begin = end(k);
      }
      CHECK(expected_begin == end(c));
    }
  }
  // Every non-root cell is among its parent's children.
  for (int c = 1; c < num_cells; ++c)
  {
    int const p = parent(c);
    REQUIRE(p >= 0);
    CHECK(level(p) == level(c) - 1);
    CHECK(c >= first_child(p));
    CHECK(c < first_child(p) + child_count(p));
  }
  CHECK(tree.depth() == level(num_cells - 1));

  // The leaves, in particle order, hold every particle exactly once.
  REQUIRE(tree.numLeaves() == leaf_count);
  int next = 0;
  for (int j = 0; j < tree.numLeaves(); ++j)
  {
    int const c = leaves(j);
    REQUIRE(child_count(c) == 0);
    CHECK(begin(c) == next);
    next = end(c);
    CHECK((end(c) - begin(c) <= leaf_size || level(c) == max_level));
  }
  CHECK(next == n);
}

using kfmm::test::generated;
using kfmm::test::handMade;
using kfmm::test::Positions;

/// Two builds of one set of particles made the same cells: levels, keys, particle ranges,
/// links, radii and leaves.
template <class Tree>
void checkSameCells(Tree const &a, Tree const &b)
{
  REQUIRE(a.level_offsets == b.level_offsets);
  using kfmm::test::sameContents;
  CHECK(sameContents(a.cell_keys, b.cell_keys));
  CHECK(sameContents(a.particle_begin, b.particle_begin));
  CHECK(sameContents(a.particle_end, b.particle_end));
  CHECK(sameContents(a.first_child, b.first_child));
  CHECK(sameContents(a.parent, b.parent));
  CHECK(sameContents(a.radius, b.radius));
  CHECK(sameContents(a.leaves, b.leaves));
}

} // namespace

TEMPLATE_LIST_TEST_CASE("octree invariants on the five distributions", "[tree][octree]",
                        kfmm::test::Configs)
{
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer,
                                     kfmm::Distribution::sphere, kfmm::Distribution::ellipsoid,
                                     kfmm::Distribution::cylinder);
  int const leaf_size = GENERATE(1, 8, 64);
  std::size_t const n = 3000;
  CAPTURE(kfmm::distributionName(distribution), leaf_size);
  typename TestType::execution_space space;
  auto const x = generated<TestType>(distribution, n);
  auto const tree = kfmm::tree::buildOctree(space, x, leaf_size);
  checkOctree(tree, onHost(x), leaf_size);
  CHECK(tree.depth() >= 1);
}

TEMPLATE_LIST_TEST_CASE("octree from keys sorted on the host equals the full build",
                        "[tree][octree]", kfmm::test::Configs)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::plummer, kfmm::Distribution::sphere);
  std::size_t const n = 2500;
  int const leaf_size = 10;
  auto const x = generated<TestType>(distribution, n, 11);

  // Keys on the device, sorted (key, index) on the host with a stable sort.
  auto const cube = kfmm::tree::boundingCube(space, x);
  Kokkos::View<kfmm::tree::MortonKey *, Memory> keys("kfmm::test::keys", n);
  kfmm::tree::computeMortonKeys(space, cube, x, keys);
  auto keys_h = onHost(keys);
  std::vector<std::pair<kfmm::tree::MortonKey, std::uint32_t>> pairs(n);
  for (std::size_t i = 0; i < n; ++i)
    pairs[i] = {keys_h(i), static_cast<std::uint32_t>(i)};
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](auto const &a, auto const &b) { return a.first < b.first; });
  Kokkos::View<std::uint32_t *, Memory> perm("kfmm::test::permutation", n);
  auto perm_h = Kokkos::create_mirror_view(perm);
  for (std::size_t i = 0; i < n; ++i)
  {
    keys_h(i) = pairs[i].first;
    perm_h(i) = pairs[i].second;
  }
  Kokkos::deep_copy(keys, keys_h);
  Kokkos::deep_copy(perm, perm_h);

  auto const from_keys =
      kfmm::tree::buildOctreeFromSortedKeys(space, x, cube, keys, perm, leaf_size);
  checkOctree(from_keys, onHost(x), leaf_size);
  auto const full = kfmm::tree::buildOctree(space, x, leaf_size);
  checkSameCells(full, from_keys);
  using kfmm::test::sameContents;
  CHECK(sameContents(full.keys, from_keys.keys));
  CHECK(sameContents(full.permutation, from_keys.permutation));
}

/// The octree of `x` built with its levels' sizes read each way (tree/Octree.hpp,
/// buildCells: per level, in batches launched over bounds of their sizes, and counted from
/// the sorted keys first), each checked against the invariants and the three compared cell
/// for cell; returns the first.
template <class TestType>
auto builtEveryWay(Positions<TestType> const &x, int leaf_size)
{
  using Memory = typename TestType::memory_space;
  using kfmm::tree::detail::LevelReads;
  typename TestType::execution_space space;
  auto const cube = kfmm::tree::boundingCube(space, x);
  auto const build = [&](LevelReads reads) {
    return kfmm::tree::detail::buildOctreeOfValidInput(
        space, kfmm::detail::Workspace<Memory>::direct(), x, cube,
        kfmm::tree::detail::SplitByCount{leaf_size}, kfmm::tree::detail::GatheredLeafRadii{},
        reads);
  };
  auto const one_by_one = build(LevelReads::per_level);
  auto const xh = onHost(x);
  checkOctree(one_by_one, xh, leaf_size);
  for (LevelReads const reads : {LevelReads::batched, LevelReads::counted})
  {
    CAPTURE(reads == LevelReads::batched ? "batched" : "counted");
    auto const other = build(reads);
    checkOctree(other, xh, leaf_size);
    checkSameCells(other, one_by_one);
    using kfmm::test::sameContents;
    CHECK(sameContents(other.level, one_by_one.level));
    CHECK(sameContents(other.child_count, one_by_one.child_count));
  }
  return one_by_one;
}

TEMPLATE_LIST_TEST_CASE("octree levels read in batches or counted equal levels read one by one",
                        "[tree][octree]", kfmm::test::Configs)
{
  // The batched build launches each level over a bound of its size before the host knows
  // it, and drops the levels that turn out empty; the counted build finds every level's
  // size from the sorted keys before it builds any (tree/Octree.hpp, buildCells).
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer,
                                     kfmm::Distribution::sphere);
  auto const n = GENERATE(std::size_t(1), std::size_t(100), std::size_t(30000));
  int const leaf_size = GENERATE(1, 16, 200);
  CAPTURE(kfmm::distributionName(distribution), n, leaf_size);
  builtEveryWay<TestType>(generated<TestType>(distribution, n, 3), leaf_size);
}

/// The label of a tree build's levels' sizes, whose copies to the host the tests count.
std::string const level_sizes = "kfmm::tree::level_sizes";

TEMPLATE_LIST_TEST_CASE("a counted build reads the device once, however deep its tree",
                        "[tree][octree]", kfmm::test::Configs)
{
  // LevelReads::counted finds every level's size before it builds any, so that the host
  // reads them once, where the batched build reads once per batch of levels (n / 8 + 64 cells
  // at most), several times for this tree. On a device nothing else of the build comes back
  // to the host (the host backends' sort reads its own memory).
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const x = generated<TestType>(kfmm::Distribution::plummer, 30000, 3);
  auto const cube = kfmm::tree::boundingCube(space, x);
  space.fence();
  kfmm::test::HostReads const reads(level_sizes);
  auto const tree = kfmm::tree::detail::buildOctreeOfValidInput(
      space, kfmm::detail::Workspace<Memory>::direct(), x, cube,
      kfmm::tree::detail::SplitByCount{2}, kfmm::tree::detail::GatheredLeafRadii{},
      kfmm::tree::detail::LevelReads::counted, kfmm::tree::detail::KeyOrder::cell_levels);
  space.fence();
  int const size_reads = reads.ofLabel();
  int const device_reads = reads.fromDevice();
  CAPTURE(tree.numLevels());
  CHECK(tree.numLevels() >= 13);
  CHECK(size_reads == 1);
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible)
    CHECK(device_reads == 1);
}

TEMPLATE_LIST_TEST_CASE(
    "two trees built together read their levels once and equal each built alone", "[tree][octree]",
    kfmm::test::Configs)
{
  // A solver of sources and targets builds both trees at once (tree::detail::
  // buildTwoOctreesOfValidInput): where the levels are counted, both trees' sizes come back
  // in one read, and each tree must be the one its own build gives, empty sets included.
  using Memory = typename TestType::memory_space;
  using kfmm::tree::detail::KeyOrder;
  using kfmm::tree::detail::LevelReads;
  typename TestType::execution_space space;
  auto const num_targets = GENERATE(std::size_t(0), std::size_t(1), std::size_t(20000));
  auto const reads = GENERATE(LevelReads::counted, LevelReads::per_level);
  CAPTURE(num_targets, reads == LevelReads::counted ? "counted" : "per level");
  auto const sources = generated<TestType>(kfmm::Distribution::plummer, 30000, 3);
  auto const targets = generated<TestType>(kfmm::Distribution::uniform, num_targets, 4);
  auto const cube = kfmm::tree::boundingCube(space, sources, targets);
  kfmm::tree::detail::SplitByCount const rule{8};
  auto const alone = [&](auto const &x) {
    return kfmm::tree::detail::buildOctreeOfValidInput(
        space, kfmm::detail::Workspace<Memory>::direct(), x, cube, rule,
        kfmm::tree::detail::GatheredLeafRadii{}, LevelReads::per_level, KeyOrder::cell_levels);
  };
  space.fence();
  kfmm::test::HostReads const host_reads(level_sizes);
  auto const both = kfmm::tree::detail::buildTwoOctreesOfValidInput(
      space, kfmm::detail::Workspace<Memory>::direct(), sources, targets, cube, rule,
      kfmm::tree::detail::GatheredLeafRadii{}, kfmm::tree::detail::GatheredLeafRadii{}, reads,
      KeyOrder::cell_levels);
  space.fence();
  int const size_reads = host_reads.ofLabel();
  int const device_reads = host_reads.fromDevice();
  if (reads == LevelReads::counted)
  {
    CHECK(size_reads == 1);
    if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible)
      CHECK(device_reads == 1);
  }
  auto const source_tree = alone(sources);
  auto const target_tree = alone(targets);
  checkSameCells(both.first, source_tree);
  checkSameCells(both.second, target_tree);
  using kfmm::test::sameContents;
  CHECK(sameContents(both.first.permutation, source_tree.permutation));
  CHECK(sameContents(both.second.permutation, target_tree.permutation));
}

TEMPLATE_LIST_TEST_CASE("keys sorted only down to the cells' levels give the full build's octree",
                        "[tree][octree]", kfmm::test::Configs)
{
  // KeyOrder::cell_levels (tree/Octree.hpp) skips the sort's passes below a probe level when
  // every cell there holds at most leaf_size particles: the cells must be the same, and each
  // leaf must hold the same particles, in their input order where the passes were skipped.
  using Memory = typename TestType::memory_space;
  using kfmm::tree::detail::KeyOrder;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  auto const n = GENERATE(std::size_t(1), std::size_t(100), std::size_t(30000));
  int const leaf_size = GENERATE(1, 16, 200);
  CAPTURE(kfmm::distributionName(distribution), n, leaf_size);
  auto const x = generated<TestType>(distribution, n, 5);
  auto const cube = kfmm::tree::boundingCube(space, x);
  using kfmm::tree::detail::LevelReads;
  auto const build = [&](KeyOrder order, LevelReads reads) {
    return kfmm::tree::detail::buildOctreeOfValidInput(
        space, kfmm::detail::Workspace<Memory>::direct(), x, cube,
        kfmm::tree::detail::SplitByCount{leaf_size}, kfmm::tree::detail::GatheredLeafRadii{}, reads,
        order);
  };
  auto const full = build(KeyOrder::all_bits, LevelReads::per_level);
  auto const coarse = build(KeyOrder::cell_levels, LevelReads::per_level);
  checkSameCells(coarse, full);
  // The count of the levels' sizes reads the keys' unsorted bits too (tree::detail::
  // CountLevels): its tree must be the same.
  checkSameCells(build(KeyOrder::cell_levels, LevelReads::counted), full);

  auto const perm = onHost(coarse.permutation);
  auto const full_perm = onHost(full.permutation);
  auto const keys = onHost(coarse.keys);
  auto const begin = onHost(coarse.particle_begin);
  auto const end = onHost(coarse.particle_end);
  auto const leaves = onHost(coarse.leaves);
  std::vector<std::uint32_t> in_leaf, in_full_leaf;
  for (std::size_t j = 0; j < leaves.extent(0); ++j)
  {
    int const leaf = leaves(j);
    in_leaf.assign(&perm(begin(leaf)), &perm(begin(leaf)) + (end(leaf) - begin(leaf)));
    in_full_leaf.assign(&full_perm(begin(leaf)),
                        &full_perm(begin(leaf)) + (end(leaf) - begin(leaf)));
    std::sort(in_leaf.begin(), in_leaf.end());
    std::sort(in_full_leaf.begin(), in_full_leaf.end());
    REQUIRE(in_leaf == in_full_leaf);
  }
  auto const xh = onHost(x);
  for (std::size_t i = 0; i < n; ++i)
    CHECK(keys(i) == kfmm::tree::mortonKey(cube, double(xh(perm(i), 0)), double(xh(perm(i), 1)),
                                           double(xh(perm(i), 2))));
  // The uniform set of 30000 in leaves of 200 meets the probe (level 4, 7 particles per
  // cell on average): its keys stay unsorted below the cells' levels. A Plummer core fills
  // the probe's cells past any of these leaf sizes: every bit is sorted.
  bool const sorted = std::is_sorted(keys.data(), keys.data() + n);
  if (distribution == kfmm::Distribution::uniform && n == 30000 && leaf_size == 200)
    CHECK(!sorted);
  if (distribution == kfmm::Distribution::plummer && n == 30000)
  {
    CHECK(sorted);
    CHECK(kfmm::test::sameContents(coarse.permutation, full.permutation));
  }
}

TEMPLATE_LIST_TEST_CASE("leaf radii from particles sorted into the frame equal the gathered ones",
                        "[tree][octree]", kfmm::test::Configs)
{
  // The solver measures its leaves from the particles it sorted into its frame and
  // precision (tree::detail::SortedPoints); the tree's own build gathers the caller's through
  // the permutation. They differ by the rounding of the positions to Real and no more.
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  std::size_t const n = 4000;
  auto const x = generated<TestType>(distribution, n, 5);
  auto const tree = kfmm::tree::buildOctree(space, x, 16);
  auto const gathered = onHost(tree.radius);
  auto const frame = kfmm::detail::unitFrame(tree.cube, "test");
  Kokkos::View<Real *[3], Memory> sorted("kfmm::test::sorted", n);
  Kokkos::View<std::size_t, Memory> unresolved("kfmm::test::unresolved");
  kfmm::kernels::sortPositions(space, kfmm::detail::Workspace<Memory>::direct(), tree.permutation,
                               x, frame, sorted, unresolved);
  Kokkos::deep_copy(tree.radius, -1.0);
  kfmm::tree::detail::leafRadiiOf(
      space, tree, kfmm::tree::detail::SortedPoints<decltype(sorted)>{sorted, frame});
  auto const measured = onHost(tree.radius);
  auto const leaves = onHost(tree.leaves);
  // A unit coordinate is below 1 in magnitude: rounded to Real it moves by at most half an
  // ulp of 1 per axis, so a distance by sqrt(3) of that, 2^length_exponent in the caller's
  // units.
  double const tolerance = std::sqrt(3.0) * std::numeric_limits<Real>::epsilon() *
                               std::ldexp(1.0, frame.length_exponent) +
                           1e-12 * tree.cube.side;
  double worst = 0;
  for (std::size_t k = 0; k < leaves.extent(0); ++k)
  {
    int const c = leaves(k);
    REQUIRE(measured(c) >= 0);
    worst = std::max(worst, std::abs(measured(c) - gathered(c)));
  }
  CAPTURE(tolerance);
  CHECK(worst <= tolerance);
  CHECK(leaves.extent(0) > 100);
}

TEMPLATE_LIST_TEST_CASE("octree of degenerate inputs", "[tree][octree]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;

  SECTION("no particles")
  {
    Positions<TestType> x("kfmm::test::positions", 0);
    auto const tree = builtEveryWay<TestType>(x, 4);
    CHECK(tree.depth() == -1);
  }
  SECTION("one particle")
  {
    auto const x = handMade<TestType>(1, [](auto &h) {
      h(0, 0) = Real(0.25);
      h(0, 1) = Real(-3);
      h(0, 2) = Real(7);
    });
    auto const tree = builtEveryWay<TestType>(x, 1);
    CHECK(tree.numCells() == 1);
    CHECK(tree.numLeaves() == 1);
  }
  SECTION("two particles, leaf size 1")
  {
    auto const x = handMade<TestType>(2, [](auto &h) {
      h(0, 0) = Real(-1);
      h(0, 1) = h(0, 2) = Real(0);
      h(1, 0) = Real(1);
      h(1, 1) = h(1, 2) = Real(0.5);
    });
    auto const tree = builtEveryWay<TestType>(x, 1);
    CHECK(tree.numLeaves() == 2);
  }
  SECTION("all particles at one point: one chain down to level 21")
  {
    auto const x = handMade<TestType>(50, [](auto &h) {
      for (std::size_t i = 0; i < h.extent(0); ++i)
      {
        h(i, 0) = Real(1.5);
        h(i, 1) = Real(-2);
        h(i, 2) = Real(0.125);
      }
    });
    auto const tree = builtEveryWay<TestType>(x, 4);
    CHECK(tree.depth() == kfmm::tree::max_level);
    CHECK(tree.numCells() == kfmm::tree::max_level + 1);
    CHECK(tree.numLeaves() == 1);
  }
  SECTION("two tight clusters far apart")
  {
    auto const x = handMade<TestType>(400, [](auto &h) {
      for (std::size_t i = 0; i < h.extent(0); ++i)
      {
        double const spread = 1e-3 * double(i % 20) / 20;
        double const side = i % 2 == 0 ? -100 : 100;
        h(i, 0) = Real(side + spread);
        h(i, 1) = Real(spread * double((i / 20) % 5));
        h(i, 2) = Real(-spread * double(i % 7));
      }
    });
    auto const tree = builtEveryWay<TestType>(x, 8);
    CHECK(tree.depth() >= 15);
  }
}

TEMPLATE_LIST_TEST_CASE("octree of a deep Plummer sphere", "[tree][octree]", kfmm::test::Configs)
{
  auto const x = generated<TestType>(kfmm::Distribution::plummer, 100000, 3);
  auto const tree = builtEveryWay<TestType>(x, 1);
  CAPTURE(tree.depth(), tree.numCells(), tree.numLeaves());
  CHECK(tree.depth() > 15);
}

TEMPLATE_LIST_TEST_CASE("octree rejects bad input with a message naming it",
                        "[tree][octree][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const nan = std::numeric_limits<Real>::quiet_NaN();
  auto const inf = std::numeric_limits<Real>::infinity();
  auto const x = generated<TestType>(kfmm::Distribution::uniform, 100);

  SECTION("leaf_size < 1")
  {
    int const leaf_size = GENERATE(0, -3);
    CHECK_THROWS_AS(kfmm::tree::buildOctree(space, x, leaf_size), kfmm::Exception);
    CHECK_THROWS_WITH(kfmm::tree::buildOctree(space, x, leaf_size),
                      ContainsSubstring("'leaf_size'"));
  }
  SECTION("NaN or Inf coordinates name the first bad index")
  {
    auto const bad = GENERATE_COPY(nan, inf, -inf);
    auto h = onHost(x);
    h(71, 1) = bad;
    h(42, 2) = bad;
    Positions<TestType> y("kfmm::test::positions", 100);
    Kokkos::deep_copy(y, h);
    CHECK_THROWS_AS(kfmm::tree::buildOctree(space, y, 8), kfmm::Exception);
    CHECK_THROWS_WITH(kfmm::tree::buildOctree(space, y, 8),
                      ContainsSubstring("'positions'") && ContainsSubstring("index 42"));
  }
  SECTION("the entry point from sorted keys validates too")
  {
    using Memory = typename TestType::memory_space;
    Kokkos::View<kfmm::tree::MortonKey *, Memory> keys("kfmm::test::keys", 100);
    Kokkos::View<std::uint32_t *, Memory> perm("kfmm::test::permutation", 99);
    auto const cube = kfmm::tree::boundingCube(space, x);
    CHECK_THROWS_WITH(kfmm::tree::buildOctreeFromSortedKeys(space, x, cube, keys, perm, 0),
                      ContainsSubstring("'leaf_size'"));
    CHECK_THROWS_WITH(kfmm::tree::buildOctreeFromSortedKeys(space, x, cube, keys, perm, 4),
                      ContainsSubstring("'permutation'"));
  }
}
