// SPDX-License-Identifier: BSD-3-Clause
// The distributed FMM on 1 to 4 ranks against the single-rank FMM of the whole problem (same
// options): equal to rounding at every rank's particles, on uniform, Plummer and
// ellipsoid-surface particles, spread over the ranks in blocks of uneven size, interleaved,
// all on one rank, and with coincident particles on different ranks; its error against the
// double-precision direct sum is the single-rank solver's. The work a solver's lists count
// adds up to its flops, and ranges balanced by it give the same answer. Bad input on one rank
// makes every rank throw the same exception.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/distributed/DistributedFmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "RankParticles.hpp"
#include "Reference.hpp"
#include "TestTypes.hpp"

namespace
{

/// How the particles of the whole problem are spread over the ranks.
enum class Spread
{
  blocks,      ///< contiguous blocks of uneven size (the generator's order is random in space)
  interleaved, ///< particle i on rank i mod ranks
  one_rank,    ///< all on rank 0, none elsewhere
  coincident   ///< blocks, plus copies of rank 0's first particles on the last rank
};

/// The rank of particle i of n, the copies (coincident) being the last `copies` particles.
int ownerOf(Spread spread, std::size_t i, std::size_t n, std::size_t copies, int ranks)
{
  switch (spread)
  {
  case Spread::interleaved: return static_cast<int>(i % ranks);
  case Spread::one_rank: return 0;
  case Spread::coincident:
    if (i >= n - copies)
      return ranks - 1;
    break;
  case Spread::blocks: break;
  }
  std::size_t const m = n - (spread == Spread::coincident ? copies : 0);
  // Blocks of growing size: rank r holds (r + 1) parts of ranks (ranks + 1) / 2.
  std::size_t const parts = static_cast<std::size_t>(ranks) * (ranks + 1) / 2;
  std::size_t before = 0;
  for (int r = 0; r < ranks; ++r)
  {
    before += m * (r + 1) / parts;
    if (i < before || r == ranks - 1)
      return r;
  }
  return ranks - 1;
}

/// Relative L2 difference of rows `rows` of the (n x columns) host results `a` against `b`.
template <class A, class B>
double relativeDifference(A const &a, B const &b, std::vector<std::size_t> const &rows)
{
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < rows.size(); ++k)
    for (std::size_t c = 0; c < a.extent(1); ++c)
    {
      double const x = static_cast<double>(a(k, c));
      double const y = static_cast<double>(b(rows[k], c));
      diff += (x - y) * (x - y);
      norm += y * y;
    }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

double maxOverRanks(double value)
{
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("distributed FMM equals the single-rank FMM to rounding", "[mpi][fmm]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  constexpr bool single = kfmm::test::isFloat<Real>;

  kfmm::Options options;
  options.order = single ? 5 : 10;
  options.theta = 0.5;
  options.leaf_size = 16; // deep trees: many cells on the ranks' boundaries
  // Rounding bounds on the relative L2 differences, far below the FMM's errors (about 5e-5
  // in float and 1e-7 in double here): the two solvers sum the same terms in different
  // orders. Measured: at most 3.2e-7 in float and 1.1e-15 in double, on 1 to 4 ranks; a
  // shared cell's radius left at one rank's value instead gives 1.4e-6 and 4.8e-9.
  double const bound = single ? 2e-6 : 1e-13;
  double const fmm_error = single ? 2e-3 : 1e-5;

  struct Case
  {
    kfmm::Distribution distribution;
    Spread spread;
    std::size_t n;
  };
  std::vector<Case> cases;
  for (auto distribution :
       {kfmm::Distribution::uniform, kfmm::Distribution::plummer, kfmm::Distribution::ellipsoid})
    for (Spread spread :
         {Spread::blocks, Spread::interleaved, Spread::one_rank, Spread::coincident})
      cases.push_back({distribution, spread, 1600});
  // Large enough that ranks prune: multipoles travel instead of particles.
  cases.push_back({kfmm::Distribution::uniform, Spread::blocks, 16000});
  for (auto const [distribution, spread, base] : cases)
  {
    CAPTURE(rank, ranks, kfmm::distributionName(distribution), static_cast<int>(spread));
    // The whole problem on every rank (same seed), in double; the copies of the
    // coincident spread repeat its first particles.
    std::size_t const copies = spread == Spread::coincident ? 300 : 0;
    std::size_t const n = base + copies;
    Kokkos::View<double *[3], Memory> all_x("kfmm::test::all_x", n);
    Kokkos::View<double *, Memory> all_q("kfmm::test::all_q", n);
    auto const generated = Kokkos::make_pair(std::size_t(0), n - copies);
    kfmm::generate(space, distribution, 17, Kokkos::subview(all_x, generated, Kokkos::ALL),
                   Kokkos::subview(all_q, generated));
    auto all_x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_x);
    auto all_q_h = Kokkos::create_mirror_view(all_q);
    for (std::size_t i = 0; i < n; ++i)
    {
      for (int c = 0; c < 3 && i >= n - copies; ++c)
        all_x_h(i, c) = all_x_h(i - (n - copies), c);
      // Charges of both signs and varied magnitude.
      all_q_h(i) = (i % 3 == 0 ? -1.0 : 1.0) * (1.0 + 0.5 * std::sin(double(i)));
    }
    Kokkos::deep_copy(all_x, all_x_h);
    Kokkos::deep_copy(all_q, all_q_h);

    // This rank's particles, in the whole problem's order.
    std::vector<std::size_t> mine;
    for (std::size_t i = 0; i < n; ++i)
      if (ownerOf(spread, i, n, copies, ranks) == rank)
        mine.push_back(i);
    std::size_t const m = mine.size();
    auto const [x, q] = kfmm::test::rankParticles<Memory>(all_x_h, all_q_h, mine);
    auto const x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);

    kfmm::Fmm<Real, Memory> whole(space, all_x, options);
    Kokkos::View<Real *, Memory> all_phi("kfmm::test::all_phi", n);
    Kokkos::View<Real *[3], Memory> all_g("kfmm::test::all_g", n);
    whole.evaluate(space, all_q, all_phi, all_g);

    kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x, options);
    Kokkos::View<Real *, Memory> phi("kfmm::test::phi", m);
    Kokkos::View<Real *[3], Memory> g("kfmm::test::g", m);
    solver.evaluate(space, q, phi, g);

    auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
    auto const phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, phi);
    auto const all_g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_g);
    auto const all_phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_phi);
    Kokkos::View<double **, Kokkos::HostSpace> phi_col("kfmm::test::phi_col", m, 1);
    Kokkos::View<double **, Kokkos::HostSpace> all_phi_col("kfmm::test::all_phi_col", n, 1);
    for (std::size_t k = 0; k < m; ++k)
      phi_col(k, 0) = phi_h(k);
    for (std::size_t i = 0; i < n; ++i)
      all_phi_col(i, 0) = all_phi_h(i);
    double const field_difference = maxOverRanks(relativeDifference(g_h, all_g_h, mine));
    double const potential_difference =
        maxOverRanks(relativeDifference(phi_col, all_phi_col, mine));
    CAPTURE(field_difference, potential_difference);
    CHECK(field_difference <= bound);
    CHECK(potential_difference <= bound);

    // Both are the FMM's answer: the field error against the double-precision direct sum
    // (this rank's particles, all sources) within the bound the options give.
    auto const exact = kfmm::test::referenceDirectSum(x_h, all_x_h, all_q_h);
    double const error = maxOverRanks(kfmm::relativeL2Error(g_h, exact.field));
    CAPTURE(error);
    CHECK(error <= fmm_error);

    // The work is shared: the ranks' particles add up to the whole problem.
    std::int64_t owned = static_cast<std::int64_t>(solver.stats().particles);
    MPI_Allreduce(MPI_IN_PLACE, &owned, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(owned == static_cast<std::int64_t>(n));
    if (base > 1600 && ranks > 1)
    {
      // A local essential tree, not everything: some multipoles travel instead of
      // particles, and fewer than all other ranks' particles arrive.
      std::int64_t pruned = static_cast<std::int64_t>(solver.stats().pruned_cells);
      MPI_Allreduce(MPI_IN_PLACE, &pruned, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      CHECK(pruned > 0);
      CHECK(solver.stats().ghosts < n - solver.stats().particles);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: a clustered set's ranks receive a part of the others' "
                        "particles",
                        "[mpi][fmm][ghosts]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CAPTURE(rank, ranks);
  if (ranks == 1)
    return;
  // The fast float settings of a Plummer sphere (perf/RESULTS.md): its halo's sparse leaves
  // are large, and the rule of sparse leaves computes their pairs with small cells directly.
  // A receiver's sparse leaf must open only the cells it can meet in such a pair; opened for
  // every cell below one that might meet it, every rank receives all the others' particles.
  kfmm::Options options;
  options.order = 8;
  options.theta = 0.85;
  options.leaf_size = 256;
  std::size_t const n = 1000000;
  Kokkos::View<double *[3], Memory> all_x("kfmm::test::all_x", n);
  Kokkos::View<double *, Memory> all_q("kfmm::test::all_q", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 5, all_x, all_q);
  std::size_t const begin = n * rank / ranks, end = n * (rank + 1) / ranks;
  Kokkos::View<double *[3], Memory> x("kfmm::test::x", end - begin);
  Kokkos::deep_copy(space, x, Kokkos::subview(all_x, Kokkos::make_pair(begin, end), Kokkos::ALL));
  kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x, options);
  double const others = double(n - solver.stats().particles);
  double const ghosts = double(solver.stats().ghosts);
  CAPTURE(ghosts, others);
  CHECK(ghosts <= 0.5 * others);
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: the work its lists count and ranges balanced by it",
                        "[mpi][fmm][balance]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CAPTURE(rank, ranks);
  constexpr bool single = kfmm::test::isFloat<Real>;
  kfmm::Options options;
  options.order = single ? 5 : 10;
  options.theta = 0.5;
  options.leaf_size = 16;
  double const bound = single ? 2e-6 : 1e-13; // as in the test above

  // A Plummer sphere, interleaved over the ranks.
  std::size_t const n = 12000;
  Kokkos::View<double *[3], Memory> all_x("kfmm::test::all_x", n);
  Kokkos::View<double *, Memory> all_q("kfmm::test::all_q", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 23, all_x, all_q);
  auto const all_x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_x);
  auto const all_q_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_q);
  std::vector<std::size_t> mine_rows;
  for (std::size_t i = 0; i < n; ++i)
    if (ownerOf(Spread::interleaved, i, n, 0, ranks) == rank)
      mine_rows.push_back(i);
  std::size_t const m = mine_rows.size();
  auto const [x, q] = kfmm::test::rankParticles<Memory>(all_x_h, all_q_h, mine_rows);

  kfmm::distributed::DistributedFmm<Real, Memory> by_counts(MPI_COMM_WORLD, space, x, options);
  Kokkos::View<double *, Memory> work("kfmm::test::work", m);
  by_counts.particleWork(space, work);
  auto const work_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, work);
  double mine = 0;
  bool positive = true;
  for (std::size_t k = 0; k < m; ++k)
  {
    mine += work_h(k);
    positive = positive && std::isfinite(work_h(k)) && work_h(k) > 0;
  }
  CHECK(positive); // every particle meets at least the particles of its own leaf
  if (ranks == 1)
  {
    // The particles' shares add up to the flops of the stages that compute results: all of
    // Stats::flops but the P2M, M2M and L2L. On one rank the solver's two trees (the local
    // essential tree of sources, the own tree of targets) have the same cells, and
    // Stats::cells counts both.
    kfmm::Stats const &stats = by_counts.stats().solver;
    int const p = stats.order;
    double const cells = double(stats.cells) / 2;
    double const target_flops =
        stats.flops - double(n) * double(kfmm::expansions::flops::p2m(p)) -
        cells * double(kfmm::expansions::flops::m2m(p) + kfmm::expansions::flops::l2l(p));
    CAPTURE(mine, target_flops);
    CHECK(std::abs(mine - target_flops) <= 1e-9 * target_flops);
  }

  // The work as weights: the ranges are those of a partition by these weights, and the answer
  // is the same.
  kfmm::distributed::DistributedFmm<Real, Memory> by_work(MPI_COMM_WORLD, space, x, work, options);
  kfmm::distributed::PartitionOptions partition_options;
  partition_options.leaf_size = options.leaf_size;
  kfmm::distributed::MortonPartition<double, Memory> const partition(MPI_COMM_WORLD, space, x, work,
                                                                     partition_options);
  CHECK(by_work.stats().particles == partition.ownedCount());
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", m), phi2("kfmm::test::phi2", m);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", m), g2("kfmm::test::g2", m);
  by_counts.evaluate(space, q, phi, g);
  by_work.evaluate(space, q, phi2, g2);
  auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
  auto const g2_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g2);
  std::vector<std::size_t> rows(m);
  for (std::size_t k = 0; k < m; ++k)
    rows[k] = k;
  double const difference = maxOverRanks(relativeDifference(g2_h, g_h, rows));
  CAPTURE(difference);
  CHECK(difference <= bound);

  // Weights of the wrong length on one rank stop every rank.
  Kokkos::View<double *, Memory> short_work("kfmm::test::short_work",
                                            rank == ranks - 1 ? m - 1 : m);
  CHECK_THROWS_WITH(
      (kfmm::distributed::DistributedFmm<Real, Memory>(MPI_COMM_WORLD, space, x, short_work,
                                                       options)),
      Catch::Matchers::StartsWith(
          "kfmm::distributed::MortonPartition: argument 'weights' must have one entry"));
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: bad input on one rank stops every rank",
                        "[mpi][fmm][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int const bad_rank = ranks - 1;
  CAPTURE(rank);
  std::string const where = "kfmm::distributed::DistributedFmm";

  std::size_t const n = 200;
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  kfmm::generate(space, kfmm::Distribution::uniform, 5 + rank, x, q);

  // A NaN position on the last rank.
  Kokkos::View<Real *[3], Memory> nan_x("kfmm::test::nan_x", n);
  Kokkos::deep_copy(nan_x, x);
  if (rank == bad_rank)
    Kokkos::deep_copy(Kokkos::subview(nan_x, 7, 1), std::numeric_limits<Real>::quiet_NaN());
  CHECK_THROWS_WITH(
      (kfmm::distributed::DistributedFmm<Real, Memory>(MPI_COMM_WORLD, space, nan_x)),
      Catch::Matchers::Equals("kfmm::distributed::MortonPartition: argument 'positions' holds a "
                              "NaN or infinite value at index 7"));

  // Options that differ on the last rank (each valid on its own), and the classic rule.
  kfmm::Options options;
  if (rank == bad_rank)
    options.order = 7;
  if (ranks > 1)
    CHECK_THROWS_WITH(
        (kfmm::distributed::DistributedFmm<Real, Memory>(MPI_COMM_WORLD, space, x, options)),
        Catch::Matchers::Equals(where + ": every rank must pass the same options (order, theta, "
                                        "leaf_size, method, softening, tolerance, acceptance, "
                                        "check_samples, allow_missed_tolerance)"));
  kfmm::Options classic;
  classic.acceptance = kfmm::Acceptance::classic;
  CHECK_THROWS_WITH(
      (kfmm::distributed::DistributedFmm<Real, Memory>(MPI_COMM_WORLD, space, x, classic)),
      Catch::Matchers::StartsWith(where + ": option 'acceptance' must be Acceptance::theta"));
  // The sampled check needs every source on every rank: refused on all of them.
  kfmm::Options checked;
  checked.check_samples = 100;
  CHECK_THROWS_WITH(
      (kfmm::distributed::DistributedFmm<Real, Memory>(MPI_COMM_WORLD, space, x, checked)),
      Catch::Matchers::StartsWith(where + ": option 'check_samples' must be 0"));

  // Charges of the wrong length, then an infinite charge, on the last rank.
  kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", n);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", n);
  Kokkos::View<Real *, Memory> short_q("kfmm::test::short_q", rank == bad_rank ? n - 1 : n);
  std::string const evaluate = where + "::evaluate: ";
  CHECK_THROWS_WITH(solver.evaluate(space, short_q, phi, g),
                    Catch::Matchers::StartsWith(evaluate + "argument 'charges' has extent "));
  Kokkos::View<Real *, Memory> inf_q("kfmm::test::inf_q", n);
  Kokkos::deep_copy(inf_q, q);
  if (rank == bad_rank)
    Kokkos::deep_copy(Kokkos::subview(inf_q, 3), std::numeric_limits<Real>::infinity());
  CHECK_THROWS_WITH(solver.evaluate(space, inf_q, phi, g),
                    Catch::Matchers::Equals(evaluate + "argument 'charges' holds a NaN or "
                                                       "infinite value at index 3"));
  // The solver still works after the failed calls.
  solver.evaluate(space, q, phi, g);
  auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
  CHECK(std::isfinite(static_cast<double>(g_h(0, 0))));
}
