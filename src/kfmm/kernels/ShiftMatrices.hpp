// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_SHIFT_MATRICES_HPP
#define KFMM_KERNELS_SHIFT_MATRICES_HPP

// M2M and L2L as matrix products (the matrix formulation of Fortin & Lamotte 2013 applied to
// the shifts between a cell and its children). A child is one level below its parent, half
// its size, with its centre one child length scale from the parent's along each axis
// (tree/Octree.hpp, kernels/detail/ExpansionArrays.hpp). Expansions are stored in units of
// their cells' scales, and (T1) and (T3) of Operators.hpp depend only on the offset and the
// scale ratio in those units, so the shift of the child in octant (+, +, +) is one real
// matrix for every level; the other octants are its mirror images, T(F o) = D_F T(o) D_F
// with the sign diagonals of expansions::mirrorSign. Two matrices serve a whole tree: computed
// from m2mTeam and l2lTeam on unit vectors, so the products apply exactly (T1) and (T3).
//
// The kernel gives a team one parent cell: M2M gathers its children's multipoles (with their
// octants' signs) as the columns of a matrix in team scratch and multiplies; L2L multiplies
// the parent's local expansion, under each child's signs, into the children's. One thread
// computes one output component for all the columns, reading the matrix once: a product of
// n x n by n x children per parent, level by level.

#include <kfmm/detail/Workspace.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/detail/RealMatrices.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels
{

/// shift_matrices(0, k, i) = A_M2M(i, k), shift_matrices(1, k, i) = A_L2L(i, k): the shifts
/// of the child in octant (+, +, +), transposed like the M2L class matrices.
template <class Real, class MemorySpace>
using ShiftMatrixArray = detail::RealMatrixArray<Real, MemorySpace>;

/// Team (shift, column): the M2M (shift 0) or L2L (shift 1) of one unit vector.
template <class ExecutionSpace, class Real>
struct ShiftMatrixKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  ShiftMatrixArray<Real, typename ExecutionSpace::memory_space> matrices;
  int order;

  static std::size_t scratchBytes(int p)
  {
    return detail::operatorColumnScratchBytes<ExecutionSpace>(p, expansions::m2mTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const n = detail::realCoefficientCount(order);
    int const shift = team.league_rank() / n;
    int const column = team.league_rank() % n;
    // In units of the child's scale: the child at (1, 1, 1) from its parent, scales 1 and 2.
    detail::operatorMatrixColumn<ExecutionSpace, Real>(
        team, order, column, expansions::m2mTeamScratchSize(order),
        [&](Kokkos::complex<double> const *in, Kokkos::complex<double> *out,
            Kokkos::complex<double> *work) {
          if (shift == 0)
            expansions::m2mTeam(team, order, 1.0, 1.0, 1.0, in, out, work, 1.0, 2.0);
          else
            expansions::l2lTeam(team, order, 1.0, 1.0, 1.0, in, out, work, 2.0, 1.0);
        },
        [&](int i, double value) { matrices(shift, column, i) = static_cast<Real>(value); });
  }
};

/// The M2M and L2L matrices at order p, in an array taken from `memory`.
template <class Real, class ExecutionSpace, class MemorySpace>
ShiftMatrixArray<Real, MemorySpace> buildShiftMatrices(ExecutionSpace const &space,
                                                       kfmm::detail::Workspace<MemorySpace> &memory,
                                                       int p, int team_size)
{
  int const n = detail::realCoefficientCount(p);
  auto const matrices = memory.template take<ShiftMatrixArray<Real, MemorySpace>>(
      space, "kfmm::Fmm::shift_matrices", 2, n, detail::paddedRealCount<ExecutionSpace, Real>(p));
  using Kernel = ShiftMatrixKernel<ExecutionSpace, Real>;
  Kokkos::parallel_for("kfmm::Fmm::shift_matrices",
                       Kokkos::TeamPolicy<ExecutionSpace>(space, 2 * n, team_size)
                           .set_scratch_size(0, Kokkos::PerTeam(Kernel::scratchBytes(p))),
                       Kernel{matrices, p});
  return matrices;
}

/// The mirror bits (expansions::mirrorSign) of child c of `parent`: bit d set where the child's
/// centre lies below the parent's along axis d.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION int childOctantMirror(detail::CellView<MemorySpace> const &tree, int c,
                                             int parent)
{
  int mirror = 0;
  for (int d = 0; d < 3; ++d)
    mirror |= tree.centre(c, d) < tree.centre(parent, d) ? 1 << d : 0;
  return mirror;
}

/// Team-scratch columns of a shift product: n rows (real components) by 8 (children).
template <class Real, class ExecutionSpace>
using ShiftColumns =
    Kokkos::View<Real *[8], Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                 Kokkos::MemoryUnmanaged>;

/// One team's shift product. Column c of `in` (n x 8 in team scratch) is `input` component k
/// under child c's signs (zero past `children`); then output component i of child c gets
/// sum_k A(i, k) in(k, c) under the same signs, through add(i, c, value). A thread takes
/// RowTile consecutive rows (the matrix's rows are padded to whole tiles), keeps their eight
/// sums each in registers and reads its part of the matrix, matrices(shift, :, :), once: one
/// row on a GPU's many threads, a vector of rows on a host thread, whose inner loop over the
/// tile's rows then vectorises.
template <class Real, int RowTile, class TeamMember, class Matrices, class Columns, class Input,
          class Add>
KOKKOS_INLINE_FUNCTION void shiftProduct(TeamMember const &team, Matrices const &matrices,
                                         int shift, int n, int const *mirrors, int children,
                                         Columns const &in, Input const &input, Add const &add)
{
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int k) {
    for (int c = 0; c < 8; ++c)
      in(k, c) = c < children ? Real(detail::componentSign(mirrors[c], k)) * input(k, c) : Real(0);
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (n + RowTile - 1) / RowTile), [&](int tile) {
    int const first = tile * RowTile;
    Real sums[8][RowTile] = {};
    for (int k = 0; k < n; ++k)
    {
      Real const *const a = &matrices(shift, k, first);
      for (int c = 0; c < 8; ++c)
      {
        Real const x = in(k, c);
        for (int r = 0; r < RowTile; ++r)
          sums[c][r] += a[r] * x;
      }
    }
    for (int r = 0; r < RowTile && first + r < n; ++r)
      for (int c = 0; c < children; ++c)
        add(first + r, c, Real(detail::componentSign(mirrors[c], first + r)) * sums[c][r]);
  });
}

/// The shift kernel as matrix products, one team per cell first_cell + r of one level:
/// M2M (shift 0) adds its children's multipoles to the cell's, as M2MKernel does; L2L
/// (shift 1) adds the cell's local expansion to each of its children's, as L2LKernel does
/// per child.
template <class ExecutionSpace, class Real>
struct ShiftProductKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using Columns = ShiftColumns<Real, ExecutionSpace>;
  using Tune = tuning::Tuning<ExecutionSpace>;
  static constexpr int row_tile = std::is_same<Real, float>::value ? Tune::shift_row_tile_float
                                                                   : Tune::shift_row_tile_double;
  static_assert(detail::matrixRowPadding<ExecutionSpace, Real>() % row_tile == 0,
                "row tiles must divide the padding");

  detail::CellView<Memory> tree;
  detail::CoefficientArray<Real, Memory> expansions; ///< multipoles (M2M) or locals (L2L)
  ShiftMatrixArray<Real, Memory> matrices;
  int order;
  int first_cell;
  int shift; ///< 0: M2M, 1: L2L

  static std::size_t scratchBytes(int p)
  {
    return Columns::shmem_size(detail::realCoefficientCount(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = first_cell + team.league_rank();
    int const children = tree.child_count(cell);
    if (children == 0)
      return; // a leaf: nothing to gather (M2M) or to pass on (L2L)
    int const first = tree.first_child(cell);
    int mirrors[8] = {};
    for (int c = 0; c < children; ++c)
      mirrors[c] = childOctantMirror(tree, first + c, cell);
    int const n = detail::realCoefficientCount(order);
    Columns columns(team.team_scratch(0), n);
    auto *own = reinterpret_cast<Real *>(&expansions(cell, 0));
    auto const child = [&](int c) { return reinterpret_cast<Real *>(&expansions(first + c, 0)); };
    if (shift == 0)
      shiftProduct<Real, row_tile>(
          team, matrices, 0, n, mirrors, children, columns,
          [&](int k, int c) { return child(c)[k]; },
          [&](int i, int, Real value) { own[i] += value; });
    else
      shiftProduct<Real, row_tile>(
          team, matrices, 1, n, mirrors, children, columns, [&](int k, int) { return own[k]; },
          [&](int i, int c, Real value) { child(c)[i] += value; });
  }
};

} // namespace kfmm::kernels

#endif
