// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TUNING_HOST_ACCURACY_HPP
#define KFMM_TUNING_HOST_ACCURACY_HPP

// The host spaces' accuracy table (tuning/AccuracyTable.hpp), which Tuning derives from.
// A header of its own, without Kokkos, so that kfmm::calibrate can try the rows of every
// backend's front (tuning/AccuracyFronts.hpp).

#include <kfmm/tuning/AccuracyTable.hpp>

namespace kfmm::tuning
{

struct HostAccuracy
{
  /// The accuracy table of Options::tolerance (tuning/AccuracyTable.hpp): the worst errors
  /// measured (with the CUDA build) at leaf size 64 and at the leaf sizes both backends'
  /// tables give, over all of 2e4 particles of seeds 1 and 2 and over samples at 2e4 and
  /// 5e4, the front of the times of the OpenMP build at 2e5 uniform particles
  /// (docs/ACCURACY.md names the machine and compiler).
  // One row per line, as perf/accuracy_table.py prints them.
  // clang-format off
  static constexpr AccuracyRow accuracy_float[] = {
      {2, 0.7, 2.298e-02},
      {3, 0.7, 7.290e-03},
      {4, 0.7, 2.504e-03},
      {5, 0.7, 9.465e-04},
      {6, 0.7, 3.795e-04},
      {7, 0.7, 1.819e-04},
      {6, 0.6, 1.704e-04},
      {7, 0.6, 7.228e-05},
      {6, 0.5, 5.977e-05},
      {8, 0.6, 3.498e-05},
      {7, 0.5, 2.112e-05},
      {9, 0.6, 1.714e-05},
      {8, 0.5, 7.902e-06},
      {9, 0.5, 3.169e-06},
      {10, 0.5, 1.533e-06},
      {9, 0.4, 1.218e-06},
  };
  static constexpr AccuracyRow accuracy_double[] = {
      {4, 0.7, 2.042e-03},
      {5, 0.7, 7.647e-04},
      {6, 0.7, 3.274e-04},
      {7, 0.7, 1.657e-04},
      {8, 0.7, 8.959e-05},
      {7, 0.6, 7.368e-05},
      {6, 0.5, 5.977e-05},
      {8, 0.6, 3.590e-05},
      {7, 0.5, 2.112e-05},
      {9, 0.6, 1.745e-05},
      {11, 0.7, 1.123e-05},
      {8, 0.5, 7.900e-06},
      {12, 0.7, 5.865e-06},
      {9, 0.5, 3.163e-06},
      {10, 0.5, 1.373e-06},
      {15, 0.7, 1.283e-06},
      {11, 0.5, 6.010e-07},
      {14, 0.6, 4.815e-07},
      {12, 0.5, 2.645e-07},
      {15, 0.6, 2.339e-07},
      {14, 0.5, 5.179e-08},
      {15, 0.5, 2.307e-08},
      {19, 0.6, 1.271e-08},
      {14, 0.4, 1.194e-09},
      {15, 0.4, 4.262e-10},
      {16, 0.4, 1.481e-10},
      {17, 0.4, 5.125e-11},
      {18, 0.4, 1.850e-11},
      {19, 0.4, 6.632e-12},
      {20, 0.4, 2.295e-12},
  };
  // clang-format on
};

} // namespace kfmm::tuning

#endif
