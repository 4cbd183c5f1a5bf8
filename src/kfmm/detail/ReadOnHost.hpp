// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_READ_ON_HOST_HPP
#define KFMM_DETAIL_READ_ON_HOST_HPP

// One value of a device array read by the host in the order of an execution space
// instance: after the kernels queued on it before the read.
//
// Why: Kokkos 3.4's deep_copy(value, view) copies with no instance, which on CUDA is a
// cudaMemcpy on the legacy default stream. That waits for the kernels of blocking streams,
// but not for those of a caller's stream created non-blocking, whose kernel may not yet have
// written the value.

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// The value of the rank-0 View `value` once the kernels queued on `space` are done.
template <class ExecutionSpace, class View>
typename View::non_const_value_type readOnHost(ExecutionSpace const &space, View const &value)
{
  static_assert(View::rank == 0, "kfmm::detail::readOnHost reads a rank-0 View");
  typename View::non_const_value_type result{};
  Kokkos::deep_copy(space, result, value);
  space.fence();
  return result;
}

} // namespace kfmm::detail

#endif
