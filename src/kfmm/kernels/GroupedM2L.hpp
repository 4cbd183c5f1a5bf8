// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_GROUPED_M2L_HPP
#define KFMM_KERNELS_GROUPED_M2L_HPP

// The grouped M2L: one team per block of target cells (tree/M2LGroups.hpp). For each chunk
// of its entries (one translation class, each target's entries adjacent) the team
//   1. gathers the chunk's source multipoles as the columns of a matrix in team scratch,
//   2. multiplies them by the class matrix (kernels/M2LMatrices.hpp), either with Kokkos
//      Kernels' team GEMM (KokkosBatched::TeamGemm) or with a register-tiled product in which
//      each thread computes a tile of m2l_row_tile outputs of m2l_column_tile columns from the
//      matrix (read where it is, through the L1 cache on a GPU, the entries of a few input
//      components loaded before their products) and the gathered columns: the backend's
//      measured choice (two columns per thread on a GPU; on a CPU, more, so that the tile
//      holds enough independent fused multiply-add chains to fill the vector units, with the
//      tile's gathered values loaded first so that the compiler vectorizes its rows);
//   3. adds each product column, divided by the pair's length unit, to its target's local
//      expansion, summed in team scratch and written once at the end (in place when the
//      block's locals do not fit in scratch).
// A chunk's offsets are mirror images of its class's offset: the gathered columns and the
// products take the mirror's signs (tree::mirrorSign). Large chunks are cut into products
// of at most `columns` columns; each column's entry row word is kept in team scratch with
// it for the sum. The team alone writes its block's locals, in the fixed order of the sorted
// entries: no atomics, and the result is the same bit for bit from run to run. Entries
// outside the dense classes (class -1) are translated one pair at a time with m2lTeam, as
// the per-pair M2L does.
// The loops over a product's (column, component) pairs split their flattened index with a
// SmallDivisor and take each target's inverse length unit from a table made once per team:
// on the host the integer and floating-point divisions they replace cost more than the
// product itself (perf/RESULTS.md, 2026-11-23).

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Tuning.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/M2LMatrices.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/tree/M2LGroups.hpp>

#include <KokkosBatched_Gemm_Decl.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::detail
{

template <class ExecutionSpace, class Real>
struct GroupedM2LKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using ScratchMatrix = Kokkos::View<Real **, Kokkos::LayoutRight,
                                     typename ExecutionSpace::scratch_memory_space,
                                     Kokkos::MemoryUnmanaged>;
  using ScratchInts = Kokkos::View<int *, typename ExecutionSpace::scratch_memory_space,
                                   Kokkos::MemoryUnmanaged>;
  using ScratchDoubles = Kokkos::View<double *, typename ExecutionSpace::scratch_memory_space,
                                      Kokkos::MemoryUnmanaged>;

  CellView<Memory> target_cells;
  CellView<Memory> source_cells;
  tree::M2LGroups<Memory> groups;
  M2LMatrixArray<Real, Memory> matrices;
  CoefficientArray<Real, Memory> multipoles;
  CoefficientArray<Real, Memory> locals;
  int order;
  int num_rows;
  // Derived from the above and the backend's tuning by the constructor:
  int columns;                ///< most columns of one product
  bool accumulate_in_scratch; ///< sum the block's locals in team scratch, else in place

  GroupedM2LKernel(CellView<Memory> const &target_cells_, CellView<Memory> const &source_cells_,
                   tree::M2LGroups<Memory> const &groups_,
                   M2LMatrixArray<Real, Memory> const &matrices_,
                   CoefficientArray<Real, Memory> const &multipoles_,
                   CoefficientArray<Real, Memory> const &locals_, int order_, int num_rows_)
      : target_cells(target_cells_), source_cells(source_cells_), groups(groups_),
        matrices(matrices_), multipoles(multipoles_), locals(locals_), order(order_),
        num_rows(num_rows_),
        columns(productColumns(order_, groups_.block_rows)),
        accumulate_in_scratch(accumulatesInScratch(order_, groups_.block_rows))
  {
  }

  /// Team scratch of one launch.
  std::size_t scratchBytes() const { return scratchBytes(order, columns, groups.block_rows); }

  using Tune = Tuning<ExecutionSpace>;
  static constexpr bool kokkos_kernels_gemm = Tune::m2l_kokkos_kernels_gemm;

  /// Smallest product worth running: fewer columns re-read the class matrix too often.
  static constexpr int min_product_columns = 8;

  /// Team scratch of one product column: its gathered and product components and its
  /// entry's row word.
  static std::size_t columnBytes(int p)
  {
    return 2 * realCoefficientCount(p) * sizeof(Real) + sizeof(int);
  }

  /// Team scratch besides the product's columns and the block's locals: the components'
  /// mirror parities, the block's inverse length units and the per-pair operator's work
  /// array.
  static std::size_t operandScratchBytes(int p, int block_rows)
  {
    return ScratchInts::shmem_size(realCoefficientCount(p)) +
           ScratchDoubles::shmem_size(block_rows) +
           scratchCoefficientBytes<Real, ExecutionSpace>(expansions::m2lTeamScratchSize(p)) +
           2 * ScratchMatrix::shmem_size(0, 0) + ScratchInts::shmem_size(0);
  }

  static std::size_t localsScratchBytes(int p, int block_rows)
  {
    return scratchCoefficientBytes<Real, ExecutionSpace>(block_rows *
                                                         expansions::coefficientCount(p));
  }

  /// Whether the block's locals fit in team scratch beside a product of
  /// min_product_columns (Tuning::m2l_scratch_bytes); else they are summed in place.
  static bool accumulatesInScratch(int p, int block_rows)
  {
    return operandScratchBytes(p, block_rows) + localsScratchBytes(p, block_rows) +
               min_product_columns * columnBytes(p) <=
           Tune::m2l_scratch_bytes;
  }

  static std::size_t fixedScratchBytes(int p, int block_rows)
  {
    return operandScratchBytes(p, block_rows) +
           (accumulatesInScratch(p, block_rows) ? localsScratchBytes(p, block_rows) : 0);
  }

  /// Columns of one product that the backend's team scratch (Tuning::m2l_scratch_bytes)
  /// leaves room for, at most m2l_max_product_columns; 0 when not even one fits.
  static int productColumns(int p, int block_rows)
  {
    std::size_t const fixed = fixedScratchBytes(p, block_rows);
    if (fixed >= Tune::m2l_scratch_bytes)
      return 0;
    auto const fit = static_cast<int>((Tune::m2l_scratch_bytes - fixed) / columnBytes(p));
    return fit < Tune::m2l_max_product_columns ? fit : Tune::m2l_max_product_columns;
  }

  static std::size_t scratchBytes(int p, int columns, int block_rows)
  {
    return 2 * ScratchMatrix::shmem_size(realCoefficientCount(p), columns) +
           ScratchInts::shmem_size(columns) + fixedScratchBytes(p, block_rows);
  }

  /// product(:, 0..count) = A gathered(:, 0..count), A given transposed and padded
  /// (M2LMatrices.hpp).
  KOKKOS_INLINE_FUNCTION void multiply(TeamMember const &team, Real const *A_transposed,
                                       ScratchMatrix const &gathered, ScratchMatrix const &product,
                                       int count) const
  {
    int const n = realCoefficientCount(order);
    int const padded = paddedRealCount(order);
    if constexpr (kokkos_kernels_gemm)
    {
      Kokkos::View<Real const **, Kokkos::LayoutStride, Memory, Kokkos::MemoryUnmanaged> const A(
          A_transposed, Kokkos::LayoutStride(n, 1, n, padded));
      auto const used = Kokkos::make_pair(0, count);
      KokkosBatched::TeamGemm<TeamMember, KokkosBatched::Trans::NoTranspose,
                              KokkosBatched::Trans::NoTranspose,
                              KokkosBatched::Algo::Gemm::Blocked>::
          invoke(team, Real(1), A, Kokkos::subview(gathered, Kokkos::ALL, used), Real(0),
                 Kokkos::subview(product, Kokkos::ALL, used));
    }
    else
    {
      // Thread (row tile, column tile) keeps its tile of outputs in registers: per input
      // component, row_tile contiguous matrix entries and column_tile gathered values.
      // The last column tile repeats the last column and does not write the copies.
      constexpr int row_tile = Tune::m2l_row_tile;
      constexpr int column_tile = Tune::m2l_column_tile;
      static_assert(m2l_row_padding % row_tile == 0, "row tiles must divide the padding");
      int const row_tiles = padded / row_tile;
      int const column_tiles = (count + column_tile - 1) / column_tile;
      // Exact: item * column_tiles < row_tiles * column_tiles^2, far below 2^32.
      SmallDivisor const by_column_tiles(column_tiles);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, row_tiles * column_tiles), [&](int item) {
        int const row_tile_index = by_column_tiles.quotient(item);
        int const first_row = row_tile_index * row_tile;
        int const first_column = (item - row_tile_index * column_tiles) * column_tile;
        int column[column_tile];
        for (int c = 0; c < column_tile; ++c)
          column[c] = first_column + c < count ? first_column + c : count - 1;
        Real acc[column_tile][row_tile] = {};
        // acc += a (the matrix's tile entries of input component k) times the tile's
        // gathered values of component k.
        auto const accumulate = [&](Real const(&a)[row_tile], int k) {
          if constexpr (Tune::m2l_preload_tile_columns)
          {
            Real b[column_tile];
            for (int c = 0; c < column_tile; ++c)
              b[c] = gathered(k, column[c]);
            for (int c = 0; c < column_tile; ++c)
              for (int r = 0; r < row_tile; ++r)
                acc[c][r] += a[r] * b[c];
          }
          else
          {
            for (int c = 0; c < column_tile; ++c)
            {
              Real const b = gathered(k, column[c]);
              for (int r = 0; r < row_tile; ++r)
                acc[c][r] += a[r] * b;
            }
          }
        };
        // The matrix entries of `batch` input components are loaded before their products,
        // so that their loads wait one memory latency together (Tuning::m2l_component_batch).
        constexpr int batch = Tune::m2l_component_batch;
        Real const *const tile_rows = A_transposed + first_row;
        int k = 0;
        for (; k + batch <= n; k += batch)
        {
          Real a[batch][row_tile];
          for (int u = 0; u < batch; ++u)
            for (int r = 0; r < row_tile; ++r)
              a[u][r] = tile_rows[(k + u) * padded + r];
          for (int u = 0; u < batch; ++u)
            accumulate(a[u], k + u);
        }
        for (; k < n; ++k)
        {
          Real a[row_tile];
          for (int r = 0; r < row_tile; ++r)
            a[r] = tile_rows[k * padded + r];
          accumulate(a, k);
        }
        for (int c = 0; c < column_tile && first_column + c < count; ++c)
          for (int r = 0; r < row_tile && first_row + r < n; ++r)
            product(first_row + r, first_column + c) = acc[c][r];
      });
    }
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const block = team.league_rank();
    int const n = realCoefficientCount(order);
    int const count_complex = expansions::coefficientCount(order);
    int const first_row = block * groups.block_rows;
    int const rows = (first_row + groups.block_rows < num_rows ? first_row + groups.block_rows
                                                               : num_rows) -
                     first_row;
    ScratchMatrix gathered(team.team_scratch(0), n, columns);
    ScratchMatrix product(team.team_scratch(0), n, columns);
    // The row word (M2LGroups::rows) of each column's entry.
    ScratchInts column_words(team.team_scratch(0), columns);
    // Exact on the flattened (column, component) indices: they stay below columns * n, and
    // m2l_max_product_columns * n * n < 2^32 up to order 24 (n <= 650).
    SmallDivisor const by_n(n);
    ScratchInts component_parities(team.team_scratch(0), n);
    // inverse_units(r): 1 / the length unit of target row first_row + r, in double as the
    // class matrices' scaling is computed (a power of two away from the pair's).
    ScratchDoubles inverse_units(team.team_scratch(0), groups.block_rows);
    ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                   expansions::m2lTeamScratchSize(order));
    // The block's local expansions accumulate in team scratch and are written once, or in
    // place when they do not fit (the team alone writes its rows either way).
    ScratchCoefficients<Real, ExecutionSpace> block_locals(
        team.team_scratch(0), accumulate_in_scratch ? groups.block_rows * count_complex : 0);
    Kokkos::complex<Real> *const accumulated_complex =
        accumulate_in_scratch ? block_locals.data() : &locals(first_row, 0);
    Real *const accumulated = reinterpret_cast<Real *>(accumulated_complex);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * n),
                         [&](int i) { accumulated[i] = Real(0); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n),
                         [&](int i) { component_parities(i) = componentParities(i); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int r) {
      inverse_units(r) =
          1 / cellScale<double>(target_cells.side, target_cells.level(first_row + r));
    });
    // The first chunk's gather reads every component's parity, its sum every unit, and the
    // per-pair operator adds to locals that other threads have just zeroed.
    team.team_barrier();
    using Groups = tree::M2LGroups<Memory>;
    // The sign of component i of a column (an entry of row word `word`).
    auto const sign = [&](int word, int i) {
      auto const mirror = Groups::mirrorBits(static_cast<std::uint16_t>(word));
      return static_cast<Real>(tree::mirrorSign(mirror, component_parities(i)));
    };
    // The block-relative target row of a product column.
    auto const row_of = [&](int column) {
      return Groups::targetRow(static_cast<std::uint16_t>(column_words(column)));
    };

    for (auto chunk = groups.block_chunks(block); chunk < groups.block_chunks(block + 1); ++chunk)
    {
      auto const begin = groups.chunk_begin(chunk);
      auto const end = groups.chunk_begin(chunk + 1);
      int const cls = groups.chunk_classes(chunk);
      if (cls < 0)
      {
        for (auto e = begin; e < end; ++e)
        {
          int const t = first_row + Groups::targetRow(groups.rows(e));
          int const s = groups.sources(e);
          expansions::m2lTeam(team, order, centreOffset<Real>(target_cells, t, source_cells, s, 0),
                              centreOffset<Real>(target_cells, t, source_cells, s, 1),
                              centreOffset<Real>(target_cells, t, source_cells, s, 2),
                              &multipoles(s, 0),
                              accumulated_complex + (t - first_row) * count_complex,
                              work.data(), source_cells.template scale<Real>(s),
                              target_cells.template scale<Real>(t));
        }
        team.team_barrier();
        continue;
      }
      int delta, ox, oy, oz;
      tree::TranslationClassBounds::decode(groups.class_keys(cls), delta, ox, oy, oz);
      // Read where it is (through the L1 cache on a GPU): a copy to team scratch per chunk
      // cost more than it saved, and the scratch holds more product columns instead
      // (perf/RESULTS.md, 2026-11-24).
      Real const *matrix = &matrices(cls, 0, 0);
      // The pair's unit is the finer cell's: the target's, or 2^-delta times smaller when the
      // source is finer (delta < 0): a power of two, so the product is exactly the double
      // that the quotient 1 / unit gave before it was computed once per row.
      double const finer_factor = delta >= 0 ? 1.0 : static_cast<double>(1ULL << -delta);
      for (auto first = begin; first < end; first += columns)
      {
        int const count = end - first < columns ? static_cast<int>(end - first) : columns;
        // Each column's first component also keeps its entry's row word for the sum.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * n), [&](int item) {
          int const column = by_n.quotient(item);
          int const i = item - column * n;
          auto const entry = first + column;
          int const word = groups.rows(entry);
          auto const *M = reinterpret_cast<Real const *>(&multipoles(groups.sources(entry), 0));
          gathered(i, column) = M[i] * sign(word, i);
          if (i == 0)
            column_words(column) = word;
        });
        team.team_barrier();
        multiply(team, matrix, gathered, product, count);
        team.team_barrier();
        // Mirror images of one class can share a target; the stable sort kept each target's
        // entries adjacent, so the first column of a target adds them all, in order.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * n), [&](int item) {
          int const column = by_n.quotient(item);
          int const i = item - column * n;
          int const r = row_of(column);
          if (column > 0 && row_of(column - 1) == r)
            return;
          Real sum = Real(0);
          for (int c = column; c < count && row_of(c) == r; ++c)
            sum += product(i, c) * sign(column_words(c), i);
          Real const inv_unit = static_cast<Real>(inverse_units(r) * finer_factor);
          accumulated[r * n + i] += sum * inv_unit;
        });
        team.team_barrier();
      }
    }
    // Rows are contiguous in the LayoutRight locals.
    if (accumulate_in_scratch)
    {
      team.team_barrier();
      Real *const out = reinterpret_cast<Real *>(&locals(first_row, 0));
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * n),
                           [&](int i) { out[i] = accumulated[i]; });
    }
  }
};

} // namespace kfmm::detail

#endif
