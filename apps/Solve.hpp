// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_SOLVE_HPP
#define KFMM_APPS_SOLVE_HPP

// The one place where the program calls the solver (apps/Solve.cpp), and the settings that
// depend on which solver that is.

#include "Problem.hpp"
#include "Report.hpp"

#include <kfmm/Calibration.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>

#include <cstddef>

namespace kfmm::app
{

/// Particles of the default problem (no --n, no --input): seconds on a 2-core CPU
/// build, and the GPU figure for a GPU build.
constexpr std::size_t default_particles_cpu = 2000000;
constexpr std::size_t default_particles_gpu = 10000000;

/// Potential and field of `particles` at `targets`, into `results` (the targets' order kept),
/// with `options`; `targets` is particles.positions itself for the particles on each other.
/// Fenced before it returns. The stages it reports in Stats::stage_seconds form the report's
/// time table. Particles that the precision does not resolve are not an error here: Stats
/// says so (precision_limited), and the caller decides.
template <class Real>
Stats solve(Space const &space, Options const &options, Particles<Real> const &particles,
            Positions const &targets, Results<Real> const &results);

/// solve() with the order and theta for the options' tolerance measured on the problem
/// (kfmm::calibrate): the chosen setting's results in `results`, what it chose and measured
/// in `calibration`, and the options to solve with again in `chosen`. Without a row that
/// meets the tolerance, the results of the least error measured (the Calibration says so).
template <class Real>
Stats calibrate(Space const &space, Options const &options, Particles<Real> const &particles,
                Positions const &targets, Results<Real> const &results, Options &chosen,
                Calibration &calibration);

} // namespace kfmm::app

#endif
