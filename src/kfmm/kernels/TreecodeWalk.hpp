// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_TREECODE_WALK_HPP
#define KFMM_KERNELS_TREECODE_WALK_HPP

// The treecode without lists: each group of targets walks the source tree and evaluates
// what it meets on the spot, the scheme of GPU treecodes (seed 001, section 3: a walk per
// group of targets, multipoles accepted by the MAC evaluated at once, leaves too close
// taken particle by particle). The walk makes the decisions of the dual traversal in
// treecode mode (tree/InteractionLists.hpp), whose target is always a leaf: for the group's
// leaf L and a source cell s, (L, s) is accepted (M2P), near (P2P) or split (s's children
// are examined). So it meets the cells of L's M2P and P2P rows, each once, in another order.

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Tuning.hpp>
#include <kfmm/detail/Warp.hpp>
#include <kfmm/expansions/Operators.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Morton.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// The treecode's near and far fields of groups of targets, each group walking the source
/// tree (file comment). Groups, lanes and tiles as in P2PKernel: the GroupLanes threads of a
/// group (a warp on a GPU, one thread on a host) hold TargetsPerThread targets each. The
/// cells to examine are the children of split cells, a warp's lanes examining one child each;
/// the split ones go on the group's stack in scratch (a cell is split at most once per level,
/// leaving at most 7 siblings behind, so the stack holds 7 (max_level + 1) + 1 cells). The
/// results are ADDED to `potential` and `field` (sorted order).
template <class ExecutionSpace, class Real, int GroupLanes, int TargetsPerThread, class Positions,
          class Charges, class Potential, class Field>
struct TreecodeWalkKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using Staged = StagedSource<Real>;
  using Block = TargetBlock<Real, TargetsPerThread>;

  static_assert(GroupLanes == 1 ||
                    (GroupLanes == 32 && Tuning<ExecutionSpace>::has_warp_primitives),
                "a group of targets is one thread or one 32-lane warp");

  static constexpr int group_targets = GroupLanes * TargetsPerThread;
  static constexpr int stack_capacity = 7 * (tree::max_level + 1) + 1;

  tree::detail::PairRule<Memory> rule; ///< treecode mode
  CellView<Memory> target_cells;
  CellView<Memory> source_cells;
  CoefficientArray<Real, Memory> multipoles;
  Positions target_x; ///< sorted target positions
  Positions x;        ///< sorted source positions
  Charges q;          ///< sorted charges
  Kokkos::View<int *[2], Memory> groups;  ///< (leaf row, first target in the leaf)
  Kokkos::View<int *, Memory> num_groups; ///< one entry: the groups in use
  Potential potential;
  Field field;
  Real softening2;
  int source_tile;
  int order;
  bool targets_are_sources;

  static std::size_t scratchBytes(int team_size, int tile)
  {
    int const group_count = team_size / GroupLanes;
    return (2 * group_count * tile + 1) * sizeof(Staged) +
           (group_count * stack_capacity + 1) * sizeof(int);
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const group_count = team.team_size() / GroupLanes;
    int const lane = team.team_rank() % GroupLanes;
    int const slot = team.team_rank() / GroupLanes;
    int const group = team.league_rank() * group_count + slot;
    auto *const team_tiles = static_cast<Staged *>(team.team_scratch(0).get_shmem_aligned(
        2 * group_count * source_tile * sizeof(Staged), sizeof(Staged)));
    auto *const team_stacks = static_cast<int *>(team.team_scratch(0).get_shmem_aligned(
        group_count * stack_capacity * sizeof(int), sizeof(int)));
    if (group >= num_groups(0))
      return;
    Staged *const tiles = team_tiles + 2 * slot * source_tile;
    int *const stack = team_stacks + slot * stack_capacity;
    int const leaf = target_cells.leaves(groups(group, 0));
    int const first_target = target_cells.particle_begin(leaf) + groups(group, 1);
    int const num_targets =
        detail::min(group_targets, target_cells.particle_end(leaf) - first_target);
    int const first = lane * TargetsPerThread;
    Block block;
    for (int k = 0; k < TargetsPerThread; ++k)
    {
      // Slots past the group's end compute on its last target and are not written.
      int const t = first_target + detail::min(first + k, num_targets - 1);
      block.x[k] = target_x(t, 0);
      block.y[k] = target_x(t, 1);
      block.z[k] = target_x(t, 2);
    }
    block.clearSums();

    // Near leaves' particles through two tiles in turn, packed across leaves (P2PKernel).
    int buffer = 0;
    int filled = 0;
    bool holds_targets = false;
    auto const sweep = [&]() {
      warpSync();
      block.interact(tiles + buffer * source_tile, filled, 1, softening2, holds_targets);
      buffer ^= 1;
      filled = 0;
      holds_targets = false;
    };
    auto const near = [&](int source_leaf) {
      bool const own_leaf = targets_are_sources && source_leaf == leaf;
      int const source_end = source_cells.particle_end(source_leaf);
      for (int start = source_cells.particle_begin(source_leaf); start < source_end;)
      {
        int const take = detail::min(source_tile - filled, source_end - start);
        Staged *const tile = tiles + buffer * source_tile + filled;
        for (int i = lane; i < take; i += GroupLanes)
        {
          int const j = start + i;
          tile[i] = Block::stage(x(j, 0), x(j, 1), x(j, 2), q(j));
        }
        filled += take;
        start += take;
        holds_targets = holds_targets || own_leaf;
        if (filled == source_tile)
          sweep();
      }
    };
    // An accepted cell: its multipoles at each target (offsets taken in double, as in the
    // list's M2P kernel).
    auto const far = [&](int source) {
      double const cx = source_cells.centre(source, 0);
      double const cy = source_cells.centre(source, 1);
      double const cz = source_cells.centre(source, 2);
      Real const scale = source_cells.template scale<Real>(source);
      auto const *const M = &multipoles(source, 0);
      for (int k = 0; k < TargetsPerThread; ++k)
        expansions::m2p(order, static_cast<Real>(static_cast<double>(block.x[k]) - cx),
                        static_cast<Real>(static_cast<double>(block.y[k]) - cy),
                        static_cast<Real>(static_cast<double>(block.z[k]) - cz), M, block.phi[k],
                        block.gx[k], block.gy[k], block.gz[k], scale);
    };
    auto const visit = [&](int source, std::uint8_t action) {
      if (action == tree::detail::far_pair)
        far(source);
      else if (action == tree::detail::near_pair || action == tree::detail::near_self)
        near(source);
    };

    // The root, then the children of every split cell, lane by lane.
    int top = 0;
    std::uint8_t const root_action = rule.action(leaf, 0);
    if (root_action == tree::detail::split_source)
    {
      if (lane == 0)
        stack[0] = 0;
      top = 1;
      warpSync();
    }
    else
      visit(0, root_action);
    while (top > 0)
    {
      int const cell = stack[--top];
      warpSync(); // every lane has read the top before it is overwritten
      int const children = source_cells.child_count(cell);
      int const first_child = source_cells.first_child(cell);
      for (int base = 0; base < children; base += GroupLanes)
      {
        int const child = first_child + base + lane;
        std::uint8_t const action =
            base + lane < children ? rule.action(leaf, child) : std::uint8_t(0xff);
        bool const split = action == tree::detail::split_source;
        unsigned const splits = warpBallot(split);
        unsigned const settled = warpBallot(action != 0xff && !split);
        if (split)
          stack[top + popCount(splits & ((1u << lane) - 1u))] = child;
        top += popCount(splits);
        warpSync(); // the pushed cells are visible to every lane
        for (unsigned m = settled; m != 0; m &= m - 1)
        {
          int const settled_lane = lowestLane(m);
          int const source = first_child + base + settled_lane;
          visit(source, static_cast<std::uint8_t>(warpBroadcast(action, settled_lane)));
        }
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
};

} // namespace kfmm::detail

#endif
