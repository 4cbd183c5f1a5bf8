// SPDX-License-Identifier: BSD-3-Clause
// Targets that are not the sources (kfmm::evaluate with targets, kfmm::Fmm of sources and
// targets): the relative L2 error of potential and field at the targets against the
// double-precision direct sum, fmm and treecode, float and double, on every execution space;
// targets equal to the sources give the results of the evaluation of one set; empty sets and
// bad targets.
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

#include <algorithm>
#include <cmath>
#include <limits>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::isFloat;
using kfmm::test::onHost;

/// Results at n targets in the config's memory.
template <class Config>
struct TargetResults
{
  Kokkos::View<typename Config::real_type *, typename Config::memory_space> phi;
  Kokkos::View<typename Config::real_type *[3], typename Config::memory_space> field;

  explicit TargetResults(std::size_t n) : phi("kfmm::test::phi", n), field("kfmm::test::field", n)
  {
  }
};

/// Relative L2 errors of `got` against the direct sum in double of `charges` at `sources` on
/// `targets`.
template <class Config, class Sources, class Charges, class Targets>
kfmm::test::ResultErrors errorsAgainstDirectSum(Sources const &sources, Charges const &charges,
                                                Targets const &targets,
                                                TargetResults<Config> const &got)
{
  typename Config::execution_space space;
  using Memory = typename Config::memory_space;
  auto const ns = sources.extent(0);
  auto const nt = targets.extent(0);
  Kokkos::View<double *[3], Memory> xs("kfmm::test::sources64", ns);
  Kokkos::View<double *[3], Memory> xt("kfmm::test::targets64", nt);
  Kokkos::View<double *, Memory> q("kfmm::test::q64", ns);
  Kokkos::View<double *, Memory> phi("kfmm::test::phi64", nt);
  Kokkos::View<double *[3], Memory> field("kfmm::test::field64", nt);
  Kokkos::deep_copy(space, xs, sources);
  Kokkos::deep_copy(space, xt, targets);
  Kokkos::deep_copy(space, q, charges);
  kfmm::directSum(space, xt, xs, q, phi, field);
  return {kfmm::relativeL2Error(onHost(got.phi), onHost(phi)),
          kfmm::relativeL2Error(onHost(got.field), onHost(field))};
}

} // namespace

TEMPLATE_LIST_TEST_CASE("targets that are not the sources reach the required accuracy",
                        "[fmm][targets][accuracy]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  // Targets around the sources (a larger cube than theirs), inside them (a surface through
  // the cloud) and fewer or more of them than sources.
  auto const targets_from = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::sphere);
  auto const num_targets = GENERATE(std::size_t(700), std::size_t(2500));
  kfmm::Options options;
  options.method = method;
  options.leaf_size = 32;
  // The thresholds of the one-set accuracy test (tstFmm.cpp): double 1e-10 at order 18 and
  // theta 0.4, float 1e-5 at order 8 and theta 0.5.
  options.order = isFloat<Real> ? 8 : 18;
  options.theta = isFloat<Real> ? 0.5 : 0.4;
  double const required = isFloat<Real> ? 1e-5 : 1e-10;
  CAPTURE(kfmm::methodName(method), kfmm::distributionName(targets_from), num_targets);

  std::size_t const num_sources = 1500;
  kfmm::test::Particles<TestType> sources(num_sources);
  kfmm::generate(space, kfmm::Distribution::plummer, 3, sources.x, sources.q);
  auto const targets = kfmm::test::generated<TestType>(targets_from, num_targets, 8);
  TargetResults<TestType> got(num_targets);
  auto const stats =
      kfmm::evaluate(space, sources.x, sources.q, targets, got.phi, got.field, options);
  auto const [potential_error, field_error] =
      errorsAgainstDirectSum(sources.x, sources.q, targets, got);
  CAPTURE(potential_error, field_error, stats.p2p_interactions);
  CHECK(potential_error <= required);
  CHECK(field_error <= required);
  // Not a near field in disguise: the far field did part of the work.
  CHECK(stats.m2l_interactions + stats.m2p_interactions > 0);
  CHECK(stats.p2p_interactions < num_sources * num_targets);
}

TEMPLATE_LIST_TEST_CASE("targets equal to the sources give the results of one set",
                        "[fmm][targets]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  auto const acceptance = GENERATE(kfmm::Acceptance::theta, kfmm::Acceptance::classic);
  kfmm::Options options;
  options.method = method;
  options.acceptance = acceptance;
  options.leaf_size = 24;
  CAPTURE(kfmm::methodName(method), kfmm::acceptanceName(acceptance));
  std::size_t const n = 3000;
  kfmm::test::Particles<TestType> one_set(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 4, one_set.x, one_set.q);
  auto const stats =
      kfmm::evaluate(space, one_set.x, one_set.q, one_set.phi, one_set.field, options);

  // The same positions in a View of their own: a second tree, the same as the first.
  kfmm::test::Positions<TestType> targets("kfmm::test::targets", n);
  Kokkos::deep_copy(space, targets, one_set.x);
  TargetResults<TestType> got(n);
  auto const stats_targets =
      kfmm::evaluate(space, one_set.x, one_set.q, targets, got.phi, got.field, options);

  if (acceptance == kfmm::Acceptance::classic)
  {
    // The same interactions, summed in another order: equal to rounding.
    CHECK(stats_targets.p2p_interactions == stats.p2p_interactions);
    CHECK(stats_targets.m2l_interactions == stats.m2l_interactions);
    CHECK(stats_targets.m2p_interactions == stats.m2p_interactions);
    double const rounding = isFloat<Real> ? 1e-6 : 1e-14;
    double const potential_difference = kfmm::relativeL2Error(onHost(got.phi), onHost(one_set.phi));
    double const field_difference = kfmm::relativeL2Error(onHost(got.field), onHost(one_set.field));
    CAPTURE(potential_difference, field_difference);
    CHECK(potential_difference <= rounding);
    CHECK(field_difference <= rounding);
    return;
  }
  // The theta rule adds, for targets of their own, the test of unequal cells
  // (docs/ACCURACY.md): no pair it accepts is one the one set's rule rejects, so it translates
  // at least as much in the near field, and its errors against the direct sum in double are at
  // most the one set's (with 1 % for the two results' rounding).
  CHECK(stats_targets.p2p_interactions >= stats.p2p_interactions);
  TargetResults<TestType> one_set_results(n);
  Kokkos::deep_copy(space, one_set_results.phi, one_set.phi);
  Kokkos::deep_copy(space, one_set_results.field, one_set.field);
  auto const [one_potential, one_field] =
      errorsAgainstDirectSum(one_set.x, one_set.q, one_set.x, one_set_results);
  auto const [two_potential, two_field] =
      errorsAgainstDirectSum(one_set.x, one_set.q, targets, got);
  CAPTURE(one_potential, one_field, two_potential, two_field);
  CHECK(two_potential <= 1.01 * one_potential);
  CHECK(two_field <= 1.01 * one_field);
}

TEMPLATE_LIST_TEST_CASE("a solver of sources and targets evaluates new charges like a fresh one",
                        "[fmm][targets][reuse]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  kfmm::test::Particles<TestType> sources(1200);
  kfmm::generate(space, kfmm::Distribution::uniform, 6, sources.x, sources.q);
  auto const targets = kfmm::test::generated<TestType>(kfmm::Distribution::ellipsoid, 900, 7);
  kfmm::Options options;
  options.order = 6;
  kfmm::Fmm<Real, Memory> fmm(space, sources.x, targets, options);
  CHECK(fmm.size() == 1200);
  CHECK(fmm.numTargets() == 900);

  TargetResults<TestType> first(900), second(900), fresh(900);
  fmm.evaluate(space, sources.q, first.phi, first.field);
  // Other charges, of both signs.
  Kokkos::View<Real *, Memory> q2("kfmm::test::q2", 1200);
  Kokkos::parallel_for(
      "kfmm::test::other_charges",
      Kokkos::RangePolicy<typename TestType::execution_space>(space, 0, 1200),
      KOKKOS_LAMBDA(int i) { q2(i) = (i % 3 == 0 ? -1 : 1) * sources.q(i); });
  fmm.evaluate(space, q2, second.phi, second.field);
  kfmm::evaluate(space, sources.x, q2, targets, fresh.phi, fresh.field, options);
  CHECK(kfmm::relativeL2Error(onHost(second.phi), onHost(fresh.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(second.field), onHost(fresh.field)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(first.phi), onHost(second.phi)) > 0);
}

TEMPLATE_LIST_TEST_CASE("empty target or source sets, and bad targets", "[fmm][targets][edge]",
                        kfmm::test::Spaces)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  kfmm::test::Particles<TestType> sources(500);
  kfmm::generate(space, kfmm::Distribution::uniform, 2, sources.x, sources.q);
  auto const targets = kfmm::test::generated<TestType>(kfmm::Distribution::uniform, 300, 9);

  SECTION("no targets: nothing to write")
  {
    kfmm::test::Positions<TestType> none("kfmm::test::none", 0);
    TargetResults<TestType> got(0);
    CHECK_NOTHROW(kfmm::evaluate(space, sources.x, sources.q, none, got.phi, got.field));
  }
  SECTION("no sources: every result zero")
  {
    kfmm::test::Particles<TestType> none(0);
    TargetResults<TestType> got(300);
    Kokkos::deep_copy(got.phi, Real(7));
    Kokkos::deep_copy(got.field, Real(7));
    kfmm::evaluate(space, none.x, none.q, targets, got.phi, got.field);
    auto const phi = onHost(got.phi);
    auto const field = onHost(got.field);
    double largest = 0;
    for (std::size_t i = 0; i < 300; ++i)
      largest = std::max({largest, std::abs(double(phi(i))), std::abs(double(field(i, 0))),
                          std::abs(double(field(i, 1))), std::abs(double(field(i, 2)))});
    CHECK(largest == 0);
  }
  SECTION("a NaN target is named as a target")
  {
    auto const bad = kfmm::test::generated<TestType>(kfmm::Distribution::uniform, 300, 9);
    Kokkos::deep_copy(Kokkos::subview(bad, 17, 1), std::numeric_limits<Real>::quiet_NaN());
    TargetResults<TestType> got(300);
    CHECK_THROWS_WITH(kfmm::evaluate(space, sources.x, sources.q, bad, got.phi, got.field),
                      Catch::Matchers::ContainsSubstring("kfmm::evaluate") &&
                          Catch::Matchers::ContainsSubstring("'targets'") &&
                          Catch::Matchers::ContainsSubstring("17"));
  }
  SECTION("a NaN source beside targets is named as a source, and the next solver builds")
  {
    // The positions are checked with the cube the device finds, in the middle of the build
    // (tree/DeviceCube.hpp): the solver's pooled memory must serve the next one all the same.
    auto const bad = kfmm::test::generated<TestType>(kfmm::Distribution::uniform, 500, 4);
    Kokkos::deep_copy(Kokkos::subview(bad, 123, 0), std::numeric_limits<Real>::infinity());
    TargetResults<TestType> got(300);
    CHECK_THROWS_WITH(kfmm::evaluate(space, bad, sources.q, targets, got.phi, got.field),
                      Catch::Matchers::Equals("kfmm::evaluate: argument 'sources' holds a NaN or "
                                              "infinite value at index 123"));
    CHECK_NOTHROW(kfmm::evaluate(space, sources.x, sources.q, targets, got.phi, got.field));
  }
  SECTION("results sized by the sources, not the targets, are refused")
  {
    TargetResults<TestType> got(500);
    CHECK_THROWS_WITH(kfmm::evaluate(space, sources.x, sources.q, targets, got.phi, got.field),
                      Catch::Matchers::ContainsSubstring("kfmm::evaluate") &&
                          Catch::Matchers::ContainsSubstring("potential"));
  }
}
