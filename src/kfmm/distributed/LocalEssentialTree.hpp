// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_LOCAL_ESSENTIAL_TREE_HPP
#define KFMM_DISTRIBUTED_LOCAL_ESSENTIAL_TREE_HPP

// The trees of one rank of the distributed solver (DistributedFmm.hpp): its own tree, whose
// cells are the targets, and its local essential tree, the part of the tree of all ranks'
// particles that its targets' traversal visits (Warren & Salmon 1993; Lashuk et al. 2009,
// seed 002, section III). Both are cells of the tree of all particles, with that tree's
// radii, so the traversal of the two (tree/InteractionLists.hpp) takes every decision the
// traversal of the tree of all particles takes for this rank's targets, and the results equal
// the single-rank solver's to rounding.
//
// The partition (MortonPartition with PartitionOptions::leaf_size) gives each rank a range of
// keys that no leaf of the tree of all particles crosses. Then:
//  1. Own tree: the rank's particles in the partition's cube. A cell that also holds another
//     rank's keys (a shared cell: it reaches the last key of the rank before or the first of
//     the rank after, from one MPI_Allgather of each rank's key span) splits always; the tree
//     of all particles splits it too, since it holds particles on both sides of a range
//     boundary and no leaf does. Any other cell holds all of its particles here and splits by
//     count. So the own tree is the tree of all particles restricted to cells holding this
//     rank's particles. The particles arrive from each rank in key order (MortonPartition::
//     ownedRuns): their keys merge (tree/MergeSorted.hpp) rather than sort again.
//  2. Shared cells: each rank's radius of a shared cell bounds its own particles; the
//     maximum over ranks (one MPI_Allreduce) is the radius of the tree of all particles, since
//     a radius is a maximum over children (tree/Octree.hpp). Their particle counts summed
//     over the ranks (another) are those of the tree of all particles (Octree::stands_for).
//  3. Receivers' regions: a rank's target cells are its shared cells and the cells under its
//     subtree roots (non-shared cells whose parent is shared, or the root). Each ball (centre,
//     radius) of a cell holds the balls of the cells below it. The region is the top of the
//     rank's tree as a tree of balls: the root, and the children of every node that is shared
//     or holds more than region_leaves leaves' particles. Such an expanded node is a sized
//     ball, standing for itself; any other node holds every target cell under it. Each node
//     also carries the largest radius of a sparse leaf below it and the fewest particles of
//     one (tree::detail::PairRule::sparseLeafPair: a leaf of a few particles, which the
//     traversal computes directly where it is the larger cell of an accepted pair of few
//     enough particle pairs), and whether it is a leaf. Each rank's region goes to every
//     other rank as the evaluation's values travel (detail/StagedExchange.hpp).
//  4. Selection, for each receiver on each sender: a sender's non-shared cell is opened when
//     it might fail the acceptance test (R_t + R_s) < theta |c_t - c_s| with the lists' least
//     separation (tree::detail::thetaAccepts) against some target cell of the receiver, which
//     it can only do against a holding node that it fails (for a cell inside ball B,
//     |c_t - c_B| + R_t <= R_B, so theta |c_t - c_s| >= theta |c_B - c_s| - theta (R_B - R_t)
//     > R_t + R_s + (1 - theta)(R_B - R_t) when B passes, and |c_t - c_s| - R_t - R_s >=
//     |c_B - c_s| - R_B - R_s) or against a sized node no larger than it (the traversal
//     splits the larger cell of a pair, never a leaf; a leaf target, the only kind a leaf's
//     particles serve, is inside a holding node). A descent of the region from its root
//     finds them, skipping the nodes under any node that the cell passes against. A cell
//     also opens where a pair with a sparse leaf may need its particles: when it is a sparse
//     leaf itself, or when a sparse leaf of the receiver may meet it as the larger cell of a
//     pair of few enough particle pairs (the leaf refused its parent, or the leaf's parent
//     refused it, or the leaf took an ancestor directly), and then its whole subtree opens
//     (OpenCells).
//     The sender sends its subtree roots, and the children of every sent cell that is opened:
//     a sent leaf that is opened sends its particles (the ghosts), a sent cell that is not
//     opened is pruned, and its multipole travels at every evaluation. A holding node is
//     coarser than the target cells it holds: it opens more than the traversal visits, which
//     costs messages, never accuracy. What is sent stays on the device and travels as the
//     evaluation's values do (detail/StagedExchange.hpp: page-locked buffers the process
//     keeps, or in place with a GPU-aware MPI).
//  5. Local essential tree: the rank's particles, the ghosts and one entry per pruned cell (at
//     its first key, standing for its particles; the received entries' keys, sorted, merge
//     with the own tree's sorted keys), split by the count of particles the entries stand
//     for, which is the count in the tree of all particles, except that a pruned cell's entry
//     stays a leaf at its level with its sender's radius. The inner cells' radii follow
//     from their children as in any tree, so every cell carries its radius in the tree of all
//     particles; each cell also carries the count of particles it stands for (Octree::
//     stands_for), which the rule of sparse leaves reads. Evaluation: P2M, the pruned cells'
//     multipoles set from their senders, M2M: every inner cell then has all of its children,
//     so its multipole is that of the tree of all particles.
// The acceptance test in the selection takes a relative margin of 1e-12, so that the rounding
// of the trees' frame (Fmm.hpp) cannot accept there what the traversal rejects.

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>
#include <kfmm/distributed/detail/StagedExchange.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/MergeSorted.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace kfmm::distributed
{

/// Seconds of each step of the local essential trees' build (the file comment's steps),
/// each ended by a fence, where the solver times its stages (Options::time_stages); otherwise
/// all 0. A step's MPI calls are part of its time.
struct EssentialTreeSteps
{
  double own_tree = 0;       ///< step 1: the ranks' key spans, the own keys, their merge and tree
  double shared_cells = 0;   ///< step 2: the shared cells' radii and counts
  double regions = 0;        ///< step 3: every rank's region
  double select_sent = 0;    ///< step 4: what this rank sends to each receiver
  double exchange_sent = 0;  ///< step 4's exchange of the pruned cells and ghosts
  double essential_tree = 0; ///< step 5: the local essential tree
};

} // namespace kfmm::distributed

namespace kfmm::distributed::detail
{

/// A receiver's region resolves its tree down to cells of this many leaves' particles
/// (step 3): finer regions open fewer cells, so fewer ghosts travel, but every rank receives
/// every region (the trade is measured in docs/TUNING.md).
constexpr int region_leaves = 4;

/// A rank's particles after the partition: their count and their first and last keys.
struct RankSpan
{
  std::int64_t count;
  tree::MortonKey first;
  tree::MortonKey last;
};

/// The first and last key of cell (prefix, level).
KOKKOS_INLINE_FUNCTION tree::MortonKey firstKeyOf(tree::MortonKey prefix, int level)
{
  return prefix << (3 * (tree::max_level - level));
}
KOKKOS_INLINE_FUNCTION tree::MortonKey lastKeyOf(tree::MortonKey prefix, int level)
{
  int const shift = 3 * (tree::max_level - level);
  return (prefix << shift) + ((tree::MortonKey(1) << shift) - 1);
}

/// The keys of the other ranks next to this rank's: the last of the nearest rank before it
/// that has particles, and the first of the nearest one after it.
struct Neighbours
{
  bool has_before = false;
  tree::MortonKey before_last = 0;
  bool has_after = false;
  tree::MortonKey after_first = 0;

  /// Whether cell (prefix, level), which holds keys of this rank, holds another rank's too.
  KOKKOS_INLINE_FUNCTION bool shared(tree::MortonKey prefix, int level) const
  {
    return (has_before && firstKeyOf(prefix, level) <= before_last) ||
           (has_after && lastKeyOf(prefix, level) >= after_first);
  }
};

/// Rank `rank`'s neighbours among `spans`.
inline Neighbours neighboursOf(std::vector<RankSpan> const &spans, int rank)
{
  Neighbours n;
  for (int r = rank - 1; r >= 0 && !n.has_before; --r)
    if (spans[r].count > 0)
      n = {true, spans[r].last, false, 0};
  for (int r = rank + 1; r < static_cast<int>(spans.size()); ++r)
    if (spans[r].count > 0)
    {
      n.has_after = true;
      n.after_first = spans[r].first;
      break;
    }
  return n;
}

/// Step 1's split rule, of a rank's own tree.
struct SplitOwnCells
{
  int leaf_size;
  Neighbours neighbours;

  KOKKOS_INLINE_FUNCTION bool operator()(int begin, int end, tree::MortonKey prefix,
                                         int level) const
  {
    return level < tree::max_level && (end - begin > leaf_size || neighbours.shared(prefix, level));
  }
};

/// Step 5's split rule, of the local essential tree. Entries at sorted positions; entry
/// `permutation(i)` is a particle below `particles`, else pruned cell permutation(i) -
/// particles; weight_before(i) is the number of particles the entries before sorted position
/// i stand for.
template <class MemorySpace>
struct SplitEssentialCells
{
  int leaf_size;
  Kokkos::View<std::int64_t *, MemorySpace> weight_before;
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Kokkos::View<int *, MemorySpace> pruned_level;
  std::int64_t particles;

  KOKKOS_INLINE_FUNCTION bool operator()(int begin, int end, tree::MortonKey, int level) const
  {
    if (level >= tree::max_level)
      return false;
    if (end - begin == 1)
    {
      std::int64_t const entry = permutation(begin);
      if (entry >= particles && pruned_level(entry - particles) == level)
        return false;
    }
    return weight_before(end) - weight_before(begin) > leaf_size;
  }
};

/// A node of a receiver's region (step 3): a target cell that stands for itself and whose
/// children are the nodes [first_child, first_child + children) (`sized`), or a ball that
/// holds every target cell under it (children 0).
struct Ball
{
  double centre[3];
  double radius;
  /// The largest radius of a sparse leaf (tree::detail::PairRule::sparseLeafPair) among the
  /// target cells the node stands for or holds, 0 if none, and the fewest particles of one.
  double sparse_radius;
  double sparse_count;
  int sized;
  int leaf;        ///< whether the node is a leaf of the receiver's tree
  int first_child; ///< among the receiver's nodes
  int children;
};

/// A pruned cell as its sender describes it.
struct PrunedCell
{
  tree::MortonKey prefix;
  std::int64_t count;
  double radius;
  int level;
};

/// A ghost particle's position.
struct Point
{
  double x[3];
};

/// The cell of the tree of level `level` and key prefix `prefix`, or -1 (binary search in the
/// level, whose cells are in key order).
template <class Offsets, class Keys>
KOKKOS_INLINE_FUNCTION int findCell(Offsets const &level_offsets, int levels, Keys const &cell_keys,
                                    int level, tree::MortonKey prefix)
{
  if (level >= levels)
    return -1;
  int lo = level_offsets(level), hi = level_offsets(level + 1);
  while (lo < hi)
  {
    int const mid = lo + (hi - lo) / 2;
    if (cell_keys(mid) < prefix)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < level_offsets(level + 1) && cell_keys(lo) == prefix ? lo : -1;
}

/// The tree's level offsets on the device, for findCell.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int *, MemorySpace> levelOffsetsOnDevice(ExecutionSpace const &space,
                                                      kfmm::detail::Workspace<MemorySpace> &memory,
                                                      tree::Octree<MemorySpace> const &tree)
{
  auto const offsets = memory.template take<Kokkos::View<int *, MemorySpace>>(
      space, "kfmm::distributed::level_offsets", tree.level_offsets.size());
  Kokkos::View<int const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> const host(
      tree.level_offsets.data(), tree.level_offsets.size());
  Kokkos::deep_copy(space, offsets, host);
  return offsets;
}

/// found(q) = the cell (query_levels(q), query_prefixes(q)) of the tree, or -1.
template <class MemorySpace>
struct FindCells
{
  Kokkos::View<int *, MemorySpace> level_offsets;
  int levels;
  Kokkos::View<tree::MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> query_levels;
  Kokkos::View<tree::MortonKey *, MemorySpace> query_prefixes;
  Kokkos::View<int *, MemorySpace> found;

  KOKKOS_INLINE_FUNCTION void operator()(int q) const
  {
    found(q) = findCell(level_offsets, levels, cell_keys, query_levels(q), query_prefixes(q));
  }
};

/// The cells of `tree` named by (levels, prefixes), -1 where it has none.
template <class ExecutionSpace, class MemorySpace>
Kokkos::View<int *, MemorySpace>
findCells(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
          tree::Octree<MemorySpace> const &tree, Kokkos::View<int *, MemorySpace> const &levels,
          Kokkos::View<tree::MortonKey *, MemorySpace> const &prefixes)
{
  auto const found = memory.template take<Kokkos::View<int *, MemorySpace>>(
      space, "kfmm::distributed::found_cells", levels.extent(0));
  auto offsets = levelOffsetsOnDevice(space, memory, tree);
  Kokkos::parallel_for(
      "kfmm::distributed::find_cells",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, levels.extent(0)),
      FindCells<MemorySpace>{offsets, tree.numLevels(), tree.cell_keys, levels, prefixes, found});
  memory.give(offsets);
  return found;
}

/// Step 3: marks(c) = 1 for a subtree root of the own tree (non-shared, parent shared or none).
template <class MemorySpace>
struct SubtreeRoots
{
  Kokkos::View<tree::MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<int *, MemorySpace> parent;
  Neighbours neighbours;

  KOKKOS_INLINE_FUNCTION bool shared(int c) const
  {
    return neighbours.shared(cell_keys(c), level(c));
  }
  KOKKOS_INLINE_FUNCTION bool root(int c) const
  {
    return !shared(c) && (parent(c) < 0 || shared(parent(c)));
  }
};

/// Step 3: the nodes of the rank's region. A cell is a node when it is the root or its
/// parent is expanded; a node is expanded (a sized ball, its children nodes) when it has
/// children and is shared or holds more than `region_particles` particles, else it holds
/// the target cells under it.
template <class MemorySpace>
struct RegionNodes
{
  SubtreeRoots<MemorySpace> roots;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  int region_particles;

  KOKKOS_INLINE_FUNCTION bool expanded(int c) const
  {
    return child_count(c) > 0 &&
           (roots.shared(c) || particle_end(c) - particle_begin(c) > region_particles);
  }
  KOKKOS_INLINE_FUNCTION bool node(int c) const
  {
    return roots.parent(c) < 0 || expanded(roots.parent(c));
  }
};

/// Step 3: node_of(c) = the index of cell c among the region's nodes (cell order), or -1;
/// the scan's total is the number of nodes.
template <class MemorySpace>
struct NumberRegionNodes
{
  RegionNodes<MemorySpace> nodes;
  Kokkos::View<int *, MemorySpace> node_of;

  KOKKOS_INLINE_FUNCTION void operator()(int c, int &update, bool final) const
  {
    bool const is_node = nodes.node(c);
    if (final)
      node_of(c) = is_node ? update : -1;
    update += is_node ? 1 : 0;
  }
};

/// The fewest particles of a sparse leaf where there is none: more than any leaf holds.
constexpr double no_sparse_count = 1e300;

/// Step 3: sparse_radius(c), the largest radius of a sparse leaf (at most sparse_leaf
/// particles: tree::detail::PairRule::sparseLeafPair) at or below own cell c, 0 if none, and
/// sparse_count(c) the fewest particles of such a leaf (no_sparse_count if none); run level
/// by level from the deepest. A leaf of the own tree is a leaf of the tree of all particles
/// with all of its particles (a shared cell always splits).
template <class MemorySpace>
struct SparseRadii
{
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<double *, MemorySpace> radius;
  double sparse_leaf;
  Kokkos::View<double *, MemorySpace> sparse_radius;
  Kokkos::View<double *, MemorySpace> sparse_count;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    double r = 0;
    double fewest = no_sparse_count;
    int const count = particle_end(c) - particle_begin(c);
    if (child_count(c) == 0 && count <= sparse_leaf)
    {
      r = radius(c);
      fewest = count;
    }
    for (int k = 0; k < child_count(c); ++k)
    {
      r = kfmm::detail::max(r, sparse_radius(first_child(c) + k));
      fewest = kfmm::detail::min(fewest, sparse_count(first_child(c) + k));
    }
    sparse_radius(c) = r;
    sparse_count(c) = fewest;
  }
};

/// Step 3: the region's balls, one per node.
template <class MemorySpace>
struct DescribeRegionNodes
{
  RegionNodes<MemorySpace> nodes;
  Kokkos::View<int *, MemorySpace> node_of;
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<double *, MemorySpace> sparse_radius; ///< SparseRadii's
  Kokkos::View<double *, MemorySpace> sparse_count;  ///< SparseRadii's
  Kokkos::View<Ball *, MemorySpace> balls;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    int const b = node_of(c);
    if (b < 0)
      return;
    bool const expanded = nodes.expanded(c);
    balls(b) = Ball{{centre(c, 0), centre(c, 1), centre(c, 2)},
                    radius(c),
                    sparse_radius(c),
                    sparse_count(c),
                    expanded ? 1 : 0,
                    nodes.child_count(c) == 0 ? 1 : 0,
                    expanded ? node_of(nodes.first_child(c)) : 0,
                    expanded ? nodes.child_count(c) : 0};
  }
};

/// Whether a target cell inside ball `b` and the source cell (x, r) may fail the acceptance
/// test (step 4, with the margin of the file comment).
KOKKOS_INLINE_FUNCTION bool mayFail(Ball const &b, double const x[3], double r, double theta,
                                    double separation)
{
  double const dx = b.centre[0] - x[0];
  double const dy = b.centre[1] - x[1];
  double const dz = b.centre[2] - x[2];
  double const margin = 1 + 1e-12;
  return !tree::detail::thetaAccepts(b.radius * margin, r * margin,
                                     kfmm::detail::sqrt(dx * dx + dy * dy + dz * dz), theta,
                                     separation * margin, false);
}

/// The largest radius of the sparse leaves of a set of the receiver's nodes and the fewest
/// particles of one (SparseRadii), and whether a cell may be computed directly with one.
struct SparseReach
{
  double largest = 0;
  double fewest = no_sparse_count;

  KOKKOS_INLINE_FUNCTION void add(Ball const &ball)
  {
    largest = kfmm::detail::max(largest, ball.sparse_radius);
    fewest = kfmm::detail::min(fewest, ball.sparse_count);
  }
  KOKKOS_INLINE_FUNCTION bool improvedBy(Ball const &ball) const
  {
    return ball.sparse_radius > largest || ball.sparse_count < fewest;
  }
  /// Whether a cell of radius r standing for `count` particles may be the smaller cell of a
  /// pair with one of the leaves that the rule of sparse leaves computes directly.
  KOKKOS_INLINE_FUNCTION bool direct(double r, double count, double pairs) const
  {
    return largest > 0 && r <= largest * (1 + 1e-12) && count * fewest <= pairs;
  }
};

/// Step 4 for one receiver and one level: opened(c) for the cells of the level. Only a sent
/// cell (a subtree root, or a child of an opened cell) can open; it opens when some target
/// cell of the receiver may fail the acceptance test against it, found by a descent of the
/// receiver's region that skips every node the cell passes against; and where the traversal
/// may compute it directly as part of a pair with a sparse leaf
/// (tree::detail::PairRule::sparseLeafPair): when it is a sparse leaf itself (its particles
/// are few), or when a sparse leaf of the receiver at least as large may meet it in a pair of
/// few enough particle pairs. The traversal splits the larger cell of a refused pair (a leaf
/// never), so a leaf meets a cell when it refused the cell's parent (a leaf in
/// reach(parent): the sparse leaves of the nodes that the parent may fail against), when its
/// own parent refused the cell and was the larger (`met`: sparse leaves that are children of
/// sized nodes the cell may fail against; the chain of such splits starts at a pair that
/// split the cell's parent, so the leaf is no larger than the parent), or when it took an
/// ancestor as a direct pair, whose other cell it then meets down to the leaves (whole).
/// Shared cells carry reach and whole too, with the particles they stand for in the tree of
/// all particles.
template <class MemorySpace>
struct OpenCells
{
  SubtreeRoots<MemorySpace> roots;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<std::int64_t *, MemorySpace> stands_for;
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<Ball *, MemorySpace> balls; ///< the receiver's region, its root first
  double theta;
  double separation;         ///< the lists' least distance of a far pair's particles
  tree::SparseLeaves sparse; ///< the lists' rule of sparse leaves (zeros: none)
  Kokkos::View<std::uint8_t *, MemorySpace> opened;
  Kokkos::View<std::uint8_t *, MemorySpace> whole;
  Kokkos::View<SparseReach *, MemorySpace> reach;

  /// Deep enough for a descent that keeps at most 7 siblings per level of a tree of
  /// tree::max_level levels.
  static constexpr int stack_size = 8 * (tree::max_level + 1);

  KOKKOS_INLINE_FUNCTION bool sent(int c) const
  {
    return !roots.shared(c) && (roots.root(c) || opened(roots.parent(c)));
  }

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    bool const shared = roots.shared(c);
    bool const region = balls.extent(0) > 0;
    bool const visited = region && (shared || sent(c));
    int const p = roots.parent(c);
    SparseReach refused, met;
    bool all_of_it = false;
    if (visited && sparse.leaf > 0)
    {
      sparseReach(c, p >= 0 ? radius(p) : no_sparse_count, refused, met);
      double const r = radius(c);
      double const count = static_cast<double>(stands_for(c));
      all_of_it = met.direct(r, count, sparse.pairs) ||
                  (p >= 0 && (whole(p) || reach(p).direct(r, count, sparse.pairs)));
    }
    bool open = false;
    if (visited && !shared)
    {
      bool const sparse_self = child_count(c) == 0 &&
                               particle_end(c) - particle_begin(c) <= sparse.leaf;
      open = sparse_self || all_of_it || fails(c);
    }
    opened(c) = open ? 1 : 0;
    whole(c) = all_of_it ? 1 : 0;
    reach(c) = shared || open ? refused : SparseReach{};
  }

  /// The sparse leaves of the receiver's holding nodes that cell c may fail the acceptance
  /// test against (`refused`; a sized node is a target cell with children, no leaf), and
  /// the sparse leaves no larger than `parent_radius` whose parent, a sized node, c may fail
  /// against (`met`).
  KOKKOS_INLINE_FUNCTION void sparseReach(int c, double parent_radius, SparseReach &refused,
                                          SparseReach &met) const
  {
    double const x[3] = {centre(c, 0), centre(c, 1), centre(c, 2)};
    double const r = radius(c);
    int stack[stack_size];
    int top = 0;
    stack[top++] = 0;
    while (top > 0)
    {
      Ball const ball = balls(stack[--top]);
      if (!(refused.improvedBy(ball) || met.improvedBy(ball)) ||
          !mayFail(ball, x, r, theta, separation))
        continue;
      if (!ball.sized)
      {
        refused.add(ball);
        continue;
      }
      for (int k = 0; k < ball.children; ++k)
      {
        Ball const child = balls(ball.first_child + k);
        if (child.leaf && child.sparse_radius > 0 &&
            child.sparse_radius <= parent_radius * (1 + 1e-12))
          met.add(child);
        stack[top++] = ball.first_child + k;
      }
    }
  }

  KOKKOS_INLINE_FUNCTION bool fails(int c) const
  {
    double const x[3] = {centre(c, 0), centre(c, 1), centre(c, 2)};
    double const r = radius(c);
    bool const leaf = child_count(c) == 0;
    int stack[stack_size];
    int top = 0;
    stack[top++] = 0;
    while (top > 0)
    {
      Ball const ball = balls(stack[--top]);
      if (!mayFail(ball, x, r, theta, separation))
        continue;
      if (!ball.sized)
        return true;
      // A target cell splits this one only when it is not the larger of the two, and a
      // leaf never (its particles serve leaf targets, which the holding balls below hold).
      if (!leaf && ball.radius <= r * (1 + 1e-12))
        return true;
      for (int k = 0; k < ball.children; ++k)
        stack[top++] = ball.first_child + k;
    }
    return false;
  }
};

/// What cell c sends to the receiver: 1 pruned, 2 ghost leaf (its particles), 0 nothing
/// (not sent, or an opened inner cell, whose children are sent).
template <class MemorySpace>
struct SentAs
{
  OpenCells<MemorySpace> open;

  KOKKOS_INLINE_FUNCTION int operator()(int c) const
  {
    if (!open.sent(c))
      return 0;
    if (!open.opened(c))
      return 1;
    return open.child_count(c) == 0 ? 2 : 0;
  }
};

/// Compacts the cells that SentAs gives `kind` into `cells`, in cell order (counted only
/// while `cells` is empty).
template <class MemorySpace>
struct CompactSent
{
  SentAs<MemorySpace> sent;
  int kind;
  Kokkos::View<int *, MemorySpace> cells;

  KOKKOS_INLINE_FUNCTION void operator()(int c, int &update, bool final) const
  {
    if (sent(c) != kind)
      return;
    if (final && cells.extent(0) > 0)
      cells(update) = c;
    ++update;
  }
};

/// The description of pruned cell j of the list, for its receiver.
template <class MemorySpace>
struct DescribePruned
{
  Kokkos::View<int *, MemorySpace> cells;
  Kokkos::View<tree::MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<PrunedCell *, MemorySpace> pruned;

  KOKKOS_INLINE_FUNCTION void operator()(int j) const
  {
    int const c = cells(j);
    pruned(j) = PrunedCell{cell_keys(c), particle_end(c) - particle_begin(c), radius(c), level(c)};
  }
};

/// Ghost leaf j's particle count into the scan; the final pass places its particles.
template <class MemorySpace>
struct PlaceGhosts
{
  Kokkos::View<int *, MemorySpace> leaves;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<std::int64_t *, MemorySpace> first; ///< leaves + 1 entries

  KOKKOS_INLINE_FUNCTION void operator()(int j, std::int64_t &update, bool final) const
  {
    if (final)
      first(j) = update;
    update += particle_end(leaves(j)) - particle_begin(leaves(j));
    if (final && j + 1 == static_cast<int>(leaves.extent(0)))
      first(j + 1) = update;
  }
};

/// The particles of ghost leaf `league rank`: their index among the rank's particles and
/// their position.
template <class ExecutionSpace, class MemorySpace>
struct GatherGhosts
{
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Kokkos::View<int *, MemorySpace> leaves;
  Kokkos::View<std::int64_t *, MemorySpace> first;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Kokkos::View<double *[3], MemorySpace> positions;
  Kokkos::View<std::uint32_t *, MemorySpace> sources;
  Kokkos::View<Point *, MemorySpace> points;

  KOKKOS_INLINE_FUNCTION void operator()(Member const &team) const
  {
    int const j = team.league_rank();
    int const begin = particle_begin(leaves(j));
    std::int64_t const out = first(j);
    int const count = static_cast<int>(first(j + 1) - out);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int k) {
      std::uint32_t const p = permutation(begin + k);
      sources(out + k) = p;
      points(out + k) = Point{{positions(p, 0), positions(p, 1), positions(p, 2)}};
    });
  }
};

/// Keys of the local essential tree's entries from `first` on, each with its index: the
/// particles' from their positions, each pruned cell's its first key.
template <class MemorySpace>
struct EntryKeys
{
  tree::Cube cube;
  Kokkos::View<double *[3], MemorySpace> positions;
  Kokkos::View<PrunedCell *, MemorySpace> pruned;
  std::int64_t first;
  std::int64_t particles;
  Kokkos::View<tree::MortonKey *, MemorySpace> keys;
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t j) const
  {
    std::int64_t const i = first + j;
    permutation(j) = static_cast<std::uint32_t>(i);
    if (i < particles)
    {
      keys(j) = tree::mortonKey(cube, positions(i, 0), positions(i, 1), positions(i, 2));
      return;
    }
    PrunedCell const cell = pruned(i - particles);
    keys(j) = firstKeyOf(cell.prefix, cell.level);
  }
};

/// Places each pruned cell's entry at its cell's centre, with its level.
template <class MemorySpace>
struct PlacePruned
{
  tree::Cube cube;
  Kokkos::View<PrunedCell *, MemorySpace> pruned;
  std::int64_t particles;
  Kokkos::View<double *[3], MemorySpace> positions;
  Kokkos::View<int *, MemorySpace> levels;

  KOKKOS_INLINE_FUNCTION void operator()(int j) const
  {
    double x[3];
    tree::cellCentre(cube, pruned(j).prefix, pruned(j).level, x);
    for (int d = 0; d < 3; ++d)
      positions(particles + j, d) = x[d];
    levels(j) = pruned(j).level;
  }
};

/// The particles the entries before sorted position i stand for, into the scan.
template <class MemorySpace>
struct WeightBefore
{
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Kokkos::View<PrunedCell *, MemorySpace> pruned;
  std::int64_t particles;
  Kokkos::View<std::int64_t *, MemorySpace> weight_before; ///< entries + 1

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, std::int64_t &update, bool final) const
  {
    if (final)
      weight_before(i) = update;
    std::int64_t const entry = permutation(i);
    update += entry < particles ? 1 : pruned(entry - particles).count;
    if (final && i + 1 == static_cast<std::int64_t>(permutation.extent(0)))
      weight_before(i + 1) = update;
  }
};

/// Step 5: the particles cell c of the local essential tree stands for, from the weights of
/// its entries (WeightBefore).
template <class MemorySpace>
struct StandsFor
{
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<std::int64_t *, MemorySpace> weight_before;
  Kokkos::View<std::int64_t *, MemorySpace> stands_for;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    stands_for(c) = weight_before(particle_end(c)) - weight_before(particle_begin(c));
  }
};

/// Step 5's leaves of pruned cells: the sender's radius, and the cell in `cells`. A pruned
/// entry that is not a leaf of its own level counts in `misplaced`.
template <class MemorySpace>
struct FixPrunedLeaf
{
  Kokkos::View<int *, MemorySpace> leaves;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Kokkos::View<PrunedCell *, MemorySpace> pruned;
  std::int64_t particles;
  Kokkos::View<int *, MemorySpace> cells;

  KOKKOS_INLINE_FUNCTION void operator()(int j, int &misplaced) const
  {
    int const leaf = leaves(j);
    for (int i = particle_begin(leaf); i < particle_end(leaf); ++i)
    {
      std::int64_t const entry = permutation(i);
      if (entry < particles)
        continue;
      PrunedCell const cell = pruned(entry - particles);
      if (particle_end(leaf) - particle_begin(leaf) != 1 || level(leaf) != cell.level)
      {
        ++misplaced;
        continue;
      }
      radius(leaf) = cell.radius;
      cells(entry - particles) = leaf;
    }
  }
};

/// What a rank sends and receives at every evaluation, found when the trees are built.
template <class MemorySpace>
struct ExchangePlan
{
  std::vector<std::int64_t> ghost_send, ghost_recv;   ///< ghost particles per rank
  std::vector<std::int64_t> pruned_send, pruned_recv; ///< pruned cells per rank
  /// The rank's particle (partition's owned order) of each ghost it sends, in send order.
  Kokkos::View<std::uint32_t *, MemorySpace> ghost_sources;
  /// The local essential tree's cell of each pruned cell it sends, in send order.
  Kokkos::View<int *, MemorySpace> pruned_sources;
  /// The local essential tree's cell of each pruned cell it receives, in receive order.
  Kokkos::View<int *, MemorySpace> pruned_targets;
  std::int64_t own = 0;    ///< the rank's particles: the first entries of the essential tree
  std::int64_t ghosts = 0; ///< received ghosts: the next entries (the pruned cells' follow)
};

/// A rank's trees and its exchange plan.
template <class MemorySpace>
struct EssentialTrees
{
  /// Where the arrays below come from: they are views of its blocks, valid while it is held.
  std::shared_ptr<kfmm::detail::Workspace<MemorySpace>> memory;
  tree::Octree<MemorySpace> own;                  ///< targets: the rank's particles
  tree::Octree<MemorySpace> essential;            ///< sources: the local essential tree
  Kokkos::View<double *[3], MemorySpace> entries; ///< its entries' positions
  ExchangePlan<MemorySpace> plan;
  double exchange_seconds = 0; ///< time in MPI calls while building
  EssentialTreeSteps steps;    ///< where the build was asked to time its steps
};

/// Host copy of a device array as a std::vector.
template <class T, class MemorySpace>
std::vector<T> toHostVector(Kokkos::View<T *, MemorySpace> const &view)
{
  std::vector<T> out(view.extent(0));
  Kokkos::View<T *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> const host(out.data(), out.size());
  Kokkos::deep_copy(host, view);
  return out;
}

/// Device copy of a host array.
template <class ExecutionSpace, class T>
Kokkos::View<T *, typename ExecutionSpace::memory_space>
toDevice(ExecutionSpace const &space,
         kfmm::detail::Workspace<typename ExecutionSpace::memory_space> &memory,
         std::vector<T> const &values, std::string const &label)
{
  auto const out = memory.template take<Kokkos::View<T *, typename ExecutionSpace::memory_space>>(
      space, label, values.size());
  Kokkos::View<T const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> const host(values.data(),
                                                                                 values.size());
  Kokkos::deep_copy(space, out, host);
  return out;
}

/// The shared cells of every rank (the top of the tree of all particles): the cells that
/// hold the last key of a rank with particles and the first of the next one, which are the
/// common ancestors of those two keys. One list, the same on every rank, in (level, key)
/// order; O(ranks x levels) on the host.
inline std::vector<std::pair<int, tree::MortonKey>> sharedCells(std::vector<RankSpan> const &spans)
{
  std::vector<std::pair<int, tree::MortonKey>> cells;
  int previous = -1;
  for (int r = 0; r < static_cast<int>(spans.size()); ++r)
  {
    if (spans[r].count == 0)
      continue;
    if (previous >= 0)
      for (int l = 0; l <= tree::max_level; ++l)
      {
        int const shift = 3 * (tree::max_level - l);
        tree::MortonKey const a = spans[previous].last >> shift;
        if (a != spans[r].first >> shift)
          break;
        cells.emplace_back(l, a);
      }
    previous = r;
  }
  std::sort(cells.begin(), cells.end());
  cells.erase(std::unique(cells.begin(), cells.end()), cells.end());
  return cells;
}

/// Step 2: values(q) = the own tree's value (`of_cells`) of shared cell cells(q), or
/// `missing` where the tree has no such cell.
template <class T, class MemorySpace>
struct GetShared
{
  Kokkos::View<int *, MemorySpace> cells;
  Kokkos::View<T *, MemorySpace> of_cells;
  Kokkos::View<T *, MemorySpace> values;
  T missing;

  KOKKOS_INLINE_FUNCTION void operator()(int q) const
  {
    values(q) = cells(q) >= 0 ? of_cells(cells(q)) : missing;
  }
};

/// Step 2: the own tree's value (`of_cells`) of each shared cell it holds set to `values`
/// (what the ranks agreed on).
template <class T, class MemorySpace>
struct SetShared
{
  Kokkos::View<int *, MemorySpace> cells;
  Kokkos::View<T *, MemorySpace> values;
  Kokkos::View<T *, MemorySpace> of_cells;

  KOKKOS_INLINE_FUNCTION void operator()(int q) const
  {
    if (cells(q) >= 0)
      of_cells(cells(q)) = values(q);
  }
};

/// Step 2: stands_for(c), the particles of own cell c: its own count, which the shared
/// cells then replace by the sum over the ranks.
template <class MemorySpace>
struct OwnStandsFor
{
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<std::int64_t *, MemorySpace> stands_for;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    stands_for(c) = particle_end(c) - particle_begin(c);
  }
};

/// The first and last of the sorted `keys` (not empty) into ends(0) and ends(1).
template <class MemorySpace>
struct KeyEnds
{
  Kokkos::View<tree::MortonKey *, MemorySpace> keys;
  Kokkos::View<tree::MortonKey *, MemorySpace> ends;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    ends(0) = keys(0);
    ends(1) = keys(keys.extent(0) - 1);
  }
};

/// Ghost j's position into the essential tree's entries, after the rank's particles.
template <class MemorySpace>
struct PlaceGhostPoints
{
  Kokkos::View<Point *, MemorySpace> points;
  std::int64_t first;
  Kokkos::View<double *[3], MemorySpace> positions;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t j) const
  {
    for (int d = 0; d < 3; ++d)
      positions(first + j, d) = points(j).x[d];
  }
};

/// The rank's particle i into the essential tree's entries.
template <class MemorySpace>
struct CopyOwn
{
  Kokkos::View<double *[3], MemorySpace> own;
  Kokkos::View<double *[3], MemorySpace> positions;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const
  {
    for (int d = 0; d < 3; ++d)
      positions(i, d) = own(i, d);
  }
};

/// Counts the entries of `cells` that are -1.
template <class MemorySpace>
struct CountMissing
{
  Kokkos::View<int *, MemorySpace> cells;

  KOKKOS_INLINE_FUNCTION void operator()(int j, int &missing) const
  {
    missing += cells(j) < 0 ? 1 : 0;
  }
};

/// levels(j), prefixes(j) = those of cell cells(j) of a tree.
template <class MemorySpace>
struct NameCells
{
  Kokkos::View<int *, MemorySpace> cells;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<tree::MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> levels;
  Kokkos::View<tree::MortonKey *, MemorySpace> prefixes;

  KOKKOS_INLINE_FUNCTION void operator()(int j) const
  {
    levels(j) = level(cells(j));
    prefixes(j) = cell_keys(cells(j));
  }
};

/// Steps 1 to 5 of the file comment on this rank's particles `own` (the partition's owned
/// particles, in its `cube`, in runs of `own_runs` particles each in key order:
/// MortonPartition::ownedRuns; the ranges start at leaves of `leaf_size`), with regions whose
/// holding balls hold at most `region_particles` particles where the tree allows; with
/// `time_steps`, each step ends with a fence and its time goes to trees.steps. The arrays come
/// from `memory_lease` (a previous build's workspace, its blocks free), else from a new lease.
/// Collective over `comm`: allGatherv (the ranks' key spans), MPI_Allreduce (the shared cells'
/// radii and counts), three exchanges (regions, pruned cells, ghosts; StagedExchange) with
/// their MPI_Alltoall of counts, and requireOnAllRanks.
template <class ExecutionSpace, class MemorySpace>
EssentialTrees<MemorySpace> buildEssentialTrees(
    MPI_Comm comm, ExecutionSpace const &space, Kokkos::View<double *[3], MemorySpace> const &own,
    std::vector<std::int64_t> const &own_runs, tree::Cube const &cube, int leaf_size, double theta,
    double separation, tree::SparseLeaves sparse, int region_particles, bool time_steps,
    std::shared_ptr<kfmm::detail::Workspace<MemorySpace>> memory_lease = nullptr)
{
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  std::string const where = "kfmm::distributed::DistributedFmm";
  kfmm::detail::ScopedRegion region("kfmm::distributed::essential_trees");
  int ranks = 1, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  EssentialTrees<MemorySpace> trees;
  // Every array from the trees' pooled workspace, which a later build leases again with
  // its blocks (detail/Workspace.hpp): a direct allocation and its release on CUDA each wait
  // for the device. Arrays the evaluation does not read go back once their last kernel is
  // queued, for later arrays of this build to reuse.
  trees.memory = memory_lease ? memory_lease
                              : kfmm::detail::WorkspacePool<MemorySpace>::shared().lease();
  kfmm::detail::Workspace<MemorySpace> &memory = *trees.memory;
  auto const take = [&](auto &view, std::string const &label, auto... extents) {
    memory.take(space, view, "kfmm::distributed::" + label, extents...);
  };
  // Time in MPI calls, the device's work before them finished first.
  auto const communicate = [&](auto &&call) {
    space.fence();
    Kokkos::Timer timer;
    call();
    trees.exchange_seconds += timer.seconds();
  };

  // Each step below is a profiling region of its own, nested in this one, and timed where
  // asked.
  std::optional<kfmm::detail::ScopedRegion> step;
  double *step_seconds = nullptr;
  Kokkos::Timer step_timer;
  auto const endStep = [&] {
    step.reset();
    if (time_steps && step_seconds != nullptr)
    {
      space.fence();
      *step_seconds = step_timer.seconds();
    }
  };
  auto const beginStep = [&](char const *name, double EssentialTreeSteps::*seconds) {
    endStep();
    step.emplace(std::string("kfmm::distributed::") + name);
    step_seconds = &(trees.steps.*seconds);
    step_timer.reset();
  };

  // Step 1: the ranks' key spans, then the own tree.
  beginStep("own_tree", &EssentialTreeSteps::own_tree);
  std::int64_t const n = static_cast<std::int64_t>(own.extent(0));
  // The partition's runs are in key order already: merged, not sorted again.
  Kokkos::View<tree::MortonKey *, MemorySpace> run_keys, own_keys;
  take(run_keys, "own_run_keys", n);
  take(own_keys, "own_keys", n);
  Kokkos::View<std::uint32_t *, MemorySpace> own_order;
  take(own_order, "own_order", n);
  tree::computeMortonKeys(space, cube, own, run_keys);
  tree::sortRuns(space, run_keys, own_runs, own_keys, own_order, memory);
  memory.give(run_keys);
  tree::MortonKey first = 0, last = 0;
  if (n > 0)
  {
    Kokkos::View<tree::MortonKey *, MemorySpace> ends;
    take(ends, "own_key_ends", 2);
    Kokkos::parallel_for("kfmm::distributed::own_key_ends", Policy(space, 0, 1),
                         KeyEnds<MemorySpace>{own_keys, ends});
    auto const ends_host = toHostVector(ends);
    first = ends_host[0];
    last = ends_host[1];
    memory.give(ends);
  }
  std::vector<RankSpan> spans;
  communicate([&] { spans = allGatherv(comm, std::vector<RankSpan>{{n, first, last}}); });
  Neighbours const neighbours = neighboursOf(spans, rank);
  trees.own = tree::detail::buildCells(space, memory, own, cube, own_keys, own_order,
                                       SplitOwnCells{leaf_size, neighbours});
  tree::Octree<MemorySpace> &mine = trees.own;

  // Step 2: the shared cells' radii (the largest over the ranks) and counts (their sum).
  beginStep("shared_cells", &EssentialTreeSteps::shared_cells);
  auto const shared = sharedCells(spans);
  int const num_shared = static_cast<int>(shared.size());
  std::vector<int> shared_levels(num_shared);
  std::vector<tree::MortonKey> shared_prefixes(num_shared);
  for (int q = 0; q < num_shared; ++q)
    std::tie(shared_levels[q], shared_prefixes[q]) = shared[q];
  auto shared_levels_d = toDevice(space, memory, shared_levels, "kfmm::distributed::shared_levels");
  auto shared_prefixes_d =
      toDevice(space, memory, shared_prefixes, "kfmm::distributed::shared_prefixes");
  auto shared_here = findCells(space, memory, mine, shared_levels_d, shared_prefixes_d);
  // A value of each own cell made that of the tree of all particles at the shared cells: the
  // ranks' values combined by `op` (one MPI_Allreduce; `missing` where a rank has no such
  // cell).
  auto const agreeOnShared = [&](auto const &of_cells, auto missing, MPI_Datatype type, MPI_Op op,
                                 std::string const &label) {
    using T = decltype(missing);
    Kokkos::View<T *, MemorySpace> values;
    take(values, label, num_shared);
    Kokkos::parallel_for("kfmm::distributed::get_" + label, Policy(space, 0, num_shared),
                         GetShared<T, MemorySpace>{shared_here, of_cells, values, missing});
    std::vector<T> agreed = toHostVector(values);
    communicate([&] { MPI_Allreduce(MPI_IN_PLACE, agreed.data(), num_shared, type, op, comm); });
    Kokkos::deep_copy(space, values,
                      Kokkos::View<T const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          agreed.data(), agreed.size()));
    Kokkos::parallel_for("kfmm::distributed::set_" + label, Policy(space, 0, num_shared),
                         SetShared<T, MemorySpace>{shared_here, values, of_cells});
    memory.give(values);
  };
  // The radius of the tree of all particles, a maximum over children.
  agreeOnShared(mine.radius, -1.0, MPI_DOUBLE, MPI_MAX, "shared_radii");
  // The particles each own cell stands for in the tree of all particles, which the lists'
  // rule of sparse leaves reads: a shared cell's, summed over the ranks.
  take(mine.stands_for, "own_stands_for", mine.numCells());
  Kokkos::parallel_for(
      "kfmm::distributed::own_stands_for", Policy(space, 0, mine.numCells()),
      OwnStandsFor<MemorySpace>{mine.particle_begin, mine.particle_end, mine.stands_for});
  agreeOnShared(mine.stands_for, std::int64_t(0), MPI_INT64_T, MPI_SUM, "shared_counts");
  memory.give(shared_levels_d);
  memory.give(shared_prefixes_d);
  memory.give(shared_here);

  // Step 3: every rank's region.
  beginStep("regions", &EssentialTreeSteps::regions);
  SubtreeRoots<MemorySpace> const roots{mine.cell_keys, mine.level, mine.parent, neighbours};
  int const num_cells = mine.numCells();
  RegionNodes<MemorySpace> const nodes{
      roots,           mine.child_count, mine.first_child, mine.particle_begin, mine.particle_end,
      region_particles};
  Kokkos::View<int *, MemorySpace> node_of;
  take(node_of, "region_node_of", num_cells);
  int num_balls = 0;
  Kokkos::parallel_scan("kfmm::distributed::number_region_nodes", Policy(space, 0, num_cells),
                        NumberRegionNodes<MemorySpace>{nodes, node_of}, num_balls);
  Kokkos::View<double *, MemorySpace> sparse_radius, sparse_count;
  take(sparse_radius, "sparse_radius", num_cells);
  take(sparse_count, "sparse_count", num_cells);
  SparseRadii<MemorySpace> const sparse_radii{
      mine.child_count, mine.first_child, mine.particle_begin, mine.particle_end,
      mine.radius,      sparse.leaf,      sparse_radius,       sparse_count};
  for (int l = mine.numLevels() - 1; l >= 0; --l)
    Kokkos::parallel_for("kfmm::distributed::sparse_radii",
                         Policy(space, mine.level_offsets[l], mine.level_offsets[l + 1]),
                         sparse_radii);
  Kokkos::View<Ball *, MemorySpace> region_balls;
  take(region_balls, "region", num_balls);
  Kokkos::parallel_for("kfmm::distributed::describe_region_nodes", Policy(space, 0, num_cells),
                       DescribeRegionNodes<MemorySpace>{nodes, node_of, mine.centre, mine.radius,
                                                        sparse_radius, sparse_count, region_balls});
  memory.give(node_of);
  memory.give(sparse_radius);
  memory.give(sparse_count);
  // The region to every other rank, as the evaluation's values travel (device to device
  // where the GPUs allow): one copy per receiver, side by side in rank order, as much memory
  // as the other ranks' regions that arrive.
  std::vector<std::int64_t> balls_sent(ranks, num_balls), balls_per_rank;
  balls_sent[rank] = 0;
  communicate([&] { balls_per_rank = receiveCounts(comm, balls_sent); });
  Kokkos::View<Ball *, MemorySpace> regions_out;
  take(regions_out, "regions_out", static_cast<std::size_t>(ranks - 1) * num_balls);
  for (int k = 0; k + 1 < ranks; ++k)
    if (num_balls > 0)
      Kokkos::deep_copy(
          space,
          Kokkos::subview(regions_out, std::make_pair(std::size_t(k) * num_balls,
                                                      std::size_t(k + 1) * num_balls)),
          region_balls);
  std::int64_t all_balls = 0;
  for (auto const count : balls_per_rank)
    all_balls += count;
  // Every other rank's region at once; rank r's is the r-th range.
  Kokkos::View<Ball *, MemorySpace> regions;
  take(regions, "regions", all_balls);
  {
    StagedExchange<MemorySpace> exchange;
    communicate([&] {
      exchange.start(comm, space, regions_out.data(), balls_sent, regions.data(), balls_per_rank);
      exchange.finish(space);
    });
  }
  memory.give(region_balls);
  memory.give(regions_out);

  // Step 4: what this rank sends to each rank that has particles, per receiver in rank order:
  // the pruned cells as described to it and as cells of the own tree, the ghosts and the
  // particle each stands for.
  beginStep("select_sent", &EssentialTreeSteps::select_sent);
  std::vector<Kokkos::View<PrunedCell *, MemorySpace>> pruned_pieces;
  std::vector<Kokkos::View<int *, MemorySpace>> pruned_cell_pieces;
  std::vector<Kokkos::View<Point *, MemorySpace>> ghost_pieces;
  std::vector<Kokkos::View<std::uint32_t *, MemorySpace>> ghost_source_pieces;
  // The pieces end to end in one array of the workspace; the pieces go back to it.
  auto const concatenate = [&](auto &pieces, std::string const &label) {
    using View = typename std::decay_t<decltype(pieces)>::value_type;
    std::size_t total = 0;
    for (auto const &piece : pieces)
      total += piece.extent(0);
    View all;
    take(all, label, total);
    std::size_t begin = 0;
    for (auto &piece : pieces)
    {
      std::size_t const end = begin + piece.extent(0);
      if (end > begin)
        Kokkos::deep_copy(space, Kokkos::subview(all, std::make_pair(begin, end)), piece);
      begin = end;
      memory.give(piece);
    }
    pieces.clear();
    return all;
  };
  ExchangePlan<MemorySpace> &plan = trees.plan;
  plan.ghost_send.assign(ranks, 0);
  plan.pruned_send.assign(ranks, 0);
  Kokkos::View<std::uint8_t *, MemorySpace> opened;
  take(opened, "opened", num_cells);
  Kokkos::View<std::uint8_t *, MemorySpace> whole;
  take(whole, "opened_whole", num_cells);
  Kokkos::View<SparseReach *, MemorySpace> reach;
  take(reach, "sparse_reach", num_cells);
  std::size_t region_begin = 0;
  for (int r = 0; r < ranks; ++r)
  {
    std::size_t const region_end = region_begin + static_cast<std::size_t>(balls_per_rank[r]);
    auto const region = Kokkos::subview(regions, std::make_pair(region_begin, region_end));
    region_begin = region_end;
    if (r == rank || spans[r].count == 0 || n == 0)
      continue;
    OpenCells<MemorySpace> const open{roots,
                                      mine.child_count,
                                      mine.particle_begin,
                                      mine.particle_end,
                                      mine.stands_for,
                                      mine.centre,
                                      mine.radius,
                                      region,
                                      theta,
                                      separation,
                                      sparse,
                                      opened,
                                      whole,
                                      reach};
    // Level by level: a cell opens only below an opened parent.
    for (int l = 0; l < mine.numLevels(); ++l)
      Kokkos::parallel_for("kfmm::distributed::open_cells",
                           Policy(space, mine.level_offsets[l], mine.level_offsets[l + 1]), open);
    SentAs<MemorySpace> const sent{open};
    auto const compact = [&](int kind, char const *label) {
      int count = 0;
      Kokkos::parallel_scan("kfmm::distributed::count_sent", Policy(space, 0, num_cells),
                            CompactSent<MemorySpace>{sent, kind, {}}, count);
      Kokkos::View<int *, MemorySpace> cells;
      take(cells, label, count);
      Kokkos::parallel_scan("kfmm::distributed::compact_sent", Policy(space, 0, num_cells),
                            CompactSent<MemorySpace>{sent, kind, cells});
      return cells;
    };
    auto pruned = compact(1, "pruned_cells");
    auto leaves = compact(2, "ghost_leaves");
    int const num_pruned = static_cast<int>(pruned.extent(0));
    int const num_leaves = static_cast<int>(leaves.extent(0));

    Kokkos::View<PrunedCell *, MemorySpace> described;

    take(described, "pruned", num_pruned);
    Kokkos::parallel_for("kfmm::distributed::describe_pruned", Policy(space, 0, num_pruned),
                         DescribePruned<MemorySpace>{pruned, mine.cell_keys, mine.level,
                                                     mine.particle_begin, mine.particle_end,
                                                     mine.radius, described});
    pruned_pieces.push_back(described);
    pruned_cell_pieces.push_back(pruned);
    plan.pruned_send[r] = num_pruned;

    Kokkos::View<std::int64_t *, MemorySpace> ghost_first;

    take(ghost_first, "ghost_first", num_leaves + 1);
    std::int64_t num_ghosts = 0;
    Kokkos::deep_copy(space, ghost_first, 0);
    Kokkos::parallel_scan(
        "kfmm::distributed::place_ghosts", Policy(space, 0, num_leaves),
        PlaceGhosts<MemorySpace>{leaves, mine.particle_begin, mine.particle_end, ghost_first},
        num_ghosts);
    Kokkos::View<std::uint32_t *, MemorySpace> sources;
    take(sources, "ghost_sources", num_ghosts);
    Kokkos::View<Point *, MemorySpace> points;
    take(points, "ghost_points", num_ghosts);
    if (num_leaves > 0)
      Kokkos::parallel_for(
          "kfmm::distributed::gather_ghosts",
          Kokkos::TeamPolicy<ExecutionSpace>(space, num_leaves, Kokkos::AUTO),
          GatherGhosts<ExecutionSpace, MemorySpace>{leaves, ghost_first, mine.particle_begin,
                                                    mine.permutation, own, sources, points});
    ghost_pieces.push_back(points);
    ghost_source_pieces.push_back(sources);
    plan.ghost_send[r] = num_ghosts;
    // Every kernel that read them is queued on `space`.
    memory.give(leaves);
    memory.give(ghost_first);
  }
  memory.give(opened);
  memory.give(whole);
  memory.give(reach);
  memory.give(regions);
  auto pruned_out = concatenate(pruned_pieces, "pruned_out");
  auto sent_cells = concatenate(pruned_cell_pieces, "sent_cells");
  auto ghosts_out = concatenate(ghost_pieces, "ghosts_out");
  plan.ghost_sources = concatenate(ghost_source_pieces, "ghost_sources");

  beginStep("exchange_sent", &EssentialTreeSteps::exchange_sent);
  std::int64_t num_ghosts_in = 0, num_pruned_in = 0;
  communicate([&] {
    plan.pruned_recv = receiveCounts(comm, plan.pruned_send);
    plan.ghost_recv = receiveCounts(comm, plan.ghost_send);
  });
  for (int r = 0; r < ranks; ++r)
  {
    num_pruned_in += plan.pruned_recv[r];
    num_ghosts_in += plan.ghost_recv[r];
  }
  Kokkos::View<PrunedCell *, MemorySpace> pruned;
  take(pruned, "pruned_in", num_pruned_in);
  Kokkos::View<Point *, MemorySpace> ghosts;
  take(ghosts, "ghosts", num_ghosts_in);
  StagedExchange<MemorySpace> exchange;
  communicate([&] {
    exchange.start(comm, space, pruned_out.data(), plan.pruned_send, pruned.data(),
                   plan.pruned_recv);
    exchange.finish(space);
    exchange.start(comm, space, ghosts_out.data(), plan.ghost_send, ghosts.data(), plan.ghost_recv);
    exchange.finish(space);
  });
  memory.give(pruned_out);
  memory.give(ghosts_out);

  // Step 5: the local essential tree of the rank's particles, the ghosts and the pruned cells.
  beginStep("essential_tree", &EssentialTreeSteps::essential_tree);
  plan.own = n;
  plan.ghosts = num_ghosts_in;
  std::int64_t const particles = n + plan.ghosts;
  int const num_pruned = static_cast<int>(num_pruned_in);
  std::int64_t const entries = particles + num_pruned;
  take(trees.entries, "entries", entries);
  Kokkos::parallel_for("kfmm::distributed::copy_own", Policy(space, 0, n),
                       CopyOwn<MemorySpace>{own, trees.entries});
  Kokkos::parallel_for("kfmm::distributed::place_ghost_points", Policy(space, 0, plan.ghosts),
                       PlaceGhostPoints<MemorySpace>{ghosts, n, trees.entries});
  memory.give(ghosts);
  Kokkos::View<int *, MemorySpace> pruned_levels;
  take(pruned_levels, "pruned_levels", num_pruned);
  Kokkos::parallel_for(
      "kfmm::distributed::place_pruned", Policy(space, 0, num_pruned),
      PlacePruned<MemorySpace>{cube, pruned, particles, trees.entries, pruned_levels});
  // The rank's particles are sorted (the own tree's keys and permutation, whose indices are
  // their entries'): the received entries, sorted, merge with them.
  std::int64_t const received = entries - n;
  Kokkos::View<tree::MortonKey *, MemorySpace> received_keys;
  take(received_keys, "received_keys", received);
  Kokkos::View<std::uint32_t *, MemorySpace> received_order;
  take(received_order, "received_order", received);
  Kokkos::parallel_for("kfmm::distributed::entry_keys", Policy(space, 0, received),
                       EntryKeys<MemorySpace>{cube, trees.entries, pruned, n, particles,
                                              received_keys, received_order});
  tree::detail::sortPairs(space, received_keys, received_order, 3 * tree::max_level, memory);
  Kokkos::View<tree::MortonKey *, MemorySpace> keys;
  take(keys, "entry_keys", entries);
  Kokkos::View<std::uint32_t *, MemorySpace> order;
  take(order, "entry_order", entries);
  tree::mergeSortedPairs(space, mine.keys, mine.permutation, received_keys, received_order, keys,
                         order, memory);
  memory.give(received_keys);
  memory.give(received_order);
  Kokkos::View<std::int64_t *, MemorySpace> weight_before;
  take(weight_before, "weight_before", entries + 1);
  Kokkos::deep_copy(space, weight_before, 0);
  Kokkos::parallel_scan("kfmm::distributed::weight_before", Policy(space, 0, entries),
                        WeightBefore<MemorySpace>{order, pruned, particles, weight_before});
  take(plan.pruned_targets, "pruned_targets", num_pruned);
  Kokkos::deep_copy(space, plan.pruned_targets, -1);
  int misplaced = 0;
  // The leaves' radii as measured, then those of the leaves that stand for pruned cells.
  auto const measure_leaf_radii = [&](auto const &, tree::Octree<MemorySpace> const &tree,
                                      auto const &entries) {
    tree::detail::GatheredLeafRadii{}(space, tree, entries);
    Kokkos::parallel_reduce(
        "kfmm::distributed::fix_pruned_leaves", Policy(space, 0, tree.numLeaves()),
        FixPrunedLeaf<MemorySpace>{tree.leaves, tree.particle_begin, tree.particle_end, tree.level,
                                   tree.radius, order, pruned, particles, plan.pruned_targets},
        misplaced);
  };
  trees.essential = tree::detail::buildCells(
      space, memory, trees.entries, cube, keys, order,
      SplitEssentialCells<MemorySpace>{leaf_size, weight_before, order, pruned_levels, particles},
      measure_leaf_radii);
  // The particles each cell stands for, which the lists' rule of sparse leaves reads: a
  // pruned cell's entry stands for all of its particles.
  tree::Octree<MemorySpace> &essential = trees.essential;
  take(essential.stands_for, "stands_for", essential.numCells());
  Kokkos::parallel_for("kfmm::distributed::stands_for", Policy(space, 0, essential.numCells()),
                       StandsFor<MemorySpace>{essential.particle_begin, essential.particle_end,
                                              weight_before, essential.stands_for});
  memory.give(pruned);
  memory.give(pruned_levels);
  memory.give(weight_before);

  // The cells of the essential tree whose multipoles this rank sends: its own pruned cells.
  int const sent_pruned = static_cast<int>(sent_cells.extent(0));
  Kokkos::View<int *, MemorySpace> sent_levels;
  take(sent_levels, "sent_levels", sent_pruned);
  Kokkos::View<tree::MortonKey *, MemorySpace> sent_prefixes;
  take(sent_prefixes, "sent_prefixes", sent_pruned);
  Kokkos::parallel_for(
      "kfmm::distributed::name_sent_cells", Policy(space, 0, sent_pruned),
      NameCells<MemorySpace>{sent_cells, mine.level, mine.cell_keys, sent_levels, sent_prefixes});
  plan.pruned_sources = findCells(space, memory, trees.essential, sent_levels, sent_prefixes);
  memory.give(sent_cells);
  memory.give(sent_levels);
  memory.give(sent_prefixes);
  int missing = 0;
  Kokkos::parallel_reduce("kfmm::distributed::count_missing_targets", Policy(space, 0, num_pruned),
                          CountMissing<MemorySpace>{plan.pruned_targets}, missing);
  int missing_sources = 0;
  Kokkos::parallel_reduce("kfmm::distributed::count_missing_sources", Policy(space, 0, sent_pruned),
                          CountMissing<MemorySpace>{plan.pruned_sources}, missing_sources);
  // Cannot happen with consistent trees; a rank that found it stops every rank.
  requireOnAllRanks(comm, where, [&] {
    kfmm::detail::require(misplaced == 0 && missing == 0 && missing_sources == 0, where,
                          "internal error: the local essential tree misses " +
                              std::to_string(misplaced + missing + missing_sources) +
                              " pruned cells (please report it)");
  });
  endStep();
  return trees;
}

} // namespace kfmm::distributed::detail

#else
#error                                                                                             \
    "kfmm/distributed needs a kfmm built with KFMM_ENABLE_MPI=ON, used through the kfmm::mpi target"
#endif
#endif
