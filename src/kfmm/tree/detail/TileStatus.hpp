// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_DETAIL_TILE_STATUS_HPP
#define KFMM_TREE_DETAIL_TILE_STATUS_HPP

// The status words of a decoupled look-back (Merrill & Garland, "Single-pass parallel prefix
// scan with decoupled look-back", NVIDIA NVR-2016-002), shared by the radix sort's passes
// (OnesweepSort.hpp) and the lists' traversal rounds (tree/InteractionLists.hpp). A word holds
// a tag in its top 8 bits and a count below: tag 2 * pass + 1 marks a tile's own count
// ("aggregate"), 2 * pass + 2 its inclusive prefix; a smaller tag is a word of an earlier pass
// (or round), not yet written in this one, so that the words are cleared once per sort or
// traversal rather than once per pass.

#include <kfmm/detail/CoherentLoad.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::tree::detail
{

/// The tile status words of the decoupled look-back.
struct TileStatus
{
  static constexpr int tag_shift = 56;
  static constexpr std::uint64_t count_mask = (std::uint64_t(1) << tag_shift) - 1;

  KOKKOS_INLINE_FUNCTION static std::uint64_t aggregateTag(int pass)
  {
    return 2 * static_cast<std::uint64_t>(pass) + 1;
  }
  KOKKOS_INLINE_FUNCTION static std::uint64_t inclusiveTag(int pass)
  {
    return 2 * static_cast<std::uint64_t>(pass) + 2;
  }
  KOKKOS_INLINE_FUNCTION static std::uint64_t word(std::uint64_t tag, std::uint64_t count)
  {
    return (tag << tag_shift) | count;
  }

  /// A status word as another team last wrote it (kfmm::detail::coherentLoad: the polling
  /// threads do not serialise with the writer).
  KOKKOS_INLINE_FUNCTION static std::uint64_t load(std::uint64_t *address)
  {
    return kfmm::detail::coherentLoad(address);
  }

  /// Publishes a status word with one 64-bit store: tag and count arrive together.
  KOKKOS_INLINE_FUNCTION static void store(std::uint64_t *address, std::uint64_t value)
  {
#if defined(__CUDA_ARCH__)
    *static_cast<std::uint64_t volatile *>(address) = value;
#else
    Kokkos::atomic_exchange(address, value);
#endif
  }

  /// Publishes the count of tile `tile` in pass `pass` (an aggregate), for the look-backs of
  /// later tiles, before its own look-back. Tile 0 publishes nothing here: its look-back has
  /// no tile to wait for and publishes its inclusive prefix at once. `at(j)` is the address
  /// of tile j's status word.
  template <class Address>
  KOKKOS_INLINE_FUNCTION static void publishAggregate(Address const &at, std::uint64_t tile,
                                                      int pass, std::uint64_t count)
  {
    if (tile > 0)
      store(at(tile), word(aggregateTag(pass), count));
  }

  /// The sum of the counts of the tiles before `tile` in pass `pass`, by decoupled look-back;
  /// publishes this tile's inclusive prefix (that sum plus `count`, the tile's own). The
  /// caller publishes its aggregate first (publishAggregate). `at(j)` is the address of tile
  /// j's status word.
  ///
  /// The walk reads the words of `window` earlier tiles at once: the tiles just before this
  /// one are usually still looking back themselves, so the walk crosses several counts
  /// before it meets a prefix, and reading them one after the other made the look-back's
  /// serial L2 round trips the radix sort's largest stall (docs/TUNING.md, "The radix
  /// sort").
  template <int window, class Address>
  KOKKOS_INLINE_FUNCTION static std::uint64_t lookBack(Address const &at, std::uint64_t tile,
                                                       int pass, std::uint64_t count)
  {
    std::uint64_t const aggregate = aggregateTag(pass);
    std::uint64_t const inclusive = inclusiveTag(pass);
    std::uint64_t before = 0;
    bool found = false;
    for (std::uint64_t j = tile; !found && j > 0;)
    {
      // Tiles j - 1, j - 2, ...: reading past tile 0 never happens, it publishes a prefix.
      int const reads = j < static_cast<std::uint64_t>(window) ? static_cast<int>(j) : window;
      // Both loops unroll on the GPU, so that the words stay in registers.
      std::uint64_t words[window];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int k = 0; k < window; ++k)
        if (k < reads)
          words[k] = load(at(j - 1 - k));
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int k = 0; k < window; ++k)
        if (!found && k < reads)
        {
          while ((words[k] >> tag_shift) < aggregate)
            words[k] = load(at(j - 1 - k));
          before += words[k] & count_mask;
          found = (words[k] >> tag_shift) == inclusive;
        }
      j -= static_cast<std::uint64_t>(reads);
    }
    store(at(tile), word(inclusive, before + count));
    return before;
  }
};

} // namespace kfmm::tree::detail

#endif
