// SPDX-License-Identifier: BSD-3-Clause
// All-pairs direct sum throughput, in interactions per second (N^2 / time), fp32 and fp64,
// on every execution space this Kokkos has. One line per (space, precision, N): the median
// of `repeat` timed runs after one warm-up, each fenced.
//
//   kfmm_bench_direct [--n N[,N...]] [--repeat R]
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include "BenchmarkSupport.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace
{

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
  std::printf("%-8s %-6s N=%-9zu median %.4e s  %.3e interactions/s\n",
              ExecutionSpace::name(), sizeof(Real) == 4 ? "fp32" : "fp64", n, median,
              interactions / median);
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
    else if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else
    {
      std::fprintf(stderr, "usage: %s [--n N[,N...]] [--repeat R]\n", argv[0]);
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
