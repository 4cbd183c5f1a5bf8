// SPDX-License-Identifier: BSD-3-Clause
// Morton keys and the bounding cube (kfmm/tree/Morton.hpp): bit patterns, the key
// convention, children order, and the cube on the edge cases of the input.
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/DeviceCube.hpp>
#include <kfmm/tree/Morton.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "TestTypes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace
{

using kfmm::tree::MortonKey;
constexpr std::uint32_t finest_cells = 1u << kfmm::tree::max_level;
constexpr MortonKey largest_key = (MortonKey(1) << 63) - 1;

template <class Config>
using Positions = Kokkos::View<double *[3], typename Config::memory_space>;

/// Positions on the device from a host list of points.
template <class Config>
Positions<Config> devicePositions(std::vector<std::array<double, 3>> const &points)
{
  Positions<Config> x("kfmm::test::positions", points.size());
  auto h = Kokkos::create_mirror_view(x);
  for (std::size_t i = 0; i < points.size(); ++i)
    for (int d = 0; d < 3; ++d)
      h(i, d) = points[i][d];
  Kokkos::deep_copy(x, h);
  return x;
}

template <class Config>
std::vector<MortonKey> keysOf(kfmm::tree::Cube const &cube, Positions<Config> const &x)
{
  typename Config::execution_space space;
  Kokkos::View<MortonKey *, typename Config::memory_space> keys("kfmm::test::keys", x.extent(0));
  kfmm::tree::computeMortonKeys(space, cube, x, keys);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, keys);
  return std::vector<MortonKey>(h.data(), h.data() + h.extent(0));
}

} // namespace

TEST_CASE("Morton: spreadBits and compactBits", "[tree][morton]")
{
  using kfmm::tree::detail::compactBits;
  using kfmm::tree::detail::spreadBits;
  // Bit b goes to bit 3b.
  CHECK(spreadBits(0) == 0);
  CHECK(spreadBits(1) == 1);
  CHECK(spreadBits(0b10) == 0b1000);
  CHECK(spreadBits(0b101) == 0b1000001);
  CHECK(spreadBits(finest_cells - 1) == 0x1249249249249249ULL);
  CHECK(spreadBits(MortonKey(1) << 20) == MortonKey(1) << 60);
  // Only the low 21 bits count.
  CHECK(spreadBits(finest_cells) == 0);
  CHECK(spreadBits(finest_cells | 3) == 0b1001);
  CHECK(compactBits(0x1249249249249249ULL) == finest_cells - 1);
  // Bits between the 3b positions are ignored.
  CHECK(compactBits(0x6db6db6db6db6db6ULL) == 0);

  std::mt19937 random(7);
  for (int i = 0; i < 1000; ++i)
  {
    std::uint32_t const v = random() & (finest_cells - 1);
    MortonKey const spread = spreadBits(v);
    CHECK((spread & ~0x1249249249249249ULL) == 0);
    CHECK(compactBits(spread) == v);
    CHECK(compactBits(spread << 1) == 0);
  }
}

TEST_CASE("Morton: keys of known integer coordinates", "[tree][morton]")
{
  using kfmm::tree::mortonKey;
  // x is the most significant bit of each triple.
  CHECK(mortonKey(0, 0, 0) == 0);
  CHECK(mortonKey(0, 0, 1) == 1);
  CHECK(mortonKey(0, 1, 0) == 2);
  CHECK(mortonKey(1, 0, 0) == 4);
  CHECK(mortonKey(1, 1, 1) == 7);
  CHECK(mortonKey(2, 0, 0) == 32);
  // x = 011, y = 101, z = 110: triples (x y z) from bit 2 down: 011, 101, 110.
  CHECK(mortonKey(3, 5, 6) == 0b011101110);
  CHECK(mortonKey(finest_cells - 1, finest_cells - 1, finest_cells - 1) == largest_key);
  CHECK(mortonKey(finest_cells - 1, 0, 0) == 0x4924924924924924ULL);

  std::mt19937 random(11);
  for (int i = 0; i < 1000; ++i)
  {
    std::uint32_t const ix = random() % finest_cells;
    std::uint32_t const iy = random() % finest_cells;
    std::uint32_t const iz = random() % finest_cells;
    MortonKey const key = mortonKey(ix, iy, iz);
    CHECK(key <= largest_key);
    std::uint32_t jx = 0, jy = 0, jz = 0;
    kfmm::tree::mortonCoordinates(key, jx, jy, jz);
    CHECK(jx == ix);
    CHECK(jy == iy);
    CHECK(jz == iz);
  }
}

TEST_CASE("Morton: children of a cell are ordered by octant", "[tree][morton]")
{
  kfmm::tree::Cube const cube{{-1.0, 2.0, 0.5}, 4.0};
  std::mt19937 random(3);
  for (int level = 0; level < kfmm::tree::max_level; ++level)
  {
    CAPTURE(level);
    std::uint32_t const cells = 1u << level;
    std::uint32_t const px = random() % cells, py = random() % cells, pz = random() % cells;
    MortonKey const parent = kfmm::tree::mortonKey(px, py, pz);
    double parent_centre[3];
    kfmm::tree::cellCentre(cube, parent, level, parent_centre);
    double const child_width = cube.side / double(2u * cells);
    MortonKey previous = 0;
    for (unsigned octant = 0; octant < 8; ++octant)
    {
      MortonKey const child = parent << 3 | octant;
      // The child keys are consecutive and follow the parent's key order.
      CHECK(child >> 3 == parent);
      if (octant > 0)
        CHECK(child == previous + 1);
      previous = child;
      std::uint32_t cx = 0, cy = 0, cz = 0;
      kfmm::tree::mortonCoordinates(child, cx, cy, cz);
      CHECK(cx == 2 * px + (octant >> 2 & 1));
      CHECK(cy == 2 * py + (octant >> 1 & 1));
      CHECK(cz == 2 * pz + (octant & 1));
      // Octant bit set: the child is in the upper half of the parent along that axis.
      double centre[3];
      kfmm::tree::cellCentre(cube, child, level + 1, centre);
      for (int d = 0; d < 3; ++d)
      {
        double const sign = (octant >> (2 - d) & 1) ? 1.0 : -1.0;
        CHECK(std::abs(centre[d] - (parent_centre[d] + sign * 0.5 * child_width)) <=
              1e-12 * cube.side);
      }
    }
  }
}

TEST_CASE("Morton: every level's prefix of a point's key is the cell holding it", "[tree][morton]")
{
  kfmm::tree::Cube const cube{{-2.0, -2.0, -2.0}, 4.0};
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  for (int i = 0; i < 200; ++i)
  {
    double const p[3] = {uniform(random), uniform(random), uniform(random)};
    MortonKey const key = kfmm::tree::mortonKey(cube, p[0], p[1], p[2]);
    for (int level = 0; level <= kfmm::tree::max_level; ++level)
    {
      double centre[3];
      kfmm::tree::cellCentre(cube, key >> 3 * (kfmm::tree::max_level - level), level, centre);
      double const half = 0.5 * cube.side / double(1u << level);
      for (int d = 0; d < 3; ++d)
        CHECK(std::abs(p[d] - centre[d]) <= half * (1 + 1e-9));
    }
  }
}

TEMPLATE_LIST_TEST_CASE("Morton: the bounding cube encloses every particle", "[tree][morton]",
                        kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer,
                                     kfmm::Distribution::ellipsoid, kfmm::Distribution::cylinder);
  auto const n = GENERATE(as<std::size_t>{}, 2, 1000);
  CAPTURE(kfmm::distributionName(distribution), n);
  Positions<TestType> x("kfmm::test::positions", n);
  Kokkos::View<double *, Memory> q("kfmm::test::charges", n);
  kfmm::generate(space, distribution, 17, x, q);
  auto const cube = kfmm::tree::boundingCube(space, x);
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);

  double extent = 0;
  for (int d = 0; d < 3; ++d)
  {
    double lo = h(0, d), hi = h(0, d);
    for (std::size_t i = 0; i < n; ++i)
    {
      lo = std::min(lo, h(i, d));
      hi = std::max(hi, h(i, d));
    }
    // Inside, and strictly below the upper face.
    CHECK(cube.origin[d] <= lo);
    CHECK(hi < cube.origin[d] + cube.side);
    extent = std::max(extent, hi - lo);
  }
  CHECK(cube.side >= extent);
  CHECK(cube.side <= extent * (1 + 1e-5));

  // Every key is a valid 63-bit key.
  for (MortonKey key : keysOf<TestType>(cube, x))
    CHECK(key <= largest_key);
}

TEMPLATE_LIST_TEST_CASE("Morton: the bounding cube of no, one, or coincident particles",
                        "[tree][morton]", kfmm::test::Spaces)
{
  typename TestType::execution_space space;
  SECTION("no particles: the unit cube")
  {
    Positions<TestType> x("kfmm::test::positions", 0);
    auto const cube = kfmm::tree::boundingCube(space, x);
    CHECK(cube.side == 1);
    for (int d = 0; d < 3; ++d)
      CHECK(std::isfinite(cube.origin[d]));
  }
  SECTION("one particle, or all at one point: a unit cube centred on it")
  {
    auto const n = GENERATE(as<std::size_t>{}, 1, 100);
    std::vector<std::array<double, 3>> points(n, {3.0, -2.0, 7.5});
    auto const x = devicePositions<TestType>(points);
    auto const cube = kfmm::tree::boundingCube(space, x);
    CHECK(cube.side == 1);
    for (int d = 0; d < 3; ++d)
      CHECK(cube.origin[d] + 0.5 * cube.side == points[0][d]);
    // The point is the cube's centre: integer coordinates 2^20 on each axis.
    std::uint32_t const mid = finest_cells / 2;
    for (MortonKey key : keysOf<TestType>(cube, x))
      CHECK(key == kfmm::tree::mortonKey(mid, mid, mid));
  }
}

TEMPLATE_LIST_TEST_CASE("Morton: the cube found on the device is the bounding cube of the sets",
                        "[tree][morton]", kfmm::test::Spaces)
{
  // kfmm::Fmm's builds take their cube from the device (tree/DeviceCube.hpp). Their keys and
  // cells' centres are computed in it, so it must be the host's bounding cube to the bit: for
  // one set and for two, empty ones included.
  using Memory = typename TestType::memory_space;
  using kfmm::tree::Cube;
  typename TestType::execution_space space;
  auto &memory = kfmm::detail::Workspace<Memory>::direct();
  auto const generated = [&](std::size_t n, unsigned seed) {
    Positions<TestType> x("kfmm::test::positions", n);
    Kokkos::View<double *, Memory> q("kfmm::test::charges", n);
    kfmm::generate(space, kfmm::Distribution::plummer, seed, x, q);
    return x;
  };
  auto const [sources, targets] = GENERATE(
      table<int, int>({{1000, -1}, {1, -1}, {0, -1}, {1000, 300}, {0, 300}, {300, 0}, {0, 0}}));
  CAPTURE(sources, targets); // -1: no targets
  auto const a = generated(static_cast<std::size_t>(sources), 3);
  auto const b = generated(static_cast<std::size_t>(targets > 0 ? targets : 0), 5);
  Positions<TestType> const *const b_or_none = targets >= 0 ? &b : nullptr;
  kfmm::tree::detail::DeviceCube<Memory> found;
  found.find(space, memory, a, b_or_none);
  space.fence();
  Cube const cube = found.read([] { FAIL("the positions are finite"); });
  Cube const expected = b_or_none ? kfmm::tree::boundingCube(space, a, b)
                                  : kfmm::tree::boundingCube(space, a);
  Kokkos::View<Cube, Kokkos::HostSpace> on_device("kfmm::test::device_cube");
  Kokkos::deep_copy(on_device, found.onDevice());
  for (Cube const &c : {cube, on_device()})
  {
    for (int d = 0; d < 3; ++d)
      CHECK(c.origin[d] == expected.origin[d]);
    CHECK(c.side == expected.side);
    CHECK(c.extent == expected.extent);
  }
}

TEMPLATE_LIST_TEST_CASE("Morton: the cube found on the device reports a coordinate that is "
                        "not finite",
                        "[tree][morton][validation]", kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto &memory = kfmm::detail::Workspace<Memory>::direct();
  double const bad = GENERATE(std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity());
  bool const in_targets = GENERATE(false, true);
  CAPTURE(bad, in_targets);
  std::vector<std::array<double, 3>> points(20, {0.5, -1.0, 2.0});
  for (std::size_t i = 0; i < points.size(); ++i)
    points[i][i % 3] += double(i);
  auto const a = devicePositions<TestType>(points);
  points[7][1] = bad;
  auto const b = devicePositions<TestType>(points);
  kfmm::tree::detail::DeviceCube<Memory> found;
  // The bad set as the only one, or as the targets beside good sources.
  found.find(space, memory, in_targets ? a : b, in_targets ? &b : nullptr);
  space.fence();
  CHECK_THROWS_WITH(found.read([] { throw std::runtime_error("not finite"); }), "not finite");
}

TEMPLATE_LIST_TEST_CASE("Morton: keys of points at the corners of the cube", "[tree][morton]",
                        kfmm::test::Spaces)
{
  typename TestType::execution_space space;
  // The eight corners of [-1, 1]^3: corner c has x = +1 if bit 2 of c is set, y for bit 1,
  // z for bit 0, so its key lies in top-level octant c.
  std::vector<std::array<double, 3>> corners;
  for (int c = 0; c < 8; ++c)
    corners.push_back({c & 4 ? 1.0 : -1.0, c & 2 ? 1.0 : -1.0, c & 1 ? 1.0 : -1.0});
  auto const cube = kfmm::tree::boundingCube(space, devicePositions<TestType>(corners));
  auto const keys = keysOf<TestType>(cube, devicePositions<TestType>(corners));
  for (unsigned c = 0; c < 8; ++c)
  {
    CAPTURE(c);
    CHECK(keys[c] >> 60 == c);
    // The cube is larger by a relative 1e-6 only: the corners fall in the extreme cells
    // (within about 2^21 * 1e-6 / 2 ~ 1 cell of the faces).
    std::uint32_t i[3];
    kfmm::tree::mortonCoordinates(keys[c], i[0], i[1], i[2]);
    for (int d = 0; d < 3; ++d)
    {
      bool const upper = c >> (2 - d) & 1;
      if (upper)
        CHECK(i[d] >= finest_cells - 2);
      else
        CHECK(i[d] <= 1);
    }
  }

  // The cube's own corners: the lower one is key 0; the upper faces are outside the cube and
  // clamp to the last cell, as do points beyond the faces.
  std::vector<std::array<double, 3>> faces;
  double const lo[3] = {cube.origin[0], cube.origin[1], cube.origin[2]};
  double const hi[3] = {lo[0] + cube.side, lo[1] + cube.side, lo[2] + cube.side};
  faces.push_back({lo[0], lo[1], lo[2]});
  faces.push_back({hi[0], hi[1], hi[2]});
  faces.push_back({lo[0] - 5, lo[1] - 5, lo[2] - 5});
  faces.push_back({hi[0] + 5, hi[1] + 5, hi[2] + 5});
  faces.push_back({hi[0], lo[1], lo[2]});
  auto const face_keys = keysOf<TestType>(cube, devicePositions<TestType>(faces));
  CHECK(face_keys[0] == 0);
  CHECK(face_keys[1] == largest_key);
  CHECK(face_keys[2] == 0);
  CHECK(face_keys[3] == largest_key);
  CHECK(face_keys[4] == kfmm::tree::mortonKey(finest_cells - 1, 0, 0));
}

TEMPLATE_LIST_TEST_CASE("Morton: keys computed on the device equal the host function",
                        "[tree][morton]", kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 5000;
  Positions<TestType> x("kfmm::test::positions", n);
  Kokkos::View<double *, Memory> q("kfmm::test::charges", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 23, x, q);
  auto const cube = kfmm::tree::boundingCube(space, x);
  auto const keys = keysOf<TestType>(cube, x);
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i)
    mismatches += keys[i] != kfmm::tree::mortonKey(cube, h(i, 0), h(i, 1), h(i, 2));
  CHECK(mismatches == 0);
}
