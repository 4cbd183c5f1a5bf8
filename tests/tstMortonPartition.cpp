// SPDX-License-Identifier: BSD-3-Clause
// The Morton-range partition on 1 to 4 ranks: every particle is owned by exactly one rank,
// whose key range holds its key; ranges are in rank order and the same on every rank; counts
// are balanced when keys are distinct; values travel to the owners and back into the
// caller's order unchanged, to the bit. Also with ranks that start empty, with all particles
// on one rank, with the same particles on every rank, and with no particles at all; and
// balanced by per-particle weights; with a leaf size, no leaf of the tree of all particles is
// cut between ranks. A repartition after a move keeps the splitters while they balance. Bad
// input on one rank makes every rank throw, with one message.
#include <kfmm/distributed/MortonPartition.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "TestTypes.hpp"

namespace
{

enum class Scenario
{
  uneven,          ///< every rank its own particles, 700 + 337 r of them
  all_on_rank_0,   ///< 3000 particles on rank 0, none elsewhere
  same_everywhere, ///< the same 500 particles on every rank (coincident across ranks)
  none             ///< no particles anywhere
};

std::size_t countOn(Scenario scenario, int rank)
{
  switch (scenario)
  {
  case Scenario::uneven: return 700 + 337 * static_cast<std::size_t>(rank);
  case Scenario::all_on_rank_0: return rank == 0 ? 3000 : 0;
  case Scenario::same_everywhere: return 500;
  case Scenario::none: break;
  }
  return 0;
}

std::int64_t sumOverRanks(std::int64_t value)
{
  std::int64_t sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

std::int64_t maxOverRanks(std::int64_t value)
{
  std::int64_t max = 0;
  MPI_Allreduce(&value, &max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return max;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("Morton partition: owned once, in key order, balanced, and back",
                        "[mpi][partition]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  for (Scenario scenario :
       {Scenario::uneven, Scenario::all_on_rank_0, Scenario::same_everywhere, Scenario::none})
  {
    CAPTURE(rank, ranks, static_cast<int>(scenario));
    std::size_t const n = countOn(scenario, rank);
    Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
    Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
    int const seed = scenario == Scenario::same_everywhere ? 11 : 11 + rank;
    kfmm::generate(space, kfmm::Distribution::plummer, seed, x, q);

    kfmm::distributed::MortonPartition<Real, Memory> const partition(MPI_COMM_WORLD, space, x);
    REQUIRE(partition.callerCount() == n);
    std::int64_t const owned = static_cast<std::int64_t>(partition.ownedCount());
    REQUIRE(partition.positions().extent(0) == partition.ownedCount());
    CHECK(sumOverRanks(owned) == sumOverRanks(static_cast<std::int64_t>(n)));

    // Splitters: ranks + 1, non-decreasing, from 0 to past every key, the same on every rank.
    auto const &splitters = partition.splitters();
    REQUIRE(splitters.size() == static_cast<std::size_t>(ranks) + 1);
    CHECK(splitters.front() == 0);
    CHECK(splitters.back() == std::numeric_limits<kfmm::tree::MortonKey>::max());
    CHECK(std::is_sorted(splitters.begin(), splitters.end()));
    std::vector<kfmm::tree::MortonKey> lowest(splitters), highest(splitters);
    MPI_Allreduce(MPI_IN_PLACE, lowest.data(), ranks + 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, highest.data(), ranks + 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lowest == highest);

    // Every owned particle's key lies in this rank's range.
    auto const owned_x =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, partition.positions());
    std::size_t outside = 0;
    for (std::size_t i = 0; i < owned_x.extent(0); ++i)
    {
      auto const key =
          kfmm::tree::mortonKey(partition.cube(), owned_x(i, 0), owned_x(i, 1), owned_x(i, 2));
      outside += key < splitters[rank] || key >= splitters[rank + 1] ? 1 : 0;
    }
    CHECK(outside == 0);

    // Distinct keys: every rank within 10 % of the mean (1024 samples per rank).
    if (scenario == Scenario::uneven || scenario == Scenario::all_on_rank_0)
    {
      double const mean = static_cast<double>(sumOverRanks(static_cast<std::int64_t>(n))) / ranks;
      CHECK(static_cast<double>(maxOverRanks(owned)) <= 1.1 * mean);
    }

    // Values to the owners and back: the same, to the bit, in the caller's order. The owned
    // positions come back as the caller's positions.
    Kokkos::View<double *[2], Memory> ids("kfmm::test::ids", n);
    Kokkos::parallel_for(
        "kfmm::test::ids", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(std::size_t i) {
          ids(i, 0) = 1e7 * rank + static_cast<double>(i);
          ids(i, 1) = -0.5 * static_cast<double>(i);
        });
    Kokkos::View<double *[2], Memory> at_owners("kfmm::test::at_owners", partition.ownedCount());
    Kokkos::View<double *[2], Memory> back("kfmm::test::back", n);
    partition.toOwners(space, ids, at_owners);
    partition.toCallers(space, at_owners, back);
    Kokkos::View<Real *[3], Memory> x_back("kfmm::test::x_back", n);
    partition.toCallers(space, partition.positions(), x_back);
    Kokkos::View<Real *, Memory> q_owned("kfmm::test::q_owned", partition.ownedCount());
    Kokkos::View<Real *, Memory> q_back("kfmm::test::q_back", n);
    partition.toOwners(space, q, q_owned);
    partition.toCallers(space, q_owned, q_back);
    auto const ids_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, ids);
    auto const back_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, back);
    auto const x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
    auto const x_back_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x_back);
    auto const q_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q);
    auto const q_back_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q_back);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i)
    {
      differ += ids_h(i, 0) != back_h(i, 0) || ids_h(i, 1) != back_h(i, 1) ? 1 : 0;
      differ += q_h(i) != q_back_h(i) ? 1 : 0;
      for (int d = 0; d < 3; ++d)
        differ += x_h(i, d) != x_back_h(i, d) ? 1 : 0;
    }
    CHECK(differ == 0);
    // Each owned id names a particle of some rank once: the ids at the owners sum to the
    // sum of all ids.
    auto const at_owners_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, at_owners);
    double owned_sum = 0, caller_sum = 0;
    for (std::size_t i = 0; i < at_owners_h.extent(0); ++i)
      owned_sum += at_owners_h(i, 0);
    for (std::size_t i = 0; i < n; ++i)
      caller_sum += ids_h(i, 0);
    double sums[2] = {owned_sum, caller_sum};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sums[0] == sums[1]);
  }
}

TEMPLATE_LIST_TEST_CASE("Morton partition by weight: every rank within 10 % of the mean work",
                        "[mpi][partition]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CAPTURE(rank, ranks);

  // Particles of x > 0 weigh 9, the others 1: balanced by weight, the ranges differ from
  // those of equal counts. All zero weights balance counts.
  std::size_t const n = countOn(Scenario::uneven, rank);
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 21 + rank, x, q);
  Kokkos::View<double *, Memory> work("kfmm::test::work", n);
  Kokkos::parallel_for(
      "kfmm::test::work", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t i) { work(i) = x(i, 0) > 0 ? 9.0 : 1.0; });
  kfmm::distributed::MortonPartition<Real, Memory> const partition(MPI_COMM_WORLD, space, x, work);
  Kokkos::View<double *, Memory> owned_work("kfmm::test::owned_work", partition.ownedCount());
  partition.toOwners(space, work, owned_work);
  auto const owned_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, owned_work);
  auto const work_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, work);
  double sums[2] = {0, 0}; // this rank's owned work; its callers' work
  for (std::size_t i = 0; i < owned_h.extent(0); ++i)
    sums[0] += owned_h(i);
  for (std::size_t i = 0; i < n; ++i)
    sums[1] += work_h(i);
  double most = sums[0];
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sums[0] == sums[1]);
  CHECK(most <= 1.1 * sums[1] / ranks);

  Kokkos::View<double *, Memory> none("kfmm::test::none", n);
  kfmm::distributed::MortonPartition<Real, Memory> const by_count(MPI_COMM_WORLD, space, x, none);
  double const mean = static_cast<double>(sumOverRanks(static_cast<std::int64_t>(n))) / ranks;
  CHECK(static_cast<double>(maxOverRanks(static_cast<std::int64_t>(by_count.ownedCount()))) <=
        1.1 * mean);
}

TEMPLATE_LIST_TEST_CASE("Morton partition aligned to leaves: no leaf of the whole tree is cut",
                        "[mpi][partition]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  // The whole problem on every rank (same seed); rank r passes the block r of it. Coincident
  // particles (a tenth of them doubled) make leaves at the deepest level too.
  for (int leaf_size : {1, 8, 40})
  {
    CAPTURE(rank, ranks, leaf_size);
    std::size_t const base = 2000;
    std::size_t const n = base + base / 10;
    Kokkos::View<Real *[3], Memory> all_x("kfmm::test::all_x", n);
    Kokkos::View<Real *, Memory> all_q("kfmm::test::all_q", n);
    kfmm::generate(space, kfmm::Distribution::plummer, 31, all_x, all_q);
    Kokkos::parallel_for(
        "kfmm::test::coincident", Kokkos::RangePolicy<Space>(space, base, n),
        KOKKOS_LAMBDA(std::size_t i) {
          for (int c = 0; c < 3; ++c)
            all_x(i, c) = all_x(i - base, c);
        });
    std::size_t const begin = n * rank / ranks;
    std::size_t const end = n * (rank + 1) / ranks;
    auto const block = Kokkos::subview(all_x, Kokkos::make_pair(begin, end), Kokkos::ALL);
    kfmm::distributed::PartitionOptions options;
    options.leaf_size = leaf_size;
    kfmm::distributed::MortonPartition<Real, Memory> const partition(MPI_COMM_WORLD, space, block,
                                                                     options);
    auto const &splitters = partition.splitters();
    CHECK(std::is_sorted(splitters.begin(), splitters.end()));

    // Every leaf of the tree of all particles (built in the partition's cube, as one rank
    // would) has all its keys in one rank's range.
    auto const tree = kfmm::tree::buildOctree(space, all_x, leaf_size);
    CHECK(tree.cube.side == partition.cube().side);
    auto const keys = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tree.keys);
    auto const leaves = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tree.leaves);
    auto const begins =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tree.particle_begin);
    auto const ends = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, tree.particle_end);
    auto const owner = [&](kfmm::tree::MortonKey key) {
      return std::upper_bound(splitters.begin(), splitters.end(), key) - splitters.begin() - 1;
    };
    std::size_t cut = 0;
    for (std::size_t j = 0; j < leaves.extent(0); ++j)
    {
      int const c = leaves(j);
      cut += owner(keys(begins(c))) != owner(keys(ends(c) - 1)) ? 1 : 0;
    }
    CHECK(cut == 0);

    // Balance: moving a splitter to a leaf's start moves at most leaf_size particles (or the
    // coincident ones of one key).
    double const mean = static_cast<double>(n) / ranks;
    CHECK(static_cast<double>(maxOverRanks(static_cast<std::int64_t>(partition.ownedCount()))) <=
          1.1 * mean + leaf_size + 2);
  }
}

TEMPLATE_LIST_TEST_CASE("Morton partition: bad input on one rank stops every rank",
                        "[mpi][partition][validation]", kfmm::test::Spaces)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int const bad_rank = ranks - 1;
  CAPTURE(rank);

  // A NaN in the last rank's positions.
  std::size_t const n = 6;
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  kfmm::generate(space, kfmm::Distribution::uniform, 5 + rank, x, q);
  Kokkos::View<Real *[3], Memory> nan_x("kfmm::test::nan_x", n);
  Kokkos::deep_copy(nan_x, x);
  if (rank == bad_rank)
  {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, nan_x);
    host(4, 2) = std::numeric_limits<Real>::quiet_NaN();
    Kokkos::deep_copy(nan_x, host);
  }
  // Every rank throws the bad rank's message.
  CHECK_THROWS_WITH(
      (kfmm::distributed::MortonPartition<Real, Memory>(MPI_COMM_WORLD, space, nan_x)),
      Catch::Matchers::Equals("kfmm::distributed::MortonPartition: argument 'positions' holds "
                              "a NaN or infinite value at index 4"));

  // A negative weight on the last rank.
  Kokkos::View<double *, Memory> weights("kfmm::test::weights", n);
  Kokkos::deep_copy(weights, 1.0);
  if (rank == bad_rank)
    Kokkos::deep_copy(Kokkos::subview(weights, 3), -1.0);
  CHECK_THROWS_WITH(
      (kfmm::distributed::MortonPartition<Real, Memory>(MPI_COMM_WORLD, space, x, weights)),
      Catch::Matchers::Equals("kfmm::distributed::MortonPartition: argument 'weights' holds a "
                              "negative value at index 3"));

  // Results of the wrong length on the last rank.
  kfmm::distributed::MortonPartition<Real, Memory> const partition(MPI_COMM_WORLD, space, x);
  Kokkos::View<Real *, Memory> owned_q("kfmm::test::owned_q", partition.ownedCount());
  partition.toOwners(space, q, owned_q);
  Kokkos::View<Real *, Memory> back("kfmm::test::back", rank == bad_rank ? n + 1 : n);
  CHECK_THROWS_WITH(
      partition.toCallers(space, owned_q, back),
      Catch::Matchers::StartsWith("kfmm::distributed::MortonPartition::toCallers: expected "));

  // Two columns on the last rank, one elsewhere: shapes each rank accepts on its own, rows
  // whose sizes the ranks' messages cannot agree on (with one rank there is nothing to
  // disagree with).
  int const columns = rank == bad_rank && ranks > 1 ? 2 : 1;
  Kokkos::View<Real **, Memory> in("kfmm::test::in", n, columns);
  Kokkos::View<Real **, Memory> out("kfmm::test::out", partition.ownedCount(), columns);
  if (ranks > 1)
    CHECK_THROWS_WITH(partition.toOwners(space, in, out),
                      Catch::Matchers::StartsWith(
                          "kfmm::distributed::MortonPartition::toOwners: the ranks' values "
                          "differ in columns or type"));
  else
    CHECK_NOTHROW(partition.toOwners(space, in, out));
}

TEMPLATE_LIST_TEST_CASE("Morton partition: repartition after a move", "[mpi][partition][rebuild]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  using Space = typename TestType::execution_space;
  Space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CAPTURE(rank, ranks);
  std::size_t const n = countOn(Scenario::uneven, rank);
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  kfmm::generate(space, kfmm::Distribution::uniform, 29 + rank, x, q);
  kfmm::distributed::PartitionOptions options;
  options.leaf_size = 16;
  kfmm::distributed::MortonPartition<Real, Memory> partition(MPI_COMM_WORLD, space, x, options);
  auto const splitters = partition.splitters();
  std::size_t const owned = partition.ownedCount();

  // The same positions: the same splitters, and so the same ranges.
  CHECK(partition.repartition(space, x));
  CHECK(partition.splitters() == splitters);
  CHECK(partition.ownedCount() == owned);

  // A small move keeps the splitters; every particle is owned once, in its rank's range, and
  // values go to the owners and back unchanged.
  auto x_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
  for (std::size_t i = 0; i < n; ++i)
    x_h(i, 0) += Real(1e-3) * static_cast<Real>(std::sin(3.0 * x_h(i, 1)));
  Kokkos::deep_copy(x, x_h);
  CHECK(partition.repartition(space, x));
  CHECK(sumOverRanks(static_cast<std::int64_t>(partition.ownedCount())) ==
        sumOverRanks(static_cast<std::int64_t>(n)));
  auto const owned_x =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, partition.positions());
  std::size_t outside = 0;
  for (std::size_t i = 0; i < owned_x.extent(0); ++i)
  {
    auto const key =
        kfmm::tree::mortonKey(partition.cube(), owned_x(i, 0), owned_x(i, 1), owned_x(i, 2));
    outside += key < partition.splitters()[rank] || key >= partition.splitters()[rank + 1];
  }
  CHECK(outside == 0);
  Kokkos::View<Real *, Memory> at_owners("kfmm::test::at_owners", partition.ownedCount());
  Kokkos::View<Real *, Memory> back("kfmm::test::back", n);
  partition.toOwners(space, q, at_owners);
  partition.toCallers(space, at_owners, back);
  auto const q_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, q);
  auto const back_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, back);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < n; ++i)
    changed += q_h(i) != back_h(i);
  CHECK(changed == 0);

  // No imbalance allowed: at more than one rank the uneven leaf-aligned ranges are not exactly
  // equal, so new splitters are sampled, the same on every rank.
  bool const kept = partition.repartition(space, x, 0.0);
  int kept_int = kept ? 1 : 0, low = 0, high = 0;
  MPI_Allreduce(&kept_int, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&kept_int, &high, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(low == high);
  std::vector<kfmm::tree::MortonKey> lowest(partition.splitters()), highest(lowest);
  MPI_Allreduce(MPI_IN_PLACE, lowest.data(), ranks + 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, highest.data(), ranks + 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lowest == highest);

  // A bad argument on the last rank: every rank throws its message.
  CHECK_THROWS_WITH(partition.repartition(space, x, rank == ranks - 1 ? -1.0 : 0.1),
                    Catch::Matchers::Equals("kfmm::distributed::MortonPartition::repartition: "
                                            "argument 'imbalance' must be >= 0"));
}
