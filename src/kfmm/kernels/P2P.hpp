// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_P2P_HPP
#define KFMM_KERNELS_P2P_HPP

// Near field of the FMM and the treecode: every target leaf against the source leaves of its
// P2P list. Seed 001 (section 3 and Figure 3) runs one thread block per target leaf, with
// sources staged in shared memory tile by tile and one target per thread. Here the unit is
// a group of a leaf's targets (detail/TargetGroups.hpp) taken by one warp, which stages
// its own tiles and synchronises only its own lanes.

#include <kfmm/detail/Math.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Warp.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>
#include <kfmm/tree/PeriodicImage.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::kernels
{

/// The near field of groups of targets. A team holds team_size / GroupLanes independent
/// groups; the GroupLanes threads of one (a hardware warp on a GPU, a single thread on a
/// host) take one group (`groups`: rows of the list, i.e. leaves of `target_cells`, whose
/// particles are `target_x`). The particles of the row's source leaves (cells of
/// `source_cells`, particles `x` and `q`) pass through the group's scratch in full tiles,
/// packed across leaves, which small leaves (e.g. on Plummer trees) need. A lane keeps
/// TargetsPerThread targets in registers; when a group has fewer targets than its lanes
/// can hold (a small leaf), `split` lanes share each lane's worth of targets, each sweeping
/// every split-th source of a tile, and add their sums by shuffles at the end. The results
/// are ADDED to `potential` and `field` (sorted order), which the far field has already
/// written or will add to: each target belongs to exactly one group, so no atomics are
/// needed. `Shift` translates the sources of the near images (tree::ImageShift) or, in free
/// space, nothing (tree::NoImageShift).
template <class ExecutionSpace, class Real, int GroupLanes, int TargetsPerThread, class Positions,
          class Charges, class Offsets, class Sources, class Potential, class Field, class Shift>
struct P2PKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using Staged = detail::StagedSource<Real>;
  using Block = detail::TargetBlock<Real, TargetsPerThread>;

  static_assert(GroupLanes == 1 ||
                    (GroupLanes == 32 && kfmm::tuning::Tuning<ExecutionSpace>::has_warp_primitives),
                "a group of targets is one thread or one 32-lane warp");

  /// The most targets of one group.
  static constexpr int group_targets = GroupLanes * TargetsPerThread;

  detail::CellView<Memory> target_cells;
  detail::CellView<Memory> source_cells;
  Positions target_x; ///< sorted target positions
  Positions x;        ///< sorted source positions
  Charges q;          ///< sorted charges
  /// Row r (leaf target_cells.leaves(r)) has the source leaves sources(offsets(r) ..
  /// offsets(r + 1)).
  Offsets offsets;
  Sources sources;
  Kokkos::View<int *[2], Memory> groups;  ///< (row, first target in the leaf), group_targets each
  Kokkos::View<int *, Memory> num_groups; ///< one entry: the groups in use (teams cover a bound)
  Potential potential;
  Field field;
  Real softening2;
  int source_tile;
  /// Whether the targets are the sources (one tree). A target then meets itself, and any
  /// particle it coincides with, in its own leaf (equal positions have equal Morton keys):
  /// tiles holding that leaf's particles exclude zero distances pair by pair, the others
  /// are swept without and checked (TargetBlock::interact), as every tile is for targets of
  /// their own.
  bool targets_are_sources;
  /// Periodic boundaries: a source leaf of the list is a cell of a near image, its particles
  /// translated by the image's shift (tree/PeriodicImage.hpp); only its untranslated self is
  /// the targets' own leaf.
  Shift shift;

  /// Scratch of a team of `team_size` threads: two tiles per group, so that a warp stages
  /// one while its slower lanes may still read the other.
  static std::size_t scratchBytes(int team_size, int tile)
  {
    return (2 * (team_size / GroupLanes) * tile + 1) * sizeof(Staged);
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const lane = team.team_rank() % GroupLanes;
    int const slot = team.team_rank() / GroupLanes;
    int const group = team.league_rank() * (team.team_size() / GroupLanes) + slot;
    auto *const team_tiles = static_cast<Staged *>(team.team_scratch(0).get_shmem_aligned(
        2 * (team.team_size() / GroupLanes) * source_tile * sizeof(Staged), sizeof(Staged)));
    // A warp's lanes leave together: nothing below waits for the rest of the team.
    if (group >= num_groups(0))
      return;
    Staged *const tiles = team_tiles + 2 * slot * source_tile;
    int const row = groups(group, 0);
    int const leaf = target_cells.leaves(row);
    int const first_target = target_cells.particle_begin(leaf) + groups(group, 1);
    int const num_targets =
        kfmm::detail::min(group_targets, target_cells.particle_end(leaf) - first_target);

    // Lanes per TargetsPerThread targets: the largest power of two that the group's
    // targets leave room for.
    int const blocks = (num_targets + TargetsPerThread - 1) / TargetsPerThread;
    int split = 1;
    while (2 * split * blocks <= GroupLanes)
      split *= 2;
    int const part = lane % split;
    int const first = lane / split * TargetsPerThread;
    Block block;
    for (int k = 0; k < TargetsPerThread; ++k)
    {
      // Slots past the group's end compute on its last target and are not written.
      int const t = first_target + kfmm::detail::min(first + k, num_targets - 1);
      block.x[k] = target_x(t, 0);
      block.y[k] = target_x(t, 1);
      block.z[k] = target_x(t, 2);
    }
    block.clearSums();

    // The source leaves of the list are packed one after the other into full tiles, so
    // that a warp synchronises once per `source_tile` sources rather than once per source
    // leaf, which holds only a few particles on adaptive (e.g. Plummer) trees. A tile is
    // read after a warp synchronisation. With two tiles in turn, a lane overwrites a tile
    // only after the synchronisation of the other one, which every lane reaches only once
    // it has read this one: one synchronisation per tile suffices.
    int buffer = 0;
    int filled = 0;
    bool holds_targets = false; // the tile holds particles of the targets' leaf
    auto const sweep = [&]() {
      kfmm::detail::warpSync(); // the tile is staged
      // A lane of its own per TargetsPerThread targets (split 1) is the common case, on
      // uniform trees and on the host: there the stride is a constant, and the compiler
      // unrolls the source loop.
      Staged const *const tile = tiles + buffer * source_tile;
      if (split == 1)
        block.interact(tile, filled, 1, softening2, holds_targets);
      else
        block.interact(tile + part, filled - part, split, softening2, holds_targets);
      buffer ^= 1;
      filled = 0;
      holds_targets = false;
    };
    for (auto s = offsets(row); s < offsets(row + 1); ++s)
    {
      int const source = sources(s);
      int const source_leaf = tree::PeriodicImage::cellOf(source);
      bool const own_leaf = targets_are_sources && source == leaf;
      // Free space's kernel adds nothing: the sources' translation cost the near field
      // registers and instructions per staged source (docs/TUNING.md, "The near field").
      Real sx = 0, sy = 0, sz = 0;
      if constexpr (Shift::translates)
      {
        sx = static_cast<Real>(shift(source, 0));
        sy = static_cast<Real>(shift(source, 1));
        sz = static_cast<Real>(shift(source, 2));
      }
      int const source_end = source_cells.particle_end(source_leaf);
      for (int start = source_cells.particle_begin(source_leaf); start < source_end;)
      {
        int const take = kfmm::detail::min(source_tile - filled, source_end - start);
        Staged *const tile = tiles + buffer * source_tile + filled;
        // A piece (a leaf, or its part in one tile) holds a few dozen sources, under two
        // passes of a warp. Unrolled, the copy's trip count and remainder took more
        // instructions per piece than the copies themselves; rolled on the GPU, the near
        // field issues fewer instructions (docs/TUNING.md, "The near field").
#if defined(__CUDA_ARCH__)
#pragma unroll 1
#endif
        for (int i = lane; i < take; i += GroupLanes)
        {
          int const j = start + i;
          if constexpr (Shift::translates)
            tile[i] = Block::stage(x(j, 0) + sx, x(j, 1) + sy, x(j, 2) + sz, q(j));
          else
            tile[i] = Block::stage(x(j, 0), x(j, 1), x(j, 2), q(j));
        }
        filled += take;
        start += take;
        holds_targets = holds_targets || own_leaf;
        if (filled == source_tile)
          sweep();
      }
    }
    if (filled > 0)
      sweep();

    for (int k = 0; k < TargetsPerThread; ++k)
    {
      block.phi[k] = kfmm::detail::laneGroupSum(block.phi[k], split);
      block.gx[k] = kfmm::detail::laneGroupSum(block.gx[k], split);
      block.gy[k] = kfmm::detail::laneGroupSum(block.gy[k], split);
      block.gz[k] = kfmm::detail::laneGroupSum(block.gz[k], split);
    }
    if (part != 0)
      return;
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
};

} // namespace kfmm::kernels

#endif
