// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_PERF_BENCHMARK_SUPPORT_HPP
#define KFMM_PERF_BENCHMARK_SUPPORT_HPP

// What the benchmarks share: list arguments and the median of timed runs.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace kfmm::bench
{

/// "a,b,c" parsed item by item with `parse`.
template <class T, class Parse>
std::vector<T> parseList(std::string const &list, Parse const &parse)
{
  std::vector<T> items;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ','))
    items.push_back(parse(item));
  return items;
}

/// "1e6,1048576" -> sizes (scientific notation allowed).
inline std::vector<std::size_t> parseSizes(std::string const &list)
{
  return parseList<std::size_t>(
      list, [](std::string const &s) { return static_cast<std::size_t>(std::stod(s)); });
}

/// The median of a list of timings.
inline double median(std::vector<double> seconds)
{
  std::sort(seconds.begin(), seconds.end());
  return seconds.empty() ? 0.0 : seconds[seconds.size() / 2];
}

/// Median seconds of `repeat` runs of `work` after one warm-up run; `reset` restores the
/// input before each run, untimed; `fence` waits for the device before and after.
inline double medianSeconds(int repeat, std::function<void()> const &reset,
                            std::function<void()> const &work, std::function<void()> const &fence)
{
  std::vector<double> seconds;
  for (int r = 0; r <= repeat; ++r)
  {
    reset();
    fence();
    Kokkos::Timer timer;
    work();
    fence();
    if (r > 0)
      seconds.push_back(timer.seconds());
  }
  return median(seconds);
}

} // namespace kfmm::bench

#endif
