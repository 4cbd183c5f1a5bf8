// SPDX-License-Identifier: BSD-3-Clause
// The whole solver against the double-precision direct sum: relative L2 error of potential
// and field, on uniform, Plummer and ellipsoid-surface particles, fmm and treecode, float
// and double, on every execution space.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "HostReads.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

using kfmm::test::onHost;

namespace
{

using kfmm::test::Particles;

using kfmm::test::ResultErrors;

/// Relative L2 errors of `p`'s results against the direct sum in double at every particle.
template <class Config>
ResultErrors errorsAgainstDirectSum(Particles<Config> const &p)
{
  typename Config::execution_space space;
  using Memory = typename Config::memory_space;
  auto const n = p.x.extent(0);
  Kokkos::View<double *[3], Memory> x("kfmm::test::x64", n);
  Kokkos::View<double *, Memory> q("kfmm::test::q64", n);
  Kokkos::View<double *, Memory> phi("kfmm::test::phi64", n);
  Kokkos::View<double *[3], Memory> field("kfmm::test::field64", n);
  Kokkos::deep_copy(space, x, p.x);
  Kokkos::deep_copy(space, q, p.q);
  kfmm::directSum(space, x, q, phi, field);
  return {kfmm::relativeL2Error(onHost(p.phi), onHost(phi)),
          kfmm::relativeL2Error(onHost(p.field), onHost(field))};
}

/// The errors of one solve and what the solver reported.
struct Solved : ResultErrors
{
  kfmm::Stats stats;
};

template <class Config>
Solved solve(kfmm::Distribution distribution, std::size_t n, kfmm::Options const &options)
{
  typename Config::execution_space space;
  Particles<Config> p(n);
  kfmm::generate(space, distribution, 11, p.x, p.q);
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  return {errorsAgainstDirectSum(p), stats};
}

using kfmm::test::isFloat;

/// Whether kfmm runs kernels of two instances of `Space` at once (detail/SideInstance.hpp).
template <class Space>
constexpr bool runsInstancesAtOnce()
{
#if defined(KOKKOS_ENABLE_CUDA)
  return std::is_same<Space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

/// The names of the stages that `stats` timed, in their order.
std::vector<std::string> stageNames(kfmm::Stats const &stats)
{
  std::vector<std::string> names;
  for (auto const &stage : stats.stage_seconds)
    names.push_back(stage.first);
  return names;
}

/// `names`, then the timed stages that follow the lists in a build and evaluation with
/// `options` (`stats`: what ran): the M2L matrices (where the grouped M2L ran), the setup,
/// `upward`, the near and far fields, and the results' return and check.
std::vector<std::string> withEvaluationStages(std::vector<std::string> names,
                                              kfmm::Options const &options,
                                              kfmm::Stats const &stats,
                                              std::vector<std::string> const &upward)
{
  if (stats.m2l_variant == "grouped")
    names.push_back("M2L matrices");
  names.push_back("setup");
  names.insert(names.end(), upward.begin(), upward.end());
  if (options.method == kfmm::Method::fmm)
    names.insert(names.end(), {"M2L", "L2L", "P2P", "L2P"});
  else
    names.insert(names.end(), {"P2P", "M2P"});
  names.push_back("unsort results");
  if (options.check_results)
    names.push_back("check results");
  return names;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("FMM and treecode reach the required accuracy", "[fmm][accuracy]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer,
                                     kfmm::Distribution::ellipsoid);
  kfmm::Options options;
  options.method = method;
  options.leaf_size = 32;
  // Double: order 18 at theta 0.4 must give 1e-10; float: order 8 at theta 0.5 reaches the
  // float floor, required to be 1e-5.
  options.order = isFloat<Real> ? 8 : 18;
  options.theta = isFloat<Real> ? 0.5 : 0.4;
  double const required = isFloat<Real> ? 1e-5 : 1e-10;
  CAPTURE(kfmm::methodName(method), kfmm::distributionName(distribution), options.order);
  auto const errors = solve<TestType>(distribution, 2000, options);
  CAPTURE(errors.potential, errors.field);
  CHECK(errors.potential <= required);
  CHECK(errors.field <= required);
}

TEMPLATE_LIST_TEST_CASE("the highest order runs within every backend's team scratch",
                        "[fmm][accuracy]", kfmm::test::Configs)
{
  // Every kernel of order kfmm::max_order must launch (on CUDA the P2M's partial expansions
  // once asked for more than a block's shared memory from order 22 in double), and be as
  // accurate as its order promises: at theta 0.5, 1e-10 in double; the float floor in float.
  using Real = typename TestType::real_type;
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  kfmm::Options options;
  options.method = method;
  options.leaf_size = 32;
  options.order = kfmm::max_order;
  options.theta = 0.5;
  double const required = isFloat<Real> ? 1e-5 : 1e-10;
  CAPTURE(kfmm::methodName(method), options.order);
  auto const errors = solve<TestType>(kfmm::Distribution::uniform, 2000, options);
  CAPTURE(errors.potential, errors.field);
  CHECK(errors.potential <= required);
  CHECK(errors.field <= required);
}

TEMPLATE_LIST_TEST_CASE("the classic acceptance rule reaches the required accuracy",
                        "[fmm][accuracy]", kfmm::test::Configs)
{
  // The classic rule's nearest well-separated pairs have (R_t + R_s) / d up to sqrt(3) / 2,
  // so it needs higher orders than theta 0.5 for the same error. Measured field errors on
  // these 2e4-particle sets: 7.9e-7 to 2.2e-6 at order 10 in double, 3.6e-6 to 1.3e-5 at
  // order 8 in float.
  using Real = typename TestType::real_type;
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  kfmm::Options options;
  options.method = method;
  options.acceptance = kfmm::Acceptance::classic;
  options.order = isFloat<Real> ? 8 : 10;
  double const required = isFloat<Real> ? 3e-5 : 1e-5;
  CAPTURE(kfmm::methodName(method), kfmm::distributionName(distribution), options.order);
  auto const errors = solve<TestType>(distribution, 20000, options);
  CAPTURE(errors.potential, errors.field);
  CHECK(errors.potential <= required);
  CHECK(errors.field <= required);
}

TEMPLATE_LIST_TEST_CASE("FMM error falls as the order grows", "[fmm][accuracy]",
                        kfmm::test::Configs)
{
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  kfmm::Options options;
  options.method = method;
  options.leaf_size = 32;
  options.theta = 0.5;
  double previous = std::numeric_limits<double>::infinity();
  // Orders 2, 4, 6 stay above the float floor, so each step must improve the field by at
  // least a factor 3 (the geometric rate at theta 0.5 is about 0.5^2 per two orders).
  for (int order : {2, 4, 6})
  {
    options.order = order;
    auto const errors = solve<TestType>(kfmm::Distribution::plummer, 2000, options);
    CAPTURE(kfmm::methodName(method), order, errors.potential, errors.field, previous);
    CHECK(errors.field * 3 < previous);
    previous = errors.field;
  }
}

TEMPLATE_LIST_TEST_CASE("every M2L variant reaches the required accuracy", "[fmm][m2l][accuracy]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  auto const variant =
      GENERATE(kfmm::M2LVariant::per_pair, kfmm::M2LVariant::grouped, kfmm::M2LVariant::rotation);
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  kfmm::Options options;
  options.m2l_variant = variant;
  options.leaf_size = 32;
  // Double: order 16 at theta 0.35 must give a relative L2 error of 1e-10 (theta 0.4 leaves
  // 2e-10 on Plummer); float: order 8 at theta 0.5, 1e-5.
  options.order = isFloat<Real> ? 8 : 16;
  options.theta = isFloat<Real> ? 0.5 : 0.35;
  double const required = isFloat<Real> ? 1e-5 : 1e-10;
  CAPTURE(kfmm::m2lVariantName(variant), kfmm::distributionName(distribution), options.order);
  auto const errors = solve<TestType>(distribution, 3000, options);
  CHECK(errors.stats.m2l_variant == kfmm::m2lVariantName(variant));
  CAPTURE(errors.potential, errors.field);
  CHECK(errors.potential <= required);
  CHECK(errors.field <= required);
}

TEMPLATE_LIST_TEST_CASE("grouped, rotation and per-pair M2L agree to rounding", "[fmm][m2l]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  std::size_t const n = 4000;
  Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 7, p.x, p.q);
  kfmm::Options options;
  options.order = 6;
  options.leaf_size = 16;
  auto const solve = [&](kfmm::M2LVariant variant, auto &phi, auto &field) {
    options.m2l_variant = variant;
    kfmm::Fmm<Real, Memory> fmm(space, p.x, options);
    fmm.evaluate(space, p.q, phi, field);
    return fmm.stats();
  };
  Kokkos::View<Real *, Memory> phi_grouped("kfmm::test::phi_grouped", n);
  Kokkos::View<Real *[3], Memory> field_grouped("kfmm::test::field_grouped", n);
  Kokkos::View<Real *, Memory> phi_rotation("kfmm::test::phi_rotation", n);
  Kokkos::View<Real *[3], Memory> field_rotation("kfmm::test::field_rotation", n);
  auto const per_pair = solve(kfmm::M2LVariant::per_pair, p.phi, p.field);
  auto const grouped = solve(kfmm::M2LVariant::grouped, phi_grouped, field_grouped);
  auto const rotation = solve(kfmm::M2LVariant::rotation, phi_rotation, field_rotation);
  CHECK(per_pair.m2l_variant == "per-pair");
  CHECK(per_pair.m2l_classes == 0);
  CHECK(grouped.m2l_variant == "grouped");
  CHECK(grouped.m2l_classes > 0);
  std::size_t const real_count = kfmm::farfield::realCoefficientCount(options.order);
  std::size_t const padded =
      kfmm::farfield::paddedRealCount<typename TestType::execution_space, Real>(options.order);
  CHECK(grouped.m2l_matrix_bytes == grouped.m2l_classes * real_count * padded * sizeof(Real));
  CHECK(grouped.m2l_interactions == per_pair.m2l_interactions);
  // Rare classes of the Plummer tree are translated pair by pair: counted on the device and
  // read with Stats' deferred counts.
  CHECK(grouped.m2l_per_pair_interactions > 0);
  CHECK(grouped.m2l_per_pair_interactions < grouped.m2l_interactions);
  CHECK(grouped.bytes > per_pair.bytes);
  // The same translations summed in another order: relative differences at rounding level.
  double const rounding = isFloat<Real> ? 2e-6 : 1e-13;
  CHECK(kfmm::relativeL2Error(onHost(phi_grouped), onHost(p.phi)) <= rounding);
  CHECK(kfmm::relativeL2Error(onHost(field_grouped), onHost(p.field)) <= rounding);

  // The rotation M2L: one table per direction of the list (pairs beyond the tables' bound
  // translated with (T2)).
  CHECK(rotation.m2l_variant == "rotation");
  CHECK(rotation.m2l_classes > 0);
  CHECK(rotation.m2l_classes < rotation.m2l_interactions);
  CHECK(rotation.m2l_matrix_bytes >=
        rotation.m2l_classes * kfmm::expansions::rotationTableSize(options.order) * sizeof(Real));
  CHECK(rotation.m2l_interactions == per_pair.m2l_interactions);
  CAPTURE(rotation.m2l_classes, rotation.m2l_per_pair_interactions);
  CHECK(rotation.m2l_per_pair_interactions <= rotation.m2l_interactions);
  CHECK(rotation.flops < per_pair.flops);
  CHECK(kfmm::relativeL2Error(onHost(phi_rotation), onHost(p.phi)) <= rounding);
  CHECK(kfmm::relativeL2Error(onHost(field_rotation), onHost(p.field)) <= rounding);

  // The automatic choice follows the backend's tuning data (on a few particles: high orders).
  auto const few = Kokkos::subview(p.x, Kokkos::make_pair(0, 500), Kokkos::ALL);
  using Tune = kfmm::tuning::Tuning<Space>;
  int const rotation_from = kfmm::detail::rotationM2LMinOrder<Tune, Real>();
  for (int order : {Tune::m2l_grouped_max_order, Tune::m2l_grouped_max_order + 1, rotation_from - 1,
                    rotation_from})
  {
    options.order = order;
    options.m2l_variant = kfmm::M2LVariant::automatic;
    kfmm::Fmm<Real, Memory> fmm(space, few, options);
    char const *expected = order >= rotation_from                 ? "rotation"
                           : order <= Tune::m2l_grouped_max_order ? "grouped"
                                                                  : "per-pair";
    CAPTURE(order);
    CHECK(fmm.stats().m2l_variant == expected);
  }

  // Above m2l_grouped_max_order, a long M2L list keeps the grouped M2L up to
  // m2l_grouped_long_list_max_order (its translations outweigh its class matrices' build), a
  // short one takes the order's choice, and beyond that order the list's length does not
  // count.
  auto const by_order = [&](int order) {
    return kfmm::detail::automaticM2LVariant<Tune, Real>(order);
  };
  double const long_list = Tune::m2l_grouped_long_list_entries;
  for (int order = Tune::m2l_grouped_max_order + 1; order <= Tune::m2l_grouped_long_list_max_order;
       ++order)
  {
    CAPTURE(order);
    CHECK(kfmm::detail::automaticM2LVariant<Tune, Real>(order, long_list) ==
          kfmm::M2LVariant::grouped);
    CHECK(kfmm::detail::automaticM2LVariant<Tune, Real>(order, 0.5 * long_list) == by_order(order));
  }
  int const beyond = Tune::m2l_grouped_long_list_max_order + 1;
  CHECK(kfmm::detail::automaticM2LVariant<Tune, Real>(beyond, 1e12) == by_order(beyond));
  // The solver asks with its own list: 2e5 uniform particles in leaves of about 30 at theta
  // 0.7 make a list above the length (built, not evaluated).
  if (Tune::m2l_grouped_long_list_max_order > Tune::m2l_grouped_max_order)
  {
    std::size_t const many = 200000;
    Particles<TestType> u(many);
    kfmm::generate(space, kfmm::Distribution::uniform, 3, u.x, u.q);
    options.order = Tune::m2l_grouped_max_order + 1;
    options.theta = 0.7;
    options.leaf_size = 32;
    options.m2l_variant = kfmm::M2LVariant::automatic;
    kfmm::Fmm<Real, Memory> fmm(space, u.x, options);
    REQUIRE(static_cast<double>(fmm.stats().m2l_interactions) >= long_list);
    CHECK(fmm.stats().m2l_variant == std::string("grouped"));
  }
}

TEMPLATE_LIST_TEST_CASE("a tree built once evaluates like fresh solvers", "[fmm][reuse]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 1500;
  Particles<TestType> a(n), b(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 3, a.x, a.q);
  kfmm::generate(space, kfmm::Distribution::uniform, 4, b.x, b.q); // only b.q is used
  Kokkos::deep_copy(b.x, a.x);

  kfmm::Options options;
  options.order = 6;
  options.leaf_size = 16;
  options.time_stages = true;
  kfmm::Fmm<Real, Memory> fmm(space, a.x, options);
  Kokkos::View<Real *, Memory> phi_a("kfmm::test::phi_a", n), phi_b("kfmm::test::phi_b", n);
  Kokkos::View<Real *[3], Memory> field_a("kfmm::test::field_a", n),
      field_b("kfmm::test::field_b", n);
  fmm.evaluate(space, a.q, phi_a, field_a);
  fmm.evaluate(space, b.q, phi_b, field_b);

  kfmm::evaluate(space, a.x, a.q, a.phi, a.field, options);
  kfmm::evaluate(space, b.x, b.q, b.phi, b.field, options);
  // Same tree, same lists, same kernels: equal to the last bit.
  CHECK(kfmm::relativeL2Error(onHost(phi_a), onHost(a.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(field_a), onHost(a.field)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(phi_b), onHost(b.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(field_b), onHost(b.field)) == 0);
  CHECK(fmm.stats().seconds("P2P") > 0);
  CHECK(fmm.stats().leaves > 1);
}

TEMPLATE_LIST_TEST_CASE("stage timing is opt-in and changes no result", "[fmm][timing]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 3000;
  Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 21, p.x, p.q);
  kfmm::Options options;
  options.method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  // Without the check the evaluation need not wait for its kernels at all.
  options.check_results = GENERATE(true, false);
  CAPTURE(kfmm::methodName(options.method), options.check_results);

  kfmm::Fmm<Real, Memory> untimed(space, p.x, options);
  untimed.evaluate(space, p.q, p.phi, p.field);
  CHECK(untimed.stats().stage_seconds.empty());
  // Unfenced, the far field's translations run beside the near field where the backend can.
  using Space = typename TestType::execution_space;
  CHECK(untimed.stats().far_field_concurrent == runsInstancesAtOnce<Space>());

  options.time_stages = true;
  kfmm::Fmm<Real, Memory> timed(space, p.x, options);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi_timed", n);
  Kokkos::View<Real *[3], Memory> field("kfmm::test::field_timed", n);
  timed.evaluate(space, p.q, phi, field);
  CHECK(stageNames(timed.stats()) ==
        withEvaluationStages({"tree", "lists"}, options, timed.stats(),
                             {"charge unit", "sort charges", "P2M", "M2M"}));
  CHECK(timed.stats().totalSeconds() > 0);
  CHECK_FALSE(timed.stats().far_field_concurrent);
  // The same kernels adding to the results in the same order, on one instance or on two
  // that the solver orders: equal to the last bit. A missing order between the instances
  // (the translations reading charges not yet sorted, L2P adding before P2P) breaks this.
  CHECK(kfmm::relativeL2Error(onHost(p.phi), onHost(phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(p.field), onHost(field)) == 0);

  // One instance without stage times.
  options.time_stages = false;
  options.concurrent_far_field = false;
  kfmm::Fmm<Real, Memory> serial(space, p.x, options);
  serial.evaluate(space, p.q, phi, field);
  CHECK_FALSE(serial.stats().far_field_concurrent);
  CHECK(kfmm::relativeL2Error(onHost(p.phi), onHost(phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(p.field), onHost(field)) == 0);
}

TEMPLATE_LIST_TEST_CASE("kfmm::evaluate starts its evaluation in the build, to the same bits",
                        "[fmm][timing]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 3000;
  Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 22, p.x, p.q);
  kfmm::Options options;
  options.method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  options.check_results = GENERATE(true, false);
  CAPTURE(kfmm::methodName(options.method), options.check_results);

  // The solver's own evaluation, which sorts the charges and forms the multipoles itself.
  kfmm::Fmm<Real, Memory> solver(space, p.x, options);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi_solver", n);
  Kokkos::View<Real *[3], Memory> field("kfmm::test::field_solver", n);
  solver.evaluate(space, p.q, phi, field);

  // kfmm::evaluate's build does that beside the lists' build, on the side instance where the
  // backend has one: the same kernels adding in the same order, so the same bits. A missing
  // order between the instances (P2M reading charges not yet sorted) breaks this on CUDA.
  kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  CHECK(kfmm::relativeL2Error(onHost(phi), onHost(p.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(field), onHost(p.field)) == 0);

  // Timed, the stages run once each, the upward pass's in the build.
  options.time_stages = true;
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  CHECK(stageNames(stats) == withEvaluationStages({"tree", "allocate", "charge unit",
                                                   "sort charges", "P2M", "M2M", "lists"},
                                                  options, stats, {}));
  CHECK(kfmm::relativeL2Error(onHost(phi), onHost(p.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(field), onHost(p.field)) == 0);
}

TEMPLATE_LIST_TEST_CASE("the M2L's grouping beside the near field changes no result",
                        "[fmm][timing]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 10000;
  Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::uniform, 23, p.x, p.q);
  // A far field light beside its near field: 64 leaves of about 156 particles, 2.4e7 near
  // pairs against about 1800 M2L entries at order 7, so that where two instances run at once
  // the grouping of the M2L list runs on the side one, beside the near field
  // (farfield::groupsBeside), and on one instance before it.
  kfmm::Options options;
  options.order = 7;
  options.theta = 0.85;
  options.leaf_size = 256;
  options.m2l_variant = kfmm::M2LVariant::grouped;

  kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  // Order 7 at theta 0.85 reached 1e-4 on 1e6 uniform particles (perf/RESULTS.md).
  CHECK(errorsAgainstDirectSum(p).field < 1e-3);
  kfmm::Fmm<Real, Memory> solver(space, p.x, options);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi_solver", n);
  Kokkos::View<Real *[3], Memory> field("kfmm::test::field_solver", n);
  solver.evaluate(space, p.q, phi, field);
  CHECK(solver.stats().m2l_variant == "grouped");
  CHECK(kfmm::relativeL2Error(onHost(phi), onHost(p.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(field), onHost(p.field)) == 0);

  // On one instance: the same kernels adding in the same order, so the same bits. The M2L
  // reading a grouping not yet done, or the setup taking blocks the grouping still uses,
  // breaks this on CUDA.
  options.concurrent_far_field = false;
  kfmm::Fmm<Real, Memory> serial(space, p.x, options);
  serial.evaluate(space, p.q, phi, field);
  CHECK(kfmm::relativeL2Error(onHost(phi), onHost(p.phi)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(field), onHost(p.field)) == 0);
}

TEMPLATE_LIST_TEST_CASE("tiny and degenerate inputs give finite, accurate answers", "[fmm][edge]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  kfmm::Options options;
  options.method = method;
  // Leaves of one particle, so that even these few particles interact through expansions.
  // A few particles on a line meet the truncation bound ~theta^(p+1) nearly head on, so a
  // smaller theta than in the accuracy test gives the same required errors.
  options.leaf_size = 1;
  options.order = isFloat<Real> ? 12 : 18;
  options.theta = 0.25;
  double const tol = isFloat<Real> ? 1e-5 : 1e-10;

  SECTION("no particles")
  {
    Particles<TestType> p(0);
    CHECK_NOTHROW(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options));
  }
  SECTION("one particle sees nothing")
  {
    Particles<TestType> p(1);
    Kokkos::deep_copy(p.q, Real(2));
    kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    auto const phi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.phi);
    CHECK(phi(0) == 0);
  }
  SECTION("two and three particles, some coincident, match the direct sum")
  {
    auto const n = GENERATE(2, 3, 9);
    Particles<TestType> p(n);
    auto x = Kokkos::create_mirror_view(p.x);
    auto q = Kokkos::create_mirror_view(p.q);
    for (int i = 0; i < n; ++i)
    {
      // Particles 0 and 1 coincide; the rest spread along a diagonal.
      Real const t = i < 2 ? Real(0.25) : Real(i);
      x(i, 0) = t;
      x(i, 1) = -t;
      x(i, 2) = 2 * t;
      q(i) = Real(1 + i);
    }
    Kokkos::deep_copy(p.x, x);
    Kokkos::deep_copy(p.q, q);
    kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    auto const errors = errorsAgainstDirectSum(p);
    CHECK(std::isfinite(errors.potential));
    CHECK(errors.potential <= tol);
    CHECK(errors.field <= tol);
  }
  SECTION("all particles at one point feel nothing")
  {
    Particles<TestType> p(50);
    Kokkos::deep_copy(p.x, Real(3));
    Kokkos::deep_copy(p.q, Real(1));
    kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    auto const phi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.phi);
    auto const field = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.field);
    for (int i = 0; i < 50; ++i)
    {
      CHECK(phi(i) == 0);
      CHECK(field(i, 0) == 0);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("solver rejects bad input in the caller's terms", "[fmm][validation]",
                        kfmm::test::Configs)
{
  // Each message names the entry point that was called (the one-shot kfmm::evaluate, or the
  // solver class's constructor or evaluate), the argument, and numbers as given; checked
  // word for word.
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Catch::Matchers::Equals;
  using Solver = kfmm::Fmm<Real, Memory>;
  typename TestType::execution_space space;
  Particles<TestType> p(100);
  kfmm::generate(space, kfmm::Distribution::uniform, 1, p.x, p.q);
  kfmm::Options options;
  auto const evaluate = [&](auto const &x, auto const &q, auto const &phi, auto const &field) {
    kfmm::evaluate(space, x, q, phi, field, options);
  };

  SECTION("options out of range")
  {
    options.order = kfmm::max_order + 1;
    std::string const order = "option 'order' must be in 1.." + std::to_string(kfmm::max_order) +
                              ", got " + std::to_string(kfmm::max_order + 1);
    CHECK_THROWS_WITH(Solver(space, p.x, options), Equals("kfmm::Fmm: " + order));
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, p.field), Equals("kfmm::evaluate: " + order));
    options = {};
    options.theta = 1.5;
    CHECK_THROWS_WITH(Solver(space, p.x, options),
                      Equals("kfmm::Fmm: option 'theta' must be in (0, 1], got 1.5"));
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, p.field),
                      Equals("kfmm::evaluate: option 'theta' must be in (0, 1], got 1.5"));
    options = {};
    options.leaf_size = -1;
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, p.field),
                      Equals("kfmm::evaluate: option 'leaf_size' must be >= 1, or 0 for "
                             "the backend's tuned one, got -1"));
    options = {};
    options.softening = -1;
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, p.field),
                      Equals("kfmm::evaluate: option 'softening' must be finite and >= 0, got -1"));
  }
  SECTION("Views of the wrong length")
  {
    Kokkos::View<Real *, Memory> q("kfmm::test::short_q", 99);
    Kokkos::View<Real *, Memory> phi("kfmm::test::long_phi", 101);
    Kokkos::View<Real *[3], Memory> field("kfmm::test::short_field", 2);
    Solver fmm(space, p.x, options);
    CHECK_THROWS_WITH(
        fmm.evaluate(space, q, p.phi, p.field),
        Equals("kfmm::Fmm::evaluate: argument 'charges' has extent 99, expected 100"));
    CHECK_THROWS_WITH(evaluate(p.x, q, p.phi, p.field),
                      Equals("kfmm::evaluate: argument 'charges' has extent 99, expected 100"));
    CHECK_THROWS_WITH(evaluate(p.x, p.q, phi, p.field),
                      Equals("kfmm::evaluate: argument 'potential' has extent 101, expected 100"));
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, field),
                      Equals("kfmm::evaluate: argument 'field' has extent 2, expected 100"));
  }
  SECTION("a NaN or infinite charge is named with its index")
  {
    // With the results' check the charges' unit is found on the device and the charges are
    // checked at the end, with the results; without it, on the host, before anything runs.
    // Either way the next evaluation of good charges is not taken for a bad one.
    options.check_results = GENERATE(true, false);
    Real const bad =
        GENERATE(std::numeric_limits<Real>::quiet_NaN(), -std::numeric_limits<Real>::infinity());
    CAPTURE(options.check_results, bad);
    Solver fmm(space, p.x, options);
    auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.q);
    Real const good = q(42);
    q(42) = bad;
    Kokkos::deep_copy(p.q, q);
    std::string const what = "argument 'charges' holds a NaN or infinite value at index 42";
    CHECK_THROWS_WITH(fmm.evaluate(space, p.q, p.phi, p.field),
                      Equals("kfmm::Fmm::evaluate: " + what));
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, p.field), Equals("kfmm::evaluate: " + what));
    q(42) = good;
    Kokkos::deep_copy(p.q, q);
    CHECK_NOTHROW(fmm.evaluate(space, p.q, p.phi, p.field));
  }
  SECTION("a NaN or infinite coordinate is named with its index")
  {
    auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.x);
    x(17, 2) =
        GENERATE(std::numeric_limits<Real>::infinity(), std::numeric_limits<Real>::quiet_NaN());
    Kokkos::deep_copy(p.x, x);
    std::string const what = "argument 'positions' holds a NaN or infinite value at index 17";
    CHECK_THROWS_WITH(Solver(space, p.x, options), Equals("kfmm::Fmm: " + what));
    CHECK_THROWS_WITH(evaluate(p.x, p.q, p.phi, p.field), Equals("kfmm::evaluate: " + what));
  }
}

TEMPLATE_LIST_TEST_CASE("a count left in device memory reaches the host with the deferred counts",
                        "[fmm][stats]", kfmm::test::Spaces)
{
  // The grouped M2L's count of pairs translated on their own stays on the device until
  // stats() reads every deferred count at once.
  using Memory = typename TestType::memory_space;
  using Counts = kfmm::detail::DeferredCounts<Memory>;
  typename TestType::execution_space space;
  Counts const counts;
  Kokkos::View<std::int64_t *, Memory> value("kfmm::test::device_count", 1);
  Kokkos::deep_copy(value, std::int64_t(1234567));
  counts.record(space, Counts::m2l_per_pair, value);
  counts.wait();
  CHECK(counts[Counts::m2l_per_pair] == 1234567);
  CHECK(counts[Counts::m2p_pairs] == 0);
}

TEMPLATE_LIST_TEST_CASE("a solver's build reads the device at most twice, however deep its tree",
                        "[fmm][waits]", kfmm::test::Configs)
{
  // The build reads its trees' levels' sizes, counted on the device first
  // (tree::detail::CountLevels; a solver of sources and targets reads both trees' at once),
  // and the lists' sizes after their traversal, which bring the number of the grouped M2L's
  // classes too at this order (farfield::M2LClassCount). A Plummer tree of 30000
  // particles in leaves of 16 has 11 levels, which the batched reads of its levels took in
  // several batches. The host backends read their own memory: nothing to count.
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible)
    SKIP("the host backends read their own memory");
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  bool const separate_targets = GENERATE(false, true);
  CAPTURE(kfmm::distributionName(distribution), separate_targets);
  std::size_t const n = 30000;
  Particles<TestType> p(n);
  kfmm::generate(space, distribution, 5, p.x, p.q);
  Particles<TestType> targets(20000);
  kfmm::generate(space, distribution, 6, targets.x, targets.q);
  kfmm::Options options;
  options.order = 6;
  options.leaf_size = 16;
  space.fence();
  kfmm::test::HostReads const reads;
  auto const fmm = separate_targets ? kfmm::Fmm<Real, Memory>(space, p.x, targets.x, options)
                                    : kfmm::Fmm<Real, Memory>(space, p.x, options);
  space.fence();
  int const device_reads = reads.fromDevice();
  CAPTURE(fmm.stats().depth);
  CHECK(device_reads >= 1);
  CHECK(device_reads <= 2);
}
