// SPDX-License-Identifier: BSD-3-Clause
// Options::leaf_size = 0: the solver takes the leaf size of its backend's table
// (tuning/LeafSizeTable.hpp) for the order it runs at, also an order chosen for a tolerance,
// and reports it; a leaf size of the caller's own is kept. The tables themselves are sorted
// by order with sizes >= 1.
#include <kfmm/Fmm.hpp>
#include <kfmm/tuning/LeafSizeTable.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::tuning::LeafSizeRow;
using kfmm::test::isFloat;

/// The leaf size the backend's table gives at `order` in precision Real.
template <class ExecutionSpace, class Real>
int tableLeafSize(int order)
{
  using Tuning = kfmm::tuning::Tuning<ExecutionSpace>;
  return isFloat<Real> ? kfmm::tuning::tunedLeafSize(Tuning::leaf_sizes_float, order)
                       : kfmm::tuning::tunedLeafSize(Tuning::leaf_sizes_double, order);
}

template <std::size_t N>
void checkTable(LeafSizeRow const (&rows)[N])
{
  for (std::size_t i = 0; i < N; ++i)
  {
    CAPTURE(i, rows[i].order, rows[i].leaf_size);
    CHECK(rows[i].leaf_size >= 1);
    CHECK((rows[i].order >= 1 && rows[i].order <= kfmm::max_order));
    if (i > 0)
      CHECK(rows[i].order > rows[i - 1].order);
  }
}

} // namespace

TEST_CASE("the tuned leaf size is the nearest measured order's", "[tuning][leaf_size]")
{
  constexpr LeafSizeRow rows[] = {{2, 32}, {6, 64}, {10, 256}};
  using kfmm::tuning::tunedLeafSize;
  CHECK(tunedLeafSize(rows, 1) == 32);
  CHECK(tunedLeafSize(rows, 2) == 32);
  CHECK(tunedLeafSize(rows, 4) == 32); // equally near 2 and 6: the lower order
  CHECK(tunedLeafSize(rows, 5) == 64);
  CHECK(tunedLeafSize(rows, 8) == 64);
  CHECK(tunedLeafSize(rows, 9) == 256);
  CHECK(tunedLeafSize(rows, 24) == 256);
  static_assert(tunedLeafSize(rows, 7) == 64, "usable at compile time");
}

TEMPLATE_LIST_TEST_CASE("the backend's leaf-size tables are sorted by order", "[tuning][leaf_size]",
                        kfmm::test::Configs)
{
  using Tuning = kfmm::tuning::Tuning<typename TestType::execution_space>;
  checkTable(Tuning::leaf_sizes_float);
  checkTable(Tuning::leaf_sizes_double);
}

TEMPLATE_LIST_TEST_CASE("leaf size 0 takes the backend's tuned one for the order",
                        "[fmm][tuning][leaf_size]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using ExecutionSpace = typename TestType::execution_space;
  using Memory = typename TestType::memory_space;
  ExecutionSpace space;
  kfmm::test::Particles<TestType> p(3000);
  kfmm::generate(space, kfmm::Distribution::plummer, 5, p.x, p.q);

  kfmm::Options options;
  SECTION("the default order")
  {
    REQUIRE(options.leaf_size == 0);
    kfmm::Fmm<Real, Memory> fmm(space, p.x, options);
    int const expected = tableLeafSize<ExecutionSpace, Real>(options.order);
    CHECK(fmm.options().leaf_size == expected);
    fmm.evaluate(space, p.q, p.phi, p.field);
    CHECK(fmm.stats().leaf_size == expected);
  }
  SECTION("every order")
  {
    options.order = GENERATE(1, 3, 8, 12, 17, 24);
    kfmm::Fmm<Real, Memory> fmm(space, p.x, options);
    CAPTURE(options.order);
    CHECK(fmm.options().leaf_size == tableLeafSize<ExecutionSpace, Real>(options.order));
  }
  SECTION("the order chosen for a tolerance")
  {
    options.tolerance = 1e-5;
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    CAPTURE(stats.order);
    CHECK(stats.leaf_size == tableLeafSize<ExecutionSpace, Real>(stats.order));
  }
  SECTION("the caller's own is kept")
  {
    options.leaf_size = 24;
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    CHECK(stats.leaf_size == 24);
  }
}
