// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_COHERENT_LOAD_HPP
#define KFMM_DETAIL_COHERENT_LOAD_HPP

// Reading a word that other threads of the same kernel write, without serialising on it. Here
// the portable form; CUDA's device pass takes the backend's (backends/cuda,
// CudaCoherentLoad.hpp).

#include <Kokkos_Core.hpp>

#if defined(__CUDA_ARCH__)
#include <kfmm/backend/CudaCoherentLoad.hpp>
#else
namespace kfmm::detail
{

/// The word at `address` as some thread last wrote it (with a plain store or an atomic): a
/// relaxed atomic load.
template <class T>
KOKKOS_INLINE_FUNCTION T coherentLoad(T *address)
{
  return __atomic_load_n(address, __ATOMIC_RELAXED);
}

} // namespace kfmm::detail
#endif

#endif
