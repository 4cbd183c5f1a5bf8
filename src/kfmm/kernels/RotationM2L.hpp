// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_ROTATION_M2L_HPP
#define KFMM_KERNELS_ROTATION_M2L_HPP

// The rotation M2L: one team per row of the CSR list, i.e. per target cell (as the per-pair
// M2L of FarField.hpp), each pair translated by rotation, coaxial translation and rotation
// back (expansions/Rotation.hpp) with its direction's precomputed tables
// (M2LRotations.hpp); a pair without a table is translated with (T2). The local expansion
// is summed in team scratch and written once: no atomics, and the same order of sums on
// every run.

#include <kfmm/expansions/Rotation.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/M2LRotations.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

template <class ExecutionSpace, class Real, class Offsets, class Sources>
struct RotationM2LKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  CellView<Memory> target_cells;
  CellView<Memory> source_cells;
  Offsets offsets; ///< row `cell` holds sources(offsets(cell) .. offsets(cell + 1))
  Sources sources;
  M2LRotations<Real, Memory> rotations;
  CoefficientArray<Real, Memory> multipoles;
  CoefficientArray<Real, Memory> locals;
  int order;

  /// The work array serves both operators, one pair at a time.
  KOKKOS_INLINE_FUNCTION static int workSize(int p)
  {
    return kfmm::detail::max(expansions::m2lRotatedTeamScratchSize(p),
                             expansions::m2lTeamScratchSize(p));
  }

  static std::size_t scratchBytes(int p)
  {
    return scratchCoefficientBytes<Real, ExecutionSpace>(workSize(p)) +
           scratchCoefficientBytes<Real, ExecutionSpace>(expansions::coefficientCount(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = team.league_rank();
    int const count = expansions::coefficientCount(order);
    ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0), workSize(order));
    ScratchCoefficients<Real, ExecutionSpace> sum(team.team_scratch(0), count);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count),
                         [&](int i) { sum(i) = Kokkos::complex<Real>(0, 0); });
    Real const target_scale = target_cells.template scale<Real>(cell);
    for (auto s = offsets(cell); s < offsets(cell + 1); ++s)
    {
      int const source = sources(s);
      Real const dx = centreOffset<Real>(target_cells, cell, source_cells, source, 0);
      Real const dy = centreOffset<Real>(target_cells, cell, source_cells, source, 1);
      Real const dz = centreOffset<Real>(target_cells, cell, source_cells, source, 2);
      Real const source_scale = source_cells.template scale<Real>(source);
      int const direction = rotations.direction(cell, source);
      if (direction >= 0)
        expansions::m2lRotatedTeam(team, order, dx, dy, dz, &rotations.tables(direction, 0),
                                   &multipoles(source, 0), sum.data(), work.data(),
                                   source_scale, target_scale);
      else
        expansions::m2lTeam(team, order, dx, dy, dz, &multipoles(source, 0), sum.data(),
                            work.data(), source_scale, target_scale);
    }
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count),
                         [&](int i) { locals(cell, i) = sum(i); });
  }
};

} // namespace kfmm::detail

#endif
