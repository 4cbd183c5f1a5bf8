// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_DETAIL_ONESWEEP_SORT_HPP
#define KFMM_TREE_DETAIL_ONESWEEP_SORT_HPP

// The radix sort's passes as "onesweep" (Adinets & Merrill, "Onesweep: a faster least
// significant digit radix sort for GPUs", arXiv:2206.01784, 2022): the algorithm for GPUs.
//
// Reduce-then-scan reads the keys twice per pass (histogram, then scatter). Onesweep reads
// them once per pass plus once in all:
//
//   1. digit histograms: one read of the keys counts every digit position's digits at once
//      (positions of digit_bits bits from bit 0), into counts(position * max_radix +
//      digit); an exclusive scan per position turns the counts into where each digit's
//      items start in that pass's output. A position where one digit holds all N items is
//      the same in every key: it gets no pass. Two small kernels then give every position
//      its route (none, from the caller's arrays to the buffers, or back), so that the host
//      launches a kernel for every position and never waits: a pass kernel whose position
//      has no route returns at once, and the sorted pairs are copied back to the caller's
//      arrays by a kernel that does nothing when they already end there;
//   2. one kernel per pass, with as many teams as run at once. A team claims tiles of
//      team_size * items_per_thread items from a counter until none is left (claim order,
//      not league rank: a tile's predecessors were then claimed by teams that are already
//      running, so waiting on them cannot deadlock), ranks each tile by digit, and
//      publishes its per-digit counts. It then finds, per digit, the number of
//      items of that digit in all earlier tiles by decoupled look-back (Merrill & Garland,
//      "Single-pass parallel prefix scan with decoupled look-back", NVIDIA NVR-2016-002):
//      it walks back over earlier tiles, adding their published counts, until it meets a
//      tile that published its inclusive prefix, and publishes its own inclusive prefix.
//      The items go to digit start + prefix of earlier tiles + rank within the tile.
//
// A tile's status word per digit holds a tag in its top 8 bits and a count below: tag
// 2 * pass + 1 marks a tile's own count ("aggregate"), 2 * pass + 2 the inclusive prefix;
// anything smaller is a word from an earlier pass, not yet written in this one. Tagging by
// pass means the status array is cleared once per sort, not once per pass.
//
// Ranking within a tile:
// - one-thread teams (host spaces, tests): the thread counts the tile, then places each
//   item at the running offset of its digit, in order;
// - CUDA: warp-synchronous ranking with per-warp digit counters in shared memory (the
//   warp-level multisplit of Ashkiani et al., "GPU multisplit", PPoPP 2016, and the per-warp
//   histograms of Onesweep): each warp takes its items a round of 32 at a time in index
//   order; lanes with the same digit find each other with one warp vote per digit bit, so
//   the rank of an item among its warp's items of that digit is the warp's counter plus the
//   number of matching lanes below it. One team scan over the (digit, warp) counters turns
//   those ranks into the tile's stable sorted order; the tile is then reordered through
//   shared memory so that consecutive threads write consecutive addresses of each digit's
//   run (coalesced stores).

#include <kfmm/detail/Math.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Warp.hpp>
#include <kfmm/tree/detail/SortCommon.hpp>
#include <kfmm/tree/detail/TileStatus.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::tree::detail
{

/// The digit positions of one sort (the passes it may run), passed by value to the kernels.
struct PassList
{
  static constexpr int capacity = 64; // one-bit digits of 64-bit keys
  int count;
  SortPass pass[capacity];
};

/// Step 1: counts(p * max_radix + d) += the items whose digit at position p is d. Team i counts
/// tiles i, i + league, ... in team scratch, then adds its counts to the global ones.
template <class ExecutionSpace, class KeyView, int ItemsPerThread>
struct DigitHistogramsKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Key = typename KeyView::non_const_value_type;
  using ScratchOffsets = Kokkos::View<SortOffset *, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryUnmanaged>;
  using Counts = Kokkos::View<SortOffset *, typename ExecutionSpace::memory_space>;

  /// Keys loaded before any is counted: more loads in flight per thread.
  static constexpr int unroll = ItemsPerThread < 8 ? ItemsPerThread : 8;

  KeyView keys;
  Counts counts;
  PassList positions;
  int max_radix;

  /// One set of histograms per warp while they fit in 32 KiB, so that a warp's
  /// shared-memory atomics mostly hit its own copy.
  KOKKOS_INLINE_FUNCTION static int copies(int team_size, int pass_count, int max_radix)
  {
    int const fit = 8192 / (pass_count * max_radix);
    return kfmm::detail::max(1, kfmm::detail::min((team_size + 31) / 32, fit));
  }

  static std::size_t scratchBytes(int team_size, int pass_count, int max_radix)
  {
    return ScratchOffsets::shmem_size(static_cast<std::size_t>(
        copies(team_size, pass_count, max_radix) * pass_count * max_radix));
  }

  KOKKOS_INLINE_FUNCTION void add(SortOffset *histograms, Key key, bool shared) const
  {
    for (int p = 0; p < positions.count; ++p)
    {
      Key const mask = static_cast<Key>((Key(1) << positions.pass[p].bits) - 1);
      SortOffset *const bin =
          histograms + p * max_radix + static_cast<int>((key >> positions.pass[p].shift) & mask);
      if (shared)
        Kokkos::atomic_add(bin, SortOffset(1));
      else
        ++*bin;
    }
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const team_size = team.team_size();
    int const rank = team.team_rank();
    int const bins = positions.count * max_radix;
    int const n_copies = copies(team_size, positions.count, max_radix);
    ScratchOffsets hist(team.team_scratch(0), n_copies * bins);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n_copies * bins),
                         [&](int i) { hist(i) = 0; });
    team.team_barrier();

    SortOffset *const mine = &hist((rank / 32) % n_copies * bins);
    auto const n = static_cast<std::uint64_t>(keys.extent(0));
    auto const stride = static_cast<std::uint64_t>(team_size);
    std::uint64_t const tile = stride * ItemsPerThread;
    for (std::uint64_t begin = static_cast<std::uint64_t>(team.league_rank()) * tile; begin < n;
         begin += static_cast<std::uint64_t>(team.league_size()) * tile)
    {
      std::uint64_t const end = kfmm::detail::min(begin + tile, n);
      for (std::uint64_t first = begin + rank; first < end; first += stride * unroll)
      {
        Key k[unroll];
        for (int j = 0; j < unroll; ++j)
        {
          std::uint64_t const i = first + j * stride;
          k[j] = i < end ? keys(i) : Key(0);
        }
        for (int j = 0; j < unroll; ++j)
          if (first + j * stride < end)
            add(mine, k[j], team_size > 1);
      }
    }
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, bins), [&](int b) {
      SortOffset total = 0;
      for (int c = 0; c < n_copies; ++c)
        total += hist(c * bins + b);
      if (total != 0)
        Kokkos::atomic_add(&counts(b), total);
    });
  }
};

/// Where a pass reads and writes (PassRoutesKernel): not at all, from the caller's arrays to
/// the buffers, or from the buffers to the caller's arrays.
enum PassRoute : SortOffset
{
  no_pass = 0,
  to_buffers = 1,
  to_caller = 2
};

/// Step 1, then: position p's digit counts become starts, one team per position, and
/// routes(p) = to_buffers where the position is sorted: where no digit holds all n items and
/// the position reaches above begin_bit (where the caller gives one); no_pass elsewhere.
/// (A team per position spreads its 256 digits over the team's threads, where a thread per
/// position, or one team for all positions in turn, loops over them: docs/TUNING.md, "The
/// radix sort".)
template <class ExecutionSpace, class Counts>
struct DigitOffsetsKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Counts counts;
  Counts routes;
  BeginBit<typename ExecutionSpace::memory_space> begin_bit;
  PassList positions;
  std::uint64_t n;
  int max_radix;

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const p = team.league_rank();
    SortOffset *const digits = &counts(static_cast<std::size_t>(p) * max_radix);
    SortOffset largest = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, max_radix),
        [&](int d, SortOffset &most) { most = kfmm::detail::max(most, digits[d]); },
        Kokkos::Max<SortOffset>(largest));
    // Each thread reads its digits' counts before it writes their starts.
    Kokkos::parallel_scan(Kokkos::TeamThreadRange(team, max_radix),
                          [&](int d, SortOffset &start, bool final) {
                            SortOffset const digit_count = digits[d];
                            if (final)
                              digits[d] = start;
                            start += digit_count;
                          });
    int const begin = begin_bit.data() != nullptr ? begin_bit() : 0;
    bool const sorted = largest != n && positions.pass[p].shift + positions.pass[p].bits > begin;
    Kokkos::single(Kokkos::PerTeam(team), [&] { routes(p) = sorted ? to_buffers : no_pass; });
  }
};

/// Then, on one thread: the sorted positions' routes alternate from to_buffers, and
/// routes(count) is 1 when the sorted pairs end in the buffers. Computed on the device, so
/// that the host launches the passes without waiting.
template <class Counts>
struct PassRoutesKernel
{
  Counts routes;
  int count;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    SortOffset passes = 0;
    for (int p = 0; p < count; ++p)
      if (routes(p) != no_pass)
        routes(p) = passes++ % 2 == 0 ? to_buffers : to_caller;
    routes(count) = passes % 2;
  }
};

/// After the passes: the sorted pairs back to the caller's arrays where they ended in the
/// buffers (routes(count) == 1), else nothing.
template <class KeyView, class ValueView, class Counts>
struct CopyBackKernel
{
  KeyView keys_buffer;
  ValueView values_buffer;
  KeyView keys;
  ValueView values;
  Counts routes;
  int count;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const
  {
    if (routes(count) == 0)
      return;
    keys(i) = keys_buffer(i);
    values(i) = values_buffer(i);
  }
};

/// Step 2: the pass of digit position pass_index, from the `_in` (the caller's) to the
/// `_out` arrays (the buffers) or back, as routes(pass_index) says, or none. digit_start(d)
/// is where the pass's items of digit d start.
///
/// With FixedTeamSize > 0 the warp ranking is compiled for teams of that size and for
/// 2^vote_bits digits in every pass (a narrower last pass leaves the top digits empty), so
/// that its loops over warps and digits unroll; the tuned sort runs this way. With 0 both
/// are taken at run time.
template <class ExecutionSpace, class KeyView, class ValueView, int ItemsPerThread,
          int FixedTeamSize = 0>
struct OnesweepPassKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Key = typename KeyView::non_const_value_type;
  using Value = typename ValueView::non_const_value_type;
  using Scratch = typename ExecutionSpace::scratch_memory_space;
  using ScratchOffsets = Kokkos::View<SortOffset *, Scratch, Kokkos::MemoryUnmanaged>;
  using ScratchWords = Kokkos::View<std::uint64_t *, Scratch, Kokkos::MemoryUnmanaged>;
  /// A warp's count of a digit in one tile and, once scanned, a place in the tile: tiles
  /// hold fewer than 2^16 items (validateSortOptions), and half-width counters leave team
  /// scratch for larger tiles.
  using TileCount = std::uint16_t;
  using ScratchTileCounts = Kokkos::View<TileCount *, Scratch, Kokkos::MemoryUnmanaged>;
  using Counts = Kokkos::View<SortOffset *, typename ExecutionSpace::memory_space>;
  using DigitStarts = Unmanaged1D<SortOffset, typename ExecutionSpace::memory_space>;
  using Status = Kokkos::View<std::uint64_t *, typename ExecutionSpace::memory_space>;

  static constexpr bool warp_capable = kfmm::tuning::Tuning<ExecutionSpace>::has_warp_primitives;
  /// Digit bits the warp ranking votes on: enough for every pass of the tuned sort.
  static constexpr int vote_bits = kfmm::tuning::Tuning<ExecutionSpace>::sort_digit_bits;
  /// Earlier tiles whose status words the look-back reads at once.
  static constexpr int lookback_window = kfmm::tuning::Tuning<ExecutionSpace>::sort_lookback_window;
  static_assert(alignof(Value) <= alignof(std::uint64_t) && alignof(Key) <= alignof(std::uint64_t),
                "kfmm::tree::sortPairs: keys and values must be at most 8-byte aligned");
  static_assert(!warp_capable || vote_bits <= 8,
                "the warp ranking keeps the digits of a thread's sorted items in bytes");

  KeyView keys_in;
  ValueView values_in;
  KeyView keys_out;
  ValueView values_out;
  DigitStarts digit_start;
  Status tile_status;
  Counts next_tile;
  Counts routes;
  int pass_index;
  int shift;
  int bits;

  /// Digits the ranking of a pass of `pass_bits` bits keeps counters for.
  KOKKOS_INLINE_FUNCTION static int rankRadix(int pass_bits)
  {
    return FixedTeamSize > 0 ? 1 << vote_bits : 1 << pass_bits;
  }

  static std::size_t scratchBytes(int team_size, int radix)
  {
    std::size_t const claimed = ScratchOffsets::shmem_size(2);
    if (team_size == 1)
      return claimed + ScratchOffsets::shmem_size(radix);
    std::size_t const tile = static_cast<std::size_t>(team_size) * ItemsPerThread;
    return claimed +
           ScratchTileCounts::shmem_size(static_cast<std::size_t>(radix) * (team_size / 32)) +
           ScratchOffsets::shmem_size(radix) +
           ScratchWords::shmem_size(
               kfmm::detail::max(scratchWords<Key>(tile), scratchWords<Value>(tile)));
  }

  KOKKOS_INLINE_FUNCTION unsigned digit(Key key) const
  {
    return static_cast<unsigned>((key >> shift) & static_cast<Key>((Key(1) << bits) - 1));
  }

  KOKKOS_INLINE_FUNCTION std::uint64_t *status(std::uint64_t tile, int d, int radix) const
  {
    return &tile_status(tile * static_cast<std::uint64_t>(radix) + static_cast<std::uint64_t>(d));
  }

  /// Tile j's status word of digit d, as TileStatus takes it: a function of j.
  KOKKOS_INLINE_FUNCTION auto digitStatus(int d, int radix) const
  {
    return [this, d, radix](std::uint64_t j) { return status(j, d, radix); };
  }

  /// Publishes this tile's count of digit d (TileStatus::publishAggregate).
  KOKKOS_INLINE_FUNCTION void publishCount(std::uint64_t tile, int d, int radix,
                                           SortOffset count) const
  {
    TileStatus::publishAggregate(digitStatus(d, radix), tile, pass_index, count);
  }

  /// Items of digit d in tiles before `tile`, by decoupled look-back (TileStatus::lookBack);
  /// publishes this tile's inclusive prefix (that number plus `count`, this tile's own).
  KOKKOS_INLINE_FUNCTION SortOffset lookBack(std::uint64_t tile, int d, int radix,
                                             SortOffset count) const
  {
    return static_cast<SortOffset>(
        TileStatus::lookBack<lookback_window>(digitStatus(d, radix), tile, pass_index, count));
  }

  /// The next tile of this pass, for the calling thread alone.
  KOKKOS_INLINE_FUNCTION SortOffset claimTile() const
  {
    return Kokkos::atomic_fetch_add(&next_tile(pass_index), SortOffset(1));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    SortOffset const route = routes(pass_index);
    if (route == no_pass)
      return;
    OnesweepPassKernel pass = *this;
    if (route == to_caller)
    {
      pass.keys_in = keys_out;
      pass.values_in = values_out;
      pass.keys_out = keys_in;
      pass.values_out = values_in;
    }
    pass.sortTiles(team);
  }

  /// Teams are persistent: each claims tiles until none is left.
  KOKKOS_FUNCTION void sortTiles(TeamMember const &team) const
  {
    if constexpr (warp_capable)
    {
      if (team.team_size() > 1)
      {
        sortTilesByWarps(team);
        return;
      }
    }
    auto const n = static_cast<std::uint64_t>(keys_in.extent(0));
    std::uint64_t const tiles = (n + ItemsPerThread - 1) / ItemsPerThread;
    ScratchOffsets next(team.team_scratch(0), 1 << bits);
    for (std::uint64_t tile = claimTile(); tile < tiles; tile = claimTile())
      sortTileInOrder(tile, next);
  }

  /// One-thread team: count, publish, look back, then place the items in order. `next`
  /// has a counter per digit.
  KOKKOS_FUNCTION void sortTileInOrder(std::uint64_t tile, ScratchOffsets const &next) const
  {
    int const radix = 1 << bits;
    auto const n = static_cast<std::uint64_t>(keys_in.extent(0));
    std::uint64_t const begin = tile * ItemsPerThread;
    std::uint64_t const end = kfmm::detail::min(begin + ItemsPerThread, n);
    for (int d = 0; d < radix; ++d)
      next(d) = 0;
    for (std::uint64_t i = begin; i < end; ++i)
      ++next(static_cast<int>(digit(keys_in(i))));
    for (int d = 0; d < radix; ++d)
      publishCount(tile, d, radix, next(d));
    for (int d = 0; d < radix; ++d)
      next(d) = digit_start(d) + lookBack(tile, d, radix, next(d));
    for (std::uint64_t i = begin; i < end; ++i)
    {
      Key const key = keys_in(i);
      SortOffset const to = next(static_cast<int>(digit(key)))++;
      keys_out(to) = key;
      values_out(to) = values_in(i);
    }
  }

  /// CUDA ranking: see the file comment. Warp w takes tile items
  /// [w * 32 * ItemsPerThread, (w + 1) * 32 * ItemsPerThread) in rounds of 32, lane l the
  /// l-th of each round, so that (warp, round, lane) order is index order and the ranking
  /// is stable.
  ///
  /// The next tile is claimed while this one is staged, and its keys are loaded into
  /// registers before this tile's items are stored, so that the loads are in flight during
  /// the stores. A tile's values are loaded when its ranking starts and are first needed
  /// when it is staged: holding the next tile's values through the stores as well made the
  /// compiler spill them to local memory, where each waited for its load at once.
  /// Claiming ahead cannot deadlock: the smallest unfinished tile is always some team's
  /// current tile, and it waits only on smaller, finished tiles.
  KOKKOS_FUNCTION void sortTilesByWarps(TeamMember const &team) const
  {
    using namespace kfmm::detail;
    constexpr int ipt = ItemsPerThread;
    int const team_size = FixedTeamSize > 0 ? FixedTeamSize : team.team_size();
    int const rank = team.team_rank();
    int const warps = team_size / 32;
    int const lane = warpLane();
    int const warp = warpIndex();
    int const radix = rankRadix(bits);
    unsigned const lanes_below = (1u << lane) - 1u;
    auto const n = static_cast<std::uint64_t>(keys_in.extent(0));
    auto const tile_items = static_cast<std::uint64_t>(team_size) * ipt;
    std::uint64_t const tiles = (n + tile_items - 1) / tile_items;

    // claimed(s): a tile claimed ahead; the slot alternates so that rank 0 never overwrites
    // a tile number that a slower thread has yet to read.
    ScratchOffsets claimed(team.team_scratch(0), 2);
    // counters(w * radix + d): the tile's items of digit d in warp w, then (scanned) where
    // the first of them goes in the tile's sorted order. Warp-major: in the scan, where a
    // thread owns a digit, consecutive threads touch consecutive words (no bank conflicts).
    ScratchTileCounts counters(team.team_scratch(0), warps * radix);
    // to_output(d): output index minus tile position for the tile's items of digit d.
    ScratchOffsets to_output(team.team_scratch(0), radix);
    // The tile in sorted order: its keys, then its values, in one buffer.
    ScratchWords stage(team.team_scratch(0),
                       max(scratchWords<Key>(tile_items), scratchWords<Value>(tile_items)));
    Key *const stage_keys = reinterpret_cast<Key *>(stage.data());
    Value *const stage_values = reinterpret_cast<Value *>(stage.data());

    int const lane_first = warp * 32 * ipt + lane;
    Key key[ipt];
    auto const loadKeys = [&](std::uint64_t t) {
      std::uint64_t const first = t * tile_items;
      int const count = static_cast<int>(min(tile_items, n - first));
      Key const *const tile_keys = keys_in.data() + first;
      for (int j = 0; j < ipt; ++j)
      {
        int const o = lane_first + 32 * j;
        key[j] = o < count ? tile_keys[o] : Key(0);
      }
    };

    if (rank == 0)
      claimed(0) = claimTile();
    team.team_barrier();
    std::uint64_t tile = claimed(0);
    if (tile < tiles)
      loadKeys(tile);
    for (int slot = 1; tile < tiles; slot ^= 1)
    {
      int const tile_count = static_cast<int>(min(tile_items, n - tile * tile_items));
      Value value[ipt];
      Value const *const tile_values = values_in.data() + tile * tile_items;
      for (int j = 0; j < ipt; ++j)
      {
        int const o = lane_first + 32 * j;
        value[j] = o < tile_count ? tile_values[o] : Value();
      }
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, warps * radix),
                           [&](int i) { counters(i) = 0; });
      team.team_barrier();

      // Rank within the warp: the warp's earlier items of the same digit. The lowest lane
      // of each group of equal digits reads and advances the warp's counter and hands the
      // old count to its peers.
      SortOffset position[ipt];
      for (int j = 0; j < ipt; ++j)
      {
        bool const valid = lane_first + 32 * j < tile_count;
        unsigned const d = digit(key[j]);
        unsigned const peers = warpPeers<vote_bits>(d, valid);
        int const leader = lowestLane(peers | (1u << lane)); // invalid lanes lead themselves
        SortOffset prior = 0;
        if (valid && lane == leader)
        {
          prior = counters(warp * radix + static_cast<int>(d));
          counters(warp * radix + static_cast<int>(d)) =
              static_cast<TileCount>(prior + static_cast<SortOffset>(popCount(peers)));
        }
        warpSync(); // the next round's leaders see this round's counts
        position[j] =
            warpBroadcast(prior, leader) + static_cast<SortOffset>(popCount(peers & lanes_below));
      }
      team.team_barrier();

      // The thread of digits [d0, d1) publishes the tile's counts of them first, so that
      // later tiles can look back past this one as early as possible; to_output(d) keeps the
      // count until the look-back.
      int const digits_per_thread = (radix + team_size - 1) / team_size;
      int const d0 = min(radix, rank * digits_per_thread);
      int const d1 = min(radix, d0 + digits_per_thread);
      SortOffset sum = 0;
      for (int d = d0; d < d1; ++d)
      {
        SortOffset count = 0;
        for (int w = 0; w < warps; ++w)
          count += counters(w * radix + d);
        publishCount(tile, d, radix, count);
        to_output(d) = count;
        sum += count;
      }
      // Exclusive scan of the counters in (digit, warp) order: the tile's sorted order. The
      // thread of digit d also sets to_output(d) from the digit's start, the earlier tiles'
      // items of digit d, and the digit's first place in the tile's sorted order.
      SortOffset prefix = team.team_scan(sum);
      for (int d = d0; d < d1; ++d)
      {
        SortOffset const before = lookBack(tile, d, radix, to_output(d));
        // Unsigned wrap-around is intended: to_output + position is the output index.
        to_output(d) = digit_start(d) + before - prefix;
        for (int w = 0; w < warps; ++w)
        {
          SortOffset const count = counters(w * radix + d);
          counters(w * radix + d) = static_cast<TileCount>(prefix);
          prefix += count;
        }
      }
      team.team_barrier();

      // The next tile, claimed only now: a claimed tile's successors wait for its counts,
      // so it must not sit behind a whole tile of this team's work.
      if (rank == 0)
        claimed(slot) = claimTile();
      // The keys in sorted order in team scratch; position[j] becomes the item's place in
      // that order.
      for (int j = 0; j < ipt; ++j)
        if (lane_first + 32 * j < tile_count)
        {
          position[j] += counters(warp * radix + static_cast<int>(digit(key[j])));
          stage_keys[position[j]] = key[j];
        }
      team.team_barrier();

      std::uint64_t const next = claimed(slot);
      if (next < tiles)
        loadKeys(next);
      // Thread r writes sorted positions r, r + T, ...: consecutive threads, consecutive
      // addresses within each digit's run. Keys first, then values through the same
      // buffer; the digits of the thread's sorted positions wait for the values packed four
      // to a register.
      std::uint32_t sorted_digits[(ipt + 3) / 4] = {};
      for (int j = 0; j < ipt; ++j)
      {
        int const p = rank + j * team_size;
        if (p < tile_count)
        {
          Key const k = stage_keys[p];
          unsigned const d = digit(k);
          sorted_digits[j / 4] |= d << (8 * (j % 4));
          keys_out(to_output(d) + static_cast<SortOffset>(p)) = k;
        }
      }
      team.team_barrier();
      for (int j = 0; j < ipt; ++j)
        if (lane_first + 32 * j < tile_count)
          stage_values[position[j]] = value[j];
      team.team_barrier();
      for (int j = 0; j < ipt; ++j)
      {
        int const p = rank + j * team_size;
        if (p < tile_count)
        {
          unsigned const d = (sorted_digits[j / 4] >> (8 * (j % 4))) & 0xffu;
          values_out(to_output(d) + static_cast<SortOffset>(p)) = stage_values[p];
        }
      }
      tile = next;
    }
  }
};

/// Team scratch the onesweep kernels need for `pass_count` passes, in bytes.
template <class ExecutionSpace, class KeyView, class ValueView>
std::size_t onesweepScratchBytes(SortOptions const &options, int pass_count)
{
  constexpr int ipt = kfmm::tuning::Tuning<ExecutionSpace>::sort_items_per_thread;
  int const radix = 1 << options.digit_bits;
  return kfmm::detail::max(
      DigitHistogramsKernel<ExecutionSpace, KeyView, ipt>::scratchBytes(options.team_size,
                                                                        pass_count, radix),
      OnesweepPassKernel<ExecutionSpace, KeyView, ValueView, ipt>::scratchBytes(options.team_size,
                                                                                radix));
}

/// The digit positions of bits [0, key_bits), `digit_bits` wide from bit 0 (the last one
/// narrower where key_bits is no multiple): the passes a sort may need.
inline PassList digitPositions(int key_bits, int digit_bits)
{
  PassList positions{};
  positions.count = (key_bits + digit_bits - 1) / digit_bits;
  for (int p = 0; p < positions.count; ++p)
    positions.pass[p] = {p * digit_bits, kfmm::detail::min(digit_bits, key_bits - p * digit_bits)};
  return positions;
}

/// One onesweep_pass kernel of type Pass per digit position, each routed on the device
/// (PassRoutesKernel), on teams that claim tiles until none is left.
template <class Pass, class ExecutionSpace, class KeyView, class ValueView, class Workspace>
void launchPasses(ExecutionSpace const &space, KeyView const &keys, ValueView const &values,
                  KeyView const &keys_buffer, ValueView const &values_buffer,
                  PassList const &positions, int team_size, int teams, int max_radix,
                  Workspace const &workspace)
{
  for (int p = 0; p < positions.count; ++p)
  {
    SortPass const pass = positions.pass[p];
    typename Pass::DigitStarts const digit_start(
        workspace.counts.data() + static_cast<std::size_t>(p) * max_radix, max_radix);
    std::size_t const scratch = Pass::scratchBytes(team_size, Pass::rankRadix(pass.bits));
    Kokkos::parallel_for("kfmm::sort::onesweep_pass",
                         SortPolicy<ExecutionSpace>(space, teams, team_size)
                             .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                         Pass{keys, values, keys_buffer, values_buffer, digit_start,
                              workspace.tile_status, workspace.next_tile, workspace.pass_routes, p,
                              pass.shift, pass.bits});
  }
}

/// Sorts contiguous keys and values (unmanaged Views of them) by their bits [0, key_bits)
/// (at most PassList::capacity digit positions), in passes over the digit positions in
/// which the keys differ, each pass from the caller's arrays to the buffers or back; the
/// sorted pairs end in the caller's arrays. Queued on `space` without a host
/// synchronisation.
template <class ExecutionSpace, class KeyView, class ValueView, class Workspace>
void onesweepSort(ExecutionSpace const &space, KeyView const &keys, ValueView const &values,
                  KeyView const &keys_buffer, ValueView const &values_buffer, int key_bits,
                  SortOptions const &options, Workspace &workspace)
{
  constexpr int ipt = kfmm::tuning::Tuning<ExecutionSpace>::sort_items_per_thread;
  using Histograms = DigitHistogramsKernel<ExecutionSpace, KeyView, ipt>;
  using Pass = OnesweepPassKernel<ExecutionSpace, KeyView, ValueView, ipt>;
  using Policy = SortPolicy<ExecutionSpace>;
  using Counts = decltype(workspace.counts);

  auto const n = static_cast<std::uint64_t>(keys.extent(0));
  int const team_size = options.team_size;
  int const max_radix = 1 << options.digit_bits;
  std::uint64_t const tile = tileItems<ExecutionSpace>(options);
  std::uint64_t const tiles = (n + tile - 1) / tile;
  PassList const positions = digitPositions(key_bits, options.digit_bits);
  auto const position_count = static_cast<std::size_t>(positions.count);
  std::size_t const bins = position_count * max_radix;

  workspace.memory->reserve(space, workspace.counts, bins, "kfmm::sort::counts");
  workspace.memory->reserve(space, workspace.pass_routes, position_count + 1,
                            "kfmm::sort::pass_routes");
  workspace.memory->reserve(space, workspace.tile_status, tiles * max_radix,
                            "kfmm::sort::tile_status");
  workspace.memory->reserve(space, workspace.next_tile, position_count, "kfmm::sort::next_tile");
  auto const counts = workspace.counts;
  clearItems(space, "kfmm::sort::clear_counts", counts, bins);
  clearItems(space, "kfmm::sort::clear_tile_status", workspace.tile_status, tiles * max_radix);
  clearItems(space, "kfmm::sort::clear_next_tile", workspace.next_tile, position_count);

  // Enough teams to fill the space once: in the histograms each adds its counts to the
  // global ones; in the passes each claims tiles until none is left.
  auto const resident_teams = static_cast<int>(kfmm::detail::min(
      tiles, static_cast<std::uint64_t>(kfmm::detail::max(1, space.concurrency() / team_size))));
  Kokkos::parallel_for("kfmm::sort::digit_histograms",
                       Policy(space, resident_teams, team_size)
                           .set_scratch_size(0, Kokkos::PerTeam(Histograms::scratchBytes(
                                                    team_size, positions.count, max_radix))),
                       Histograms{keys, counts, positions, max_radix});
  // Its functor (the pass list) would otherwise launch from constant memory, and the host
  // wait for the last such launch, on any instance, to end (kfmm/detail/ArgumentLaunch.hpp).
  Kokkos::parallel_for(
      "kfmm::sort::digit_offsets",
      Kokkos::TeamPolicy<ExecutionSpace, kfmm::detail::ArgumentLaunch>(space, positions.count,
                                                                       Kokkos::AUTO),
      DigitOffsetsKernel<ExecutionSpace, Counts>{counts, workspace.pass_routes, workspace.begin_bit,
                                                 positions, n, max_radix});
  Kokkos::parallel_for("kfmm::sort::pass_routes", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                       PassRoutesKernel<Counts>{workspace.pass_routes, positions.count});

  // The tuned team shape runs the pass kernel compiled for it.
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  bool const tuned = Tune::has_warp_primitives && team_size == Tune::sort_team_size &&
                     options.digit_bits == Tune::sort_digit_bits;
  if (tuned)
    launchPasses<OnesweepPassKernel<ExecutionSpace, KeyView, ValueView, ipt, Tune::sort_team_size>>(
        space, keys, values, keys_buffer, values_buffer, positions, team_size, resident_teams,
        max_radix, workspace);
  else
    launchPasses<Pass>(space, keys, values, keys_buffer, values_buffer, positions, team_size,
                       resident_teams, max_radix, workspace);
  kfmm::detail::streamFor(
      "kfmm::sort::copy_back", space, n,
      CopyBackKernel<KeyView, ValueView, Counts>{keys_buffer, values_buffer, keys, values,
                                                 workspace.pass_routes, positions.count});
}

} // namespace kfmm::tree::detail

#endif
