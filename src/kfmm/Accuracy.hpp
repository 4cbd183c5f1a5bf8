// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_ACCURACY_HPP
#define KFMM_ACCURACY_HPP

// The accuracy measure of Fortin & Lamotte 2013 and Gumerov & Duraiswami 2008, the
// relative L2 error
//   sqrt( sum_i |approx_i - exact_i|^2 / sum_i |exact_i|^2 )
// of a potential (rank 1) or a field (rank 2, summed over components). Host Views.

#include <kfmm/Exception.hpp>

#include <cmath>
#include <cstddef>

namespace kfmm
{

namespace detail
{

/// Element (i, c) of a potential (rank 1, c = 0) or a field (rank 2) as a double.
template <class View>
double elementOf(View const &v, std::size_t i, std::size_t c)
{
  if constexpr (View::rank == 1)
    return static_cast<double>(v(i));
  else
    return static_cast<double>(v(i, c));
}

} // namespace detail

/// The relative L2 error of `approx` against `exact` (the file comment). The sums are taken
/// of values divided by a power of two near the largest magnitude of either, so that they
/// neither overflow nor underflow anywhere in double's range (values of 1e200 or 1e-200
/// give the error of values of 1); the result does not depend on that scale. A NaN or
/// infinite value gives NaN or infinity.
template <class Approx, class Exact>
double relativeL2Error(Approx const &approx, Exact const &exact)
{
  static_assert(int(Approx::rank) == int(Exact::rank), "kfmm::relativeL2Error: ranks differ");
  if (approx.extent(0) != exact.extent(0) || approx.extent(1) != exact.extent(1))
    throw Exception("kfmm::relativeL2Error: 'approx' and 'exact' differ in extent");
  std::size_t const n = exact.extent(0), m = exact.extent(1);
  double largest = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < m; ++c)
      largest = std::fmax(largest, std::fmax(std::fabs(detail::elementOf(approx, i, c)),
                                             std::fabs(detail::elementOf(exact, i, c))));
  int exponent = 0;
  if (largest > 0 && std::isfinite(largest))
    std::frexp(largest, &exponent);
  double diff2 = 0, norm2 = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < m; ++c)
    {
      double const a = std::ldexp(detail::elementOf(approx, i, c), -exponent);
      double const e = std::ldexp(detail::elementOf(exact, i, c), -exponent);
      diff2 += (a - e) * (a - e);
      norm2 += e * e;
    }
  if (norm2 == 0)
    return diff2 == 0 ? 0.0 : INFINITY;
  return std::sqrt(diff2 / norm2);
}

} // namespace kfmm

#endif
