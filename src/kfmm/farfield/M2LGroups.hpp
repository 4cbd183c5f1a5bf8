// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_M2L_GROUPS_HPP
#define KFMM_FARFIELD_M2L_GROUPS_HPP

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
// (mirrorSign), and |o| and |o| with x and y exchanged by a signed exchange of each
// coefficient's real and imaginary parts (exchangeCode), which cuts the classes, and their
// matrices, about sixteenfold: a class's offset has 0 <= o_y <= o_x and 0 <= o_z.
//
// Classes with |delta| <= max_level_delta, every |o_i| <= max_offset and at least
// `min_class_entries` pairs are numbered densely; the entries of other pairs stay per-pair
// (class -1, the fallback path of farfield/GroupedM2L.hpp). The last bound keeps the rare
// classes of adaptive trees (cross-level pairs, far outliers) from costing a matrix each:
// it bounds the classes by entries / min_class_entries. The list's rows are cut into
// blocks of `block_rows` consecutive target cells; inside a block the entries are sorted by
// class, then target row and image bits, with the stable radix sort, so each run of one
// class lists its targets in order (a target has at most one entry per image of the
// class, and they are adjacent) and becomes one matrix product. Runs are "chunks"; each
// block owns a contiguous range of chunks. An entry keeps only what varies inside a chunk,
// in six bytes: its source cell and its target's row in the block with the image bits of
// its offset (a chunk's class is stored once per chunk), so the groups cost less than the
// list they replace. Both travel through the sort, as its value and in its key's low bits,
// and a block's sorted entries are the list's entries of its rows, so the chunks are found
// block by block (EntryKeyLayout, CountChunks, EmitChunks).

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ReadOnHost.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/expansions/Symmetries.hpp>
#include <kfmm/farfield/LatticeOffset.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace kfmm::farfield
{

/// Bounds of the dense numbering of translation classes. A class is (delta, o_c) with
/// 0 <= o_y <= o_x and 0 <= o_z: any other offset is an image of its class's offset, see
/// image_bits.
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
    if (delta < -max_level_delta || delta > max_level_delta || ox > max_offset || oy > max_offset ||
        oz > max_offset)
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

/// An offset's image bits: the reflections F of the planes x = 0, y = 0, z = 0 (bits 0-2,
/// mirrorSign) and the exchange S of x and y (bit image_exchange_bit) that take its class's
/// offset o_c to it, o = F(S(o_c)).
constexpr int image_bits = 4;
constexpr int image_exchange_bit = 8;

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
  /// its row in the block (target - block * block_rows) times 2^image_bits plus the image
  /// bits of the pair's offset (0 for a pair translated on its own): targetRow, imageBits.
  Kokkos::View<int *, MemorySpace> sources;
  Kokkos::View<std::uint16_t *, MemorySpace> rows;
  /// Chunk c is the entries chunk_begin(c) .. chunk_begin(c + 1) - 1, all of the class
  /// chunk_classes(c), or -1 for pairs translated on their own; block b owns chunks
  /// block_chunks(b) .. block_chunks(b + 1) - 1, and block_chunks(num_blocks) is the number
  /// of chunks. The chunks' arrays are sized by a bound on that number (a block has at most
  /// one chunk per class and one of pairs on their own, and at most one per entry), so that
  /// the build need not wait for the count: entries past it are unused.
  Kokkos::View<std::int64_t *, MemorySpace> chunk_begin;
  Kokkos::View<int *, MemorySpace> chunk_classes;
  Kokkos::View<std::int64_t *, MemorySpace> block_chunks;
  /// One entry: the number of entries of class -1 (pairs translated on their own).
  Kokkos::View<std::int64_t *, MemorySpace> per_pair_count;

  /// The number of chunks, once the grouping queued on `space` is done.
  template <class ExecutionSpace>
  std::int64_t numChunks(ExecutionSpace const &space) const
  {
    return kfmm::detail::readOnHost(space, Kokkos::subview(block_chunks, num_blocks));
  }
  /// The number of entries of class -1, once the grouping queued on `space` is done.
  template <class ExecutionSpace>
  std::int64_t perPairEntries(ExecutionSpace const &space) const
  {
    return kfmm::detail::readOnHost(space, Kokkos::subview(per_pair_count, 0));
  }

  /// The most rows a block can have: a row and the image bits fit 16 bits.
  static constexpr int max_block_rows = 1 << (16 - image_bits);

  /// An entry's target row in its block, and the image bits of its offset.
  KOKKOS_INLINE_FUNCTION static int targetRow(std::uint16_t row) { return row >> image_bits; }
  KOKKOS_INLINE_FUNCTION static int imageBits(std::uint16_t row)
  {
    return row & ((1 << image_bits) - 1);
  }

  std::size_t bytes() const
  {
    return (class_keys.span() + sources.span() + chunk_classes.span()) * sizeof(int) +
           rows.span() * sizeof(std::uint16_t) +
           (chunk_begin.span() + block_chunks.span()) * sizeof(std::int64_t);
  }

  /// Ends the use of the arrays taken from `memory` (detail/Workspace.hpp); per_pair_count
  /// lies in block_chunks' allocation.
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

/// Translation class key of the pair (target t, source s) times 2^image_bits, plus its image
/// bits; -1 outside the dense classes. See the file comment.
template <class MemorySpace>
struct ClassOfPair
{
  LatticeOffset<MemorySpace> offset_of;

  KOKKOS_INLINE_FUNCTION int operator()(int t, int s) const
  {
    int delta, o[3];
    if (!offset_of(t, s, TranslationClassBounds::max_offset, delta, o))
      return -1;
    int image = 0;
    for (int d = 0; d < 3; ++d)
    {
      image |= o[d] < 0 ? 1 << d : 0;
      o[d] = o[d] < 0 ? -o[d] : o[d];
    }
    if (o[0] < o[1])
      image |= image_exchange_bit;
    bool const exchanged = image & image_exchange_bit;
    int const key =
        TranslationClassBounds::key(delta, exchanged ? o[1] : o[0], exchanged ? o[0] : o[1], o[2]);
    return key < 0 ? -1 : (key << image_bits) + image;
  }
};

/// Counts an entry of dense class key `key` (ClassOfPair's key >> image_bits) into
/// key_counts, up to `min_entries` only: the numbering asks no more than whether a key
/// reaches it. Counting every entry queued all of them on the atomics of the few hundred
/// keys of a uniform tree, a visible part of the build (docs/TUNING.md, "The M2L's
/// grouping"); once a key is seen at the threshold (a volatile read, which
/// may be late but never early) its entries skip the atomic. A count may pass `min_entries`
/// by the entries in flight.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void countClassEntry(Kokkos::View<int *, MemorySpace> const &key_counts,
                                            int key, int min_entries)
{
  int *const count = &key_counts(key);
  if (*static_cast<int volatile *>(count) < min_entries)
    Kokkos::atomic_add(count, 1);
}

/// Row league rank of the M2L list: each entry's class key times 2^image_bits plus its image
/// bits (ClassOfPair), and, where `count_keys`, each dense key's entries into key_counts
/// (countClassEntry).
template <class ExecutionSpace, class MemorySpace>
struct ClassifyEntries
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  ClassOfPair<MemorySpace> class_of;
  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<int *, MemorySpace> list_sources;
  Kokkos::View<int *, MemorySpace> entry_keys;
  Kokkos::View<int *, MemorySpace> key_counts;
  int min_entries;
  bool count_keys;

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team) const
  {
    int const row = team.league_rank();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, offsets(row), offsets(row + 1)),
                         [&](std::int64_t e) {
                           int const key = class_of(row, list_sources(e));
                           entry_keys(e) = key;
                           if (count_keys && key >= 0)
                             countClassEntry(key_counts, key >> image_bits, min_entries);
                         });
  }
};

/// Entry i of the traversal's far entries (tree/InteractionLists.hpp), of counters(far_count)
/// (at most the entries' extent written): its dense class key into key_counts
/// (countClassEntry), before the entries are sorted into the M2L list.
template <class MemorySpace>
struct CountFarEntryClasses
{
  ClassOfPair<MemorySpace> class_of;
  tree::detail::PairEntries<MemorySpace> far;
  Kokkos::View<tree::detail::TraversalCounters::Count *, MemorySpace> counters;
  int far_count;
  Kokkos::View<int *, MemorySpace> key_counts;
  int min_entries;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    if (i >= counters(far_count))
      return;
    int const key = class_of(static_cast<int>(far.rows(i)), static_cast<int>(far.sources(i)));
    if (key >= 0)
      countClassEntry(key_counts, key >> image_bits, min_entries);
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

/// key_index's numbering of the dense keys whose counts reach `min_entries` (NumberUsedKeys);
/// the number of classes is then key_index(TranslationClassBounds::count).
template <class ExecutionSpace, class MemorySpace>
void numberUsedKeys(ExecutionSpace const &space, Kokkos::View<int *, MemorySpace> const &key_index,
                    int min_entries)
{
  using Bounds = TranslationClassBounds;
  Kokkos::parallel_scan("kfmm::m2l_groups::number_classes",
                        Kokkos::RangePolicy<ExecutionSpace>(space, 0, Bounds::count + 1),
                        NumberUsedKeys<MemorySpace>{key_index, Bounds::count, min_entries});
}

/// counters(slot) = the number of classes that numberUsedKeys found, key_index(count).
template <class MemorySpace>
struct RecordClassCount
{
  Kokkos::View<int *, MemorySpace> key_index;
  int count; ///< TranslationClassBounds::count
  Kokkos::View<tree::detail::TraversalCounters::Count *, MemorySpace> counters;
  int slot;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    counters(slot) = static_cast<tree::detail::TraversalCounters::Count>(key_index(count));
  }
};

/// The M2L list's classes found on the traversal's far entries, as buildInteractionListsIn's
/// hook (NoFarEntriesHook): their number comes back in the lists' read, where the grouping
/// read it on its own, one host synchronisation more per build. groupM2LIn then takes the
/// numbering (`key_index`) and the number; the caller gives key_index back to `memory`.
template <class MemorySpace>
struct M2LClassCount
{
  ClassOfPair<MemorySpace> class_of;
  Kokkos::View<int *, MemorySpace> key_index; ///< NumberUsedKeys' numbering
  int min_entries = 1;
  int num_classes = 0;

  /// Classes of the pairs of `target_tree`'s cells with `source_tree`'s (one tree or two on
  /// one cube) of at least `min_entries` entries.
  template <class ExecutionSpace>
  M2LClassCount(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                tree::Octree<MemorySpace> const &target_tree,
                tree::Octree<MemorySpace> const &source_tree, int min_class_entries)
      : class_of{{target_tree.centre, target_tree.level, source_tree.centre, source_tree.level,
                  target_tree.cube.side}},
        min_entries(min_class_entries)
  {
    memory.take(space, key_index, "kfmm::m2l_groups::key_index", TranslationClassBounds::count + 1);
    // No keys used, should the traversal have no pairs to queue this for.
    Kokkos::deep_copy(space, key_index, 0);
  }

  template <class ExecutionSpace>
  void queue(ExecutionSpace const &space, tree::detail::PairEntries<MemorySpace> const &far,
             Kokkos::View<tree::detail::TraversalCounters::Count *, MemorySpace> const &counters,
             int far_count, int result) const
  {
    Kokkos::deep_copy(space, key_index, 0);
    Kokkos::parallel_for("kfmm::m2l_groups::count_far_classes",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, far.rows.extent(0)),
                         CountFarEntryClasses<MemorySpace>{class_of, far, counters, far_count,
                                                           key_index, min_entries});
    numberUsedKeys(space, key_index, min_entries);
    Kokkos::parallel_for(
        "kfmm::m2l_groups::record_class_count", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
        RecordClassCount<MemorySpace>{key_index, TranslationClassBounds::count, counters, result});
  }

  void read(tree::detail::TraversalCounters::Count value) { num_classes = static_cast<int>(value); }
};

/// The bit fields of an entry's sort key, from the highest: its block, its class slot
/// (class + 1; 0 for a pair translated on its own, which so comes first in its block), its
/// target's row in the block and the image bits of its offset (0 for a pair on its own).
/// The low two fields are exactly the entry's M2LGroups::rows value, which so travels
/// through the sort in the key instead of being gathered after it; ordering by them inside
/// a class keeps each target's entries adjacent, as the product needs.
struct EntryKeyLayout
{
  int row_bits;   ///< bits of the row in the block
  int class_bits; ///< bits of the class slot
  int block_bits; ///< bits of the block

  /// Bits below the class slot: the M2LGroups::rows value.
  KOKKOS_INLINE_FUNCTION int rowShift() const { return row_bits + image_bits; }
  KOKKOS_INLINE_FUNCTION int keyBits() const { return rowShift() + class_bits + block_bits; }
  KOKKOS_INLINE_FUNCTION std::uint64_t slotMask() const
  {
    return (std::uint64_t(1) << class_bits) - 1;
  }

  template <class Key>
  KOKKOS_INLINE_FUNCTION Key key(int block, int slot, int row, int image) const
  {
    return ((((Key(block) << class_bits) | Key(slot)) << row_bits | Key(row)) << image_bits) |
           Key(image);
  }
  /// The (block, class slot) part of a key: equal for the entries of one chunk.
  template <class Key>
  KOKKOS_INLINE_FUNCTION Key chunkOf(Key key) const
  {
    return key >> rowShift();
  }
  /// Whether sorted entry e, of a block whose entries begin at `first`, starts a chunk.
  template <class Keys>
  KOKKOS_INLINE_FUNCTION bool startsChunk(Keys const &keys, std::int64_t e,
                                          std::int64_t first) const
  {
    return e == first || chunkOf(keys(e)) != chunkOf(keys(e - 1));
  }
  /// The class of a key's chunk, -1 for pairs translated on their own.
  template <class Key>
  KOKKOS_INLINE_FUNCTION int classOf(Key key) const
  {
    return static_cast<int>(chunkOf(key) & slotMask()) - 1;
  }
  /// The M2LGroups::rows value of a key: its target's row in the block and the image bits.
  template <class Key>
  KOKKOS_INLINE_FUNCTION std::uint16_t rowOf(Key key) const
  {
    return static_cast<std::uint16_t>(key & ((Key(1) << rowShift()) - 1));
  }
};

/// Row league rank of the M2L list: each entry's sort key (EntryKeyLayout) and, as the
/// sort's value, its source cell.
template <class ExecutionSpace, class MemorySpace, class Key>
struct EntrySortKeys
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<int *, MemorySpace> list_sources;
  Kokkos::View<int *, MemorySpace> entry_keys;
  Kokkos::View<int *, MemorySpace> key_index;
  Kokkos::View<Key *, MemorySpace> sort_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> values;
  EntryKeyLayout layout;
  int block_rows;

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team) const
  {
    int const row = team.league_rank();
    int const block = row / block_rows;
    int const row_in_block = row - block * block_rows;
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, offsets(row), offsets(row + 1)), [&](std::int64_t e) {
          int const key = entry_keys(e);
          int const dense = key >> image_bits;
          bool const grouped = key >= 0 && key_index(dense + 1) != key_index(dense);
          int const slot = grouped ? key_index(dense) + 1 : 0;
          int const image = key & ((1 << image_bits) - 1);
          sort_keys(e) = layout.key<Key>(block, slot, row_in_block, grouped ? image : 0);
          values(e) = static_cast<std::uint32_t>(list_sources(e));
        });
  }
};

/// Where block b's entries are: a block's rows are consecutive, so its sorted entries are
/// the list's entries of those rows, offsets(first row) .. offsets(first row of b + 1).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION Kokkos::pair<std::int64_t, std::int64_t>
blockEntries(Kokkos::View<std::int64_t *, MemorySpace> const &offsets, int block, int block_rows,
             int num_rows)
{
  int const first = block * block_rows;
  int const last = first + block_rows < num_rows ? first + block_rows : num_rows;
  return {offsets(first), offsets(last)};
}

/// Block league rank, for Tuning::m2l_entries_sorted_per_block: its entries' sort keys and
/// sources into sorted_keys and sorted_sources in the order of their class slots, by a stable
/// counting sort (one pass counts, one places; `num_slots` counters in team scratch). A
/// block's entries come in the list's order of rows, which each slot keeps, so the keys
/// (block, slot, row, image) come out sorted but for the image bits of one row's entries of
/// one slot, which keep the list's order: the same chunks and rows as the whole list's radix
/// sort.
template <class ExecutionSpace, class MemorySpace, class Key>
struct SortBlockEntries
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<Key *, MemorySpace> keys;
  Kokkos::View<std::uint32_t *, MemorySpace> sources;
  Kokkos::View<Key *, MemorySpace> sorted_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> sorted_sources;
  EntryKeyLayout layout;
  int block_rows;
  int num_rows;
  int num_slots;

  KOKKOS_INLINE_FUNCTION static std::size_t scratchBytes(int slots)
  {
    return sizeof(std::int64_t) * static_cast<std::size_t>(slots);
  }

  /// Entry e's class slot: its class plus one, 0 for the pairs translated on their own.
  KOKKOS_INLINE_FUNCTION int slotOf(std::int64_t e) const { return layout.classOf(keys(e)) + 1; }

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team) const
  {
    auto *const next =
        static_cast<std::int64_t *>(team.team_scratch(0).get_shmem(scratchBytes(num_slots)));
    auto const range = blockEntries(offsets, team.league_rank(), block_rows, num_rows);
    Kokkos::single(Kokkos::PerTeam(team), [&]() {
      for (int slot = 0; slot < num_slots; ++slot)
        next[slot] = 0;
      for (auto e = range.first; e < range.second; ++e)
        ++next[slotOf(e)];
      std::int64_t place = range.first;
      for (int slot = 0; slot < num_slots; ++slot)
      {
        std::int64_t const count = next[slot];
        next[slot] = place;
        place += count;
      }
      for (auto e = range.first; e < range.second; ++e)
      {
        std::int64_t const to = next[slotOf(e)]++;
        sorted_keys(to) = keys(e);
        sorted_sources(to) = sources(e);
      }
    });
  }
};

/// Block league rank, after the sort: its entries' rows (the low bits of their keys), its
/// number of chunks (runs of one class) into chunk_counts(b), and its entries translated on
/// their own added to chunk_counts(num_blocks + 1).
template <class ExecutionSpace, class MemorySpace, class Key>
struct CountChunks
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<Key *, MemorySpace> sort_keys;
  Kokkos::View<std::uint16_t *, MemorySpace> rows;
  Kokkos::View<std::int64_t *, MemorySpace> chunk_counts;
  EntryKeyLayout layout;
  int block_rows;
  int num_rows;

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team) const
  {
    int const block = team.league_rank();
    auto const range = blockEntries(offsets, block, block_rows, num_rows);
    std::int64_t chunks = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, range.first, range.second),
        [&](std::int64_t e, std::int64_t &starts) {
          rows(e) = layout.rowOf(sort_keys(e));
          starts += layout.startsChunk(sort_keys, e, range.first) ? 1 : 0;
          // The entries translated on their own sort first in the block (class slot 0): the
          // last of them adds their count.
          if (layout.classOf(sort_keys(e)) < 0 &&
              (e + 1 == range.second || layout.classOf(sort_keys(e + 1)) >= 0))
            Kokkos::atomic_add(&chunk_counts(chunk_counts.extent(0) - 1), e + 1 - range.first);
        },
        chunks);
    Kokkos::single(Kokkos::PerTeam(team), [&] { chunk_counts(block) = chunks; });
  }
};

/// The exclusive scan of the blocks' chunk counts, in place over num_blocks + 1 entries:
/// block_chunks(b), and block_chunks(num_blocks) = the number of chunks.
template <class MemorySpace>
struct NumberBlockChunks
{
  Kokkos::View<std::int64_t *, MemorySpace> chunk_counts;
  int num_blocks;

  KOKKOS_INLINE_FUNCTION void operator()(int b, std::int64_t &running, bool final) const
  {
    std::int64_t const chunks = b < num_blocks ? chunk_counts(b) : 0;
    if (final)
      chunk_counts(b) = running;
    running += chunks;
  }
};

/// Block league rank: chunk_begin and chunk_classes of its chunks, numbered from
/// block_chunks(b) by a team scan over its entries; team num_blocks writes
/// chunk_begin(num_chunks) = the number of entries.
template <class ExecutionSpace, class MemorySpace, class Key>
struct EmitChunks
{
  using Team = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Kokkos::View<std::int64_t *, MemorySpace> offsets;
  Kokkos::View<Key *, MemorySpace> sort_keys;
  Kokkos::View<std::int64_t *, MemorySpace> block_chunks;
  Kokkos::View<std::int64_t *, MemorySpace> chunk_begin;
  Kokkos::View<int *, MemorySpace> chunk_classes;
  EntryKeyLayout layout;
  int block_rows;
  int num_rows;
  int num_blocks;

  KOKKOS_INLINE_FUNCTION void operator()(Team const &team) const
  {
    int const block = team.league_rank();
    if (block == num_blocks)
    {
      Kokkos::single(Kokkos::PerTeam(team),
                     [&] { chunk_begin(block_chunks(num_blocks)) = offsets(num_rows); });
      return;
    }
    auto const range = blockEntries(offsets, block, block_rows, num_rows);
    std::int64_t const first_chunk = block_chunks(block);
    // Each thread scans a contiguous segment of the block's entries, so that the team scan
    // runs once over the threads' counts: over the entries it cost two barriers per team
    // size of them (docs/TUNING.md, "The M2L's grouping").
    int const threads = team.team_size();
    std::int64_t const segment = (range.second - range.first + threads - 1) / threads;
    Kokkos::parallel_scan(
        Kokkos::TeamThreadRange(team, threads), [&](int t, std::int64_t &chunk, bool final) {
          std::int64_t const begin = range.first + t * segment;
          std::int64_t const end = begin + segment < range.second ? begin + segment : range.second;
          for (std::int64_t e = begin; e < end; ++e)
          {
            if (!layout.startsChunk(sort_keys, e, range.first))
              continue;
            if (final)
            {
              chunk_begin(first_chunk + chunk) = e;
              chunk_classes(first_chunk + chunk) = layout.classOf(sort_keys(e));
            }
            ++chunk;
          }
        });
  }
};

/// The sort and the chunks of groupM2LIn with sort keys of type Key (32 bits when they fit,
/// which halves the sort's key traffic, else 64).
template <class Key, class ExecutionSpace, class MemorySpace>
void sortIntoChunks(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                    tree::CsrList<MemorySpace> const &m2l,
                    Kokkos::View<int *, MemorySpace> entry_keys,
                    Kokkos::View<int *, MemorySpace> key_index, EntryKeyLayout const &layout,
                    M2LGroups<MemorySpace> &groups)
{
  std::string const prefix = "kfmm::m2l_groups::";
  using TeamPolicy = Kokkos::TeamPolicy<ExecutionSpace>;
  auto const size = static_cast<std::size_t>(m2l.size);
  int const num_rows = m2l.numRows();
  int const num_blocks = groups.num_blocks;
  int const block_rows = groups.block_rows;
  int const block_team_size = kfmm::tuning::Tuning<ExecutionSpace>::m2l_grouping_team_size;

  Kokkos::View<Key *, MemorySpace> sort_keys;
  memory.take(space, sort_keys, prefix + "sort_keys", size);
  // The sources, the sort's values (cell numbers are not negative): sorted in place by the
  // radix sort, into a new array by the blocks' counting sorts.
  memory.take(space, groups.sources, prefix + "sources", size);
  Kokkos::View<std::uint32_t *, MemorySpace> const sources(
      reinterpret_cast<std::uint32_t *>(groups.sources.data()), size);
  Kokkos::parallel_for(
      "kfmm::m2l_groups::sort_keys", TeamPolicy(space, num_rows, Kokkos::AUTO),
      EntrySortKeys<ExecutionSpace, MemorySpace, Key>{
          m2l.offsets, m2l.sources, entry_keys, key_index, sort_keys, sources, layout, block_rows});
  if constexpr (kfmm::tuning::Tuning<ExecutionSpace>::m2l_entries_sorted_per_block)
  {
    Kokkos::View<Key *, MemorySpace> sorted_keys;
    memory.take(space, sorted_keys, prefix + "sorted_keys", size);
    Kokkos::View<int *, MemorySpace> sorted_sources;
    memory.take(space, sorted_sources, prefix + "sorted_sources", size);
    using Sort = SortBlockEntries<ExecutionSpace, MemorySpace, Key>;
    int const num_slots = groups.num_classes + 1;
    Kokkos::parallel_for("kfmm::m2l_groups::sort_per_block",
                         TeamPolicy(space, num_blocks, 1)
                             .set_scratch_size(0, Kokkos::PerTeam(Sort::scratchBytes(num_slots))),
                         Sort{m2l.offsets, sort_keys, sources, sorted_keys,
                              Kokkos::View<std::uint32_t *, MemorySpace>(
                                  reinterpret_cast<std::uint32_t *>(sorted_sources.data()), size),
                              layout, block_rows, num_rows, num_slots});
    memory.give(sort_keys);
    memory.give(groups.sources);
    sort_keys = sorted_keys;
    groups.sources = sorted_sources;
  }
  else if (size > 0)
    tree::detail::sortPairs(space, sort_keys, sources, layout.keyBits(), memory);

  // Chunks per block, scanned into block_chunks, whose last entry is the number of chunks;
  // after it, the count of entries translated on their own. The build reads neither.
  Kokkos::View<std::int64_t *, MemorySpace> chunk_counts;
  memory.take(space, chunk_counts, prefix + "block_chunks", num_blocks + 2);
  Kokkos::deep_copy(space, chunk_counts, 0);
  memory.take(space, groups.rows, prefix + "rows", size);
  Kokkos::parallel_for(
      "kfmm::m2l_groups::count_chunks", TeamPolicy(space, num_blocks, block_team_size),
      CountChunks<ExecutionSpace, MemorySpace, Key>{m2l.offsets, sort_keys, groups.rows,
                                                    chunk_counts, layout, block_rows, num_rows});
  Kokkos::parallel_scan("kfmm::m2l_groups::number_chunks",
                        Kokkos::RangePolicy<ExecutionSpace>(space, 0, num_blocks + 1),
                        NumberBlockChunks<MemorySpace>{chunk_counts, num_blocks});
  groups.block_chunks = Kokkos::subview(chunk_counts, Kokkos::make_pair(0, num_blocks + 1));
  groups.per_pair_count =
      Kokkos::subview(chunk_counts, Kokkos::make_pair(num_blocks + 1, num_blocks + 2));

  std::int64_t const capacity = kfmm::detail::min(
      static_cast<std::int64_t>(size),
      static_cast<std::int64_t>(num_blocks) * (static_cast<std::int64_t>(groups.num_classes) + 1));
  memory.take(space, groups.chunk_begin, prefix + "chunk_begin", capacity + 1);
  memory.take(space, groups.chunk_classes, prefix + "chunk_classes", capacity);
  Kokkos::parallel_for(
      "kfmm::m2l_groups::chunks", TeamPolicy(space, num_blocks + 1, block_team_size),
      EmitChunks<ExecutionSpace, MemorySpace, Key>{m2l.offsets, sort_keys, groups.block_chunks,
                                                   groups.chunk_begin, groups.chunk_classes, layout,
                                                   block_rows, num_rows, num_blocks});
  memory.give(sort_keys);
}

/// The sort keys' width: the narrowest that holds them, or 64 bits (for the tests, which
/// check that both give the same groups).
enum class SortKeyWidth
{
  fitted,
  wide
};

/// groupM2L (below) with the groups' arrays and the work arrays taken from `memory`, for an
/// entry point with a workspace of its own (kfmm::Fmm). `counted`, if given, holds the classes
/// that the lists' traversal found (M2LClassCount, for these trees and min_class_entries): the
/// grouping then does not wait for the device.
template <class ExecutionSpace, class MemorySpace>
M2LGroups<MemorySpace> groupM2LIn(ExecutionSpace const &space,
                                  kfmm::detail::Workspace<MemorySpace> &memory,
                                  tree::Octree<MemorySpace> const &target_tree,
                                  tree::Octree<MemorySpace> const &source_tree,
                                  tree::CsrList<MemorySpace> const &m2l, int block_rows,
                                  int min_class_entries, SortKeyWidth width = SortKeyWidth::fitted,
                                  M2LClassCount<MemorySpace> const *counted = nullptr)
{
  kfmm::detail::ScopedRegion region("groupM2L");
  using Bounds = TranslationClassBounds;
  std::string const prefix = "kfmm::m2l_groups::";
  M2LGroups<MemorySpace> groups;
  int const num_rows = m2l.numRows();
  std::int64_t const size = m2l.size;
  kfmm::detail::require(
      block_rows > 0 && block_rows <= M2LGroups<MemorySpace>::max_block_rows, "groupM2L",
      "block_rows must be in [1, " + std::to_string(M2LGroups<MemorySpace>::max_block_rows) +
          "], got " + std::to_string(block_rows));
  kfmm::detail::require(size <= std::int64_t(0xffffffffLL), "groupM2L",
                        "the M2L list is too large to group");
  groups.block_rows = block_rows;
  groups.num_blocks = (num_rows + block_rows - 1) / block_rows;

  // The class key of every entry, and, unless the lists' traversal counted them (`counted`),
  // whether each dense key has min_class_entries.
  Kokkos::View<int *, MemorySpace> entry_keys;
  memory.take(space, entry_keys, prefix + "entry_keys", size);
  Kokkos::View<int *, MemorySpace> key_index;
  if (counted != nullptr)
    key_index = counted->key_index;
  else
  {
    memory.take(space, key_index, prefix + "key_index", Bounds::count + 1);
    Kokkos::deep_copy(space, key_index, 0);
  }
  ClassOfPair<MemorySpace> const class_of{{target_tree.centre, target_tree.level,
                                           source_tree.centre, source_tree.level,
                                           target_tree.cube.side}};
  Kokkos::parallel_for("kfmm::m2l_groups::classify",
                       Kokkos::TeamPolicy<ExecutionSpace>(space, num_rows, Kokkos::AUTO),
                       ClassifyEntries<ExecutionSpace, MemorySpace>{
                           class_of, m2l.offsets, m2l.sources, entry_keys, key_index,
                           min_class_entries, counted == nullptr});
  if (counted != nullptr)
    groups.num_classes = counted->num_classes;
  else
  {
    numberUsedKeys(space, key_index, min_class_entries);
    groups.num_classes = kfmm::detail::readOnHost(space, Kokkos::subview(key_index, Bounds::count));
  }
  int const num_classes = groups.num_classes;
  memory.take(space, groups.class_keys, prefix + "class_keys", num_classes);
  Kokkos::parallel_for("kfmm::m2l_groups::class_keys",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, Bounds::count),
                       ClassKeys<MemorySpace>{key_index, groups.class_keys});

  EntryKeyLayout const layout{tree::detail::bitsFor(block_rows),
                              tree::detail::bitsFor(std::int64_t(num_classes) + 1),
                              tree::detail::bitsFor(groups.num_blocks)};
  kfmm::detail::require(layout.keyBits() <= 64, "groupM2L", "the M2L list is too large to group");
  if (width == SortKeyWidth::fitted && layout.keyBits() <= 32)
    sortIntoChunks<std::uint32_t>(space, memory, m2l, entry_keys, key_index, layout, groups);
  else
    sortIntoChunks<std::uint64_t>(space, memory, m2l, entry_keys, key_index, layout, groups);
  memory.give(entry_keys);
  if (counted == nullptr)
    memory.give(key_index);
  return groups;
}

/// Regroups the M2L list `m2l` of the cells of `target_tree` against those of `source_tree` (one
/// tree or two on one cube; see the file comment): blocks of `block_rows` target rows,
/// entries sorted by class inside each block, classes of at least `min_class_entries`
/// pairs. One host synchronisation, for the number of classes (the sort's routes and the
/// number of chunks stay on the device).
template <class ExecutionSpace, class MemorySpace>
M2LGroups<MemorySpace> groupM2L(ExecutionSpace const &space,
                                tree::Octree<MemorySpace> const &target_tree,
                                tree::Octree<MemorySpace> const &source_tree,
                                tree::CsrList<MemorySpace> const &m2l, int block_rows,
                                int min_class_entries = 1)
{
  return groupM2LIn(space, kfmm::detail::Workspace<MemorySpace>::direct(), target_tree, source_tree,
                    m2l, block_rows, min_class_entries);
}

/// groupM2L of the M2L list of the particles of `tree` on each other.
template <class ExecutionSpace, class MemorySpace>
M2LGroups<MemorySpace> groupM2L(ExecutionSpace const &space, tree::Octree<MemorySpace> const &tree,
                                tree::CsrList<MemorySpace> const &m2l, int block_rows,
                                int min_class_entries = 1)
{
  return groupM2L(space, tree, tree, m2l, block_rows, min_class_entries);
}

} // namespace kfmm::farfield

#endif
