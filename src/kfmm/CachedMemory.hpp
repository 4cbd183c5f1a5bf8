// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_CACHED_MEMORY_HPP
#define KFMM_CACHED_MEMORY_HPP

// The memory that kfmm keeps between solvers (detail/Workspace.hpp): a destroyed kfmm::Fmm
// (or a finished kfmm::evaluate) leaves its arrays, up to a backend's
// Tuning::workspace_cache_bytes, to the next solver, so that building one allocates nothing.

#include <kfmm/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kfmm
{

/// Device (or host) memory of MemorySpace that finished solvers left for the next ones.
template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
std::size_t cachedMemoryBytes()
{
  return detail::WorkspacePool<MemorySpace>::shared().idleBytes();
}

/// Releases that memory, e.g. before the caller's own large allocations. Solvers alive keep
/// theirs; Kokkos::finalize releases it all.
template <class MemorySpace = Kokkos::DefaultExecutionSpace::memory_space>
void releaseCachedMemory()
{
  detail::WorkspacePool<MemorySpace>::shared().releaseIdle();
}

} // namespace kfmm

#endif
