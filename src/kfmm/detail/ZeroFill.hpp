// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_ZERO_FILL_HPP
#define KFMM_DETAIL_ZERO_FILL_HPP

// Zeroing the solver's arrays as one flat range of values. Kokkos 3.4's deep_copy of a
// scalar into a View of rank 2 runs an MDRangePolicy over its extents, which reaches a small
// fraction of the memory's bandwidth (docs/TUNING.md, "Passes over arrays"). The solver's
// arrays are contiguous, so their span is zeroed instead.

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Streaming.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace kfmm::detail
{

/// values[i] = 0.
template <class Value>
struct ZeroValues
{
  Value *values;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const { values[i] = Value{}; }
};

/// Every value of the contiguous `view` set to zero, in one kernel named `label`.
template <class ExecutionSpace, class View>
void zeroFill(ExecutionSpace const &space, std::string const &label, View const &view)
{
  if (!view.span_is_contiguous())
    throw Exception("kfmm internal error: " + label + " zeroes a View that is not contiguous");
  using Value = typename View::non_const_value_type;
  streamFor(label, space, view.span(), ZeroValues<Value>{view.data()});
}

} // namespace kfmm::detail

#endif
