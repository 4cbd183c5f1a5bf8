// SPDX-License-Identifier: BSD-3-Clause
// Sorting (Morton key, particle index) pairs of uniform particles: kfmm::tree::sortPairs
// against the baselines. On CUDA: CUB's DeviceRadixSort::SortPairs over the same bits
// [0, 63) and Kokkos::BinSort; on the host: std::sort and std::stable_sort of (key, index)
// pairs by key, and Kokkos::BinSort. One line per (space, method, N): the median of
// `repeat` timed runs after one warm-up, each fenced and each on the unsorted input (the
// input is restored outside the timed region), with pairs/s and the ratio of the time to
// the baseline (CUB on the GPU, std::sort on the host). Ours runs twice: as
// kfmm::tree::sortPairs, which allocates its workspace in every call, and as a
// kfmm::tree::RadixSorter that keeps it (as CUB's temporary storage is allocated once,
// outside its timing). With --kernels, one more run of the RadixSorter prints the time of
// each of its kernels (fenced one by one: KernelTimes.hpp).
//
//   kfmm_bench_sort [--n N[,N...]] [--repeat R] [--host-max N] [--kernels]
//
// Host sizes above --host-max (default 1e7) are skipped: std::sort of 1e8 pairs on a few
// cores takes tens of seconds.
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include "BenchmarkSupport.hpp"
#include "KernelTimes.hpp"
#include <Kokkos_Sort.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cub/device/device_radix_sort.cuh>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace
{

constexpr int key_bits = 3 * kfmm::tree::max_level;

template <class Memory>
struct Pairs
{
  Kokkos::View<std::uint64_t *, Memory> keys;
  Kokkos::View<std::uint32_t *, Memory> values;
};

/// Morton keys of n uniform particles (63 bits) and the indices 0..n-1.
template <class ExecutionSpace>
Pairs<typename ExecutionSpace::memory_space> makeInput(std::size_t n)
{
  using Memory = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  Kokkos::View<double *[3], Memory> x(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::bench::positions"), n);
  Kokkos::View<double *, Memory> q(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::bench::charges"), n);
  kfmm::generate(space, kfmm::Distribution::uniform, 1, x, q);
  Pairs<Memory> input{
      Kokkos::View<std::uint64_t *, Memory>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::bench::keys_input"), n),
      Kokkos::View<std::uint32_t *, Memory>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::bench::values_input"), n)};
  auto const cube = kfmm::tree::boundingCube(space, x);
  kfmm::tree::computeMortonKeys(space, cube, x, input.keys);
  auto const values = input.values;
  Kokkos::parallel_for(
      "kfmm::bench::iota", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t i) { values(i) = static_cast<std::uint32_t>(i); });
  space.fence();
  return input;
}

/// Number of i with keys(i - 1) > keys(i): 0 for a sorted View.
template <class ExecutionSpace, class Keys>
std::size_t descents(ExecutionSpace const &space, Keys const &keys)
{
  std::size_t count = 0;
  Kokkos::parallel_reduce(
      "kfmm::bench::descents", Kokkos::RangePolicy<ExecutionSpace>(space, 1, keys.extent(0)),
      KOKKOS_LAMBDA(std::size_t i, std::size_t & c) { c += keys(i - 1) > keys(i) ? 1 : 0; }, count);
  return count;
}

void report(char const *space, char const *method, std::size_t n, double seconds, double baseline,
            char const *baseline_name, bool sorted)
{
  std::printf("%-8s %-17s N=%-10zu median %.4e s  %.3e pairs/s  %.2fx %s%s\n", space, method, n,
              seconds, static_cast<double>(n) / seconds, seconds / baseline, baseline_name,
              sorted ? "" : "  NOT SORTED");
  std::fflush(stdout);
}

/// Kokkos::BinSort set up as Kokkos::sort does: n / 2 bins over [min, max] of the keys,
/// sorted within bins, then the permutation applied to keys and values.
template <class ExecutionSpace, class Keys, class Values>
void binSort(ExecutionSpace const &space, Keys const &keys, Values const &values)
{
  using Range = Kokkos::MinMaxScalar<std::uint64_t>;
  Range range;
  std::size_t const n = keys.extent(0);
  Kokkos::parallel_reduce(
      "kfmm::bench::key_range", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t i, Range & r) {
        if (keys(i) < r.min_val)
          r.min_val = keys(i);
        if (keys(i) > r.max_val)
          r.max_val = keys(i);
      },
      Kokkos::MinMax<std::uint64_t>(range));
  using BinOp = Kokkos::BinOp1D<Keys>;
  Kokkos::BinSort<Keys, BinOp> sorter(
      keys, BinOp(static_cast<int>(n / 2), range.min_val, range.max_val), true);
  sorter.create_permute_vector();
  sorter.sort(keys);
  sorter.sort(values);
}

/// kfmm::tree::sortPairs, kfmm::tree::RadixSorter and Kokkos::BinSort on `ExecutionSpace`:
/// one line each, and with `kernels` the RadixSorter's time per kernel.
template <class ExecutionSpace>
void runKokkosMethods(Pairs<typename ExecutionSpace::memory_space> const &input,
                      Pairs<typename ExecutionSpace::memory_space> const &work, int repeat,
                      double baseline, char const *baseline_name, bool kernels)
{
  using Memory = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  std::size_t const n = input.keys.extent(0);
  auto const reset = [&] {
    Kokkos::deep_copy(space, work.keys, input.keys);
    Kokkos::deep_copy(space, work.values, input.values);
  };
  auto const fence = [&] { space.fence(); };

  double const ours = kfmm::bench::medianSeconds(
      repeat, reset, [&] { kfmm::tree::sortPairs(space, work.keys, work.values, key_bits); },
      fence);
  report(ExecutionSpace::name(), "kfmm::sortPairs", n, ours, baseline, baseline_name,
         descents(space, work.keys) == 0);

  kfmm::tree::RadixSorter<std::uint64_t, std::uint32_t, Memory> sorter;
  auto const sort = [&] { sorter.sort(space, work.keys, work.values, key_bits); };
  double const reused = kfmm::bench::medianSeconds(repeat, reset, sort, fence);
  report(ExecutionSpace::name(), "kfmm::RadixSorter", n, reused, baseline, baseline_name,
         descents(space, work.keys) == 0);
  if (kernels)
  {
    reset();
    fence();
    kfmm::bench::KernelTimes times;
    sort();
    fence();
    for (auto const &entry : times.entries())
      std::printf("  kernel %-34s %4d launches  %.4e s\n", entry.label.c_str(), entry.launches,
                  entry.seconds);
  }

  double const binsort = kfmm::bench::medianSeconds(
      repeat, reset, [&] { binSort(space, work.keys, work.values); }, fence);
  report(ExecutionSpace::name(), "Kokkos::BinSort", n, binsort, baseline, baseline_name,
         descents(space, work.keys) == 0);
}

#if defined(KOKKOS_ENABLE_CUDA)
void runCuda(std::size_t n, int repeat, bool kernels)
{
  using Memory = Kokkos::CudaSpace;
  Kokkos::Cuda space;
  auto const input = makeInput<Kokkos::Cuda>(n);
  Pairs<Memory> work{
      Kokkos::View<std::uint64_t *, Memory>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::bench::keys"), n),
      Kokkos::View<std::uint32_t *, Memory>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::bench::values"), n)};

  // CUB sorts from input arrays to output arrays with temporary storage sized by a first
  // call; allocated once, outside the timing.
  std::size_t temp_bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, input.keys.data(), work.keys.data(),
                                  input.values.data(), work.values.data(), static_cast<int>(n), 0,
                                  key_bits, space.cuda_stream());
  Kokkos::View<char *, Memory> temp(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::bench::cub_temp"), temp_bytes);
  auto const fence = [&] { space.fence(); };
  double const cub_seconds = kfmm::bench::medianSeconds(
      repeat, [] {},
      [&] {
        std::size_t bytes = temp_bytes;
        cub::DeviceRadixSort::SortPairs(temp.data(), bytes, input.keys.data(), work.keys.data(),
                                        input.values.data(), work.values.data(),
                                        static_cast<int>(n), 0, key_bits, space.cuda_stream());
      },
      fence);
  report("Cuda", "cub::SortPairs", n, cub_seconds, cub_seconds, "cub",
         descents(space, work.keys) == 0);
  runKokkosMethods<Kokkos::Cuda>(input, work, repeat, cub_seconds, "cub", kernels);
}
#endif

template <class ExecutionSpace>
void runHost(std::size_t n, int repeat, bool kernels)
{
  using Memory = typename ExecutionSpace::memory_space;
  auto const input = makeInput<ExecutionSpace>(n);
  Pairs<Memory> work{
      Kokkos::View<std::uint64_t *, Memory>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::bench::keys"), n),
      Kokkos::View<std::uint32_t *, Memory>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::bench::values"), n)};

  std::vector<std::pair<std::uint64_t, std::uint32_t>> pairs(n);
  auto const reset = [&] {
    for (std::size_t i = 0; i < n; ++i)
      pairs[i] = {input.keys(i), input.values(i)};
  };
  auto const by_key = [](auto const &a, auto const &b) { return a.first < b.first; };
  auto const is_sorted = [&] { return std::is_sorted(pairs.begin(), pairs.end(), by_key); };
  auto const no_fence = [] {};
  double const std_sort = kfmm::bench::medianSeconds(
      repeat, reset, [&] { std::sort(pairs.begin(), pairs.end(), by_key); }, no_fence);
  report(ExecutionSpace::name(), "std::sort", n, std_sort, std_sort, "std::sort", is_sorted());
  double const std_stable = kfmm::bench::medianSeconds(
      repeat, reset, [&] { std::stable_sort(pairs.begin(), pairs.end(), by_key); }, no_fence);
  report(ExecutionSpace::name(), "std::stable_sort", n, std_stable, std_sort, "std::sort",
         is_sorted());
  runKokkosMethods<ExecutionSpace>(input, work, repeat, std_sort, "std::sort", kernels);
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  std::string sizes = "1e6,1e7,1e8";
  std::size_t host_max = 10000000;
  int repeat = 5;
  bool kernels = false;
  for (int i = 1; i < argc; ++i)
  {
    std::string const arg = argv[i];
    if (arg == "--n" && i + 1 < argc)
      sizes = argv[++i];
    else if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--host-max" && i + 1 < argc)
      host_max = static_cast<std::size_t>(std::stod(argv[++i]));
    else if (arg == "--kernels")
      kernels = true;
    else
    {
      std::fprintf(stderr, "usage: %s [--n N[,N...]] [--repeat R] [--host-max N] [--kernels]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("# sorting (63-bit Morton key, uint32 index) pairs of uniform particles\n");
#if defined(KOKKOS_ENABLE_CUDA)
  for (auto n : kfmm::bench::parseSizes(sizes))
    runCuda(n, repeat, kernels);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  std::printf("# OpenMP threads: %d\n", Kokkos::OpenMP().concurrency());
  for (auto n : kfmm::bench::parseSizes(sizes))
  {
    if (n > host_max)
    {
      std::printf("# OpenMP N=%zu skipped (above --host-max %zu)\n", n, host_max);
      continue;
    }
    runHost<Kokkos::OpenMP>(n, repeat, kernels);
  }
#endif
  return 0;
}
