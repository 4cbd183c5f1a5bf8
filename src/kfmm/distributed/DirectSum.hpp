// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_DIRECT_SUM_HPP
#define KFMM_DISTRIBUTED_DIRECT_SUM_HPP

// The all-pairs direct sum over particles spread across MPI ranks: the reference the
// distributed FMM is checked against. Every rank gathers all positions and charges (through
// host buffers, so no GPU-aware MPI is needed) and evaluates its own particles against them.
// O(N) memory per rank: meant for checks, not for production sizes. It works on its own
// duplicate of the caller's communicator, and its messages have 64-bit sizes
// (detail/Collectives.hpp). Collective calls, in order: MPI_Comm_dup; MPI_Allreduce (the
// arguments' checks); MPI_Allgather and MPI_Bcast (positions, then charges); MPI_Comm_free.

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include <kfmm/Exception.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <string>
#include <vector>

namespace kfmm::distributed
{
namespace detail
{

/// Every rank's rows of `local` (N_local x C) on the host, in rank order, row by row
/// (collective: allGatherv).
template <class Real, class View>
std::vector<Real> allGatherRows(MPI_Comm comm, View const &local, int columns)
{
  // Packed on the host in the View's own layout-independent (row, column) order.
  auto const local_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, local);
  std::vector<Real> send(local.extent(0) * columns);
  for (std::size_t i = 0; i < local.extent(0); ++i)
    for (int c = 0; c < columns; ++c)
    {
      if constexpr (View::rank == 2)
        send[i * columns + c] = local_host(i, c);
      else
        send[i] = local_host(i);
    }
  return allGatherv(comm, send);
}

/// distributed::directSum on Views whose types it checked.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
void directSumOfRanks(MPI_Comm user_comm, ExecutionSpace const &space, Positions const &positions,
                      Charges const &charges, Potential const &potential, Field const &field,
                      double softening)
{
  kfmm::detail::EntryPoint const caller{"kfmm::distributed::directSum"};
  kfmm::detail::ScopedRegion region(caller.name);
  Communicator const own(user_comm);
  MPI_Comm const comm = own.get();
  // This rank's arguments, checked before any rank gathers: kfmm::directSum's checks of all
  // but the other ranks' particles, which their ranks check.
  requireOnAllRanks(comm, caller.name, [&] {
    kfmm::kernels::checkDirectSum(caller, space, positions, positions, charges, potential, field,
                                  softening, "positions", nullptr);
  });
  using Real = typename Potential::value_type;
  using Memory = typename ExecutionSpace::memory_space;
  std::vector<Real> const all_x = detail::allGatherRows<Real>(comm, positions, 3);
  std::vector<Real> const all_q = detail::allGatherRows<Real>(comm, charges, 1);
  Kokkos::View<Real *[3], Memory> sources(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::sources"),
      all_q.size());
  Kokkos::View<Real *, Memory> source_charges(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::charges"),
      all_q.size());
  auto sources_host = Kokkos::create_mirror_view(sources);
  auto charges_host = Kokkos::create_mirror_view(source_charges);
  for (std::size_t i = 0; i < all_q.size(); ++i)
  {
    for (int c = 0; c < 3; ++c)
      sources_host(i, c) = all_x[3 * i + c];
    charges_host(i) = all_q[i];
  }
  Kokkos::deep_copy(space, sources, sources_host);
  Kokkos::deep_copy(space, source_charges, charges_host);
  kfmm::kernels::launchDirectSum(space, positions, sources, source_charges, potential, field,
                                 softening, false);
}

} // namespace detail

/// Potential and field of this rank's particles due to the particles of all ranks in `comm`
/// (collective). Same definitions and checks as kfmm::directSum; when any rank's arguments
/// fail them, every rank throws.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
void directSum(MPI_Comm comm, ExecutionSpace const &space, Positions const &positions,
               Charges const &charges, Potential const &potential, Field const &field,
               double softening = 0)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::distributed::directSum: the second argument must be a Kokkos execution "
                "space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::directSum", "positions", Positions, 2, "N x 3",
                           ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::directSum", "charges", Charges, 1, "N",
                           ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::directSum", "potential", Potential, 1, "N",
                           ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::directSum", "field", Field, 2, "N x 3",
                           ExecutionSpace);
  static_assert(kfmm::detail::holdsWritableReal<Potential>() &&
                    kfmm::detail::holdsWritableReal<Field>(),
                "kfmm::distributed::directSum: arguments 'potential' and 'field' must hold "
                "non-const float or double");
  if constexpr (kfmm::kernels::directSumViewsFit<ExecutionSpace, Positions, Positions, Charges,
                                                 Potential, Field>())
    detail::directSumOfRanks(comm, space, positions, charges, potential, field, softening);
}

} // namespace kfmm::distributed

#else
// Without this, a user of an MPI-less kfmm would only learn that kfmm::distributed is empty.
#error                                                                                             \
    "kfmm/distributed needs a kfmm built with KFMM_ENABLE_MPI=ON, used through the kfmm::mpi target"
#endif
#endif
