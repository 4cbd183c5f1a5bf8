// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_TEAM_POLICIES_HPP
#define KFMM_DETAIL_TEAM_POLICIES_HPP

// The launch policies of the solver's team kernels (solver/, farfield/Plan.hpp). Dynamic
// scheduling: on the host a thread takes the next team when it is done, since teams (cells,
// blocks of the grouped M2L, leaves) differ in work by their lists' lengths; GPUs schedule
// blocks so anyway and ignore it. `LaunchBounds` caps a kernel's registers on GPUs (Tuning).
// `Launch`: functors are kernel arguments by default (detail/ArgumentLaunch.hpp).

#include <kfmm/detail/ArgumentLaunch.hpp>
#include <kfmm/tuning/Tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kfmm::detail
{

template <class ExecutionSpace, class LaunchBounds = Kokkos::LaunchBounds<>,
          class Launch = ArgumentLaunch>
using TeamPolicy =
    Kokkos::TeamPolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>, LaunchBounds, Launch>;

/// A team policy for the expansion operators at `order` over `teams` cells, with `scratch`
/// bytes, under `LaunchBounds`: the backend's team size for the order.
template <class LaunchBounds = Kokkos::LaunchBounds<>, class ExecutionSpace>
TeamPolicy<ExecutionSpace, LaunchBounds> expansionPolicy(ExecutionSpace const &space, int order,
                                                         int teams, std::size_t scratch)
{
  return TeamPolicy<ExecutionSpace, LaunchBounds>(
             space, teams, tuning::Tuning<ExecutionSpace>::expansionTeamSize(order))
      .set_scratch_size(0, Kokkos::PerTeam(scratch));
}

} // namespace kfmm::detail

#endif
