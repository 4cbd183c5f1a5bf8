// SPDX-License-Identifier: BSD-3-Clause
// Bad input to the direct sum gives a kfmm::Exception whose message names the argument.
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>

#include "TestTypes.hpp"

using Catch::Matchers::ContainsSubstring;

TEMPLATE_LIST_TEST_CASE("direct sum rejects bad input with a message naming it",
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

  SECTION("valid input is accepted") { CHECK_NOTHROW(kfmm::directSum(space, x, q, phi, g)); }
  SECTION("charges of the wrong length")
  {
    Kokkos::View<Real *, Memory> q_short("kfmm::test::q_short", n - 1);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q_short, phi, g),
                      ContainsSubstring("'charges'") && ContainsSubstring("extent 9"));
  }
  SECTION("potential of the wrong length")
  {
    Kokkos::View<Real *, Memory> phi_long("kfmm::test::phi_long", n + 1);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi_long, g),
                      ContainsSubstring("'potential'"));
  }
  SECTION("field of the wrong length")
  {
    Kokkos::View<Real *[3], Memory> g_short("kfmm::test::g_short", 2);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi, g_short), ContainsSubstring("'field'"));
  }
  SECTION("positions with two columns")
  {
    Kokkos::View<Real **, Memory> x2("kfmm::test::x2", n, 2);
    CHECK_THROWS_WITH(kfmm::directSum(space, x2, q, phi, g),
                      ContainsSubstring("'targets (columns)'"));
  }
  SECTION("negative softening")
  {
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi, g, -0.1),
                      ContainsSubstring("'softening'"));
  }
  SECTION("NaN softening")
  {
    CHECK_THROWS_WITH(
        kfmm::directSum(space, x, q, phi, g, std::numeric_limits<double>::quiet_NaN()),
        ContainsSubstring("'softening'"));
  }
  SECTION("NaN and Inf coordinates: the first bad index is named")
  {
    auto const bad = GENERATE(std::numeric_limits<Real>::quiet_NaN(),
                              std::numeric_limits<Real>::infinity(),
                              -std::numeric_limits<Real>::infinity());
    auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
    xh(7, 1) = bad;
    xh(9, 2) = bad;
    Kokkos::deep_copy(x, xh);
    CHECK_THROWS_AS(kfmm::directSum(space, x, q, phi, g), kfmm::Exception);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi, g),
                      ContainsSubstring("'targets'") && ContainsSubstring("index 7"));
  }
  SECTION("NaN charge")
  {
    auto qh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q);
    qh(3) = std::numeric_limits<Real>::quiet_NaN();
    Kokkos::deep_copy(q, qh);
    CHECK_THROWS_WITH(kfmm::directSum(space, x, q, phi, g),
                      ContainsSubstring("'charges'") && ContainsSubstring("index 3"));
  }
}
