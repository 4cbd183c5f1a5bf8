// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_COHERENT_LOAD_HPP
#define KFMM_BACKEND_CUDA_COHERENT_LOAD_HPP

// kfmm/detail/CoherentLoad.hpp for CUDA's device pass.

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// The word at `address` as some thread last wrote it (with a plain store or an atomic): a
/// volatile load, which bypasses the non-coherent L1 and, unlike an atomic, does not serialise
/// the reading threads with the writers in L2.
template <class T>
KOKKOS_INLINE_FUNCTION T coherentLoad(T *address)
{
  return *static_cast<T volatile *>(address);
}

} // namespace kfmm::detail

#endif
