// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_INTERACTION_LISTS_HPP
#define KFMM_TREE_INTERACTION_LISTS_HPP

// Interaction lists of an octree by a level-synchronous dual tree traversal.
//
// The traversal starts from the pair (root, root) and processes a frontier of (target cell,
// source cell) pairs, all of it in one round of kernels: classify, scan, emit. Each pair is
//   - accepted by the multipole acceptance criterion (R_t + R_s) < theta |c_t - c_s|: an M2L
//     pair (fmm) or an M2P pair (treecode);
//   - a near pair of two leaves: a P2P pair;
//   - or split into the pairs of the children of one side, which form the next frontier:
//     the self pair (A, A) into all child pairs (A_i, A_j); otherwise the cell with the
//     larger radius, a leaf never (the dual tree traversal of Appel 1985 and Dehnen 2002,
//     with the MAC of seed 001's treecode/FMM comparison in its two-sided form).
// In fmm mode pairs are mutual: (a, b) stands for both directions, because the test and the
// splitting rule are symmetric; an accepted or near pair emits both list entries and the
// self pair splits into the pairs i <= j only, which halves the work (Dehnen 2002). In
// treecode mode pairs are directed and a non-leaf target is always split first, so every
// accepted pair has a leaf target: M2P (leaf, cell) and P2P (leaf, leaf).
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
//   - m2l: rows are cells (fmm; empty rows in treecode mode), sources are cells;
//   - m2p: rows are leaves, i.e. positions in tree.leaves (treecode; empty rows in fmm);
//   - p2p: rows are leaves, sources are leaf cells (a leaf's own cell is in its row).
// Row r's sources are sources(offsets(r)) .. sources(offsets(r + 1) - 1). The pairs are
// grouped by target with the stable radix sort (tree::sortPairs), so within a row the
// sources keep the traversal's order and the lists are identical from run to run.

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
#include <vector>

namespace kfmm::tree
{

/// Which far-field interactions the lists hold.
enum class Method
{
  fmm,     ///< cell-cell M2L pairs at any level, local expansions passed down by L2L
  treecode ///< leaf-cell M2P pairs, multipoles evaluated at the target particles
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
  Method method = Method::fmm;
  double theta = 0;
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
  near_self = 5 ///< (A, A) for a leaf A: one P2P entry in either mode
};

/// The acceptance test and the splitting rule of the file comment. In fmm mode a pair
/// (a, b) of the frontier stands for both (a, b) and (b, a) (mutual, as in Dehnen 2002):
/// the test and the splitting rule are symmetric, so one decision serves both directions,
/// the self pair (A, A) splits into the pairs (A_i, A_j) with i <= j only, and an accepted
/// or near pair of two different cells emits both directions. This halves the frontiers.
/// In treecode mode pairs are directed (target, source).
template <class MemorySpace>
struct PairRule
{
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;
  double theta;
  bool treecode;

  KOKKOS_FUNCTION std::uint8_t action(int t, int s) const
  {
    int const nt = child_count(t);
    int const ns = child_count(s);
    if (t == s)
      return nt == 0 ? near_self : split_both;
    if (treecode && nt > 0)
      return split_target;
    double const dx = centre(t, 0) - centre(s, 0);
    double const dy = centre(t, 1) - centre(s, 1);
    double const dz = centre(t, 2) - centre(s, 2);
    double const rt = radius(t);
    double const rs = radius(s);
    if (rt + rs < theta * kfmm::detail::sqrt(dx * dx + dy * dy + dz * dz))
      return far_pair;
    if (nt == 0 && ns == 0)
      return near_pair;
    if (nt > 0 && (ns == 0 || rt >= rs))
      return split_target;
    return split_source;
  }

  /// Pairs of the next frontier that `action` on (t, s) makes.
  KOKKOS_FUNCTION int children(std::uint8_t action, int t, int s) const
  {
    int const nt = child_count(t);
    switch (action)
    {
    case split_target: return nt;
    case split_source: return child_count(s);
    case split_both: return treecode ? nt * nt : nt * (nt + 1) / 2;
    default: return 0;
    }
  }

  /// List entries that a far or near pair of two cells makes: both directions of a mutual
  /// pair in fmm mode.
  KOKKOS_FUNCTION std::uint64_t entries() const { return treecode ? 1 : 2; }
};

/// The output pairs of one frontier round: sort keys (target row) and sources.
template <class MemorySpace>
struct PairChunk
{
  Kokkos::View<std::uint64_t *, MemorySpace> rows;
  Kokkos::View<std::uint32_t *, MemorySpace> sources;
};

/// Copies the chunks into one pair of arrays, in round order.
template <class ExecutionSpace, class MemorySpace>
PairChunk<MemorySpace> concatenate(ExecutionSpace const &space,
                                   std::vector<PairChunk<MemorySpace>> &chunks,
                                   std::string const &label)
{
  std::size_t total = 0;
  for (auto const &c : chunks)
    total += c.rows.extent(0);
  PairChunk<MemorySpace> all{
      Kokkos::View<std::uint64_t *, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "_rows"), total),
      Kokkos::View<std::uint32_t *, MemorySpace>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "_sources"), total)};
  std::size_t offset = 0;
  for (auto &c : chunks)
  {
    auto const n = c.rows.extent(0);
    auto const range = Kokkos::make_pair(offset, offset + n);
    Kokkos::deep_copy(space, Kokkos::subview(all.rows, range), c.rows);
    Kokkos::deep_copy(space, Kokkos::subview(all.sources, range), c.sources);
    offset += n;
    c = PairChunk<MemorySpace>{}; // release the round's memory as soon as it is copied
  }
  chunks.clear();
  return all;
}

/// Number of bits that hold the values 0 .. n - 1 (at least 1).
inline int bitsFor(std::int64_t n)
{
  int bits = 1;
  while (bits < 63 && (std::int64_t(1) << bits) < n)
    ++bits;
  return bits;
}

/// Groups `pairs` by row with the stable radix sort and writes the compressed rows: row r
/// starts at the first sorted entry whose row is >= r (a binary search per row).
template <class ExecutionSpace, class MemorySpace>
CsrList<MemorySpace> groupByRow(ExecutionSpace const &space, PairChunk<MemorySpace> pairs,
                                int num_rows, std::string const &label)
{
  std::int64_t const size = static_cast<std::int64_t>(pairs.rows.extent(0));
  if (size > 0)
    kfmm::tree::sortPairs(space, pairs.rows, pairs.sources, bitsFor(num_rows));
  CsrList<MemorySpace> list;
  list.size = size;
  list.offsets = Kokkos::View<std::int64_t *, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "_offsets"), num_rows + 1);
  list.sources = Kokkos::View<int *, MemorySpace>(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "_sources"), size);
  auto const rows = pairs.rows;
  auto const sorted_sources = pairs.sources;
  auto const offsets = list.offsets;
  auto const sources = list.sources;
  Kokkos::parallel_for(
      "kfmm::lists::row_offsets", Kokkos::RangePolicy<ExecutionSpace>(space, 0, num_rows + 1),
      KOKKOS_LAMBDA(int r) {
        std::int64_t lo = 0;
        std::int64_t hi = size;
        while (lo < hi)
        {
          std::int64_t const mid = lo + (hi - lo) / 2;
          if (rows(mid) < static_cast<std::uint64_t>(r))
            lo = mid + 1;
          else
            hi = mid;
        }
        offsets(r) = lo;
      });
  Kokkos::parallel_for(
      "kfmm::lists::row_sources", Kokkos::RangePolicy<ExecutionSpace>(space, 0, size),
      KOKKOS_LAMBDA(std::int64_t i) { sources(i) = static_cast<int>(sorted_sources(i)); });
  return list;
}

/// Rows with no entries: offsets all 0.
template <class ExecutionSpace, class MemorySpace>
CsrList<MemorySpace> emptyList(ExecutionSpace const &space, int num_rows,
                               std::string const &label)
{
  CsrList<MemorySpace> list;
  list.offsets = Kokkos::View<std::int64_t *, MemorySpace>(
      Kokkos::view_alloc(space, label + "_offsets"), num_rows + 1);
  list.sources = Kokkos::View<int *, MemorySpace>(Kokkos::view_alloc(space, label + "_sources"), 0);
  return list;
}

} // namespace detail

/// Builds the interaction lists of `tree` by the level-synchronous dual tree traversal of
/// the file comment, with the acceptance test (R_t + R_s) < theta |c_t - c_s| on the cells'
/// geometric centres c and radii R (Octree.hpp).
///
/// \param [in] space   execution space instance the kernels run on
/// \param [in] tree    the octree (its memory space must be accessible from `space`)
/// \param [in] theta   opening parameter in (0, 1]: smaller is more accurate and slower
/// \param [in] method  Method::fmm (M2L and P2P lists) or Method::treecode (M2P and P2P)
/// \return the lists, identical for identical input
/// \throws kfmm::Exception when theta is not in (0, 1] (the message names 'theta').
template <class ExecutionSpace, class MemorySpace>
InteractionLists<MemorySpace> buildInteractionLists(ExecutionSpace const &space,
                                                    Octree<MemorySpace> const &tree,
                                                    double theta, Method method = Method::fmm)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::tree::buildInteractionLists: the first argument must be a Kokkos "
                "execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "kfmm::tree::buildInteractionLists: the tree must be accessible from the "
                "execution space");
  kfmm::detail::ScopedRegion region("kfmm::lists::build");
  std::string const where = "kfmm::tree::buildInteractionLists";
  kfmm::detail::require(theta > 0 && theta <= 1, where,
                        "argument 'theta' must be in (0, 1], got " + std::to_string(theta));

  using Chunk = detail::PairChunk<MemorySpace>;
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  bool const treecode = method == Method::treecode;
  int const num_cells = tree.numCells();
  int const num_leaves = tree.numLeaves();

  InteractionLists<MemorySpace> lists;
  lists.method = method;
  lists.theta = theta;

  // Row of each leaf cell in the leaf lists.
  Kokkos::View<int *, MemorySpace> leaf_row(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::leaf_row"), num_cells);
  {
    auto const leaves = tree.leaves;
    Kokkos::parallel_for(
        "kfmm::lists::leaf_rows", Policy(space, 0, num_leaves),
        KOKKOS_LAMBDA(int j) { leaf_row(leaves(j)) = j; });
  }

  detail::PairRule<MemorySpace> const rule{tree.centre,      tree.radius, tree.first_child,
                                           tree.child_count, theta,       treecode};
  auto const first_child = tree.first_child;
  auto const child_count = tree.child_count;

  std::vector<Chunk> far_chunks;
  std::vector<Chunk> near_chunks;
  Kokkos::View<int *, MemorySpace> frontier_t(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::frontier_targets"),
      num_cells > 0 ? 1 : 0);
  Kokkos::View<int *, MemorySpace> frontier_s(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::frontier_sources"),
      num_cells > 0 ? 1 : 0);
  // The root is cell 0.
  Kokkos::deep_copy(space, frontier_t, 0);
  Kokkos::deep_copy(space, frontier_s, 0);

  Kokkos::Profiling::pushRegion("kfmm::lists::traverse");
  while (frontier_t.extent(0) > 0)
  {
    int const size = static_cast<int>(frontier_t.extent(0));
    auto const ft = frontier_t;
    auto const fs = frontier_s;
    Kokkos::View<std::uint8_t *, MemorySpace> action(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::action"), size);
    Kokkos::View<std::int64_t *, MemorySpace> child_offset(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::child_offset"),
        size);
    Kokkos::View<std::uint64_t *, MemorySpace> out_offset(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::out_offset"), size);

    // Classify each pair once; the scans below only read the result.
    Kokkos::parallel_for(
        "kfmm::lists::classify_pairs", Policy(space, 0, size),
        KOKKOS_LAMBDA(int i) { action(i) = rule.action(ft(i), fs(i)); });
    // Where each pair's child pairs go in the next frontier.
    std::int64_t num_children = 0;
    Kokkos::parallel_scan(
        "kfmm::lists::place_children", Policy(space, 0, size),
        KOKKOS_LAMBDA(int i, std::int64_t & update, bool final) {
          if (final)
            child_offset(i) = update;
          update += rule.children(action(i), ft(i), fs(i));
        },
        num_children);
    // Where each pair's list entries go: far entries counted in the high 32 bits, near
    // entries in the low ones (at most 2 per pair and fewer than 2^31 pairs, so neither half
    // overflows).
    std::uint64_t packed = 0;
    Kokkos::parallel_scan(
        "kfmm::lists::place_entries", Policy(space, 0, size),
        KOKKOS_LAMBDA(int i, std::uint64_t & update, bool final) {
          if (final)
            out_offset(i) = update;
          std::uint8_t const a = action(i);
          if (a == detail::far_pair)
            update += rule.entries() << 32;
          else if (a == detail::near_pair)
            update += rule.entries();
          else if (a == detail::near_self)
            update += 1;
        },
        packed);
    auto const num_far = static_cast<std::int64_t>(packed >> 32);
    auto const num_near = static_cast<std::int64_t>(packed & 0xffffffffULL);
    kfmm::detail::require(num_children <= INT_MAX, where,
                          "the traversal frontier exceeds 2^31 - 1 pairs (theta " +
                              std::to_string(theta) + " too small for this tree)");

    // Emit: list entries and the next frontier.
    Chunk far_chunk{Kokkos::View<std::uint64_t *, MemorySpace>(
                  Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::far_rows"),
                  num_far),
              Kokkos::View<std::uint32_t *, MemorySpace>(
                  Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::far_sources"),
                  num_far)};
    Chunk near_chunk{Kokkos::View<std::uint64_t *, MemorySpace>(
                   Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::near_rows"),
                   num_near),
               Kokkos::View<std::uint32_t *, MemorySpace>(
                   Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::near_sources"),
                   num_near)};
    Kokkos::View<int *, MemorySpace> next_t(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::frontier_targets"),
        num_children);
    Kokkos::View<int *, MemorySpace> next_s(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::lists::frontier_sources"),
        num_children);
    auto const far_rows = far_chunk.rows;
    auto const far_sources = far_chunk.sources;
    auto const near_rows = near_chunk.rows;
    auto const near_sources = near_chunk.sources;
    Kokkos::parallel_for(
        "kfmm::lists::emit_pairs", Policy(space, 0, size), KOKKOS_LAMBDA(int i) {
          int const t = ft(i);
          int const s = fs(i);
          std::int64_t o = child_offset(i);
          switch (action(i))
          {
          case detail::far_pair:
          {
            // fmm: cell rows, both directions; treecode: leaf rows, one direction.
            auto const slot = static_cast<std::int64_t>(out_offset(i) >> 32);
            far_rows(slot) = static_cast<std::uint64_t>(treecode ? leaf_row(t) : t);
            far_sources(slot) = static_cast<std::uint32_t>(s);
            if (!treecode)
            {
              far_rows(slot + 1) = static_cast<std::uint64_t>(s);
              far_sources(slot + 1) = static_cast<std::uint32_t>(t);
            }
            break;
          }
          case detail::near_pair:
          case detail::near_self:
          {
            auto const slot = static_cast<std::int64_t>(out_offset(i) & 0xffffffffULL);
            near_rows(slot) = static_cast<std::uint64_t>(leaf_row(t));
            near_sources(slot) = static_cast<std::uint32_t>(s);
            if (!treecode && t != s)
            {
              near_rows(slot + 1) = static_cast<std::uint64_t>(leaf_row(s));
              near_sources(slot + 1) = static_cast<std::uint32_t>(t);
            }
            break;
          }
          case detail::split_target:
            for (int k = first_child(t); k < first_child(t) + child_count(t); ++k, ++o)
            {
              next_t(o) = k;
              next_s(o) = s;
            }
            break;
          case detail::split_source:
            for (int k = first_child(s); k < first_child(s) + child_count(s); ++k, ++o)
            {
              next_t(o) = t;
              next_s(o) = k;
            }
            break;
          default: // split_both: t == s; mutual pairs need only b >= a
            for (int a = first_child(t); a < first_child(t) + child_count(t); ++a)
              for (int b = treecode ? first_child(t) : a; b < first_child(t) + child_count(t);
                   ++b, ++o)
              {
                next_t(o) = a;
                next_s(o) = b;
              }
            break;
          }
        });
    if (num_far > 0)
      far_chunks.push_back(far_chunk);
    if (num_near > 0)
      near_chunks.push_back(near_chunk);
    frontier_t = next_t;
    frontier_s = next_s;
    ++lists.rounds;
  }
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("kfmm::lists::group");
  auto far_pairs = detail::concatenate(space, far_chunks, "kfmm::lists::far");
  auto near_pairs = detail::concatenate(space, near_chunks, "kfmm::lists::near");
  if (treecode)
  {
    lists.m2l = detail::emptyList<ExecutionSpace, MemorySpace>(space, num_cells, "kfmm::lists::m2l");
    lists.m2p = detail::groupByRow(space, far_pairs, num_leaves, "kfmm::lists::m2p");
  }
  else
  {
    lists.m2l = detail::groupByRow(space, far_pairs, num_cells, "kfmm::lists::m2l");
    lists.m2p = detail::emptyList<ExecutionSpace, MemorySpace>(space, num_leaves, "kfmm::lists::m2p");
  }
  far_pairs = Chunk{};
  lists.p2p = detail::groupByRow(space, near_pairs, num_leaves, "kfmm::lists::p2p");
  Kokkos::Profiling::popRegion();
  return lists;
}

} // namespace kfmm::tree

#endif
