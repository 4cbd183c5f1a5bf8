// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_P2P_HPP
#define KFMM_KERNELS_P2P_HPP

// Near field of the FMM and the treecode: every target leaf against the source leaves of its
// P2P list (seed 001, section 3 and Figure 3: one thread block per target leaf, sources
// staged in shared memory tile by tile, one target per thread).

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Tuning.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// One team per target leaf. Targets are taken in chunks of team_size * TargetsPerThread
/// (a leaf at the deepest level may hold more than a team); for each chunk every source
/// leaf of the list passes through scratch in tiles. The results are ADDED to `potential`
/// and `field` (sorted order), which the far field has already written or will add to:
/// each target is written by exactly one team, so no atomics are needed.
template <class ExecutionSpace, class Real, int TargetsPerThread, class Positions, class Charges,
          class Offsets, class Sources, class Potential, class Field>
struct P2PKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using Staged = StagedSource<Real>;
  using Block = TargetBlock<Real, TargetsPerThread>;

  CellView<Memory> tree;
  Positions x;      ///< sorted positions
  Charges q;        ///< sorted charges
  Offsets offsets;  ///< row r (leaf tree.leaves(r)) has sources(offsets(r) .. offsets(r + 1))
  Sources sources;  ///< source leaves
  Potential potential;
  Field field;
  Real softening2;
  int source_tile;

  static std::size_t scratchBytes(int tile) { return (tile + 1) * sizeof(Staged); }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const row = team.league_rank();
    int const leaf = tree.leaves(row);
    int const first_target = tree.particle_begin(leaf);
    int const num_targets = tree.particle_end(leaf) - first_target;
    int const per_team = team.team_size() * TargetsPerThread;
    auto *const staged = static_cast<Staged *>(
        team.team_scratch(0).get_shmem_aligned(source_tile * sizeof(Staged), sizeof(Staged)));

    for (int chunk = 0; chunk < num_targets; chunk += per_team)
    {
      int const first = chunk + team.team_rank() * TargetsPerThread;
      Block block;
      for (int k = 0; k < TargetsPerThread; ++k)
      {
        // Slots past the leaf's end compute on its last particle and are not written.
        int const t = first_target + detail::min(first + k, num_targets - 1);
        block.x[k] = x(t, 0);
        block.y[k] = x(t, 1);
        block.z[k] = x(t, 2);
      }
      block.clearSums();

      for (auto s = offsets(row); s < offsets(row + 1); ++s)
      {
        int const source_leaf = sources(s);
        int const source_end = tree.particle_end(source_leaf);
        for (int tile_start = tree.particle_begin(source_leaf); tile_start < source_end;
             tile_start += source_tile)
        {
          int const tile = detail::min(source_tile, source_end - tile_start);
          team.team_barrier(); // the previous tile is no longer read
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile),
                               [&](int i) {
                                 int const j = tile_start + i;
                                 staged[i] = Staged{x(j, 0), x(j, 1), x(j, 2), q(j)};
                               });
          team.team_barrier();
          block.interact(staged, tile, softening2);
        }
      }

      for (int k = 0; k < TargetsPerThread; ++k)
      {
        int const t = first + k;
        if (t < num_targets)
        {
          int const i = first_target + t;
          potential(i) += block.phi[k];
          field(i, 0) += block.gx[k];
          field(i, 1) += block.gy[k];
          field(i, 2) += block.gz[k];
        }
      }
    }
  }
};

} // namespace kfmm::detail

#endif
