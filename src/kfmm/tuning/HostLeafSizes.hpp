// SPDX-License-Identifier: BSD-3-Clause
// Written by perf/tune_leaf_size.py; remake it with the command below, do not edit it.
#ifndef KFMM_TUNING_HOST_LEAF_SIZES_HPP
#define KFMM_TUNING_HOST_LEAF_SIZES_HPP

// The fastest leaf size per order (tuning/LeafSizeTable.hpp), measured on
//   Intel(R) Xeon(R) Processor (2 logical CPUs),
//   Kokkos 3.4.1, default space OpenMP, OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads,
//   2026-11-29, with
//   python3 perf/tune_leaf_size.py --program build/openmp/apps/kfmm --out \
//       tune-openmp-2core.json --header src/kfmm/tuning/HostLeafSizes.hpp --n 2e5 --leaf-sizes \
//       16,32,64,128,256,512,1024,2048 --repeat 1
// at 2e5 particles (uniform, plummer; the geometric mean of their times),
// theta 0.7, leaf sizes 16, 32, 64, 128, 256, 512, 1024, 2048.

#include <kfmm/tuning/LeafSizeTable.hpp>

namespace kfmm::tuning
{

struct HostLeafSizes
{
  static constexpr LeafSizeRow leaf_sizes_float[] = {
      {2, 64}, {3, 128}, {4, 128}, {5, 128}, {6, 128}, {7, 128},
      {8, 256}, {9, 256}, {10, 256},
  };
  static constexpr LeafSizeRow leaf_sizes_double[] = {
      {4, 64}, {6, 64}, {8, 128}, {10, 128}, {12, 256}, {14, 256},
      {16, 512}, {18, 512}, {20, 512},
  };
};

} // namespace kfmm::tuning

#endif
