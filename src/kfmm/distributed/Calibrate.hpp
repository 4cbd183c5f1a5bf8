// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_CALIBRATE_HPP
#define KFMM_DISTRIBUTED_CALIBRATE_HPP

// kfmm::calibrate over the particles of every MPI rank: the same search (kfmm/Calibrate.hpp)
// with each evaluation a distributed one (kfmm::distributed::evaluate), and what it measures
// spanning the ranks, so that every rank measures the same errors and times and chooses the
// same order and theta:
//  - the samples are strided over every rank's particles in rank order (the particles the
//    single-rank calibrate of their concatenation samples); their positions and a candidate's
//    field there are summed over the ranks from each rank's own (the others' rows zero);
//  - their reference, the direct sum in double, is each rank's sources' share at every
//    sample, summed over the ranks;
//  - a candidate's difference from the reference row sums each rank's targets' sums;
//  - an evaluation's time is the slowest rank's.
// The direct sum is no candidate (step 4 of kfmm/Calibrate.hpp): no rank holds every source.
// Collective calls: MPI_Comm_dup, the arguments' checks (MPI_Allreduce), an MPI_Exscan and an
// MPI_Allreduce of the counts, then per evaluation those of the distributed solver and a few
// MPI_Allreduce of at most samples x 4 values.

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include <kfmm/Calibrate.hpp>
#include <kfmm/Calibration.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/distributed/DistributedFmm.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace kfmm::distributed
{
namespace detail
{

/// The ranks of `comm` as kfmm::detail::calibrateRows spans them (kfmm::detail::OneRank says
/// what each member does).
struct AllRanks
{
  MPI_Comm comm;

  static constexpr bool holds_every_source = false;

  std::pair<std::size_t, std::size_t> span(std::size_t n) const
  {
    std::uint64_t const mine = n;
    std::uint64_t before = 0, total = 0;
    MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) // MPI_Exscan leaves rank 0's result undefined
      before = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
    return {static_cast<std::size_t>(total), static_cast<std::size_t>(before)};
  }

  void sum(double *values, int count) const
  {
    MPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, comm);
  }

  double largest(double value) const
  {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, comm);
    return value;
  }

  template <class ExecutionSpace, class Values>
  void sumView(ExecutionSpace const &space, Values const &values) const
  {
    static_assert(std::is_same<typename Values::value_type, double>::value,
                  "the samples' Views hold doubles");
    space.fence(); // the kernels that wrote `values`
    auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
    sum(host.data(), static_cast<int>(host.span()));
    Kokkos::deep_copy(values, host);
  }
};

} // namespace detail

/// kfmm::calibrate of the particles of every rank in `comm` (collective; the file comment):
/// this rank's `positions` (N_local x 3) and `charges` (N_local) in, the chosen setting's
/// potential (N_local) and field (N_local x 3) at them out, as kfmm::distributed::evaluate
/// computes them; the same Calibration on every rank. Calibration::options serves a
/// kfmm::distributed::DistributedFmm of these particles (and of the next time steps').
/// Calibration::seconds and each trial's are the slowest rank's.
/// \throws kfmm::Exception on every rank on what kfmm::calibrate or the distributed solver
/// refuses on any rank, or options that differ between ranks; kfmm::ToleranceError on every
/// rank where nothing evaluated meets the tolerance, unless Options::allow_missed_tolerance.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Calibration calibrate(MPI_Comm comm, ExecutionSpace const &space, Positions const &positions,
                      Charges const &charges, Potential const &potential, Field const &field,
                      Options const &options)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::distributed::calibrate: the second argument must be a Kokkos execution "
                "space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::calibrate", "positions", Positions, 2, "N x 3",
                           ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::calibrate", "charges", Charges, 1, "N",
                           ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::calibrate", "potential", Potential, 1, "N",
                           ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::calibrate", "field", Field, 2, "N x 3",
                           ExecutionSpace);
  static_assert(kfmm::detail::holdsWritableReal<Potential>() &&
                    kfmm::detail::holdsWritableReal<Field>(),
                "kfmm::distributed::calibrate: arguments 'potential' and 'field' must hold "
                "non-const float or double");
  if constexpr (kfmm::detail::viewFits<ExecutionSpace, Positions, 2>() &&
                kfmm::detail::viewFits<ExecutionSpace, Charges, 1>() &&
                kfmm::detail::viewFits<ExecutionSpace, Potential, 1>() &&
                kfmm::detail::viewFits<ExecutionSpace, Field, 2>() &&
                kfmm::detail::holdsWritableReal<Potential>() &&
                kfmm::detail::holdsWritableReal<Field>())
  {
    std::string const where = "kfmm::distributed::calibrate";
    detail::Communicator const own(comm);
    MPI_Comm const c = own.get();
    // What one rank alone would refuse fails on every rank, before the first collective
    // evaluation.
    detail::requireOnAllRanks(c, where, [&] {
      std::size_t const n = positions.extent(0);
      kfmm::detail::requireExtent(where, "charges", charges.extent(0), n);
      kfmm::detail::requireExtent(where, "potential", potential.extent(0), n);
      kfmm::detail::requireExtent(where, "field", field.extent(0), n);
    });
    detail::requireOnAllRanks(c, where, [&] { detail::requireSameOptions(c, where, options); });
    return kfmm::detail::calibrateRows(
        space, positions, charges, positions, potential, field, options,
        [&](Options const &o, auto const &phi, auto const &g) {
          return kfmm::distributed::evaluate(c, space, positions, charges, phi, g, o).solver;
        },
        detail::AllRanks{c}, where);
  }
  else
    return {};
}

} // namespace kfmm::distributed

#else
#error                                                                                             \
    "kfmm/distributed needs a kfmm built with KFMM_ENABLE_MPI=ON, used through the kfmm::mpi target"
#endif
#endif
