// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_ACCURACY_HPP
#define KFMM_BACKEND_CUDA_ACCURACY_HPP

// The CUDA backend's accuracy table (tuning/AccuracyTable.hpp), which Tuning<Kokkos::Cuda>
// derives from. A header of its own, without CUDA, so that kfmm::calibrate can try its rows
// on every backend (tuning/AccuracyFronts.hpp).

#include <kfmm/tuning/AccuracyTable.hpp>

namespace kfmm::tuning
{

struct CudaAccuracy
{
  // The accuracy table of Options::tolerance (tuning/AccuracyTable.hpp): the worst errors at
  // leaf size 64 and at the leaf sizes both backends' tables give, over all of 2e4 particles
  // of seeds 1 and 2 and over samples at 2e4 and 5e4, the front of the times at 1e6 uniform
  // particles, with thetas up to 0.9 in float and 0.85 in double (docs/ACCURACY.md).
  // One row per line, as perf/accuracy_table.py prints them.
  // clang-format off
  static constexpr AccuracyRow accuracy_float[] = {
      {2, 0.9, 4.146e-02},
      {2, 0.85, 3.362e-02},
      {3, 0.9, 1.534e-02},
      {3, 0.85, 1.246e-02},
      {4, 0.9, 6.384e-03},
      {5, 0.9, 3.583e-03},
      {5, 0.85, 2.303e-03},
      {5, 0.8, 1.568e-03},
      {7, 0.85, 7.591e-04},
      {6, 0.75, 5.258e-04},
      {8, 0.8, 2.568e-04},
      {9, 0.8, 2.197e-04},
      {7, 0.7, 1.819e-04},
      {9, 0.75, 8.406e-05},
      {10, 0.75, 4.840e-05},
      {9, 0.7, 4.435e-05},
      {10, 0.7, 2.212e-05},
      {9, 0.6, 1.714e-05},
      {10, 0.6, 8.405e-06},
      {8, 0.5, 7.902e-06},
      {9, 0.5, 3.169e-06},
      {10, 0.5, 1.533e-06},
      {8, 0.4, 1.225e-06},
      {9, 0.4, 1.218e-06},
  };
  static constexpr AccuracyRow accuracy_double[] = {
      {4, 0.7, 2.042e-03},
      {6, 0.7, 3.274e-04},
      {7, 0.7, 1.657e-04},
      {14, 0.85, 1.479e-04},
      {12, 0.8, 5.048e-05},
      {13, 0.8, 3.187e-05},
      {12, 0.75, 1.613e-05},
      {13, 0.75, 9.702e-06},
      {14, 0.75, 5.923e-06},
      {15, 0.75, 3.687e-06},
      {16, 0.75, 2.322e-06},
      {18, 0.75, 1.025e-06},
      {19, 0.75, 6.760e-07},
      {20, 0.75, 4.410e-07},
      {18, 0.7, 3.119e-07},
      {21, 0.75, 2.904e-07},
      {22, 0.75, 1.944e-07},
      {20, 0.7, 1.218e-07},
      {21, 0.7, 7.641e-08},
      {22, 0.7, 4.870e-08},
      {23, 0.7, 3.129e-08},
      {24, 0.7, 1.990e-08},
      {19, 0.6, 1.271e-08},
      {21, 0.6, 3.356e-09},
      {23, 0.6, 9.003e-10},
      {24, 0.6, 4.720e-10},
      {20, 0.5, 4.465e-10},
      {21, 0.5, 2.060e-10},
      {22, 0.5, 9.519e-11},
      {23, 0.5, 4.399e-11},
      {24, 0.5, 2.031e-11},
      {18, 0.4, 1.850e-11},
      {19, 0.4, 6.632e-12},
      {20, 0.4, 2.295e-12},
  };
  // clang-format on
};

} // namespace kfmm::tuning

#endif
