// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_COHERENT_LOAD_HPP
#define KFMM_DETAIL_COHERENT_LOAD_HPP

// Reading a word that other threads of the same kernel write, without serialising on it.

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// The word at `address` as some thread last wrote it (with a plain store or an atomic). On
/// CUDA a volatile load: it bypasses the non-coherent L1 and, unlike an atomic, does not
/// serialise the reading threads with the writers in L2. Elsewhere a relaxed atomic load.
template <class T>
KOKKOS_INLINE_FUNCTION T coherentLoad(T *address)
{
#if defined(__CUDA_ARCH__)
  return *static_cast<T volatile *>(address);
#else
  return __atomic_load_n(address, __ATOMIC_RELAXED);
#endif
}

} // namespace kfmm::detail

#endif
