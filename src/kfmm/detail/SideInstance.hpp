// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_SIDE_INSTANCE_HPP
#define KFMM_DETAIL_SIDE_INSTANCE_HPP

// A second instance of the execution space beside the caller's, on which one chain of an
// evaluation's kernels runs while the caller's instance runs another: the far field's
// translations beside the near field (Fmm::evaluate), and kfmm::evaluate's upward pass beside
// its build of the interaction lists (solver::upwardAtBuild). The far field is independent of the
// near field until its last stage adds into the results the near field writes. Seed 001 (section 3)
// computes the two fields of a GPU treecode in separate kernels; running them at once lets
// the near field's blocks fill the multiprocessors that the far field's short, narrow
// kernels (a level of M2M or L2L, the tail of M2L) leave idle.
//
// Here, the portable default: a space whose instances do not run kernels at once (the host
// spaces) gets the caller's instance itself, in whose order everything already runs, and
// the orderings are nothing. Backends that do run them at once specialise it
// (backends/<name>/include/kfmm/backend/).

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

template <class ExecutionSpace>
class SideInstance
{
public:
  /// The side instance of `caller`; with `enabled` false (or where the backend has none) it
  /// is `caller` itself.
  SideInstance(ExecutionSpace const &caller, bool /*enabled*/) : _caller(caller) {}

  ExecutionSpace const &space() const { return _caller; }

  /// Whether space() runs kernels at the same time as the caller's instance.
  bool concurrent() const { return false; }

  /// Kernels queued on space() from now on run after those queued on the caller's so far.
  void follow() const {}

  /// Kernels queued on the caller's instance from now on run after those queued on space()
  /// so far.
  void join() const {}

private:
  ExecutionSpace _caller;
};

} // namespace kfmm::detail

#if defined(KOKKOS_ENABLE_CUDA)
#include <kfmm/backend/CudaSideInstance.hpp>
#endif

#endif
