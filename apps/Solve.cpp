// SPDX-License-Identifier: BSD-3-Clause
#include "Solve.hpp"

#include <kfmm/kfmm.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::app
{

template <class Real>
Stats solve(Space const &space, Options const &given, Particles<Real> const &particles,
            Positions const &targets, Results<Real> const &results)
{
  // The program decides itself, in its own words, what unresolved particles mean (Stats).
  Options options = given;
  options.allow_unresolved = true;
  // And what a field error above the tolerance means (checkedStatus), with --check-samples.
  options.allow_missed_tolerance = true;
  // kfmm::evaluate returns when its kernels have ended, so the results are complete.
  if (targets.data() == particles.positions.data())
    return kfmm::evaluate(space, particles.positions, particles.charges, results.potential,
                          results.field, options);
  return kfmm::evaluate(space, particles.positions, particles.charges, targets, results.potential,
                        results.field, options);
}

template <class Real>
Stats calibrate(Space const &space, Options const &given, Particles<Real> const &particles,
                Positions const &targets, Results<Real> const &results, Options &chosen,
                Calibration &calibration)
{
  // As solve(): the program judges unresolved particles and a missed tolerance itself.
  Options options = given;
  options.allow_unresolved = true;
  options.allow_missed_tolerance = true;
  calibration = targets.data() == particles.positions.data()
                    ? kfmm::calibrate(space, particles.positions, particles.charges,
                                      results.potential, results.field, options)
                    : kfmm::calibrate(space, particles.positions, particles.charges, targets,
                                      results.potential, results.field, options);
  chosen = calibration.options;
  chosen.allow_unresolved = given.allow_unresolved;
  chosen.allow_missed_tolerance = given.allow_missed_tolerance;
  return calibration.stats;
}

template Stats solve<float>(Space const &, Options const &, Particles<float> const &,
                            Positions const &, Results<float> const &);
template Stats solve<double>(Space const &, Options const &, Particles<double> const &,
                             Positions const &, Results<double> const &);
template Stats calibrate<float>(Space const &, Options const &, Particles<float> const &,
                                Positions const &, Results<float> const &, Options &,
                                Calibration &);
template Stats calibrate<double>(Space const &, Options const &, Particles<double> const &,
                                 Positions const &, Results<double> const &, Options &,
                                 Calibration &);

} // namespace kfmm::app
