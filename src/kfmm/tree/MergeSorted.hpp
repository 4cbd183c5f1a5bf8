// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_MERGE_SORTED_HPP
#define KFMM_TREE_MERGE_SORTED_HPP

// Orders of (key, value) pairs that are mostly sorted already: one long sorted run and a few
// other pairs. The distributed solver's trees are such: a rank's particles arrive from each
// rank in key order, most of them from itself (distributed/MortonPartition.hpp), and its
// local essential tree adds the few particles and cells the other ranks send to its own
// sorted particles (distributed/LocalEssentialTree.hpp). The few are sorted by the radix
// sort (RadixSort.hpp); the long run then merges with them in one pass over it:
//  1. each of the few finds, by a binary search of the long run, how many of its pairs
//     precede it, and goes to that count plus its own index among the few;
//  2. those counts, as a histogram over the long run, scanned, give how many of the few
//     precede each pair of the long run, which goes to its index plus that number.
// Pairs are ordered by key, then by value: with distinct values, such as the particles'
// indices that the trees sort, the result is what the stable radix sort gives (equal keys
// in the order of their values), so the trees are the same either way.

#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Streaming.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kfmm::tree
{
namespace detail
{

/// Whether pair (key_a, value_a) comes before pair (key_b, value_b).
KOKKOS_INLINE_FUNCTION bool pairBefore(MortonKey key_a, std::uint32_t value_a, MortonKey key_b,
                                       std::uint32_t value_b)
{
  return key_a < key_b || (key_a == key_b && value_a < value_b);
}

/// Step 1: few pair j at its place, its place in the long run counted in `preceded`.
template <class MemorySpace>
struct PlaceFewPairs
{
  Kokkos::View<MortonKey *, MemorySpace> long_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> long_values;
  Kokkos::View<MortonKey *, MemorySpace> few_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> few_values;
  /// preceded(i): how many of the few come right before long pair i
  Kokkos::View<std::uint32_t *, MemorySpace> preceded;
  Kokkos::View<MortonKey *, MemorySpace> keys;
  Kokkos::View<std::uint32_t *, MemorySpace> values;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t j) const
  {
    MortonKey const key = few_keys(j);
    std::uint32_t const value = few_values(j);
    std::size_t lo = 0, hi = long_keys.extent(0);
    while (lo < hi)
    {
      std::size_t const mid = lo + (hi - lo) / 2;
      if (pairBefore(long_keys(mid), long_values(mid), key, value))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo < long_keys.extent(0))
      Kokkos::atomic_add(&preceded(lo), std::uint32_t(1));
    keys(lo + j) = key;
    values(lo + j) = value;
  }
};

/// Step 2: long pair i at its place, after the few that precede it (the scan of `preceded`).
template <class MemorySpace>
struct PlaceLongPairs
{
  Kokkos::View<MortonKey *, MemorySpace> long_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> long_values;
  Kokkos::View<std::uint32_t *, MemorySpace> preceded;
  Kokkos::View<MortonKey *, MemorySpace> keys;
  Kokkos::View<std::uint32_t *, MemorySpace> values;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, std::size_t &before, bool final) const
  {
    before += preceded(i);
    if (final)
    {
      keys(i + before) = long_keys(i);
      values(i + before) = long_values(i);
    }
  }
};

/// Gathers the pairs of `keys` outside [run_begin, run_end), each with its index as value.
template <class MemorySpace>
struct GatherOutsideRun
{
  Kokkos::View<MortonKey *, MemorySpace> keys;
  std::size_t run_begin;
  std::size_t run_length;
  Kokkos::View<MortonKey *, MemorySpace> few_keys;
  Kokkos::View<std::uint32_t *, MemorySpace> few_values;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t j) const
  {
    std::size_t const i = j < run_begin ? j : j + run_length;
    few_keys(j) = keys(i);
    few_values(j) = static_cast<std::uint32_t>(i);
  }
};

} // namespace detail

/// The pairs (long_keys, long_values) and (few_keys, few_values), each ordered by key and then
/// value, merged into (keys, values), of their total length, ordered the same way (see the top
/// of this file). The inputs are not changed; `memory` lends the merge's counts.
template <class ExecutionSpace, class MemorySpace>
void mergeSortedPairs(ExecutionSpace const &space,
                      Kokkos::View<MortonKey *, MemorySpace> const &long_keys,
                      Kokkos::View<std::uint32_t *, MemorySpace> const &long_values,
                      Kokkos::View<MortonKey *, MemorySpace> const &few_keys,
                      Kokkos::View<std::uint32_t *, MemorySpace> const &few_values,
                      Kokkos::View<MortonKey *, MemorySpace> const &keys,
                      Kokkos::View<std::uint32_t *, MemorySpace> const &values,
                      kfmm::detail::Workspace<MemorySpace> &memory)
{
  std::size_t const n_long = long_keys.extent(0);
  std::size_t const n_few = few_keys.extent(0);
  kfmm::detail::ScopedRegion region("kfmm::merge_sorted");
  auto preceded = memory.template take<Kokkos::View<std::uint32_t *, MemorySpace>>(
      space, "kfmm::merge::preceded", n_long);
  if (n_long > 0)
    kfmm::detail::zeroFill(space, "kfmm::merge::zero_preceded", preceded);
  Kokkos::parallel_for("kfmm::merge::place_few",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, n_few),
                       detail::PlaceFewPairs<MemorySpace>{long_keys, long_values, few_keys,
                                                          few_values, preceded, keys, values});
  Kokkos::parallel_scan(
      "kfmm::merge::place_long", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n_long),
      detail::PlaceLongPairs<MemorySpace>{long_keys, long_values, preceded, keys, values});
  memory.give(preceded);
}

/// Sorts `keys`, made of consecutive runs of the given lengths each in key order, as
/// sortPairs sorts them with the values 0, 1, ...: into `sorted_keys` and `order` (the index
/// in `keys` of each), equal keys in index order. The longest run merges with the others,
/// which the radix sort orders first (see the top of this file). `keys` is not changed.
template <class ExecutionSpace, class MemorySpace>
void sortRuns(ExecutionSpace const &space, Kokkos::View<MortonKey *, MemorySpace> const &keys,
              std::vector<std::int64_t> const &run_lengths,
              Kokkos::View<MortonKey *, MemorySpace> const &sorted_keys,
              Kokkos::View<std::uint32_t *, MemorySpace> const &order,
              kfmm::detail::Workspace<MemorySpace> &memory)
{
  using Keys = Kokkos::View<MortonKey *, MemorySpace>;
  using Values = Kokkos::View<std::uint32_t *, MemorySpace>;
  std::size_t const n = keys.extent(0);
  std::size_t run_begin = 0, run_length = 0, begin = 0;
  for (auto const length : run_lengths)
  {
    if (static_cast<std::size_t>(length) > run_length)
    {
      run_begin = begin;
      run_length = static_cast<std::size_t>(length);
    }
    begin += static_cast<std::size_t>(length);
  }
  kfmm::detail::require(begin == n, "kfmm::tree::sortRuns",
                        "the runs hold " + std::to_string(begin) + " keys, not " +
                            std::to_string(n));
  std::size_t const n_few = n - run_length;
  auto few_keys = memory.template take<Keys>(space, "kfmm::merge::few_keys", n_few);
  auto few_values = memory.template take<Values>(space, "kfmm::merge::few_values", n_few);
  auto long_values = memory.template take<Values>(space, "kfmm::merge::long_values", run_length);
  kfmm::detail::streamFor(
      "kfmm::merge::gather_few", space, n_few,
      detail::GatherOutsideRun<MemorySpace>{keys, run_begin, run_length, few_keys, few_values});
  kfmm::detail::streamFor("kfmm::merge::long_indices", space, run_length,
                          detail::IdentityPermutation<MemorySpace>{long_values, run_begin});
  detail::sortPairs(space, few_keys, few_values, 3 * max_level, memory);
  Keys const long_keys =
      Kokkos::subview(keys, Kokkos::make_pair(run_begin, run_begin + run_length));
  mergeSortedPairs(space, long_keys, long_values, few_keys, few_values, sorted_keys, order, memory);
  memory.give(few_keys);
  memory.give(few_values);
  memory.give(long_values);
}

} // namespace kfmm::tree

#endif
