// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_UPWARD_HPP
#define KFMM_KERNELS_UPWARD_HPP

// The upward pass (seed 001, Fig. 1): P2M forms each leaf's multipole expansion from its
// particles, then M2M moves the children's expansions to their parents, one launch per
// level from the deepest up. One team per cell writes only that cell's coefficients.

#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// P2M: team r forms the multipole expansion of leaf leaves(r).
template <class ExecutionSpace, class Real, class Positions, class Charges>
struct P2MKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  CellView<Memory> tree;
  Positions x;
  Charges q;
  CoefficientArray<Real, Memory> multipoles;
  int order;

  static std::size_t scratchBytes(int p, int team_size)
  {
    return scratchCoefficientBytes<Real, ExecutionSpace>(
        expansions::p2mTeamScratchSize(p, team_size));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = tree.leaves(team.league_rank());
    ScratchCoefficients<Real, ExecutionSpace> work(
        team.team_scratch(0), expansions::p2mTeamScratchSize(order, team.team_size()));
    expansions::p2mTeam(team, order, tree.centre(cell, 0), tree.centre(cell, 1),
                        tree.centre(cell, 2), x, q,
                        tree.particle_begin(cell), tree.particle_end(cell),
                        &multipoles(cell, 0), work.data(), tree.template scale<Real>(cell));
  }
};

/// M2M: team r adds the expansions of the children of cell first_cell + r (of one level).
template <class ExecutionSpace, class Real>
struct M2MKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  CellView<Memory> tree;
  CoefficientArray<Real, Memory> multipoles;
  int order;
  int first_cell;

  static std::size_t scratchBytes(int p)
  {
    return scratchCoefficientBytes<Real, ExecutionSpace>(expansions::m2mTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = first_cell + team.league_rank();
    int const children = tree.child_count(cell);
    if (children == 0)
      return; // a leaf: its expansion came from P2M
    ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                   expansions::m2mTeamScratchSize(order));
    for (int c = tree.first_child(cell); c < tree.first_child(cell) + children; ++c)
      expansions::m2mTeam(team, order, tree.template offset<Real>(c, cell, 0),
                          tree.template offset<Real>(c, cell, 1),
                          tree.template offset<Real>(c, cell, 2), &multipoles(c, 0),
                          &multipoles(cell, 0), work.data(), tree.template scale<Real>(c),
                          tree.template scale<Real>(cell));
  }
};

/// M2M as a matrix product (ShiftMatrices.hpp): team r adds the expansions of the children of
/// cell first_cell + r (of one level), as M2MKernel does.
template <class ExecutionSpace, class Real>
struct M2MProductKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using Columns = ShiftColumns<Real, ExecutionSpace>;

  CellView<Memory> tree;
  CoefficientArray<Real, Memory> multipoles;
  ShiftMatrixArray<Real, Memory> matrices;
  int order;
  int first_cell;

  static std::size_t scratchBytes(int p) { return Columns::shmem_size(realCoefficientCount(p)); }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = first_cell + team.league_rank();
    int const children = tree.child_count(cell);
    if (children == 0)
      return; // a leaf: its expansion came from P2M
    int const first = tree.first_child(cell);
    int mirrors[8] = {};
    for (int c = 0; c < children; ++c)
      mirrors[c] = childOctantMirror(tree, first + c, cell);
    int const n = realCoefficientCount(order);
    Columns columns(team.team_scratch(0), n);
    auto *parent = reinterpret_cast<Real *>(&multipoles(cell, 0));
    shiftProduct<Real>(
        team, matrices, 0, n, mirrors, children, columns,
        [&](int k, int c) { return reinterpret_cast<Real const *>(&multipoles(first + c, 0))[k]; },
        [&](int i, int, Real value) { parent[i] += value; });
  }
};

} // namespace kfmm::detail

#endif
