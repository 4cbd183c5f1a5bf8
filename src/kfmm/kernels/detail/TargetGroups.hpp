// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DETAIL_TARGET_GROUPS_HPP
#define KFMM_KERNELS_DETAIL_TARGET_GROUPS_HPP

// The near field's unit of work: a group of at most `targets` consecutive targets of one
// leaf. Seed 001 (section 3, Figure 3) gives each leaf a thread block and splits a leaf
// larger than the block over several blocks; kfmm gives each group a GPU warp (a host
// thread), so that a small leaf occupies one warp instead of a block its targets cannot
// fill, and a large leaf spreads over several warps.

#include <kfmm/detail/Workspace.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// Groups of the rows of a list whose rows are target leaves: entry g is (row, offset of
/// the group's first target in the row's leaf).
template <class MemorySpace>
struct TargetGroups
{
  Kokkos::View<int *[2], MemorySpace> entries;
  int size = 0;    ///< groups
  int targets = 0; ///< most targets per group
};

/// Writes the groups of each row at the row's offset (the scan's final pass).
template <class MemorySpace>
struct TargetGroupScan
{
  CellView<MemorySpace> cells;
  Kokkos::View<int *[2], MemorySpace> entries;
  int targets;

  KOKKOS_FUNCTION void operator()(int row, int &offset, bool final) const
  {
    int const leaf = cells.leaves(row);
    int const count = (cells.particle_end(leaf) - cells.particle_begin(leaf) + targets - 1) /
                      targets;
    if (final)
      for (int k = 0; k < count; ++k)
      {
        entries(offset + k, 0) = row;
        entries(offset + k, 1) = k * targets;
      }
    offset += count;
  }
};

/// The groups of at most `targets` targets of the first `rows` leaves of `cells`, whose
/// particles number `num_targets`, in an array taken from `memory`. One scan; its total
/// returns to the host, which sizes the near field's launch.
template <class ExecutionSpace, class MemorySpace>
TargetGroups<MemorySpace> buildTargetGroups(ExecutionSpace const &space,
                                            Workspace<MemorySpace> &memory,
                                            CellView<MemorySpace> const &cells, int rows,
                                            std::size_t num_targets, int targets)
{
  TargetGroups<MemorySpace> groups;
  groups.targets = targets;
  // A leaf of n targets makes ceil(n / targets) <= n / targets + 1 groups.
  std::size_t const bound = static_cast<std::size_t>(rows) + num_targets / targets;
  groups.entries = memory.template take<decltype(groups.entries)>(space, "kfmm::Fmm::p2p_groups",
                                                                   bound);
  Kokkos::parallel_scan("kfmm::Fmm::p2p_groups",
                        Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows),
                        TargetGroupScan<MemorySpace>{cells, groups.entries, targets}, groups.size);
  return groups;
}

} // namespace kfmm::detail

#endif
