// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_M2L_ROTATIONS_HPP
#define KFMM_FARFIELD_M2L_ROTATIONS_HPP

// The rotation tables of the rotation M2L (expansions/Rotation.hpp), one per direction that
// occurs in the M2L list, computed once per tree.
//
// The offset of a pair on the tree's grid is an integer vector o (farfield/LatticeOffset.hpp),
// and the rotation about the y axis depends only on its polar angle, cos theta =
// o_z / |o|: on the key (o_z, o_x^2 + o_y^2). The azimuth phi is applied per pair at O(p^2)
// (step 1 and 4). So a tree needs tables for a few hundred directions at most, whatever its
// size and depth. A pair whose offset has a component beyond DirectionKeys::bound (far
// outliers of adaptive trees) has no table; the kernel translates it with (T2).

#include <kfmm/detail/ReadOnHost.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/expansions/Rotation.hpp>
#include <kfmm/farfield/LatticeOffset.hpp>
#include <kfmm/farfield/M2LGroups.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::farfield
{

/// Dense keys (o_z, o_x^2 + o_y^2) of the directions of lattice offsets with |o_i| <= bound.
struct DirectionKeys
{
  static constexpr int bound = TranslationClassBounds::max_offset;
  static constexpr int rho2_count = 2 * bound * bound + 1;
  static constexpr int count = (2 * bound + 1) * rho2_count;

  KOKKOS_INLINE_FUNCTION static int key(int const o[3])
  {
    return (o[2] + bound) * rho2_count + o[0] * o[0] + o[1] * o[1];
  }

  /// cos theta and sin theta of key k.
  KOKKOS_INLINE_FUNCTION static void angles(int k, double &cos_theta, double &sin_theta)
  {
    double const z = double(k / rho2_count - bound);
    double const rho = kfmm::detail::sqrt(double(k % rho2_count));
    double const r = kfmm::detail::sqrt(z * z + rho * rho);
    cos_theta = z / r;
    sin_theta = rho / r;
  }
};

/// The rotation tables of the directions of an M2L list, in the solver's precision.
template <class Real, class MemorySpace>
struct M2LRotations
{
  LatticeOffset<MemorySpace> offset_of;
  /// Direction number of each dense key (an exclusive scan of the keys used).
  Kokkos::View<int *, MemorySpace> direction_of_key;
  /// Dense key of each direction.
  Kokkos::View<int *, MemorySpace> direction_keys;
  /// tables(direction, :): expansions::rotationTableSize(p) reals.
  Kokkos::View<Real **, Kokkos::LayoutRight, MemorySpace> tables;
  int num_directions = 0;
  /// Pairs of the list without a table, translated with (T2).
  std::int64_t per_pair_entries = 0;

  /// The direction of the pair (target t, source s), or -1: no table (translate with (T2)).
  KOKKOS_INLINE_FUNCTION int direction(int t, int s) const
  {
    int delta, o[3];
    if (!offset_of(t, s, DirectionKeys::bound, delta, o))
      return -1;
    return direction_of_key(DirectionKeys::key(o));
  }

  std::size_t bytes() const
  {
    return (direction_of_key.span() + direction_keys.span()) * sizeof(int) +
           tables.span() * sizeof(Real);
  }
};

/// Row league rank of the M2L list: marks the direction key of every entry, and counts the
/// entries without one.
template <class ExecutionSpace, class MemorySpace>
struct MarkDirections
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  LatticeOffset<MemorySpace> offset_of;
  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<int *, MemorySpace> sources;
  Kokkos::View<int *, MemorySpace> used;

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team, std::int64_t &without) const
  {
    int const row = team.league_rank();
    std::int64_t row_without = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, offsets(row), offsets(row + 1)),
        [&](std::int64_t e, std::int64_t &count) {
          int delta, o[3];
          // Every writer stores 1: the races are benign.
          if (offset_of(row, sources(e), DirectionKeys::bound, delta, o))
            used(DirectionKeys::key(o)) = 1;
          else
            ++count;
        },
        row_without);
    Kokkos::single(Kokkos::PerTeam(team), [&] { without += row_without; });
  }
};

/// Entry i of the tables: direction i / entries, table entry i % entries.
template <class Real, class MemorySpace>
struct RotationTableEntries
{
  Kokkos::View<int *, MemorySpace> direction_keys;
  Kokkos::View<Real **, Kokkos::LayoutRight, MemorySpace> tables;
  int order;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const
  {
    int const entries = expansions::rotationEntries(order);
    int const direction = static_cast<int>(i / entries);
    double cos_theta, sin_theta;
    DirectionKeys::angles(direction_keys(direction), cos_theta, sin_theta);
    expansions::rotationTableEntry(order, static_cast<int>(i % entries), cos_theta, sin_theta,
                                   &tables(direction, 0));
  }
};

/// The rotation tables of every direction of the M2L list `m2l` (cells of `target_tree`
/// against those of `source_tree`, one cube) at order p. One host synchronisation (the
/// number of directions, with the count of pairs without one).
template <class Real, class ExecutionSpace, class MemorySpace>
M2LRotations<Real, MemorySpace> buildM2LRotations(ExecutionSpace const &space,
                                                  tree::Octree<MemorySpace> const &target_tree,
                                                  tree::Octree<MemorySpace> const &source_tree,
                                                  tree::CsrList<MemorySpace> const &m2l, int p)
{
  kfmm::detail::ScopedRegion region("kfmm::buildM2LRotations");
  M2LRotations<Real, MemorySpace> rotations;
  rotations.offset_of = {target_tree.centre, target_tree.level, source_tree.centre,
                         source_tree.level, target_tree.cube.side};
  rotations.direction_of_key = Kokkos::View<int *, MemorySpace>(
      Kokkos::view_alloc(space, "kfmm::m2l_rotations::direction_of_key"), DirectionKeys::count + 1);
  Kokkos::parallel_reduce("kfmm::m2l_rotations::mark",
                          Kokkos::TeamPolicy<ExecutionSpace>(space, m2l.numRows(), Kokkos::AUTO),
                          MarkDirections<ExecutionSpace, MemorySpace>{rotations.offset_of,
                                                                      m2l.offsets, m2l.sources,
                                                                      rotations.direction_of_key},
                          rotations.per_pair_entries);
  Kokkos::parallel_scan(
      "kfmm::m2l_rotations::number",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, DirectionKeys::count + 1),
      NumberUsedKeys<MemorySpace>{rotations.direction_of_key, DirectionKeys::count, 1});
  rotations.num_directions = kfmm::detail::readOnHost(
      space, Kokkos::subview(rotations.direction_of_key, DirectionKeys::count));
  int const directions = rotations.num_directions;
  rotations.direction_keys = Kokkos::View<int *, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::m2l_rotations::keys"),
      directions);
  Kokkos::parallel_for(
      "kfmm::m2l_rotations::keys",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, DirectionKeys::count),
      ClassKeys<MemorySpace>{rotations.direction_of_key, rotations.direction_keys});
  rotations.tables = Kokkos::View<Real **, Kokkos::LayoutRight, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::m2l_rotations::tables"),
      directions, expansions::rotationTableSize(p));
  Kokkos::parallel_for(
      "kfmm::m2l_rotations::tables",
      Kokkos::RangePolicy<ExecutionSpace>(
          space, 0, std::int64_t(directions) * expansions::rotationEntries(p)),
      RotationTableEntries<Real, MemorySpace>{rotations.direction_keys, rotations.tables, p});
  return rotations;
}

} // namespace kfmm::farfield

#endif
