// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TUNING_TUNING_HPP
#define KFMM_TUNING_TUNING_HPP

// Launch parameters of kfmm's kernels, one struct per execution space. The kernels are the
// same source on every backend; only these numbers differ. This portable default suits the
// host spaces (a team is one thread that works on several targets at once so that the
// compiler can vectorise across them); backends/<name>/include/kfmm/backend/ specialises
// it for devices. The leaf-size tables (tuning/LeafSizeTable.hpp), written by
// perf/tune_leaf_size.py, and the accuracy tables (tuning/AccuracyTable.hpp) are headers of
// their own, whose structs each Tuning derives from.

#include <kfmm/tuning/HostAccuracy.hpp>
#include <kfmm/tuning/HostLeafSizes.hpp>
#include <kfmm/tree/ListRules.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kfmm::tuning
{

template <class ExecutionSpace>
struct Tuning : HostLeafSizes, HostAccuracy
{
  /// All-pairs direct sum: threads per team, targets each thread keeps in registers (by the
  /// bytes of the solver's real type), and sources staged in team scratch per tile.
  static constexpr int direct_team_size = 1;
  static constexpr int directTargetsPerThread(int /*real_bytes*/) { return 16; }
  static constexpr int direct_source_tile = 512;

  /// Host memory through which the distributed solver's messages travel when the MPI cannot
  /// read this space's memory (distributed/detail/StagedExchange.hpp). Host spaces need
  /// none: their memory is the host's.
  using staging_space = Kokkos::HostSpace;

  /// Whether teams can use the 32-lane warp primitives of kfmm/detail/Warp.hpp.
  static constexpr bool has_warp_primitives = false;

  /// Radix sort (kfmm::tree::sortPairs): the algorithm (onesweep or reduce-then-scan, see
  /// tree/RadixSort.hpp), bits per pass, threads per team, items per thread of a tile,
  /// tiles per group of reduce-then-scan (one histogram team each), teams per
  /// multiprocessor the registers must allow (0: no launch bound), and earlier tiles whose
  /// status the onesweep look-back reads at once. A host team is one thread that scatters
  /// its group in order.
  static constexpr bool sort_onesweep = false;
  static constexpr int sort_digit_bits = 8;
  static constexpr int sort_team_size = 1;
  static constexpr int sort_items_per_thread = 2048;
  static constexpr int sort_tiles_per_team = 64;
  static constexpr int sort_min_teams_per_sm = 0;
  static constexpr int sort_lookback_window = 4;

  /// FMM near field (P2P, kernels/P2P.hpp): threads that share a group of targets (1, or a
  /// 32-lane warp where has_warp_primitives), threads per team (a multiple of that), the
  /// targets each thread keeps in registers, and the sources of a group's scratch tile
  /// (p2pSourceTile, of staged sources of `staged_bytes` each). A host group is one thread's
  /// targets, as in the direct sum. P2PLaunchBounds caps its registers on GPUs.
  using P2PLaunchBounds = Kokkos::LaunchBounds<>;
  static constexpr int p2p_group_lanes = 1;
  static constexpr int p2p_team_size = 1;
  static constexpr int p2p_targets_per_thread = 8;
  static constexpr int p2pSourceTile(int /*staged_bytes*/) { return 256; }

  /// Threads per team of the expansion operators (P2M, M2M, M2L, L2L, L2P, M2P) at order p.
  static constexpr int expansionTeamSize(int /*p*/) { return 1; }

  /// Grouped M2L (farfield/GroupedM2L.hpp): target rows per block (one team each) and
  /// threads per team at order p, its team scratch (what the block's locals and the rest
  /// leave of it bounds the columns of one product) and the most columns of one product; the
  /// product by Kokkos Kernels' register-blocked team GEMM or by the register-tiled loop,
  /// which reads the class matrix where it is. It is the automatic choice up to order
  /// m2l_grouped_max_order while its class matrices (n^2 reals per class, n = (p+1)(p+2))
  /// take at most m2l_matrix_budget_bytes (beyond, the rotation M2L runs); from
  /// m2l_rotation_min_order_float / _double (by the solver's precision) the rotation M2L is
  /// (Options.hpp, automaticM2LVariant). A class gets a matrix when it has at least
  /// n / m2l_min_class_fraction pairs (building its matrix costs n translations); the pairs
  /// of rarer classes are translated one at a time.
  /// The product's register tile is m2l_row_tile_float or _double rows (by the solver's
  /// precision) by m2l_column_tile columns; the matrices' rows are padded to a multiple of
  /// matrix_row_padding_float or _double, a multiple of the row tile
  /// (kernels/detail/RealMatrices.hpp).
  /// On the host the grouped M2L (Fortin & Lamotte 2013) beats the per-pair one: its product
  /// vectorises, and the 8 x 4 tile keeps eight independent vector accumulators with AVX2
  /// (8 x 8 with AVX-512, whose float rows are a whole 16-float vector), which fill the
  /// vector units better than Kokkos Kernels' blocked team GEMM or a one-column tile (the
  /// GPU's). The rotation M2L
  /// (White & Head-Gordon 1996), whose sums do not vectorise, wins only at high orders, where
  /// its O(p^3) outweighs that and the cost of building the class matrices grows: from
  /// m2l_rotation_min_order_float / _double, where the whole solver's time crosses over
  /// (docs/TUNING.md, "The M2L variant by order").
  static constexpr int m2lBlockRows(int /*p*/) { return 64; }
  static constexpr int m2lGroupedTeamSize(int /*p*/) { return 1; }
  /// Threads per team of the grouping's per-block kernels (farfield/M2LGroups.hpp), a power of
  /// two (Kokkos' team scan on CUDA requires one).
  static constexpr int m2l_grouping_team_size = 1;
  /// Whether the grouping sorts each block's entries by class on its own (a counting sort,
  /// one team per block: one pass to count and one to place, in the cache) instead of
  /// sorting the whole list by the radix sort, whose passes over memory scaled with the
  /// threads no better than the host's bandwidth (docs/TUNING.md, "The M2L's grouping").
  static constexpr bool m2l_entries_sorted_per_block = true;

  /// The lists' traversal (tree/InteractionLists.hpp): threads per team, a power of two
  /// (Kokkos' team scan on CUDA requires one), the frontier pairs each thread of a tile
  /// takes, and the earlier tiles' status words its look-back reads at once
  /// (tree/detail/TileStatus.hpp). A host team is one thread, whose tile of 256 pairs makes
  /// look-backs rare.
  static constexpr int lists_team_size = 1;
  static constexpr int lists_items_per_thread = 256;
  static constexpr int lists_lookback_window = 4;
  /// The traversal rounds' Kokkos::LaunchBounds (a register cap on GPUs): none here.
  using ListsLaunchBounds = Kokkos::LaunchBounds<>;
  /// How a periodic box's traversal pairs cells with the near images' (tree::ImagePairs):
  /// directed, although mutual pairs halve the traversal's work, which is the periodic lists'
  /// cost here: with them kfmm::calibrate's estimates on a box with a net charge overshot its
  /// tolerance more than tenfold (docs/TUNING.md, "The lists' traversal").
  static constexpr tree::ImagePairs lists_image_pairs = tree::ImagePairs::directed;
  /// The grouped M2L kernel's Kokkos::LaunchBounds (a register cap on GPUs) for teams whose
  /// scratch takes at most m2l_capped_scratch_bytes; larger teams launch without: none here.
  using M2LGroupedLaunchBounds = Kokkos::LaunchBounds<>;
  /// The per-pair and rotation M2L kernel's Kokkos::LaunchBounds: none here.
  using M2LLaunchBounds = Kokkos::LaunchBounds<>;
  static constexpr std::size_t m2l_capped_scratch_bytes = 0;
  static constexpr std::size_t m2l_scratch_bytes = 256 * 1024;
  static constexpr int m2l_max_product_columns = 64;
  static constexpr bool m2l_kokkos_kernels_gemm = false;
  /// A row tile of one vector: 8 doubles, and 16 floats with AVX-512 (16 doubles, two
  /// vectors, measured slower).
  static constexpr int m2l_row_tile_double = 8;
#if defined(__AVX512F__)
  static constexpr int m2l_row_tile_float = 16;
#else
  static constexpr int m2l_row_tile_float = 8;
#endif
  static constexpr int matrix_row_padding_float = m2l_row_tile_float;
  static constexpr int matrix_row_padding_double = m2l_row_tile_double;
  /// Rows of the M2M and L2L matrix products (kernels/ShiftMatrices.hpp) a thread takes:
  /// measured, 8 float rows a thread beat one (whose loop over the eight children the
  /// compiler vectorised poorly in float), and one double row beat 8 (docs/TUNING.md).
  static constexpr int shift_row_tile_float = 8;
  static constexpr int shift_row_tile_double = 1;
  /// Eight columns where AVX-512's 32 vector registers hold their accumulators besides the
  /// operands (on AVX2's 16, eight columns of 8 doubles would spill).
#if defined(__AVX512F__)
  static constexpr int m2l_column_tile = 8;
#else
  static constexpr int m2l_column_tile = 4;
#endif
  /// Whether each gathered and product column of the grouped M2L is contiguous in team
  /// scratch: its gather and sum are then one vector loop per column, with the images'
  /// reflections as factors (on the host the per-coefficient loop of a GPU's threads and
  /// its strided scratch stores took two thirds of the M2L; docs/TUNING.md).
  static constexpr bool m2l_column_major = true;
  /// Input components whose class matrix entries a thread of the product loads before it
  /// multiplies them: one here, where the matrix is read from the cache in order, and a batch
  /// only lengthens the loop (docs/TUNING.md, "The grouped M2L's product").
  static constexpr int m2l_component_batch = 1;
  static constexpr int m2l_grouped_max_order = 14;
  static constexpr int m2l_rotation_min_order_float = 15;
  static constexpr int m2l_rotation_min_order_double = 15;
  /// Above m2l_grouped_max_order, up to m2l_grouped_long_list_max_order, the grouped M2L is
  /// still the automatic choice for an M2L list of at least m2l_grouped_long_list_entries
  /// entries: its translations cost less than the rotation's there too, but the build of its
  /// class matrices, once per evaluation and class, outweighs that on short lists
  /// (docs/TUNING.md, "The M2L variant by order").
  static constexpr int m2l_grouped_long_list_max_order = 18;
  static constexpr double m2l_grouped_long_list_entries = 5e5;
  /// M2M and L2L as matrix products (kernels/ShiftMatrices.hpp) up to this order; above,
  /// each child's shift is built on the fly (m2mTeam, l2lTeam).
  static constexpr int shift_matrix_max_order = 24;
  static constexpr int m2l_min_class_fraction = 4;
  static constexpr std::size_t m2l_matrix_budget_bytes = std::size_t(1) << 30;
  /// The most pooled memory a finished solver leaves to the next one (detail/Workspace.hpp):
  /// a solver that held more releases it. On the host, reuse saves the first touch of every
  /// page of a new allocation.
  static constexpr std::size_t workspace_cache_bytes = std::size_t(2) << 30;

  /// Passes over arrays (detail/Streaming.hpp): elements per work item of streamFor, and
  /// threads per team and elements per thread of streamReduce's chunks. On the host a
  /// work item is cheap and a team is one thread.
  static constexpr int stream_elements_per_item = 1;
  static constexpr int stream_team_size = 1;
  static constexpr int stream_elements_per_thread = 4096;

  /// Whether the octree's build finds its levels' sizes on the device before the host reads
  /// them (tree/Octree.hpp, buildCells): all at once, counted from the sorted keys, for an
  /// ordinary tree (a solver's two trees together), else in batches of levels launched over bounds
  /// of their sizes; for devices, where each read waits for the device. The host reads each level's
  /// size as it comes.
  static constexpr bool tree_levels_sized_on_device = false;

  /// Whether kfmm::Fmm counts the grouped M2L's classes on the lists' far entries, so that
  /// their number comes back in the lists' read (farfield::M2LClassCount): for devices,
  /// where the grouping's own read waits for the device; on the host, where a read costs
  /// nothing, the grouping counts them as it classifies the list's entries, which computes
  /// each entry's class once instead of twice (docs/TUNING.md, "The lists' traversal").
  static constexpr bool m2l_classes_in_lists_read = false;

  /// The cost of a far-field flop (the M2L's estimate, expansions::flops::m2l) in near-field
  /// flops (20 per pair), by which kfmm::Fmm decides whether the grouped M2L's grouping runs
  /// beside the near field (farfield::groupsBeside). Consulted only where two instances run at
  /// once, which the host's one instance never does.
  static constexpr double far_field_flop_cost = 4;

  /// Threads per team of the positions' sort (kernels/Permutation.hpp, SortPositions), whose
  /// teams take 256 particles each: one thread here.
  static constexpr int sort_positions_team_size = 1;

  /// The leaves' radii (tree/Octree.hpp): leaves per team, threads per team (one leaf each
  /// at a time) and vector lanes per thread (the leaf's particles).
  static constexpr int leaf_radii_leaves_per_team = 64;
  static constexpr int leaf_radii_team_size = 1;
  static constexpr int leaf_radii_lanes = 1;
};

} // namespace kfmm::tuning

#if defined(KOKKOS_ENABLE_CUDA)
#include <kfmm/backend/CudaTuning.hpp>
#endif

#endif
