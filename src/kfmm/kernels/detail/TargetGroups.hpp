// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DETAIL_TARGET_GROUPS_HPP
#define KFMM_KERNELS_DETAIL_TARGET_GROUPS_HPP

// The near field's unit of work: a group of at most `targets` consecutive targets of one
// leaf. Seed 001 (section 3, Figure 3) gives each leaf a thread block and splits a leaf
// larger than the block over several blocks; kfmm gives each group a GPU warp (a host
// thread), so that a small leaf occupies one warp instead of a block its targets cannot
// fill, and a large leaf spreads over several warps.

#include <kfmm/detail/Workspace.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels::detail
{

/// Groups of the rows of a list whose rows are target leaves: entry g is (row, offset of
/// the group's first target in the row's leaf). Their number stays on the device (`count`),
/// where the near field's kernel reads it: the host knows a bound only, the entries' extent.
template <class MemorySpace>
struct TargetGroups
{
  Kokkos::View<int *[2], MemorySpace> entries; ///< count() used, extent(0) a bound on it
  Kokkos::View<int *, MemorySpace> count;      ///< one entry: the number of groups
  int targets = 0;                             ///< most targets per group

  /// The most groups there can be: what a launch over them covers.
  int bound() const { return static_cast<int>(entries.extent(0)); }
};

/// Writes the groups of each row at the row's offset, and their number after the last row
/// (the scan's final pass).
template <class MemorySpace>
struct TargetGroupScan
{
  CellView<MemorySpace> cells;
  Kokkos::View<int *[2], MemorySpace> entries;
  Kokkos::View<int *, MemorySpace> total;
  int rows;
  int targets;

  KOKKOS_FUNCTION void operator()(int row, int &offset, bool final) const
  {
    int const leaf = cells.leaves(row);
    int const count =
        (cells.particle_end(leaf) - cells.particle_begin(leaf) + targets - 1) / targets;
    if (final)
    {
      for (int k = 0; k < count; ++k)
      {
        entries(offset + k, 0) = row;
        entries(offset + k, 1) = k * targets;
      }
      if (row == rows - 1)
        total(0) = offset + count;
    }
    offset += count;
  }
};

/// The groups of at most `targets` targets of the first `rows` leaves of `cells`, whose
/// particles number `num_targets`, in arrays taken from `memory`. One scan, which leaves the
/// number of groups on the device: the near field launches over the bound and its surplus
/// teams return at once, so that the build does not wait for the device here.
template <class ExecutionSpace, class MemorySpace>
TargetGroups<MemorySpace> buildTargetGroups(ExecutionSpace const &space,
                                            kfmm::detail::Workspace<MemorySpace> &memory,
                                            CellView<MemorySpace> const &cells, int rows,
                                            std::size_t num_targets, int targets)
{
  TargetGroups<MemorySpace> groups;
  groups.targets = targets;
  // A leaf of n targets makes ceil(n / targets) <= n / targets + 1 groups.
  std::size_t const bound = static_cast<std::size_t>(rows) + num_targets / targets;
  groups.entries =
      memory.template take<decltype(groups.entries)>(space, "kfmm::Fmm::p2p_groups", bound);
  groups.count =
      memory.template take<decltype(groups.count)>(space, "kfmm::Fmm::p2p_group_count", 1);
  if (rows > 0)
    Kokkos::parallel_scan(
        "kfmm::Fmm::p2p_groups", Kokkos::RangePolicy<ExecutionSpace>(space, 0, rows),
        TargetGroupScan<MemorySpace>{cells, groups.entries, groups.count, rows, targets});
  else
    kfmm::detail::zeroFill(space, "kfmm::Fmm::no_p2p_groups", groups.count);
  return groups;
}

} // namespace kfmm::kernels::detail

#endif
