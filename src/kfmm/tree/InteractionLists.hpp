// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_INTERACTION_LISTS_HPP
#define KFMM_TREE_INTERACTION_LISTS_HPP

// Interaction lists of an octree, or of a target tree against a source tree, by a
// level-synchronous dual tree traversal.
//
// The traversal starts from the pair (root, root) and processes a frontier of (target cell,
// source cell) pairs, all of it in one round of kernels: classify, scan, emit. Each pair is
//   - accepted by the multipole acceptance criterion (R_t + R_s) < theta |c_t - c_s|: an M2L
//     pair (fmm) or an M2P pair (treecode);
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
// Each round splits one side of a pair, so the traversal ends after at most about 2 x 21
// rounds; the pairs of one round are placed by exclusive scans, so the output does not
// depend on thread scheduling. Pairs start at (root, root) and each split partitions the
// particles of one side, so for every target particle the particles under its P2P sources
// and its accepted far-field cells (those of its leaf and, in fmm mode, of all the leaf's
// ancestors) are all particles, each exactly once.
//
// Storage: compressed rows (CSR) by target, so that one team per target row reads its
// sources and writes only its own target (no atomics in the M2L, M2P or P2P kernels):
//   - m2l: rows are target cells (fmm; empty rows in treecode mode), sources are source cells;
//   - m2p: rows are target leaves, i.e. positions in leaves (treecode; empty rows in fmm);
//   - p2p: rows are target leaves, sources are source leaf cells (with one tree a leaf's own
//     cell is in its row).
// Row r's sources are sources(offsets(r)) .. sources(offsets(r + 1) - 1). The pairs are
// grouped by target with the stable radix sort (tree::sortPairs), so within a row the
// sources keep the traversal's order and the lists are identical from run to run.

#include <kfmm/Options.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

namespace kfmm::tree
{

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
  Method method = Method::fmm;
  double theta = 0;
  Acceptance acceptance = Acceptance::theta;
  CsrList<MemorySpace> m2l; ///< rows: cells; fmm only
  CsrList<MemorySpace> m2p; ///< rows: leaves (positions in tree.leaves); treecode only
  CsrList<MemorySpace> p2p; ///< rows: leaves (positions in tree.leaves)
  int rounds = 0;           ///< frontier rounds the traversal took
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

  explicit TraversalCells(Octree<MemorySpace> const &tree)
      : centre(tree.centre), radius(tree.radius), level(tree.level), cell_keys(tree.cell_keys),
        first_child(tree.first_child), child_count(tree.child_count)
  {
  }
};

/// The acceptance test and the splitting rule of the file comment, for target cells of
/// `target` and source cells of `source`. With one tree in fmm mode (`mutual`) a pair (a, b)
/// of the frontier stands for both (a, b) and (b, a) (Dehnen 2002): the test and the
/// splitting rule are symmetric, so one decision serves both directions, the self pair
/// (A, A) splits into the pairs (A_i, A_j) with i <= j only, and an accepted or near pair of
/// two different cells emits both directions. This halves the frontiers. Otherwise pairs
/// are directed (target, source).
template <class MemorySpace>
struct PairRule
{
  TraversalCells<MemorySpace> target;
  TraversalCells<MemorySpace> source;
  double theta;
  double root_side; ///< side of the level-0 cell (classic rule)
  bool classic;
  bool treecode;
  bool one_tree; ///< the targets are the sources: (A, A) is a self pair

  KOKKOS_FUNCTION bool mutual() const { return one_tree && !treecode; }

  /// Acceptance::classic: the gap between the boxes, in the axis where it is widest, is at
  /// least the larger box's side. Box faces lie on the grid of the finer box, so the gap is
  /// a whole number of finer sides; half of one absorbs the rounding of the centres.
  KOKKOS_FUNCTION bool wellSeparated(int t, int s, double dx, double dy, double dz) const
  {
    double const ht = root_side / static_cast<double>(std::int64_t(1) << target.level(t));
    double const hs = root_side / static_cast<double>(std::int64_t(1) << source.level(s));
    double const widest = kfmm::detail::max(kfmm::detail::abs(dx),
                                            kfmm::detail::max(kfmm::detail::abs(dy),
                                                              kfmm::detail::abs(dz)));
    return widest - 0.5 * (ht + hs) > kfmm::detail::max(ht, hs) - 0.5 * kfmm::detail::min(ht, hs);
  }

  KOKKOS_FUNCTION bool accepted(int t, int s) const
  {
    double const dx = target.centre(t, 0) - source.centre(s, 0);
    double const dy = target.centre(t, 1) - source.centre(s, 1);
    double const dz = target.centre(t, 2) - source.centre(s, 2);
    if (classic)
      return wellSeparated(t, s, dx, dy, dz);
    return target.radius(t) + source.radius(s) <
           theta * kfmm::detail::sqrt(dx * dx + dy * dy + dz * dz);
  }

  /// Whether target cell t is or precedes source cell s in (level, key) order. In one tree
  /// that is the order of the cells' indices; across trees on one grid it names the same cell
  /// in both, so that trees holding parts of one set of particles (the distributed solver's)
  /// decide ties as the tree of the whole set does.
  KOKKOS_FUNCTION bool targetFirst(int t, int s) const
  {
    int const lt = target.level(t);
    int const ls = source.level(s);
    return lt < ls || (lt == ls && target.cell_keys(t) <= source.cell_keys(s));
  }

  /// The cell to split of a pair that is neither accepted nor two leaves: the larger one,
  /// by radius (theta rule) or by box (classic rule, whose test is on boxes); of two equal
  /// ones the first in (level, key) order, so that (a, b) and (b, a) split the same cell.
  KOKKOS_FUNCTION bool targetIsLarger(int t, int s) const
  {
    if (classic)
      return targetFirst(t, s);
    return target.radius(t) > source.radius(s) ||
           (target.radius(t) == source.radius(s) && targetFirst(t, s));
  }

  KOKKOS_FUNCTION std::uint8_t action(int t, int s) const
  {
    int const nt = target.child_count(t);
    int const ns = source.child_count(s);
    if (one_tree && t == s)
      return nt == 0 ? near_self : split_both;
    if (treecode && nt > 0)
      return split_target;
    if (accepted(t, s))
      return far_pair;
    if (nt == 0 && ns == 0)
      return near_pair;
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
    case split_source: return source.child_count(s);
    case split_both: return mutual() ? nt * (nt + 1) / 2 : nt * nt;
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
  return a.origin[0] == b.origin[0] && a.origin[1] == b.origin[1] &&
         a.origin[2] == b.origin[2] && a.side == b.side;
}

/// Row of each target leaf cell in the leaf lists: leaf_row(leaves(j)) = j.
template <class MemorySpace>
struct LeafRows
{
  Kokkos::View<int *, MemorySpace> leaves;
  Kokkos::View<int *, MemorySpace> leaf_row;

  KOKKOS_FUNCTION void operator()(int j) const { leaf_row(leaves(j)) = j; }
};

/// Classifies each pair of the frontier once; the scans below only read the result.
template <class MemorySpace>
struct ClassifyPairs
{
  PairRule<MemorySpace> rule;
  Kokkos::View<int *, MemorySpace> ft, fs; ///< the frontier's targets and sources
  Kokkos::View<std::uint8_t *, MemorySpace> act;

  KOKKOS_FUNCTION void operator()(int i) const { act(i) = rule.action(ft(i), fs(i)); }
};

/// Exclusive scan: where each pair's child pairs go in the next frontier.
template <class MemorySpace>
struct PlaceChildren
{
  PairRule<MemorySpace> rule;
  Kokkos::View<int *, MemorySpace> ft, fs;
  Kokkos::View<std::uint8_t *, MemorySpace> act;
  Kokkos::View<std::int64_t *, MemorySpace> child_at;

  KOKKOS_FUNCTION void operator()(int i, std::int64_t &update, bool final) const
  {
    if (final)
      child_at(i) = update;
    update += rule.children(act(i), ft(i), fs(i));
  }
};

/// Exclusive scan: where each pair's list entries go, far entries counted in the high 32
/// bits, near entries in the low ones (at most 2 per pair and fewer than 2^31 pairs, so
/// neither half overflows).
template <class MemorySpace>
struct PlaceEntries
{
  PairRule<MemorySpace> rule;
  Kokkos::View<std::uint8_t *, MemorySpace> act;
  Kokkos::View<std::uint64_t *, MemorySpace> entry_at;

  KOKKOS_FUNCTION void operator()(int i, std::uint64_t &update, bool final) const
  {
    if (final)
      entry_at(i) = update;
    std::uint8_t const a = act(i);
    if (a == far_pair)
      update += rule.entries() << 32;
    else if (a == near_pair)
      update += rule.entries();
    else if (a == near_self)
      update += 1;
  }
};

/// Writes each pair's list entries after those of the earlier rounds, and its child pairs
/// into the next frontier.
template <class MemorySpace>
struct EmitPairs
{
  PairRule<MemorySpace> rule;
  Kokkos::View<int *, MemorySpace> ft, fs;
  Kokkos::View<std::uint8_t *, MemorySpace> act;
  Kokkos::View<std::int64_t *, MemorySpace> child_at;
  Kokkos::View<std::uint64_t *, MemorySpace> entry_at;
  Kokkos::View<int *, MemorySpace> leaf_row; ///< of the target tree
  Kokkos::View<std::uint32_t *, MemorySpace> far_rows, far_sources, near_rows, near_sources;
  Kokkos::View<int *, MemorySpace> nt, ns; ///< the next frontier
  std::size_t far_base, near_base;

  KOKKOS_FUNCTION void operator()(int i) const
  {
    int const t = ft(i);
    int const s = fs(i);
    bool const mutual = rule.mutual();
    bool const treecode = rule.treecode;
    auto const &target = rule.target;
    auto const &source = rule.source;
    std::int64_t o = child_at(i);
    switch (act(i))
    {
    case far_pair:
    {
      // fmm: cell rows; treecode: leaf rows. Mutual pairs: both directions.
      std::size_t const slot = far_base + (entry_at(i) >> 32);
      far_rows(slot) = static_cast<std::uint32_t>(treecode ? leaf_row(t) : t);
      far_sources(slot) = static_cast<std::uint32_t>(s);
      if (mutual)
      {
        far_rows(slot + 1) = static_cast<std::uint32_t>(s);
        far_sources(slot + 1) = static_cast<std::uint32_t>(t);
      }
      break;
    }
    case near_pair:
    case near_self:
    {
      std::size_t const slot = near_base + (entry_at(i) & 0xffffffffULL);
      near_rows(slot) = static_cast<std::uint32_t>(leaf_row(t));
      near_sources(slot) = static_cast<std::uint32_t>(s);
      if (mutual && t != s)
      {
        near_rows(slot + 1) = static_cast<std::uint32_t>(leaf_row(s));
        near_sources(slot + 1) = static_cast<std::uint32_t>(t);
      }
      break;
    }
    case split_target:
      for (int k = target.first_child(t); k < target.first_child(t) + target.child_count(t);
           ++k, ++o)
      {
        nt(o) = k;
        ns(o) = s;
      }
      break;
    case split_source:
      for (int k = source.first_child(s); k < source.first_child(s) + source.child_count(s);
           ++k, ++o)
      {
        nt(o) = t;
        ns(o) = k;
      }
      break;
    default: // split_both: a self pair of one tree; mutual pairs need only b >= a
    {
      int const first = target.first_child(t);
      int const end = first + target.child_count(t);
      for (int a = first; a < end; ++a)
        for (int b = mutual ? a : first; b < end; ++b, ++o)
        {
          nt(o) = a;
          ns(o) = b;
        }
      break;
    }
    }
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

/// Workspace::reserve of at least `n` entries, or twice the view's size if that is more, so
/// that growth round by round takes new arrays rarely.
template <class ExecutionSpace, class MemorySpace, class View>
void reserve(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
             View &view, std::size_t n, std::string const &label)
{
  if (view.extent(0) < n)
    memory.reserve(space, view, kfmm::detail::max(n, 2 * view.extent(0)), label);
}

/// Expected sizes, per target cell (or leaf) at theta 0.7, of the traversal's largest
/// frontier and of its lists, from which the work arrays start: a device allocation and
/// its release cost tens of microseconds each and the release synchronises, so that the
/// arrays grown round by round from one pair took half of the lists' time on an H200 (30
/// allocations, 1e6 particles). Measured at 1e6 particles and the tuned leaf size: the
/// largest frontier held 38 pairs per target cell (uniform) and 74 (Plummer), the M2L list
/// 103 and 30 entries per cell, the P2P list 27 and 12 per leaf. Pairs grow about as
/// theta^-3; a larger need grows the arrays (reserve, PairBuffer::append). The M2L list's
/// arrays start at 128 per cell, what they grew to from 64 on uniform particles anyway (the
/// growth cost two allocations, two copies and two releases per build).
struct ExpectedSizes
{
  static constexpr double frontier_per_cell = 64;
  static constexpr double far_per_cell = 128;
  static constexpr double near_per_leaf = 32;

  double scale; ///< (0.7 / theta)^3

  explicit ExpectedSizes(double theta) : scale(std::pow(0.7 / theta, 3)) {}

  std::size_t of(double per_item, int items) const
  {
    return static_cast<std::size_t>(per_item * scale * items) + 1;
  }
};

/// List entries (target row, source cell) appended round after round into arrays of
/// `memory` that grow geometrically, keeping the first `size` entries.
template <class MemorySpace>
struct PairBuffer
{
  kfmm::detail::Workspace<MemorySpace> *memory;
  Kokkos::View<std::uint32_t *, MemorySpace> rows; ///< cell or leaf indices: below 2^31
  Kokkos::View<std::uint32_t *, MemorySpace> sources;
  std::size_t size = 0;

  /// Room for `capacity` entries before the first append, without copies.
  template <class ExecutionSpace>
  void reserve(ExecutionSpace const &space, std::size_t capacity, std::string const &label)
  {
    grow(space, rows, capacity, label + "_rows");
    grow(space, sources, capacity, label + "_sources");
  }

  template <class ExecutionSpace>
  void append(ExecutionSpace const &space, std::size_t n, std::string const &label)
  {
    std::size_t const needed = size + n;
    if (rows.extent(0) < needed)
    {
      // 2x: amortised copies.
      std::size_t const capacity = kfmm::detail::max(needed, 2 * rows.extent(0));
      grow(space, rows, capacity, label + "_rows");
      grow(space, sources, capacity, label + "_sources");
    }
    size = needed;
  }

  /// Ends the use of the arrays.
  void release()
  {
    memory->give(rows);
    memory->give(sources);
    size = 0;
  }

private:
  template <class ExecutionSpace, class View>
  void grow(ExecutionSpace const &space, View &view, std::size_t capacity, std::string const &label)
  {
    View bigger;
    memory->take(space, bigger, label, capacity);
    auto const used = Kokkos::make_pair(std::size_t(0), size);
    Kokkos::deep_copy(space, Kokkos::subview(bigger, used), Kokkos::subview(view, used));
    memory->give(view);
    view = bigger;
  }
};

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

/// Groups `pairs` by row with the stable radix sort and writes the compressed rows (their
/// arrays taken from `memory`): row r starts at the first sorted entry whose row is >= r (a
/// binary search per row). The pairs' arrays are given back.
template <class ExecutionSpace, class MemorySpace>
CsrList<MemorySpace> groupByRow(ExecutionSpace const &space,
                                kfmm::detail::Workspace<MemorySpace> &memory,
                                PairSortWorkspace<MemorySpace> &sort_workspace,
                                PairBuffer<MemorySpace> &pairs, int num_rows,
                                std::string const &label)
{
  std::int64_t const size = static_cast<std::int64_t>(pairs.size);
  kfmm::detail::require(size <= std::int64_t(0xffffffffLL), "kfmm::tree::buildInteractionLists",
                        "the list " + label + " has " + std::to_string(size) +
                            " entries, more than the 2^32 - 1 one sort handles (raise "
                            "'theta' or the tree's leaf size)");
  auto const used = Kokkos::make_pair(std::size_t(0), pairs.size);
  auto const rows = Kokkos::subview(pairs.rows, used);
  auto const sorted_sources = Kokkos::subview(pairs.sources, used);
  if (size > 0)
    sortPairs(space, rows, sorted_sources, bitsFor(num_rows),
              static_cast<SortOptions const *>(nullptr), sort_workspace);
  CsrList<MemorySpace> list;
  list.size = size;
  memory.take(space, list.offsets, label + "_offsets", num_rows + 1);
  memory.take(space, list.sources, label + "_sources", size);
  Kokkos::parallel_for("kfmm::lists::row_offsets",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, num_rows + 1),
                       RowOffsets<MemorySpace, decltype(rows)>{rows, list.offsets, size});
  Kokkos::parallel_for("kfmm::lists::row_sources",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, size),
                       RowSources<MemorySpace, decltype(sorted_sources)>{sorted_sources,
                                                                         list.sources});
  pairs.release(); // the list holds what it needs
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

/// buildInteractionLists (below) with the lists' arrays and the traversal's work arrays taken
/// from `memory`, for an entry point with a workspace of its own (kfmm::Fmm).
template <class ExecutionSpace, class MemorySpace>
InteractionLists<MemorySpace>
buildInteractionListsIn(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                        Octree<MemorySpace> const &targets, Octree<MemorySpace> const &sources,
                        double theta, Method method, Acceptance acceptance)
{
  kfmm::detail::ScopedRegion region("kfmm::lists::build");
  std::string const where = "kfmm::tree::buildInteractionLists";
  kfmm::detail::require(theta > 0 && theta <= 1, where,
                        "argument 'theta' must be in (0, 1], got " +
                            kfmm::detail::formatNumber(theta));
  kfmm::detail::require(detail::sameGrid(targets.cube, sources.cube), where,
                        "the target and source trees must be built in one cube");

  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  bool const treecode = method == Method::treecode;
  bool const one_tree = targets.centre.data() == sources.centre.data();
  int const num_cells = targets.numCells();
  int const num_leaves = targets.numLeaves();

  InteractionLists<MemorySpace> lists;
  lists.method = method;
  lists.theta = theta;
  lists.acceptance = acceptance;

  // Row of each target leaf cell in the leaf lists.
  Kokkos::View<int *, MemorySpace> leaf_row;
  memory.take(space, leaf_row, "kfmm::lists::leaf_row", num_cells);
  Kokkos::parallel_for("kfmm::lists::leaf_rows", Policy(space, 0, num_leaves),
                       detail::LeafRows<MemorySpace>{targets.leaves, leaf_row});

  detail::PairRule<MemorySpace> const rule{detail::TraversalCells<MemorySpace>(targets),
                                           detail::TraversalCells<MemorySpace>(sources),
                                           theta,
                                           targets.cube.side,
                                           acceptance == Acceptance::classic,
                                           treecode,
                                           one_tree};

  // Work arrays reused from round to round (reallocated only when a frontier outgrows them):
  // the frontier and the next one, each pair's action and the scanned offsets.
  Kokkos::View<int *, MemorySpace> frontier_t, frontier_s, next_t, next_s;
  Kokkos::View<std::uint8_t *, MemorySpace> action;
  Kokkos::View<std::int64_t *, MemorySpace> child_offset;
  Kokkos::View<std::uint64_t *, MemorySpace> entry_offset;
  detail::PairBuffer<MemorySpace> far_pairs{&memory}, near_pairs{&memory};
  std::size_t size = num_cells > 0 && sources.numCells() > 0 ? 1 : 0;
  if (size > 0)
  {
    detail::ExpectedSizes const expected(theta);
    std::size_t const frontier = expected.of(expected.frontier_per_cell, num_cells);
    for (auto *view : {&frontier_t, &frontier_s, &next_t, &next_s})
      detail::reserve(space, memory, *view, frontier, "kfmm::lists::frontier");
    detail::reserve(space, memory, action, frontier, "kfmm::lists::action");
    detail::reserve(space, memory, child_offset, frontier, "kfmm::lists::child_offset");
    detail::reserve(space, memory, entry_offset, frontier, "kfmm::lists::entry_offset");
    far_pairs.reserve(space, expected.of(expected.far_per_cell, num_cells), "kfmm::lists::far");
    near_pairs.reserve(space, expected.of(expected.near_per_leaf, num_leaves),
                       "kfmm::lists::near");
  }
  // The first frontier is (root, root); the root is cell 0.
  auto const first = Kokkos::make_pair(std::size_t(0), size);
  Kokkos::deep_copy(space, Kokkos::subview(frontier_t, first), 0);
  Kokkos::deep_copy(space, Kokkos::subview(frontier_s, first), 0);

  Kokkos::Profiling::pushRegion("kfmm::lists::traverse");
  while (size > 0)
  {
    detail::reserve(space, memory, action, size, "kfmm::lists::action");
    detail::reserve(space, memory, child_offset, size, "kfmm::lists::child_offset");
    detail::reserve(space, memory, entry_offset, size, "kfmm::lists::entry_offset");
    Policy const pairs(space, 0, size);

    Kokkos::parallel_for("kfmm::lists::classify_pairs", pairs,
                         ClassifyPairs<MemorySpace>{rule, frontier_t, frontier_s, action});
    std::int64_t num_children = 0;
    Kokkos::parallel_scan(
        "kfmm::lists::place_children", pairs,
        PlaceChildren<MemorySpace>{rule, frontier_t, frontier_s, action, child_offset},
        num_children);
    std::uint64_t packed = 0;
    Kokkos::parallel_scan("kfmm::lists::place_entries", pairs,
                          PlaceEntries<MemorySpace>{rule, action, entry_offset}, packed);
    kfmm::detail::require(num_children <= INT_MAX, where,
                          "the traversal frontier exceeds 2^31 - 1 pairs (theta " +
                              kfmm::detail::formatNumber(theta) + " too small for this tree)");

    // Emit: list entries after those of the earlier rounds, and the next frontier.
    std::size_t const far_base = far_pairs.size;
    std::size_t const near_base = near_pairs.size;
    far_pairs.append(space, packed >> 32, "kfmm::lists::far");
    near_pairs.append(space, packed & 0xffffffffULL, "kfmm::lists::near");
    detail::reserve(space, memory, next_t, num_children, "kfmm::lists::frontier");
    detail::reserve(space, memory, next_s, num_children, "kfmm::lists::frontier");
    Kokkos::parallel_for("kfmm::lists::emit_pairs", pairs,
                         detail::EmitPairs<MemorySpace>{rule, frontier_t, frontier_s, action,
                                                        child_offset, entry_offset, leaf_row,
                                                        far_pairs.rows, far_pairs.sources,
                                                        near_pairs.rows, near_pairs.sources,
                                                        next_t, next_s, far_base, near_base});
    std::swap(frontier_t, next_t);
    std::swap(frontier_s, next_s);
    size = static_cast<std::size_t>(num_children);
    ++lists.rounds;
  }
  for (auto *view : {&frontier_t, &frontier_s, &next_t, &next_s, &leaf_row})
    memory.give(*view);
  memory.give(action);
  memory.give(child_offset);
  memory.give(entry_offset);
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("kfmm::lists::group");
  detail::PairSortWorkspace<MemorySpace> sort_workspace;
  sort_workspace.memory = &memory;
  if (treecode)
  {
    lists.m2l = detail::emptyList(space, memory, num_cells, "kfmm::lists::m2l");
    lists.m2p = detail::groupByRow(space, memory, sort_workspace, far_pairs, num_leaves,
                                   "kfmm::lists::m2p");
  }
  else
  {
    lists.m2l = detail::groupByRow(space, memory, sort_workspace, far_pairs, num_cells,
                                   "kfmm::lists::m2l");
    lists.m2p = detail::emptyList(space, memory, num_leaves, "kfmm::lists::m2p");
  }
  lists.p2p = detail::groupByRow(space, memory, sort_workspace, near_pairs, num_leaves,
                                 "kfmm::lists::p2p");
  sort_workspace.release();
  Kokkos::Profiling::popRegion();
  return lists;
}

} // namespace detail

/// Builds the interaction lists of the cells of `targets` against those of `sources` by the
/// level-synchronous dual tree traversal of the file comment, with the acceptance test
/// (R_t + R_s) < theta |c_t - c_s| on the cells' geometric centres c and radii R (Octree.hpp),
/// or the classic rule on their boxes. The two trees must share one bounding cube (their
/// cells then lie on one grid); they may be the same tree (the same Views), which the
/// traversal takes as one set of particles acting on itself.
///
/// \param [in] space       execution space instance the kernels run on
/// \param [in] targets     the target tree: list rows are its cells or leaves
/// \param [in] sources     the source tree: list sources are its cells
/// \param [in] theta       opening parameter in (0, 1]: smaller is more accurate and slower
/// \param [in] method      Method::fmm (M2L and P2P lists) or Method::treecode (M2P and P2P)
/// \param [in] acceptance  the rule (Options.hpp); theta is checked but not used by classic
/// \return the lists, identical for identical input
/// \throws kfmm::Exception when theta is not in (0, 1] (the message names 'theta') or the
/// trees' cubes differ.
template <class ExecutionSpace, class MemorySpace>
InteractionLists<MemorySpace>
buildInteractionLists(ExecutionSpace const &space, Octree<MemorySpace> const &targets,
                      Octree<MemorySpace> const &sources, double theta,
                      Method method = Method::fmm, Acceptance acceptance = Acceptance::theta)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::tree::buildInteractionLists: the first argument must be a Kokkos "
                "execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "kfmm::tree::buildInteractionLists: the tree must be accessible from the "
                "execution space");
  return detail::buildInteractionListsIn(space, kfmm::detail::Workspace<MemorySpace>::direct(),
                                         targets, sources, theta, method, acceptance);
}

/// The interaction lists of the particles of `tree` on each other: buildInteractionLists
/// with `tree` as both the targets and the sources.
template <class ExecutionSpace, class MemorySpace>
InteractionLists<MemorySpace> buildInteractionLists(ExecutionSpace const &space,
                                                    Octree<MemorySpace> const &tree, double theta,
                                                    Method method = Method::fmm,
                                                    Acceptance acceptance = Acceptance::theta)
{
  return buildInteractionLists(space, tree, tree, theta, method, acceptance);
}

} // namespace kfmm::tree

#endif
