// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_ALLOCATIONS_HPP
#define KFMM_TESTS_ALLOCATIONS_HPP

// Allocations of Kokkos memory, counted through Kokkos Tools' allocation callback, for the
// tests that require a repeated call to allocate nothing (on CUDA each allocation is a
// cudaMalloc, and its release a cudaFree that waits for the whole device).

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace kfmm::test
{

/// While alive, counts the allocations in any memory space and keeps the label of the last.
/// The callback is global: one at a time.
class Allocations
{
public:
  Allocations()
  {
    state() = State{};
    Kokkos::Tools::Experimental::set_allocate_data_callback(&count);
  }
  ~Allocations() { Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr); }
  Allocations(Allocations const &) = delete;
  Allocations &operator=(Allocations const &) = delete;

  /// Allocations so far.
  int count() const { return state().count; }
  /// The label of the last allocation ("" when none).
  std::string const &lastLabel() const { return state().last_label; }

private:
  struct State
  {
    int count = 0;
    std::string last_label;
  };

  static State &state()
  {
    static State counted;
    return counted;
  }

  static void count(Kokkos::Tools::SpaceHandle, char const *label, void const *, std::uint64_t)
  {
    ++state().count;
    state().last_label = label;
  }
};

} // namespace kfmm::test

#endif
