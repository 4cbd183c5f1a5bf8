// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_PERF_KERNEL_TIMES_HPP
#define KFMM_PERF_KERNEL_TIMES_HPP

// Time per kernel label, for the breakdowns in perf/RESULTS.md: while a KernelTimes object
// lives, Kokkos Tools callbacks fence before and after every parallel_for, parallel_reduce
// and parallel_scan and add the time in between to the kernel's label. Fencing serialises
// the kernels, so the sum can exceed the time of an unfenced run; use it for shares, and
// medianSeconds for totals.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kfmm::bench
{

class KernelTimes
{
public:
  KernelTimes()
  {
    totals().clear();
    using namespace Kokkos::Tools::Experimental;
    set_begin_parallel_for_callback(begin);
    set_begin_parallel_reduce_callback(begin);
    set_begin_parallel_scan_callback(begin);
    set_end_parallel_for_callback(end);
    set_end_parallel_reduce_callback(end);
    set_end_parallel_scan_callback(end);
  }

  ~KernelTimes()
  {
    using namespace Kokkos::Tools::Experimental;
    set_begin_parallel_for_callback(nullptr);
    set_begin_parallel_reduce_callback(nullptr);
    set_begin_parallel_scan_callback(nullptr);
    set_end_parallel_for_callback(nullptr);
    set_end_parallel_reduce_callback(nullptr);
    set_end_parallel_scan_callback(nullptr);
  }

  KernelTimes(KernelTimes const &) = delete;
  KernelTimes &operator=(KernelTimes const &) = delete;

  /// (label, seconds summed over its launches, launches), in order of first launch.
  struct Entry
  {
    std::string label;
    double seconds;
    int launches;
  };
  std::vector<Entry> const &entries() const { return totals(); }

private:
  static std::vector<Entry> &totals()
  {
    static std::vector<Entry> entries;
    return entries;
  }
  static Kokkos::Timer &timer()
  {
    static Kokkos::Timer t;
    return t;
  }
  static std::string &current()
  {
    static std::string label;
    return label;
  }

  static void begin(char const *label, std::uint32_t, std::uint64_t *)
  {
    Kokkos::fence();
    current() = label;
    timer().reset();
  }

  static void end(std::uint64_t)
  {
    Kokkos::fence();
    double const seconds = timer().seconds();
    for (auto &entry : totals())
      if (entry.label == current())
      {
        entry.seconds += seconds;
        ++entry.launches;
        return;
      }
    totals().push_back({current(), seconds, 1});
  }
};

} // namespace kfmm::bench

#endif
