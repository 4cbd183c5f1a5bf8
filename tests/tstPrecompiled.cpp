// SPDX-License-Identifier: BSD-3-Clause
// kfmm::evaluate through kfmm::precompiled. Every call in this file passes Views in the
// execution space's memory space and default layout, so it runs the library's compiled
// instance: the test precompiled_uses_library checks that this file's object code defines
// no solver code of its own. The results must be as accurate as the header-only solver's
// (tstFmm.cpp), and the library's messages must name kfmm::evaluate.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>
#include <type_traits>

#include "Reference.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

using kfmm::test::onHost;

#if !defined(KFMM_PRECOMPILED)
#error "tstPrecompiled.cpp tests kfmm::precompiled and must be built with it"
#endif

TEMPLATE_LIST_TEST_CASE("the precompiled kfmm::evaluate is accurate", "[precompiled]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 2000;
  kfmm::test::Particles<TestType> p(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 11, p.x, p.q);
  kfmm::Options options;
  options.leaf_size = 32;
  // The accuracy test's settings (tstFmm.cpp).
  bool const single = std::is_same<Real, float>::value;
  options.order = single ? 8 : 18;
  options.theta = single ? 0.5 : 0.4;
  double const required = single ? 1e-5 : 1e-10;
  // Read-only positions and charges are the library's Views too.
  Kokkos::View<Real const *[3], Memory> const x = p.x;
  Kokkos::View<Real const *, Memory> const q = p.q;
  auto const stats = kfmm::evaluate(space, x, q, p.phi, p.field, options);
  CHECK(stats.leaves > 1);

  auto const x_host = onHost(p.x);
  auto const exact = kfmm::test::referenceDirectSum(x_host, x_host, onHost(p.q));
  double const potential_error = kfmm::relativeL2Error(onHost(p.phi), exact.potential);
  double const field_error = kfmm::relativeL2Error(onHost(p.field), exact.field);
  CAPTURE(potential_error, field_error);
  CHECK(potential_error <= required);
  CHECK(field_error <= required);
}

TEMPLATE_LIST_TEST_CASE("the precompiled kfmm::evaluate at targets is accurate", "[precompiled]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  kfmm::test::Particles<TestType> sources(1500);
  kfmm::generate(space, kfmm::Distribution::plummer, 3, sources.x, sources.q);
  kfmm::test::Particles<TestType> targets(700);
  kfmm::generate(space, kfmm::Distribution::sphere, 8, targets.x, targets.q);
  kfmm::Options options;
  options.leaf_size = 32;
  bool const single = std::is_same<Real, float>::value;
  options.order = single ? 8 : 18;
  options.theta = single ? 0.5 : 0.4;
  double const required = single ? 1e-5 : 1e-10;
  kfmm::evaluate(space, sources.x, sources.q, targets.x, targets.phi, targets.field, options);

  auto const exact =
      kfmm::test::referenceDirectSum(onHost(targets.x), onHost(sources.x), onHost(sources.q));
  double const potential_error = kfmm::relativeL2Error(onHost(targets.phi), exact.potential);
  double const field_error = kfmm::relativeL2Error(onHost(targets.field), exact.field);
  CAPTURE(potential_error, field_error);
  CHECK(potential_error <= required);
  CHECK(field_error <= required);
}

TEMPLATE_LIST_TEST_CASE("the precompiled kfmm::evaluate reports in the caller's terms",
                        "[precompiled][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  kfmm::test::Particles<TestType> p(100);
  kfmm::generate(space, kfmm::Distribution::uniform, 2, p.x, p.q);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.x);
  x(5, 0) = std::numeric_limits<Real>::quiet_NaN();
  Kokkos::deep_copy(p.x, x);
  CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field),
                    Catch::Matchers::Equals("kfmm::evaluate: argument 'positions' holds a NaN "
                                            "or infinite value at index 5"));
}
