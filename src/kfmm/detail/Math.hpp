// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_MATH_HPP
#define KFMM_DETAIL_MATH_HPP

// Math functions usable in kernels on every backend and every Kokkos from 3.4 on: Kokkos
// 3.4 keeps them in Kokkos::Experimental, Kokkos 4 moved them to Kokkos and later removed
// the Experimental names.

#include <Kokkos_Core.hpp>

#include <cmath>

namespace kfmm::detail
{

#if KOKKOS_VERSION >= 30700
using Kokkos::abs;
using Kokkos::cos;
using Kokkos::isfinite;
using Kokkos::pow;
using Kokkos::sin;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
template <class T>
KOKKOS_INLINE_FUNCTION T abs(T x)
{
  return fabs(x);
}
using Kokkos::Experimental::cos;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
#endif

// Kokkos 3.4 has no min/max usable in kernels.
template <class T>
KOKKOS_INLINE_FUNCTION constexpr T min(T a, T b)
{
  return b < a ? b : a;
}

template <class T>
KOKKOS_INLINE_FUNCTION constexpr T max(T a, T b)
{
  return a < b ? b : a;
}

/// 1/sqrt(x): the hardware reciprocal square root on CUDA devices, 1/sqrt elsewhere.
KOKKOS_INLINE_FUNCTION float rsqrt(float x)
{
#if defined(__CUDA_ARCH__)
  return ::rsqrtf(x);
#else
  return 1.0f / std::sqrt(x);
#endif
}

KOKKOS_INLINE_FUNCTION double rsqrt(double x)
{
#if defined(__CUDA_ARCH__)
  return ::rsqrt(x);
#else
  return 1.0 / std::sqrt(x);
#endif
}

} // namespace kfmm::detail

#endif
