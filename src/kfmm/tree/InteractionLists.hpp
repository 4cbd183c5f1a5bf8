// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_INTERACTION_LISTS_HPP
#define KFMM_TREE_INTERACTION_LISTS_HPP

// Interaction lists of an octree, or of a target tree against a source tree, by a
// level-synchronous dual tree traversal.
//
// The traversal starts from the pair (root, root) and processes a frontier of (target cell,
// source cell) pairs, all of it in one round of kernels: classify, scan, emit. Each pair is
//   - accepted by the multipole acceptance criterion (thetaAccepts below: (R_t + R_s) < theta
//     |c_t - c_s|; for targets that are not the sources, each cell's radius within
//     theta / (2 - theta) of its distance to the other's particles; with softening, the
//     particles also far enough apart for the unsoftened expansions): an M2L pair (fmm) or an
//     M2P pair (treecode), unless its larger cell is a leaf of a few particles and its
//     particle pairs are few enough (PairRule::sparseLeafPair): then it goes on as a refused
//     pair, down to leaf pairs;
//   - a near pair of two leaves: a P2P pair;
//   - or split into the pairs of the children of one side, which form the next frontier:
//     the self pair (A, A) of one tree into all child pairs (A_i, A_j); otherwise the cell
//     with the larger radius, a leaf never, and of two equal cells the first in (level, key)
//     order, so that the decision on (a, b) is the decision on (b, a) (the dual tree traversal of
//     Appel 1985 and Dehnen 2002, with the MAC of Yokota & Barba 2011's treecode/FMM
//     comparison in its two-sided form).
// With one tree in fmm mode pairs are mutual: (a, b) stands for both directions, because the
// test and the splitting rule are symmetric; an accepted or near pair emits both list entries
// and the self pair splits into the pairs i <= j only, which halves the work (Dehnen 2002).
// In treecode mode pairs are directed and a non-leaf target is always split first, so every
// accepted pair has a leaf target: M2P (leaf, cell) and P2P (leaf, leaf). Between two trees
// (targets that are not the sources, on a common bounding cube so that their cells share one
// grid) pairs are directed too; on two copies of one tree the traversal gives exactly the
// entries of the mutual one.
//
// Each round splits one side of a pair, taking it one level deeper in one tree, so the
// traversal ends after at most depth(targets) + depth(sources) + 1 rounds: that many
// kernels are queued, each reading its frontier's size from a counter on the device, and the
// host reads the counters once, after the last round (sizes found on the device, with
// capacities bounded and checked: a traversal that overflowed one runs again with more
// room). Within a round, teams claim tiles of pairs in order; a team scan places a tile's
// children and entries within it, and a decoupled look-back over the earlier tiles places the
// tile, so that every place is the one a sequential pass would give. Pairs start at (root,
// root) and each split partitions the particles of one side, so for every target particle
// the particles under its P2P sources and its accepted far-field cells (those of its leaf
// and, in fmm mode, of all the leaf's ancestors) are all particles, each exactly once.
//
// Storage: compressed rows (CSR) by target, so that one team per target row reads its
// sources and writes only its own target (no atomics in the M2L, M2P or P2P kernels):
//   - m2l: rows are target cells (fmm; empty rows in treecode mode), sources are source cells;
//   - m2p: rows are target leaves, i.e. positions in leaves (treecode; empty rows in fmm);
//   - p2p: rows are target leaves, sources are source leaf cells (with one tree a leaf's own
//     cell is in its row).
// With periodic boundaries (fmm, one tree) a source is a cell of one of the root's near
// images (tree/PeriodicImage.hpp). With ImagePairs::mutual pairs are mutual too: (a, b + n)
// stands for (b, a - n) as well, since the test and the splitting rule see only the cells and
// their distance. The traversal starts from the self pair (root, root) and the root paired
// with half of its images, those whose n is positive in lexicographic order; their opposites
// come as the other directions. A cell and its own image (A, A + n) split into all child
// pairs (A_i, A_j + n), as a self pair does: of two equal cells neither comes first, and
// splitting one side would expand the mirror pairs (A, A_i - n) into the larger cell, which
// measured a larger field error (docs/PERIODIC.md). With ImagePairs::directed the traversal
// starts from the root paired with each of its images and pairs are directed. The backend's
// tuning chooses (Tuning::lists_image_pairs).
// Row r's sources are sources(offsets(r)) .. sources(offsets(r + 1) - 1). The pairs are
// grouped by target with the stable radix sort (tree::sortPairs), so within a row the
// sources keep the traversal's order and the lists are identical from run to run.

#include <kfmm/detail/ArgumentLaunch.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Streaming.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/tree/ListRules.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/PeriodicImage.hpp>
#include <kfmm/tree/RadixSort.hpp>
#include <kfmm/tree/detail/TileStatus.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kfmm::tree
{

/// The rule of sparse leaves (PairRule::sparseLeafPair): a pair that the acceptance rule
/// accepts is computed directly when its larger cell is a leaf of at most `leaf` particles
/// and its particle pairs (n_t x n_s) are at most `pairs`. Zeros: none.
struct SparseLeaves
{
  double leaf = 0;
  double pairs = 0;
};

/// One interaction list in compressed rows: row r's sources are
/// sources(offsets(r)) .. sources(offsets(r + 1) - 1).
template <class MemorySpace>
struct CsrList
{
  Kokkos::View<std::int64_t *, MemorySpace> offsets; ///< numRows() + 1 entries
  Kokkos::View<int *, MemorySpace> sources;          ///< source cells
  std::int64_t size = 0;                             ///< number of entries (host copy)

  int numRows() const { return static_cast<int>(offsets.extent(0)) - 1; }
};

/// The interaction lists of an octree (see the file comment).
template <class MemorySpace>
struct InteractionLists
{
  using memory_space = MemorySpace;
  ListKind method = ListKind::fmm;
  double theta = 0;
  Acceptance acceptance = Acceptance::theta;
  double separation = 0;     ///< least distance between a far pair's particles (0: none)
  bool equal_ratios = false; ///< thetaAccepts' test of unequal cells (separate targets)
  SparseLeaves sparse;       ///< the rule of sparse leaves it took
  /// Periodic boundaries: the sources' image shift (its period, the tree's cube side; 0:
  /// none). Sources are then packed cells and images (tree/PeriodicImage.hpp).
  ImageShift shift;
  CsrList<MemorySpace> m2l; ///< rows: cells; fmm only
  CsrList<MemorySpace> m2p; ///< rows: leaves (positions in tree.leaves); treecode only
  CsrList<MemorySpace> p2p; ///< rows: leaves (positions in tree.leaves)
  int rounds = 0;           ///< frontier rounds the traversal took
  /// Particle pairs of the p2p list: for each entry, its row leaf's particles times its
  /// source leaf's (a particle and itself included), counted on the device before the
  /// traversal's read, which brings it.
  std::uint64_t near_pairs = 0;
};

namespace detail
{

/// What the traversal does with a pair.
enum PairAction : std::uint8_t
{
  far_pair = 0,
  near_pair = 1,
  split_target = 2,
  split_source = 3,
  split_both = 4,
  near_self = 5 ///< (A, A) for a leaf A of one tree: one P2P entry in either mode
};

/// The cell data the traversal reads of one tree.
template <class MemorySpace>
struct TraversalCells
{
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<std::int64_t *, MemorySpace> stands_for;

  explicit TraversalCells(Octree<MemorySpace> const &tree)
      : centre(tree.centre), radius(tree.radius), level(tree.level), cell_keys(tree.cell_keys),
        first_child(tree.first_child), child_count(tree.child_count),
        particle_begin(tree.particle_begin), particle_end(tree.particle_end),
        stands_for(tree.stands_for)
  {
  }

  /// The particles cell c stands for (Octree::stands_for).
  KOKKOS_FUNCTION double particles(int c) const
  {
    return static_cast<double>(stands_for.extent(0) > 0 ? stands_for(c)
                                                        : particle_end(c) - particle_begin(c));
  }
};

/// Whether the particles of two cells of radii rt and rs whose centres are d apart are at
/// least `separation` apart: d - rt - rs >= separation. The far field expands the unsoftened
/// 1/r; with softening eps, the solver asks for the separation at which the softened
/// kernel's field differs from it by its share of the error (the solver's
/// detail::softeningSeparation), 0 without softening.
KOKKOS_INLINE_FUNCTION bool separatedBeyond(double rt, double rs, double d, double separation)
{
  return d - rt - rs >= separation;
}

/// The theta rule on a pair of cells of radii rt and rs whose centres are d apart:
/// (R_t + R_s) < theta d, and the cells' particles at least `separation` apart
/// (separatedBeyond). With `equal_ratios`, for targets that are not the sources, each side's
/// expansion must also converge at least as fast as those of two equal cells at the limit,
/// whose ratio of radius to the distance from the other cell's particles is
/// (theta / 2) / (1 - theta / 2):
///   R_s < theta / (2 - theta) (d - R_t)  and  R_t < theta / (2 - theta) (d - R_s),
/// which imply (R_t + R_s) < theta d and accept two equal cells as it does; a pair of a large
/// and a small cell must be farther apart (a source expansion evaluated at targets near its
/// radius' reach converges at its own ratio, not at the pair's mean: docs/ACCURACY.md).
/// One set of particles keeps the plain test, whose mix of pairs the accuracy tables measure.
KOKKOS_INLINE_FUNCTION bool thetaAccepts(double rt, double rs, double d, double theta,
                                         double separation, bool equal_ratios)
{
  if (!separatedBeyond(rt, rs, d, separation))
    return false;
  if (!equal_ratios)
    return rt + rs < theta * d;
  double const ratio = theta / (2 - theta);
  return rs < ratio * (d - rt) && rt < ratio * (d - rs);
}

/// The acceptance test and the splitting rule of the file comment, for target cells of
/// `target` and source cells of `source`. With one tree in fmm mode (`mutual`) a pair (a, b)
/// of the frontier stands for both (a, b) and (b, a) (Dehnen 2002): the test and the
/// splitting rule are symmetric, so one decision serves both directions, the self pair
/// (A, A) splits into the pairs (A_i, A_j) with i <= j only, and an accepted or near pair of
/// two different cells emits both directions. This halves the frontiers. Otherwise pairs
/// are directed (target, source). With periodic boundaries a pair's source is a cell of one
/// of the near images (tree/PeriodicImage.hpp), whose centre is translated by `shift`; with
/// `mutual_images` the pair (a, b + n) stands for (b, a - n) too (PeriodicImage::opposite),
/// and a cell paired with its own image (a, a + n) is no self pair (its two directions are
/// two entries) but splits both sides like one, into all child pairs (a_i, a_j + n);
/// otherwise pairs with images are directed.
template <class MemorySpace>
struct PairRule
{
  TraversalCells<MemorySpace> target;
  TraversalCells<MemorySpace> source;
  double theta;
  double separation;   ///< least distance between a far pair's particles (separatedBeyond)
  bool equal_ratios;   ///< thetaAccepts' test for targets that are not the sources
  SparseLeaves sparse; ///< sparseLeafPair's bounds
  double root_side;    ///< side of the level-0 cell (classic rule)
  bool classic;
  bool treecode;
  bool one_tree;      ///< the targets are the sources: (A, A) is a self pair
  ImageShift shift;   ///< periodic boundaries: the period (0: none)
  bool mutual_images; ///< periodic boundaries: ImagePairs::mutual

  KOKKOS_FUNCTION bool mutual() const
  {
    return one_tree && !treecode && (shift.period == 0 || mutual_images);
  }

  /// Acceptance::classic: the gap between the boxes, in the axis where it is widest, is at
  /// least the larger box's side. Box faces lie on the grid of the finer box, so the gap is
  /// a whole number of finer sides; half of one absorbs the rounding of the centres.
  KOKKOS_FUNCTION bool wellSeparated(int t, int s, double dx, double dy, double dz) const
  {
    double const ht = root_side / static_cast<double>(std::int64_t(1) << target.level(t));
    double const hs =
        root_side / static_cast<double>(std::int64_t(1) << source.level(PeriodicImage::cellOf(s)));
    double const widest = kfmm::detail::max(
        kfmm::detail::abs(dx), kfmm::detail::max(kfmm::detail::abs(dy), kfmm::detail::abs(dz)));
    return widest - 0.5 * (ht + hs) > kfmm::detail::max(ht, hs) - 0.5 * kfmm::detail::min(ht, hs);
  }

  KOKKOS_FUNCTION bool accepted(int t, int s) const
  {
    int const c = PeriodicImage::cellOf(s);
    double const dx = target.centre(t, 0) - (source.centre(c, 0) + shift(s, 0));
    double const dy = target.centre(t, 1) - (source.centre(c, 1) + shift(s, 1));
    double const dz = target.centre(t, 2) - (source.centre(c, 2) + shift(s, 2));
    double const d = kfmm::detail::sqrt(dx * dx + dy * dy + dz * dz);
    double const rt = target.radius(t);
    double const rs = source.radius(c);
    if (classic)
      return wellSeparated(t, s, dx, dy, dz) && separatedBeyond(rt, rs, d, separation);
    return thetaAccepts(rt, rs, d, theta, separation, equal_ratios);
  }

  /// Whether the larger cell of the pair (t, s), whose cells have nt and ns children (the
  /// one the traversal would split), is a leaf of at most sparse.leaf particles, and the
  /// pair has at most sparse.pairs particle pairs (which bounds the direct sum's cost: a
  /// pair of full leaves at the solver's bound). A leaf cannot be split, so its expansion
  /// meets smaller cells whose particles may lie far from it and converges no faster than
  /// the rule's limit allows; where one pair carries most of a target's field (a point
  /// beside a cluster, coincident sources) that error is the target's, far above the
  /// average that the accuracy tables measure. So an accepted pair of this kind is computed
  /// directly (n_t x n_s particle pairs, exact): it goes on as a refused pair, whose other
  /// cell is split down to leaves. Symmetric, as the mutual traversal needs.
  KOKKOS_FUNCTION bool sparseLeafPair(int t, int s, int nt, int ns) const
  {
    double const pt = target.particles(t);
    double const ps = source.particles(PeriodicImage::cellOf(s));
    if (pt * ps > sparse.pairs)
      return false;
    // The treecode expands no target cell (M2P evaluates at the particles): only a sparse
    // source leaf counts.
    if (targetIsLarger(t, s))
      return !treecode && nt == 0 && pt <= sparse.leaf;
    return ns == 0 && ps <= sparse.leaf;
  }

  /// Whether target cell t is or precedes source cell s in (level, key) order. In one tree
  /// that is the order of the cells' indices; across trees on one grid it names the same cell
  /// in both, so that trees holding parts of one set of particles (the distributed solver's)
  /// decide ties as the tree of the whole set does.
  KOKKOS_FUNCTION bool targetFirst(int t, int s) const
  {
    int const c = PeriodicImage::cellOf(s);
    int const lt = target.level(t);
    int const ls = source.level(c);
    return lt < ls || (lt == ls && target.cell_keys(t) <= source.cell_keys(c));
  }

  /// The cell to split of a pair that is neither accepted nor two leaves: the larger one,
  /// by radius (theta rule) or by box (classic rule, whose test is on boxes); of two equal
  /// ones the first in (level, key) order, so that (a, b) and (b, a) split the same cell.
  KOKKOS_FUNCTION bool targetIsLarger(int t, int s) const
  {
    if (classic)
      return targetFirst(t, s);
    double const rs = source.radius(PeriodicImage::cellOf(s));
    return target.radius(t) > rs || (target.radius(t) == rs && targetFirst(t, s));
  }

  KOKKOS_FUNCTION std::uint8_t action(int t, int s) const
  {
    int const nt = target.child_count(t);
    int const ns = source.child_count(PeriodicImage::cellOf(s));
    // A self pair is a cell and itself untranslated.
    if (one_tree && t == s)
      return nt == 0 ? near_self : split_both;
    if (treecode && nt > 0)
      return split_target;
    if (accepted(t, s) && !sparseLeafPair(t, s, nt, ns))
      return far_pair;
    if (nt == 0 && ns == 0)
      return near_pair;
    if (mutual() && PeriodicImage::cellOf(s) == t) // a cell and its own image
      return split_both;
    if (nt > 0 && (ns == 0 || targetIsLarger(t, s)))
      return split_target;
    return split_source;
  }

  /// Pairs of the next frontier that `action` on (t, s) makes.
  KOKKOS_FUNCTION int children(std::uint8_t action, int t, int s) const
  {
    int const nt = target.child_count(t);
    switch (action)
    {
    case split_target: return nt;
    case split_source: return source.child_count(PeriodicImage::cellOf(s));
    case split_both: return mutual() && t == s ? nt * (nt + 1) / 2 : nt * nt;
    default: return 0;
    }
  }

  /// List entries that a far or near pair of two cells makes: both directions of a mutual
  /// pair.
  KOKKOS_FUNCTION std::uint64_t entries() const { return mutual() ? 2 : 1; }
};

/// Whether two trees' cells lie on one grid: their cubes' origins and sides are equal.
inline bool sameGrid(Cube const &a, Cube const &b)
{
  return a.origin[0] == b.origin[0] && a.origin[1] == b.origin[1] && a.origin[2] == b.origin[2] &&
         a.side == b.side;
}

/// Row of each target leaf cell in the leaf lists: leaf_row(leaves(j)) = j.
template <class MemorySpace>
struct LeafRows
{
  Kokkos::View<int *, MemorySpace> leaves;
  Kokkos::View<int *, MemorySpace> leaf_row;

  KOKKOS_FUNCTION void operator()(int j) const { leaf_row(leaves(j)) = j; }
};

/// The list entries and child pairs that pairs of the frontier make, packed into one integer
/// so that one team scan places all three: child pairs in the high field, far entries in the
/// middle one, near entries in the low one. A pair makes at most 64 child pairs (a self pair
/// of eight children, directed) and 2 entries of each kind, so that a field of 21 bits holds
/// the sum over a tile of up to 2^15 pairs.
struct PairCounts
{
  static constexpr int field_bits = 21;
  static constexpr std::uint64_t field_mask = (std::uint64_t(1) << field_bits) - 1;
  static constexpr int max_tile = 1 << 15;

  KOKKOS_FUNCTION static std::uint64_t pack(std::uint64_t children, std::uint64_t far,
                                            std::uint64_t near)
  {
    return children << (2 * field_bits) | far << field_bits | near;
  }
  KOKKOS_FUNCTION static std::uint64_t children(std::uint64_t packed)
  {
    return packed >> (2 * field_bits);
  }
  KOKKOS_FUNCTION static std::uint64_t far(std::uint64_t packed)
  {
    return (packed >> field_bits) & field_mask;
  }
  KOKKOS_FUNCTION static std::uint64_t near(std::uint64_t packed) { return packed & field_mask; }

  /// What `action` on (t, s) makes under `rule`.
  template <class Rule>
  KOKKOS_FUNCTION static std::uint64_t of(Rule const &rule, std::uint8_t action, int t, int s)
  {
    std::uint64_t const children = static_cast<std::uint64_t>(rule.children(action, t, s));
    switch (action)
    {
    case far_pair: return pack(children, rule.entries(), 0);
    case near_pair: return pack(children, 0, rule.entries());
    case near_self: return pack(children, 0, 1);
    default: return pack(children, 0, 0);
    }
  }
};

/// One side of the traversal's frontier: pair i is (targets(i), sources(i)); the Views'
/// extent is the capacity.
template <class MemorySpace>
struct Frontier
{
  Kokkos::View<int *, MemorySpace> targets;
  Kokkos::View<int *, MemorySpace> sources;
};

/// List entries (target row, source cell) of one kind, in arrays of fixed capacity (their
/// extent); cell and leaf indices are below 2^31.
template <class MemorySpace>
struct PairEntries
{
  Kokkos::View<std::uint32_t *, MemorySpace> rows;
  Kokkos::View<std::uint32_t *, MemorySpace> sources;
};

/// Where a traversal keeps its sizes on the device, so that its rounds need no host
/// synchronisation, for rounds 0 .. last_round: frontier(r) counts the pairs of round r's
/// frontier (frontier(last_round + 1) stays 0), far(r) and near(r) the far and near entries of
/// the rounds before r (far(last_round + 1): all of them), and claim(r) the tiles of round r
/// claimed so far.
struct TraversalCounters
{
  /// The type of the counters: unsigned long long, which CUDA's 64-bit atomics take (Kokkos
  /// 3.4 has no device atomic_fetch_add for unsigned long, std::uint64_t on Linux).
  using Count = unsigned long long;

  int last_round;

  /// Counter `kind` of round `round`: 0 frontier, 1 far, 2 near, 3 claim.
  KOKKOS_FUNCTION int of(int kind, int round) const { return kind * (last_round + 2) + round; }
  KOKKOS_FUNCTION int frontier(int round) const { return of(0, round); }
  KOKKOS_FUNCTION int far(int round) const { return of(1, round); }
  KOKKOS_FUNCTION int near(int round) const { return of(2, round); }
  KOKKOS_FUNCTION int claim(int round) const { return of(3, round); }
  KOKKOS_FUNCTION int size() const { return of(4, 0); }
};

/// The particle pairs of the traversal's near entries (InteractionLists::near_pairs): entry
/// i < counters(near_count) adds its row leaf's particles times its source leaf's.
template <class MemorySpace>
struct NearEntryPairs
{
  using Count = TraversalCounters::Count;
  Kokkos::View<int *, MemorySpace> target_leaves;
  Kokkos::View<int *, MemorySpace> target_begin, target_end;
  Kokkos::View<int *, MemorySpace> source_begin, source_end;
  PairEntries<MemorySpace> near;
  Kokkos::View<Count *, MemorySpace> counters;
  int near_count;

  KOKKOS_FUNCTION void operator()(int i, Count &sum) const
  {
    if (static_cast<Count>(i) >= counters(near_count))
      return;
    int const t = target_leaves(static_cast<int>(near.rows(i)));
    int const s = PeriodicImage::cellOf(static_cast<int>(near.sources(i)));
    sum += static_cast<Count>(target_end(t) - target_begin(t)) *
           static_cast<Count>(source_end(s) - source_begin(s));
  }
};

/// One round of the traversal. Teams claim tiles of team_size x items pairs of the frontier
/// in order from a counter (the frontier's size is read on the device, so the launch does not
/// depend on it). A team scan over the tile places each pair's child pairs and list entries
/// inside the tile; the tiles before it place the tile itself, found by a decoupled
/// look-back over their published counts (tree/detail/TileStatus.hpp, as in the radix
/// sort's passes): a scan over the whole frontier in one kernel, where it took two scans, four
/// kernels and a host read per round. Every place is the one a sequential pass over the
/// frontier would give, so the lists come out in the traversal's order, the same on every run.
/// A place beyond a capacity is not written, and the counters still count it: the host sees
/// the overflow after the traversal and runs it again with more room.
template <class ExecutionSpace, class MemorySpace>
struct TraverseRound
{
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  using Count = TraversalCounters::Count;
  static constexpr int items = Tune::lists_items_per_thread;
  static constexpr int lookback_window = Tune::lists_lookback_window;
  static_assert(items >= 1 && Tune::lists_team_size * items <= PairCounts::max_tile,
                "kfmm: a traversal tile holds 1 to 2^15 pairs");

  PairRule<MemorySpace> rule;
  Frontier<MemorySpace> frontier;            ///< this round's pairs
  Frontier<MemorySpace> next;                ///< the next round's
  Kokkos::View<int *, MemorySpace> leaf_row; ///< of the target tree
  PairEntries<MemorySpace> far;
  PairEntries<MemorySpace> near;
  Kokkos::View<Count *, MemorySpace> counters;
  /// status(3 tile + k): tile's status word for its child pairs (k = 0), far (1) and near
  /// (2) entries; one tile per team_size x items pairs of the frontier's capacity.
  Kokkos::View<std::uint64_t *, MemorySpace> status;
  TraversalCounters slots;
  int round;

  /// Team scratch: each thread's exclusive prefix of packed counts, the tile's total, the
  /// three places of the tile and the tile's index, and the pairs' actions.
  KOKKOS_FUNCTION static std::size_t scratchBytes(int team_size)
  {
    return (team_size + 5) * sizeof(std::uint64_t) + team_size * items;
  }

  KOKKOS_FUNCTION void operator()(Member const &team) const
  {
    int const threads = team.team_size();
    auto *const prefix =
        static_cast<std::uint64_t *>(team.team_scratch(0).get_shmem(scratchBytes(threads)));
    std::uint64_t *const shared = prefix + threads; // total, three places, tile
    auto *const actions = reinterpret_cast<std::uint8_t *>(shared + 5);
    std::uint64_t const capacity = frontier.targets.extent(0);
    std::uint64_t const stored = counters(slots.frontier(round));
    std::uint64_t const pairs = stored < capacity ? stored : capacity;
    std::uint64_t const tile_size = static_cast<std::uint64_t>(threads) * items;
    if (pairs == 0)
    {
      // No tile: the round's entries start and end at the same places.
      if (team.league_rank() == 0)
        Kokkos::single(Kokkos::PerTeam(team), [&]() {
          counters(slots.far(round + 1)) = counters(slots.far(round));
          counters(slots.near(round + 1)) = counters(slots.near(round));
        });
      return;
    }
    for (;;)
    {
      Kokkos::single(Kokkos::PerTeam(team), [&]() {
        shared[4] = Kokkos::atomic_fetch_add(&counters(slots.claim(round)), Count(1));
      });
      team.team_barrier();
      std::uint64_t const tile = shared[4];
      std::uint64_t const base = tile * tile_size;
      if (base >= pairs)
        break;
      Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, threads),
                            [&](int t, std::uint64_t &running, bool final) {
                              std::uint64_t counts = 0;
                              for (int j = 0; j < items; ++j)
                              {
                                std::uint64_t const i = base + t * items + j;
                                if (i >= pairs)
                                  break;
                                int const ti = frontier.targets(i);
                                int const si = frontier.sources(i);
                                std::uint8_t const a = rule.action(ti, si);
                                counts += PairCounts::of(rule, a, ti, si);
                                if (final)
                                  actions[t * items + j] = a;
                              }
                              if (final)
                              {
                                prefix[t] = running;
                                if (t == threads - 1)
                                  shared[0] = running + counts;
                              }
                              running += counts;
                            });
      team.team_barrier();
      // The three counts look back side by side, one thread each.
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 3), [&](int k) {
        shared[1 + k] = place(k, tile, shared[0], base + tile_size >= pairs);
      });
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, threads), [&](int t) {
        std::uint64_t child_at = shared[1] + PairCounts::children(prefix[t]);
        std::uint64_t far_at = shared[2] + PairCounts::far(prefix[t]);
        std::uint64_t near_at = shared[3] + PairCounts::near(prefix[t]);
        for (int j = 0; j < items; ++j)
        {
          std::uint64_t const i = base + t * items + j;
          if (i >= pairs)
            break;
          emit(actions[t * items + j], frontier.targets(i), frontier.sources(i), child_at, far_at,
               near_at);
        }
      });
      team.team_barrier(); // the next tile reuses the scratch
    }
  }

private:
  /// The place of tile `tile` (its packed counts `total`) in the next frontier (k = 0) or in
  /// the far (1) or near (2) entries: it publishes its count, adds those of the tiles before
  /// it by decoupled look-back and publishes its inclusive prefix. The last tile writes the
  /// round's total.
  KOKKOS_FUNCTION std::uint64_t place(int k, std::uint64_t tile, std::uint64_t total,
                                      bool last) const
  {
    std::uint64_t const own = k == 0   ? PairCounts::children(total)
                              : k == 1 ? PairCounts::far(total)
                                       : PairCounts::near(total);
    auto const at = [&](std::uint64_t j) { return &status(3 * j + k); };
    TileStatus::publishAggregate(at, tile, round, own);
    std::uint64_t const before = TileStatus::lookBack<lookback_window>(at, tile, round, own);
    // Entries continue after those of the rounds before; each round's frontier starts at 0.
    std::uint64_t const start = k == 0 ? 0 : counters(slots.of(k, round));
    if (last)
      counters(slots.of(k, round + 1)) = start + before + own;
    return start + before;
  }

  /// Writes the list entries or the child pairs of (t, s) at the given places, which it
  /// advances, each only within its array's capacity.
  KOKKOS_FUNCTION void emit(std::uint8_t action, int t, int s, std::uint64_t &child_at,
                            std::uint64_t &far_at, std::uint64_t &near_at) const
  {
    bool const mutual = rule.mutual();
    auto const &target = rule.target;
    auto const &source = rule.source;
    switch (action)
    {
    case far_pair:
      // fmm: cell rows; treecode: leaf rows. Mutual pairs: both directions.
      store(far.rows, far.sources, far_at, rule.treecode ? leaf_row(t) : t, s);
      if (mutual)
        store(far.rows, far.sources, far_at, PeriodicImage::cellOf(s),
              PeriodicImage::opposite(s, t));
      break;
    case near_pair:
    case near_self:
      store(near.rows, near.sources, near_at, leaf_row(t), s);
      if (mutual && t != s)
        store(near.rows, near.sources, near_at, leaf_row(PeriodicImage::cellOf(s)),
              PeriodicImage::opposite(s, t));
      break;
    case split_target:
      for (int k = target.first_child(t); k < target.first_child(t) + target.child_count(t); ++k)
        store(next.targets, next.sources, child_at, k, s);
      break;
    case split_source:
    {
      int const c = PeriodicImage::cellOf(s);
      for (int k = source.first_child(c); k < source.first_child(c) + source.child_count(c); ++k)
        store(next.targets, next.sources, child_at, t, PeriodicImage::sameImage(s, k));
      break;
    }
    default: // split_both: a self pair of one tree, whose mutual pairs need only b >= a, or a
             // cell and its own image, all pairs
    {
      int const first = target.first_child(t);
      int const end = first + target.child_count(t);
      for (int a = first; a < end; ++a)
        for (int b = mutual && t == s ? a : first; b < end; ++b)
          store(next.targets, next.sources, child_at, a, PeriodicImage::sameImage(s, b));
      break;
    }
    }
  }

  /// Stores the pair (a, b) at place `at` of two arrays of one capacity, only within it, and
  /// advances the place.
  template <class First, class Second>
  KOKKOS_FUNCTION static void store(First const &first, Second const &second, std::uint64_t &at,
                                    int a, int b)
  {
    if (at < first.extent(0))
    {
      first(at) = static_cast<typename First::value_type>(a);
      second(at) = static_cast<typename Second::value_type>(b);
    }
    ++at;
  }
};

/// The first frontier: the pair (root, root), the root being cell 0; with periodic
/// boundaries also the root and each of its near images (PeriodicImage::reach), or with
/// mutual pairs those whose n is positive in lexicographic order, which stand for the
/// opposite images too.
/// Like every frontier it is written only within its capacity and counted whole, so that a
/// traversal whose first frontier overflowed runs again with more room.
template <class MemorySpace>
struct FirstPair
{
  Frontier<MemorySpace> frontier;
  Kokkos::View<TraversalCounters::Count *, MemorySpace> counters;
  bool periodic;
  bool mutual;

  KOKKOS_FUNCTION void operator()(int) const
  {
    int const reach = periodic ? PeriodicImage::reach : 0;
    int pairs = 0;
    for (int nx = -reach; nx <= reach; ++nx)
      for (int ny = -reach; ny <= reach; ++ny)
        for (int nz = -reach; nz <= reach; ++nz)
        {
          bool const positive = nx > 0 || (nx == 0 && (ny > 0 || (ny == 0 && nz >= 0)));
          if (mutual && !positive)
            continue;
          if (static_cast<std::size_t>(pairs) < frontier.targets.extent(0))
          {
            frontier.targets(pairs) = 0;
            frontier.sources(pairs) = PeriodicImage::pack(0, nx, ny, nz);
          }
          ++pairs;
        }
    counters(0) = static_cast<TraversalCounters::Count>(pairs);
  }
};

/// Row r's offset into the rows sorted ascending: the first entry whose row is >= r (a
/// binary search).
template <class MemorySpace, class Rows>
struct RowOffsets
{
  Rows rows;
  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  std::int64_t size;

  KOKKOS_FUNCTION void operator()(int r) const
  {
    std::int64_t lo = 0;
    std::int64_t hi = size;
    while (lo < hi)
    {
      std::int64_t const mid = lo + (hi - lo) / 2;
      if (rows(mid) < static_cast<std::uint32_t>(r))
        lo = mid + 1;
      else
        hi = mid;
    }
    offsets(r) = lo;
  }
};

/// The sorted sources as the list's int indices.
template <class MemorySpace, class SortedSources>
struct RowSources
{
  SortedSources sorted_sources;
  Kokkos::View<int *, MemorySpace> sources;

  KOKKOS_FUNCTION void operator()(std::int64_t i) const
  {
    sources(i) = static_cast<int>(sorted_sources(i));
  }
};

/// Expected sizes, per target cell (or leaf) at theta 0.7, of the traversal's largest
/// frontier and of its lists: the capacities the traversal starts with. Its rounds run
/// without looking at their sizes on the host, so that a capacity too small costs a second
/// traversal (one more where the frontier overflowed). They are the sizes measured at the
/// tuned leaf sizes on uniform and Plummer particles, with a margin, so that the common
/// cases traverse once (docs/TUNING.md, "The lists' traversal", has the sizes); Plummer's
/// P2P list with the classic rule is left to retry. Pairs grow about as theta^-3.
/// `factor` scales them all (tests make it small to exercise the second traversal).
struct ExpectedSizes
{
  static constexpr double frontier_per_cell = 96;
  static constexpr double m2l_per_cell = 160;
  static constexpr double m2p_per_leaf = 448;
  static constexpr double near_per_leaf = 72;

  double scale;      ///< factor (0.7 / theta)^3
  std::size_t floor; ///< 4096 factor

  explicit ExpectedSizes(double theta, double factor = 1)
      : scale(factor * std::pow(0.7 / theta, 3)), floor(static_cast<std::size_t>(4096 * factor))
  {
  }

  /// At least `floor` entries: small trees' frontiers and lists scatter most about the
  /// expectation, and their arrays cost nothing.
  std::size_t of(double per_item, int items) const
  {
    return kfmm::detail::max(floor, static_cast<std::size_t>(per_item * scale * items) + 1);
  }
};

/// The room a traversal that overflowed needs: what it counted (an underestimate where an
/// earlier round overflowed, since the pairs it could not store made no children), and at
/// least twice the room it had.
inline std::size_t grownCapacity(std::size_t capacity, std::uint64_t counted)
{
  return counted <= capacity ? capacity
                             : kfmm::detail::max(static_cast<std::size_t>(counted), 2 * capacity);
}

/// Number of bits that hold the values 0 .. n - 1 (at least 1).
inline int bitsFor(std::int64_t n)
{
  int bits = 1;
  while (bits < 63 && (std::int64_t(1) << bits) < n)
    ++bits;
  return bits;
}

/// The radix sort's arrays for the lists' (row, source) pairs; one workspace serves all of a
/// build's lists.
template <class MemorySpace>
using PairSortWorkspace = SortWorkspace<std::uint32_t, std::uint32_t, MemorySpace>;

/// Groups the first `size` of `entries` by row with the stable radix sort, so that within a
/// row the sources keep the traversal's order, and writes the compressed rows (their arrays
/// taken from `memory`): row r starts at the first sorted entry whose row is >= r (a binary
/// search per row). The entries' arrays are given back.
template <class ExecutionSpace, class MemorySpace>
CsrList<MemorySpace> groupByRow(ExecutionSpace const &space,
                                kfmm::detail::Workspace<MemorySpace> &memory,
                                PairSortWorkspace<MemorySpace> &sort_workspace,
                                PairEntries<MemorySpace> &entries, std::uint64_t size, int num_rows,
                                std::string const &label)
{
  kfmm::detail::require(size <= std::uint64_t(0xffffffffULL), "kfmm::tree::buildInteractionLists",
                        "the list " + label + " has " + std::to_string(size) +
                            " entries, more than the 2^32 - 1 one sort handles (raise "
                            "'theta' or the tree's leaf size)");
  auto const used = Kokkos::make_pair(std::size_t(0), static_cast<std::size_t>(size));
  auto const rows = Kokkos::subview(entries.rows, used);
  auto const sorted_sources = Kokkos::subview(entries.sources, used);
  if (size > 0)
    sortPairs(space, rows, sorted_sources, bitsFor(num_rows),
              static_cast<SortOptions const *>(nullptr), sort_workspace);
  CsrList<MemorySpace> list;
  list.size = static_cast<std::int64_t>(size);
  memory.take(space, list.offsets, label + "_offsets", num_rows + 1);
  memory.take(space, list.sources, label + "_sources", size);
  Kokkos::parallel_for("kfmm::lists::row_offsets",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, num_rows + 1),
                       RowOffsets<MemorySpace, decltype(rows)>{rows, list.offsets, list.size});
  kfmm::detail::streamFor(
      "kfmm::lists::row_sources", space, static_cast<std::size_t>(list.size),
      RowSources<MemorySpace, decltype(sorted_sources)>{sorted_sources, list.sources});
  memory.give(entries.rows); // the list holds what it needs
  memory.give(entries.sources);
  return list;
}

/// Rows with no entries: offsets all 0.
template <class ExecutionSpace, class MemorySpace>
CsrList<MemorySpace> emptyList(ExecutionSpace const &space,
                               kfmm::detail::Workspace<MemorySpace> &memory, int num_rows,
                               std::string const &label)
{
  CsrList<MemorySpace> list;
  memory.take(space, list.offsets, label + "_offsets", num_rows + 1);
  Kokkos::deep_copy(space, list.offsets, 0);
  memory.take(space, list.sources, label + "_sources", 0);
  return list;
}

} // namespace detail

namespace detail
{

/// What a caller of buildInteractionListsIn may queue on the traversal's far entries before
/// the host reads the traversal's sizes, so that a count of its own comes back in that read
/// rather than in a host synchronisation of its own (the M2L's translation classes:
/// farfield/M2LGroups.hpp). A hook has
///   queue(space, far, counters, far_count, result): kernels over the entries far(0 ..
///     counters(far_count) - 1) (at most far's extent of them are written), which leave
///     their count in counters(result);
///   read(value): that count on the host, once the traversal's capacities held.
/// This one queues nothing.
struct NoFarEntriesHook
{
  template <class ExecutionSpace, class MemorySpace>
  void queue(ExecutionSpace const &, PairEntries<MemorySpace> const &,
             Kokkos::View<TraversalCounters::Count *, MemorySpace> const &, int, int) const
  {
  }
  void read(TraversalCounters::Count) {}
};

/// buildInteractionLists (below) with the lists' arrays and the traversal's work arrays taken
/// from `memory`, for an entry point with a workspace of its own (kfmm::Fmm), the far
/// pairs' least `separation` (in the trees' units; 0: none), for targets that are not
/// the sources, thetaAccepts' `equal_ratios`, and the rule of `sparse` leaves. The
/// traversal's first capacities are ExpectedSizes(theta, capacity_factor). `far_entries_hook`,
/// if any, works on the far entries before the traversal's read (NoFarEntriesHook). With
/// `periodic`, the tree's cube is the period and the sources are the tree's cells and their
/// near images (tree/PeriodicImage.hpp), paired as `image_pairs` says: fmm lists of one tree
/// only.
template <class ExecutionSpace, class MemorySpace, class FarEntriesHook = NoFarEntriesHook>
InteractionLists<MemorySpace> buildInteractionListsIn(
    ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
    Octree<MemorySpace> const &targets, Octree<MemorySpace> const &sources, double theta,
    ListKind method, Acceptance acceptance, double separation, bool equal_ratios,
    SparseLeaves sparse, double capacity_factor = 1, FarEntriesHook *far_entries_hook = nullptr,
    bool periodic = false, ImagePairs image_pairs = ImagePairs::mutual)
{
  kfmm::detail::ScopedRegion region("kfmm::lists::build");
  std::string const where = "kfmm::tree::buildInteractionLists";
  kfmm::detail::require(theta > 0 && theta <= 1, where,
                        "argument 'theta' must be in (0, 1], got " +
                            kfmm::detail::formatNumber(theta));
  kfmm::detail::require(separation >= 0, where,
                        "argument 'separation' must be >= 0, got " +
                            kfmm::detail::formatNumber(separation));
  kfmm::detail::require(sparse.leaf >= 0 && sparse.pairs >= 0, where,
                        "argument 'sparse' must be >= 0, got leaf " +
                            kfmm::detail::formatNumber(sparse.leaf) + " and pairs " +
                            kfmm::detail::formatNumber(sparse.pairs));
  kfmm::detail::require(detail::sameGrid(targets.cube, sources.cube), where,
                        "the target and source trees must be built in one cube");

  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  bool const treecode = method == ListKind::treecode;
  bool const one_tree = targets.centre.data() == sources.centre.data();
  int const num_cells = targets.numCells();
  int const num_leaves = targets.numLeaves();
  kfmm::detail::require(!periodic || (one_tree && !treecode), where,
                        "periodic lists are fmm lists of one tree");
  // A list entry's source holds its cell in PeriodicImage::cell_bits bits (the image's code
  // above them), with periodic boundaries or without.
  kfmm::detail::require(sources.numCells() < (1 << PeriodicImage::cell_bits), where,
                        "the source tree has " + std::to_string(sources.numCells()) +
                            " cells, more than the 2^" + std::to_string(PeriodicImage::cell_bits) +
                            " - 1 the lists hold (raise the leaf size)");

  InteractionLists<MemorySpace> lists;
  lists.method = method;
  lists.theta = theta;
  lists.acceptance = acceptance;
  lists.separation = separation;
  lists.equal_ratios = equal_ratios;
  lists.sparse = sparse;
  lists.shift = ImageShift{periodic ? targets.cube.side : 0.0};

  // Row of each target leaf cell in the leaf lists.
  Kokkos::View<int *, MemorySpace> leaf_row;
  memory.take(space, leaf_row, "kfmm::lists::leaf_row", num_cells);
  Kokkos::parallel_for("kfmm::lists::leaf_rows", Policy(space, 0, num_leaves),
                       detail::LeafRows<MemorySpace>{targets.leaves, leaf_row});

  detail::PairRule<MemorySpace> const rule{detail::TraversalCells<MemorySpace>(targets),
                                           detail::TraversalCells<MemorySpace>(sources),
                                           theta,
                                           separation,
                                           equal_ratios,
                                           sparse,
                                           targets.cube.side,
                                           acceptance == Acceptance::classic,
                                           treecode,
                                           one_tree,
                                           ImageShift{periodic ? targets.cube.side : 0.0},
                                           image_pairs == ImagePairs::mutual};

  // The traversal: rounds 0 .. last_round, a fixed number, each one kernel that reads its
  // frontier's size on the device. Each round splits one side of every pair it does not
  // settle, which takes the pair one level deeper in one of the trees, so that no pair
  // survives past the sum of the trees' depths. One host read after the last round finds
  // the lists' sizes, and whether a capacity was too small: then the traversal runs again
  // with more room (ExpectedSizes keeps that rare).
  detail::TraversalCounters const slots{kfmm::detail::max(0, targets.depth()) +
                                        kfmm::detail::max(0, sources.depth())};
  using Count = detail::TraversalCounters::Count;
  // The slots of the rounds, then one for the hook's count and one for the near pairs.
  int const hook_count = slots.size();
  int const near_pairs_count = slots.size() + 1;
  Kokkos::View<Count *, MemorySpace> counters;
  memory.take(space, counters, "kfmm::lists::counters", slots.size() + 2);
  std::vector<Count> counted(slots.size() + 2, 0);
  int const all = slots.last_round + 1; // the slots of all rounds' entries
  Kokkos::View<std::uint64_t *, MemorySpace> status;
  detail::Frontier<MemorySpace> frontiers[2];
  detail::PairEntries<MemorySpace> far, near;
  bool const empty = num_cells == 0 || sources.numCells() == 0;
  // The test of unequal cells splits more pairs: up to about 1.5 times the near and far
  // entries on clustered particles (docs/ACCURACY.md), so its first capacities are that much
  // larger, and the common cases still traverse once. So are a periodic box's: it has no
  // surface, every cell has the lists of an interior cell, and the expected sizes, measured
  // in free space, fall short of them at the tuned leaf sizes (docs/TUNING.md).
  detail::ExpectedSizes const expected(theta, capacity_factor * (equal_ratios ? 1.5 : 1.0) *
                                                  (periodic ? 1.5 : 1.0));
  // Directed pairs (treecode, two trees, directed images) are not halved by symmetry: twice
  // the frontier.
  std::size_t frontier_capacity =
      expected.of((rule.mutual() ? 1 : 2) * expected.frontier_per_cell, num_cells);
  std::size_t far_capacity = treecode ? expected.of(expected.m2p_per_leaf, num_leaves)
                                      : expected.of(expected.m2l_per_cell, num_cells);
  std::size_t near_capacity = expected.of(expected.near_per_leaf, num_leaves);
  // A round's functor is a kernel argument, so that the rounds queue without the host
  // waiting on each (kfmm/detail/ArgumentLaunch.hpp), under a register cap (Tuning).
  using TeamPolicy =
      Kokkos::TeamPolicy<ExecutionSpace, kfmm::detail::ArgumentLaunch,
                         typename kfmm::tuning::Tuning<ExecutionSpace>::ListsLaunchBounds>;
  using Round = detail::TraverseRound<ExecutionSpace, MemorySpace>;
  int const team_size = kfmm::tuning::Tuning<ExecutionSpace>::lists_team_size;
  int const teams = kfmm::detail::max(1, space.concurrency() / team_size);

  Kokkos::Profiling::pushRegion("kfmm::lists::traverse");
  while (!empty)
  {
    kfmm::detail::require(frontier_capacity <= static_cast<std::size_t>(INT_MAX), where,
                          "the traversal frontier exceeds 2^31 - 1 pairs (theta " +
                              kfmm::detail::formatNumber(theta) + " too small for this tree)");
    for (auto &frontier : frontiers)
    {
      memory.reserve(space, frontier.targets, frontier_capacity, "kfmm::lists::frontier");
      memory.reserve(space, frontier.sources, frontier_capacity, "kfmm::lists::frontier");
    }
    memory.reserve(space, far.rows, far_capacity, "kfmm::lists::far_rows");
    memory.reserve(space, far.sources, far_capacity, "kfmm::lists::far_sources");
    memory.reserve(space, near.rows, near_capacity, "kfmm::lists::near_rows");
    memory.reserve(space, near.sources, near_capacity, "kfmm::lists::near_sources");
    std::size_t const tile_size = std::size_t(team_size) * Round::items;
    std::size_t const tiles = (frontier_capacity + tile_size - 1) / tile_size;
    memory.reserve(space, status, 3 * tiles, "kfmm::lists::tile_status");
    Kokkos::deep_copy(space, status, 0);
    Kokkos::deep_copy(space, counters, 0);
    Kokkos::parallel_for(
        "kfmm::lists::first_pair", Policy(space, 0, 1),
        detail::FirstPair<MemorySpace>{frontiers[0], counters, periodic, rule.mutual()});
    for (int round = 0; round <= slots.last_round; ++round)
    {
      Kokkos::parallel_for(
          "kfmm::lists::traverse_round",
          TeamPolicy(space, teams, team_size)
              .set_scratch_size(0, Kokkos::PerTeam(Round::scratchBytes(team_size))),
          Round{rule, frontiers[round % 2], frontiers[(round + 1) % 2], leaf_row, far, near,
                counters, status, slots, round});
    }
    if (far_entries_hook != nullptr)
      far_entries_hook->queue(space, far, counters, slots.far(all), hook_count);
    // Reduced into its counter on the device, so that the count comes back in the read.
    Kokkos::parallel_reduce(
        "kfmm::lists::near_pairs",
        Kokkos::RangePolicy<ExecutionSpace, kfmm::detail::ArgumentLaunch>(space, 0,
                                                                          near.rows.extent(0)),
        detail::NearEntryPairs<MemorySpace>{targets.leaves, targets.particle_begin,
                                            targets.particle_end, sources.particle_begin,
                                            sources.particle_end, near, counters, slots.near(all)},
        Kokkos::subview(counters, near_pairs_count));
    Kokkos::deep_copy(
        space, Kokkos::View<Count *, Kokkos::HostSpace>(counted.data(), counted.size()), counters);
    space.fence();
    Count largest_frontier = 0;
    for (int round = 0; round <= slots.last_round + 1; ++round)
      largest_frontier = kfmm::detail::max(largest_frontier, counted[slots.frontier(round)]);
    kfmm::detail::require(counted[slots.frontier(slots.last_round + 1)] == 0, where,
                          "internal error: the traversal outlasted the trees' depths");
    if (largest_frontier <= frontier_capacity && counted[slots.far(all)] <= far_capacity &&
        counted[slots.near(all)] <= near_capacity)
      break;
    frontier_capacity = detail::grownCapacity(frontier_capacity, largest_frontier);
    far_capacity = detail::grownCapacity(far_capacity, counted[slots.far(all)]);
    near_capacity = detail::grownCapacity(near_capacity, counted[slots.near(all)]);
  }
  if (far_entries_hook != nullptr)
    far_entries_hook->read(counted[hook_count]);
  lists.near_pairs = counted[near_pairs_count];
  lists.rounds = 0;
  for (int round = 0; round <= slots.last_round; ++round)
    if (counted[slots.frontier(round)] > 0)
      lists.rounds = round + 1;
  for (auto &frontier : frontiers)
  {
    memory.give(frontier.targets);
    memory.give(frontier.sources);
  }
  memory.give(leaf_row);
  memory.give(counters);
  memory.give(status);
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("kfmm::lists::group");
  detail::PairSortWorkspace<MemorySpace> sort_workspace;
  sort_workspace.memory = &memory;
  if (treecode)
  {
    lists.m2l = detail::emptyList(space, memory, num_cells, "kfmm::lists::m2l");
    lists.m2p = detail::groupByRow(space, memory, sort_workspace, far, counted[slots.far(all)],
                                   num_leaves, "kfmm::lists::m2p");
  }
  else
  {
    lists.m2l = detail::groupByRow(space, memory, sort_workspace, far, counted[slots.far(all)],
                                   num_cells, "kfmm::lists::m2l");
    lists.m2p = detail::emptyList(space, memory, num_leaves, "kfmm::lists::m2p");
  }
  lists.p2p = detail::groupByRow(space, memory, sort_workspace, near, counted[slots.near(all)],
                                 num_leaves, "kfmm::lists::p2p");
  sort_workspace.release();
  Kokkos::Profiling::popRegion();
  return lists;
}

} // namespace detail

/// Builds the interaction lists of the cells of `targets` against those of `sources` by the
/// level-synchronous dual tree traversal of the file comment, with the acceptance test of the
/// theta rule (thetaAccepts: (R_t + R_s) < theta |c_t - c_s|, with `equal_ratios` stricter for
/// unequal cells) on the cells' geometric centres c and radii R (Octree.hpp), or the classic
/// rule on their boxes; with a `separation` > 0, a far pair's particles are also at least
/// that far apart (|c_t - c_s| - R_t - R_s >= separation). The two trees must share one
/// bounding cube (their cells then lie on one grid); they may be the same tree (the same
/// Views), which the traversal takes as one set of particles acting on itself.
///
/// \param [in] space       execution space instance the kernels run on
/// \param [in] targets     the target tree: list rows are its cells or leaves
/// \param [in] sources     the source tree: list sources are its cells
/// \param [in] theta       opening parameter in (0, 1]: smaller is more accurate and slower
/// \param [in] method      ListKind::fmm (M2L and P2P lists) or ListKind::treecode (M2P and P2P)
/// \param [in] acceptance  the rule (ListRules.hpp); theta is checked but not used by classic
/// \param [in] separation  least distance between the particles of a far pair, >= 0
/// \param [in] equal_ratios  the theta rule's test of unequal cells (thetaAccepts)
/// \param [in] sparse      the rule of sparse leaves (SparseLeaves; zeros: none)
/// \return the lists, identical for identical input
/// \throws kfmm::Exception when theta is not in (0, 1] (the message names 'theta'),
/// separation or a bound of `sparse` is negative, or the
/// trees' cubes differ.
template <class ExecutionSpace, class MemorySpace>
InteractionLists<MemorySpace>
buildInteractionLists(ExecutionSpace const &space, Octree<MemorySpace> const &targets,
                      Octree<MemorySpace> const &sources, double theta,
                      ListKind method = ListKind::fmm, Acceptance acceptance = Acceptance::theta,
                      double separation = 0, bool equal_ratios = false, SparseLeaves sparse = {})
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::tree::buildInteractionLists: the first argument must be a Kokkos "
                "execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "kfmm::tree::buildInteractionLists: the tree must be accessible from the "
                "execution space");
  return detail::buildInteractionListsIn(space, kfmm::detail::Workspace<MemorySpace>::direct(),
                                         targets, sources, theta, method, acceptance, separation,
                                         equal_ratios, sparse);
}

/// The interaction lists of the particles of `tree` on each other: buildInteractionLists
/// with `tree` as both the targets and the sources.
template <class ExecutionSpace, class MemorySpace>
InteractionLists<MemorySpace>
buildInteractionLists(ExecutionSpace const &space, Octree<MemorySpace> const &tree, double theta,
                      ListKind method = ListKind::fmm, Acceptance acceptance = Acceptance::theta,
                      double separation = 0, bool equal_ratios = false, SparseLeaves sparse = {})
{
  return buildInteractionLists(space, tree, tree, theta, method, acceptance, separation,
                               equal_ratios, sparse);
}

} // namespace kfmm::tree

#endif
