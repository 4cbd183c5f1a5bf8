// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_BACKEND_CUDA_TUNING_HPP
#define KFMM_BACKEND_CUDA_TUNING_HPP

// Included by kfmm/tuning/Tuning.hpp when Kokkos has CUDA: launch parameters for GPUs,
// where a team is a thread block and each thread owns one target.

#include <kfmm/backend/CudaAccuracy.hpp>
#include <kfmm/backend/CudaLeafSizes.hpp>
#include <kfmm/tree/ListRules.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kfmm::tuning
{

template <class ExecutionSpace>
struct Tuning;

template <>
struct Tuning<Kokkos::Cuda> : CudaLeafSizes, CudaAccuracy
{
  static constexpr int direct_team_size = 128;
  // Two targets per thread in fp32 share each staged source's load and the loop's overhead;
  // in fp64 the second target's registers cost more than the shared load saves
  // (docs/TUNING.md, "The all-pairs direct sum").
  static constexpr int directTargetsPerThread(int real_bytes) { return real_bytes == 4 ? 2 : 1; }
  static constexpr int direct_source_tile = 128;

  static constexpr bool has_warp_primitives = true;

  // Messages between ranks staged in page-locked host memory: copies to and from it run at
  // the link's speed and without a second copy by the driver, which pageable memory needs.
  using staging_space = Kokkos::CudaHostPinnedSpace;

  // Radix sort: onesweep (Adinets & Merrill 2022) with warp ranking. A tile of 256 x 17
  // (key, value) pairs is staged in shared memory, keys then values through one buffer
  // (39 KiB with the 16-bit warp counters for 64-bit keys, within the 40 KiB of team scratch
  // Kokkos 3.4 allows). Two teams per multiprocessor leave 128 registers per thread, enough
  // to hold a tile without spilling; the look-back reads 4 earlier tiles at once. The
  // fastest of the variants measured (docs/TUNING.md, "The radix sort").
  static constexpr bool sort_onesweep = true;
  static constexpr int sort_digit_bits = 8;
  static constexpr int sort_team_size = 256;
  static constexpr int sort_items_per_thread = 17;
  static constexpr int sort_tiles_per_team = 16;
  static constexpr int sort_min_teams_per_sm = 2;
  static constexpr int sort_lookback_window = 4;

  // FMM near field: a warp per group of up to 32 targets of one leaf, one target per lane,
  // four independent warps per block. At most 64 registers, so that 8 blocks share a
  // multiprocessor: the kernel is bound by issue slots, and more resident warps hide the
  // latency of its shared-memory loads. Tiles of 2 KiB: 128 sources in fp32, 64 in fp64,
  // where 128 would not let 8 blocks' scratch fit a multiprocessor. One target per lane:
  // a second one costs registers and was slower at every size tried (docs/TUNING.md,
  // "The near field").
  using P2PLaunchBounds = Kokkos::LaunchBounds<128, 8>;
  static constexpr int p2p_group_lanes = 32;
  static constexpr int p2p_team_size = 128;
  static constexpr int p2p_targets_per_thread = 1;
  static constexpr int p2pSourceTile(int staged_bytes) { return 2048 / staged_bytes; }

  // Expansion operators: one thread per output coefficient of order p (rounded up to whole
  // warps), at most 512, so that orders 22-24 (276-325 coefficients) need no second pass over
  // their coefficients.
  static constexpr int expansionTeamSize(int p)
  {
    int const coefficients = (p + 1) * (p + 2) / 2;
    int const warps = (coefficients + 31) / 32;
    return warps > 16 ? 512 : 32 * warps;
  }

  // Grouped M2L: target cells per thread block of 128 threads (16, and 8 from order 7, where
  // a cell's product is larger), the register-tiled product (faster than Kokkos Kernels'
  // blocked team GEMM), all within the 40 KiB of team scratch Kokkos 3.4 allows. The class
  // matrices are read through the L1 cache, not copied to shared memory per chunk, so that
  // the scratch holds more product columns (m2l_component_batch below). docs/TUNING.md,
  // "The grouped M2L's product", has the measurements.
  static constexpr int m2lBlockRows(int p) { return p >= 7 ? 8 : 16; }
  static constexpr int m2lGroupedTeamSize(int /*p*/) { return 128; }
  // The per-pair and rotation M2L (one kernel) at most 64 registers per thread, so that
  // three teams of 320 threads (order 23) share a multiprocessor instead of two: the
  // occupancy gained outweighs the spills.
  using M2LLaunchBounds = Kokkos::LaunchBounds<512, 2>;
  static constexpr int m2l_grouping_team_size = 128;
  // The whole list by the radix sort: a block's counting sort would be one thread's.
  static constexpr bool m2l_entries_sorted_per_block = false;
  // The lists' traversal: a block of 256 threads places a tile of 256 frontier pairs.
  static constexpr int lists_team_size = 256;
  static constexpr int lists_items_per_thread = 1;
  static constexpr int lists_lookback_window = 4;
  // Three blocks of a round per multiprocessor, as with the 79 registers of a round launched
  // from constant memory; launched with its functor as a kernel argument it took 83, and
  // two fit (kfmm/detail/ArgumentLaunch.hpp).
  using ListsLaunchBounds = Kokkos::LaunchBounds<lists_team_size, 3>;
  // A periodic box's pairs with the near images directed: mutual pairs save a little of the
  // lists' traversal but lengthen the coarse cells' M2L rows, which one team each sums, past
  // the M2L's span at 1e6 (docs/TUNING.md, "The lists' traversal").
  static constexpr tree::ImagePairs lists_image_pairs = tree::ImagePairs::directed;
  // At most 64 registers per thread, so that 8 blocks of 128 threads fit on a multiprocessor,
  // when 8 blocks' scratch fits too (8 x 24 KiB of the 228 KiB of an H100 or H200; GPUs with
  // less shared memory per multiprocessor need their own threshold): uncapped, the compiler
  // gives the kernel far more registers and the occupancy falls by half. The scratch budget
  // is that 24 KiB (fewer columns per product than 40 KiB allows, so that every launch is
  // capped), and a thread's tile is 4 rows by 2 columns (docs/TUNING.md).
  using M2LGroupedLaunchBounds = Kokkos::LaunchBounds<128, 8>;
  static constexpr std::size_t m2l_capped_scratch_bytes = 24 * 1024;
  static constexpr std::size_t m2l_scratch_bytes = 24 * 1024;
  static constexpr int m2l_max_product_columns = 64;
  static constexpr bool m2l_kokkos_kernels_gemm = false;
  static constexpr int m2l_row_tile_float = 4;
  static constexpr int m2l_row_tile_double = 4;
  // Rows of the shift and class matrices: a multiple of the row tiles (RealMatrices.hpp).
  static constexpr int matrix_row_padding_float = 8;
  static constexpr int matrix_row_padding_double = 8;
  // A thread per row of the M2M and L2L products (kernels/ShiftMatrices.hpp).
  static constexpr int shift_row_tile_float = 1;
  static constexpr int shift_row_tile_double = 1;
  static constexpr int m2l_column_tile = 2;
  // Each scratch row a component of the product's columns: a thread of the gather takes a
  // coefficient of two columns (a warp reads consecutive coefficients of a multipole), and a
  // thread of the product reads its tile's two columns of a component as one vector.
  static constexpr bool m2l_column_major = false;
  // The class matrix's entries of 8 input components are loaded before their products: as
  // written, the loop let the compiler issue each load next to its products, and the M2L
  // waited on the cache (long-scoreboard stalls).
  static constexpr int m2l_component_batch = 8;
  static constexpr int m2l_grouped_max_order = 8;
  // The rotation M2L (O(p^3) per pair; White & Head-Gordon 1996) from order 9 in float and 8
  // in double, the grouped one below: the orders where the whole solver's time crosses over
  // (docs/TUNING.md, "The M2L variant by order").
  static constexpr int m2l_rotation_min_order_float = 9;
  static constexpr int m2l_rotation_min_order_double = 8;
  // The order alone chooses: the rotation M2L won from order 9 on lists of 1e6 particles
  // already (docs/TUNING.md).
  static constexpr int m2l_grouped_long_list_max_order = m2l_grouped_max_order;
  static constexpr double m2l_grouped_long_list_entries = 0;
  // M2M and L2L as matrix products at every order: the pair is faster than built on the fly
  // at every order measured (docs/TUNING.md).
  static constexpr int shift_matrix_max_order = 24;
  static constexpr int m2l_min_class_fraction = 4;
  static constexpr std::size_t m2l_matrix_budget_bytes = std::size_t(4) << 30;
  // The pool keeps the memory of builds up to a few million particles, where allocations
  // cost most against the kernels; larger ones allocate afresh, a cost small against their
  // kernels (docs/TUNING.md, "Memory kept between solvers").
  static constexpr std::size_t workspace_cache_bytes = std::size_t(2) << 30;
  // Passes over arrays: Kokkos 3.4 launches a RangePolicy as blocks of 64 threads of one
  // element each, whose start bounds a long pass, and runs its RangePolicy reductions on 256
  // blocks (detail/Streaming.hpp). 8 elements per work item, and chunks of 256 threads of
  // 16 elements per team of a reduction.
  static constexpr int stream_elements_per_item = 8;
  static constexpr int stream_team_size = 256;
  static constexpr int stream_elements_per_thread = 16;
  // The octree's levels' sizes found on the device, read once (tree/Octree.hpp).
  static constexpr bool tree_levels_sized_on_device = true;
  // The M2L's classes counted on the lists' far entries, read with the lists' sizes.
  static constexpr bool m2l_classes_in_lists_read = true;
  // A far-field flop costs about three near-field ones (the grouped M2L runs at about a third
  // of the near field's flop rate), and the grouping adds to the far field's chain: the margin
  // of 4 (farfield::groupsBeside; docs/TUNING.md, "The lists' traversal").
  static constexpr double far_field_flop_cost = 4;
  // The positions' sort: a thread per particle of a team's 256.
  static constexpr int sort_positions_team_size = 256;
  // The leaves' radii: a warp's lanes per leaf, 8 leaves per block.
  static constexpr int leaf_radii_leaves_per_team = 8;
  static constexpr int leaf_radii_team_size = 8;
  static constexpr int leaf_radii_lanes = 32;
};

} // namespace kfmm::tuning

#endif
