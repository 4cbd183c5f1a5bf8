// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_DIRECT_SUM_HPP
#define KFMM_DISTRIBUTED_DIRECT_SUM_HPP

// The all-pairs direct sum over particles spread across MPI ranks: the reference the
// distributed FMM is checked against. Every rank gathers all positions and charges (through
// host buffers, so no GPU-aware MPI is needed) and evaluates its own particles against them.
// O(N) memory per rank: meant for checks, not for production sizes.

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <vector>

namespace kfmm::distributed
{
namespace detail
{

/// Gathers every rank's rows of `local` (N_local x C) into one host array, in rank order.
template <class Real, class View>
Kokkos::View<Real **, Kokkos::LayoutRight, Kokkos::HostSpace>
allGatherRows(MPI_Comm comm, View const &local, int columns)
{
  int ranks = 0;
  MPI_Comm_size(comm, &ranks);
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
  int const bytes = static_cast<int>(send.size() * sizeof(Real));
  std::vector<int> counts(ranks), offsets(ranks, 0);
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < ranks; ++r)
    offsets[r] = offsets[r - 1] + counts[r - 1];
  std::size_t const total_rows = (offsets[ranks - 1] + counts[ranks - 1]) / sizeof(Real) / columns;
  Kokkos::View<Real **, Kokkos::LayoutRight, Kokkos::HostSpace> all(
      "kfmm::distributed::gathered", total_rows, columns);
  MPI_Allgatherv(send.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(),
                 MPI_BYTE, comm);
  return all;
}

} // namespace detail

/// Potential and field of this rank's particles due to the particles of all ranks in `comm`
/// (collective). Same definitions and checks as kfmm::directSum.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
void directSum(MPI_Comm comm, ExecutionSpace const &space, Positions const &positions,
               Charges const &charges, Potential const &potential, Field const &field,
               double softening = 0)
{
  kfmm::detail::ScopedRegion region("kfmm::distributed::directSum");
  std::string const where = "kfmm::distributed::directSum";
  kfmm::detail::requireExtent(where, "positions (columns)", positions.extent(1), 3);
  kfmm::detail::requireExtent(where, "charges", charges.extent(0), positions.extent(0));
  using Real = typename Potential::non_const_value_type;
  using Memory = typename ExecutionSpace::memory_space;
  auto const all_x = detail::allGatherRows<Real>(comm, positions, 3);
  auto const all_q = detail::allGatherRows<Real>(comm, charges, 1);
  Kokkos::View<Real *[3], Memory> sources(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::sources"),
      all_x.extent(0));
  Kokkos::View<Real *, Memory> source_charges(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::charges"),
      all_q.extent(0));
  auto sources_host = Kokkos::create_mirror_view(sources);
  auto charges_host = Kokkos::create_mirror_view(source_charges);
  for (std::size_t i = 0; i < all_x.extent(0); ++i)
  {
    for (int c = 0; c < 3; ++c)
      sources_host(i, c) = all_x(i, c);
    charges_host(i) = all_q(i, 0);
  }
  Kokkos::deep_copy(space, sources, sources_host);
  Kokkos::deep_copy(space, source_charges, charges_host);
  kfmm::directSum(space, positions, sources, source_charges, potential, field, softening);
}

} // namespace kfmm::distributed

#else
// Without this, a user of an MPI-less kfmm would only learn that kfmm::distributed is empty.
#error "kfmm/distributed needs a kfmm built with KFMM_ENABLE_MPI=ON, used through the kfmm::mpi target"
#endif
#endif
