// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_RADIX_SORT_HPP
#define KFMM_TREE_RADIX_SORT_HPP

// Stable least-significant-digit radix sort of (key, value) pairs as Kokkos team kernels:
// the sort that orders particles by Morton key.
//
// Each pass sorts one digit of `digit_bits` bits, stably, so that after the last pass the
// keys are ordered by all bits (LSD radix sort). A pass is the "reduce, then scan" scheme of
// Satish, Harris & Garland ("Designing efficient sorting algorithms for manycore GPUs",
// IPDPS 2009) and Merrill & Grimshaw ("High performance and scalable radix sorting",
// Parallel Processing Letters 21(2), 2011). The items are cut into tiles of
// team_size * items_per_thread consecutive items, the tiles into groups of consecutive
// tiles:
//
//   1. histogram: one team per group counts the digits of its group in team scratch and
//      writes the totals to a digit-major matrix counts(digit * groups + group). Where the
//      scatter works tile by tile, it also writes, for every tile, the digit counts of the
//      group's earlier tiles (tile_prefix).
//   2. scan: one exclusive scan of that matrix. Digit-major order puts all items of smaller
//      digits, then the same digit's items of earlier groups, before a group's first item
//      of each digit: the scanned entry is where that group writes its first item of the
//      digit, and adding tile_prefix gives the same for a tile.
//   3. scatter: one team per group (host) or per tile (GPU) ranks its items stably by digit
//      and writes them to their place in the other buffer.
//
// On the GPU one tile per scatter team is much faster than one team walking a group of
// tiles: the resident teams then work on adjacent tiles, so that for every digit they write
// one contiguous stretch of the output instead of one short stream per team (DRAM write
// locality); groups keep the count matrix, and so the scan, small.
//
// Keys and values ping-pong between the caller's arrays and one buffer of each.
//
// Only the bits that matter are sorted. A digit that every key shares would give a
// histogram with one bin holding all N items, and its pass would be the identity; such
// digits are found before any pass from the bits in which some key differs from the first
// one (the OR over i of keys(i) XOR keys(0)), which is one read of the keys and one host
// synchronisation for the whole sort instead of one per pass. Passes start at the lowest of
// these bits and stop past the highest, as `begin_bit`/`end_bit` do in CUB's
// DeviceRadixSort.
//
// Team-local ranking, the step that decides the speed:
// - Host spaces (a team is one thread): the thread walks its group in order and places each
//   item at the running offset of its digit; sequential order makes this stable.
// - Other backends with teams of several threads: each thread counts a contiguous slice of
//   the tile into its own column of per-(digit, thread) counters; a scan over threads per
//   digit gives every thread the offsets of its slice (the counter layout of Satish et al.).
// - CUDA: warp-synchronous ranking with per-warp digit counters in shared memory (the
//   warp-level multisplit of Ashkiani et al., "GPU multisplit", PPoPP 2016, and the
//   per-warp histograms of Adinets & Merrill, "Onesweep", 2022): each warp takes its items
//   a round of 32 at a time in index order; lanes with the same digit find each other with
//   one warp vote per digit bit, so the rank of an item among its warp's items of that
//   digit is the warp's counter plus the number of matching lanes below it. One team scan
//   over the (digit, warp) counters turns those ranks into the tile's stable sorted order;
//   the tile is then reordered through shared memory so that consecutive threads write
//   consecutive addresses of each digit's run (coalesced stores).

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Tuning.hpp>
#include <kfmm/detail/Validation.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kfmm::tree
{
namespace detail
{

/// Counts and offsets: one call sorts at most 2^32 - 1 pairs.
using SortOffset = std::uint32_t;

/// Launch parameters of sortPairs. The public entry point takes them from
/// kfmm::detail::Tuning; tests set them to exercise other team shapes.
struct SortOptions
{
  int digit_bits;     ///< bits sorted per pass: 2^digit_bits histogram bins
  int team_size;      ///< threads per team
  int tiles_per_team; ///< tiles (team_size * items per thread items) per group, at most
  bool warp_ranking;  ///< rank with warp-synchronous primitives, one tile per team (CUDA)
};

template <class ExecutionSpace>
SortOptions defaultSortOptions()
{
  using Tune = kfmm::detail::Tuning<ExecutionSpace>;
  return {Tune::sort_digit_bits, Tune::sort_team_size, Tune::sort_tiles_per_team,
          Tune::sort_warp_ranking};
}

/// One pass: the digit of bits [shift, shift + bits).
struct SortPass
{
  int shift;
  int bits;
};

/// How a pass splits the n items: tiles of `tile` consecutive items, and groups of `group`
/// consecutive tiles (the last tile and the last group may be shorter).
struct SortLayout
{
  std::uint64_t n;
  std::uint64_t tile;
  std::uint64_t tiles;
  std::uint64_t group;
  std::uint64_t groups;

  KOKKOS_INLINE_FUNCTION std::uint64_t firstTile(std::uint64_t g) const
  {
    return kfmm::detail::min(g * group, tiles);
  }
  /// Items [begin(g), end(g)) of group g.
  KOKKOS_INLINE_FUNCTION std::uint64_t begin(std::uint64_t g) const
  {
    return firstTile(g) * tile;
  }
  KOKKOS_INLINE_FUNCTION std::uint64_t end(std::uint64_t g) const
  {
    return kfmm::detail::min(firstTile(g + 1) * tile, n);
  }
};

// Warp primitives for the CUDA ranking. Outside CUDA device code they are never called (the
// warp path is compiled in only where Tuning::sort_warp_ranking is true) and only keep
// host compilation passes well-formed.

/// The lanes of the calling warp whose low `bits` bits of `value` equal this lane's, among
/// the lanes where `active` holds. All 32 lanes must call. One vote per bit: cheaper than a
/// match instruction for the 8-bit digits used here.
KOKKOS_INLINE_FUNCTION unsigned warpPeers(unsigned value, int bits, bool active)
{
#if defined(__CUDA_ARCH__)
  unsigned peers = __ballot_sync(0xffffffffu, active);
  for (int b = 0; b < bits; ++b)
  {
    unsigned const ones = __ballot_sync(0xffffffffu, (value >> b) & 1u);
    peers &= ((value >> b) & 1u) ? ones : ~ones;
  }
  return peers;
#else
  (void)value;
  (void)bits;
  return active ? 1u : 0u;
#endif
}

/// Index of the calling thread within its hardware warp, and of that warp within the block.
KOKKOS_INLINE_FUNCTION int warpLane()
{
#if defined(__CUDA_ARCH__)
  return static_cast<int>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) &
                          31u);
#else
  return 0;
#endif
}

KOKKOS_INLINE_FUNCTION int warpIndex()
{
#if defined(__CUDA_ARCH__)
  return static_cast<int>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >>
                          5u);
#else
  return 0;
#endif
}

/// Orders the shared-memory accesses of the warp's lanes before and after this point.
KOKKOS_INLINE_FUNCTION void warpSync()
{
#if defined(__CUDA_ARCH__)
  __syncwarp();
#endif
}

/// `value` of lane `source` of the calling warp (all 32 lanes must call).
KOKKOS_INLINE_FUNCTION SortOffset warpBroadcast(SortOffset value, int source)
{
#if defined(__CUDA_ARCH__)
  return __shfl_sync(0xffffffffu, value, source);
#else
  (void)source;
  return value;
#endif
}

KOKKOS_INLINE_FUNCTION int popCount(unsigned mask)
{
#if defined(__CUDA_ARCH__)
  return __popc(mask);
#else
  int count = 0;
  for (; mask != 0; mask &= mask - 1)
    ++count;
  return count;
#endif
}

/// Index of the lowest set bit of a non-zero mask.
KOKKOS_INLINE_FUNCTION int lowestLane(unsigned mask)
{
#if defined(__CUDA_ARCH__)
  return __ffs(mask) - 1;
#else
  int lane = 0;
  while (((mask >> lane) & 1u) == 0)
    ++lane;
  return lane;
#endif
}

template <class T, class Memory>
using Unmanaged1D = Kokkos::View<T *, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Pass step 1: digit counts of each group, counts(d * groups + g), and with `per_tile` the
/// counts of the group's earlier tiles, tile_prefix(t * radix + d).
template <class ExecutionSpace, class KeyView, int Unroll>
struct RadixHistogramKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Key = typename KeyView::non_const_value_type;
  using ScratchOffsets = Kokkos::View<SortOffset *, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryUnmanaged>;
  using Counts = Kokkos::View<SortOffset *, typename ExecutionSpace::memory_space>;

  KeyView keys;
  Counts counts;
  Counts tile_prefix;
  SortLayout layout;
  int shift;
  int radix;
  bool per_tile;

  /// One histogram per 32 threads, so that a warp's shared-memory atomics mostly hit its
  /// own copy; a single one for a one-thread team.
  KOKKOS_INLINE_FUNCTION static int copies(int team_size) { return (team_size + 31) / 32; }

  static std::size_t scratchBytes(int team_size, int radix)
  {
    return ScratchOffsets::shmem_size(static_cast<std::size_t>(copies(team_size)) * radix) +
           ScratchOffsets::shmem_size(radix);
  }

  /// Adds the digits of items [begin, end) to the team's histograms.
  KOKKOS_INLINE_FUNCTION void count(TeamMember const &team, ScratchOffsets const &hist,
                                    std::uint64_t begin, std::uint64_t end) const
  {
    int const team_size = team.team_size();
    int const rank = team.team_rank();
    Key const mask = static_cast<Key>(radix - 1);
    if (team_size == 1)
    {
      for (std::uint64_t i = begin; i < end; ++i)
        ++hist(static_cast<int>((keys(i) >> shift) & mask));
      return;
    }
    // Unroll keys are loaded before any is counted: more loads in flight per thread.
    SortOffset *const mine = &hist(rank / 32 * radix);
    std::uint64_t const stride = static_cast<std::uint64_t>(team_size);
    for (std::uint64_t first = begin + rank; first < end; first += stride * Unroll)
    {
      Key k[Unroll];
      for (int j = 0; j < Unroll; ++j)
      {
        std::uint64_t const i = first + j * stride;
        k[j] = i < end ? keys(i) : Key(0);
      }
      for (int j = 0; j < Unroll; ++j)
        if (first + j * stride < end)
          Kokkos::atomic_add(&mine[static_cast<int>((k[j] >> shift) & mask)], SortOffset(1));
    }
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const n_copies = copies(team.team_size());
    auto const g = static_cast<std::uint64_t>(team.league_rank());
    ScratchOffsets hist(team.team_scratch(0), n_copies * radix);
    ScratchOffsets running(team.team_scratch(0), radix);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, radix), [&](int d) { running(d) = 0; });

    // With per_tile, tile by tile; otherwise the whole group at once.
    std::uint64_t const first_tile = layout.firstTile(g);
    std::uint64_t const last_tile = per_tile ? layout.firstTile(g + 1) : first_tile + 1;
    for (std::uint64_t t = first_tile; t < last_tile; ++t)
    {
      std::uint64_t const begin = per_tile ? t * layout.tile : layout.begin(g);
      std::uint64_t const end =
          per_tile ? kfmm::detail::min(begin + layout.tile, layout.n) : layout.end(g);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n_copies * radix),
                           [&](int i) { hist(i) = 0; });
      team.team_barrier();
      count(team, hist, begin, end);
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, radix), [&](int d) {
        SortOffset total = 0;
        for (int c = 0; c < n_copies; ++c)
          total += hist(c * radix + d);
        if (per_tile)
          tile_prefix(t * radix + d) = running(d);
        running(d) += total;
      });
      team.team_barrier(); // the histograms are cleared for the next tile
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, radix), [&](int d) {
      counts(static_cast<std::size_t>(d) * layout.groups + g) = running(d);
    });
  }
};

/// Pass step 3: stable ranking and scatter to the sorted places. `offsets` is the scanned
/// count matrix: offsets(d * groups + g) is where group g's first item of digit d goes.
template <class ExecutionSpace, class KeyView, class ValueView, int ItemsPerThread>
struct RadixScatterKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Key = typename KeyView::non_const_value_type;
  using Value = typename ValueView::non_const_value_type;
  using Scratch = typename ExecutionSpace::scratch_memory_space;
  using ScratchOffsets = Kokkos::View<SortOffset *, Scratch, Kokkos::MemoryUnmanaged>;
  using ScratchWords = Kokkos::View<std::uint64_t *, Scratch, Kokkos::MemoryUnmanaged>;
  using Counts = Kokkos::View<SortOffset *, typename ExecutionSpace::memory_space>;

  static constexpr bool warp_capable = kfmm::detail::Tuning<ExecutionSpace>::sort_warp_ranking;
  static_assert(alignof(Value) <= alignof(std::uint64_t) && alignof(Key) <= alignof(std::uint64_t),
                "kfmm::tree::sortPairs: keys and values must be at most 8-byte aligned");

  KeyView keys_in;
  ValueView values_in;
  KeyView keys_out;
  ValueView values_out;
  Counts offsets;
  Counts tile_prefix;
  SortLayout layout;
  int shift;
  int bits;
  bool warp_ranking;

  /// Words of team scratch that hold `count` items of type T.
  template <class T>
  KOKKOS_INLINE_FUNCTION static std::size_t words(std::size_t count)
  {
    return (count * sizeof(T) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);
  }

  static std::size_t scratchBytes(bool warp_ranking, int team_size, int radix)
  {
    if (warp_ranking)
    {
      std::size_t const tile = static_cast<std::size_t>(team_size) * ItemsPerThread;
      return ScratchOffsets::shmem_size(static_cast<std::size_t>(radix) * (team_size / 32)) +
             ScratchOffsets::shmem_size(radix) + ScratchWords::shmem_size(words<Key>(tile)) +
             ScratchWords::shmem_size(words<Value>(tile));
    }
    return ScratchOffsets::shmem_size(radix) +
           (team_size > 1 ? ScratchOffsets::shmem_size(static_cast<std::size_t>(radix) * team_size)
                          : 0);
  }

  KOKKOS_INLINE_FUNCTION unsigned digit(Key key) const
  {
    return static_cast<unsigned>((key >> shift) & static_cast<Key>((Key(1) << bits) - 1));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    if constexpr (warp_capable)
    {
      if (warp_ranking)
      {
        scatterByWarps(team);
        return;
      }
    }
    scatterByThreads(team);
  }

  /// Portable ranking, one team per group. A one-thread team places each item at its
  /// digit's running offset; a team of T threads works tile by tile, thread t on the t-th
  /// slice of ItemsPerThread items, with counters(d * T + t) = the thread's items of digit
  /// d, turned by a scan over t into the offset of the thread's first one.
  KOKKOS_FUNCTION void scatterByThreads(TeamMember const &team) const
  {
    int const team_size = team.team_size();
    int const rank = team.team_rank();
    int const radix = 1 << bits;
    auto const g = static_cast<std::uint64_t>(team.league_rank());
    ScratchOffsets running(team.team_scratch(0), radix);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, radix), [&](int d) {
      running(d) = offsets(static_cast<std::size_t>(d) * layout.groups + g);
    });
    team.team_barrier();

    std::uint64_t const begin = layout.begin(g);
    std::uint64_t const end = layout.end(g);
    if (team_size == 1)
    {
      for (std::uint64_t i = begin; i < end; ++i)
      {
        Key const key = keys_in(i);
        SortOffset const to = running(static_cast<int>(digit(key)))++;
        keys_out(to) = key;
        values_out(to) = values_in(i);
      }
      return;
    }

    ScratchOffsets counters(team.team_scratch(0), radix * team_size);
    for (std::uint64_t tile_begin = begin; tile_begin < end; tile_begin += layout.tile)
    {
      std::uint64_t const tile_end = kfmm::detail::min(tile_begin + layout.tile, end);
      std::uint64_t const mine_begin = kfmm::detail::min(
          tile_begin + static_cast<std::uint64_t>(rank) * ItemsPerThread, tile_end);
      std::uint64_t const mine_end =
          kfmm::detail::min(mine_begin + static_cast<std::uint64_t>(ItemsPerThread), tile_end);
      for (int d = 0; d < radix; ++d)
        counters(d * team_size + rank) = 0;
      for (std::uint64_t i = mine_begin; i < mine_end; ++i)
        ++counters(static_cast<int>(digit(keys_in(i))) * team_size + rank);
      team.team_barrier();
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, radix), [&](int d) {
        SortOffset offset = running(d);
        for (int t = 0; t < team_size; ++t)
        {
          SortOffset const count = counters(d * team_size + t);
          counters(d * team_size + t) = offset;
          offset += count;
        }
        running(d) = offset;
      });
      team.team_barrier();
      for (std::uint64_t i = mine_begin; i < mine_end; ++i)
      {
        Key const key = keys_in(i);
        SortOffset const to = counters(static_cast<int>(digit(key)) * team_size + rank)++;
        keys_out(to) = key;
        values_out(to) = values_in(i);
      }
      team.team_barrier(); // the counters are reset for the next tile
    }
  }

  /// CUDA ranking, one team per tile: see the file comment. Warp w takes tile items
  /// [w * 32 * ItemsPerThread, (w + 1) * 32 * ItemsPerThread) in rounds of 32, lane l the
  /// l-th of each round, so that (warp, round, lane) order is index order and the ranking
  /// is stable.
  KOKKOS_FUNCTION void scatterByWarps(TeamMember const &team) const
  {
    constexpr int ipt = ItemsPerThread;
    int const team_size = team.team_size();
    int const rank = team.team_rank();
    int const warps = team_size / 32;
    int const lane = warpLane();
    int const warp = warpIndex();
    int const radix = 1 << bits;
    unsigned const lanes_below = (1u << lane) - 1u;
    auto const t = static_cast<std::uint64_t>(team.league_rank());
    std::uint64_t const tile_begin = t * layout.tile;
    int const tile_count = static_cast<int>(kfmm::detail::min(layout.tile, layout.n - tile_begin));

    // counters(w * radix + d): the tile's items of digit d in warp w, then (scanned) where
    // the first of them goes in the tile's sorted order. Warp-major: in the scan, where a
    // thread owns a digit, consecutive threads touch consecutive words (no bank conflicts).
    ScratchOffsets counters(team.team_scratch(0), warps * radix);
    // to_output(d): output index minus tile position for the tile's items of digit d.
    ScratchOffsets to_output(team.team_scratch(0), radix);
    ScratchWords key_words(team.team_scratch(0), words<Key>(layout.tile));
    ScratchWords value_words(team.team_scratch(0), words<Value>(layout.tile));
    Key *const stage_keys = reinterpret_cast<Key *>(key_words.data());
    Value *const stage_values = reinterpret_cast<Value *>(value_words.data());

    // Loads first, so that they are in flight while the counters are cleared.
    int const lane_first = warp * 32 * ipt + lane;
    Key key[ipt];
    Value value[ipt];
    {
      Key const *const tile_keys = keys_in.data() + tile_begin;
      Value const *const tile_values = values_in.data() + tile_begin;
      for (int j = 0; j < ipt; ++j)
      {
        int const o = lane_first + 32 * j;
        key[j] = o < tile_count ? tile_keys[o] : Key(0);
        value[j] = o < tile_count ? tile_values[o] : Value();
      }
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, warps * radix),
                         [&](int i) { counters(i) = 0; });
    team.team_barrier();

    // Rank within the warp: the warp's earlier items of the same digit. The lowest lane of
    // each group of equal digits reads and advances the warp's counter and hands the old
    // count to its peers.
    SortOffset position[ipt];
    for (int j = 0; j < ipt; ++j)
    {
      bool const valid = lane_first + 32 * j < tile_count;
      unsigned const d = digit(key[j]);
      unsigned const peers = warpPeers(d, bits, valid);
      int const leader = lowestLane(peers | (1u << lane)); // invalid lanes lead themselves
      SortOffset prior = 0;
      if (valid && lane == leader)
      {
        prior = counters(warp * radix + static_cast<int>(d));
        counters(warp * radix + static_cast<int>(d)) =
            prior + static_cast<SortOffset>(popCount(peers));
      }
      warpSync(); // the next round's leaders see this round's counts
      position[j] =
          warpBroadcast(prior, leader) + static_cast<SortOffset>(popCount(peers & lanes_below));
    }
    team.team_barrier();

    // Exclusive scan of the counters in (digit, warp) order: each thread sums its digits'
    // counters, one team scan joins the threads. The thread of digit d also sets
    // to_output(d) from the group's offset and the tile's prefix within the group.
    {
      int const digits_per_thread = (radix + team_size - 1) / team_size;
      int const d0 = kfmm::detail::min(radix, rank * digits_per_thread);
      int const d1 = kfmm::detail::min(radix, d0 + digits_per_thread);
      std::uint64_t const g = t / layout.group;
      SortOffset sum = 0;
      for (int d = d0; d < d1; ++d)
        for (int w = 0; w < warps; ++w)
          sum += counters(w * radix + d);
      SortOffset prefix = team.team_scan(sum);
      for (int d = d0; d < d1; ++d)
      {
        // Unsigned wrap-around is intended: to_output + position is the output index.
        to_output(d) = offsets(static_cast<std::size_t>(d) * layout.groups + g) +
                       tile_prefix(t * radix + d) - prefix;
        for (int w = 0; w < warps; ++w)
        {
          SortOffset const count = counters(w * radix + d);
          counters(w * radix + d) = prefix;
          prefix += count;
        }
      }
    }
    team.team_barrier();

    // The tile in sorted order in team scratch.
    for (int j = 0; j < ipt; ++j)
      if (lane_first + 32 * j < tile_count)
      {
        SortOffset const p =
            position[j] + counters(warp * radix + static_cast<int>(digit(key[j])));
        stage_keys[p] = key[j];
        stage_values[p] = value[j];
      }
    team.team_barrier();

    // Thread r writes sorted positions r, r + T, ...: consecutive threads, consecutive
    // addresses within each digit's run.
    for (int j = 0; j < ipt; ++j)
    {
      int const p = rank + j * team_size;
      if (p < tile_count)
      {
        Key const k = stage_keys[p];
        SortOffset const to = to_output(digit(k)) + static_cast<SortOffset>(p);
        keys_out(to) = k;
        values_out(to) = stage_values[p];
      }
    }
  }
};

/// dst(i) = src(i) for every i (any layouts, one memory space).
template <class ExecutionSpace, class Source, class Destination>
void copyItems(ExecutionSpace const &space, std::string const &label, Source const &src,
               Destination const &dst)
{
  Kokkos::parallel_for(label,
                       Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
                           space, 0, static_cast<std::int64_t>(src.extent(0))),
                       KOKKOS_LAMBDA(std::int64_t i) { dst(i) = src(i); });
}

/// The bits in which some key differs from keys(0), within `mask`.
template <class ExecutionSpace, class KeyView>
typename KeyView::non_const_value_type varyingBits(ExecutionSpace const &space,
                                                   KeyView const &keys,
                                                   typename KeyView::non_const_value_type mask)
{
  using Key = typename KeyView::non_const_value_type;
  Key varying = 0;
  Kokkos::parallel_reduce(
      "kfmm::sort::varying_bits",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
          space, 0, static_cast<std::int64_t>(keys.extent(0))),
      KOKKOS_LAMBDA(std::int64_t i, Key & bits) { bits |= (keys(i) ^ keys(0)) & mask; },
      Kokkos::BOr<Key>(varying));
  return varying;
}

/// The passes over the varying bits: digits of `digit_bits` from the lowest varying bit to
/// the highest, less those in which no bit varies.
template <class Key>
std::vector<SortPass> planPasses(Key varying, int digit_bits)
{
  std::vector<SortPass> passes;
  if (varying == 0)
    return passes;
  int low = 0;
  while (((varying >> low) & 1u) == 0)
    ++low;
  int high = static_cast<int>(8 * sizeof(Key));
  while (((varying >> (high - 1)) & 1u) == 0)
    --high;
  for (int shift = low; shift < high; shift += digit_bits)
  {
    int const bits = kfmm::detail::min(digit_bits, high - shift);
    Key const digit_mask = static_cast<Key>((Key(1) << bits) - 1);
    if (((varying >> shift) & digit_mask) != 0)
      passes.push_back({shift, bits});
  }
  return passes;
}

/// The kernels of one sort, on contiguous keys and values (unmanaged Views of them), and
/// their launch policy: on CUDA bounded so that the compiler keeps registers for
/// sort_min_teams_per_sm teams of sort_team_size threads on each multiprocessor.
template <class ExecutionSpace, class KeyView, class ValueView>
struct SortKernels
{
  using Tune = kfmm::detail::Tuning<ExecutionSpace>;
  static constexpr int items_per_thread = Tune::sort_items_per_thread;
  static constexpr int unroll = items_per_thread < 8 ? items_per_thread : 8;
  using Histogram = RadixHistogramKernel<ExecutionSpace, KeyView, unroll>;
  using Scatter = RadixScatterKernel<ExecutionSpace, KeyView, ValueView, items_per_thread>;
  using Counts = typename Histogram::Counts;
  using Policy = Kokkos::TeamPolicy<
      ExecutionSpace,
      Kokkos::LaunchBounds<(Tune::sort_min_teams_per_sm > 0 ? Tune::sort_team_size : 0),
                           Tune::sort_min_teams_per_sm>>;
};

/// Splits n items for `options`: tiles of team_size * items_per_thread items; groups of at
/// most tiles_per_team tiles.
template <class ExecutionSpace>
SortLayout sortLayout(ExecutionSpace const &space, std::uint64_t n, SortOptions const &options,
                      int items_per_thread)
{
  SortLayout layout{};
  layout.n = n;
  layout.tile = static_cast<std::uint64_t>(options.team_size) * items_per_thread;
  layout.tiles = (n + layout.tile - 1) / layout.tile;
  // At least four groups per team the space runs at once, for load balance.
  auto const fill =
      static_cast<std::uint64_t>(kfmm::detail::max(1, space.concurrency() / options.team_size));
  layout.group = kfmm::detail::max(
      std::uint64_t(1), kfmm::detail::min(static_cast<std::uint64_t>(options.tiles_per_team),
                                          layout.tiles / (4 * fill)));
  layout.groups = (layout.tiles + layout.group - 1) / layout.group;
  return layout;
}

/// Sorts contiguous keys and values (unmanaged Views of them) by the given passes.
template <class ExecutionSpace, class KeyView, class ValueView>
void runPasses(ExecutionSpace const &space, KeyView const &keys, ValueView const &values,
               std::vector<SortPass> const &passes, SortOptions const &options)
{
  using Key = typename KeyView::non_const_value_type;
  using Value = typename ValueView::non_const_value_type;
  using Kernels = SortKernels<ExecutionSpace, KeyView, ValueView>;
  using Histogram = typename Kernels::Histogram;
  using Scatter = typename Kernels::Scatter;
  using Counts = typename Kernels::Counts;
  using Policy = typename Kernels::Policy;

  auto const n = static_cast<std::uint64_t>(keys.extent(0));
  int const team_size = options.team_size;
  int const max_radix = 1 << options.digit_bits;
  bool const per_tile = options.warp_ranking;
  SortLayout const layout = sortLayout(space, n, options, Kernels::items_per_thread);

  Kokkos::View<Key *, typename KeyView::memory_space> key_buffer(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::keys_buffer"), n);
  Kokkos::View<Value *, typename ValueView::memory_space> value_buffer(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::values_buffer"), n);
  Counts counts(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::counts"),
                static_cast<std::size_t>(max_radix) * layout.groups);
  Counts tile_prefix(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::tile_prefix"),
      per_tile ? static_cast<std::size_t>(max_radix) * layout.tiles : 0);

  KeyView keys_in = keys;
  ValueView values_in = values;
  KeyView keys_out(key_buffer.data(), n);
  ValueView values_out(value_buffer.data(), n);
  auto const groups = static_cast<int>(layout.groups);
  auto const scatter_teams = static_cast<int>(per_tile ? layout.tiles : layout.groups);
  for (SortPass const &pass : passes)
  {
    int const radix = 1 << pass.bits;
    Kokkos::parallel_for(
        "kfmm::sort::histogram",
        Policy(space, groups, team_size)
            .set_scratch_size(0, Kokkos::PerTeam(Histogram::scratchBytes(team_size, radix))),
        Histogram{keys_in, counts, tile_prefix, layout, pass.shift, radix, per_tile});

    Kokkos::parallel_scan(
        "kfmm::sort::scan",
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
            space, 0, static_cast<std::int64_t>(radix) * groups),
        KOKKOS_LAMBDA(std::int64_t i, SortOffset & partial, bool final) {
          SortOffset const count = counts(i);
          if (final)
            counts(i) = partial;
          partial += count;
        });

    Kokkos::parallel_for(
        "kfmm::sort::scatter",
        Policy(space, scatter_teams, team_size)
            .set_scratch_size(0, Kokkos::PerTeam(Scatter::scratchBytes(options.warp_ranking,
                                                                       team_size, radix))),
        Scatter{keys_in, values_in, keys_out, values_out, counts, tile_prefix, layout,
                pass.shift, pass.bits, options.warp_ranking});
    std::swap(keys_in, keys_out);
    std::swap(values_in, values_out);
  }
  // After an odd number of passes the sorted pairs are in the buffers.
  if (passes.size() % 2 == 1)
  {
    copyItems(space, "kfmm::sort::copy_back_keys", key_buffer, keys);
    copyItems(space, "kfmm::sort::copy_back_values", value_buffer, values);
  }
}

/// Team scratch both kernels need for `options`, in bytes.
template <class ExecutionSpace, class KeyView, class ValueView>
std::size_t sortScratchBytes(SortOptions const &options)
{
  using Kernels = SortKernels<ExecutionSpace, KeyView, ValueView>;
  int const radix = 1 << options.digit_bits;
  return kfmm::detail::max(
      Kernels::Histogram::scratchBytes(options.team_size, radix),
      Kernels::Scatter::scratchBytes(options.warp_ranking, options.team_size, radix));
}

/// Host-side checks of the launch parameters against the backend's limits; throws
/// kfmm::Exception naming the parameter.
template <class ExecutionSpace, class KeyView, class ValueView>
void validateSortOptions(ExecutionSpace const &space, std::string const &where,
                         SortOptions const &options)
{
  using Tune = kfmm::detail::Tuning<ExecutionSpace>;
  using Kernels = SortKernels<ExecutionSpace, KeyView, ValueView>;
  using kfmm::detail::require;
  require(options.digit_bits >= 1 && options.digit_bits <= 16, where,
          "sort option 'digit_bits' must be in [1, 16], got " +
              std::to_string(options.digit_bits));
  require(options.team_size >= 1, where,
          "sort option 'team_size' must be >= 1, got " + std::to_string(options.team_size));
  require(options.tiles_per_team >= 1, where,
          "sort option 'tiles_per_team' must be >= 1, got " +
              std::to_string(options.tiles_per_team));
  if (options.warp_ranking)
  {
    require(Tune::sort_warp_ranking, where,
            std::string("sort option 'warp_ranking' is not available on ") +
                ExecutionSpace::name());
    bool const power_of_two = (options.team_size & (options.team_size - 1)) == 0;
    require(options.team_size % 32 == 0 && power_of_two, where,
            "sort option 'team_size' must be a power of two and a multiple of 32 with warp "
            "ranking, got " +
                std::to_string(options.team_size));
  }
  typename Kernels::Policy policy(space, 1, Kokkos::AUTO);
  auto const limit = static_cast<std::size_t>(policy.scratch_size_max(0));
  auto const bytes = sortScratchBytes<ExecutionSpace, KeyView, ValueView>(options);
  require(bytes <= limit, where,
          "sort options (digit_bits " + std::to_string(options.digit_bits) + ", team_size " +
              std::to_string(options.team_size) + ") need " + std::to_string(bytes) +
              " bytes of team scratch; " + ExecutionSpace::name() + " allows " +
              std::to_string(limit));
  int const max_team =
      kfmm::detail::min(policy.team_size_max(typename Kernels::Histogram{}, Kokkos::ParallelForTag{}),
                        policy.team_size_max(typename Kernels::Scatter{}, Kokkos::ParallelForTag{}));
  require(options.team_size <= max_team, where,
          "sort option 'team_size' is " + std::to_string(options.team_size) + "; " +
              ExecutionSpace::name() + " allows at most " + std::to_string(max_team));
}

/// The tuned launch parameters, with the team halved while its scratch does not fit (wide
/// values on the GPU).
template <class ExecutionSpace, class KeyView, class ValueView>
SortOptions fittedSortOptions(ExecutionSpace const &space)
{
  using Policy = typename SortKernels<ExecutionSpace, KeyView, ValueView>::Policy;
  SortOptions options = defaultSortOptions<ExecutionSpace>();
  auto const limit = static_cast<std::size_t>(Policy(space, 1, Kokkos::AUTO).scratch_size_max(0));
  int const smallest = options.warp_ranking ? 32 : 1;
  while (options.team_size > smallest &&
         sortScratchBytes<ExecutionSpace, KeyView, ValueView>(options) > limit)
    options.team_size /= 2;
  return options;
}

/// sortPairs with explicit launch parameters (see kfmm::tree::sortPairs); `options`
/// defaults to the tuned ones.
template <class ExecutionSpace, class Keys, class Values>
void sortPairs(ExecutionSpace const &space, Keys const &keys, Values const &values,
               int key_bits, SortOptions const *options)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::tree::sortPairs: the first argument must be a Kokkos execution space");
  static_assert(Keys::rank == 1 && Values::rank == 1,
                "kfmm::tree::sortPairs: keys and values must be rank-1 Views");
  using Key = typename Keys::value_type;
  using Value = typename Values::value_type;
  static_assert(std::is_integral<Key>::value && std::is_unsigned<Key>::value &&
                    !std::is_const<Key>::value,
                "kfmm::tree::sortPairs: keys must be a View of non-const unsigned integers");
  static_assert(!std::is_const<Value>::value && std::is_trivially_copyable<Value>::value,
                "kfmm::tree::sortPairs: values must be a View of non-const trivially "
                "copyable values");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Keys::memory_space>::accessible &&
          Kokkos::SpaceAccessibility<ExecutionSpace, typename Values::memory_space>::accessible,
      "kfmm::tree::sortPairs: keys and values must be accessible from the execution space");

  kfmm::detail::ScopedRegion region("kfmm::sort");
  std::string const where = "kfmm::tree::sortPairs";
  constexpr int max_bits = static_cast<int>(8 * sizeof(Key));
  kfmm::detail::require(key_bits >= 0 && key_bits <= max_bits, where,
                        "argument 'key_bits' must be in [0, " + std::to_string(max_bits) +
                            "], got " + std::to_string(key_bits));
  kfmm::detail::requireExtent(where, "values", values.extent(0), keys.extent(0));
  auto const n = keys.extent(0);
  kfmm::detail::require(n <= std::numeric_limits<SortOffset>::max(), where,
                        "argument 'keys' has " + std::to_string(n) +
                            " entries; at most 2^32 - 1 are supported");
  using KeyView = Unmanaged1D<Key, typename Keys::memory_space>;
  using ValueView = Unmanaged1D<Value, typename Values::memory_space>;
  SortOptions const chosen =
      options != nullptr ? *options : fittedSortOptions<ExecutionSpace, KeyView, ValueView>(space);
  validateSortOptions<ExecutionSpace, KeyView, ValueView>(space, where, chosen);
  if (n <= 1 || key_bits == 0)
    return;

  // Non-contiguous Views (strided subviews) are sorted through contiguous copies.
  KeyView key_items;
  ValueView value_items;
  Kokkos::View<Key *, typename Keys::memory_space> key_copy;
  Kokkos::View<Value *, typename Values::memory_space> value_copy;
  if (keys.span_is_contiguous())
    key_items = KeyView(keys.data(), n);
  else
  {
    key_copy = decltype(key_copy)(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::keys_contiguous"),
        n);
    copyItems(space, "kfmm::sort::gather_keys", keys, key_copy);
    key_items = KeyView(key_copy.data(), n);
  }
  if (values.span_is_contiguous())
    value_items = ValueView(values.data(), n);
  else
  {
    value_copy = decltype(value_copy)(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::values_contiguous"),
        n);
    copyItems(space, "kfmm::sort::gather_values", values, value_copy);
    value_items = ValueView(value_copy.data(), n);
  }

  Key const mask = key_bits == max_bits ? static_cast<Key>(~Key(0))
                                         : static_cast<Key>((Key(1) << key_bits) - 1);
  auto const passes = planPasses(varyingBits(space, key_items, mask), chosen.digit_bits);
  if (passes.empty())
    return;
  runPasses(space, key_items, value_items, passes, chosen);

  if (key_copy.data() != nullptr)
    copyItems(space, "kfmm::sort::scatter_keys", key_copy, keys);
  if (value_copy.data() != nullptr)
    copyItems(space, "kfmm::sort::scatter_values", value_copy, values);
}

template <class ExecutionSpace, class Keys, class Values>
void sortPairs(ExecutionSpace const &space, Keys const &keys, Values const &values,
               int key_bits, SortOptions const &options)
{
  sortPairs(space, keys, values, key_bits, &options);
}

} // namespace detail

/// Sorts `keys` ascending by their bits [0, key_bits), in place and stably, and permutes
/// `values` with them: pairs with equal keys keep their relative order. Bits at and above
/// `key_bits` are ignored (pass keys < 2^key_bits, e.g. 63 for kfmm's Morton keys); only
/// the digits in which the keys differ are sorted. Runs asynchronously on `space` after one
/// synchronisation that finds those digits; temporary buffers of N keys and N values are
/// allocated on each call.
///
/// \param [in]     space     execution space instance the kernels run on
/// \param [in,out] keys      N unsigned integer keys (e.g. std::uint64_t Morton keys)
/// \param [in,out] values    N values of any trivially copyable type (e.g. std::uint32_t
///                           particle indices), reordered with the keys
/// \param [in]     key_bits  number of low key bits to sort by, in [0, bits of the key type]
/// \throws kfmm::Exception if `values` and `keys` have different extents, `key_bits` is out
/// of range, or N >= 2^32.
template <class ExecutionSpace, class Keys, class Values>
void sortPairs(ExecutionSpace const &space, Keys const &keys, Values const &values,
               int key_bits = 64)
{
  detail::sortPairs(space, keys, values, key_bits,
                    static_cast<detail::SortOptions const *>(nullptr));
}

} // namespace kfmm::tree

#endif
