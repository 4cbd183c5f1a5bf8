// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DETAIL_EXPANSION_ARRAYS_HPP
#define KFMM_KERNELS_DETAIL_EXPANSION_ARRAYS_HPP

// What the FMM launchers share: the per-cell coefficient arrays, the length scale each
// cell's expansions are stored in, and the team-scratch work arrays of the team operators.

#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels::detail
{

/// Multipole or local coefficients, one row of expansions::coefficientCount(p) per cell.
/// LayoutRight: a cell's coefficients are contiguous, as the operators take raw pointers.
template <class Real, class MemorySpace>
using CoefficientArray = Kokkos::View<Kokkos::complex<Real> **, Kokkos::LayoutRight, MemorySpace>;

/// The length unit of a cell's expansions: its half-width side / 2^(level + 1). It keeps
/// the stored coefficients O(1) at every depth (Operators.hpp), which float needs at high
/// order, and unlike the particle radius it is never zero.
template <class Real>
KOKKOS_INLINE_FUNCTION Real cellScale(double side, int level)
{
  return static_cast<Real>(side / static_cast<double>(2ULL << level));
}

/// The cell data the FMM kernels read, as plain Views (an Octree also holds host data,
/// which has no place in a kernel).
template <class MemorySpace>
struct CellView
{
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> parent;
  Kokkos::View<int *, MemorySpace> leaves;
  double side;

  explicit CellView(tree::Octree<MemorySpace> const &t)
      : centre(t.centre), level(t.level), particle_begin(t.particle_begin),
        particle_end(t.particle_end), first_child(t.first_child), child_count(t.child_count),
        parent(t.parent), leaves(t.leaves), side(t.cube.side)
  {
  }

  /// Length unit of cell c's expansions.
  template <class Real>
  KOKKOS_INLINE_FUNCTION Real scale(int c) const
  {
    return cellScale<Real>(side, level(c));
  }

  /// centre(to) - centre(from), component d, in Real.
  template <class Real>
  KOKKOS_INLINE_FUNCTION Real offset(int to, int from, int d) const
  {
    return static_cast<Real>(centre(to, d) - centre(from, d));
  }
};

/// The centre of cell `to` of `to_cells` minus that of cell `from` of `from_cells` (trees on
/// one cube, or one tree) translated by `shift` (a periodic image's), component d, in Real.
template <class Real, class MemorySpace>
KOKKOS_INLINE_FUNCTION Real centreOffset(CellView<MemorySpace> const &to_cells, int to,
                                         CellView<MemorySpace> const &from_cells, int from,
                                         double shift, int d)
{
  return static_cast<Real>(to_cells.centre(to, d) - (from_cells.centre(from, d) + shift));
}

/// A team-scratch array of `count` complex numbers.
template <class Real, class ExecutionSpace>
using ScratchCoefficients =
    Kokkos::View<Kokkos::complex<Real> *, typename ExecutionSpace::scratch_memory_space,
                 Kokkos::MemoryUnmanaged>;

template <class Real, class ExecutionSpace>
std::size_t scratchCoefficientBytes(int count)
{
  return ScratchCoefficients<Real, ExecutionSpace>::shmem_size(count);
}

} // namespace kfmm::kernels::detail

#endif
