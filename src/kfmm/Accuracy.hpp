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

template <class Approx, class Exact>
double relativeL2Error(Approx const &approx, Exact const &exact)
{
  static_assert(int(Approx::rank) == int(Exact::rank), "kfmm::relativeL2Error: ranks differ");
  if (approx.extent(0) != exact.extent(0) || approx.extent(1) != exact.extent(1))
    throw Exception("kfmm::relativeL2Error: 'approx' and 'exact' differ in extent");
  double diff2 = 0, norm2 = 0;
  for (std::size_t i = 0; i < exact.extent(0); ++i)
    for (std::size_t c = 0; c < exact.extent(1); ++c)
    {
      double a, e;
      if constexpr (Exact::rank == 1)
      {
        a = approx(i);
        e = exact(i);
      }
      else
      {
        a = approx(i, c);
        e = exact(i, c);
      }
      diff2 += (a - e) * (a - e);
      norm2 += e * e;
    }
  if (norm2 == 0)
    return diff2 == 0 ? 0.0 : INFINITY;
  return std::sqrt(diff2 / norm2);
}

} // namespace kfmm

#endif
