// SPDX-License-Identifier: BSD-3-Clause
// The distributed FMM within the accuracy asked (Options::tolerance) of the single-rank FMM and
// of the double-precision direct sum, on uniform, Plummer and ellipsoid-surface particles
// with an empty rank, all particles on one rank and the same coordinates on different ranks;
// a rebuild after a time step (DistributedFmm::rebuild), with the previous partition kept and
// with a move that forces a new one, equal to a new solver of the moved particles; time steps
// on the particles each rank took over (DistributedFmm::toOwners), which stay on their rank
// unless they cross a range boundary, and whose evaluation, repeated, allocates nothing; bad input
// on one rank, the same message on every rank, and the solver usable afterwards. A hidden case
// ([.timing]) times a build, a rebuild and an evaluation.
#include <kfmm/Fmm.hpp>
#include <kfmm/distributed/DistributedFmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "Allocations.hpp"
#include "Reference.hpp"
#include "TestTypes.hpp"

namespace
{

/// How the particles of the whole problem are spread over the ranks.
enum class StepSpread
{
  empty_rank, ///< blocks over the ranks but rank 1, which holds none (one rank: all on it)
  one_rank,   ///< all on rank 0, none elsewhere
  coincident  ///< interleaved, plus copies of the first particles on the last rank
};

char const *spreadName(StepSpread spread)
{
  switch (spread)
  {
  case StepSpread::empty_rank: return "empty rank";
  case StepSpread::one_rank: return "one rank";
  case StepSpread::coincident: return "coincident";
  }
  return "";
}

/// The rank of particle i of n, the copies (coincident) being the last `copies` particles.
int stepOwner(StepSpread spread, std::size_t i, std::size_t n, std::size_t copies, int ranks)
{
  switch (spread)
  {
  case StepSpread::one_rank: return 0;
  case StepSpread::coincident: return i >= n - copies ? ranks - 1 : static_cast<int>(i % ranks);
  case StepSpread::empty_rank: break;
  }
  if (ranks == 1)
    return 0;
  // Blocks over the ranks other than 1.
  int const block = static_cast<int>(i * (ranks - 1) / n);
  return block >= 1 ? block + 1 : block;
}

/// The rows of the whole problem (n particles, the last `copies` of them copies) that `spread`
/// gives this rank, in order.
std::vector<std::size_t> rowsOfRank(StepSpread spread, std::size_t n, std::size_t copies)
{
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<std::size_t> mine;
  for (std::size_t i = 0; i < n; ++i)
    if (stepOwner(spread, i, n, copies, ranks) == rank)
      mine.push_back(i);
  return mine;
}

/// The whole problem, the same on every rank (seed `seed`), on the host in double: `base`
/// generated particles and `copies` repeating the first ones; charges of both signs and varied
/// magnitude.
template <class Space>
std::pair<Kokkos::View<double *[3], Kokkos::HostSpace>, Kokkos::View<double *, Kokkos::HostSpace>>
wholeProblem(Space const &space, kfmm::Distribution distribution, std::size_t base,
             std::size_t copies, unsigned seed) {
  using Memory = typename Space::memory_space;
  std::size_t const n = base + copies;
  Kokkos::View<double *[3], Memory> x("kfmm::test::all_x", base);
  Kokkos::View<double *, Memory> q("kfmm::test::all_q", base);
  kfmm::generate(space, distribution, seed, x, q);
  auto const x_generated = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  Kokkos::View<double *[3], Kokkos::HostSpace> x_h("kfmm::test::all_x_h", n);
  Kokkos::View<double *, Kokkos::HostSpace> q_h("kfmm::test::all_q_h", n);
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int c = 0; c < 3; ++c)
      x_h(i, c) = x_generated(i < base ? i : i - base, c);
    q_h(i) = (i % 3 == 0 ? -1.0 : 1.0) * (1.0 + 0.5 * std::sin(double(i)));
  }
  return {x_h, q_h};
}

/// Rows `rows` of a host View (n x 3 or n) as a View in Memory.
template <class Memory, class Host>
auto rowsOf(Host const &all, std::vector<std::size_t> const &rows)
{
  using Data = typename Host::non_const_data_type;
  Kokkos::View<Data, Memory> out("kfmm::test::rows", rows.size());
  auto out_h = Kokkos::create_mirror_view(out);
  for (std::size_t k = 0; k < rows.size(); ++k)
  {
    if constexpr (Host::rank == 2)
      for (int c = 0; c < 3; ++c)
        out_h(k, c) = all(rows[k], c);
    else
      out_h(k) = all(rows[k]);
  }
  Kokkos::deep_copy(out, out_h);
  return out;
}

/// sqrt(sum |a - b|^2 / sum |b|^2) over every rank's rows: a(k, .) against b(rows[k], .)
/// (n x 3 host Views).
template <class A, class B>
double globalRelativeL2(A const &a, B const &b, std::vector<std::size_t> const &rows)
{
  double sums[2] = {0, 0};
  for (std::size_t k = 0; k < rows.size(); ++k)
    for (int c = 0; c < 3; ++c)
    {
      double const d = static_cast<double>(a(k, c)) - static_cast<double>(b(rows[k], c));
      sums[0] += d * d;
      sums[1] += static_cast<double>(b(rows[k], c)) * static_cast<double>(b(rows[k], c));
    }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : std::sqrt(sums[0]);
}

std::vector<std::size_t> identityRows(std::size_t m)
{
  std::vector<std::size_t> rows(m);
  for (std::size_t k = 0; k < m; ++k)
    rows[k] = k;
  return rows;
}

/// The settings of the time-step tests: a small leaf size, so that 2000 particles make trees
/// of several levels on every rank.
template <class Real>
kfmm::Options stepOptions()
{
  kfmm::Options options;
  options.order = kfmm::test::isFloat<Real> ? 5 : 7;
  options.theta = 0.5;
  options.leaf_size = 24;
  return options;
}

/// Two distributed solvers of one problem each equal the single-rank solver to rounding
/// (tstDistributedFmm.cpp's bound), so each other within it too: they may own different
/// ranges, and so sum in other orders.
template <class Real>
constexpr double roundingBound = kfmm::test::isFloat<Real> ? 2e-6 : 1e-13;

/// The particles the solver's ranks own after its partition, summed over the ranks.
template <class Real, class Memory>
std::int64_t ownedOverRanks(kfmm::distributed::DistributedFmm<Real, Memory> const &solver)
{
  std::int64_t owned = static_cast<std::int64_t>(solver.stats().particles);
  MPI_Allreduce(MPI_IN_PLACE, &owned, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return owned;
}

/// The field of a DistributedFmm's evaluation, on the host (in the layout of Memory's Views:
/// a copy between memory spaces keeps the layout).
template <class Real, class Memory, class Space, class Charges>
auto fieldOf(kfmm::distributed::DistributedFmm<Real, Memory> &solver, Space const &space,
             Charges const &q)
{
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", q.extent(0));
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", q.extent(0));
  solver.evaluate(space, q, phi, g);
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
}

} // namespace

TEMPLATE_LIST_TEST_CASE("distributed FMM: within the tolerance asked of the single-rank FMM "
                        "and of the direct sum",
                        "[mpi][fmm][accuracy]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // The accuracy asked, and so the bound: the relative L2 field error of Options::tolerance,
  // of the distributed answer against the single-rank one and against the direct sum.
  double const tolerance = kfmm::test::isFloat<Real> ? 1e-3 : 1e-6;
  kfmm::Options options;
  options.tolerance = tolerance;

  for (auto distribution :
       {kfmm::Distribution::uniform, kfmm::Distribution::plummer, kfmm::Distribution::ellipsoid})
    for (StepSpread spread : {StepSpread::empty_rank, StepSpread::one_rank, StepSpread::coincident})
    {
      CAPTURE(rank, ranks, kfmm::distributionName(distribution), spreadName(spread));
      std::size_t const base = 2000;
      std::size_t const copies = spread == StepSpread::coincident ? 200 : 0;
      std::size_t const n = base + copies;
      auto const [all_x_h, all_q_h] = wholeProblem(space, distribution, base, copies, 31);
      std::vector<std::size_t> const mine = rowsOfRank(spread, n, copies);
      auto const x = rowsOf<Memory>(all_x_h, mine);
      auto const q = rowsOf<Memory>(all_q_h, mine);
      auto const all_x = rowsOf<Memory>(all_x_h, identityRows(n));
      auto const all_q = rowsOf<Memory>(all_q_h, identityRows(n));

      kfmm::Fmm<Real, Memory> whole(space, all_x, options);
      Kokkos::View<Real *, Memory> all_phi("kfmm::test::all_phi", n);
      Kokkos::View<Real *[3], Memory> all_g("kfmm::test::all_g", n);
      whole.evaluate(space, all_q, all_phi, all_g);
      auto const all_g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_g);

      kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x, options);
      auto const g_h = fieldOf(solver, space, q);
      double const from_single_rank = globalRelativeL2(g_h, all_g_h, mine);

      // Every fifth of this rank's particles against the direct sum in double over all.
      std::vector<std::size_t> sampled, sampled_rows;
      for (std::size_t k = 0; k < mine.size(); k += 5)
      {
        sampled.push_back(k);
        sampled_rows.push_back(mine[k]);
      }
      Kokkos::View<double *[3], Kokkos::HostSpace> targets("kfmm::test::targets", sampled.size());
      Kokkos::View<Real *[3], Kokkos::HostSpace> sampled_g("kfmm::test::sampled_g", sampled.size());
      for (std::size_t s = 0; s < sampled.size(); ++s)
        for (int c = 0; c < 3; ++c)
        {
          targets(s, c) = all_x_h(sampled_rows[s], c);
          sampled_g(s, c) = g_h(sampled[s], c);
        }
      auto const exact = kfmm::test::referenceDirectSum(targets, all_x_h, all_q_h);
      double const from_direct_sum =
          globalRelativeL2(sampled_g, exact.field, identityRows(sampled.size()));
      CAPTURE(solver.options().order, solver.options().theta, from_single_rank, from_direct_sum);
      CHECK(from_single_rank <= tolerance);
      CHECK(from_direct_sum <= tolerance);

      CHECK(ownedOverRanks(solver) == static_cast<std::int64_t>(n));
    }
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: a rebuild after a time step equals a new solver",
                        "[mpi][fmm][rebuild]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  kfmm::Options const options = stepOptions<Real>();
  double const bound = roundingBound<Real>;

  for (auto [distribution, spread] :
       {std::make_pair(kfmm::Distribution::uniform, StepSpread::empty_rank),
        std::make_pair(kfmm::Distribution::plummer, StepSpread::coincident)})
  {
    CAPTURE(rank, ranks, kfmm::distributionName(distribution), spreadName(spread));
    std::size_t const base = 2000;
    std::size_t const copies = spread == StepSpread::coincident ? 200 : 0;
    std::size_t const n = base + copies;
    auto const [all_x_h, all_q_h] = wholeProblem(space, distribution, base, copies, 47);
    std::vector<std::size_t> const mine = rowsOfRank(spread, n, copies);
    std::size_t const m = mine.size();
    auto const x = rowsOf<Memory>(all_x_h, mine);
    auto const q = rowsOf<Memory>(all_q_h, mine);
    auto const x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
    double lo[3], hi[3];
    for (int c = 0; c < 3; ++c)
    {
      lo[c] = std::numeric_limits<double>::infinity();
      hi[c] = -lo[c];
      for (std::size_t i = 0; i < n; ++i)
      {
        lo[c] = std::fmin(lo[c], all_x_h(i, c));
        hi[c] = std::fmax(hi[c], all_x_h(i, c));
      }
    }

    kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x, options);
    CHECK_FALSE(solver.stats().splitters_reused);
    fieldOf(solver, space, q);

    // A small step: each particle moves by a smooth function of its position, 1e-3 of the
    // problem's size at most (coincident particles stay together); then a large one that
    // crowds the particles towards a corner of their box (t -> lo + (t - lo)^3 / L^2 per axis),
    // which no previous range balances.
    for (bool const large : {false, true})
    {
      CAPTURE(large);
      Kokkos::View<double *[3], Memory> moved("kfmm::test::moved", m);
      auto moved_h = Kokkos::create_mirror_view(moved);
      for (std::size_t k = 0; k < m; ++k)
        for (int c = 0; c < 3; ++c)
        {
          double const t = x_h(k, c);
          double const size = hi[c] - lo[c];
          moved_h(k, c) = large ? lo[c] + (t - lo[c]) * (t - lo[c]) * (t - lo[c]) / (size * size)
                                : t + 1e-3 * size * std::sin(3 * x_h(k, (c + 1) % 3) + c);
        }
      Kokkos::deep_copy(moved, moved_h);
      solver.rebuild(space, moved);
      // Every rank agrees on the splitters; a small step keeps them (its ranges hold whole
      // leaves of about equal counts), a large one at more than one rank does not.
      int reused = solver.stats().splitters_reused ? 1 : 0, low = 0, high = 0;
      MPI_Allreduce(&reused, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(&reused, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      CHECK(low == high);
      CHECK(solver.stats().splitters_reused == (!large || ranks == 1));
      auto const rebuilt = fieldOf(solver, space, q);

      kfmm::distributed::DistributedFmm<Real, Memory> fresh(MPI_COMM_WORLD, space, moved, options);
      auto const expected = fieldOf(fresh, space, q);
      double const difference = globalRelativeL2(rebuilt, expected, identityRows(m));
      CAPTURE(difference);
      CHECK(difference <= bound);
      CHECK(ownedOverRanks(solver) == static_cast<std::int64_t>(n));
    }
  }
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: time steps on the particles each rank took over",
                        "[mpi][fmm][rebuild]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  kfmm::Options const options = stepOptions<Real>();
  double const bound = roundingBound<Real>;
  CAPTURE(rank, ranks);

  // Interleaved over the ranks, so that nearly every particle has another owner.
  std::size_t const n = 2400;
  auto const [all_x_h, all_q_h] = wholeProblem(space, kfmm::Distribution::plummer, n, 0, 53);
  std::vector<std::size_t> mine;
  for (std::size_t i = static_cast<std::size_t>(rank); i < n; i += static_cast<std::size_t>(ranks))
    mine.push_back(i);
  auto const x = rowsOf<Memory>(all_x_h, mine);
  auto const q = rowsOf<Memory>(all_q_h, mine);
  kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x, options);
  auto const given = fieldOf(solver, space, q);
  std::size_t const mine_sent = ranks > 1 ? solver.stats().sent_particles : 0;
  CAPTURE(mine_sent, mine.size());
  CHECK(solver.stats().sent_particles <= mine.size());
  if (ranks > 1)
    CHECK(solver.stats().sent_particles > 0);

  // Each rank takes over the particles it owns: positions, charges, and (to compare) the field
  // the caller got for them, as a simulation would its velocities.
  std::size_t const owned = solver.ownedCount();
  CHECK(owned == solver.stats().particles);
  Kokkos::View<double *[3], Memory> owned_x("kfmm::test::owned_x", owned);
  Kokkos::View<double *, Memory> owned_q("kfmm::test::owned_q", owned);
  Kokkos::View<Real *[3], Memory> given_field("kfmm::test::given_field", mine.size());
  Kokkos::View<Real *[3], Memory> owned_given("kfmm::test::owned_given", owned);
  Kokkos::deep_copy(given_field, given);
  solver.toOwners(space, x, owned_x);
  solver.toOwners(space, q, owned_q);
  solver.toOwners(space, given_field, owned_given);
  std::int64_t total = static_cast<std::int64_t>(owned);
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == static_cast<std::int64_t>(n));

  // Unmoved, they all stay where they are, and their results are the ones given before.
  solver.rebuild(space, owned_x);
  CHECK(solver.stats().splitters_reused);
  CHECK(solver.stats().sent_particles == 0);
  CHECK(solver.size() == owned);
  auto const again = fieldOf(solver, space, owned_q);
  auto const owned_given_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, owned_given);
  double const unmoved = globalRelativeL2(again, owned_given_h, identityRows(owned));
  CAPTURE(unmoved);
  CHECK(unmoved <= bound);

  // Moved by a smooth function of position (1e-3 of the box at most): a few particles cross a
  // range boundary; the results equal a new solver's of the moved particles.
  auto moved_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, owned_x);
  for (std::size_t k = 0; k < owned; ++k)
    for (int c = 0; c < 3; ++c)
      moved_h(k, c) += 1e-3 * std::sin(3 * moved_h(k, (c + 1) % 3) + c);
  Kokkos::deep_copy(owned_x, moved_h);
  solver.rebuild(space, owned_x);
  std::int64_t sent = static_cast<std::int64_t>(solver.stats().sent_particles);
  MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CAPTURE(sent);
  CHECK(sent < static_cast<std::int64_t>(n / 10));
  auto const stepped = fieldOf(solver, space, owned_q);
  kfmm::distributed::DistributedFmm<Real, Memory> fresh(MPI_COMM_WORLD, space, owned_x, options);
  auto const expected = fieldOf(fresh, space, owned_q);
  double const difference = globalRelativeL2(stepped, expected, identityRows(owned));
  CAPTURE(difference);
  CHECK(difference <= bound);

  // An evaluation takes its arrays from the solver's workspace, where the last one gave them
  // back: the next allocates nothing, and gives the same results to rounding.
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", owned);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", owned);
  {
    kfmm::test::Allocations const allocations;
    solver.evaluate(space, owned_q, phi, g);
    space.fence();
    CAPTURE(allocations.lastLabel());
    CHECK(allocations.count() == 0);
  }
  auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
  double const repeated = globalRelativeL2(g_h, stepped, identityRows(owned));
  CAPTURE(repeated);
  CHECK(repeated <= bound);
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: bad input on one rank, one message on every rank",
                        "[mpi][fmm][validation]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int const bad_rank = ranks - 1;
  CAPTURE(rank, ranks);
  std::string const where = "kfmm::distributed::DistributedFmm";
  std::string const repartition = "kfmm::distributed::MortonPartition::repartition: ";
  using Solver = kfmm::distributed::DistributedFmm<Real, Memory>;

  std::size_t const n = 300;
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 9 + rank, x, q);

  // Positions of the wrong shape, N x 2, on the last rank.
  Kokkos::View<Real **, Memory> flat("kfmm::test::flat", n, rank == bad_rank ? 2 : 3);
  CHECK_THROWS_WITH((Solver(MPI_COMM_WORLD, space, flat)),
                    Catch::Matchers::Equals("kfmm::distributed::MortonPartition: argument "
                                            "'positions' must be N x 3, got N x 2"));

  Solver solver(MPI_COMM_WORLD, space, x);
  auto const before = fieldOf(solver, space, q);

  // A rebuild with a NaN position, with N x 2 positions, values to the owners with one row
  // fewer, each on the last rank alone.
  Kokkos::View<Real *[3], Memory> nan_x("kfmm::test::nan_x", n);
  Kokkos::deep_copy(nan_x, x);
  if (rank == bad_rank)
    Kokkos::deep_copy(Kokkos::subview(nan_x, 11, 2), std::numeric_limits<Real>::quiet_NaN());
  CHECK_THROWS_WITH(solver.rebuild(space, nan_x),
                    Catch::Matchers::Equals(repartition + "argument 'positions' holds a NaN or "
                                                          "infinite value at index 11"));
  CHECK_THROWS_WITH(solver.rebuild(space, flat),
                    Catch::Matchers::Equals(repartition + "argument 'positions' must be N x 3, "
                                                          "got N x 2"));
  auto const fewer =
      Kokkos::subview(q, Kokkos::make_pair(std::size_t(0), rank == bad_rank ? n - 1 : n));
  Kokkos::View<Real *, Memory> owned_q("kfmm::test::owned_q", solver.ownedCount());
  CHECK_THROWS_WITH(solver.toOwners(space, fewer, owned_q),
                    Catch::Matchers::StartsWith("kfmm::distributed::MortonPartition::toOwners: "
                                                "expected " +
                                                std::to_string(n) + " rows in"));

  // A field of the wrong shape on the last rank.
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", n);
  Kokkos::View<Real **, Memory> g2("kfmm::test::g2", n, rank == bad_rank ? 2 : 3);
  CHECK_THROWS_WITH(solver.evaluate(space, q, phi, g2),
                    Catch::Matchers::StartsWith(where + "::evaluate: argument 'field (columns)' "
                                                        "has extent 2"));

  // The solver is as it was: the same answer as before the failed calls.
  auto const after = fieldOf(solver, space, q);
  double const difference = globalRelativeL2(after, before, identityRows(n));
  CAPTURE(difference);
  CHECK(difference <= roundingBound<Real>);
}

TEMPLATE_LIST_TEST_CASE("distributed FMM: time of a build, a rebuild and an evaluation",
                        "[.][mpi][timing]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  if (!std::is_same<Space, Kokkos::DefaultExecutionSpace>::value)
    return;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // KFMM_TEST_STEP_N particles in all (2e5 by default), uniform in the cube, each rank its own
  // share; default options.
  char const *given = std::getenv("KFMM_TEST_STEP_N");
  std::size_t const total = given ? static_cast<std::size_t>(std::atof(given)) : 200000;
  std::size_t const m = total / ranks;
  Kokkos::View<double *[3], Memory> x("kfmm::test::x", m);
  Kokkos::View<double *, Memory> q("kfmm::test::q", m);
  kfmm::generate(space, kfmm::Distribution::uniform, 101 + rank, x, q);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", m);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", m);
  auto const slowest = [](double seconds) {
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return seconds;
  };

  MPI_Barrier(MPI_COMM_WORLD);
  Kokkos::Timer timer;
  kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space, x);
  double const build = slowest(timer.seconds());
  timer.reset();
  solver.evaluate(space, q, phi, g);
  double const evaluate = slowest(timer.seconds());
  double const build_partition = slowest(solver.stats().partition_seconds);
  double rebuild = 0, rebuild_partition = 0, step = 0;
  int reused = 0;
  int const steps = 3;
  auto x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  for (int s = 0; s < steps; ++s)
  {
    // A step of 1e-3 of the cube's side for every particle.
    for (std::size_t k = 0; k < m; ++k)
      for (int c = 0; c < 3; ++c)
        x_h(k, c) += 2e-3 * std::sin(3 * x_h(k, (c + 1) % 3) + c + s);
    Kokkos::deep_copy(x, x_h);
    MPI_Barrier(MPI_COMM_WORLD);
    timer.reset();
    solver.rebuild(space, x);
    double const r = slowest(timer.seconds());
    solver.evaluate(space, q, phi, g);
    step += slowest(timer.seconds());
    rebuild += r;
    rebuild_partition += slowest(solver.stats().partition_seconds);
    reused += solver.stats().splitters_reused ? 1 : 0;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  timer.reset();
  kfmm::distributed::DistributedFmm<Real, Memory> fresh(MPI_COMM_WORLD, space, x);
  double const fresh_build = slowest(timer.seconds());
  double const fresh_partition = slowest(fresh.stats().partition_seconds);
  if (rank == 0)
    std::printf("kfmm distributed step, %d ranks, %zu particles (%s), order %d, theta %g: "
                "build %.4f s (partition %.4f s), evaluate %.4f s, rebuild %.4f s (partition "
                "%.4f s, splitters kept %d of %d), step (rebuild + evaluate) %.4f s, new solver "
                "of the moved particles %.4f s (partition %.4f s); slowest rank, rebuild and "
                "step the mean over %d steps\n",
                ranks, m * ranks, kfmm::test::isFloat<Real> ? "float" : "double",
                solver.options().order, solver.options().theta, build, build_partition, evaluate,
                rebuild / steps, rebuild_partition / steps, reused, steps, step / steps,
                fresh_build, fresh_partition, steps);
}
