// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DOWNWARD_HPP
#define KFMM_KERNELS_DOWNWARD_HPP

// The downward pass of the FMM (seed 001, Fig. 1): L2L adds each parent's local expansion
// to its children, one launch per level from the top down; L2P evaluates each leaf's local
// expansion at its particles. One team per cell writes only that cell (or its particles).

#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels
{

/// L2L: team r adds the local expansion of the parent of cell first_cell + r to it.
template <class ExecutionSpace, class Real>
struct L2LKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  detail::CellView<Memory> tree;
  detail::CoefficientArray<Real, Memory> locals;
  int order;
  int first_cell;

  static std::size_t scratchBytes(int p)
  {
    return detail::scratchCoefficientBytes<Real, ExecutionSpace>(expansions::l2lTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = first_cell + team.league_rank();
    int const parent = tree.parent(cell);
    detail::ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                           expansions::l2lTeamScratchSize(order));
    expansions::l2lTeam(team, order, tree.template offset<Real>(cell, parent, 0),
                        tree.template offset<Real>(cell, parent, 1),
                        tree.template offset<Real>(cell, parent, 2), &locals(parent, 0),
                        &locals(cell, 0), work.data(), tree.template scale<Real>(parent),
                        tree.template scale<Real>(cell));
  }
};

/// L2P: team r adds the local expansion of leaf leaves(r) at its particles (sorted order).
template <class ExecutionSpace, class Real, class Positions, class Potential, class Field>
struct L2PKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  detail::CellView<Memory> tree;
  detail::CoefficientArray<Real, Memory> locals;
  Positions x;
  Potential potential;
  Field field;
  int order;

  static std::size_t scratchBytes(int p)
  {
    return detail::scratchCoefficientBytes<Real, ExecutionSpace>(expansions::l2pTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const leaf = tree.leaves(team.league_rank());
    detail::ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                           expansions::l2pTeamScratchSize(order));
    expansions::l2pTeam(team, order, tree.centre(leaf, 0), tree.centre(leaf, 1),
                        tree.centre(leaf, 2), &locals(leaf, 0), x, tree.particle_begin(leaf),
                        tree.particle_end(leaf), potential, field, work.data(),
                        tree.template scale<Real>(leaf));
  }
};

} // namespace kfmm::kernels

#endif
