// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_MATH_HPP
#define KFMM_DETAIL_MATH_HPP

// Math functions usable in kernels on every backend and every Kokkos from 3.4 on: Kokkos
// 3.4 keeps them in Kokkos::Experimental, Kokkos 4 moved them to Kokkos and later removed
// the Experimental names.

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>

namespace kfmm::detail
{

#if KOKKOS_VERSION >= 30700
using Kokkos::abs;
using Kokkos::cos;
using Kokkos::erfc;
using Kokkos::exp;
using Kokkos::floor;
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
using Kokkos::Experimental::erfc;
using Kokkos::Experimental::exp;
using Kokkos::Experimental::floor;
using Kokkos::Experimental::isfinite;
using Kokkos::Experimental::pow;
using Kokkos::Experimental::sin;
using Kokkos::Experimental::sqrt;
#endif

/// pi in double, for host and device code.
inline constexpr double pi = 3.14159265358979323846;

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

/// Division of non-negative ints by a divisor fixed before a loop, as a multiply and a shift
/// (Granlund & Montgomery 1994, division by invariant integers): with m = ceil(2^32 / d),
/// floor(x / d) = (x m) >> 32 whenever x d < 2^32. Team loops that flatten (column,
/// component) pairs divide every index by the component count; an integer division costs
/// tens of cycles on CPUs and is a multi-instruction sequence on GPUs.
class SmallDivisor
{
public:
  KOKKOS_INLINE_FUNCTION explicit SmallDivisor(int divisor)
      : _multiplier(((std::uint64_t(1) << 32) + static_cast<std::uint64_t>(divisor) - 1) /
                    static_cast<std::uint64_t>(divisor))
  {
  }

  /// floor(x / divisor) for 0 <= x with x * divisor < 2^32.
  KOKKOS_INLINE_FUNCTION int quotient(int x) const
  {
    return static_cast<int>((static_cast<std::uint64_t>(x) * _multiplier) >> 32);
  }

private:
  std::uint64_t _multiplier;
};

/// 1/sqrt(x): the hardware reciprocal square root on CUDA devices, 1/sqrt elsewhere.
/// In float on CUDA it is the bare instruction, which flushes a subnormal x to 0 (infinite
/// result): rsqrtf adds a rescaling of subnormal arguments, a sizeable share of the near
/// field's instructions per pair (docs/TUNING.md, "The near field"). The near field's
/// arguments are squared distances in units; a subnormal one, below 1.2e-38, is a pair
/// whose field, 1/r^2 > 8e37, is at the edge of float's range already, and its infinite
/// result is reported by the solver's check of its results.
KOKKOS_INLINE_FUNCTION float rsqrt(float x)
{
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
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
