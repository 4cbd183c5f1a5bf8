// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_TUNING_HPP
#define KFMM_BACKEND_CUDA_TUNING_HPP

// Included by kfmm/detail/Tuning.hpp when Kokkos has CUDA: launch parameters for GPUs,
// where a team is a thread block and each thread owns one target.

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

template <class ExecutionSpace>
struct Tuning;

template <>
struct Tuning<Kokkos::Cuda>
{
  static constexpr int direct_team_size = 128;
  static constexpr int direct_targets_per_thread = 1;
  static constexpr int direct_source_tile = 128;
};

} // namespace kfmm::detail

#endif
