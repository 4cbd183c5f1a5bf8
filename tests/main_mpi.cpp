// SPDX-License-Identifier: BSD-3-Clause
// MPI test main: MPI, then Kokkos, then Catch2 on every rank. The exit code is the worst
// over all ranks, so a failure on any rank fails the test.
#include <Kokkos_Core.hpp>

#include <catch2/catch_session.hpp>

#include <mpi.h>

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int result = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    result = Catch::Session().run(argc, argv);
  }
  int worst = 0;
  MPI_Allreduce(&result, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
