// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_HOST_READS_HPP
#define KFMM_TESTS_HOST_READS_HPP

// Copies into host memory, counted through Kokkos Tools' deep-copy callback, for the tests
// that bound how often a build waits for the device: a copy from device memory makes the
// host wait for it.

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace kfmm::test
{

/// While alive, counts the copies into host memory: those from another memory space, and
/// those whose source View is labelled `label`. The callback is global: one at a time, and
/// the caller fences before it reads the counts.
class HostReads
{
public:
  explicit HostReads(std::string label = {})
  {
    state() = State{std::move(label), 0, 0};
    Kokkos::Tools::Experimental::set_begin_deep_copy_callback(&count);
  }
  ~HostReads() { Kokkos::Tools::Experimental::set_begin_deep_copy_callback(nullptr); }
  HostReads(HostReads const &) = delete;
  HostReads &operator=(HostReads const &) = delete;

  /// Copies from another memory space so far.
  int fromDevice() const { return state().from_device; }
  /// Copies of Views labelled `label` so far.
  int ofLabel() const { return state().of_label; }

private:
  struct State
  {
    std::string label;
    int from_device = 0;
    int of_label = 0;
  };

  static State &state()
  {
    static State counted;
    return counted;
  }

  static void count(Kokkos::Tools::SpaceHandle destination, char const *, void const *,
                    Kokkos::Tools::SpaceHandle source, char const *source_label, void const *,
                    std::uint64_t)
  {
    std::string const host = Kokkos::HostSpace::name();
    if (destination.name != host)
      return;
    state().from_device += source.name != host ? 1 : 0;
    state().of_label += state().label == source_label ? 1 : 0;
  }
};

} // namespace kfmm::test

#endif
