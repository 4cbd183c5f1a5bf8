// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_RADIX_SORT_HPP
#define KFMM_TREE_RADIX_SORT_HPP

// Stable least-significant-digit radix sort of (key, value) pairs as Kokkos team kernels:
// the sort that orders particles by Morton key and groups the interaction lists by target.
//
// Each pass sorts one digit of `digit_bits` bits, stably, so that after the last pass the
// keys are ordered by all bits (LSD radix sort). Two ways to run the passes share the
// ranking ideas and differ in how a team learns where its items go:
// - reduce-then-scan (detail/ReduceThenScanSort.hpp): per pass a histogram kernel, a scan
//   and a scatter kernel; the host spaces' algorithm;
// - onesweep (detail/OnesweepSort.hpp): all passes' histograms from one read of the keys,
//   then one kernel per pass whose tiles find their offsets by decoupled look-back; the
//   GPU's algorithm. kfmm::tuning::Tuning<ExecutionSpace>::sort_onesweep picks.
//
// Only the digits that matter are sorted: a digit that every key shares would give a
// histogram with one bin holding all N items, and its pass would be the identity. Each
// algorithm finds such digits before any pass:
// - reduce-then-scan reads the keys once for the bits in which some key differs from the
//   first one (the OR over i of keys(i) XOR keys(0)), with one host synchronisation for
//   the whole sort; its passes start at the lowest of these bits and stop past the
//   highest, as `begin_bit`/`end_bit` do in CUB's DeviceRadixSort;
// - onesweep counts the digits of every digit position from bit 0 in its one histogram
//   read anyway, and its pass kernels skip, on the device, the positions where one digit
//   holds all N keys: the host never waits for it.
//
// Keys and values ping-pong between the caller's arrays and one buffer of each. The buffers
// and the counters live in a workspace: kfmm::tree::RadixSorter keeps it across calls,
// kfmm::tree::sortPairs allocates it for one call.

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/tree/detail/OnesweepSort.hpp>
#include <kfmm/tree/detail/ReduceThenScanSort.hpp>
#include <kfmm/tree/detail/SortCommon.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace kfmm::tree
{
namespace detail
{

/// Most passes a sort of `Key`s can have with `digit_bits`-bit digits.
template <class Key>
int maxPasses(int digit_bits)
{
  return (static_cast<int>(8 * sizeof(Key)) + digit_bits - 1) / digit_bits;
}

/// Team scratch the kernels of `options` need at most, in bytes.
template <class ExecutionSpace, class KeyView, class ValueView>
std::size_t sortScratchBytes(SortOptions const &options)
{
  using Key = typename KeyView::non_const_value_type;
  if (options.algorithm == SortAlgorithm::onesweep)
    return onesweepScratchBytes<ExecutionSpace, KeyView, ValueView>(
        options, maxPasses<Key>(options.digit_bits));
  return reduceThenScanScratchBytes<ExecutionSpace, KeyView, ValueView>(options);
}

/// Largest team the kernels of `options` can launch with.
template <class ExecutionSpace, class KeyView, class ValueView>
int sortMaxTeamSize(ExecutionSpace const &space, SortOptions const &options)
{
  constexpr int ipt = kfmm::tuning::Tuning<ExecutionSpace>::sort_items_per_thread;
  SortPolicy<ExecutionSpace> const policy(space, 1, Kokkos::AUTO);
  Kokkos::ParallelForTag const tag;
  if (options.algorithm == SortAlgorithm::onesweep)
    return kfmm::detail::min(
        policy.team_size_max(DigitHistogramsKernel<ExecutionSpace, KeyView, ipt>{}, tag),
        policy.team_size_max(OnesweepPassKernel<ExecutionSpace, KeyView, ValueView, ipt>{}, tag));
  return kfmm::detail::min(
      policy.team_size_max(GroupHistogramKernel<ExecutionSpace, KeyView>{}, tag),
      policy.team_size_max(GroupScatterKernel<ExecutionSpace, KeyView, ValueView>{}, tag));
}

/// Host-side checks of the launch parameters against the backend's limits; throws
/// kfmm::Exception naming the parameter.
template <class ExecutionSpace, class KeyView, class ValueView>
void validateSortOptions(ExecutionSpace const &space, std::string const &where,
                         SortOptions const &options)
{
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  using kfmm::detail::formatNumber;
  using kfmm::detail::require;
  require(options.digit_bits >= 1 && options.digit_bits <= 16, where,
          "sort option 'digit_bits' must be in [1, 16], got " + formatNumber(options.digit_bits));
  require(options.team_size >= 1, where,
          "sort option 'team_size' must be >= 1, got " + formatNumber(options.team_size));
  require(options.tiles_per_team >= 1, where,
          "sort option 'tiles_per_team' must be >= 1, got " + formatNumber(options.tiles_per_team));
  if (options.algorithm == SortAlgorithm::onesweep && options.team_size > 1)
  {
    bool const power_of_two = (options.team_size & (options.team_size - 1)) == 0;
    require(Tune::has_warp_primitives && options.team_size % 32 == 0 && power_of_two, where,
            std::string("sort option 'team_size' must be 1 for onesweep on ") +
                ExecutionSpace::name() +
                (Tune::has_warp_primitives ? " or a power of two and a multiple of 32" : "") +
                ", got " + formatNumber(options.team_size));
  }
  SortPolicy<ExecutionSpace> const policy(space, 1, Kokkos::AUTO);
  auto const limit = static_cast<std::size_t>(policy.scratch_size_max(0));
  auto const bytes = sortScratchBytes<ExecutionSpace, KeyView, ValueView>(options);
  require(bytes <= limit, where,
          "sort options (digit_bits " + formatNumber(options.digit_bits) + ", team_size " +
              formatNumber(options.team_size) + ") need " + formatNumber(bytes) +
              " bytes of team scratch; " + ExecutionSpace::name() + " allows " +
              formatNumber(limit));
  int const max_team = sortMaxTeamSize<ExecutionSpace, KeyView, ValueView>(space, options);
  require(options.team_size <= max_team, where,
          "sort option 'team_size' is " + formatNumber(options.team_size) + "; " +
              ExecutionSpace::name() + " allows at most " + formatNumber(max_team));
  // Warp ranking votes on the tuned digit width (OnesweepPassKernel::vote_bits) and counts
  // a tile's items in 16 bits.
  if (options.algorithm == SortAlgorithm::onesweep && options.team_size > 1)
  {
    require(options.digit_bits <= Tune::sort_digit_bits, where,
            "sort option 'digit_bits' must be at most " + formatNumber(Tune::sort_digit_bits) +
                " for onesweep with warp ranking, got " + formatNumber(options.digit_bits));
    require(tileItems<ExecutionSpace>(options) < (std::uint64_t(1) << 16), where,
            "sort option 'team_size' " + formatNumber(options.team_size) + " times " +
                formatNumber(Tune::sort_items_per_thread) +
                " items per thread must be below 65536 for onesweep with warp ranking");
  }
}

/// The tuned launch parameters, with the team halved while its scratch does not fit (wide
/// values on the GPU).
template <class ExecutionSpace, class KeyView, class ValueView>
SortOptions fittedSortOptions(ExecutionSpace const &space)
{
  SortOptions options = defaultSortOptions<ExecutionSpace>();
  auto const limit = static_cast<std::size_t>(
      SortPolicy<ExecutionSpace>(space, 1, Kokkos::AUTO).scratch_size_max(0));
  int const smallest = options.algorithm == SortAlgorithm::onesweep && options.team_size > 1 ? 32
                                                                                             : 1;
  while (options.team_size > smallest &&
         sortScratchBytes<ExecutionSpace, KeyView, ValueView>(options) > limit)
    options.team_size /= 2;
  return options;
}

/// The sort behind kfmm::tree::sortPairs and RadixSorter, with explicit launch parameters
/// (`options`; null: the tuned ones) and workspace.
template <class ExecutionSpace, class Keys, class Values, class Workspace>
void sortPairs(ExecutionSpace const &space, Keys const &keys, Values const &values, int key_bits,
               SortOptions const *options, Workspace &workspace)
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
                        "argument 'key_bits' must be in [0, " +
                            kfmm::detail::formatNumber(max_bits) + "], got " +
                            kfmm::detail::formatNumber(key_bits));
  kfmm::detail::requireExtent(where, "values", values.extent(0), keys.extent(0));
  auto const n = keys.extent(0);
  kfmm::detail::require(n <= std::numeric_limits<SortOffset>::max(), where,
                        "argument 'keys' has " + kfmm::detail::formatNumber(n) +
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
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::keys_contiguous"), n);
    copyItems(space, "kfmm::sort::gather_keys", keys, key_copy);
    key_items = KeyView(key_copy.data(), n);
  }
  if (values.span_is_contiguous())
    value_items = ValueView(values.data(), n);
  else
  {
    value_copy = decltype(value_copy)(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::sort::values_contiguous"), n);
    copyItems(space, "kfmm::sort::gather_values", values, value_copy);
    value_items = ValueView(value_copy.data(), n);
  }

  workspace.memory->reserve(space, workspace.keys, n, "kfmm::sort::keys_buffer");
  workspace.memory->reserve(space, workspace.values, n, "kfmm::sort::values_buffer");
  KeyView const key_buffer(workspace.keys.data(), n);
  ValueView const value_buffer(workspace.values.data(), n);
  if (chosen.algorithm == SortAlgorithm::onesweep)
    onesweepSort(space, key_items, value_items, key_buffer, value_buffer, key_bits, chosen,
                 workspace);
  else if (reduceThenScanSort(space, key_items, value_items, key_buffer, value_buffer, key_bits,
                              chosen, workspace))
  {
    copyItems(space, "kfmm::sort::copy_back_keys", key_buffer, key_items);
    copyItems(space, "kfmm::sort::copy_back_values", value_buffer, value_items);
  }

  if (key_copy.data() != nullptr)
    copyItems(space, "kfmm::sort::scatter_keys", key_copy, keys);
  if (value_copy.data() != nullptr)
    copyItems(space, "kfmm::sort::scatter_values", value_copy, values);
}

/// sortPairs with explicit launch parameters and a workspace for this call only.
template <class ExecutionSpace, class Keys, class Values>
void sortPairs(ExecutionSpace const &space, Keys const &keys, Values const &values, int key_bits,
               SortOptions const &options)
{
  SortWorkspace<typename Keys::value_type, typename Values::value_type,
                typename ExecutionSpace::memory_space>
      workspace;
  sortPairs(space, keys, values, key_bits, &options, workspace);
}

/// sortPairs with the sort's arrays taken from `memory` (a solver's workspace) and given
/// back when the sort's kernels are queued; the keys' bits below `begin_bit` (where it has
/// data) need no order.
template <class ExecutionSpace, class Keys, class Values>
void sortPairs(ExecutionSpace const &space, Keys const &keys, Values const &values, int key_bits,
               kfmm::detail::Workspace<typename ExecutionSpace::memory_space> &memory,
               BeginBit<typename ExecutionSpace::memory_space> const &begin_bit = {})
{
  SortWorkspace<typename Keys::value_type, typename Values::value_type,
                typename ExecutionSpace::memory_space>
      workspace;
  workspace.memory = &memory;
  workspace.begin_bit = begin_bit;
  sortPairs(space, keys, values, key_bits, static_cast<SortOptions const *>(nullptr), workspace);
  workspace.release();
}

} // namespace detail

/// A radix sorter that keeps its workspace (a buffer of N keys, one of N values, and
/// counters) between calls, so that sorting again, e.g. a tree rebuilt every time step,
/// allocates nothing unless N grew. sort() is the sort of kfmm::tree::sortPairs.
template <class Key, class Value, class MemorySpace>
class RadixSorter
{
public:
  /// Sorts as kfmm::tree::sortPairs does; `keys` and `values` hold Key and Value.
  template <class ExecutionSpace, class Keys, class Values>
  void sort(ExecutionSpace const &space, Keys const &keys, Values const &values,
            int key_bits = static_cast<int>(8 * sizeof(Key)))
  {
    static_assert(std::is_same<typename Keys::value_type, Key>::value &&
                      std::is_same<typename Values::value_type, Value>::value,
                  "kfmm::tree::RadixSorter::sort: keys and values must hold the sorter's Key "
                  "and Value types");
    static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                  "kfmm::tree::RadixSorter::sort: the sorter's memory space must be "
                  "accessible from the execution space");
    detail::sortPairs(space, keys, values, key_bits,
                      static_cast<detail::SortOptions const *>(nullptr), workspace_);
  }

  /// Bytes of device memory the workspace holds now.
  std::size_t workspaceBytes() const { return workspace_.bytes(); }

private:
  detail::SortWorkspace<Key, Value, MemorySpace> workspace_;
};

/// Sorts `keys` ascending by their bits [0, key_bits), in place and stably, and permutes
/// `values` with them: pairs with equal keys keep their relative order. Bits at and above
/// `key_bits` are ignored (pass keys < 2^key_bits, e.g. 63 for kfmm's Morton keys); only
/// the digits in which the keys differ are sorted. Runs asynchronously on `space`: on the
/// GPU without a host synchronisation, on host spaces after one that finds those digits
/// (RadixSort.hpp's file comment). A workspace of N keys and N values is allocated
/// for the call; kfmm::tree::RadixSorter keeps one across calls.
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
               int key_bits = static_cast<int>(8 * sizeof(typename Keys::value_type)))
{
  RadixSorter<typename Keys::value_type, typename Values::value_type,
              typename ExecutionSpace::memory_space>()
      .sort(space, keys, values, key_bits);
}

} // namespace kfmm::tree

#endif
