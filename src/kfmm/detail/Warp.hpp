// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_WARP_HPP
#define KFMM_DETAIL_WARP_HPP

// Warp primitives for kernels that rank or reduce within a 32-lane CUDA warp. A kernel uses
// them only where kfmm::tuning::Tuning<ExecutionSpace>::has_warp_primitives is true; the
// definitions here, for the host compilation passes, describe a one-lane warp; the 32-lane
// warp's, for CUDA's device pass, are the backend's (backends/cuda, CudaWarp.hpp).

#include <Kokkos_Core.hpp>

#include <cstdint>

#if defined(__CUDA_ARCH__)
#include <kfmm/backend/CudaWarp.hpp>
#else
namespace kfmm::detail
{

/// The lanes of the calling warp whose low `Bits` bits of `value` equal this lane's, among
/// the lanes where `active` holds. All 32 lanes must call. One vote per bit, unrolled:
/// cheaper than a match instruction for digits of up to 8 bits.
template <int Bits>
KOKKOS_INLINE_FUNCTION unsigned warpPeers(unsigned value, bool active)
{
  (void)value;
  return active ? 1u : 0u;
}

/// Index of the calling thread within its hardware warp.
KOKKOS_INLINE_FUNCTION int warpLane() { return 0; }

/// Index of the calling thread's warp within its block.
KOKKOS_INLINE_FUNCTION int warpIndex() { return 0; }

/// Orders the shared-memory accesses of the warp's lanes before and after this point.
KOKKOS_INLINE_FUNCTION void warpSync() {}

/// `value` of lane `source` of the calling warp (all 32 lanes must call).
KOKKOS_INLINE_FUNCTION std::uint32_t warpBroadcast(std::uint32_t value, int source)
{
  (void)source;
  return value;
}

KOKKOS_INLINE_FUNCTION int popCount(unsigned mask)
{
  int count = 0;
  for (; mask != 0; mask &= mask - 1)
    ++count;
  return count;
}

/// Sum of `value` over the calling lane's aligned group of `width` lanes (a power of two up
/// to 32), by butterfly shuffles; every lane of the group gets the sum. All 32 lanes must
/// call with the same width. A one-lane warp returns `value`.
template <class Real>
KOKKOS_INLINE_FUNCTION Real laneGroupSum(Real value, int width)
{
  (void)width;
  return value;
}

/// Index of the lowest set bit of a non-zero mask.
KOKKOS_INLINE_FUNCTION int lowestLane(unsigned mask)
{
  int lane = 0;
  while (((mask >> lane) & 1u) == 0)
    ++lane;
  return lane;
}

} // namespace kfmm::detail
#endif

#endif
