// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_DETAIL_REDUCE_THEN_SCAN_SORT_HPP
#define KFMM_TREE_DETAIL_REDUCE_THEN_SCAN_SORT_HPP

// The radix sort's passes as "reduce, then scan" (Satish, Harris & Garland, "Designing
// efficient sorting algorithms for manycore GPUs", IPDPS 2009; Merrill & Grimshaw, "High
// performance and scalable radix sorting", Parallel Processing Letters 21(2), 2011): the
// algorithm for host spaces and for teams without warp primitives.
//
// The items are cut into tiles of team_size * items_per_thread consecutive items, the tiles
// into groups of consecutive tiles. Each pass is three kernels:
//
//   1. histogram: one team per group counts the digits of its group in team scratch and
//      writes the totals to a digit-major matrix counts(digit * groups + group);
//   2. scan: one exclusive scan of that matrix. Digit-major order puts all items of smaller
//      digits, then the same digit's items of earlier groups, before a group's first item
//      of each digit: the scanned entry is where that group writes its first item of it;
//   3. scatter: one team per group ranks its items stably by digit and writes them to
//      their place in the other buffer.
//
// Ranking: a one-thread team (host spaces) walks its group in order and places each item
// at the running offset of its digit, which makes the sort stable. A team of T threads
// works tile by tile: each thread counts a contiguous slice of the tile into its own column
// of per-(digit, thread) counters, and a scan over threads per digit gives every thread the
// offsets of its slice (the counter layout of Satish et al.).

#include <kfmm/detail/Math.hpp>
#include <kfmm/tree/detail/SortCommon.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <utility>
#include <vector>

namespace kfmm::tree::detail
{

/// How reduce-then-scan splits the n items: tiles of `tile` consecutive items, and groups
/// of `group` consecutive tiles (the last tile and the last group may be shorter).
struct SortLayout
{
  std::uint64_t n;
  std::uint64_t tile;
  std::uint64_t tiles;
  std::uint64_t group;
  std::uint64_t groups;

  /// Items [begin(g), end(g)) of group g.
  KOKKOS_INLINE_FUNCTION std::uint64_t begin(std::uint64_t g) const
  {
    return kfmm::detail::min(g * group, tiles) * tile;
  }
  KOKKOS_INLINE_FUNCTION std::uint64_t end(std::uint64_t g) const
  {
    return kfmm::detail::min(kfmm::detail::min((g + 1) * group, tiles) * tile, n);
  }
};

/// Splits n items: tiles of tileItems(options) items; groups of at most tiles_per_team
/// tiles, and at least four groups per team the space runs at once, for load balance.
template <class ExecutionSpace>
SortLayout reduceThenScanLayout(ExecutionSpace const &space, std::uint64_t n,
                                SortOptions const &options)
{
  SortLayout layout{};
  layout.n = n;
  layout.tile = tileItems<ExecutionSpace>(options);
  layout.tiles = (n + layout.tile - 1) / layout.tile;
  auto const fill =
      static_cast<std::uint64_t>(kfmm::detail::max(1, space.concurrency() / options.team_size));
  layout.group = kfmm::detail::max(
      std::uint64_t(1), kfmm::detail::min(static_cast<std::uint64_t>(options.tiles_per_team),
                                          layout.tiles / (4 * fill)));
  layout.groups = (layout.tiles + layout.group - 1) / layout.group;
  return layout;
}

/// Step 1: digit counts of each group, counts(d * groups + g).
template <class ExecutionSpace, class KeyView>
struct GroupHistogramKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Key = typename KeyView::non_const_value_type;
  using ScratchOffsets = Kokkos::View<SortOffset *, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryUnmanaged>;
  using Counts = Kokkos::View<SortOffset *, typename ExecutionSpace::memory_space>;

  KeyView keys;
  Counts counts;
  SortLayout layout;
  int shift;
  int radix;

  static std::size_t scratchBytes(int team_size, int radix)
  {
    return ScratchOffsets::shmem_size(static_cast<std::size_t>(team_size) * radix);
  }

  /// Thread t counts items t, t + T, ... of the group in its own column hist(d * T + t),
  /// so that no two threads update one counter.
  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const team_size = team.team_size();
    int const rank = team.team_rank();
    auto const g = static_cast<std::uint64_t>(team.league_rank());
    ScratchOffsets hist(team.team_scratch(0), team_size * radix);
    for (int d = 0; d < radix; ++d)
      hist(d * team_size + rank) = 0;
    Key const mask = static_cast<Key>(radix - 1);
    for (std::uint64_t i = layout.begin(g) + rank; i < layout.end(g); i += team_size)
      ++hist(static_cast<int>((keys(i) >> shift) & mask) * team_size + rank);
    team.team_barrier();
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, radix), [&](int d) {
      SortOffset total = 0;
      for (int t = 0; t < team_size; ++t)
        total += hist(d * team_size + t);
      counts(static_cast<std::size_t>(d) * layout.groups + g) = total;
    });
  }
};

/// Step 3: stable ranking and scatter to the sorted places. `offsets` is the scanned count
/// matrix: offsets(d * groups + g) is where group g's first item of digit d goes.
template <class ExecutionSpace, class KeyView, class ValueView>
struct GroupScatterKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Key = typename KeyView::non_const_value_type;
  using ScratchOffsets = Kokkos::View<SortOffset *, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryUnmanaged>;
  using Counts = Kokkos::View<SortOffset *, typename ExecutionSpace::memory_space>;

  KeyView keys_in;
  ValueView values_in;
  KeyView keys_out;
  ValueView values_out;
  Counts offsets;
  SortLayout layout;
  int shift;
  int bits;

  static std::size_t scratchBytes(int team_size, int radix)
  {
    return ScratchOffsets::shmem_size(radix) +
           (team_size > 1 ? ScratchOffsets::shmem_size(static_cast<std::size_t>(radix) * team_size)
                          : 0);
  }

  KOKKOS_INLINE_FUNCTION int digit(Key key) const
  {
    return static_cast<int>((key >> shift) & static_cast<Key>((Key(1) << bits) - 1));
  }

  /// A team of T threads works tile by tile, thread t on the t-th slice of the tile, with
  /// counters(d * T + t) = the thread's items of digit d, turned by a scan over t into the
  /// offset of the thread's first one.
  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
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
        SortOffset const to = running(digit(key))++;
        keys_out(to) = key;
        values_out(to) = values_in(i);
      }
      return;
    }

    ScratchOffsets counters(team.team_scratch(0), radix * team_size);
    std::uint64_t const slice = (layout.tile + team_size - 1) / team_size;
    for (std::uint64_t tile_begin = begin; tile_begin < end; tile_begin += layout.tile)
    {
      std::uint64_t const tile_end = kfmm::detail::min(tile_begin + layout.tile, end);
      std::uint64_t const mine_begin =
          kfmm::detail::min(tile_begin + static_cast<std::uint64_t>(rank) * slice, tile_end);
      std::uint64_t const mine_end = kfmm::detail::min(mine_begin + slice, tile_end);
      for (int d = 0; d < radix; ++d)
        counters(d * team_size + rank) = 0;
      for (std::uint64_t i = mine_begin; i < mine_end; ++i)
        ++counters(digit(keys_in(i)) * team_size + rank);
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
        SortOffset const to = counters(digit(key) * team_size + rank)++;
        keys_out(to) = key;
        values_out(to) = values_in(i);
      }
      team.team_barrier(); // the counters are reset for the next tile
    }
  }
};

/// Team scratch the reduce-then-scan kernels need, in bytes.
template <class ExecutionSpace, class KeyView, class ValueView>
std::size_t reduceThenScanScratchBytes(SortOptions const &options)
{
  int const radix = 1 << options.digit_bits;
  return kfmm::detail::max(
      GroupHistogramKernel<ExecutionSpace, KeyView>::scratchBytes(options.team_size, radix),
      GroupScatterKernel<ExecutionSpace, KeyView, ValueView>::scratchBytes(options.team_size,
                                                                           radix));
}

/// bits |= the bits of `mask` in which keys(i) differs from keys(0).
template <class KeyView>
struct VaryingBitsKernel
{
  using Key = typename KeyView::non_const_value_type;

  KeyView keys;
  Key mask;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, Key &bits) const
  {
    bits |= (keys(i) ^ keys(0)) & mask;
  }
};

/// The bits in which some key differs from keys(0), within `mask`.
template <class ExecutionSpace, class KeyView>
typename KeyView::non_const_value_type varyingBits(ExecutionSpace const &space, KeyView const &keys,
                                                   typename KeyView::non_const_value_type mask)
{
  using Key = typename KeyView::non_const_value_type;
  Key varying = 0;
  Kokkos::parallel_reduce("kfmm::sort::varying_bits",
                          Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
                              space, 0, static_cast<std::int64_t>(keys.extent(0))),
                          VaryingBitsKernel<KeyView>{keys, mask}, Kokkos::BOr<Key>(varying));
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

/// Step 2: counts(i) = the sum of the counts before i (the exclusive scan of the matrix).
template <class Counts>
struct CountScanKernel
{
  Counts counts;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, SortOffset &partial, bool final) const
  {
    SortOffset const count = counts(i);
    if (final)
      counts(i) = partial;
    partial += count;
  }
};

/// Sorts contiguous keys and values (unmanaged Views of them) by their bits [0, key_bits),
/// in passes over the digits in which the keys differ (one reduction finds them), each pass
/// from one buffer of the ping-pong to the other; returns whether the sorted pairs ended in
/// the `_out` buffers (an odd number of passes).
template <class ExecutionSpace, class KeyView, class ValueView, class Workspace>
bool reduceThenScanSort(ExecutionSpace const &space, KeyView keys_in, ValueView values_in,
                        KeyView keys_out, ValueView values_out, int key_bits,
                        SortOptions const &options, Workspace &workspace)
{
  using Histogram = GroupHistogramKernel<ExecutionSpace, KeyView>;
  using Scatter = GroupScatterKernel<ExecutionSpace, KeyView, ValueView>;
  using Policy = SortPolicy<ExecutionSpace>;

  using Key = typename KeyView::non_const_value_type;
  constexpr int max_bits = static_cast<int>(8 * sizeof(Key));
  Key mask = key_bits == max_bits ? static_cast<Key>(~Key(0))
                                  : static_cast<Key>((Key(1) << key_bits) - 1);
  if (workspace.begin_bit.data() != nullptr)
  {
    // The host spaces' sort waits for the device anyway (varyingBits).
    int begin = 0;
    Kokkos::deep_copy(space, Kokkos::View<int, Kokkos::HostSpace>(&begin), workspace.begin_bit);
    space.fence();
    if (begin > 0)
      mask &= begin >= max_bits ? Key(0) : static_cast<Key>(~Key(0) << begin);
  }
  auto const passes = planPasses(varyingBits(space, keys_in, mask), options.digit_bits);
  if (passes.empty())
    return false;

  auto const n = static_cast<std::uint64_t>(keys_in.extent(0));
  int const team_size = options.team_size;
  SortLayout const layout = reduceThenScanLayout(space, n, options);
  workspace.memory->reserve(space, workspace.counts,
                            (std::size_t(1) << options.digit_bits) * layout.groups,
                            "kfmm::sort::counts");
  auto const counts = workspace.counts;
  auto const groups = static_cast<int>(layout.groups);
  for (SortPass const &pass : passes)
  {
    int const radix = 1 << pass.bits;
    Kokkos::parallel_for(
        "kfmm::sort::histogram",
        Policy(space, groups, team_size)
            .set_scratch_size(0, Kokkos::PerTeam(Histogram::scratchBytes(team_size, radix))),
        Histogram{keys_in, counts, layout, pass.shift, radix});

    Kokkos::parallel_scan("kfmm::sort::scan",
                          Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>>(
                              space, 0, static_cast<std::int64_t>(radix) * groups),
                          CountScanKernel<decltype(workspace.counts)>{counts});

    Kokkos::parallel_for(
        "kfmm::sort::scatter",
        Policy(space, groups, team_size)
            .set_scratch_size(0, Kokkos::PerTeam(Scatter::scratchBytes(team_size, radix))),
        Scatter{keys_in, values_in, keys_out, values_out, counts, layout, pass.shift, pass.bits});
    std::swap(keys_in, keys_out);
    std::swap(values_in, values_out);
  }
  return passes.size() % 2 == 1;
}

} // namespace kfmm::tree::detail

#endif
