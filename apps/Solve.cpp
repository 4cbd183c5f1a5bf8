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

template Stats solve<float>(Space const &, Options const &, Particles<float> const &,
                            Positions const &, Results<float> const &);
template Stats solve<double>(Space const &, Options const &, Particles<double> const &,
                             Positions const &, Results<double> const &);

} // namespace kfmm::app
