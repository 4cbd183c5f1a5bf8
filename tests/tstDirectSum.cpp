// SPDX-License-Identifier: BSD-3-Clause
// The all-pairs direct sum against the double-precision serial loop.
#include <kfmm/Accuracy.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "Reference.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::Particles;

/// Relative L2 errors of potential and field against the serial double loop.
template <class Config>
kfmm::test::ResultErrors directSumErrors(Particles<Config> const &p, double softening)
{
  typename Config::execution_space space;
  kfmm::directSum(space, p.x, p.q, p.phi, p.field, softening);
  auto const x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.x);
  auto const q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.q);
  auto const phi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.phi);
  auto const g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.field);
  auto const exact = kfmm::test::referenceDirectSum(x, x, q, softening);
  return {kfmm::relativeL2Error(phi, exact.potential), kfmm::relativeL2Error(g, exact.field)};
}

template <class Real>
constexpr double directSumTolerance()
{
  return std::is_same<Real, float>::value ? 1e-6 : 1e-13;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("direct sum matches the double-precision serial loop", "[kernels][direct]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  auto const n = GENERATE(as<std::size_t>{}, 0, 1, 2, 3, 1000, 4097);
  auto const softening = GENERATE(0.0, 0.01);
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  CAPTURE(n, softening, kfmm::distributionName(distribution));

  Particles<TestType> p(n);
  kfmm::generate(typename TestType::execution_space{}, distribution, 42, p.x, p.q);
  auto const [phi_error, field_error] = directSumErrors(p, softening);
  CAPTURE(phi_error, field_error);
  // A single particle sees nothing: both errors are 0 against an exact 0.
  CHECK(phi_error <= directSumTolerance<Real>());
  CHECK(field_error <= directSumTolerance<Real>());
}

TEMPLATE_LIST_TEST_CASE("direct sum: coincident particles do not interact", "[kernels][direct]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  Particles<TestType> p(3);
  // Two particles at the origin, one at (2, 0, 0) with charge 2.
  auto x = Kokkos::create_mirror_view(p.x);
  auto q = Kokkos::create_mirror_view(p.q);
  Kokkos::deep_copy(x, Real(0));
  x(2, 0) = 2;
  q(0) = 1;
  q(1) = 1;
  q(2) = 2;
  Kokkos::deep_copy(p.x, x);
  Kokkos::deep_copy(p.q, q);
  kfmm::directSum(typename TestType::execution_space{}, p.x, p.q, p.phi, p.field, 0.5);
  auto phi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.phi);
  auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.field);
  // Origin: only the charge 2 at distance 2 with softening 0.5: 2 / sqrt(4.25).
  double const tol = std::is_same<Real, float>::value ? 1e-6 : 1e-14;
  CHECK(std::abs(phi(0) - 2 / std::sqrt(4.25)) < tol);
  CHECK(std::abs(phi(1) - 2 / std::sqrt(4.25)) < tol);
  CHECK(std::abs(g(0, 0) - 2 * 2 / std::pow(4.25, 1.5)) < tol);
  // (2, 0, 0): two unit charges at distance 2; the field points back at them.
  CHECK(std::abs(phi(2) - 2 / std::sqrt(4.25)) < tol);
  CHECK(std::abs(g(2, 0) + 2 * 2 / std::pow(4.25, 1.5)) < tol);
  CHECK(g(2, 1) == 0);
  CHECK(g(2, 2) == 0);
}

TEMPLATE_LIST_TEST_CASE("direct sum: coincident particles in different source tiles do not "
                        "interact",
                        "[kernels][direct]", kfmm::test::Configs)
{
  // Tiles are swept without excluding zero distances and swept again where one occurred
  // (TargetBlock::interact): a particle, its copy 700 places later, beyond any backend's
  // tile, and itself must all be excluded, or the sums are not finite.
  using Real = typename TestType::real_type;
  std::size_t const n = 1000;
  std::size_t const copies = 300;
  Particles<TestType> p(n);
  kfmm::generate(typename TestType::execution_space{}, kfmm::Distribution::uniform, 9, p.x, p.q);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.x);
  for (std::size_t i = 0; i < copies; ++i)
    for (int d = 0; d < 3; ++d)
      x(n - copies + i, d) = x(i, d);
  Kokkos::deep_copy(p.x, x);
  auto const [phi_error, field_error] = directSumErrors(p, 0.0);
  CAPTURE(phi_error, field_error);
  CHECK(phi_error <= directSumTolerance<Real>());
  CHECK(field_error <= directSumTolerance<Real>());
}

TEMPLATE_LIST_TEST_CASE("direct sum at sampled targets equals the full sum there",
                        "[kernels][direct]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  Particles<TestType> p(777);
  kfmm::generate(space, kfmm::Distribution::sphere, 7, p.x, p.q);
  kfmm::directSum(space, p.x, p.q, p.phi, p.field);

  auto const targets = Kokkos::subview(p.x, Kokkos::make_pair(100, 150), Kokkos::ALL);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", 50);
  Kokkos::View<Real *[3], Memory> field("kfmm::test::field", 50);
  kfmm::directSum(space, targets, p.x, p.q, phi, field);

  // Whole Views to the host, then the rows of the sampled targets (a strided device subview
  // cannot be copied between memory spaces).
  auto const all_phi = Kokkos::subview(
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.phi), Kokkos::make_pair(100, 150));
  auto const all_g =
      Kokkos::subview(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, p.field),
                      Kokkos::make_pair(100, 150), Kokkos::ALL);
  auto const phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, phi);
  auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, field);
  CHECK(kfmm::relativeL2Error(phi_h, all_phi) <= directSumTolerance<Real>());
  CHECK(kfmm::relativeL2Error(g_h, all_g) <= directSumTolerance<Real>());
}

TEMPLATE_LIST_TEST_CASE("direct sum of a few targets against many sources, in source slices",
                        "[kernels][direct]", kfmm::test::Configs)
{
  // Five targets fill one team: the sum splits the 20000 sources into slices (as many as the
  // execution space's concurrency asks for, at most one per tile) and adds the slices' sums.
  // Required: the relative L2 errors of the float or double tolerance against the serial loop
  // in double.
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  Particles<TestType> sources(20000);
  kfmm::generate(space, kfmm::Distribution::plummer, 3, sources.x, sources.q);
  auto const targets = Kokkos::subview(sources.x, Kokkos::make_pair(0, 5), Kokkos::ALL);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", 5);
  Kokkos::View<Real *[3], Memory> field("kfmm::test::field", 5);
  kfmm::directSum(space, targets, sources.x, sources.q, phi, field);

  auto const x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sources.x);
  auto const q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sources.q);
  auto const exact = kfmm::test::referenceDirectSum(
      Kokkos::subview(x, Kokkos::make_pair(0, 5), Kokkos::ALL), x, q);
  auto const phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, phi);
  auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, field);
  CHECK(kfmm::relativeL2Error(phi_h, exact.potential) <= directSumTolerance<Real>());
  CHECK(kfmm::relativeL2Error(g_h, exact.field) <= directSumTolerance<Real>());
}

TEST_CASE("direct sum source slices fill the execution space, never past a tile each",
          "[kernels][direct]")
{
  using kfmm::kernels::directSourceSlices;
  CHECK(directSourceSlices(1, 1000, 2112) == 1000);
  CHECK(directSourceSlices(1, 5000, 2112) == 2112);
  CHECK(directSourceSlices(8, 5000, 2112) == 264);
  CHECK(directSourceSlices(3000, 5000, 2112) == 1);
  CHECK(directSourceSlices(1, 0, 2112) == 1);
  CHECK(directSourceSlices(1, 7, 1) == 1);
}
