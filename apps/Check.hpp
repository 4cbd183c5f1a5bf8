// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_CHECK_HPP
#define KFMM_APPS_CHECK_HPP

// The accuracy check: the solver's potential and field at sampled targets (the particles, or
// the --targets positions) against the direct sum over all particles, in double.

#include "Problem.hpp"
#include "Report.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kfmm::app
{

/// `k` distinct indices of 0 .. n-1 (all of them when k >= n), increasing; the same for the
/// same seed on every platform.
std::vector<std::size_t> sampleIndices(std::size_t n, std::size_t k, std::uint64_t seed);

/// The period of the options' periodic boundaries; 0 without.
inline double periodOf(Options const &options)
{
  return options.periodic.enabled ? options.periodic.side[0] : 0.0;
}

/// Relative L2 errors of `results` (at `targets`) at `samples` sampled targets against
/// kfmm::directSum of `particles` in double, with the same softening, or with a `period` > 0
/// against Ewald's sum (kfmm::periodic::ewaldSum). Long checks show their progress on stderr
/// when `progress`.
template <class Real>
CheckResult checkAccuracy(Space const &space, Particles<Real> const &particles,
                          Positions const &targets, Results<Real> const &results,
                          std::size_t samples, std::uint64_t seed, double softening, double period,
                          bool progress);

} // namespace kfmm::app

#endif
