// SPDX-License-Identifier: BSD-3-Clause
// kfmm's MPI helpers on 1 to 4 ranks: allGatherv returns every rank's elements in rank
// order on every rank, and postExchange each rank's block to its rank, whole or cut into pieces
// of any size (down to a few bytes, which is how messages over 2 GiB are cut into 1 GiB
// ones), with ranks that send nothing; StagedExchange moves values in the default memory
// space (on CUDA between the GPUs of a node, device to device, where they reach each other),
// over exchanges of growing and shrinking sizes; the Communicator is a duplicate of the
// caller's, not the caller's itself.
#include <kfmm/distributed/detail/Collectives.hpp>
#include <kfmm/distributed/detail/StagedExchange.hpp>

#include <Kokkos_Core.hpp>
#include <catch2/catch_test_macros.hpp>

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace
{
// Rank r sends (r * 3) % 5 elements (rank 0 none); element i of rank r is 1000 r + i + 0.5.
std::vector<double> elementsOf(int r)
{
  std::vector<double> elements(static_cast<std::size_t>((r * 3) % 5));
  for (std::size_t i = 0; i < elements.size(); ++i)
    elements[i] = 1000.0 * r + static_cast<double>(i) + 0.5;
  return elements;
}
} // namespace

TEST_CASE("allGatherv gathers every rank's elements in rank order, in pieces of any size",
          "[mpi][collectives]")
{
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<double> expected;
  for (int r = 0; r < ranks; ++r)
    for (double x : elementsOf(r))
      expected.push_back(x);

  // Whole messages, pieces of 8 bytes (one element) and of 7 bytes (pieces that split
  // elements, as 1 GiB pieces split nothing but bytes).
  for (std::size_t piece :
       {kfmm::distributed::detail::max_piece_bytes, std::size_t(8), std::size_t(7)})
  {
    std::vector<double> const all =
        kfmm::distributed::detail::allGatherv(MPI_COMM_WORLD, elementsOf(rank), piece);
    CHECK(all == expected);
  }
  CHECK_THROWS_AS(kfmm::distributed::detail::allGatherv(MPI_COMM_WORLD, elementsOf(rank), 0),
                  kfmm::Exception);
}

TEST_CASE("postExchange sends each rank its block, in rank order, in pieces of any size",
          "[mpi][collectives]")
{
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  // Rank s sends (s + 2 d) % 4 elements to rank d (some none, one to itself); element i of
  // that block is 1000 s + 10 d + i.
  auto const blockSize = [](int s, int d) { return static_cast<std::int64_t>((s + 2 * d) % 4); };
  std::vector<double> send;
  std::vector<std::int64_t> send_counts;
  std::vector<double> expected;
  for (int d = 0; d < ranks; ++d)
  {
    send_counts.push_back(blockSize(rank, d));
    for (std::int64_t i = 0; i < blockSize(rank, d); ++i)
      send.push_back(1000.0 * rank + 10.0 * d + static_cast<double>(i));
  }
  for (int s = 0; s < ranks; ++s)
    for (std::int64_t i = 0; i < blockSize(s, rank); ++i)
      expected.push_back(1000.0 * s + 10.0 * rank + static_cast<double>(i));
  auto const recv_counts = kfmm::distributed::detail::receiveCounts(MPI_COMM_WORLD, send_counts);
  for (int s = 0; s < ranks; ++s)
    CHECK(recv_counts[s] == blockSize(s, rank));
  for (std::size_t piece :
       {kfmm::distributed::detail::max_piece_bytes, std::size_t(8), std::size_t(7)})
  {
    using kfmm::distributed::detail::consecutiveBlocks;
    std::vector<double> received(expected.size(), -1.0);
    std::vector<MPI_Request> requests;
    kfmm::distributed::detail::postExchange(
        MPI_COMM_WORLD, send.data(), consecutiveBlocks(send_counts, sizeof(double)),
        received.data(), consecutiveBlocks(recv_counts, sizeof(double)), requests, piece);
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
    CHECK(received == expected);
  }
}

TEST_CASE("StagedExchange moves each rank's block of device values to its rank, exchange after "
          "exchange",
          "[mpi][collectives]")
{
  using MemorySpace = Kokkos::DefaultExecutionSpace::memory_space;
  kfmm::distributed::detail::Communicator const comm(MPI_COMM_WORLD);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm.get(), &rank);
  MPI_Comm_size(comm.get(), &ranks);
  Kokkos::DefaultExecutionSpace const space;
  kfmm::distributed::detail::StagedExchange<MemorySpace> exchange;
  // Exchange e: rank s sends scale_e * ((s + 2 d + e) % 4) elements to rank d, so that blocks
  // grow past the buffers of the last exchange (1 MiB and more) and shrink again, and some are
  // empty; element i of a block is s + d / 8 + e / 64 + i * 1e-6 (exact in double).
  for (int e = 0; e < 4; ++e)
  {
    std::int64_t const scale = e == 2 ? 300000 : 1000 * (e + 1);
    auto const blockSize = [&](int s, int d) { return scale * ((s + 2 * d + e) % 4); };
    auto const value = [&](int s, int d, std::int64_t i) {
      return s + d / 8.0 + e / 64.0 + static_cast<double>(i) * 1e-6;
    };
    std::vector<std::int64_t> send_counts(ranks), recv_counts(ranks);
    std::vector<double> send_host, expected;
    for (int d = 0; d < ranks; ++d)
    {
      send_counts[d] = blockSize(rank, d);
      for (std::int64_t i = 0; i < send_counts[d]; ++i)
        send_host.push_back(value(rank, d, i));
    }
    for (int s = 0; s < ranks; ++s)
    {
      recv_counts[s] = blockSize(s, rank);
      for (std::int64_t i = 0; i < recv_counts[s]; ++i)
        expected.push_back(value(s, rank, i));
    }
    Kokkos::View<double *, MemorySpace> send("kfmm::test::send", send_host.size());
    Kokkos::View<double *, MemorySpace> recv("kfmm::test::recv", expected.size());
    Kokkos::deep_copy(send,
                      Kokkos::View<double const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          send_host.data(), send_host.size()));
    exchange.start(comm.get(), space, send.data(), send_counts, recv.data(), recv_counts);
    exchange.finish(space);
    auto const received = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, recv);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < expected.size(); ++i)
      wrong += received(i) != expected[i] ? 1 : 0;
    INFO("exchange " << e << ", rank " << rank << " of " << ranks);
    CHECK(wrong == 0);
  }
}

TEST_CASE("the Communicator is kfmm's own duplicate of the caller's", "[mpi][collectives]")
{
  kfmm::distributed::detail::Communicator const own(MPI_COMM_WORLD);
  int comparison = MPI_UNEQUAL;
  MPI_Comm_compare(MPI_COMM_WORLD, own.get(), &comparison);
  // Congruent: the same ranks in the same order, but another context (not MPI_IDENT).
  CHECK(comparison == MPI_CONGRUENT);
  int sum = 0;
  int const one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, own.get());
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  CHECK(sum == ranks);
}
