// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TUNING_ACCURACY_FRONTS_HPP
#define KFMM_TUNING_ACCURACY_FRONTS_HPP

// Every backend's accuracy table for one precision. A row's error is the expansions' and the
// acceptance rule's, the same on every backend; only which rows make a backend's front is its
// timing, of uniform particles. On other problems a row of another backend's front can be the
// faster one (on Plummer particles on the CPU, the GPU's wider thetas at higher orders), so
// kfmm::calibrate tries those rows too (kfmm/Calibrate.hpp, step 3). A new backend adds its
// table here.

#include <kfmm/backend/CudaAccuracy.hpp>
#include <kfmm/tuning/AccuracyTable.hpp>
#include <kfmm/tuning/HostAccuracy.hpp>

#include <array>
#include <type_traits>

namespace kfmm::tuning
{

/// The accuracy tables of every backend for precision Real (float, else double).
template <class Real>
std::array<AccuracyRows, 2> everyFront()
{
  // A row read in a constant expression instantiates the tables' definitions (nvcc's front
  // end, as in kfmm/Calibrate.hpp's accuracyRows).
  static_assert(
      HostAccuracy::accuracy_float[0].order > 0 && CudaAccuracy::accuracy_float[0].order > 0 &&
          HostAccuracy::accuracy_double[0].order > 0 && CudaAccuracy::accuracy_double[0].order > 0,
      "an accuracy table's rows have orders");
  if constexpr (std::is_same<Real, float>::value)
    return {rowsOf(HostAccuracy::accuracy_float), rowsOf(CudaAccuracy::accuracy_float)};
  else
    return {rowsOf(HostAccuracy::accuracy_double), rowsOf(CudaAccuracy::accuracy_double)};
}

} // namespace kfmm::tuning

#endif
