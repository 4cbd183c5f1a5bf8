// SPDX-License-Identifier: BSD-3-Clause
// M2L throughput of each variant (per-pair, grouped and rotation), by order and precision, on
// every execution space this Kokkos has: the solver is built once on N uniform particles,
// then evaluated `repeat` times after a warm-up; the line gives the median of the solver's
// fenced M2L stage, the translations per second, the dense-equivalent rate 2 n^2 flops per
// translation (n = (p+1)(p+2) reals per expansion, the work of the grouped variant's matrix
// product) and the rate of the variant's own operation count (expansions::flops). A variant
// the backend cannot run at an order says why.
//
//   kfmm_bench_m2l [--n N] [--host-n N] [--orders P[,P...]] [--host-orders P[,P...]]
//                  [--theta T] [--leaf-size L] [--repeat R]
// --n and --orders set both spaces' (defaults: 1e6 and 2..16 on a device, 1e5 and 2..12 on
// the host); --host-n and --host-orders, given after them, the host's alone.
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include "BenchmarkSupport.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

struct Settings
{
  std::size_t device_n = 1000000;
  std::size_t host_n = 100000;
  std::vector<int> device_orders{2, 4, 6, 8, 10, 12, 14, 16};
  std::vector<int> host_orders{2, 4, 6, 8, 10, 12};
  double theta = 0.5;
  int leaf_size = 64;
  int repeat = 3;
};

template <class ExecutionSpace, class Real>
void run(std::size_t n, int order, kfmm::M2LVariant variant, Settings const &s)
{
  using Memory = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  Kokkos::View<Real *[3], Memory> x("kfmm::bench::x", n);
  Kokkos::View<Real *, Memory> q("kfmm::bench::q", n);
  Kokkos::View<Real *, Memory> phi("kfmm::bench::phi", n);
  Kokkos::View<Real *[3], Memory> g("kfmm::bench::g", n);
  kfmm::generate(space, kfmm::Distribution::uniform, 1, x, q);
  kfmm::Options options;
  options.order = order;
  options.theta = s.theta;
  options.leaf_size = s.leaf_size;
  options.m2l_variant = variant;
  options.time_stages = true;
  std::printf("%-8s %-4s p=%-2d %-8s ", ExecutionSpace::name(), sizeof(Real) == 4 ? "fp32" : "fp64",
              order, kfmm::m2lVariantName(variant));
  try
  {
    kfmm::Fmm<Real, Memory> fmm(space, x, options);
    std::vector<double> seconds;
    for (int r = 0; r <= s.repeat; ++r)
    {
      fmm.evaluate(space, q, phi, g);
      if (r > 0)
        seconds.push_back(fmm.stats().seconds("M2L"));
    }
    auto const &stats = fmm.stats();
    double const m2l = kfmm::bench::median(seconds);
    double const reals = static_cast<double>((order + 1) * (order + 2));
    double const translations = static_cast<double>(stats.m2l_interactions);
    double const own = variant == kfmm::M2LVariant::rotation
                           ? double(kfmm::expansions::flops::m2lRotated(order))
                           : double(kfmm::expansions::flops::m2l(order));
    std::printf("M2L %.4e s  %.3e translations/s  %7.1f GFLOP/s dense-equivalent  %7.1f "
                "GFLOP/s own  %zu classes or directions, operators %.1f MiB, %zu pairs "
                "outside them\n",
                m2l, translations / m2l, 2 * reals * reals * translations / m2l / 1e9,
                own * translations / m2l / 1e9, stats.m2l_classes,
                static_cast<double>(stats.m2l_matrix_bytes) / (1 << 20),
                stats.m2l_per_pair_interactions);
  }
  catch (kfmm::Exception const &e)
  {
    std::printf("not run: %s\n", e.what());
  }
  std::fflush(stdout);
}

template <class ExecutionSpace>
void runSpace(std::size_t n, std::vector<int> const &orders, Settings const &s)
{
  std::printf("# %s, N = %zu uniform, theta %g, leaf size %d, median of %d\n",
              ExecutionSpace::name(), n, s.theta, s.leaf_size, s.repeat);
  for (int order : orders)
    for (auto variant :
         {kfmm::M2LVariant::per_pair, kfmm::M2LVariant::grouped, kfmm::M2LVariant::rotation})
    {
      run<ExecutionSpace, float>(n, order, variant, s);
      run<ExecutionSpace, double>(n, order, variant, s);
    }
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  Settings s;
  auto const orders = [](std::string const &list) {
    return kfmm::bench::parseList<int>(list, [](std::string const &o) { return std::stoi(o); });
  };
  for (int i = 1; i < argc; ++i)
  {
    std::string const arg = argv[i];
    if (arg == "--n" && i + 1 < argc)
      s.device_n = s.host_n = static_cast<std::size_t>(std::stod(argv[++i]));
    else if (arg == "--host-n" && i + 1 < argc)
      s.host_n = static_cast<std::size_t>(std::stod(argv[++i]));
    else if (arg == "--orders" && i + 1 < argc)
      s.device_orders = s.host_orders = orders(argv[++i]);
    else if (arg == "--host-orders" && i + 1 < argc)
      s.host_orders = orders(argv[++i]);
    else if (arg == "--theta" && i + 1 < argc)
      s.theta = std::atof(argv[++i]);
    else if (arg == "--leaf-size" && i + 1 < argc)
      s.leaf_size = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--repeat" && i + 1 < argc)
      s.repeat = std::max(1, std::atoi(argv[++i]));
    else
    {
      std::fprintf(stderr,
                   "usage: %s [--n N] [--host-n N] [--orders P[,P...]] [--host-orders "
                   "P[,P...]] [--theta T] [--leaf-size L] [--repeat R]\n",
                   argv[0]);
      return 2;
    }
  }
#if defined(KOKKOS_ENABLE_CUDA)
  runSpace<Kokkos::Cuda>(s.device_n, s.device_orders, s);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  std::printf("# OpenMP threads: %d\n", Kokkos::OpenMP().concurrency());
  runSpace<Kokkos::OpenMP>(s.host_n, s.host_orders, s);
#endif
  return 0;
}
