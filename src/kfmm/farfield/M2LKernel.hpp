// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_M2L_KERNEL_HPP
#define KFMM_FARFIELD_M2L_KERNEL_HPP

// The per-pair and the rotation M2L (expansions/Rotation.hpp): one team per row of the CSR
// list, i.e. per target cell, so every target is written by exactly one team and no atomics
// are needed (seed 001, Fig. 1). The grouped M2L is farfield/GroupedM2L.hpp.

#include <kfmm/expansions/Rotation.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/farfield/M2LRotations.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/tree/PeriodicImage.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::farfield
{

/// M2L: team `cell` (of `target_cells`) sums the translations of the multipoles of its list
/// (cells of `source_cells`) into a local expansion kept in scratch, then writes it:
/// locals(cell) = sum over sources. A pair whose direction has rotation tables in
/// `rotations` (the rotation M2L, farfield/M2LRotations.hpp) is translated by rotation, coaxial
/// translation and rotation back; any other pair, and every pair when `rotations` holds no
/// directions (the per-pair M2L), with (T2) directly.
template <class ExecutionSpace, class Real, class Offsets, class Sources>
struct M2LKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  kernels::detail::CellView<Memory> target_cells;
  kernels::detail::CellView<Memory> source_cells;
  Offsets offsets; ///< row `cell` holds sources(offsets(cell) .. offsets(cell + 1))
  Sources sources;
  M2LRotations<Real, Memory> rotations;
  kernels::detail::CoefficientArray<Real, Memory> multipoles;
  kernels::detail::CoefficientArray<Real, Memory> locals;
  int order;
  tree::ImageShift shift; ///< periodic boundaries: the sources' images (tree/PeriodicImage.hpp)

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
    return kernels::detail::scratchCoefficientBytes<Real, ExecutionSpace>(workSize(p)) +
           kernels::detail::scratchCoefficientBytes<Real, ExecutionSpace>(
               expansions::coefficientCount(p)) +
           ScratchReals::shmem_size(expansions::coaxialBinomialCount(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const cell = team.league_rank();
    int const count = expansions::coefficientCount(order);
    kernels::detail::ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                                    workSize(order));
    kernels::detail::ScratchCoefficients<Real, ExecutionSpace> sum(team.team_scratch(0), count);
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
      int const entry = sources(s);
      int const source = tree::PeriodicImage::cellOf(entry);
      Real const dx = kernels::detail::centreOffset<Real>(target_cells, cell, source_cells, source,
                                                          shift(entry, 0), 0);
      Real const dy = kernels::detail::centreOffset<Real>(target_cells, cell, source_cells, source,
                                                          shift(entry, 1), 1);
      Real const dz = kernels::detail::centreOffset<Real>(target_cells, cell, source_cells, source,
                                                          shift(entry, 2), 2);
      Real const source_scale = source_cells.template scale<Real>(source);
      int const direction = rotate ? rotations.direction(cell, entry) : -1;
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

} // namespace kfmm::farfield

#endif
