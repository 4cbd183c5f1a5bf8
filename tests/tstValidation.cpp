// SPDX-License-Identifier: BSD-3-Clause
// Bad input gives a kfmm::Exception whose message is in the caller's terms: the function they
// called, the argument as their overload names it, and numbers as they wrote them. The
// messages are checked word for word.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "TestTypes.hpp"

using Catch::Matchers::Equals;

TEST_CASE("numbers in messages read as the caller wrote them", "[validation]")
{
  using kfmm::detail::formatNumber;
  CHECK(formatNumber(0) == "0");
  CHECK(formatNumber(-0.0) == "-0");
  CHECK(formatNumber(0.1) == "0.1");
  CHECK(formatNumber(-2.5) == "-2.5");
  CHECK(formatNumber(1.5) == "1.5");
  CHECK(formatNumber(123456789) == "123456789");
  CHECK(formatNumber(1e-300) == "1e-300");
  CHECK(formatNumber(1e21) == "1e+21");
  // Not the shortest-looking decimal, but the shortest that reads back as the same double.
  CHECK(formatNumber(0.1 + 0.2) == "0.30000000000000004");
  CHECK(formatNumber(1.0 / 3) == "0.3333333333333333");
  CHECK(formatNumber(std::numeric_limits<double>::max()) == "1.7976931348623157e+308");
  CHECK(formatNumber(std::numeric_limits<double>::denorm_min()) == "5e-324");
  CHECK(formatNumber(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(formatNumber(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(formatNumber(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("the relative L2 error neither overflows nor underflows", "[validation][accuracy]")
{
  // The same errors at any scale in double's range: charges of 1e200 or 1e-200 give results
  // whose squares are beyond it.
  Kokkos::View<double *, Kokkos::HostSpace> approx("kfmm::test::approx", 3);
  Kokkos::View<double *, Kokkos::HostSpace> exact("kfmm::test::exact", 3);
  double const a[3] = {1.0, -2.0, 3.001};
  double const e[3] = {1.001, -2.0, 3.0};
  auto const at = [&](double scale) {
    for (int i = 0; i < 3; ++i)
    {
      approx(i) = a[i] * scale;
      exact(i) = e[i] * scale;
    }
    return kfmm::relativeL2Error(approx, exact);
  };
  double const unit = at(1.0);
  CHECK(unit > 2e-4);
  CHECK(unit < 6e-4);
  for (double scale : {0x1p600, 0x1p-600, 0x1p1000, 0x1p-1000})
  {
    CAPTURE(scale);
    CHECK(at(scale) == unit);
  }
  CHECK(std::abs(at(1e200) / unit - 1) < 1e-12);
  CHECK(std::abs(at(1e-200) / unit - 1) < 1e-12);
  CHECK(at(0.0) == 0.0);
  Kokkos::View<double *[3], Kokkos::HostSpace> field_approx("kfmm::test::field_approx", 2);
  Kokkos::View<double *[3], Kokkos::HostSpace> field_exact("kfmm::test::field_exact", 2);
  Kokkos::deep_copy(field_exact, 1e250);
  Kokkos::deep_copy(field_approx, 1e250);
  field_approx(1, 2) = 2e250;
  CHECK(std::abs(kfmm::relativeL2Error(field_approx, field_exact) - std::sqrt(1.0 / 6)) < 1e-12);
}

TEST_CASE("solver options are rejected with the value as given", "[validation][options]")
{
  auto const check = [](kfmm::Options const &options, std::string const &message) {
    CHECK_THROWS_WITH(kfmm::detail::validate(options, "kfmm::evaluate"), Equals(message));
  };
  CHECK_NOTHROW(kfmm::detail::validate(kfmm::Options{}, "kfmm::evaluate"));
  kfmm::Options options;
  options.order = 0;
  check(options, "kfmm::evaluate: option 'order' must be in 1.." + std::to_string(kfmm::max_order) +
                     ", got 0");
  options = {};
  options.theta = 0;
  check(options, "kfmm::evaluate: option 'theta' must be in (0, 1], got 0");
  options.theta = 1.5;
  check(options, "kfmm::evaluate: option 'theta' must be in (0, 1], got 1.5");
  options.theta = -1e-7;
  check(options, "kfmm::evaluate: option 'theta' must be in (0, 1], got -1e-07");
  options = {};
  options.leaf_size = -1;
  check(options, "kfmm::evaluate: option 'leaf_size' must be >= 1, or 0 for the backend's "
                 "tuned one, got -1");
  options = {};
  options.softening = -0.1;
  check(options, "kfmm::evaluate: option 'softening' must be finite and >= 0, got -0.1");
  options.softening = std::numeric_limits<double>::infinity();
  check(options, "kfmm::evaluate: option 'softening' must be finite and >= 0, got inf");
}

TEMPLATE_LIST_TEST_CASE("direct sum rejects bad input in the caller's terms",
                        "[kernels][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 10;
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", n);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", n);
  Kokkos::parallel_for(
      "kfmm::test::spread", Kokkos::RangePolicy<typename TestType::execution_space>(space, 0, n),
      KOKKOS_LAMBDA(int i) {
        x(i, 0) = Real(i);
        q(i) = 1;
      });
  // Sets entry (i, c) of a copy of x to `value`.
  auto const spoilt = [&](std::size_t i, int c, Real value) {
    Kokkos::View<Real *[3], Memory> y("kfmm::test::y", n);
    Kokkos::deep_copy(y, x);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    yh(i, c) = value;
    Kokkos::deep_copy(y, yh);
    return y;
  };

  SECTION("valid input is accepted")
  {
    CHECK_NOTHROW(kfmm::directSum(space, x, q, phi, g));
    CHECK_NOTHROW(kfmm::directSum(space, x, x, q, phi, g));
    // An integer softening is the softening of the positions overload, not a 'field'.
    CHECK_NOTHROW(kfmm::directSum(space, x, q, phi, g, 0));
  }
  SECTION("charges of the wrong length")
  {
    Kokkos::View<Real *, Memory> q_short("kfmm::test::q_short", n - 1);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q_short, phi, g),
                      Equals("kfmm::directSum: argument 'charges' has extent 9, expected 10"));
  }
  SECTION("potential of the wrong length")
  {
    Kokkos::View<Real *, Memory> phi_long("kfmm::test::phi_long", n + 1);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi_long, g),
                      Equals("kfmm::directSum: argument 'potential' has extent 11, expected 10"));
  }
  SECTION("field of the wrong length")
  {
    Kokkos::View<Real *[3], Memory> g_short("kfmm::test::g_short", 2);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi, g_short),
                      Equals("kfmm::directSum: argument 'field' has extent 2, expected 10"));
  }
  SECTION("positions with two columns: named 'positions' by the overload that takes them")
  {
    Kokkos::View<Real **, Memory> x2("kfmm::test::x2", n, 2);
    CHECK_THROWS_WITH(
        kfmm::directSum(space, x2, q, phi, g),
        Equals("kfmm::directSum: argument 'positions (columns)' has extent 2, expected 3"));
    CHECK_THROWS_WITH(
        kfmm::directSum(space, x, x2, q, phi, g),
        Equals("kfmm::directSum: argument 'sources (columns)' has extent 2, expected 3"));
  }
  SECTION("negative or NaN softening, printed as given")
  {
    CHECK_THROWS_WITH(
        kfmm::directSum(space, x, q, phi, g, -0.1),
        Equals("kfmm::directSum: argument 'softening' must be finite and >= 0, got -0.1"));
    CHECK_THROWS_WITH(
        kfmm::directSum(space, x, q, phi, g, std::numeric_limits<double>::quiet_NaN()),
        Equals("kfmm::directSum: argument 'softening' must be finite and >= 0, got nan"));
  }
  SECTION("NaN and Inf coordinates: the argument and the first bad index are named")
  {
    auto const bad = GENERATE(std::numeric_limits<Real>::quiet_NaN(),
                              std::numeric_limits<Real>::infinity(),
                              -std::numeric_limits<Real>::infinity());
    auto y = spoilt(7, 1, bad);
    auto yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
    yh(9, 2) = bad;
    Kokkos::deep_copy(y, yh);
    CHECK_THROWS_AS(kfmm::directSum(space, y, q, phi, g), kfmm::Exception);
    CHECK_THROWS_WITH(kfmm::directSum(space, y, q, phi, g),
                      Equals("kfmm::directSum: argument 'positions' holds a NaN or infinite "
                             "value at index 7"));
    CHECK_THROWS_WITH(kfmm::directSum(space, y, x, q, phi, g),
                      Equals("kfmm::directSum: argument 'targets' holds a NaN or infinite "
                             "value at index 7"));
    CHECK_THROWS_WITH(kfmm::directSum(space, x, y, q, phi, g),
                      Equals("kfmm::directSum: argument 'sources' holds a NaN or infinite "
                             "value at index 7"));
  }
  SECTION("NaN charge")
  {
    auto qh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q);
    qh(3) = std::numeric_limits<Real>::quiet_NaN();
    Kokkos::deep_copy(q, qh);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi, g),
                      Equals("kfmm::directSum: argument 'charges' holds a NaN or infinite value "
                             "at index 3"));
  }
}
