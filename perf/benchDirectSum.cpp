// SPDX-License-Identifier: BSD-3-Clause
// All-pairs direct sum throughput, in interactions per second (N^2 / time), fp32 and fp64,
// on every execution space this Kokkos has. One line per (space, precision, N): the median
// of `repeat` timed runs after one warm-up, each fenced.
//
// On the host, each line is followed by the rate of a plain reference loop on the same
// particles and threads: an OpenMP loop over targets whose inner loop over sources is an
// `omp simd` reduction, the simplest code a compiler vectorises well. kfmm's rate as a
// fraction of it is the near field's target (at least 75 %).
//
//   kfmm_bench_direct [--n N[,N...]] [--host-n N[,N...]] [--repeat R]
// --n sets the sizes of every space, --host-n (after it) those of the host spaces.
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include "BenchmarkSupport.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace
{

/// The reference all-pairs loop of the file comment. The sources are laid out as separate
/// arrays (structure of arrays, copied before the timing) so that the vectorised inner loop
/// reads them with unit stride.
template <class Real>
struct ReferenceSum
{
  std::vector<Real> x, y, z, q, phi, gx, gy, gz;

  template <class Positions, class Charges>
  ReferenceSum(Positions const &positions, Charges const &charges)
  {
    auto const n = positions.extent(0);
    for (auto *v : {&x, &y, &z, &q, &phi, &gx, &gy, &gz})
      v->resize(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      x[i] = positions(i, 0);
      y[i] = positions(i, 1);
      z[i] = positions(i, 2);
      q[i] = charges(i);
    }
  }

  void operator()()
  {
    long const n = static_cast<long>(x.size());
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i)
    {
      Real p = 0, fx = 0, fy = 0, fz = 0;
#pragma omp simd reduction(+ : p, fx, fy, fz)
      for (long j = 0; j < n; ++j)
      {
        Real const dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
        Real const r2 = dx * dx + dy * dy + dz * dz;
        Real const real = r2 > Real(0) ? Real(1) : Real(0);
        Real const inv_r = real / std::sqrt(r2 + (Real(1) - real));
        Real const q_inv_r = q[j] * inv_r;
        Real const q_inv_r3 = q_inv_r * inv_r * inv_r;
        p += q_inv_r;
        fx -= q_inv_r3 * dx;
        fy -= q_inv_r3 * dy;
        fz -= q_inv_r3 * dz;
      }
      phi[i] = p;
      gx[i] = fx;
      gy[i] = fy;
      gz[i] = fz;
    }
  }
};

template <class ExecutionSpace, class Real>
void run(std::size_t n, int repeat)
{
  using Memory = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  Kokkos::View<Real *[3], Memory> x("kfmm::bench::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::bench::q", n);
  Kokkos::View<Real *, Memory> phi("kfmm::bench::phi", n);
  Kokkos::View<Real *[3], Memory> g("kfmm::bench::g", n);
  kfmm::generate(space, kfmm::Distribution::uniform, 1, x, q);
  double const median = kfmm::bench::medianSeconds(
      repeat, [] {}, [&] { kfmm::directSum(space, x, q, phi, g); }, [&] { space.fence(); });
  double const interactions = static_cast<double>(n) * static_cast<double>(n);
  std::printf("%-8s %-6s N=%-9zu median %.4e s  %.3e interactions/s\n", ExecutionSpace::name(),
              sizeof(Real) == 4 ? "fp32" : "fp64", n, median, interactions / median);
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible)
  {
    ReferenceSum<Real> reference_sum(x, q);
    double const reference = kfmm::bench::medianSeconds(
        repeat, [] {}, [&] { reference_sum(); }, [] {});
    std::printf("%-8s %-6s N=%-9zu reference loop %.3e interactions/s, kfmm at %.0f %%\n",
                ExecutionSpace::name(), sizeof(Real) == 4 ? "fp32" : "fp64", n,
                interactions / reference, 100 * reference / median);
  }
  std::fflush(stdout);
}

template <class ExecutionSpace>
void runSpace(std::vector<std::size_t> const &sizes, int repeat)
{
  for (auto n : sizes)
  {
    run<ExecutionSpace, float>(n, repeat);
    run<ExecutionSpace, double>(n, repeat);
  }
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  std::string device_sizes = "65536,1048576", host_sizes = "16384,65536";
  int repeat = 5;
  for (int i = 1; i < argc; ++i)
  {
    std::string const arg = argv[i];
    if (arg == "--n" && i + 1 < argc)
      device_sizes = host_sizes = argv[++i];
    else if (arg == "--host-n" && i + 1 < argc)
      host_sizes = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else
    {
      std::fprintf(stderr, "usage: %s [--n N[,N...]] [--host-n N[,N...]] [--repeat R]\n", argv[0]);
      return 2;
    }
  }
#if defined(KOKKOS_ENABLE_CUDA)
  runSpace<Kokkos::Cuda>(kfmm::bench::parseSizes(device_sizes), repeat);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  std::printf("# OpenMP threads: %d\n", Kokkos::OpenMP().concurrency());
  runSpace<Kokkos::OpenMP>(kfmm::bench::parseSizes(host_sizes), repeat);
#endif
  return 0;
}
