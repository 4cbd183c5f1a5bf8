// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_MORTON_HPP
#define KFMM_TREE_MORTON_HPP

// Bounding cube and 63-bit Morton keys (21 levels of octree) of a particle set.
//
// Convention used by every part of the tree: the cube has its lower corner at `origin` and
// side `side`; a particle's integer coordinates are floor((x - origin) / side * 2^21),
// clamped to [0, 2^21 - 1]; the key interleaves them with x in the most significant bit of
// each triple: key bit 3b+2 = x bit b, 3b+1 = y bit b, 3b = z bit b. The cell of level l
// (0 = the cube, 21 = finest) containing a key is key >> 3 (21 - l); its centre is
// origin + (cell integer coordinates + 1/2) side / 2^l. (Morton 1966; Warren & Salmon 1993
// for hashed octrees from interleaved keys.)

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Streaming.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>

namespace kfmm::tree
{

using MortonKey = std::uint64_t;

/// Levels below the root that a 63-bit key resolves.
constexpr int max_level = 21;

/// The cube that encloses all particles: lower corner and side length.
struct Cube
{
  double origin[3];
  double side;
  /// The particles' largest extent along an axis: 0 when they are all at one point (or
  /// there are none), where the side is 1.
  double extent = 0;
};

namespace detail
{

/// Spreads the low 21 bits of v so that bit b lands at bit 3b.
KOKKOS_INLINE_FUNCTION MortonKey spreadBits(MortonKey v)
{
  v &= 0x1fffffULL;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

/// Inverse of spreadBits: gathers bits 3b back to bit b.
KOKKOS_INLINE_FUNCTION std::uint32_t compactBits(MortonKey v)
{
  v &= 0x1249249249249249ULL;
  v = (v ^ (v >> 2)) & 0x10c30c30c30c30c3ULL;
  v = (v ^ (v >> 4)) & 0x100f00f00f00f00fULL;
  v = (v ^ (v >> 8)) & 0x1f0000ff0000ffULL;
  v = (v ^ (v >> 16)) & 0x1f00000000ffffULL;
  v = (v ^ (v >> 32)) & 0x1fffffULL;
  return static_cast<std::uint32_t>(v);
}

} // namespace detail

/// Key of integer coordinates (each < 2^21).
KOKKOS_INLINE_FUNCTION MortonKey mortonKey(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz)
{
  return detail::spreadBits(ix) << 2 | detail::spreadBits(iy) << 1 | detail::spreadBits(iz);
}

/// Integer coordinates of a key (at level 21) or of a cell prefix (at its level).
KOKKOS_INLINE_FUNCTION void mortonCoordinates(MortonKey key, std::uint32_t &ix, std::uint32_t &iy,
                                              std::uint32_t &iz)
{
  ix = detail::compactBits(key >> 2);
  iy = detail::compactBits(key >> 1);
  iz = detail::compactBits(key);
}

/// Key of the point (x, y, z) in `cube`.
KOKKOS_INLINE_FUNCTION MortonKey mortonKey(Cube const &cube, double x, double y, double z)
{
  constexpr double cells = double(1u << max_level);
  double const scale = cells / cube.side;
  // A NaN (of a position, or of a cube around one: tree/DeviceCube.hpp) maps to 0, so that
  // the conversion is defined; such a build throws before its keys are used.
  auto const grid = [&](double v, double lo) {
    double const g = (v - lo) * scale;
    return static_cast<std::uint32_t>(g > 0.0 ? kfmm::detail::min(g, cells - 1) : 0.0);
  };
  return mortonKey(grid(x, cube.origin[0]), grid(y, cube.origin[1]), grid(z, cube.origin[2]));
}

/// Centre of the level-`level` cell whose key prefix is `prefix` (= key >> 3 (21 - level)).
KOKKOS_INLINE_FUNCTION void cellCentre(Cube const &cube, MortonKey prefix, int level,
                                       double centre[3])
{
  std::uint32_t i[3];
  mortonCoordinates(prefix, i[0], i[1], i[2]);
  double const width = cube.side / double(1u << level);
  for (int d = 0; d < 3; ++d)
    centre[d] = cube.origin[d] + (i[d] + 0.5) * width;
}

/// The axis-aligned box [lo, hi] that holds a set of particles; `empty` for none.
struct Box
{
  double lo[3];
  double hi[3];
  bool empty = true;
};

/// Whether every bound of a box is finite (an empty box is): a box widened by a NaN or an
/// infinite coordinate is not (detail::WidenExtents).
KOKKOS_INLINE_FUNCTION bool isFinite(Box const &box)
{
  bool finite = true;
  for (int d = 0; d < 3 && !box.empty; ++d)
    finite = finite && kfmm::detail::isfinite(box.lo[d]) && kfmm::detail::isfinite(box.hi[d]);
  return finite;
}

/// The box that holds the particles of both boxes.
KOKKOS_INLINE_FUNCTION Box unite(Box const &a, Box const &b)
{
  if (a.empty || b.empty)
    return a.empty ? b : a;
  Box box{};
  box.empty = false;
  for (int d = 0; d < 3; ++d)
  {
    box.lo[d] = kfmm::detail::min(a.lo[d], b.lo[d]);
    box.hi[d] = kfmm::detail::max(a.hi[d], b.hi[d]);
  }
  return box;
}

/// The cube around `box`: centred on it, its side the box's largest extent enlarged by a
/// relative 1e-6 (and never zero), so that the largest coordinate maps below 2^21 and
/// coincident particles still get a valid cube (of side 1); a unit cube at the origin for an
/// empty box.
KOKKOS_INLINE_FUNCTION Cube cubeAround(Box const &box)
{
  Cube cube{};
  if (box.empty)
  {
    cube.side = 1;
    return cube;
  }
  for (int d = 0; d < 3; ++d)
    cube.extent = kfmm::detail::max(cube.extent, box.hi[d] - box.lo[d]);
  cube.side = cube.extent > 0 ? cube.extent * (1 + 1e-6) : 1;
  for (int d = 0; d < 3; ++d)
    cube.origin[d] = 0.5 * (box.lo[d] + box.hi[d]) - 0.5 * cube.side;
  return cube;
}

namespace detail
{

/// The smallest and largest coordinate along each axis, as a reduction's value.
struct Extents
{
  double lo[3];
  double hi[3];

  // Kokkos 3.4's reductions on CUDA copy values through volatile references, as its own
  // Kokkos::MinMaxScalar does.
  KOKKOS_INLINE_FUNCTION void operator=(Extents const &other)
  {
    for (int d = 0; d < 3; ++d)
    {
      lo[d] = other.lo[d];
      hi[d] = other.hi[d];
    }
  }

  KOKKOS_INLINE_FUNCTION void operator=(Extents const volatile &other) volatile
  {
    for (int d = 0; d < 3; ++d)
    {
      lo[d] = other.lo[d];
      hi[d] = other.hi[d];
    }
  }
};

/// Kokkos reducer of Extents: Kokkos::MinMax of the three axes in one reduction, into a
/// host variable or into memory of `ResultSpace` (which a device kernel writes without the
/// host waiting for it).
template <class ResultSpace = Kokkos::HostSpace>
struct ExtentsReducer
{
  using reducer = ExtentsReducer;
  using value_type = Extents;
  using result_view_type = Kokkos::View<Extents, ResultSpace, Kokkos::MemoryUnmanaged>;

  result_view_type value;

  explicit ExtentsReducer(Extents &result) : value(&result) {}
  explicit ExtentsReducer(result_view_type const &result) : value(result) {}

  KOKKOS_INLINE_FUNCTION void join(Extents &dest, Extents const &src) const { widen(dest, src); }

  KOKKOS_INLINE_FUNCTION void join(Extents volatile &dest, Extents const volatile &src) const
  {
    widen(dest, src);
  }

  KOKKOS_INLINE_FUNCTION void init(Extents &e) const
  {
    for (int d = 0; d < 3; ++d)
    {
      e.lo[d] = Kokkos::reduction_identity<double>::min();
      e.hi[d] = Kokkos::reduction_identity<double>::max();
    }
  }

  KOKKOS_INLINE_FUNCTION Extents &reference() const { return *value.data(); }
  KOKKOS_INLINE_FUNCTION result_view_type view() const { return value; }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }

private:
  template <class Dest, class Src>
  KOKKOS_INLINE_FUNCTION static void widen(Dest &dest, Src const &src)
  {
    for (int d = 0; d < 3; ++d)
    {
      if (src.lo[d] < dest.lo[d])
        dest.lo[d] = src.lo[d];
      if (src.hi[d] > dest.hi[d])
        dest.hi[d] = src.hi[d];
    }
  }
};

/// Widens e to take in positions(i, :). A NaN, which every comparison would pass over,
/// counts as an infinity: a box that is not finite tells the callers that check their
/// positions (kfmm::tree::detail::checkedBoundingBox) to look for the bad row.
template <class Positions>
struct WidenExtents
{
  Positions positions;

  static constexpr double infinite = std::numeric_limits<double>::infinity();

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, Extents &e) const
  {
    for (int d = 0; d < 3; ++d)
    {
      double const v = positions(i, d);
      if (v < e.lo[d])
        e.lo[d] = v;
      if (!(v <= e.hi[d]))
        e.hi[d] = v == v ? v : infinite;
    }
  }
};

/// The box of a reduction's Extents: empty where nothing widened them from the reduction's
/// identity (lo above hi).
KOKKOS_INLINE_FUNCTION Box boxOf(Extents const &extents)
{
  Box box{};
  box.empty = extents.lo[0] > extents.hi[0];
  for (int d = 0; d < 3; ++d)
  {
    box.lo[d] = extents.lo[d];
    box.hi[d] = extents.hi[d];
  }
  return box;
}

} // namespace detail

/// The box that holds all `positions` (N x 3), in one pass over them
/// (detail/Streaming.hpp). A NaN or infinite coordinate makes the box infinite.
template <class ExecutionSpace, class Positions>
Box boundingBox(ExecutionSpace const &space, Positions const &positions)
{
  if (positions.extent(0) == 0)
    return Box{};
  detail::Extents extents{};
  kfmm::detail::streamReduce("kfmm::tree::bounding_box", space, positions.extent(0),
                             detail::WidenExtents<Positions>{positions},
                             detail::ExtentsReducer<>(extents));
  return detail::boxOf(extents);
}

/// The smallest cube enclosing all `positions` (N x 3), slightly enlarged so that no
/// particle sits on its upper faces (cubeAround); a unit cube around the point for N <= 1
/// or all particles at one point, a unit cube at the origin for N = 0.
template <class ExecutionSpace, class Positions>
Cube boundingCube(ExecutionSpace const &space, Positions const &positions)
{
  return cubeAround(boundingBox(space, positions));
}

/// The cube enclosing the particles of two sets together (either may be empty): for the same
/// set twice, its boundingCube.
template <class ExecutionSpace, class PositionsA, class PositionsB>
Cube boundingCube(ExecutionSpace const &space, PositionsA const &a, PositionsB const &b)
{
  return cubeAround(unite(boundingBox(space, a), boundingBox(space, b)));
}

namespace detail
{

/// A cube that a kernel holds by value, read as a cube in device memory (a rank-0 View:
/// tree/DeviceCube.hpp) is, by cube().
struct CubeValue
{
  Cube cube;

  KOKKOS_INLINE_FUNCTION Cube const &operator()() const { return cube; }
};

/// keys(i) = the key of positions(i, :) in cube().
template <class CubeRef, class Positions, class Keys>
struct MortonKeys
{
  CubeRef cube;
  Positions positions;
  Keys keys;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    keys(i) = mortonKey(cube(), positions(i, 0), positions(i, 1), positions(i, 2));
  }
};

/// computeMortonKeys for a cube held by value (CubeValue) or in device memory.
template <class ExecutionSpace, class CubeRef, class Positions, class Keys>
void mortonKeysIn(ExecutionSpace const &space, CubeRef const &cube, Positions const &positions,
                  Keys const &keys)
{
  kfmm::detail::streamFor("kfmm::tree::morton_keys", space, positions.extent(0),
                          MortonKeys<CubeRef, Positions, Keys>{cube, positions, keys});
}

} // namespace detail

/// Morton key of every particle: keys(i) = key of positions(i, :) in `cube`.
template <class ExecutionSpace, class Positions, class Keys>
void computeMortonKeys(ExecutionSpace const &space, Cube const &cube, Positions const &positions,
                       Keys const &keys)
{
  detail::mortonKeysIn(space, detail::CubeValue{cube}, positions, keys);
}

} // namespace kfmm::tree

#endif
