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

/// One team per target leaf (a leaf of `target_cells`, whose particles are `target_x`; the
/// source leaves are cells of `source_cells`, whose particles are `x` and `q`: one tree, or a
/// target and a source tree). Targets are taken in chunks of team_size * TargetsPerThread
/// (a leaf at the deepest level may hold more than a team); for each chunk the particles of
/// all the list's source leaves pass through scratch in full tiles. The results are ADDED to `potential`
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

  CellView<Memory> target_cells;
  CellView<Memory> source_cells;
  Positions target_x; ///< sorted target positions
  Positions x;        ///< sorted source positions
  Charges q;          ///< sorted charges
  Offsets offsets;    ///< row r (leaf target_cells.leaves(r)) has sources(offsets(r) .. offsets(r + 1))
  Sources sources;    ///< source leaves
  Potential potential;
  Field field;
  Real softening2;
  int source_tile;

  static std::size_t scratchBytes(int tile) { return (tile + 1) * sizeof(Staged); }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const row = team.league_rank();
    int const leaf = target_cells.leaves(row);
    int const first_target = target_cells.particle_begin(leaf);
    int const num_targets = target_cells.particle_end(leaf) - first_target;
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
        block.x[k] = target_x(t, 0);
        block.y[k] = target_x(t, 1);
        block.z[k] = target_x(t, 2);
      }
      block.clearSums();

      // The source leaves of the list are packed one after the other into full tiles, so
      // that a team synchronises once per `source_tile` sources rather than once per
      // source leaf, which holds only a few particles on adaptive (e.g. Plummer) trees.
      int filled = 0;
      auto const sweep = [&]() {
        team.team_barrier(); // the tile is staged
        block.interact(staged, filled, softening2);
        team.team_barrier(); // the tile is no longer read
        filled = 0;
      };
      for (auto s = offsets(row); s < offsets(row + 1); ++s)
      {
        int const source_leaf = sources(s);
        int const source_end = source_cells.particle_end(source_leaf);
        for (int start = source_cells.particle_begin(source_leaf); start < source_end;)
        {
          int const take = detail::min(source_tile - filled, source_end - start);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, take), [&](int i) {
            int const j = start + i;
            staged[filled + i] = Staged{x(j, 0), x(j, 1), x(j, 2), q(j)};
          });
          filled += take;
          start += take;
          if (filled == source_tile)
            sweep();
        }
      }
      if (filled > 0)
        sweep();

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
