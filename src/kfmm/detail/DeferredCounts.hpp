// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_DEFERRED_COUNTS_HPP
#define KFMM_DETAIL_DEFERRED_COUNTS_HPP

// Counts that the solver's kernels (reductions, or `record` of a count another kernel left
// in device memory) leave for the host to read later (Fmm::stats()), in memory the device
// writes and the host reads: page-locked host memory on CUDA (Tuning::staging_space), the
// host's own on host backends.
//
// Why: Kokkos returns a reduction's result into a host variable by waiting for the device,
// so each such count stopped the host from queueing the next kernels and left the GPU idle
// until it did (docs/TUNING.md, "Round trips to the host"). Reduced into a
// View the device can reach, the result is written by the kernel itself and the reduction
// queues like any other kernel; the host waits only when it reads the counts.

#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Workspace.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <memory>

namespace kfmm::detail
{

/// slot() = value(0): a count in device memory copied into a deferred count's slot (a
/// kernel's functor, so at namespace scope, where CUDA can name it).
template <class Slot, class Value>
struct RecordCount
{
  Slot slot;
  Value value;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    slot() = static_cast<typename Slot::non_const_value_type>(value(0));
  }
};

/// The counts of one solver, each a rank-0 View that a reduction or `record` writes (`slot`), read
/// together once wait() has seen the kernels that write them done.
template <class MemorySpace>
class DeferredCounts
{
public:
  using staging_space =
      typename tuning::Tuning<typename MemorySpace::execution_space>::staging_space;
  using Slot = Kokkos::View<std::size_t, staging_space>;

  enum Count : int
  {
    m2p_pairs,
    unresolved_sources,
    unresolved_targets,
    m2l_per_pair,
    num_counts
  };

  /// The counts, all zero, in a block of a pooled workspace of the staging space (so that a
  /// solver after the first allocates no page-locked memory, which costs a system call).
  DeferredCounts()
      : _memory(WorkspacePool<staging_space>::shared().lease()),
        _values(_memory->template take<Kokkos::View<std::size_t *, staging_space>>(
            Kokkos::DefaultHostExecutionSpace{}, "kfmm::deferred_counts", num_counts))
  {
    clear();
  }

  /// Where a reduction leaves count `c`. The host must not read or clear it before the
  /// reduction's kernel is done.
  Slot slot(Count c) const { return Slot(_values.data() + c); }

  /// Count `c` set, on `space`, to value(0) of a View the device holds: a count that a kernel
  /// left in device memory reaches the host with the others.
  template <class ExecutionSpace, class Value>
  void record(ExecutionSpace const &space, Count c, Value const &value) const
  {
    Kokkos::parallel_for("kfmm::deferred_counts::record",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                         RecordCount<Slot, Value>{slot(c), value});
  }

  /// Every count set to zero (by the host: no kernel that writes one may be in flight).
  void clear() const
  {
    for (int c = 0; c < num_counts; ++c)
      _values(c) = 0;
  }

  /// Waits for every kernel on every instance (the counts' kernels ran on the caller's, which
  /// the solver does not keep, or on its side instance): the counts are then final.
  void wait() const { Kokkos::fence(); }

  /// Count `c` as the last reduction into it left it; after wait().
  std::size_t operator[](Count c) const { return _values(c); }

private:
  std::shared_ptr<Workspace<staging_space>> _memory;
  Kokkos::View<std::size_t *, staging_space> _values;
};

} // namespace kfmm::detail

#endif
