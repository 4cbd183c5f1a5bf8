// SPDX-License-Identifier: BSD-3-Clause
// The host's own ceiling for kfmm's thread scaling: what each thread of the host execution
// space does while all of them work at once.
//
//   OMP_NUM_THREADS=T kfmm_bench_host_threads [--seconds S]
//
// Two loops, run on every thread at once (one work item per thread):
// - fma: independent chains of fused multiply-adds over registers, vectorised (the near
//   field's kind of work: no memory traffic);
// - triad: a[i] = b[i] + s c[i] over arrays of 64 MiB per thread (the kind of work that is
//   bound by memory bandwidth).
// Prints one JSON object: threads, and per loop the slowest thread's rate. Run at 1 and at T
// threads, the ratio of the rates per thread is the most a stage of that kind can scale on
// the machine: for fma it is the clock falling as more cores work, which no code scales past;
// for triad, the threads sharing the memory's bandwidth.
#include <Kokkos_Core.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

using Space = Kokkos::DefaultHostExecutionSpace;
using Clock = std::chrono::steady_clock;

/// Enough independent accumulators to keep two vector FMA units busy through their latency.
constexpr int fma_lanes = 128;
constexpr long fma_rounds_per_pass = 1L << 20;

/// Runs `passes` passes of the FMA chains on one thread; returns a sum so that nothing is
/// optimised away.
double fmaPasses(long passes, double seed)
{
  double acc[fma_lanes];
  for (int j = 0; j < fma_lanes; ++j)
    acc[j] = seed + j;
  double const scale = 0.999999, shift = 1e-7;
  for (long pass = 0; pass < passes; ++pass)
    for (long round = 0; round < fma_rounds_per_pass / fma_lanes; ++round)
#pragma omp simd
      for (int j = 0; j < fma_lanes; ++j)
        acc[j] = acc[j] * scale + shift;
  double sum = 0;
  for (int j = 0; j < fma_lanes; ++j)
    sum += acc[j];
  return sum;
}

constexpr std::size_t triad_elements = (std::size_t(64) << 20) / sizeof(double);

/// One thread's triad arrays, allocated and first touched by that thread.
struct TriadArrays
{
  double *a = nullptr, *b = nullptr, *c = nullptr;
};

/// Seconds per unit of work when `threads` work items (one per thread) each run `work`
/// units at once: the slowest item's time.
template <class Work>
double secondsPerUnit(int threads, long units, Work const &work)
{
  Kokkos::View<double *, Space> seconds("kfmm::bench_threads::seconds", threads);
  // Each item's result, stored where the compiler cannot drop it, keeps its loop alive.
  Kokkos::View<double *, Space> sink("kfmm::bench_threads::sink", threads);
  Kokkos::parallel_for("kfmm::bench_threads::run",
                       Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Static>>(0, threads),
                       [=](int t) {
                         auto const start = Clock::now();
                         sink(t) = work(t, units);
                         seconds(t) = std::chrono::duration<double>(Clock::now() - start).count();
                       });
  Kokkos::fence();
  double slowest = 0;
  for (int t = 0; t < threads; ++t)
    slowest = seconds(t) > slowest ? seconds(t) : slowest;
  return slowest / units;
}

/// Units of `work` that take about `target` seconds on each of `threads` threads.
template <class Work>
long unitsFor(int threads, double target, Work const &work)
{
  double const per_unit = secondsPerUnit(threads, 2, work);
  long const units = static_cast<long>(target / per_unit);
  return units < 2 ? 2 : units;
}

void printLoop(char const *name, char const *unit, double per_thread, bool last)
{
  std::printf("  \"%s\": {\"unit\": \"%s\", \"per_thread\": %.4g}%s\n", name, unit, per_thread,
              last ? "" : ",");
}

} // namespace

int main(int argc, char *argv[])
{
  double target_seconds = 1.0;
  for (int i = 1; i < argc; ++i)
  {
    std::string const arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc)
      target_seconds = std::atof(argv[++i]);
    else if (arg == "--help")
    {
      std::printf("usage: OMP_NUM_THREADS=T kfmm_bench_host_threads [--seconds S]\n");
      return 0;
    }
  }
  Kokkos::ScopeGuard guard(argc, argv);
  int const threads = Space().concurrency();

  auto const fma = [](int t, long passes) { return fmaPasses(passes, 1.0 + t); };
  long const fma_units = unitsFor(threads, target_seconds, fma);
  double const fma_flops = 2.0 * fma_rounds_per_pass;
  double const fma_each = fma_flops / secondsPerUnit(threads, fma_units, fma) * 1e-9;

  std::vector<TriadArrays> arrays(threads);
  TriadArrays *const mine_all = arrays.data();
  Kokkos::parallel_for("kfmm::bench_threads::first_touch",
                       Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Static>>(0, threads),
                       [=](int t) {
                         TriadArrays &mine = mine_all[t];
                         std::size_t const bytes = triad_elements * sizeof(double);
                         mine.a = static_cast<double *>(std::aligned_alloc(64, bytes));
                         mine.b = static_cast<double *>(std::aligned_alloc(64, bytes));
                         mine.c = static_cast<double *>(std::aligned_alloc(64, bytes));
                         for (std::size_t i = 0; i < triad_elements; ++i)
                         {
                           mine.a[i] = 0;
                           mine.b[i] = 1.0 + t;
                           mine.c[i] = 2.0;
                         }
                       });
  Kokkos::fence();
  auto const triad = [=](int t, long passes) {
    double *const a = mine_all[t].a;
    double const *const b = mine_all[t].b;
    double const *const c = mine_all[t].c;
    for (long pass = 0; pass < passes; ++pass)
#pragma omp simd
      for (std::size_t i = 0; i < triad_elements; ++i)
        a[i] = b[i] + 0.5 * c[i];
    return a[triad_elements / 2];
  };
  long const triad_units = unitsFor(threads, target_seconds, triad);
  double const triad_bytes = 3.0 * sizeof(double) * triad_elements;
  double const triad_each = triad_bytes / secondsPerUnit(threads, triad_units, triad) * 1e-9;

  std::printf("{\n  \"threads\": %d,\n", threads);
  printLoop("fma", "Gflop/s", fma_each, false);
  printLoop("triad", "GB/s", triad_each, true);
  std::printf("}\n");
  for (TriadArrays &mine : arrays)
  {
    std::free(mine.a);
    std::free(mine.b);
    std::free(mine.c);
  }
  return 0;
}
