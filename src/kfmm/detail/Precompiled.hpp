// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_PRECOMPILED_HPP
#define KFMM_DETAIL_PRECOMPILED_HPP

// kfmm::evaluate compiled once, in the kfmm::precompiled library, for the common cases.
//
// Compiling the whole solver for one (execution space, precision) pair takes many seconds at
// -O3 (docs/BUILDING.md, "Compile time"), nearly all of it in optimising and generating the
// code of its kernels. kfmm::evaluate does its work in detail::evaluateOnce (at targets
// that are not the sources, in detail::evaluateAtTargets), which the library instantiates for each
// enabled execution space of Serial, OpenMP and Cuda, in float and in double, on the Views of
// PrecompiledViews (the execution space's memory space and default layout: what Kokkos::View<float
// *[3], Space::memory_space> is). A program linked with kfmm::precompiled gets KFMM_PRECOMPILED
// defined, and with it the explicit instantiation declarations below: its calls with such Views use
// the library's code and compile in seconds. Calls with other Views (another layout or memory
// space, mixed precisions) instantiate the solver in the caller's translation unit, as without the
// library; without KFMM_PRECOMPILED everything is header-only.

#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>
#include <utility>

namespace kfmm::detail
{

/// kfmm::evaluate's work on Views whose types it checked (defined in kfmm/Fmm.hpp).
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Stats evaluateOnce(ExecutionSpace const &space, Positions const &positions, Charges const &charges,
                   Potential const &potential, Field const &field, Options const &options);

/// kfmm::evaluate's work at targets, on Views whose types it checked (defined in kfmm/Fmm.hpp).
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field>
Stats evaluateAtTargets(ExecutionSpace const &space, Sources const &sources, Charges const &charges,
                        Targets const &targets, Potential const &potential, Field const &field,
                        Options const &options);

/// The View types of kfmm::precompiled's instances for `ExecutionSpace` in `Real`.
template <class ExecutionSpace, class Real>
struct PrecompiledViews
{
  using Memory = typename ExecutionSpace::memory_space;
  using Positions = Kokkos::View<Real const *[3], Memory>;
  using Charges = Kokkos::View<Real const *, Memory>;
  using Potential = Kokkos::View<Real *, Memory>;
  using Field = Kokkos::View<Real *[3], Memory>;
};

/// `view` as the View type `Precompiled` when it differs from it at most in the constness of
/// its values and in its memory traits (a handle to the same data: nothing is copied), and
/// `view` itself otherwise.
template <class Precompiled, class View>
auto precompiledForm(View const &view)
{
  if constexpr (std::is_same<typename View::non_const_data_type,
                             typename Precompiled::non_const_data_type>::value &&
                std::is_same<typename View::array_layout,
                             typename Precompiled::array_layout>::value &&
                std::is_same<typename View::memory_space,
                             typename Precompiled::memory_space>::value)
    return Precompiled(view);
  else
    return view;
}

/// Whether kfmm::precompiled holds instances for ExecutionSpace (the list at the end of this
/// file).
template <class ExecutionSpace>
constexpr bool precompiledSpace()
{
  return false
#if defined(KOKKOS_ENABLE_SERIAL)
         || std::is_same<ExecutionSpace, Kokkos::Serial>::value
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
         || std::is_same<ExecutionSpace, Kokkos::OpenMP>::value
#endif
#if defined(KOKKOS_ENABLE_CUDA)
         || std::is_same<ExecutionSpace, Kokkos::Cuda>::value
#endif
      ;
}

/// Whether `View`, as precompiledForm passes it on, is the library's type `Precompiled`.
template <class Precompiled, class View>
constexpr bool precompiledType()
{
  return std::is_same<decltype(precompiledForm<Precompiled>(std::declval<View const &>())),
                      Precompiled>::value;
}

/// Names itself in a compiler warning, through [[deprecated]], the one portable way to warn
/// from a template instantiation: the warning's trace leads to the call of kfmm::evaluate
/// that compiles the solver in the caller's file although kfmm::precompiled is linked (tens
/// of seconds instead of a few). KFMM_NO_HEADER_ONLY_WARNING silences it.
template <bool UsesLibrary>
struct SolverCompilation
{
  static constexpr void note() {}
};

#if defined(KFMM_PRECOMPILED) && !defined(KFMM_NO_HEADER_ONLY_WARNING)
template <>
struct SolverCompilation<false>
{
  [[deprecated("kfmm::evaluate: this call's Views are not those of kfmm::precompiled (the "
               "execution space's memory space and default layout, all of one precision; "
               "kfmm/detail/Precompiled.hpp), so it compiles the solver in this file; define "
               "KFMM_NO_HEADER_ONLY_WARNING to accept that")]] static constexpr void
  note()
  {
  }
};
#endif

/// SolverCompilation's note for a call of kfmm::evaluate in ExecutionSpace with these Views
/// (a call without targets: Targets is Positions).
template <class ExecutionSpace, class Real, class Positions, class Charges, class Potential,
          class Field, class Targets = Positions>
constexpr void noteSolverCompilation()
{
  using Views = PrecompiledViews<ExecutionSpace, Real>;
  SolverCompilation<precompiledSpace<ExecutionSpace>() &&
                    precompiledType<typename Views::Positions, Positions>() &&
                    precompiledType<typename Views::Charges, Charges>() &&
                    precompiledType<typename Views::Potential, Potential>() &&
                    precompiledType<typename Views::Field, Field>() &&
                    precompiledType<typename Views::Positions, Targets>()>::note();
}

} // namespace kfmm::detail

/// The signature of the instance of detail::evaluateOnce for execution space SPACE and
/// precision REAL, for the explicit instantiation declarations below and the definitions in
/// src/precompiled/.
#define KFMM_DETAIL_EVALUATE_ONCE(SPACE, REAL)                                                     \
  ::kfmm::Stats evaluateOnce(                                                                      \
      SPACE const &, ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Positions const &,             \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Charges const &,                              \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Potential const &,                            \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Field const &, ::kfmm::Options const &)

/// The same for detail::evaluateAtTargets (the targets are Positions too).
#define KFMM_DETAIL_EVALUATE_AT_TARGETS(SPACE, REAL)                                               \
  ::kfmm::Stats evaluateAtTargets(                                                                 \
      SPACE const &, ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Positions const &,             \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Charges const &,                              \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Positions const &,                            \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Potential const &,                            \
      ::kfmm::detail::PrecompiledViews<SPACE, REAL>::Field const &, ::kfmm::Options const &)

/// Both instances of one space and precision: PREFIX is `template` (the definitions in
/// src/precompiled/) or `extern template` (the declarations below).
#define KFMM_DETAIL_PRECOMPILED_INSTANCES(PREFIX, SPACE, REAL)                                     \
  PREFIX KFMM_DETAIL_EVALUATE_ONCE(SPACE, REAL);                                                   \
  PREFIX KFMM_DETAIL_EVALUATE_AT_TARGETS(SPACE, REAL)

#if defined(KFMM_PRECOMPILED)
namespace kfmm::detail
{
// The same list of spaces as src/precompiled/ (one source file each).
#if defined(KOKKOS_ENABLE_SERIAL)
KFMM_DETAIL_PRECOMPILED_INSTANCES(extern template, Kokkos::Serial, float);
KFMM_DETAIL_PRECOMPILED_INSTANCES(extern template, Kokkos::Serial, double);
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
KFMM_DETAIL_PRECOMPILED_INSTANCES(extern template, Kokkos::OpenMP, float);
KFMM_DETAIL_PRECOMPILED_INSTANCES(extern template, Kokkos::OpenMP, double);
#endif
#if defined(KOKKOS_ENABLE_CUDA)
KFMM_DETAIL_PRECOMPILED_INSTANCES(extern template, Kokkos::Cuda, float);
KFMM_DETAIL_PRECOMPILED_INSTANCES(extern template, Kokkos::Cuda, double);
#endif
} // namespace kfmm::detail
#endif

#endif
