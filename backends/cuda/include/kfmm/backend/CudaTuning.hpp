// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_TUNING_HPP
#define KFMM_BACKEND_CUDA_TUNING_HPP

// Included by kfmm/detail/Tuning.hpp when Kokkos has CUDA: launch parameters for GPUs,
// where a team is a thread block and each thread owns one target.

#include <kfmm/backend/CudaLeafSizes.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kfmm::detail
{

template <class ExecutionSpace>
struct Tuning;

template <>
struct Tuning<Kokkos::Cuda> : CudaLeafSizes
{
  static constexpr int direct_team_size = 128;
  // Two targets per thread in fp32 share each staged source's load and the loop's overhead:
  // 1.565e12 against 1.503e12 pairs/s at N = 2^20; in fp64 one stays (6.63e11 against
  // 6.67e11; H100, one lease, twice, perf/RESULTS.md, 2026-11-24).
  static constexpr int directTargetsPerThread(int real_bytes) { return real_bytes == 4 ? 2 : 1; }
  static constexpr int direct_source_tile = 128;

  static constexpr bool has_warp_primitives = true;

  // Messages between ranks staged in page-locked host memory: copies to and from it run at
  // the link's speed and without a second copy by the driver, which pageable memory needs.
  using staging_space = Kokkos::CudaHostPinnedSpace;

  // Radix sort: onesweep with warp ranking. A tile of 256 x 17 (key, value) pairs is staged
  // in shared memory, keys then values through one buffer (39 KiB with the 16-bit warp
  // counters for 64-bit keys, within the 40 KiB of team scratch Kokkos 3.4 allows). Two
  // teams per multiprocessor leave 128 registers per thread, enough to hold a tile without
  // spilling; the look-back reads 4 earlier tiles at once. Fastest on an H200 among 8 to 17
  // items per thread, 2 or 3 teams and look-back windows of 1, 2, 4 and 8
  // (perf/RESULTS.md).
  static constexpr bool sort_onesweep = true;
  static constexpr int sort_digit_bits = 8;
  static constexpr int sort_team_size = 256;
  static constexpr int sort_items_per_thread = 17;
  static constexpr int sort_tiles_per_team = 16;
  static constexpr int sort_min_teams_per_sm = 2;
  static constexpr int sort_lookback_window = 4;

  // FMM near field: a warp per group of up to 32 targets of one leaf, one target per lane,
  // four independent warps per block. Uncapped, the kernel took 64 registers, which allow
  // half of the H100's warps (Nsight Compute: 39 % achieved occupancy, 8.1 cycles between
  // a warp's instructions, issue slots 74 % busy); 12 blocks per SM allowed 40 registers.
  // Once the source loop unrolled (a constant stride, kernels/P2P.hpp), 8 blocks per SM
  // (64 registers) were faster: P2P 2.17-2.22 against 2.24-2.25 ms on 1e6 Plummer fp32,
  // 141.5 against 153.0 ms on Plummer fp64 at 1e-10, level on uniform (H100, one lease,
  // perf/RESULTS.md, 2026-11-24).
  // Tiles of 2 KiB: 128 sources in fp32, where they were 3-5 % faster than 64 (P2P 1.094 /
  // 1.097 against 1.144 / 1.135 ms at 1e6 uniform, 2.104 against 2.17-2.21 on Plummer, 3.80
  // against 3.93 at leaf 256; H100, one lease, twice, perf/RESULTS.md, 2026-11-24); 64 in
  // fp64, where 128 would not let 8 blocks' scratch fit a multiprocessor. Two targets per
  // lane were 3-15 % slower in the same lease, as before the source loop unrolled, and 3-15 %
  // slower again once the pair's field took one product (P2P 3.41 against 3.31 ms at leaf
  // 256, 1.14 against 0.99 at the defaults, 2.04 against 1.88 on Plummer; 2026-11-24), and
  // 4 % slower once tiles were swept without a select per pair (3.11 against 2.99 ms at
  // leaf 256; H200, 2026-11-25).
  using P2PLaunchBounds = Kokkos::LaunchBounds<128, 8>;
  static constexpr int p2p_group_lanes = 32;
  static constexpr int p2p_team_size = 128;
  static constexpr int p2p_targets_per_thread = 1;
  static constexpr int p2pSourceTile(int staged_bytes) { return 2048 / staged_bytes; }

  // Expansion operators: one thread per output coefficient of order p (rounded up to whole
  // warps), at most 512. With the former cap of 256, orders 22-24 (276-325 coefficients)
  // took a second pass over their coefficients: the rotation M2L took 74.3 against 70.7 ms
  // at order 22 and 86.0 against 83.2 at order 23 (1e6 uniform fp64, H100, perf/RESULTS.md,
  // 2026-11-24).
  static constexpr int expansionTeamSize(int p)
  {
    int const coefficients = (p + 1) * (p + 2) / 2;
    int const warps = (coefficients + 31) / 32;
    return warps > 16 ? 512 : 32 * warps;
  }

  // Grouped M2L, measured on an H200 at 1e6 particles (perf/RESULTS.md): 16 target cells
  // per thread block of 128 threads below order 7 (fastest of 8, 16, 32 and 64 cells with 64
  // or 128 threads), the register-tiled product (1.2x Kokkos Kernels' blocked team GEMM at
  // p 4), all within the 40 KiB of team scratch Kokkos 3.4 allows. The class matrices are
  // read through the L1 cache, not copied to shared memory per chunk: the copy was the
  // kernel's largest stall (Nsight Compute: 13 % of its warp samples, on global loads), and
  // without it the scratch holds more product columns (m2l_component_batch below). It beats
  // the per-pair M2L up to order 10 (3.2x at p 4 fp32, 1.4x at p 10 fp64) and loses at p 12
  // fp64 (0.8x). The rotation M2L beats both from order 9 (p 9: 50 / 82 ms fp32 / fp64
  // against 73 / 88 grouped; p 16 fp64: 305 against 501 per pair); at p 8 it is faster in
  // fp32 (50 against 55 ms) and slower in fp64 (80 against 67), so the grouped M2L keeps
  // order 8 (kfmm_bench_m2l, 1e6 uniform, theta 0.5).
  // From order 7, 8 target cells per block: the M2L took 2.14 against 3.12 ms at p 7 fp32
  // (level in fp64), 2.98 against 4.24 at p 8 fp32 and 5.50 against 6.81 in fp64, while at
  // p 4 and 6 it was slower than with 16 (7.38 against 7.03, 4.85 against 4.52 in fp32;
  // 1e6 uniform, H100, perf/RESULTS.md, 2026-11-24).
  static constexpr int m2lBlockRows(int p) { return p >= 7 ? 8 : 16; }
  static constexpr int m2lGroupedTeamSize(int /*p*/) { return 128; }
  // The per-pair and rotation M2L (one kernel) at most 64 registers per thread: uncapped it
  // took 78 at order 23 in double, so two teams of 320 threads fit on a multiprocessor
  // (Nsight Compute: 31 % occupancy, 0.61 eligible warps per scheduler); capped, three fit
  // (46 %) and the M2L took 52.0 against 56.0 ms despite spilling, 19.6 against 21.2 at order
  // 16 in double, 125 against 136 on Plummer at 1e-10, level at order 12 in fp32 (1e6,
  // H100, perf/RESULTS.md, 2026-11-24).
  using M2LLaunchBounds = Kokkos::LaunchBounds<512, 2>;
  static constexpr int m2l_grouping_team_size = 128;
  // The lists' traversal: a block of 256 threads places a tile of 256 frontier pairs.
  static constexpr int lists_team_size = 256;
  static constexpr int lists_items_per_thread = 1;
  static constexpr int lists_lookback_window = 4;
  // Three blocks of a round per multiprocessor, as with the 79 registers of a round launched
  // from constant memory; launched with its functor as a kernel argument it took 83, and
  // two fit (kfmm/detail/ArgumentLaunch.hpp).
  using ListsLaunchBounds = Kokkos::LaunchBounds<lists_team_size, 3>;
  // At most 64 registers per thread, so that 8 blocks of 128 threads fit on a multiprocessor,
  // when 8 blocks' scratch fits too (8 x 24 KiB of the 228 KiB of an H100 or H200; GPUs with
  // less shared memory per multiprocessor need their own threshold). Uncapped, ptxas gave the
  // kernel 99 (fp32) and 130 (fp64) registers once its index splitting lost its divisions,
  // and occupancy fell from 56 to 25 % (Nsight Compute, fp32 p 4, H100; perf/RESULTS.md,
  // 2026-11-23); capped, fp32 needs no spills and fp64 20 bytes. The scratch budget is that
  // 24 KiB (fewer columns per product than 40 KiB allows, so that every launch is capped)
  // and a thread's tile is 4 rows by 2 columns: against 40 KiB and 1 column, the M2L at 1e6
  // uniform particles (defaults but the order) is 1.36x faster at p 6 fp32 (Plummer too),
  // 1.63x at p 8 fp32, 1.07x at p 4 fp32, 1.83x at p 6 fp64 and 0.91x at p 8 fp64 (H100,
  // perf/RESULTS.md, 2026-11-23; 2 columns without the cap, the cap with 1 column, 8 rows,
  // and a restructured gather with or without the matrix in scratch were slower). Once the
  // tile's entries were read as vectors (kernels/GroupedM2L.hpp), a 4 x 4 tile with 4
  // components per batch was slower than 4 x 2 with 8 (M2L 4.17 against 3.70 ms at p 6 fp32,
  // 12.8 against 9.0 at p 7 fp64), and so were the class matrices stored in tiles, each
  // tile's entries component after component (4.0 against 3.7 ms: more instructions saved
  // than cycles; 1e6 uniform, H100, perf/RESULTS.md, 2026-11-24).
  using M2LGroupedLaunchBounds = Kokkos::LaunchBounds<128, 8>;
  static constexpr std::size_t m2l_capped_scratch_bytes = 24 * 1024;
  static constexpr std::size_t m2l_scratch_bytes = 24 * 1024;
  static constexpr int m2l_max_product_columns = 64;
  static constexpr bool m2l_kokkos_kernels_gemm = false;
  static constexpr int m2l_row_tile = 4;
  static constexpr int m2l_column_tile = 2;
  // The class matrix's entries of 8 input components are loaded before their products:
  // the loop as written had the compiler issue each load next to its products, and the M2L
  // waited on the cache (Nsight Compute: long scoreboard 5.2 of 12.8 cycles per issued
  // instruction; 5.75 ms at p 6 fp32). Against the matrix copied to shared memory (f3fea40),
  // in one lease at 1e6 uniform particles, the M2L is 1.25x faster at p 6 fp32 (1.22x on
  // Plummer), 1.14x at p 6 fp64, 1.04x at p 4 fp32 (theta 0.5, leaf 64), 1.10x at p 8 fp32
  // and 1.34x at p 8 fp64; batches of 4 were slower than 8 at every order (H100,
  // perf/RESULTS.md, 2026-11-24).
  static constexpr int m2l_component_batch = 8;
  static constexpr int m2l_grouped_max_order = 8;
  // Once the rotation's coaxial step lost its divisions (1e6 uniform, theta 0.7, H100, the
  // build included, one lease, twice; perf/RESULTS.md, 2026-11-24): at order 8 the rotation
  // is faster in fp64 (23.6 / 23.2 against 24.6 / 24.3 ms) and level in fp32 (14.2 / 14.4
  // against 13.3 / 14.7, its M2L slower: 3.5 against 3.0 ms); at order 7 the grouped M2L
  // wins in both (12.3 against 13.9-15.3 ms, 17.0 against 25.5); at order 9 the rotation.
  static constexpr int m2l_rotation_min_order_float = 9;
  static constexpr int m2l_rotation_min_order_double = 8;
  // M2M and L2L as matrix products at every order: together faster than built on the fly at
  // p 4, 10 and 16 (perf/RESULTS.md; L2L alone is slower at p 16, one team per parent).
  static constexpr int shift_matrix_max_order = 24;
  static constexpr int m2l_min_class_fraction = 4;
  static constexpr std::size_t m2l_matrix_budget_bytes = std::size_t(4) << 30;
  // The solver's arrays take about 80 bytes per particle in fp32 at the defaults (7.3 GiB at
  // 1e8, perf/RESULTS.md) and the build's transient arrays more: the pool keeps the memory of
  // builds up to a few million particles, where allocations cost most against the kernels;
  // larger ones allocate afresh (1e8: 0.99 s for the first run, 1.00 s warm).
  static constexpr std::size_t workspace_cache_bytes = std::size_t(2) << 30;
  // Passes over arrays: Kokkos 3.4 launches a RangePolicy as blocks of 64 threads of one
  // element each, and starting the blocks bounded a pass over 1e8 elements at 0.96 ms; its
  // RangePolicy reductions run on 256 blocks (detail/Streaming.hpp). 8 elements per work
  // item, and chunks of 256 threads of 16 elements per team of a reduction.
  static constexpr int stream_elements_per_item = 8;
  static constexpr int stream_team_size = 256;
  static constexpr int stream_elements_per_thread = 16;
  // The octree's levels' sizes found on the device, read once (tree/Octree.hpp).
  static constexpr bool tree_levels_sized_on_device = true;
  // The M2L's classes counted on the lists' far entries, read with the lists' sizes.
  static constexpr bool m2l_classes_in_lists_read = true;
  // A far-field flop costs about three near-field ones on an H200 (fp32, 1e6 particles: the
  // grouped M2L ran 8.6-9.1 TFLOP/s of its estimate, the near field 22-29), and the grouping
  // adds to the far field's chain: the margin of 4 (Fmm::m2lBeside).
  static constexpr double far_field_flop_cost = 4;
  // The positions' sort: a thread per particle of a team's 256.
  static constexpr int sort_positions_team_size = 256;
  // The leaves' radii: a warp's lanes per leaf, 8 leaves per block.
  static constexpr int leaf_radii_leaves_per_team = 8;
  static constexpr int leaf_radii_team_size = 8;
  static constexpr int leaf_radii_lanes = 32;

  // The accuracy table of Options::tolerance (detail/AccuracyTable.hpp): the worst errors at
  // leaf size 64 and at the leaf sizes both backends' tables give, over all of 2e4 particles
  // of seeds 1 and 2 and over samples at 2e4 and 5e4, the front of the times at 1e6 uniform
  // particles on an H200, remade on 2026-11-27 with thetas up to 0.9 in float and 0.85 in
  // double (docs/ACCURACY.md).
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
};

} // namespace kfmm::detail

#endif
