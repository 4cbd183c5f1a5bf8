// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_WARP_HPP
#define KFMM_BACKEND_CUDA_WARP_HPP

// The warp primitives of kfmm/detail/Warp.hpp for CUDA's device pass: a 32-lane warp, its
// votes, shuffles and lane indices.

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
  unsigned peers = __ballot_sync(0xffffffffu, active);
#pragma unroll
  for (int b = 0; b < Bits; ++b)
  {
    unsigned const ones = __ballot_sync(0xffffffffu, (value >> b) & 1u);
    peers &= ((value >> b) & 1u) ? ones : ~ones;
  }
  return peers;
}

/// Index of the calling thread within its hardware warp.
KOKKOS_INLINE_FUNCTION int warpLane()
{
  return static_cast<int>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) &
                          31u);
}

/// Index of the calling thread's warp within its block.
KOKKOS_INLINE_FUNCTION int warpIndex()
{
  return static_cast<int>((threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) >>
                          5u);
}

/// Orders the shared-memory accesses of the warp's lanes before and after this point.
KOKKOS_INLINE_FUNCTION void warpSync() { __syncwarp(); }

/// `value` of lane `source` of the calling warp (all 32 lanes must call).
KOKKOS_INLINE_FUNCTION std::uint32_t warpBroadcast(std::uint32_t value, int source)
{
  return __shfl_sync(0xffffffffu, value, source);
}

KOKKOS_INLINE_FUNCTION int popCount(unsigned mask) { return __popc(mask); }

/// Sum of `value` over the calling lane's aligned group of `width` lanes (a power of two up
/// to 32), by butterfly shuffles; every lane of the group gets the sum. All 32 lanes must
/// call with the same width. A one-lane warp returns `value`.
template <class Real>
KOKKOS_INLINE_FUNCTION Real laneGroupSum(Real value, int width)
{
  for (int offset = width / 2; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

/// Index of the lowest set bit of a non-zero mask.
KOKKOS_INLINE_FUNCTION int lowestLane(unsigned mask) { return __ffs(mask) - 1; }
} // namespace kfmm::detail

#endif
