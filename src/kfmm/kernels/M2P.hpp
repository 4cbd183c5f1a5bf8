// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_M2P_HPP
#define KFMM_KERNELS_M2P_HPP

// The treecode's far field, M2P (seed 001, Fig. 1 and Listing 5): one team per row of the CSR
// list, i.e. per target leaf, so every target is written by exactly one team and no atomics
// are needed. The FMM's M2L is farfield/.

#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels
{

/// M2P: team r adds the field of the multipoles of its list (cells of `source_cells`) at the
/// particles of leaf target_cells.leaves(r) (sorted order, positions `x`).
template <class ExecutionSpace, class Real, class Offsets, class Sources, class Positions,
          class Potential, class Field>
struct M2PKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  detail::CellView<Memory> target_cells;
  detail::CellView<Memory> source_cells;
  Offsets offsets;
  Sources sources;
  detail::CoefficientArray<Real, Memory> multipoles;
  Positions x; ///< sorted target positions
  Potential potential;
  Field field;
  int order;

  static std::size_t scratchBytes(int p)
  {
    return detail::scratchCoefficientBytes<Real, ExecutionSpace>(expansions::m2pTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const row = team.league_rank();
    int const leaf = target_cells.leaves(row);
    detail::ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                           expansions::m2pTeamScratchSize(order));
    for (auto s = offsets(row); s < offsets(row + 1); ++s)
    {
      int const source = sources(s);
      expansions::m2pTeam(team, order, source_cells.centre(source, 0),
                          source_cells.centre(source, 1), source_cells.centre(source, 2),
                          &multipoles(source, 0), x, target_cells.particle_begin(leaf),
                          target_cells.particle_end(leaf), potential, field, work.data(),
                          source_cells.template scale<Real>(source));
    }
  }
};

} // namespace kfmm::kernels

#endif
