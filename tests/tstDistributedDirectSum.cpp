// SPDX-License-Identifier: BSD-3-Clause
// The distributed direct sum on 1 to 4 ranks equals, on every rank, the single-process
// direct sum of the whole problem at that rank's particles, to rounding; bad input on one
// rank makes every rank throw.
#include <kfmm/Accuracy.hpp>
#include <kfmm/distributed/DirectSum.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <mpi.h>

#include <limits>

#include "TestTypes.hpp"

TEMPLATE_LIST_TEST_CASE("distributed direct sum equals the single-process sum", "[mpi][direct]",
                        kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  // The whole problem exists on every rank (same seed); rank r owns a contiguous block of it,
  // of uneven size so that gathering with different counts is exercised.
  std::size_t const n = 1501;
  Kokkos::View<Real *[3], Memory> all_x("kfmm::test::all_x", n);
  Kokkos::View<Real *, Memory> all_q("kfmm::test::all_q", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 3, all_x, all_q);
  std::size_t const begin = n * rank / ranks + (rank > 0 ? 1 : 0);
  std::size_t const end = rank == ranks - 1 ? n : n * (rank + 1) / ranks + 1;
  auto const range = Kokkos::make_pair(begin, end);
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", end - begin);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", end - begin);
  Kokkos::parallel_for(
      "kfmm::test::take_block",
      Kokkos::RangePolicy<typename TestType::execution_space>(space, 0, end - begin),
      KOKKOS_LAMBDA(std::size_t i) {
        for (int c = 0; c < 3; ++c)
          x(i, c) = all_x(begin + i, c);
        q(i) = all_q(begin + i);
      });

  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", end - begin);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", end - begin);
  kfmm::distributed::directSum(MPI_COMM_WORLD, space, x, q, phi, g, 0.001);

  Kokkos::View<Real *, Memory> all_phi("kfmm::test::all_phi", n);
  Kokkos::View<Real *[3], Memory> all_g("kfmm::test::all_g", n);
  kfmm::directSum(space, all_x, all_q, all_phi, all_g, 0.001);

  auto const phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, phi);
  auto const g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, g);
  auto const expected_phi =
      Kokkos::subview(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_phi), range);
  auto const expected_g = Kokkos::subview(
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, all_g), range, Kokkos::ALL);
  CAPTURE(rank, ranks);
  // Same sources in the same order through the same kernel: equal to the last bit.
  CHECK(kfmm::relativeL2Error(phi_h, expected_phi) == 0);
  CHECK(kfmm::relativeL2Error(g_h, expected_g) == 0);
}

TEMPLATE_LIST_TEST_CASE("distributed direct sum: bad input on one rank stops every rank",
                        "[mpi][validation]", kfmm::test::Spaces)
{
  // Rank 0's positions hold a NaN. Every rank throws instead of waiting for rank 0 in the
  // gather, with rank 0's message in the caller's terms.
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::size_t const n = 4;
  Kokkos::View<Real *[3], Memory> x("kfmm::test::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::test::q", n);
  Kokkos::View<Real *, Memory> phi("kfmm::test::phi", n);
  Kokkos::View<Real *[3], Memory> g("kfmm::test::g", n);
  kfmm::generate(space, kfmm::Distribution::uniform, 5 + rank, x, q);
  if (rank == 0)
  {
    auto x_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, x);
    x_host(2, 1) = std::numeric_limits<Real>::quiet_NaN();
    Kokkos::deep_copy(x, x_host);
  }
  CAPTURE(rank);
  CHECK_THROWS_WITH(kfmm::distributed::directSum(MPI_COMM_WORLD, space, x, q, phi, g),
                    Catch::Matchers::Equals("kfmm::distributed::directSum: argument "
                                            "'positions' holds a NaN or infinite value at "
                                            "index 2"));
}
