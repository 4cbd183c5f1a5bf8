// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_TUNING_HPP
#define KFMM_DETAIL_TUNING_HPP

// Launch parameters of kfmm's kernels, one struct per execution space. The kernels are the
// same source on every backend; only these numbers differ. This portable default suits the
// host spaces (a team is one thread that works on several targets at once so that the
// compiler can vectorise across them); backends/<name>/include/kfmm/backend/ specialises
// it for devices.

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

template <class ExecutionSpace>
struct Tuning
{
  /// All-pairs direct sum: threads per team, targets each thread keeps in registers, and
  /// sources staged in team scratch per tile.
  static constexpr int direct_team_size = 1;
  static constexpr int direct_targets_per_thread = 16;
  static constexpr int direct_source_tile = 512;
};

} // namespace kfmm::detail

#if defined(KOKKOS_ENABLE_CUDA)
#include <kfmm/backend/CudaTuning.hpp>
#endif

#endif
