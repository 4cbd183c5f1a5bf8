// SPDX-License-Identifier: BSD-3-Clause
// Options::check_samples, the API's sampled check (solver/SampledCheck.hpp): the errors it
// measures on the device equal those of an independent host computation (kfmm::relativeL2Error
// against kfmm::directSum in double on the same samples) for one set, separate targets and a
// softened problem; with Options::tolerance a miss throws kfmm::ToleranceError unless
// Options::allow_missed_tolerance; charges of any scale give a finite error. Every enabled
// execution space, float and double.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <string>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::isFloat;
using kfmm::test::onHost;

/// The relative L2 errors (potential, field) of `phi` and `field` (at `targets`) on the
/// samples the check takes (target t * n / k for t < k) against kfmm::directSum in double
/// over all `sources`, computed apart from the solver: kfmm::relativeL2Error on the host.
template <class Config, class Sources, class Charges, class Targets>
kfmm::test::ResultErrors hostErrors(
    Sources const &x, Charges const &charges, Targets const &targets,
    Kokkos::View<typename Config::real_type *, typename Config::memory_space> const &phi,
    Kokkos::View<typename Config::real_type *[3], typename Config::memory_space> const &field,
    std::size_t k, double softening)
{
  using Space = typename Config::execution_space;
  using Memory = typename Config::memory_space;
  using Real = typename Config::real_type;
  Space space;
  std::size_t const n = targets.extent(0);
  std::size_t const ns = x.extent(0);
  Kokkos::View<double *[3], Memory> sources("kfmm::test::sources64", ns);
  Kokkos::View<double *, Memory> q("kfmm::test::q64", ns);
  Kokkos::deep_copy(space, sources, x);
  Kokkos::deep_copy(space, q, charges);
  Kokkos::View<double *[3], Memory> at("kfmm::test::sampled_targets", k);
  Kokkos::View<Real *, Memory> approx_phi("kfmm::test::approx_phi", k);
  Kokkos::View<Real *[3], Memory> approx_field("kfmm::test::approx_field", k);
  Kokkos::parallel_for(
      "kfmm::test::sample", Kokkos::RangePolicy<Space>(space, 0, k), KOKKOS_LAMBDA(std::size_t t) {
        std::size_t const i = t * n / k;
        approx_phi(t) = phi(i);
        for (int d = 0; d < 3; ++d)
        {
          at(t, d) = targets(i, d);
          approx_field(t, d) = field(i, d);
        }
      });
  Kokkos::View<double *, Memory> exact_phi("kfmm::test::exact_phi", k);
  Kokkos::View<double *[3], Memory> exact_field("kfmm::test::exact_field", k);
  kfmm::directSum(space, at, sources, q, exact_phi, exact_field, softening);
  return {kfmm::relativeL2Error(onHost(approx_phi), onHost(exact_phi)),
          kfmm::relativeL2Error(onHost(approx_field), onHost(exact_field))};
}

/// Whether the stage list holds `name`.
bool ranStage(kfmm::Stats const &stats, std::string const &name)
{
  for (auto const &s : stats.stage_seconds)
    if (s.first == name)
      return true;
  return false;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("the sampled check measures the errors of a host computation",
                        "[fmm][check]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  enum class Case
  {
    one_set,
    targets,
    softened
  };
  auto const problem = GENERATE(Case::one_set, Case::targets, Case::softened);
  CAPTURE(int(problem));
  std::size_t const n = 3000, k = 150;
  kfmm::test::Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 3, p.x, p.q);
  kfmm::Options options;
  options.order = 4; // an error well above rounding, so that the comparison means something
  options.check_samples = static_cast<int>(k);
  options.time_stages = true;
  options.softening = problem == Case::softened ? 0.01 : 0.0;

  kfmm::test::ResultErrors host;
  kfmm::Stats stats;
  if (problem == Case::targets)
  {
    // 1000 probes uniform in [-1, 1]^3, inside the cloud: the samples are targets 0, 6, 13..
    std::size_t const nt = 1000;
    auto const targets = kfmm::test::generated<TestType>(kfmm::Distribution::uniform, nt, 8);
    Kokkos::View<Real *, Memory> phi("kfmm::test::phi_t", nt);
    Kokkos::View<Real *[3], Memory> field("kfmm::test::field_t", nt);
    stats = kfmm::evaluate(space, p.x, p.q, targets, phi, field, options);
    host = hostErrors<TestType>(p.x, p.q, targets, phi, field, k, 0.0);
  }
  else
  {
    // The solver's own evaluate, twice: the check runs on each evaluation.
    kfmm::Fmm<Real, Memory> fmm(space, p.x, options);
    fmm.evaluate(space, p.q, p.phi, p.field);
    fmm.evaluate(space, p.q, p.phi, p.field);
    stats = fmm.stats();
    host = hostErrors<TestType>(p.x, p.q, p.x, p.phi, p.field, k, options.softening);
  }
  CAPTURE(stats.sampled_potential_error, host.potential, stats.sampled_field_error, host.field);
  CHECK(stats.sampled_targets == k);
  CHECK(ranStage(stats, "sampled check"));
  CHECK_FALSE(stats.tolerance_missed);
  // Not rounding alone: order 4 leaves an error above float's rounding in either precision.
  CHECK(host.field > 1e-7);
  // The same samples, the same positions and charges, each reference in double: the two
  // measurements agree to 1e-6 of the error (the references' rounding, summed in another
  // order), far inside the few per cent that would still make the check useful.
  CHECK(std::abs(stats.sampled_potential_error - host.potential) <= 1e-6 * host.potential);
  CHECK(std::abs(stats.sampled_field_error - host.field) <= 1e-6 * host.field);
}

TEMPLATE_LIST_TEST_CASE("a tolerance the solver misses throws kfmm::ToleranceError unless "
                        "allowed",
                        "[fmm][check][tolerance]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  // An ionic lattice, 12^3 alternating charges of +-1 (docs/ACCURACY.md, the limits; the
  // program's test cli_tolerance_missed): its fields are small differences of large opposite
  // contributions, and with leaves of 16 the expansions' error, small against those, is some
  // 30 times a tolerance of 1e-3 against the net field.
  auto const lattice = kfmm::test::ionicLattice<TestType>(12);
  auto const &[x, q, phi, field] = lattice;
  std::size_t const n = x.extent(0);
  kfmm::Options options;
  options.tolerance = 1e-3;
  options.leaf_size = 16;
  options.check_samples = 2000; // more than there are: every particle

  SECTION("kfmm::evaluate throws, with the error and the tolerance")
  {
    bool thrown = false;
    try
    {
      kfmm::evaluate(space, x, q, phi, field, options);
    }
    catch (kfmm::ToleranceError const &e)
    {
      thrown = true;
      CAPTURE(e.what());
      CHECK(e.error() > 1e-2);
      CHECK(e.tolerance() == 1e-3);
      CHECK(e.samples() == n);
      CHECK_THAT(e.what(), Catch::Matchers::StartsWith("kfmm::evaluate: the relative L2 field "
                                                       "error measured on 1728 sampled targets"));
      CHECK_THAT(e.what(), Catch::Matchers::ContainsSubstring("above option 'tolerance' 0.001"));
    }
    CHECK(thrown);
  }
  SECTION("kfmm::Fmm::evaluate throws, and its Stats hold the error")
  {
    kfmm::Fmm<Real, Memory> fmm(space, x, options);
    CHECK_THROWS_AS(fmm.evaluate(space, q, phi, field), kfmm::ToleranceError);
    CHECK(fmm.stats().tolerance_missed);
    CHECK(fmm.stats().sampled_field_error > 1e-2);
  }
  SECTION("allowed, the results come back marked")
  {
    options.allow_missed_tolerance = true;
    auto const stats = kfmm::evaluate(space, x, q, phi, field, options);
    CHECK(stats.tolerance_missed);
    CHECK(stats.sampled_targets == n);
    CHECK(stats.sampled_field_error > 1e-2);
    double const host = hostErrors<TestType>(x, q, x, phi, field, n, 0.0).field;
    CAPTURE(stats.sampled_field_error, host);
    CHECK(std::abs(stats.sampled_field_error - host) <= 1e-6 * host);
  }
}

TEMPLATE_LIST_TEST_CASE("a tolerance the solver meets passes the check", "[fmm][check][tolerance]",
                        kfmm::test::Configs)
{
  typename TestType::execution_space space;
  std::size_t const n = 20000;
  kfmm::test::Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::uniform, 2, p.x, p.q);
  kfmm::Options options;
  options.tolerance = 1e-3;
  options.check_samples = 100;
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  CAPTURE(stats.sampled_field_error);
  CHECK(stats.sampled_targets == 100);
  CHECK(stats.sampled_field_error > 0);
  CHECK(stats.sampled_field_error <= 1e-3);
  CHECK_FALSE(stats.tolerance_missed);
}

TEMPLATE_LIST_TEST_CASE("charges of any scale give a finite error", "[fmm][check][range]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  // Charges of both signs, 1e200 and 1e-200 in double, 1e30 and 1e-30 in float (whose
  // results must fit in float), against the same charges of magnitude about 1.
  double const scale = GENERATE(1e200, 1e-200);
  double const charge_scale = isFloat<Real> ? (scale > 1 ? 1e30 : 1e-30) : scale;
  CAPTURE(charge_scale);
  std::size_t const n = 2000, k = 100;
  kfmm::test::Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::uniform, 4, p.x, p.q);
  auto const fill = [&](double s) {
    auto h = onHost(p.q);
    for (std::size_t i = 0; i < n; ++i)
      h(i) = static_cast<Real>(s * (i % 3 == 0 ? -1.0 : 1.0) * (1 + double(i % 7) / 7));
    Kokkos::deep_copy(p.q, h);
  };
  kfmm::Options options;
  options.order = 4;
  options.check_samples = static_cast<int>(k);
  fill(1);
  auto const unit = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  fill(charge_scale);
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  auto const host = hostErrors<TestType>(p.x, p.q, p.x, p.phi, p.field, k, 0.0);
  CAPTURE(unit.sampled_field_error, stats.sampled_field_error, host.field);
  CHECK(std::isfinite(stats.sampled_potential_error));
  CHECK(std::isfinite(stats.sampled_field_error));
  CHECK(stats.sampled_field_error > 0);
  // The host's measurement, which scales its sums the same way, to 1e-6 of the error; the
  // unit charges' error to 1 % (the charges' rounding into the solver's units differs).
  CHECK(std::abs(stats.sampled_field_error - host.field) <= 1e-6 * host.field);
  CHECK(std::abs(stats.sampled_field_error - unit.sampled_field_error) <=
        1e-2 * unit.sampled_field_error);
}

TEMPLATE_LIST_TEST_CASE("check_samples is validated", "[fmm][check][validation]",
                        kfmm::test::Spaces)
{
  typename TestType::execution_space space;
  kfmm::test::Particles<TestType> p(10);
  kfmm::Options options;
  options.check_samples = -1;
  CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                    "kfmm::evaluate: option 'check_samples' must be >= 0 (0: no check), got -1");
}
