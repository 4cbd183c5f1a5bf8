// SPDX-License-Identifier: BSD-3-Clause
// M2M and L2L as matrix products (kernels/ShiftMatrices.hpp) against the shifts built on the
// fly (M2MKernel, L2LKernel), at every level of an adaptive tree, so for children in all
// eight octants and at every length scale, on every execution space in float and double.
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/Downward.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/kernels/Upward.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

namespace
{

using kfmm::test::onHost;

/// Largest |a - b| over the largest |b| of two coefficient arrays, over every cell.
template <class A, class B>
double relativeMaxDifference(A const &a, B const &b)
{
  double difference = 0, norm = 0;
  for (std::size_t c = 0; c < a.extent(0); ++c)
    for (std::size_t i = 0; i < a.extent(1); ++i)
    {
      difference = std::max(difference, double(Kokkos::abs(a(c, i) - b(c, i))));
      norm = std::max(norm, double(Kokkos::abs(b(c, i))));
    }
  return difference / norm;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("M2M and L2L products apply the shifts of every octant",
                        "[shift][matrices]", kfmm::test::Configs)
{
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  using Memory = typename Space::memory_space;
  using Coefficients = kfmm::kernels::detail::CoefficientArray<Real, Memory>;
  Space space;
  int const p = GENERATE(1, 4, 9, 16);
  CAPTURE(p);
  auto const x = kfmm::test::generated<TestType>(kfmm::Distribution::plummer, 3000);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  REQUIRE(tree.depth() >= 3);
  kfmm::kernels::detail::CellView<Memory> const cells(tree);
  int const count = kfmm::expansions::coefficientCount(p);
  auto const matrices = kfmm::kernels::buildShiftMatrices<Real, Space, Memory>(
      space, kfmm::detail::Workspace<Memory>::direct(), p, 1);

  // Random expansions in every cell, O(1) in their cells' units, as the solver stores them.
  Coefficients random("kfmm::test::random", tree.numCells(), count);
  {
    auto host = Kokkos::create_mirror_view(random);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (std::size_t c = 0; c < host.extent(0); ++c)
      for (int i = 0; i < count; ++i)
        host(c, i) = Kokkos::complex<Real>(Real(uniform(rng)), Real(uniform(rng)));
    Kokkos::deep_copy(random, host);
  }
  auto const launch = [&](char const *name, auto const &kernel, int teams, std::size_t scratch) {
    Kokkos::parallel_for(name,
                         Kokkos::TeamPolicy<Space>(space, teams, Kokkos::AUTO)
                             .set_scratch_size(0, Kokkos::PerTeam(scratch)),
                         kernel);
  };
  // Two rounding paths of the same operator: (T1)/(T3) summed per child against the
  // product summed over the children, the matrices computed in double; each output sums up
  // to n = (p+1)(p+2) terms either way (measured: at most 1.9e-13 in double, at p 16 on a
  // host build without fused multiply-add).
  double const tolerance = std::is_same<Real, float>::value ? 1e-5 : 1e-12;
  for (int level = 0; level < tree.depth(); ++level)
  {
    int const first = tree.level_offsets[level];
    int const parents = tree.level_offsets[level + 1] - first;
    int const children_first = tree.level_offsets[level + 1];
    int const children = tree.level_offsets[level + 2] - children_first;
    CAPTURE(level, parents, children);

    // M2M: each parent of this level gets its children's multipoles.
    Coefficients on_the_fly("kfmm::test::m2m_on_the_fly", tree.numCells(), count);
    Coefficients product("kfmm::test::m2m_product", tree.numCells(), count);
    Kokkos::deep_copy(on_the_fly, random);
    Kokkos::deep_copy(product, random);
    using M2M = kfmm::kernels::M2MKernel<Space, Real>;
    using Product = kfmm::kernels::ShiftProductKernel<Space, Real>;
    launch("kfmm::test::m2m", M2M{cells, on_the_fly, p, first}, parents, M2M::scratchBytes(p));
    launch("kfmm::test::m2m_product", Product{cells, product, matrices, p, first, 0}, parents,
           Product::scratchBytes(p));
    double const m2m = relativeMaxDifference(onHost(product), onHost(on_the_fly));
    CHECK(m2m <= tolerance);

    // L2L: each child of the next level gets its parent's local expansion.
    Kokkos::deep_copy(on_the_fly, random);
    Kokkos::deep_copy(product, random);
    using L2L = kfmm::kernels::L2LKernel<Space, Real>;
    launch("kfmm::test::l2l", L2L{cells, on_the_fly, p, children_first}, children,
           L2L::scratchBytes(p));
    launch("kfmm::test::l2l_product", Product{cells, product, matrices, p, first, 1}, parents,
           Product::scratchBytes(p));
    double const l2l = relativeMaxDifference(onHost(product), onHost(on_the_fly));
    CAPTURE(m2m, l2l);
    CHECK(l2l <= tolerance);
  }
}
