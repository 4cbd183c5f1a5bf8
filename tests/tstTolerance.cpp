// SPDX-License-Identifier: BSD-3-Clause
// Options::tolerance: the order and theta chosen from the backend's accuracy table give a
// relative L2 field error, against the direct sum in double, within the tolerance asked for,
// on uniform and Plummer particles deep enough for the tree to matter (N = 2e4), on every
// execution space in float and double; tolerances out of reach and conflicting options are
// refused in the caller's terms.
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "FieldError.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::isFloat;

/// The measured error of the row of the backend's accuracy table that `stats` ran with;
/// infinite if it ran with none.
template <class Real, class ExecutionSpace>
double tableError(kfmm::Stats const &stats)
{
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  auto const find = [&](auto const &rows) {
    for (auto const &row : rows)
      if (row.order == stats.order && row.theta == stats.theta)
        return row.field_error;
    return std::numeric_limits<double>::infinity();
  };
  if constexpr (isFloat<Real>)
    return find(Tune::accuracy_float);
  else
    return find(Tune::accuracy_double);
}

} // namespace

TEMPLATE_LIST_TEST_CASE("a tolerance gives a field error within it", "[fmm][tolerance][accuracy]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  std::vector<double> tolerances{1e-3, 1e-5};
  if (!isFloat<Real>)
    tolerances.insert(tolerances.end(), {1e-8, 1e-11});
  std::size_t const n = 20000;
  kfmm::test::Particles<TestType> p(n);
  kfmm::generate(space, distribution, 13, p.x, p.q);
  double previous_table_error = std::numeric_limits<double>::infinity();
  for (double const tolerance : tolerances)
  {
    kfmm::Options options;
    options.tolerance = tolerance;
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    double const error = kfmm::test::fieldError(space, p.x, p.q, p.x, p.field, 20);
    CAPTURE(kfmm::distributionName(distribution), tolerance, stats.order, stats.theta, error);
    CHECK(error <= tolerance);
    // A smaller tolerance never gets a less accurate row of the table (its rows grow in
    // accuracy; the order alone may fall, with a smaller theta).
    double const table_error = tableError<Real, typename TestType::execution_space>(stats);
    CHECK(table_error < std::numeric_limits<double>::infinity()); // a row of the table
    CHECK(table_error <= previous_table_error);
    previous_table_error = table_error;
  }
}

TEMPLATE_LIST_TEST_CASE("a tolerance is met beside clusters of coincident points",
                        "[fmm][tolerance][accuracy]", kfmm::test::Configs)
{
  // k coincident points and one more, 1 away: the lone point's field is carried by the
  // pairs of its large leaf with the cluster's small cells alone, so any error of theirs is
  // that target's (docs/ACCURACY.md, "Sparse leaves"); and k points in a ball of radius
  // 1e-6 with 5 points spread over [-1, 1]^3.
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  std::size_t const k = GENERATE(300, 3000);
  bool const coincident = GENERATE(true, false);
  std::size_t const n = k + (coincident ? 1 : 5);
  kfmm::test::Particles<TestType> p(n);
  auto const x = Kokkos::create_mirror_view(p.x);
  Kokkos::deep_copy(x, Real(0));
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
    {
      double const uniform = 2 * kfmm::detail::uniform01(7, i, d) - 1; // in [-1, 1)
      x(i, d) = static_cast<Real>(i < k ? (coincident ? 0 : 1e-6 * uniform)
                                        : (coincident ? (d == 0 ? 1 : 0) : uniform));
    }
  Kokkos::deep_copy(p.x, x);
  Kokkos::deep_copy(p.q, Real(1));
  std::vector<double> tolerances{1e-3, 1e-5};
  if (!isFloat<Real>)
    tolerances.push_back(1e-8);
  for (double const tolerance : tolerances)
  {
    kfmm::Options options;
    options.tolerance = tolerance;
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    double const error = kfmm::test::fieldError(space, p.x, p.q, p.x, p.field, 1);
    CAPTURE(k, coincident, tolerance, stats.order, stats.theta, error);
    CHECK(error <= tolerance);
  }
}

TEMPLATE_LIST_TEST_CASE("tolerances out of reach and conflicting options are refused",
                        "[fmm][tolerance][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  kfmm::test::Particles<TestType> p(500);
  kfmm::generate(space, kfmm::Distribution::uniform, 2, p.x, p.q);
  kfmm::Options options;

  SECTION("below what the precision reaches: the message names the smallest")
  {
    options.tolerance = isFloat<Real> ? 1e-9 : 1e-14;
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::StartsWith("kfmm::evaluate: option 'tolerance'") &&
                          Catch::Matchers::ContainsSubstring("the smallest is"));
    // The number named, in three digits, is one the caller can ask for: it is served, and 1 %
    // less is not (three digits round the smallest up by less than 1 %).
    std::string message;
    try
    {
      kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    }
    catch (kfmm::Exception const &e)
    {
      message = e.what();
    }
    std::string const named = "the smallest is ";
    auto const at = message.find(named);
    REQUIRE(at != std::string::npos);
    auto const begin = at + named.size();
    std::string const smallest = message.substr(begin, message.find(' ', begin) - begin);
    CAPTURE(message, smallest);
    CHECK(smallest.size() <= 8); // e.g. "3.45e-12"
    options.tolerance = std::stod(smallest);
    CHECK_NOTHROW(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options));
    options.tolerance = 0.99 * std::stod(smallest);
    CHECK_THROWS_AS(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options), kfmm::Exception);
  }
  SECTION("with an order of its own")
  {
    options.tolerance = 1e-4;
    options.order = 9;
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("option 'tolerance' chooses 'order'"));
  }
  SECTION("negative")
  {
    options.tolerance = -1e-4;
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("option 'tolerance' must be finite"));
  }
}
