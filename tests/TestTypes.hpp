// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_TEST_TYPES_HPP
#define KFMM_TESTS_TEST_TYPES_HPP

// The (execution space, precision) pairs every templated test runs over: each execution
// space this Kokkos was built with, in float and in double.

#include <Kokkos_Core.hpp>

#include <tuple>
#include <type_traits>

namespace kfmm::test
{

/// Whether a configuration's precision is float.
template <class Real>
constexpr bool isFloat = std::is_same<Real, float>::value;

template <class ExecutionSpace, class Real>
struct Config
{
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  using real_type = Real;
};

template <class... Spaces>
using BothPrecisions =
    decltype(std::tuple_cat(std::tuple<Config<Spaces, float>, Config<Spaces, double>>{}...));

using Configs = BothPrecisions<
#if defined(KOKKOS_ENABLE_SERIAL)
    Kokkos::Serial
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#if defined(KOKKOS_ENABLE_SERIAL)
    ,
#endif
    Kokkos::OpenMP
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    ,
    Kokkos::Cuda
#endif
    >;

/// One config per execution space, for tests where the precision does not matter.
using Spaces = std::tuple<
#if defined(KOKKOS_ENABLE_SERIAL)
    Config<Kokkos::Serial, double>
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
#if defined(KOKKOS_ENABLE_SERIAL)
    ,
#endif
    Config<Kokkos::OpenMP, double>
#endif
#if defined(KOKKOS_ENABLE_CUDA)
    ,
    Config<Kokkos::Cuda, double>
#endif
    >;

} // namespace kfmm::test

#endif
