// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_STAGE_HPP
#define KFMM_SOLVER_STAGE_HPP

// How a stage runs: inside a Kokkos Tools region, and with Options::time_stages fenced and
// timed into a list of stage times (Stats::stage_seconds).

#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/ScopedRegion.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <utility>

namespace kfmm::solver
{

/// Runs `work`, one stage named `name`, inside the profiling region "kfmm::Fmm::<name>"; with
/// `options.time_stages` fenced on `space`, its time added to `record`.
template <class ExecutionSpace, class Work>
void runStage(ExecutionSpace const &space, Options const &options, std::string const &name,
              decltype(Stats::stage_seconds) &record, Work &&work)
{
  detail::ScopedRegion region("kfmm::Fmm::" + name);
  Kokkos::Timer timer;
  std::forward<Work>(work)();
  if (!options.time_stages)
    return;
  space.fence();
  record.emplace_back(name, timer.seconds());
}

} // namespace kfmm::solver

#endif
