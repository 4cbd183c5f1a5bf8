// SPDX-License-Identifier: BSD-3-Clause
// Written by perf/tune_leaf_size.py; remake it with the command below, do not edit it.
#ifndef KFMM_BACKEND_CUDA_LEAF_SIZES_HPP
#define KFMM_BACKEND_CUDA_LEAF_SIZES_HPP

// The fastest leaf size per order (tuning/LeafSizeTable.hpp), measured on
//   NVIDIA H200; host Intel(R) Xeon(R) Processor (16 logical CPUs),
//   Kokkos 3.4.1, default space Cuda, OMP_PROC_BIND=false,
//   2026-11-22, with
//   python3 perf/tune_leaf_size.py --program build/cuda/apps/kfmm --out tune-cuda.json \
//       --header backends/cuda/include/kfmm/backend/CudaLeafSizes.hpp --leaf-sizes \
//       16,32,64,128,256,512,1024 --repeat 1
// at 1e6 particles (uniform, plummer; the geometric mean of their times),
// theta 0.7, leaf sizes 16, 32, 64, 128, 256, 512, 1024.

#include <kfmm/tuning/LeafSizeTable.hpp>

namespace kfmm::tuning
{

struct CudaLeafSizes
{
  static constexpr LeafSizeRow leaf_sizes_float[] = {
      {2, 64}, {3, 128}, {4, 128}, {5, 128}, {6, 128}, {7, 256},
      {8, 256}, {9, 512}, {10, 256},
  };
  static constexpr LeafSizeRow leaf_sizes_double[] = {
      {4, 128}, {6, 128}, {8, 256}, {10, 256}, {12, 512}, {14, 512},
      {16, 512}, {18, 512}, {20, 512},
  };
};

} // namespace kfmm::tuning

#endif
