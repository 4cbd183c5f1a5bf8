// SPDX-License-Identifier: BSD-3-Clause
// Calls that pass a wrong View to a public entry point, one per KFMM_CASE_* macro. None may
// compile, and the first error of each must be kfmm's static_assert in the caller's terms
// (tests/compile/ExpectError.cmake; the expected messages are in tests/CMakeLists.txt); one
// case is a warning that the test turns into an error.
#include <kfmm/kfmm.hpp>
#if defined(KFMM_CASE_DISTRIBUTED_POSITIONS_RANK) || defined(KFMM_CASE_DISTRIBUTED_HOST_VIEW)
#include <kfmm/distributed/DirectSum.hpp>
#endif

#include <Kokkos_Core.hpp>

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;
using Positions = Kokkos::View<double *[3], Memory>;
using Scalars = Kokkos::View<double *, Memory>;
using HostPositions = Kokkos::View<double *[3], Kokkos::HostSpace>;

void wrongCall(kfmm::Fmm<double, Memory> &fmm, Positions const &x, Scalars const &q,
               Scalars const &phi, Positions const &g, HostPositions const &x_host)
{
  Space space;
  // Positions given as one column: rank 1 instead of 2.
  Scalars const &x_rank1 = q;
  Kokkos::View<int *, Memory> const phi_int("kfmm::test::phi_int", q.extent(0));
  // Each case mentions all arguments, so that the others compile.
  (void)fmm, (void)x, (void)q, (void)phi, (void)g, (void)x_host, (void)x_rank1, (void)phi_int;
#if defined(KFMM_CASE_EVALUATE_POSITIONS_RANK)
  kfmm::evaluate(space, x_rank1, q, phi, g);
#elif defined(KFMM_CASE_EVALUATE_POTENTIAL_TYPE)
  kfmm::evaluate(space, x, q, phi_int, g);
#elif defined(KFMM_CASE_EVALUATE_TARGETS_RANK)
  kfmm::evaluate(space, x, q, x_rank1, phi, g);
#elif defined(KFMM_CASE_FMM_TARGETS_RANK)
  kfmm::Fmm<double, Memory> wrong(space, x, x_rank1);
#elif defined(KFMM_CASE_FMM_POSITIONS_RANK)
  kfmm::Fmm<double, Memory> wrong(space, x_rank1);
#elif defined(KFMM_CASE_FMM_EVALUATE_CHARGES_RANK)
  fmm.evaluate(space, x, phi, g);
#elif defined(KFMM_CASE_DIRECT_SUM_POSITIONS_RANK)
  kfmm::directSum(space, x_rank1, q, phi, g);
#elif defined(KFMM_CASE_DIRECT_SUM_SOURCES_RANK)
  kfmm::directSum(space, x, x_rank1, q, phi, g);
#elif defined(KFMM_CASE_DISTRIBUTED_POSITIONS_RANK)
  kfmm::distributed::directSum(MPI_COMM_WORLD, space, x_rank1, q, phi, g);
// Host memory given to an execution space that cannot access it (a GPU's).
#elif defined(KFMM_CASE_EVALUATE_HOST_VIEW)
  kfmm::evaluate(space, x_host, q, phi, g);
#elif defined(KFMM_CASE_FMM_HOST_VIEW)
  kfmm::Fmm<double, Memory> wrong(space, x_host);
#elif defined(KFMM_CASE_DIRECT_SUM_HOST_VIEW)
  kfmm::directSum(space, x_host, q, phi, g);
#elif defined(KFMM_CASE_DISTRIBUTED_HOST_VIEW)
  kfmm::distributed::directSum(MPI_COMM_WORLD, space, x_host, q, phi, g);
// Double positions for a float solver: not kfmm::precompiled's Views, so with the library
// linked the call compiles the solver here, and says so (a warning, an error in this case).
#elif defined(KFMM_CASE_HEADER_ONLY_FALLBACK)
  Kokkos::View<float *, Memory> const q_float("kfmm::test::q_float", q.extent(0));
  Kokkos::View<float *[3], Memory> const g_float("kfmm::test::g_float", q.extent(0));
  kfmm::evaluate(space, x, q_float, q_float, g_float);
#else
#error "tests/compile/WrongArguments.cpp: no KFMM_CASE_* given"
#endif
}
