// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_LATTICE_OFFSET_HPP
#define KFMM_FARFIELD_LATTICE_OFFSET_HPP

// The offset between two cells' centres on the tree's grid. Expansion centres are geometric
// cell centres, (2i + 1) s_l at level l with s_l = side / 2^(l + 1), so the offset c_t - c_s
// of a target t and a source s is an integer vector o in units of the finer of the two
// cells' scales. The M2L operator of a pair depends only on o and the level difference
// (M2LGroups.hpp), and its direction only on o (M2LRotations.hpp): both precompute per
// offset instead of per pair. A source in a periodic image (tree/PeriodicImage.hpp) is
// translated by whole periods, the cube's side: still a whole offset.

#include <kfmm/tree/PeriodicImage.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::farfield
{

/// The lattice offset of pairs of cells of a target and a source tree on one cube.
template <class MemorySpace>
struct LatticeOffset
{
  Kokkos::View<double *[3], MemorySpace> target_centre;
  Kokkos::View<int *, MemorySpace> target_level;
  Kokkos::View<double *[3], MemorySpace> source_centre;
  Kokkos::View<int *, MemorySpace> source_level;
  double side;

  /// The offset o of (target t, source entry `entry`: a cell, or a cell of a periodic image)
  /// and delta = l_t - l_s; false (o undefined) when some |o_i| exceeds `bound`.
  KOKKOS_INLINE_FUNCTION bool operator()(int t, int entry, int bound, int &delta, int o[3]) const
  {
    int const s = tree::PeriodicImage::cellOf(entry);
    delta = target_level(t) - source_level(s);
    int const finer = delta >= 0 ? target_level(t) : source_level(s);
    // Offsets are exact odd-multiple differences; rounding removes the bits lost to the
    // bounding cube's origin.
    double const inv_unit = static_cast<double>(2ULL << finer) / side;
    for (int d = 0; d < 3; ++d)
    {
      double const x =
          (target_centre(t, d) -
           (source_centre(s, d) + side * double(tree::PeriodicImage::offset(entry, d)))) *
          inv_unit;
      double const magnitude = x < 0 ? -x : x;
      if (magnitude > double(bound) + 0.5)
        return false;
      o[d] = x < 0 ? -static_cast<int>(magnitude + 0.5) : static_cast<int>(magnitude + 0.5);
    }
    return true;
  }
};

} // namespace kfmm::farfield

#endif
