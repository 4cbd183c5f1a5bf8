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

  /// A status word as another team last wrote it. On CUDA a volatile load: it bypasses the
  /// non-coherent L1 and, unlike an atomic, does not serialise the polling threads with the
  /// writer in L2. Elsewhere an atomic read.
  KOKKOS_INLINE_FUNCTION static std::uint64_t load(std::uint64_t *address)
  {
#if defined(__CUDA_ARCH__)
    return *static_cast<std::uint64_t volatile *>(address);
#else
    return Kokkos::atomic_fetch_add(address, std::uint64_t(0));
#endif
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
};

} // namespace kfmm::tree::detail

#endif
