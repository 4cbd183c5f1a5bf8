// SPDX-License-Identifier: BSD-3-Clause
// Inputs at the edges of what the solver is given in practice (tests/Adversarial.hpp):
// coordinates at 1e20 and 1e-15, clusters far smaller than the set, a line, coincident
// particles, charges summing to zero, one particle, 2^20 particles at one point, results beyond
// a precision's range. Each either reaches the accuracy the options give, against the plain
// double loop of tests/Reference.hpp, or ends in a kfmm::Exception that says what and why;
// where the precision cannot resolve the positions it is given, Stats says so.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Fmm.hpp>
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

#include "Adversarial.hpp"
#include "HostParticlesOnDevice.hpp"
#include "Reference.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::Adversarial;
using kfmm::test::HostParticles;
using kfmm::test::onDevice;
using kfmm::test::onHost;
using kfmm::test::Particles;

using kfmm::test::isFloat;

using kfmm::test::ResultErrors;

/// Relative L2 errors of `phi` and `field` (device Views) against the plain double loop on
/// the positions `x` and charges `q` (any precision, any memory).
template <class X, class Q, class Phi, class Field>
ResultErrors errorsAgainstReference(X const &x, Q const &q, Phi const &phi, Field const &field)
{
  auto const x_host = onHost(x);
  auto const exact = kfmm::test::referenceDirectSum(x_host, x_host, onHost(q));
  return {kfmm::relativeL2Error(onHost(phi), exact.potential),
          kfmm::relativeL2Error(onHost(field), exact.field)};
}

template <class Config>
ResultErrors errorsAgainstReference(Particles<Config> const &p)
{
  return errorsAgainstReference(p.x, p.q, p.phi, p.field);
}

/// Options and the errors they must reach: for float those of the accuracy tests
/// (tstFmm.cpp), order 8 at theta 0.5, which reaches float's floor, 1e-5; for double order 14
/// at theta 0.4, which gives 3e-10 on 2000 uniform and 7e-10 on 2000 Plummer particles,
/// required 1e-8.
template <class Real>
kfmm::Options accurateOptions()
{
  kfmm::Options options;
  options.leaf_size = 32;
  options.order = isFloat<Real> ? 8 : 14;
  options.theta = isFloat<Real> ? 0.5 : 0.4;
  return options;
}

template <class Real>
constexpr double required_error = isFloat<Real> ? 1e-5 : 1e-8;

/// Whether every entry of a host View is exactly zero.
template <class View>
bool allZero(View const &v)
{
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t c = 0; c < (View::rank == 2 ? v.extent(1) : 1); ++c)
      if (v.access(i, c) != 0)
        return false;
  return true;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("sets in the solver's precision reach the accuracy the options give",
                        "[fmm][adversarial][accuracy]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  // Positions rounded to the config's precision are what the solver is given, and the
  // accuracy is asked on those. (In float the 1e-12 cluster at x = 1 is one point already.
  // So is the multiscale set's 1e-6 cluster: one point holding half the charge, whose
  // expansion meets the truncation bound theta^(p+1) head on, and a double solver on those
  // float positions errs as much. Its float case is the next test's, positions in double.)
  auto const set =
      isFloat<Real>
          ? GENERATE(Adversarial::large_cube, Adversarial::small_cube, Adversarial::two_clusters,
                     Adversarial::identical, Adversarial::line, Adversarial::duplicated_pairs,
                     Adversarial::neutral)
          : GENERATE(Adversarial::large_cube, Adversarial::small_cube, Adversarial::two_clusters,
                     Adversarial::multiscale, Adversarial::identical, Adversarial::line,
                     Adversarial::duplicated_pairs, Adversarial::neutral);
  auto const method = GENERATE(kfmm::Method::fmm, kfmm::Method::treecode);
  CAPTURE(kfmm::test::adversarialName(set), kfmm::methodName(method));
  auto p = onDevice<TestType>(kfmm::test::adversarial(set, 1000));
  auto options = accurateOptions<Real>();
  options.method = method;
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  CHECK(stats.results_checked);
  auto const errors = errorsAgainstReference(p);
  CAPTURE(errors.potential, errors.field, stats.depth);
  CHECK(errors.potential <= required_error<Real>);
  CHECK(errors.field <= required_error<Real>);
}

TEMPLATE_LIST_TEST_CASE("unresolved pairs are counted across the sort's chunks of particles",
                        "[fmm][adversarial][resolution]", kfmm::test::Configs)
{
  // 600 particles 1 apart on a line, in the sorted order given, but particles 11, 100 and
  // 256 at 1e-9 from the one before them: pairs (10, 11) and (99, 100) lie inside the first
  // chunk of 256 sorted particles (two counts of one team), pair (255, 256) across its end.
  // Rounded to float in units of the 600-wide cube, these pairs are lost (the rounding, about
  // 3e-8, dwarfs 1e-9) and no other is; double resolves them all, and positions given in
  // Real need no check.
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 600;
  Kokkos::View<double *[3], Memory> x("kfmm::test::x64", n);
  Kokkos::View<std::uint32_t *, Memory> permutation("kfmm::test::permutation", n);
  auto x_h = Kokkos::create_mirror_view(x);
  auto permutation_h = Kokkos::create_mirror_view(permutation);
  for (std::size_t i = 0; i < n; ++i)
  {
    x_h(i, 0) = (i == 11 || i == 100 || i == 256) ? x_h(i - 1, 0) + 1e-9 : static_cast<double>(i);
    x_h(i, 1) = x_h(i, 2) = 0.5;
    permutation_h(i) = static_cast<std::uint32_t>(i);
  }
  Kokkos::deep_copy(x, x_h);
  Kokkos::deep_copy(permutation, permutation_h);
  auto const frame = kfmm::detail::unitFrame(kfmm::tree::boundingCube(space, x), "test");
  Kokkos::View<Real *[3], Memory> sorted("kfmm::test::sorted", n);
  // The count into host memory (the sort then waits for it), and into device memory.
  Kokkos::View<std::size_t, Kokkos::HostSpace> unresolved("kfmm::test::unresolved");
  Kokkos::View<std::size_t, Memory> unresolved_on_device("kfmm::test::unresolved_on_device");
  auto &memory = kfmm::detail::Workspace<Memory>::direct();
  kfmm::kernels::sortPositions(space, memory, permutation, x, frame, sorted, unresolved);
  CHECK(unresolved() == (isFloat<Real> ? 3u : 0u));
  kfmm::kernels::sortPositions(space, memory, permutation, x, frame, sorted, unresolved_on_device);
  Kokkos::deep_copy(unresolved, unresolved_on_device);
  CHECK(unresolved() == (isFloat<Real> ? 3u : 0u));
  // The sorted positions are the unit coordinates, rounded once.
  auto const sorted_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sorted);
  for (std::size_t i = 0; i < n; i += 37)
    for (int d = 0; d < 3; ++d)
      CHECK(sorted_h(i, d) == static_cast<Real>(frame.position(x_h(i, d), d)));
  Kokkos::View<Real *[3], Memory> x_real("kfmm::test::x", n);
  Kokkos::deep_copy(x_real, sorted);
  unresolved() = 7;
  kfmm::kernels::sortPositions(space, memory, permutation, x_real, frame, sorted, unresolved);
  CHECK(unresolved() == 0u);
  Kokkos::deep_copy(unresolved_on_device, 7);
  kfmm::kernels::sortPositions(space, memory, permutation, x_real, frame, sorted,
                               unresolved_on_device);
  Kokkos::deep_copy(unresolved, unresolved_on_device);
  CHECK(unresolved() == 0u);
}

TEMPLATE_LIST_TEST_CASE("sets in double are accurate where the precision resolves them, "
                        "reported where it does not",
                        "[fmm][adversarial][resolution]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const set = GENERATE(Adversarial::large_cube, Adversarial::small_cube,
                            Adversarial::two_clusters, Adversarial::multiscale,
                            Adversarial::identical, Adversarial::line,
                            Adversarial::duplicated_pairs, Adversarial::neutral);
  CAPTURE(kfmm::test::adversarialName(set));
  auto const h = kfmm::test::adversarial(set, 1000);
  auto p = onDevice<TestType>(h); // the charges and results; the positions in double:
  Kokkos::View<double *[3], Memory> x("kfmm::test::x64", h.size());
  // Element by element: the device View's layout may differ from the host set's.
  auto x_mirror = Kokkos::create_mirror_view(x);
  for (std::size_t i = 0; i < h.size(); ++i)
    for (int d = 0; d < 3; ++d)
      x_mirror(i, d) = h.x(i, d);
  Kokkos::deep_copy(x, x_mirror);
  // Float does not resolve 1e-12 at 1, 1e-6 at 1e8, nor a line 1e6 long whose neighbours are
  // 1000 apart on average, many far closer; double resolves them all.
  bool const unresolvable = isFloat<Real> &&
                            (set == Adversarial::two_clusters || set == Adversarial::multiscale ||
                             set == Adversarial::line);
  // By default such results are an error the caller cannot miss; asked for, they come back
  // with Stats saying what they are.
  kfmm::Fmm<Real, Memory> strict(space, x, accurateOptions<Real>());
  if (unresolvable)
  {
    CHECK_THROWS_AS(strict.evaluate(space, p.q, p.phi, p.field), kfmm::PrecisionError);
    CHECK_THROWS_WITH(strict.evaluate(space, p.q, p.phi, p.field),
                      Catch::Matchers::ContainsSubstring("float does not resolve these "
                                                         "particles"));
  }
  else
    CHECK_NOTHROW(strict.evaluate(space, p.q, p.phi, p.field));
  auto options = accurateOptions<Real>();
  options.allow_unresolved = true;
  kfmm::Fmm<Real, Memory> fmm(space, x, options);
  fmm.evaluate(space, p.q, p.phi, p.field);
  auto const &stats = fmm.stats();
  CAPTURE(stats.unresolved_pairs);
  CHECK(stats.results_checked);
  CHECK(stats.precision_limited == unresolvable);
  if (!unresolvable)
  {
    // Against the exact positions: the solver's own rounding of them included.
    auto const errors = errorsAgainstReference(x, p.q, p.phi, p.field);
    CAPTURE(errors.potential, errors.field);
    CHECK(errors.potential <= required_error<Real>);
    CHECK(errors.field <= required_error<Real>);
  }
}

TEMPLATE_LIST_TEST_CASE("results beyond the precision's range throw, naming the particle",
                        "[fmm][adversarial][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Catch::Matchers::ContainsSubstring;
  typename TestType::execution_space space;
  // Particles 2 and 3 are 1e-10 apart with charges 1e30 (float) or 1e300 (double): their
  // potentials, 1e40 and 1e310, are beyond float's and double's range; particle 2 is at the
  // origin.
  auto h = kfmm::test::adversarial(Adversarial::huge_potential, 200);
  if (!isFloat<Real>)
    h.q(2) = h.q(3) = 1e300;
  auto p = onDevice<TestType>(h);
  kfmm::Fmm<Real, Memory> fmm(space, p.x, kfmm::Options{});
  std::string const range = isFloat<Real> ? "beyond the range of float"
                                          : "beyond the range of double";
  CHECK_THROWS_WITH(fmm.evaluate(space, p.q, p.phi, p.field),
                    ContainsSubstring("kfmm::Fmm::evaluate: the potential of particle 2 at "
                                      "(0, 0, 0) is infinite") &&
                        ContainsSubstring(range));
  // The count of bad results starts again at every evaluation: the same solver, given
  // charges that keep the results in range, returns them.
  decltype(p.q) unit("kfmm::test::unit_charges", p.q.extent(0));
  Kokkos::deep_copy(unit, Real(1));
  CHECK_NOTHROW(fmm.evaluate(space, unit, p.phi, p.field));

  SECTION("with the check off, the infinities come back unchecked")
  {
    kfmm::Options options;
    options.check_results = false;
    kfmm::Fmm<Real, Memory> unchecked(space, p.x, options);
    CHECK_NOTHROW(unchecked.evaluate(space, p.q, p.phi, p.field));
    CHECK_FALSE(unchecked.stats().results_checked);
    auto const phi = onHost(p.phi);
    CHECK(std::isinf(phi(2)));
    CHECK(std::isfinite(phi(0)));
  }
  SECTION("one precision up, the same charges are representable and accurate")
  {
    if constexpr (isFloat<Real>)
    {
      using Wide = kfmm::test::Config<typename TestType::execution_space, double>;
      auto wide = onDevice<Wide>(h);
      auto const stats =
          kfmm::evaluate(space, wide.x, wide.q, wide.phi, wide.field, accurateOptions<double>());
      CHECK(stats.results_checked);
      auto const errors = errorsAgainstReference(wide);
      CHECK(errors.field <= required_error<double>);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("two particles 1e-30 apart", "[fmm][adversarial][edge]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Catch::Matchers::ContainsSubstring;
  typename TestType::execution_space space;
  Particles<TestType> p(2);
  auto x = Kokkos::create_mirror_view(p.x);
  x(1, 0) = Real(1e-30); // the rest 0: particle 0 at the origin
  Kokkos::deep_copy(p.x, x);
  Kokkos::deep_copy(p.q, Real(1));
  if constexpr (isFloat<Real>)
  {
    // The field, 1/r^2 = 1e60, is beyond float's range.
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field),
                      ContainsSubstring("the field of particle 0 at (0, 0, 0) is infinite") &&
                          ContainsSubstring("beyond the range of float"));
  }
  else
  {
    // Potential 1/r = 1e30 and field 1/r^2 = 1e60 along x: exact to rounding (the solver
    // computes in units, where the pair is about 1 apart).
    double const r = x(1, 0);
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field);
    CHECK(stats.results_checked);
    auto const phi = onHost(p.phi);
    auto const field = onHost(p.field);
    CHECK(std::abs(phi(0) * r - 1) < 1e-14);
    CHECK(std::abs(phi(1) * r - 1) < 1e-14);
    // The field (the potential's gradient) at particle 0 points towards particle 1.
    CHECK(std::abs(field(0, 0) * r * r - 1) < 1e-14);
    CHECK(std::abs(field(1, 0) * r * r + 1) < 1e-14);
    CHECK(field(0, 1) == 0);
    CHECK(field(1, 2) == 0);
  }
}

TEMPLATE_LIST_TEST_CASE("a pair 1e-15 apart beside a particle at 1: fields of 1e30 stay finite",
                        "[fmm][direct][adversarial][edge]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  // Particle 0 at the origin, 1 at 1e-15 (its fine resolution near the origin kept in units),
  // 2 at 1, charges 1, one leaf. The pair's field 1/r^2 = 1e30 is within float's range; 1/r^3
  // = 1e45 is not, and the near field must not overflow on it (kernels/detail/TargetBlock.hpp).
  Particles<TestType> p(3);
  auto x = Kokkos::create_mirror_view(p.x);
  Kokkos::deep_copy(x, Real(0));
  x(1, 0) = Real(1e-15);
  x(2, 0) = 1;
  Kokkos::deep_copy(p.x, x);
  Kokkos::deep_copy(p.q, Real(1));
  double const r = x(1, 0);
  auto const check = [&](char const *method) {
    CAPTURE(method);
    auto const phi = onHost(p.phi);
    auto const field = onHost(p.field);
    double const rounding = isFloat<Real> ? 1e-6 : 1e-14;
    CHECK(std::abs(phi(0) / (1 / r + 1) - 1) < rounding);
    CHECK(std::abs(phi(1) / (1 / r + 1 / (1 - r)) - 1) < rounding);
    // The field (the potential's gradient) at particle 0 points towards particles 1 and 2.
    CHECK(std::abs(field(0, 0) / (1 / (r * r) + 1) - 1) < rounding);
    CHECK(std::abs(field(1, 0) / (-1 / (r * r) + 1 / ((1 - r) * (1 - r))) - 1) < rounding);
    CHECK(std::abs(field(2, 0) / (-1 - 1 / ((1 - r) * (1 - r))) - 1) < rounding);
  };
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field);
  CHECK(stats.results_checked);
  check("fmm");
  kfmm::directSum(space, p.x, p.q, p.phi, p.field);
  check("direct sum");
}

TEMPLATE_LIST_TEST_CASE("a single particle and 2^20 particles at one point feel nothing",
                        "[fmm][adversarial][edge]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const n = GENERATE(std::size_t(1), std::size_t(1) << 20);
  CAPTURE(n);
  Particles<TestType> p(n);
  Kokkos::deep_copy(p.x, Real(1e20));
  Kokkos::deep_copy(p.q, Real(-3));
  // Results filled with garbage first: the solver must write every one.
  Kokkos::deep_copy(p.phi, Real(7));
  Kokkos::deep_copy(p.field, Real(7));
  kfmm::Options options;
  options.time_stages = true;
  auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
  CHECK(allZero(onHost(p.phi)));
  CHECK(allZero(onHost(p.field)));
  CHECK(stats.results_checked);
  // No O(N^2) near field of the one leaf that holds them all: the stage that replaces it ran.
  CHECK(stats.p2p_interactions == 0);
  CHECK(stats.seconds("P2P") == 0);
  CHECK(stats.seconds("all at one point") > 0);
}

TEMPLATE_LIST_TEST_CASE("the direct sum computes in units too", "[direct][adversarial]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const set = GENERATE(Adversarial::large_cube, Adversarial::small_cube,
                            Adversarial::two_clusters, Adversarial::neutral);
  CAPTURE(kfmm::test::adversarialName(set));
  auto p = onDevice<TestType>(kfmm::test::adversarial(set, 500));
  kfmm::directSum(space, p.x, p.q, p.phi, p.field);
  auto const errors = errorsAgainstReference(p);
  CAPTURE(errors.potential, errors.field);
  // Rounding only: the same pairs summed in the precision of the config.
  double const rounding = isFloat<Real> ? 1e-5 : 1e-13;
  CHECK(errors.potential <= rounding);
  CHECK(errors.field <= rounding);
}

TEST_CASE("the unit frame moves positions exactly and scales without overflow",
          "[adversarial][unit-frame]")
{
  using kfmm::detail::uniform01;
  SECTION("float positions anywhere, at any scale, have exact float unit coordinates")
  {
    // Clouds of every size from 1e-30 to 1e30, at up to 1e4 of their size from the origin:
    // the shift is 0 or within a factor 2 of every coordinate, and the unit a power of two.
    for (std::uint64_t set = 0; set < 200; ++set)
    {
      double const size = std::pow(10.0, -30 + 60 * uniform01(7, set, 0));
      double const offset = uniform01(7, set, 1) < 0.3 ? 0
                                                       : std::pow(10.0, 4 * uniform01(7, set, 2));
      Kokkos::View<float *[3], Kokkos::HostSpace> x("kfmm::test::x", 100);
      for (std::size_t i = 0; i < x.extent(0); ++i)
        for (int d = 0; d < 3; ++d)
          x(i, d) =
              static_cast<float>(size * (offset * (d == 0 ? 1 : -0.5) + uniform01(set, i, d)));
      auto const frame = kfmm::detail::unitFrame(
          kfmm::tree::boundingCube(Kokkos::DefaultHostExecutionSpace{}, x), "test");
      bool exact = true;
      for (std::size_t i = 0; i < x.extent(0); ++i)
        for (int d = 0; d < 3; ++d)
        {
          double const unit = frame.position(x(i, d), d);
          exact = exact && static_cast<double>(static_cast<float>(unit)) == unit &&
                  std::abs(unit) < 2;
        }
      CAPTURE(set, size, offset);
      CHECK(exact);
    }
  }
  SECTION("scaling by a power of two is exact: the same unit problem")
  {
    Kokkos::View<double *[3], Kokkos::HostSpace> x("kfmm::test::x", 50);
    Kokkos::View<double *[3], Kokkos::HostSpace> y("kfmm::test::y", 50);
    for (std::size_t i = 0; i < x.extent(0); ++i)
      for (int d = 0; d < 3; ++d)
      {
        x(i, d) = 3 + uniform01(3, i, d);
        y(i, d) = std::ldexp(x(i, d), 70);
      }
    Kokkos::DefaultHostExecutionSpace host;
    auto const fx = kfmm::detail::unitFrame(kfmm::tree::boundingCube(host, x), "test");
    auto const fy = kfmm::detail::unitFrame(kfmm::tree::boundingCube(host, y), "test");
    CHECK(fy.length_exponent == fx.length_exponent + 70);
    bool same = true;
    for (std::size_t i = 0; i < x.extent(0); ++i)
      for (int d = 0; d < 3; ++d)
        same = same && fx.position(x(i, d), d) == fy.position(y(i, d), d);
    CHECK(same);
  }
  SECTION("powers of two beyond the type's exponents: no overflow unless the result does")
  {
    using kfmm::detail::PowerOfTwo;
    float const tiny = std::ldexp(1.0f, -140); // a subnormal
    CHECK(PowerOfTwo<float>::of(200)(tiny) == std::ldexp(1.0f, 60));
    CHECK(PowerOfTwo<float>::of(-230)(std::ldexp(1.0f, 100)) == std::ldexp(1.0f, -130));
    CHECK(PowerOfTwo<float>::of(-300)(std::numeric_limits<float>::max()) == 0);
    CHECK(std::isinf(PowerOfTwo<float>::of(300)(tiny)));
    CHECK(PowerOfTwo<float>::of(100000)(0.0f) == 0);
    CHECK(PowerOfTwo<double>::of(-2000)(std::ldexp(1.0, 1000)) == std::ldexp(1.0, -1000));
    CHECK(PowerOfTwo<double>::of(2000)(std::ldexp(1.0, -1074)) == std::ldexp(1.0, 926));
  }
}

namespace
{

/// exponents(i) = exponentAbove(values(i)) and powers(i) = normalPowerOfTwo<double>(i - 1022),
/// in a kernel of the space under test.
template <class MemorySpace>
struct UnitExponents
{
  Kokkos::View<double *, MemorySpace> values;
  Kokkos::View<int *, MemorySpace> exponents;
  Kokkos::View<double *, MemorySpace> powers;

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    if (i < static_cast<int>(values.extent(0)))
      exponents(i) = kfmm::detail::exponentAbove(values(i));
    powers(i) = kfmm::detail::normalPowerOfTwo<double>(i - 1022);
  }
};

} // namespace

TEMPLATE_LIST_TEST_CASE("positions whose extent overflows a double are an error, not a hang",
                        "[fmm][direct][adversarial][edge]", kfmm::test::Configs)
{
  // Finite coordinates, but the cube around them has an infinite side, which no frame of
  // powers of two can scale (detail/UnitFrame.hpp). ctest's time limit catches a hang.
  using Catch::Matchers::ContainsSubstring;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  Particles<TestType> p(2);
  Kokkos::View<double *[3], Memory> x("kfmm::test::x64", 2);
  auto x_h = Kokkos::create_mirror_view(x);
  Kokkos::deep_copy(x_h, 0.0);
  x_h(0, 0) = -1e308;
  x_h(1, 0) = 1e308;
  Kokkos::deep_copy(x, x_h);
  Kokkos::deep_copy(p.q, 1);
  auto const overflows = ContainsSubstring("the positions span more than a double can hold");
  CHECK_THROWS_AS(kfmm::evaluate(space, x, p.q, p.phi, p.field), kfmm::Exception);
  CHECK_THROWS_WITH(kfmm::evaluate(space, x, p.q, p.phi, p.field),
                    ContainsSubstring("kfmm::evaluate: ") && overflows);
  CHECK_THROWS_WITH((kfmm::Fmm<typename TestType::real_type, Memory>(space, x)), overflows);
  CHECK_THROWS_WITH(kfmm::directSum(space, x, p.q, p.phi, p.field),
                    ContainsSubstring("kfmm::directSum: ") && overflows);
}

TEMPLATE_LIST_TEST_CASE("the units' exponents and powers of two are frexp's and ldexp's",
                        "[adversarial][units]", kfmm::test::Spaces)
{
  // The solver finds the charges' unit on the device (detail::findChargeUnit), where Kokkos
  // 3.4 offers neither frexp nor ldexp: its own exponentAbove and normalPowerOfTwo must give
  // theirs exactly, normal, subnormal and extreme values included.
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::vector<double> const values = {0.0,
                                      1.0,
                                      -1.0,
                                      0.5,
                                      0.75,
                                      3.0,
                                      -1e-3,
                                      123456.789,
                                      std::ldexp(1.0, 31),
                                      std::ldexp(1.0, 32),
                                      std::ldexp(1.0, -32),
                                      std::ldexp(1.0, -33) * 3,
                                      std::numeric_limits<double>::min(),
                                      std::numeric_limits<double>::denorm_min(),
                                      std::ldexp(1.0, -1060) * 5,
                                      std::numeric_limits<double>::max(),
                                      std::numeric_limits<float>::max(),
                                      -std::numeric_limits<float>::denorm_min()};
  int const count = static_cast<int>(values.size());
  int const powers = 2046; // 2^-1022 .. 2^1023
  Kokkos::View<double *, Memory> device_values("kfmm::test::values", count);
  Kokkos::deep_copy(device_values,
                    Kokkos::View<double const *, Kokkos::HostSpace>(values.data(), values.size()));
  UnitExponents<Memory> const functor{device_values,
                                      Kokkos::View<int *, Memory>("kfmm::test::exponents", count),
                                      Kokkos::View<double *, Memory>("kfmm::test::powers", powers)};
  Kokkos::parallel_for("kfmm::test::unit_exponents",
                       Kokkos::RangePolicy<typename TestType::execution_space>(space, 0, powers),
                       functor);
  auto const exponents =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, functor.exponents);
  auto const power = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, functor.powers);
  for (int i = 0; i < count; ++i)
  {
    int expected = 0;
    std::frexp(values[i], &expected);
    CAPTURE(values[i]);
    CHECK(exponents(i) == expected);
    CHECK(kfmm::detail::exponentAbove(values[i]) == expected);
  }
  int wrong = 0;
  for (int i = 0; i < powers; ++i)
    wrong += power(i) == std::ldexp(1.0, i - 1022) ? 0 : 1;
  CHECK(wrong == 0);
  for (int e = -126; e <= 127; ++e)
    wrong += kfmm::detail::normalPowerOfTwo<float>(e) == std::ldexp(1.0f, e) ? 0 : 1;
  CHECK(wrong == 0);
}
