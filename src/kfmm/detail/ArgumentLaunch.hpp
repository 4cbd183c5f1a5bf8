// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_ARGUMENT_LAUNCH_HPP
#define KFMM_DETAIL_ARGUMENT_LAUNCH_HPP

// Policy traits that choose how Kokkos hands a CUDA kernel its functor. By default Kokkos
// 3.4 launches a functor of 512 bytes or more from constant memory, and before each such
// launch the host waits for the previous one to end (they share one constant buffer): the
// host queues nothing behind such a kernel, and the GPU idles for a launch's latency before
// the next one. With the light-weight hint Kokkos passes a functor of up to 4 KiB as a
// kernel argument instead, which needs no wait. Other backends ignore both traits.
//
// Measured on an H200 (perf/RESULTS.md, 2026-11-25): the solver's team kernels, its count of
// near pairs, the sort's kernels and the lists' traversal rounds take the hint; of them only
// the grouped M2L, the count, the sort's histograms and the rounds are that large (M2L 0.92 ->
// 0.84 ms, lists 0.50-0.58 -> 0.39-0.40 ms at 1e6 uniform, order 7). As arguments the rounds
// took 83 registers instead of 79 and ran two blocks per multiprocessor instead of three
// (lists 28.1 -> 32.4 ms at 1e8) until Tuning::ListsLaunchBounds capped them. The near field
// keeps the default: it was 1 % slower as an argument (Nsight Compute).

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

using ArgumentLaunch = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;

/// Kokkos' own choice, for kernels that ran slower with their functor as an argument.
using DefaultLaunch = Kokkos::Experimental::WorkItemProperty::None_t;

} // namespace kfmm::detail

#endif
