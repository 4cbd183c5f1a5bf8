// SPDX-License-Identifier: BSD-3-Clause
// The distributed direct sum from the installed package: rank r holds one unit charge at
// x = r, so on two ranks each sees potential 1 and a field of magnitude 1 pointing at the
// other. Exit code 0 on every rank when all ranks agree with that.
#include <kfmm/distributed/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cmath>
#include <cstdio>

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int ok = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    using Space = Kokkos::DefaultExecutionSpace;
    Kokkos::View<double *[3], Space::memory_space> x("x", 1);
    Kokkos::View<double *, Space::memory_space> q("q", 1);
    Kokkos::View<double *, Space::memory_space> phi("phi", 1);
    Kokkos::View<double *[3], Space::memory_space> field("field", 1);
    Kokkos::parallel_for(
        "consumer::init", Kokkos::RangePolicy<Space>(0, 1), KOKKOS_LAMBDA(int) {
          x(0, 0) = rank;
          q(0) = 1;
        });
    kfmm::distributed::directSum(MPI_COMM_WORLD, Space{}, x, q, phi, field, 0.0);
    auto phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, phi);
    auto field_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, field);
    // The exact sums over the other ranks' charges at integer distances.
    double expected_phi = 0, expected_field = 0;
    for (int other = 0; other < ranks; ++other)
    {
      if (other == rank)
        continue;
      double const d = other - rank;
      expected_phi += 1 / std::abs(d);
      expected_field += d / std::abs(d * d * d);
    }
    ok = std::abs(phi_h(0) - expected_phi) < 1e-14 &&
         std::abs(field_h(0, 0) - expected_field) < 1e-14;
    std::printf("kfmm consumer (MPI rank %d of %d): phi = %g, field_x = %g: %s\n", rank, ranks,
                phi_h(0), field_h(0, 0), ok ? "ok" : "WRONG");
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
