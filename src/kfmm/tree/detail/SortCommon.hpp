// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_DETAIL_SORT_COMMON_HPP
#define KFMM_TREE_DETAIL_SORT_COMMON_HPP

// What both radix sort algorithms (ReduceThenScanSort.hpp, OnesweepSort.hpp) share: launch
// options, the reusable workspace, and small labelled copy and fill kernels.

#include <kfmm/detail/ArgumentLaunch.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Streaming.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kfmm::tree::detail
{

/// Counts and offsets: one call sorts at most 2^32 - 1 pairs.
using SortOffset = std::uint32_t;

/// How each digit pass is organised (see RadixSort.hpp).
enum class SortAlgorithm
{
  reduce_then_scan, ///< per pass: histogram kernel, scan, scatter kernel
  onesweep          ///< all histograms up front; per pass one kernel with decoupled look-back
};

/// Launch parameters of sortPairs. The public entry points take them from
/// kfmm::tuning::Tuning; tests set them to exercise other algorithms and team shapes.
struct SortOptions
{
  SortAlgorithm algorithm;
  int digit_bits;     ///< bits sorted per pass: 2^digit_bits histogram bins
  int team_size;      ///< threads per team
  int tiles_per_team; ///< reduce-then-scan: tiles per group (one histogram team each)
};

template <class ExecutionSpace>
SortOptions defaultSortOptions()
{
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  return {Tune::sort_onesweep ? SortAlgorithm::onesweep : SortAlgorithm::reduce_then_scan,
          Tune::sort_digit_bits, Tune::sort_team_size, Tune::sort_tiles_per_team};
}

/// One pass: the digit of bits [shift, shift + bits).
struct SortPass
{
  int shift;
  int bits;
};

/// Items of a tile: what one team ranks at a time.
template <class ExecutionSpace>
std::uint64_t tileItems(SortOptions const &options)
{
  return static_cast<std::uint64_t>(options.team_size) *
         kfmm::tuning::Tuning<ExecutionSpace>::sort_items_per_thread;
}

/// Team policy of the sort kernels: on CUDA bounded so that the compiler keeps registers
/// for sort_min_teams_per_sm teams of sort_team_size threads on each multiprocessor;
/// functors are kernel arguments (kfmm/detail/ArgumentLaunch.hpp).
template <class ExecutionSpace>
using SortPolicy = Kokkos::TeamPolicy<
    ExecutionSpace,
    Kokkos::LaunchBounds<(kfmm::tuning::Tuning<ExecutionSpace>::sort_min_teams_per_sm > 0
                              ? kfmm::tuning::Tuning<ExecutionSpace>::sort_team_size
                              : 0),
                         kfmm::tuning::Tuning<ExecutionSpace>::sort_min_teams_per_sm>,
    kfmm::detail::ArgumentLaunch>;

template <class T, class Memory>
using Unmanaged1D = Kokkos::View<T *, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Words of team scratch that hold `count` items of type T (staging areas are 8-byte
/// aligned whatever the key and value types).
template <class T>
KOKKOS_INLINE_FUNCTION std::size_t scratchWords(std::size_t count)
{
  return (count * sizeof(T) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t);
}

/// Where a sort may start, known on the device only: the keys need no order in their bits
/// below begin_bit() (an octree's build finds them, Octree.hpp); a View of no data: bit 0.
template <class MemorySpace>
using BeginBit = Kokkos::View<int, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// Device memory a sort needs besides the caller's arrays, from `memory`: allocations of
/// its own (kfmm::tree::RadixSorter keeps them across calls, so that repeated sorts, a tree
/// rebuilt every time step, allocate only when N grows), or a solver's pooled workspace,
/// to which release() gives them back (kfmm/detail/Workspace.hpp).
template <class Key, class Value, class MemorySpace>
struct SortWorkspace
{
  kfmm::detail::Workspace<MemorySpace> *memory = &kfmm::detail::Workspace<MemorySpace>::direct();
  Kokkos::View<Key *, MemorySpace> keys;     ///< the other buffer of the key ping-pong
  Kokkos::View<Value *, MemorySpace> values; ///< the other buffer of the value ping-pong
  /// Reduce-then-scan: the count matrix. Onesweep: every pass's digit counts, then offsets.
  Kokkos::View<SortOffset *, MemorySpace> counts;
  /// Onesweep: every tile's per-digit count or inclusive prefix, with a tag (OnesweepSort.hpp).
  Kokkos::View<std::uint64_t *, MemorySpace> tile_status;
  /// Onesweep: per pass, the next tile a team claims.
  Kokkos::View<SortOffset *, MemorySpace> next_tile;
  /// Onesweep: per digit position, its pass's route (OnesweepSort.hpp's PassRoute), then
  /// whether the sorted pairs end in the buffers.
  Kokkos::View<SortOffset *, MemorySpace> pass_routes;
  /// The caller's: where the sort may start (no data: at bit 0). Not released.
  BeginBit<MemorySpace> begin_bit;

  /// Ends the use of every array.
  void release()
  {
    memory->give(keys);
    memory->give(values);
    memory->give(counts);
    memory->give(tile_status);
    memory->give(next_tile);
    memory->give(pass_routes);
  }

  std::size_t bytes() const
  {
    return keys.span() * sizeof(Key) + values.span() * sizeof(Value) +
           counts.span() * sizeof(SortOffset) + tile_status.span() * sizeof(std::uint64_t) +
           (next_tile.span() + pass_routes.span()) * sizeof(SortOffset);
  }
};

/// dst(i) = src(i).
template <class Source, class Destination>
struct CopyItemsKernel
{
  Source src;
  Destination dst;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { dst(i) = src(i); }
};

/// dst(i) = src(i) for every i (any layouts, one memory space).
template <class ExecutionSpace, class Source, class Destination>
void copyItems(ExecutionSpace const &space, std::string const &label, Source const &src,
               Destination const &dst)
{
  kfmm::detail::streamFor(label, space, src.extent(0),
                          CopyItemsKernel<Source, Destination>{src, dst});
}

/// view(i) = 0.
template <class View>
struct ClearItemsKernel
{
  using Value = typename View::non_const_value_type;

  View view;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { view(i) = Value(0); }
};

/// view(i) = 0 for i < count.
template <class ExecutionSpace, class View>
void clearItems(ExecutionSpace const &space, std::string const &label, View const &view,
                std::size_t count)
{
  kfmm::detail::streamFor(label, space, count, ClearItemsKernel<View>{view});
}

} // namespace kfmm::tree::detail

#endif
