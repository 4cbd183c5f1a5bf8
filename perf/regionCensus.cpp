// SPDX-License-Identifier: BSD-3-Clause
// A Kokkos Tools library that shows where the host's time goes in a run of kfmm: per
// profiling region (nested regions are named by their path), the wall time spent inside it
// and the device allocations, releases, deep copies and kernel launches made in it but not
// in a region nested in it; then, per kernel name, the host time from its launch to the launch's
// return (on the host spaces its run time, on a GPU the launch's). Printed to standard error
// when Kokkos finalises.
//
//   KOKKOS_PROFILE_LIBRARY=build/<preset>/perf/libkfmm_region_census.so kfmm ...
//
// It asks Kokkos for no fences (kokkosp_request_tool_settings; without it Kokkos 3.4 fences
// at every kernel's and region's begin and end): a region's time is the host's, so it holds
// the waits of the synchronisations inside it and no others. On a GPU, allocations and
// releases synchronise in Kokkos 3.4, which is why they are counted.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace
{

using Clock = std::chrono::steady_clock;

struct RegionCensus
{
  double seconds = 0;
  long calls = 0;
  long allocations = 0;
  long releases = 0;
  long copies = 0;
  long kernels = 0;
};

struct KernelCensus
{
  double seconds = 0;
  long calls = 0;
};

std::vector<std::pair<std::string, Clock::time_point>> open_regions;
std::map<std::string, RegionCensus> census;
std::map<std::string, KernelCensus> kernel_census;
/// The kernels launched and not returned, by the id handed to Kokkos (nested launches
/// happen where a kernel's functor launches one on the host).
std::vector<std::pair<std::string, Clock::time_point>> open_kernels;

/// The innermost open region's path, "outer > inner"; "(outside regions)" when none is open.
std::string currentPath()
{
  std::string path;
  for (auto const &region : open_regions)
    path += (path.empty() ? "" : " > ") + region.first;
  return path.empty() ? "(outside regions)" : path;
}

RegionCensus &current() { return census[currentPath()]; }

void beginKernel(char const *name, std::uint64_t *id)
{
  *id = open_kernels.size();
  open_kernels.emplace_back(name, Clock::now());
  ++current().kernels;
}

void endKernel(std::uint64_t id)
{
  if (id >= open_kernels.size())
    return;
  KernelCensus &k = kernel_census[open_kernels[id].first];
  k.seconds += std::chrono::duration<double>(Clock::now() - open_kernels[id].second).count();
  ++k.calls;
  open_kernels.resize(id);
}

} // namespace

// The entry points Kokkos Tools looks up by name (Kokkos_Profiling_C_Interface.h).
extern "C"
{
  struct SpaceHandle
  {
    char name[64];
  };

  struct Kokkos_Tools_ToolSettings
  {
    bool requires_global_fencing;
    bool padding[255];
  };

  void kokkosp_init_library(int, std::uint64_t, std::uint32_t, void *) {}

  void kokkosp_request_tool_settings(std::uint32_t, Kokkos_Tools_ToolSettings *settings)
  {
    settings->requires_global_fencing = false;
  }

  void kokkosp_finalize_library()
  {
    std::fprintf(stderr, "%-100s %10s %6s %7s %8s %6s %7s\n", "region", "ms", "calls", "allocs",
                 "releases", "copies", "kernels");
    for (auto const &[path, c] : census)
      std::fprintf(stderr, "%-100s %10.3f %6ld %7ld %8ld %6ld %7ld\n", path.c_str(),
                   c.seconds * 1e3, c.calls, c.allocations, c.releases, c.copies, c.kernels);
    std::fprintf(stderr, "\n%-100s %10s %6s\n", "kernel", "ms", "calls");
    for (auto const &[name, k] : kernel_census)
      std::fprintf(stderr, "%-100s %10.3f %6ld\n", name.c_str(), k.seconds * 1e3, k.calls);
  }

  void kokkosp_push_profile_region(char const *name)
  {
    open_regions.emplace_back(name, Clock::now());
  }

  void kokkosp_pop_profile_region()
  {
    if (open_regions.empty())
      return;
    std::string const path = currentPath();
    auto const start = open_regions.back().second;
    open_regions.pop_back();
    RegionCensus &c = census[path];
    c.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    ++c.calls;
  }

  void kokkosp_allocate_data(SpaceHandle, char const *, void const *, std::uint64_t)
  {
    ++current().allocations;
  }

  void kokkosp_deallocate_data(SpaceHandle, char const *, void const *, std::uint64_t)
  {
    ++current().releases;
  }

  void kokkosp_begin_deep_copy(SpaceHandle, char const *, void const *, SpaceHandle, char const *,
                               void const *, std::uint64_t)
  {
    ++current().copies;
  }

  void kokkosp_end_deep_copy() {}

  void kokkosp_begin_parallel_for(char const *name, std::uint32_t, std::uint64_t *id)
  {
    beginKernel(name, id);
  }

  void kokkosp_end_parallel_for(std::uint64_t id) { endKernel(id); }

  void kokkosp_begin_parallel_scan(char const *name, std::uint32_t, std::uint64_t *id)
  {
    beginKernel(name, id);
  }

  void kokkosp_end_parallel_scan(std::uint64_t id) { endKernel(id); }

  void kokkosp_begin_parallel_reduce(char const *name, std::uint32_t, std::uint64_t *id)
  {
    beginKernel(name, id);
  }

  void kokkosp_end_parallel_reduce(std::uint64_t id) { endKernel(id); }
}
