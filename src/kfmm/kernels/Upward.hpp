// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_UPWARD_HPP
#define KFMM_KERNELS_UPWARD_HPP

// The upward pass (seed 001, Fig. 1): P2M forms each leaf's multipole expansion from its
// particles, then M2M moves the children's expansions to their parents, one launch per
// level from the deepest up. One team per cell writes only that cell's coefficients.

#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels
{

/// P2M: team r forms the multipole expansion of leaf leaves(r).
template <class ExecutionSpace, class Real, class Positions, class Charges>
struct P2MKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  detail::CellView<Memory> tree;
  Positions x;
  Charges q;
  detail::CoefficientArray<Real, Memory> multipoles;
  int order;

  static std::size_t scratchBytes(int p, int team_size)
  {
    return detail::scratchCoefficientBytes<Real, ExecutionSpace>(
        expansions::p2mTeamScratchSize<Real>(p, team_size));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = tree.leaves(team.league_rank());
    detail::ScratchCoefficients<Real, ExecutionSpace> work(
        team.team_scratch(0), expansions::p2mTeamScratchSize<Real>(order, team.team_size()));
    expansions::p2mTeam(team, order, tree.centre(cell, 0), tree.centre(cell, 1),
                        tree.centre(cell, 2), x, q, tree.particle_begin(cell),
                        tree.particle_end(cell), &multipoles(cell, 0), work.data(),
                        tree.template scale<Real>(cell));
  }
};

/// M2M: team r adds the expansions of the children of cell first_cell + r (of one level).
template <class ExecutionSpace, class Real>
struct M2MKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  detail::CellView<Memory> tree;
  detail::CoefficientArray<Real, Memory> multipoles;
  int order;
  int first_cell;

  static std::size_t scratchBytes(int p)
  {
    return detail::scratchCoefficientBytes<Real, ExecutionSpace>(expansions::m2mTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = first_cell + team.league_rank();
    int const children = tree.child_count(cell);
    if (children == 0)
      return; // a leaf: its expansion came from P2M
    detail::ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                           expansions::m2mTeamScratchSize(order));
    for (int c = tree.first_child(cell); c < tree.first_child(cell) + children; ++c)
      expansions::m2mTeam(team, order, tree.template offset<Real>(c, cell, 0),
                          tree.template offset<Real>(c, cell, 1),
                          tree.template offset<Real>(c, cell, 2), &multipoles(c, 0),
                          &multipoles(cell, 0), work.data(), tree.template scale<Real>(c),
                          tree.template scale<Real>(cell));
  }
};

} // namespace kfmm::kernels

#endif
