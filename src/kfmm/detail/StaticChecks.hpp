// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_STATIC_CHECKS_HPP
#define KFMM_DETAIL_STATIC_CHECKS_HPP

// Compile-time checks of the Views given to a public entry point, in the caller's terms.
//
// Each entry point states its checks as static_asserts at the top of its own body, with
// messages that name the entry point and the argument ("kfmm::evaluate: argument 'positions'
// must be a rank-2 Kokkos::View (N x 3)"), and runs the rest of its body only when they all
// hold (`if constexpr`). The static_asserts are then the first errors the compiler reports,
// and the only ones: nothing that would fail to instantiate with the wrong View is reached.
// The traits below are written so that they are themselves well-formed for any type.

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace kfmm::detail
{

/// Whether `View` is a Kokkos::View of rank `Rank`.
template <class View, int Rank>
constexpr bool isViewOfRank()
{
  if constexpr (Kokkos::is_view<View>::value)
    return static_cast<int>(View::rank) == Rank;
  else
    return false;
}

/// Whether kernels of `ExecutionSpace` can read and write the memory of `View`: its own memory
/// space, or any other that Kokkos::SpaceAccessibility says it reaches (CudaUVMSpace and
/// CudaHostPinnedSpace from Cuda, SharedSpace where Kokkos has it, AnonymousSpace). True for
/// what is not a View or not an execution space, which other checks refuse.
template <class ExecutionSpace, class View>
constexpr bool isAccessibleFrom()
{
  if constexpr (Kokkos::is_view<View>::value && Kokkos::is_execution_space<ExecutionSpace>::value)
    return Kokkos::SpaceAccessibility<ExecutionSpace, typename View::memory_space>::accessible;
  else
    return true;
}

/// Whether `View` is a View of non-const float or double: a result the solver writes in its
/// own precision.
template <class View>
constexpr bool holdsWritableReal()
{
  if constexpr (Kokkos::is_view<View>::value)
    return std::is_same<typename View::value_type, float>::value ||
           std::is_same<typename View::value_type, double>::value;
  else
    return false;
}

/// Both checks of KFMM_STATIC_REQUIRE_VIEW: what an entry point's body needs to instantiate.
template <class ExecutionSpace, class View, int Rank>
constexpr bool viewFits()
{
  return isViewOfRank<View, Rank>() && isAccessibleFrom<ExecutionSpace, View>();
}

} // namespace kfmm::detail

/// static_asserts that the argument NAME of entry point ENTRY (both string literals), of type
/// VIEW, is a Kokkos::View of rank RANK (SHAPE, a string literal such as "N x 3", says what
/// it holds) that kernels of SPACE can access. A macro because a static_assert message must
/// be one string literal, and the entry point's and argument's names are part of it.
#define KFMM_STATIC_REQUIRE_VIEW(ENTRY, NAME, VIEW, RANK, SHAPE, SPACE)                            \
  static_assert(::kfmm::detail::isViewOfRank<VIEW, RANK>(),                                        \
                ENTRY ": argument '" NAME "' must be a rank-" #RANK " Kokkos::View (" SHAPE ")");  \
  static_assert(::kfmm::detail::isAccessibleFrom<SPACE, VIEW>(),                                   \
                ENTRY ": argument '" NAME "' must be in a memory space that the execution "        \
                      "space can access (Kokkos::SpaceAccessibility), e.g. its memory_space")

#endif
