// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_M2L_GROUPS_HPP
#define KFMM_TREE_M2L_GROUPS_HPP

// The M2L list regrouped for matrix products, after the matrix formulation of Fortin &
// Lamotte 2013: the M2L operators of all pairs that share a relative position are one matrix,
// applied to all their multipoles at once as a BLAS-like product, in single and double
// precision.
//
// Expansion centres are geometric cell centres and a cell's expansions are stored in units of
// its level's length scale s_l = side / 2^(l + 1) (kernels/detail/ExpansionArrays.hpp). A
// centre at level l is (2i + 1) s_l, so for a pair (target t at level l_t, source at level
// l_s) the offset c_t - c_s is an integer vector o in units of the finer of the two scales.
// The M2L operator of the pair depends only on its translation class
//   (delta = l_t - l_s, o),
// not on the level itself (the operator is invariant under a common scaling of the offset
// and both expansion scales), so one matrix per class serves the whole tree. Mirror images
// share a class too: (delta, o) and (delta, |o|) differ by sign changes of the coefficients
// (mirrorSign), which cuts the classes, and their matrices, about eightfold.
//
// Classes with |delta| <= max_level_delta, every |o_i| <= max_offset and at least
// `min_class_entries` pairs are numbered densely; the entries of other pairs stay per-pair
// (class -1, the fallback path of kernels/GroupedM2L.hpp). The last bound keeps the rare
// classes of adaptive trees (cross-level pairs, far outliers) from costing a matrix each:
// it bounds the classes by entries / min_class_entries. The list's rows are cut into
// blocks of `block_rows` consecutive target cells; inside a block the entries are sorted by
// class with the stable radix sort, so each run of one class keeps the list's target order
// (a target has at most one entry per mirror image of the class, and they are adjacent) and
// becomes one matrix product. Runs are "chunks"; each block owns a contiguous range of
// chunks. An entry keeps only what varies inside a chunk, in six bytes: its source cell and
// its target's row in the block with the mirror bits of its offset (a chunk's class is
// stored once per chunk), so the groups cost less than the list they replace.

#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/LatticeOffset.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace kfmm::tree
{

/// Bounds of the dense numbering of translation classes. A class is (delta, |o|): an
/// offset with negative components is the mirror image of its class's offset, see
/// mirrorSign.
struct TranslationClassBounds
{
  /// Largest |l_t - l_s| grouped.
  static constexpr int max_level_delta = 2;
  /// Largest |o_i| grouped, in units of the finer scale.
  static constexpr int max_offset = 31;
  static constexpr int width = max_offset + 1;
  static constexpr int count = (2 * max_level_delta + 1) * width * width * width;

  /// Dense key of (delta, (ox, oy, oz)), all o_i >= 0, or -1 when out of bounds.
  KOKKOS_INLINE_FUNCTION static int key(int delta, int ox, int oy, int oz)
  {
    if (delta < -max_level_delta || delta > max_level_delta || ox > max_offset ||
        oy > max_offset || oz > max_offset)
      return -1;
    return (((delta + max_level_delta) * width + ox) * width + oy) * width + oz;
  }

  /// The inverse of key: delta and o.
  KOKKOS_INLINE_FUNCTION static void decode(int key, int &delta, int &ox, int &oy, int &oz)
  {
    oz = key % width;
    key /= width;
    oy = key % width;
    key /= width;
    ox = key % width;
    delta = key / width - max_level_delta;
  }
};

/// Mirror symmetry of the translations. Reflecting the plane x = 0 maps the coefficients
/// of degree n and order m (multipole or local alike, Operators.hpp) to (-1)^m conj(.),
/// reflecting y = 0 to conj(.), and z = 0 to (-1)^(n+m) (.), since e^{i m phi} and
/// P_n^m(cos theta) change so under x -> -x, y -> -y, z -> -z. In the real representation
/// (real and imaginary parts interleaved) each reflection F is a diagonal of signs D_F, and
/// the M2L operator of the mirrored offset is T(F o) = D_F T(o) D_F.
///
/// mirrorParities gives, for real component `real` (coefficient real / 2, of degree n and
/// order m; its imaginary part when real is odd), bit d set when reflection d (0: x, 1: y,
/// 2: z) flips its sign.
KOKKOS_INLINE_FUNCTION int mirrorParities(int n, int m, int real)
{
  int const imaginary = real & 1;
  return ((m + imaginary) & 1) | (imaginary << 1) | (((n + m) & 1) << 2);
}

/// The sign of a component with `parities` under the reflections of `mirror` (bit d set for
/// a negative offset component d).
KOKKOS_INLINE_FUNCTION int mirrorSign(int mirror, int parities)
{
  int const flips = mirror & parities;
  return 1 - 2 * ((flips ^ (flips >> 1) ^ (flips >> 2)) & 1);
}

/// The M2L list of InteractionLists regrouped by (block of targets, translation class).
template <class MemorySpace>
struct M2LGroups
{
  int block_rows = 0;
  int num_blocks = 0;
  int num_classes = 0;
  /// Dense key (TranslationClassBounds::key) of each class.
  Kokkos::View<int *, MemorySpace> class_keys;
  /// Entries, sorted by (block, class), six bytes each: the source cell, and the target as
  /// its row in the block (target - block * block_rows) times 8 plus the mirror bits of the
  /// pair's offset (mirrorSign; 0 for a pair translated on its own): targetRow, mirrorBits.
  Kokkos::View<int *, MemorySpace> sources;
  Kokkos::View<std::uint16_t *, MemorySpace> rows;
  /// Chunk c is the entries chunk_begin(c) .. chunk_begin(c + 1) - 1, all of the class
  /// chunk_classes(c), or -1 for pairs translated on their own; block b owns chunks
  /// block_chunks(b) .. block_chunks(b + 1) - 1.
  Kokkos::View<std::int64_t *, MemorySpace> chunk_begin;
  Kokkos::View<int *, MemorySpace> chunk_classes;
  Kokkos::View<std::int64_t *, MemorySpace> block_chunks;
  std::int64_t num_chunks = 0;
  std::int64_t per_pair_entries = 0; ///< entries of class -1

  /// The most rows a block can have: a row times 8 plus the mirror bits fits 16 bits.
  static constexpr int max_block_rows = 1 << 13;

  /// An entry's target row in its block, and the mirror bits of its offset.
  KOKKOS_INLINE_FUNCTION static int targetRow(std::uint16_t row) { return row >> 3; }
  KOKKOS_INLINE_FUNCTION static int mirrorBits(std::uint16_t row) { return row & 7; }

  std::size_t bytes() const
  {
    return (class_keys.span() + sources.span() + chunk_classes.span()) * sizeof(int) +
           rows.span() * sizeof(std::uint16_t) +
           (chunk_begin.span() + block_chunks.span()) * sizeof(std::int64_t);
  }

  /// Ends the use of the arrays taken from `memory` (detail/Workspace.hpp).
  void giveTo(kfmm::detail::Workspace<MemorySpace> &memory)
  {
    memory.give(class_keys);
    memory.give(sources);
    memory.give(rows);
    memory.give(chunk_begin);
    memory.give(chunk_classes);
    memory.give(block_chunks);
  }
};

namespace detail
{

/// Translation class key of the pair (target t, source s) times 8, plus its mirror bits;
/// -1 outside the dense classes. See the file comment.
template <class MemorySpace>
struct ClassOfPair
{
  LatticeOffset<MemorySpace> offset_of;

  KOKKOS_INLINE_FUNCTION int operator()(int t, int s) const
  {
    int delta, o[3];
    if (!offset_of(t, s, TranslationClassBounds::max_offset, delta, o))
      return -1;
    int mirror = 0;
    for (int d = 0; d < 3; ++d)
    {
      mirror |= o[d] < 0 ? 1 << d : 0;
      o[d] = o[d] < 0 ? -o[d] : o[d];
    }
    int const key = TranslationClassBounds::key(delta, o[0], o[1], o[2]);
    return key < 0 ? -1 : key * 8 + mirror;
  }
};

/// Row league rank of the M2L list: each entry's target and class key, counted per class.
template <class ExecutionSpace, class MemorySpace>
struct ClassifyEntries
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  ClassOfPair<MemorySpace> class_of;
  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<int *, MemorySpace> list_sources;
  Kokkos::View<int *, MemorySpace> entry_targets;
  Kokkos::View<int *, MemorySpace> entry_keys;
  Kokkos::View<int *, MemorySpace> key_index;

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team) const
  {
    int const row = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, offsets(row), offsets(row + 1)),
                         [&](std::int64_t e) {
                           int const key = class_of(row, list_sources(e));
                           entry_targets(e) = row;
                           entry_keys(e) = key;
                           if (key >= 0)
                             Kokkos::atomic_increment(&key_index(key / 8));
                         });
  }
};

/// key_index(k) = the number of keys below k (of `count` dense keys) that have at least
/// `min_entries` entries: the dense numbering of the keys used (a scan over count + 1).
template <class MemorySpace>
struct NumberUsedKeys
{
  Kokkos::View<int *, MemorySpace> key_index;
  int count;
  int min_entries;

  KOKKOS_INLINE_FUNCTION void operator()(int k, int &running, bool final) const
  {
    int const used = k < count && key_index(k) >= min_entries ? 1 : 0;
    if (final)
      key_index(k) = running;
    running += used;
  }
};

/// class_keys(class of k) = k for a dense key k that is used (NumberUsedKeys).
template <class MemorySpace>
struct ClassKeys
{
  Kokkos::View<int *, MemorySpace> key_index;
  Kokkos::View<int *, MemorySpace> class_keys;

  KOKKOS_INLINE_FUNCTION void operator()(int k) const
  {
    if (key_index(k + 1) != key_index(k))
      class_keys(key_index(k)) = k;
  }
};

/// Entry e's sort key (block, class + 1), 0 for no class, and order(e) = e.
template <class MemorySpace>
struct EntrySortKeys
{
  Kokkos::View<int *, MemorySpace> entry_keys;
  Kokkos::View<int *, MemorySpace> key_index;
  Kokkos::View<int *, MemorySpace> entry_targets;
  Kokkos::View<std::uint64_t *, MemorySpace> sort_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> order;
  int block_rows;
  int class_bits;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const
  {
    int const key = entry_keys(e);
    bool const grouped = key >= 0 && key_index(key / 8 + 1) != key_index(key / 8);
    std::uint64_t const slot = grouped ? std::uint64_t(key_index(key / 8)) + 1 : 0;
    sort_keys(e) = (std::uint64_t(entry_targets(e) / block_rows) << class_bits) | slot;
    order(e) = static_cast<std::uint32_t>(e);
  }
};

/// Sorted entry e: its source, its target's row in the block with the mirror bits, whether
/// it starts a chunk, and into `fallback` whether it is translated on its own.
template <class MemorySpace>
struct GatherEntries
{
  Kokkos::View<std::uint32_t *, MemorySpace> order;
  Kokkos::View<int *, MemorySpace> entry_targets;
  Kokkos::View<int *, MemorySpace> entry_keys;
  Kokkos::View<int *, MemorySpace> list_sources;
  Kokkos::View<std::uint64_t *, MemorySpace> sort_keys;
  std::uint64_t slot_mask;
  int block_rows;
  Kokkos::View<int *, MemorySpace> sources;
  Kokkos::View<std::uint16_t *, MemorySpace> rows;
  Kokkos::View<std::int64_t *, MemorySpace> chunk_of;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e, std::int64_t &fallback) const
  {
    std::uint32_t const from = order(e);
    sources(e) = list_sources(from);
    bool const per_pair = (sort_keys(e) & slot_mask) == 0;
    int const mirror = per_pair ? 0 : entry_keys(from) % 8;
    rows(e) = static_cast<std::uint16_t>((entry_targets(from) % block_rows) * 8 + mirror);
    chunk_of(e) = (e == 0 || sort_keys(e) != sort_keys(e - 1)) ? 1 : 0;
    fallback += per_pair ? 1 : 0;
  }
};

/// chunk_of(e) = the number of chunks that start before entry e (chunk_of(size): all).
template <class MemorySpace>
struct NumberChunks
{
  Kokkos::View<std::int64_t *, MemorySpace> chunk_of;
  std::int64_t size;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e, std::int64_t &running, bool final) const
  {
    std::int64_t const starts = e < size ? chunk_of(e) : 0;
    if (final)
      chunk_of(e) = running;
    running += starts;
  }
};

/// chunk_begin(chunk_of(e)) = e where a chunk starts at entry e, and that chunk's class
/// (its sort keys' class slot - 1); chunk_begin(num_chunks) = size.
template <class MemorySpace>
struct ChunkBegin
{
  Kokkos::View<std::int64_t *, MemorySpace> chunk_of;
  Kokkos::View<std::uint64_t *, MemorySpace> sort_keys;
  std::uint64_t slot_mask;
  Kokkos::View<std::int64_t *, MemorySpace> chunk_begin;
  Kokkos::View<int *, MemorySpace> chunk_classes;
  std::int64_t num_chunks;
  std::int64_t size;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const
  {
    if (e == size)
      chunk_begin(num_chunks) = size;
    else if (chunk_of(e + 1) != chunk_of(e))
    {
      chunk_begin(chunk_of(e)) = e;
      chunk_classes(chunk_of(e)) = static_cast<int>(sort_keys(e) & slot_mask) - 1;
    }
  }
};

/// block_chunks(b) = the first chunk of block b (the chunk of its first row's first entry).
template <class MemorySpace>
struct BlockChunks
{
  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<std::int64_t *, MemorySpace> chunk_of;
  Kokkos::View<std::int64_t *, MemorySpace> block_chunks;
  int block_rows;
  int num_rows;

  KOKKOS_INLINE_FUNCTION void operator()(int b) const
  {
    int const row = b * block_rows < num_rows ? b * block_rows : num_rows;
    block_chunks(b) = chunk_of(offsets(row));
  }
};

/// groupM2L (below) with the groups' arrays and the work arrays taken from `memory`, for an
/// entry point with a workspace of its own (kfmm::Fmm).
template <class ExecutionSpace, class MemorySpace>
M2LGroups<MemorySpace> groupM2LIn(ExecutionSpace const &space,
                                  kfmm::detail::Workspace<MemorySpace> &memory,
                                  Octree<MemorySpace> const &target_tree,
                                  Octree<MemorySpace> const &source_tree,
                                  CsrList<MemorySpace> const &m2l, int block_rows,
                                  int min_class_entries)
{
  kfmm::detail::ScopedRegion region("kfmm::tree::groupM2L");
  using Bounds = TranslationClassBounds;
  std::string const prefix = "kfmm::m2l_groups::";
  M2LGroups<MemorySpace> groups;
  int const num_rows = m2l.numRows();
  std::int64_t const size = m2l.size;
  kfmm::detail::require(block_rows > 0 && block_rows <= M2LGroups<MemorySpace>::max_block_rows,
                        "kfmm::tree::groupM2L",
                        "block_rows must be in [1, 8192], got " + std::to_string(block_rows));
  groups.block_rows = block_rows;
  groups.num_blocks = (num_rows + block_rows - 1) / block_rows;

  // The work arrays of the grouping, all in one array (with a direct workspace each is an
  // allocation, which costs tens of microseconds and whose release synchronises): per entry
  // its sort key, chunk number (one more), target, class key and place in the sorted order.
  std::size_t const n = static_cast<std::size_t>(size);
  Kokkos::View<std::uint64_t *, MemorySpace> work;
  memory.take(space, work, prefix + "work", 2 * n + 1 + (3 * n + 1) / 2);
  Kokkos::View<std::uint64_t *, MemorySpace> sort_keys(work.data(), n);
  Kokkos::View<std::int64_t *, MemorySpace> chunk_of(
      reinterpret_cast<std::int64_t *>(work.data() + n), n + 1);
  auto *const ints = reinterpret_cast<int *>(work.data() + 2 * n + 1);
  Kokkos::View<int *, MemorySpace> entry_targets(ints, n);
  Kokkos::View<int *, MemorySpace> entry_keys(ints + n, n);
  Kokkos::View<std::uint32_t *, MemorySpace> order(reinterpret_cast<std::uint32_t *>(ints + 2 * n),
                                                   n);

  // The class key of every entry, and how many entries each dense key has.
  Kokkos::View<int *, MemorySpace> key_index;
  memory.take(space, key_index, prefix + "key_index", Bounds::count + 1);
  Kokkos::deep_copy(space, key_index, 0);
  detail::ClassOfPair<MemorySpace> const class_of{{target_tree.centre, target_tree.level,
                                                   source_tree.centre, source_tree.level,
                                                   target_tree.cube.side}};
  auto const offsets = m2l.offsets;
  auto const list_sources = m2l.sources;
  Kokkos::parallel_for(
      "kfmm::m2l_groups::classify",
      Kokkos::TeamPolicy<ExecutionSpace>(space, num_rows, Kokkos::AUTO),
      detail::ClassifyEntries<ExecutionSpace, MemorySpace>{class_of, offsets, list_sources,
                                                           entry_targets, entry_keys, key_index});
  Kokkos::parallel_scan(
      "kfmm::m2l_groups::number_classes",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, Bounds::count + 1),
      detail::NumberUsedKeys<MemorySpace>{key_index, Bounds::count, min_class_entries});
  Kokkos::deep_copy(groups.num_classes, Kokkos::subview(key_index, Bounds::count));
  int const num_classes = groups.num_classes;
  memory.take(space, groups.class_keys, prefix + "class_keys", num_classes);
  Kokkos::parallel_for(
      "kfmm::m2l_groups::class_keys", Kokkos::RangePolicy<ExecutionSpace>(space, 0, Bounds::count),
      detail::ClassKeys<MemorySpace>{key_index, groups.class_keys});

  // Sort keys (block, class + 1): the per-pair entries (class -1) come first in a block.
  int const class_bits = detail::bitsFor(std::int64_t(num_classes) + 1);
  int const key_bits = class_bits + detail::bitsFor(groups.num_blocks);
  kfmm::detail::require(key_bits <= 64 && size <= std::int64_t(0xffffffffLL),
                        "kfmm::tree::groupM2L", "the M2L list is too large to group");
  Kokkos::parallel_for(
      "kfmm::m2l_groups::sort_keys", Kokkos::RangePolicy<ExecutionSpace>(space, 0, size),
      detail::EntrySortKeys<MemorySpace>{entry_keys, key_index, entry_targets, sort_keys, order,
                                         block_rows, class_bits});
  if (size > 0)
    sortPairs(space, sort_keys, order, key_bits, memory);

  memory.take(space, groups.sources, prefix + "sources", n);
  memory.take(space, groups.rows, prefix + "rows", n);
  std::uint64_t const slot_mask = (std::uint64_t(1) << class_bits) - 1;
  // A chunk starts where the (block, class) key changes.
  std::int64_t per_pair = 0;
  Kokkos::parallel_reduce(
      "kfmm::m2l_groups::gather", Kokkos::RangePolicy<ExecutionSpace>(space, 0, size),
      detail::GatherEntries<MemorySpace>{order,     entry_targets, entry_keys,
                                         list_sources, sort_keys, slot_mask,
                                         block_rows, groups.sources, groups.rows,
                                         chunk_of},
      per_pair);
  groups.per_pair_entries = per_pair;
  Kokkos::parallel_scan(
      "kfmm::m2l_groups::number_chunks", Kokkos::RangePolicy<ExecutionSpace>(space, 0, size + 1),
      detail::NumberChunks<MemorySpace>{chunk_of, size});
  Kokkos::deep_copy(groups.num_chunks, Kokkos::subview(chunk_of, size));
  std::int64_t const num_chunks = groups.num_chunks;
  memory.take(space, groups.chunk_begin, prefix + "chunk_begin", num_chunks + 1);
  memory.take(space, groups.chunk_classes, prefix + "chunk_classes", num_chunks);
  memory.take(space, groups.block_chunks, prefix + "block_chunks", groups.num_blocks + 1);
  Kokkos::parallel_for(
      "kfmm::m2l_groups::chunk_begin", Kokkos::RangePolicy<ExecutionSpace>(space, 0, size + 1),
      detail::ChunkBegin<MemorySpace>{chunk_of, sort_keys, slot_mask, groups.chunk_begin,
                                      groups.chunk_classes, num_chunks, size});
  // A block's entries start at the list offset of its first row, which is a chunk start
  // when the block has entries (and the next block's first chunk when it has none).
  int const num_blocks = groups.num_blocks;
  Kokkos::parallel_for(
      "kfmm::m2l_groups::block_chunks",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, num_blocks + 1),
      detail::BlockChunks<MemorySpace>{offsets, chunk_of, groups.block_chunks, block_rows,
                                       num_rows});
  memory.give(work);
  memory.give(key_index);
  return groups;
}

} // namespace detail

/// Regroups the M2L list `m2l` of the cells of `target_tree` against those of `source_tree` (one
/// tree or two on one cube; see the file comment): blocks of `block_rows` target rows,
/// entries sorted by class inside each block, classes of at least `min_class_entries`
/// pairs. Two host synchronisations (the number of classes and of chunks).
template <class ExecutionSpace, class MemorySpace>
M2LGroups<MemorySpace> groupM2L(ExecutionSpace const &space,
                                Octree<MemorySpace> const &target_tree,
                                Octree<MemorySpace> const &source_tree,
                                CsrList<MemorySpace> const &m2l, int block_rows,
                                int min_class_entries = 1)
{
  return detail::groupM2LIn(space, kfmm::detail::Workspace<MemorySpace>::direct(), target_tree,
                            source_tree, m2l, block_rows, min_class_entries);
}

/// groupM2L of the M2L list of the particles of `tree` on each other.
template <class ExecutionSpace, class MemorySpace>
M2LGroups<MemorySpace> groupM2L(ExecutionSpace const &space, Octree<MemorySpace> const &tree,
                                CsrList<MemorySpace> const &m2l, int block_rows,
                                int min_class_entries = 1)
{
  return groupM2L(space, tree, tree, m2l, block_rows, min_class_entries);
}

} // namespace kfmm::tree

#endif
