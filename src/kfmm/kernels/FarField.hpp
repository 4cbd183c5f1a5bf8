// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_FAR_FIELD_HPP
#define KFMM_KERNELS_FAR_FIELD_HPP

// The far field: M2L for the FMM (per pair, or by rotation: expansions/Rotation.hpp), M2P for
// the treecode (seed 001, Fig. 1 and Listing 5). One team per row of the CSR list, i.e. per
// target, so every target is written by exactly one team and no atomics are needed.

#include <kfmm/expansions/Rotation.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/farfield/M2LRotations.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels
{

/// M2L: team `cell` (of `target_cells`) sums the translations of the multipoles of its list
/// (cells of `source_cells`) into a local expansion kept in scratch, then writes it:
/// locals(cell) = sum over sources. A pair whose direction has rotation tables in
/// `rotations` (the rotation M2L, M2LRotations.hpp) is translated by rotation, coaxial
/// translation and rotation back; any other pair, and every pair when `rotations` holds no
/// directions (the per-pair M2L), with (T2) directly.
template <class ExecutionSpace, class Real, class Offsets, class Sources>
struct M2LKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  detail::CellView<Memory> target_cells;
  detail::CellView<Memory> source_cells;
  Offsets offsets; ///< row `cell` holds sources(offsets(cell) .. offsets(cell + 1))
  Sources sources;
  farfield::M2LRotations<Real, Memory> rotations;
  detail::CoefficientArray<Real, Memory> multipoles;
  detail::CoefficientArray<Real, Memory> locals;
  int order;

  /// The work array serves both operators, one pair at a time.
  KOKKOS_INLINE_FUNCTION static int workSize(int p)
  {
    return kfmm::detail::max(expansions::m2lRotatedTeamScratchSize(p),
                             expansions::m2lTeamScratchSize(p));
  }

  using ScratchReals =
      Kokkos::View<Real *, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  static std::size_t scratchBytes(int p)
  {
    return detail::scratchCoefficientBytes<Real, ExecutionSpace>(workSize(p)) +
           detail::scratchCoefficientBytes<Real, ExecutionSpace>(expansions::coefficientCount(p)) +
           ScratchReals::shmem_size(expansions::coaxialBinomialCount(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = team.league_rank();
    int const count = expansions::coefficientCount(order);
    detail::ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0), workSize(order));
    detail::ScratchCoefficients<Real, ExecutionSpace> sum(team.team_scratch(0), count);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count),
                         [&](int i) { sum(i) = Kokkos::complex<Real>(0, 0); });
    Real const target_scale = target_cells.template scale<Real>(cell);
    bool const rotate = rotations.num_directions > 0;
    // Made once per team, for all its pairs; m2lRotatedTeam's first barrier publishes it.
    ScratchReals binomials(team.team_scratch(0), expansions::coaxialBinomialCount(order));
    if (rotate)
      expansions::coaxialBinomialsTeam(team, order, binomials.data());
    for (auto s = offsets(cell); s < offsets(cell + 1); ++s)
    {
      int const source = sources(s);
      Real const dx = detail::centreOffset<Real>(target_cells, cell, source_cells, source, 0);
      Real const dy = detail::centreOffset<Real>(target_cells, cell, source_cells, source, 1);
      Real const dz = detail::centreOffset<Real>(target_cells, cell, source_cells, source, 2);
      Real const source_scale = source_cells.template scale<Real>(source);
      int const direction = rotate ? rotations.direction(cell, source) : -1;
      if (direction >= 0)
        expansions::m2lRotatedTeam(team, order, dx, dy, dz, &rotations.tables(direction, 0),
                                   binomials.data(), &multipoles(source, 0), sum.data(),
                                   work.data(), source_scale, target_scale);
      else
        expansions::m2lTeam(team, order, dx, dy, dz, &multipoles(source, 0), sum.data(),
                            work.data(), source_scale, target_scale);
    }
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count),
                         [&](int i) { locals(cell, i) = sum(i); });
  }
};

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
