// SPDX-License-Identifier: BSD-3-Clause
// kfmm::distributed::calibrate on 1 to 4 ranks: every rank returns the same Calibration; the
// order and theta it chose reach the tolerance over every rank's particles against the direct
// sum in double, and the results it left are a distributed evaluation's with them; a rank that
// holds no particle takes part alike; a tolerance no setting reaches, and options that differ
// between ranks, make every rank throw.
#include <kfmm/Exception.hpp>
#include <kfmm/distributed/Calibrate.hpp>
#include <kfmm/distributed/DistributedFmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "RankParticles.hpp"
#include "Reference.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

/// The sum of `value` over the ranks.
double sumOverRanks(double value)
{
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return value;
}

/// Whether `value` is the same on every rank.
bool sameOnRanks(double value)
{
  double low = value, high = value;
  MPI_Allreduce(MPI_IN_PLACE, &low, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &high, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return low == high;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("distributed calibrate chooses alike on every rank and reaches the "
                        "tolerance over every rank's particles",
                        "[mpi][calibrate][tolerance]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  constexpr bool single = kfmm::test::isFloat<Real>;

  // The whole problem on every rank (same seed), in double.
  std::size_t const n = 4000;
  Kokkos::View<double *[3], Memory> all_x("kfmm::test::all_x", n);
  Kokkos::View<double *, Memory> all_q("kfmm::test::all_q", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 13, all_x, all_q);
  auto const all_x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_x);
  auto const all_q_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_q);

  // Contiguous blocks of uneven size (rank r holds r + 1 parts) at two tolerances, and every
  // particle on the last rank and none on the others at the first.
  std::vector<double> const tolerances = single ? std::vector<double>{1e-3, 1e-5}
                                                : std::vector<double>{1e-5, 1e-8};
  for (bool const last_rank_only : {false, true})
  {
    std::size_t const parts = static_cast<std::size_t>(ranks) * (ranks + 1) / 2;
    auto const before = [&](int r) {
      if (last_rank_only)
        return r < ranks ? std::size_t(0) : n;
      return n * (static_cast<std::size_t>(r) * (r + 1) / 2) / parts;
    };
    std::size_t const first = before(rank), m = before(rank + 1) - first;
    std::vector<std::size_t> mine(m);
    std::iota(mine.begin(), mine.end(), first);
    auto const [x, q] = kfmm::test::rankParticles<Memory>(all_x_h, all_q_h, mine);
    auto const reference = kfmm::test::referenceDirectSum(
        Kokkos::subview(all_x_h, Kokkos::make_pair(first, first + m), Kokkos::ALL), all_x_h,
        all_q_h);

    for (std::size_t t = 0; t < (last_rank_only ? 1 : tolerances.size()); ++t)
    {
      double const tolerance = tolerances[t];
      CAPTURE(rank, ranks, last_rank_only, tolerance);
      kfmm::Options options;
      options.tolerance = tolerance;
      Kokkos::View<Real *, Memory> phi("kfmm::test::phi", m);
      Kokkos::View<Real *[3], Memory> g("kfmm::test::g", m);
      kfmm::Calibration const c =
          kfmm::distributed::calibrate(MPI_COMM_WORLD, space, x, q, phi, g, options);
      CAPTURE(c.options.order, c.options.theta, c.field_error, c.evaluations);

      // The same Calibration on every rank.
      CHECK(sameOnRanks(c.options.order));
      CHECK(sameOnRanks(c.options.theta));
      CHECK(sameOnRanks(c.field_error));
      CHECK(sameOnRanks(c.evaluations));
      CHECK(sameOnRanks(c.seconds > 0 ? 1 : 0));
      CHECK(c.samples == kfmm::default_calibration_samples);
      CHECK_FALSE(c.tolerance_missed);
      CHECK_FALSE(c.direct_sum); // no rank holds every source
      CHECK(c.field_error <= tolerance);

      // Met over every particle of every rank.
      auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
      double sums[2] = {0, 0};
      for (std::size_t i = 0; i < m; ++i)
        for (int d = 0; d < 3; ++d)
        {
          double const e = static_cast<double>(g_h(i, d)) - reference.field(i, d);
          sums[0] += e * e;
          sums[1] += reference.field(i, d) * reference.field(i, d);
        }
      double const error = std::sqrt(sumOverRanks(sums[0]) / sumOverRanks(sums[1]));
      CAPTURE(error);
      CHECK(error <= tolerance);

      // The results left are a distributed evaluation's with the options returned, to the
      // rounding of sums formed in another order.
      Kokkos::View<Real *, Memory> phi_again("kfmm::test::phi_again", m);
      Kokkos::View<Real *[3], Memory> g_again("kfmm::test::g_again", m);
      kfmm::distributed::evaluate(MPI_COMM_WORLD, space, x, q, phi_again, g_again, c.options);
      auto const again_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g_again);
      double difference = 0, norm = 0;
      for (std::size_t i = 0; i < m; ++i)
        for (int d = 0; d < 3; ++d)
        {
          double const e = static_cast<double>(g_h(i, d)) - static_cast<double>(again_h(i, d));
          difference += e * e;
          norm += static_cast<double>(again_h(i, d)) * static_cast<double>(again_h(i, d));
        }
      CHECK(std::sqrt(sumOverRanks(difference) / sumOverRanks(norm)) <= (single ? 2e-6 : 1e-13));
    }
  }
}

TEMPLATE_LIST_TEST_CASE("distributed calibrate throws on every rank alike",
                        "[mpi][calibrate][tolerance]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  // The ionic lattice of docs/ACCURACY.md's limits, one block of it per rank side by side
  // (8 is even: the charges alternate across the blocks' faces too), at twice the precision's
  // rounding: its fields are small differences of large opposite contributions, whose
  // rounding alone is far above that against the net field. Every rank reports the miss.
  auto lattice = kfmm::test::ionicLattice<TestType>(8);
  auto &[x, q, phi, g] = lattice;
  std::size_t const m = x.extent(0);
  auto x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  for (std::size_t i = 0; i < m; ++i)
    x_h(i, 0) += static_cast<Real>(rank);
  Kokkos::deep_copy(x, x_h);
  kfmm::Options options;
  double const tolerance = 2 * std::numeric_limits<Real>::epsilon();
  options.tolerance = tolerance;
  options.leaf_size = 16;
  bool thrown = false;
  try
  {
    kfmm::distributed::calibrate(MPI_COMM_WORLD, space, x, q, phi, g, options);
  }
  catch (kfmm::ToleranceError const &e)
  {
    thrown = true;
    CAPTURE(e.what());
    CHECK(e.error() > tolerance);
    CHECK(sameOnRanks(e.error()));
    CHECK(e.samples() == std::min<std::size_t>(m * ranks, kfmm::default_calibration_samples));
    CHECK_THAT(e.what(), Catch::Matchers::StartsWith("kfmm::distributed::calibrate: no row of "
                                                     "the backend's accuracy table reaches"));
  }
  CHECK(thrown);

  // Options that differ on the last rank.
  kfmm::Options differing;
  differing.tolerance = 1e-3;
  if (rank == ranks - 1)
    differing.check_samples = 100;
  if (ranks > 1)
    CHECK_THROWS_WITH(
        kfmm::distributed::calibrate(MPI_COMM_WORLD, space, x, q, phi, g, differing),
        Catch::Matchers::Equals(
            "kfmm::distributed::calibrate: every rank must pass the same options (order, theta, "
            "leaf_size, method, softening, tolerance, acceptance, check_samples, "
            "allow_missed_tolerance)"));
  // A field of the wrong length on the first rank.
  Kokkos::View<Real *[3], Memory> short_g("kfmm::test::short_g", rank == 0 ? m - 1 : m);
  CHECK_THROWS_WITH(
      kfmm::distributed::calibrate(MPI_COMM_WORLD, space, x, q, phi, short_g, options),
      Catch::Matchers::StartsWith("kfmm::distributed::calibrate: "));
}
