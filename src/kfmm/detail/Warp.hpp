// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_WARP_HPP
#define KFMM_DETAIL_WARP_HPP

// Warp primitives for kernels that rank or reduce within a 32-lane CUDA warp. A kernel uses
// them only where kfmm::detail::Tuning<ExecutionSpace>::has_warp_primitives is true; the
// other definitions keep host compilation passes well-formed and describe a one-lane warp.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::detail
{

/// The lanes of the calling warp whose low `Bits` bits of `value` equal this lane's, among
/// the lanes where `active` holds. All 32 lanes must call. One vote per bit, unrolled:
/// cheaper than a match instruction for digits of up to 8 bits.
template <int Bits>
KOKKOS_INLINE_FUNCTION unsigned warpPeers(unsigned value, bool active)
{
#if defined(__CUDA_ARCH__)
  unsigned peers = __ballot_sync(0xffffffffu, active);
#pragma unroll
  for (int b = 0; b < Bits; ++b)
  {
    unsigned const ones = __ballot_sync(0xffffffffu, (value >> b) & 1u);
    peers &= ((value >> b) & 1u) ? ones : ~ones;
  }
  return peers;
#else
  (void)value;
  return active ? 1u : 0u;
#endif
}

/// Index of the calling thread within its hardware warp.
KOKKOS_INLINE_FUNCTION int warpLane()
{
#if defined(__CUDA_ARCH__)
  return static_cast<int>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) &
                          31u);
#else
  return 0;
#endif
}

/// Index of the calling thread's warp within its block.
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
KOKKOS_INLINE_FUNCTION std::uint32_t warpBroadcast(std::uint32_t value, int source)
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

/// Sum of `value` over the calling lane's aligned group of `width` lanes (a power of two up
/// to 32), by butterfly shuffles; every lane of the group gets the sum. All 32 lanes must
/// call with the same width. A one-lane warp returns `value`.
template <class Real>
KOKKOS_INLINE_FUNCTION Real laneGroupSum(Real value, int width)
{
#if defined(__CUDA_ARCH__)
  for (int offset = width / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
#else
  (void)width;
#endif
  return value;
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

} // namespace kfmm::detail

#endif
