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
// The solver's team kernels, its count of near pairs, the sort's kernels and the lists'
// traversal rounds take the hint; of them the grouped M2L, the count, the sort's histograms
// and the rounds have functors that large, and run sooner for it. As arguments the rounds
// take a few more registers, which Tuning::ListsLaunchBounds caps so that as many blocks
// share a multiprocessor as before. The near field keeps the default, which was faster for
// it (docs/TUNING.md, "Launches with the functor as an argument").

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

using ArgumentLaunch = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;

/// Kokkos' own choice, for kernels that ran slower with their functor as an argument.
using DefaultLaunch = Kokkos::Experimental::WorkItemProperty::None_t;

} // namespace kfmm::detail

#endif
