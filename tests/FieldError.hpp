// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_FIELD_ERROR_HPP
#define KFMM_TESTS_FIELD_ERROR_HPP

// The accuracy tests' measure: the relative L2 error of a solver's field at every stride-th
// target against kfmm::directSum in double over all sources (or, for periodic boundaries,
// kfmm::periodic::ewaldSum).

#include <kfmm/Accuracy.hpp>
#include <kfmm/kernels/DirectSum.hpp>
#include <kfmm/periodic/EwaldSum.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "TestParticles.hpp"

namespace kfmm::test
{

/// sampled(t, :) = targets(t x stride, :) and approx(t, :) = field(t x stride, :). A named
/// functor, not a lambda: fieldError is instantiated alike in several of a test binary's
/// files, and nvcc's extended lambdas in a function template merged across files can copy
/// through another file's null helper pointer (.ci/check-library-lambdas.sh).
template <class Targets, class Field, class Sampled, class Approx>
struct GatherStrided
{
  Targets targets;
  Field field;
  Sampled sampled;
  Approx approx;
  std::size_t stride;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t t) const
  {
    for (int d = 0; d < 3; ++d)
    {
      sampled(t, d) = targets(t * stride, d);
      approx(t, d) = field(t * stride, d);
    }
  }
};

/// The relative L2 error of `field` (at `targets`) at every `stride`-th target against the
/// direct sum in double of `charges` at `sources`, with `softening`; with a `period` > 0,
/// against Ewald's sum in double of the sources' periodic lattice of that period.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Field>
double fieldError(ExecutionSpace const &space, Sources const &sources, Charges const &charges,
                  Targets const &targets, Field const &field, std::size_t stride,
                  double softening = 0, double period = 0)
{
  using Memory = typename ExecutionSpace::memory_space;
  std::size_t const ns = sources.extent(0), nt = targets.extent(0);
  std::size_t const k = (nt + stride - 1) / stride;
  Kokkos::View<double *[3], Memory> sources64("kfmm::test::sources64", ns);
  Kokkos::View<double *, Memory> q64("kfmm::test::q64", ns);
  Kokkos::deep_copy(space, sources64, sources);
  Kokkos::deep_copy(space, q64, charges);
  using Sampled = Kokkos::View<double *[3], Memory>;
  using Approx = Kokkos::View<typename Field::non_const_value_type *[3], Memory>;
  Sampled sampled("kfmm::test::sampled_targets", k);
  Approx approx("kfmm::test::approx", k);
  Kokkos::parallel_for(
      "kfmm::test::sample_targets", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
      GatherStrided<Targets, Field, Sampled, Approx>{targets, field, sampled, approx, stride});
  Kokkos::View<double *, Memory> exact_phi("kfmm::test::exact_phi", k);
  Kokkos::View<double *[3], Memory> exact_field("kfmm::test::exact_field", k);
  if (period > 0)
    kfmm::periodic::ewaldSum(space, period, sampled, sources64, q64, exact_phi, exact_field);
  else
    kfmm::directSum(space, sampled, sources64, q64, exact_phi, exact_field, softening);
  return kfmm::relativeL2Error(onHost(approx), onHost(exact_field));
}

} // namespace kfmm::test

#endif
