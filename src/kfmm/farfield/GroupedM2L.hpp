// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_GROUPED_M2L_HPP
#define KFMM_FARFIELD_GROUPED_M2L_HPP

// The grouped M2L (the matrix products of Fortin & Lamotte 2013): one team per block of
// target cells (farfield/M2LGroups.hpp). For each chunk of its entries (one translation class,
// each target's entries adjacent) the team
//   1. gathers the chunk's source multipoles as the columns of a matrix in team scratch,
//   2. multiplies them by the class matrix (farfield/M2LMatrices.hpp), either with Kokkos
//      Kernels' team GEMM (KokkosBatched::TeamGemm) or with a register-tiled product in which
//      each thread computes a tile of m2l_row_tile_float (or _double) outputs of
//      m2l_column_tile columns from the matrix (read where it is, through the L1 cache on a
//      GPU, the entries of a few input components loaded before their products) and the
//      gathered columns, each tile's entries of one component read as one vector: the
//      backend's measured choice (two columns per thread on a GPU; on a CPU, more, so that
//      the tile holds enough independent fused multiply-add chains to fill the vector units);
//   3. adds each target's product columns, divided by the pair's length unit, to its local
//      expansion, summed in team scratch and written once at the end (in place when the
//      block's locals do not fit in scratch).
// A chunk's offsets are images of its class's offset under reflections and the exchange of
// x and y (farfield/M2LGroups.hpp): the gathered columns and the products take the image's signs
// and exchanges (reflect), in the two orders T(o) = D_F D_S T(o_c) D_S D_F asks for. Large
// chunks are cut into products of at most `columns` columns; each column's entry row word is
// kept in team scratch with it, and each target row's run of columns, for the sum. The team
// alone writes its block's locals, in the fixed order of the sorted entries: no atomics, and
// the result is the same bit for bit from run to run. Entries outside the dense classes
// (class -1) are translated one pair at a time with m2lTeam, as the per-pair M2L does.
// The scratch's layout is the backend's (Tuning::m2l_column_major). Row-major (a GPU), the
// gather and the sum take one complex coefficient per item (of two columns in the gather,
// whose chains of loads then overlap; of a target row in the sum, which so reads its run
// directly instead of each column checking whether it starts one): on a GPU they had taken
// together about three quarters as many of the kernel's instructions as the product.
// Column-major (the host), an item is a whole column, gathered into panels of a column tile
// and summed from a contiguous product column by loops along it that vectorise, with the
// images' signs and exchanges as factors: per coefficient and with strided stores they had
// taken two thirds of the M2L (docs/TUNING.md, "The grouped M2L's product").
// The loops over a product's (column or row, coefficient) pairs split their flattened index
// with a SmallDivisor and take each target's inverse length unit from a table made once per
// team: on the host the integer and floating-point divisions they replace cost more than the
// product itself (docs/TUNING.md, "The grouped M2L's product").

#include <kfmm/detail/Math.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/farfield/M2LGroups.hpp>
#include <kfmm/farfield/M2LMatrices.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/tree/PeriodicImage.hpp>

#include <KokkosBatched_Gemm_Decl.hpp>
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kfmm::farfield
{

/// `N` consecutive reals read as one vector: a 16-byte load on a GPU for four floats, one
/// vector register on a CPU. The address must be aligned to the struct.
template <class Real, int N>
struct alignas(N * sizeof(Real)) RealVector
{
  Real v[N];
};

template <class ExecutionSpace, class Real>
struct GroupedM2LKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  /// Whether the product's columns are contiguous in team scratch and the gathered ones
  /// packed in panels (Tuning::m2l_column_major): a column is then gathered and summed by
  /// a loop along it; else each scratch row holds a component of every column.
  static constexpr bool column_major = Tune::m2l_column_major;
  using RowMajorMatrix =
      Kokkos::View<Real **, Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                   Kokkos::MemoryUnmanaged>;
  using ProductMatrix =
      Kokkos::View<Real **,
                   std::conditional_t<column_major, Kokkos::LayoutLeft, Kokkos::LayoutRight>,
                   typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using ScratchInts =
      Kokkos::View<int *, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  using ScratchReals =
      Kokkos::View<Real *, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;

  kfmm::kernels::detail::CellView<Memory> target_cells;
  kfmm::kernels::detail::CellView<Memory> source_cells;
  M2LGroups<Memory> groups;
  M2LMatrixArray<Real, Memory> matrices;
  kfmm::kernels::detail::CoefficientArray<Real, Memory> multipoles;
  kfmm::kernels::detail::CoefficientArray<Real, Memory> locals;
  int order;
  int num_rows;
  tree::ImageShift shift; ///< periodic boundaries: the sources' images (tree/PeriodicImage.hpp)
  // Derived from the above and the backend's tuning by the constructor:
  int columns;                ///< most columns of one product
  bool accumulate_in_scratch; ///< sum the block's locals in team scratch, else in place

  GroupedM2LKernel(kfmm::kernels::detail::CellView<Memory> const &target_cells_,
                   kfmm::kernels::detail::CellView<Memory> const &source_cells_,
                   M2LGroups<Memory> const &groups_, M2LMatrixArray<Real, Memory> const &matrices_,
                   kfmm::kernels::detail::CoefficientArray<Real, Memory> const &multipoles_,
                   kfmm::kernels::detail::CoefficientArray<Real, Memory> const &locals_, int order_,
                   int num_rows_, tree::ImageShift shift_)
      : target_cells(target_cells_), source_cells(source_cells_), groups(groups_),
        matrices(matrices_), multipoles(multipoles_), locals(locals_), order(order_),
        num_rows(num_rows_), shift(shift_), columns(productColumns(order_, groups_.block_rows)),
        accumulate_in_scratch(accumulatesInScratch(order_, groups_.block_rows))
  {
  }

  /// Team scratch of one launch.
  std::size_t scratchBytes() const { return scratchBytes(order, columns, groups.block_rows); }

  static constexpr bool kokkos_kernels_gemm = Tune::m2l_kokkos_kernels_gemm;
  static constexpr int row_tile = std::is_same<Real, float>::value ? Tune::m2l_row_tile_float
                                                                   : Tune::m2l_row_tile_double;
  static constexpr int column_tile = Tune::m2l_column_tile;
  using RowVector = RealVector<Real, row_tile>;
  using ColumnVector = RealVector<Real, column_tile>;
  /// The gathered columns are read column_tile at a time, as one vector.
  static constexpr std::size_t gathered_alignment = sizeof(ColumnVector);
  static_assert(!(column_major && kokkos_kernels_gemm),
                "Kokkos Kernels' team GEMM takes the gathered columns row-major");

  /// Column-major, the gathered columns in panels of column_tile columns, each panel stored
  /// component by component (the packing of a BLAS's operand): the product reads a tile's
  /// values of one component as one vector, and a column is written with the stride of its
  /// panel. Read along a column, the gathered values made the compiler vectorise the product's
  /// loop over components instead of broadcasting them.
  struct PanelColumns
  {
    Real *data;
    int n;
    KOKKOS_INLINE_FUNCTION Real &operator()(int k, int column) const
    {
      return data[((column / column_tile) * n + k) * column_tile + column % column_tile];
    }
  };
  using GatheredMatrix = std::conditional_t<column_major, PanelColumns, RowMajorMatrix>;
  static_assert(column_tile % 2 == 0, "the gather takes the tiled product's columns in halves");

  /// Smallest product worth running: fewer columns re-read the class matrix too often.
  static constexpr int min_product_columns = 8;

  /// Team scratch of one product column: its gathered and product components and its
  /// entry's row word.
  static std::size_t columnBytes(int p)
  {
    return 2 * realCoefficientCount(p) * sizeof(Real) + sizeof(int);
  }

  /// Team scratch besides the product's columns and the block's locals: the components'
  /// symmetry words (or, column-major, their image factors), the block's inverse length units, its
  /// rows' runs of columns, the per-pair operator's work array, and the gathered columns'
  /// alignment.
  static std::size_t operandScratchBytes(int p, int block_rows)
  {
    int const n = realCoefficientCount(p);
    return ScratchInts::shmem_size(column_major ? 0 : n) +
           ScratchReals::shmem_size(column_major ? image_factor_rows * n : 0) +
           ScratchReals::shmem_size(block_rows) + ScratchInts::shmem_size(3 * block_rows) +
           kfmm::kernels::detail::scratchCoefficientBytes<Real, ExecutionSpace>(
               expansions::m2lTeamScratchSize(p)) +
           2 * RowMajorMatrix::shmem_size(0, 0) + ScratchInts::shmem_size(0) + gathered_alignment;
  }

  static std::size_t localsScratchBytes(int p, int block_rows)
  {
    return kfmm::kernels::detail::scratchCoefficientBytes<Real, ExecutionSpace>(
        block_rows * expansions::coefficientCount(p));
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
  /// leaves room for, a whole number of column tiles and at most m2l_max_product_columns;
  /// 0 when not even one tile fits.
  static int productColumns(int p, int block_rows)
  {
    static_assert(Tune::m2l_max_product_columns % column_tile == 0,
                  "a product holds whole column tiles");
    std::size_t const fixed = fixedScratchBytes(p, block_rows);
    if (fixed >= Tune::m2l_scratch_bytes)
      return 0;
    auto const fit = static_cast<int>((Tune::m2l_scratch_bytes - fixed) / columnBytes(p)) /
                     column_tile * column_tile;
    return fit < Tune::m2l_max_product_columns ? fit : Tune::m2l_max_product_columns;
  }

  static std::size_t scratchBytes(int p, int columns, int block_rows)
  {
    return 2 * RowMajorMatrix::shmem_size(realCoefficientCount(p), columns) +
           ScratchInts::shmem_size(columns) + fixedScratchBytes(p, block_rows);
  }

  /// A component's symmetry word (`symmetry` in team scratch): bit f set (f < 8) when the
  /// reflections f (expansions::mirrorSign) flip it, and expansions::exchangeCode from bit 8.
  static constexpr int exchange_shift = 8;

  /// Column-major, the images' action on the components as factors (`factors` in team scratch,
  /// row by row of n): row f < image_exchange_bit the signs of the reflections f, and the
  /// exchange D_S's factors of a component's own part (row exchange_same) and of the other
  /// part of its coefficient (row exchange_other), one of them 0.
  static constexpr int exchange_same = image_exchange_bit;
  static constexpr int exchange_other = image_exchange_bit + 1;
  static constexpr int image_factor_rows = image_exchange_bit + 2;

  /// out[i column_tile] = (D_S D_F in)[i] for one column of n components, D_S D_F of the
  /// image `image` (tree::imageBits) from its frame to the class's: the gather into a panel,
  /// column-major.
  KOKKOS_INLINE_FUNCTION static void gatherColumn(TeamMember const &team,
                                                  Real const *KOKKOS_RESTRICT in,
                                                  Real *KOKKOS_RESTRICT out, int image,
                                                  Real const *KOKKOS_RESTRICT factors, int n)
  {
    Real const *const sign = factors + (image & (image_exchange_bit - 1)) * n;
    if (!(image & image_exchange_bit))
    {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, n),
                           [&](int i) { out[i * column_tile] = sign[i] * in[i]; });
      return;
    }
    // Component i ^ 1 is the other part of component i's coefficient.
    Real const *const same = factors + exchange_same * n;
    Real const *const other = factors + exchange_other * n;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, n), [&](int i) {
      out[i * column_tile] = same[i] * sign[i] * in[i] + other[i] * sign[i ^ 1] * in[i ^ 1];
    });
  }

  /// out += scale D_F D_S in for one column of n components, (D_F D_S) of the image `image`
  /// from the class's frame back to its own: the sum, column-major.
  KOKKOS_INLINE_FUNCTION static void addColumn(TeamMember const &team,
                                               Real const *KOKKOS_RESTRICT in,
                                               Real *KOKKOS_RESTRICT out, int image,
                                               Real const *KOKKOS_RESTRICT factors, int n,
                                               Real scale)
  {
    Real const *const sign = factors + (image & (image_exchange_bit - 1)) * n;
    if (!(image & image_exchange_bit))
    {
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, n),
                           [&](int i) { out[i] += scale * sign[i] * in[i]; });
      return;
    }
    Real const *const same = factors + exchange_same * n;
    Real const *const other = factors + exchange_other * n;
    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, n), [&](int i) {
      out[i] += scale * sign[i] * (same[i] * in[i] + other[i] * in[i ^ 1]);
    });
  }

  /// The real and imaginary parts (re, im) of one coefficient, whose components' symmetry
  /// words are `word_re` and `word_im`, taken by the image `image` (tree::imageBits): when
  /// `to_class`, from the image's frame to the class's, D_S D_F (the gather); else back,
  /// D_F D_S (the sum). D_F and D_S are their own inverses.
  KOKKOS_INLINE_FUNCTION static void reflect(Real &re, Real &im, int word_re, int word_im,
                                             int image, bool to_class)
  {
    int const mirror = image & (image_exchange_bit - 1);
    bool const exchange = image & image_exchange_bit;
    if (exchange && !to_class)
      exchangeParts(re, im, word_re, word_im);
    re = (word_re >> mirror) & 1 ? -re : re;
    im = (word_im >> mirror) & 1 ? -im : im;
    if (exchange && to_class)
      exchangeParts(re, im, word_re, word_im);
  }

  /// D_S on one coefficient's parts (expansions::exchangeCode).
  KOKKOS_INLINE_FUNCTION static void exchangeParts(Real &re, Real &im, int word_re, int word_im)
  {
    int const code_re = word_re >> exchange_shift;
    int const code_im = word_im >> exchange_shift;
    Real const a = code_re & 1 ? im : re;
    Real const b = code_im & 1 ? re : im;
    re = code_re & 2 ? -a : a;
    im = code_im & 2 ? -b : b;
  }

  /// product(:, 0..count) = A gathered(:, 0..count), A given transposed and padded
  /// (M2LMatrices.hpp); the gathered columns from count to the next whole column tile are
  /// zeros.
  KOKKOS_INLINE_FUNCTION void multiply(TeamMember const &team, Real const *A_transposed,
                                       GatheredMatrix const &gathered, ProductMatrix const &product,
                                       int count) const
  {
    int const n = realCoefficientCount(order);
    int const padded = paddedRealCount<ExecutionSpace, Real>(order);
    if constexpr (kokkos_kernels_gemm)
    {
      Kokkos::View<Real const **, Kokkos::LayoutStride, Memory, Kokkos::MemoryUnmanaged> const A(
          A_transposed, Kokkos::LayoutStride(n, 1, n, padded));
      auto const used = Kokkos::make_pair(0, count);
      KokkosBatched::TeamGemm<
          TeamMember, KokkosBatched::Trans::NoTranspose, KokkosBatched::Trans::NoTranspose,
          KokkosBatched::Algo::Gemm::Blocked>::invoke(team, Real(1), A,
                                                      Kokkos::subview(gathered, Kokkos::ALL, used),
                                                      Real(0),
                                                      Kokkos::subview(product, Kokkos::ALL, used));
    }
    else
    {
      // Thread (row tile, column tile) keeps its tile of outputs in registers: per input
      // component, one vector of row_tile contiguous matrix entries (the matrix's rows are
      // padded to whole tiles and its allocation aligned) and one of column_tile gathered
      // values (the product's columns are whole tiles).
      static_assert(kernels::detail::matrixRowPadding<ExecutionSpace, Real>() % row_tile == 0,
                    "row tiles must divide the padding");
      int const row_tiles = padded / row_tile;
      int const column_tiles = (count + column_tile - 1) / column_tile;
      // Exact: item * column_tiles < row_tiles * column_tiles^2, far below 2^32.
      kfmm::detail::SmallDivisor const by_column_tiles(column_tiles);
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, row_tiles * column_tiles), [&](int item) {
        int const row_tile_index = by_column_tiles.quotient(item);
        int const first_row = row_tile_index * row_tile;
        int const first_column = (item - row_tile_index * column_tiles) * column_tile;
        Real acc[column_tile][row_tile] = {};
        // acc += a (the matrix's tile entries of input component k) times the tile's
        // gathered values of component k.
        auto const accumulate = [&](RowVector const &a, int k) {
          ColumnVector const b =
              *reinterpret_cast<ColumnVector const *>(&gathered(k, first_column));
          for (int c = 0; c < column_tile; ++c)
          {
            // On a CPU a tile's rows are the vector lanes, each gathered value broadcast:
            // without this GCC 12 vectorised over the tile's columns or components instead,
            // shuffling the accumulators at every step (docs/TUNING.md).
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#pragma omp simd
#endif
            for (int r = 0; r < row_tile; ++r)
              acc[c][r] += a.v[r] * b.v[c];
          }
        };
        // The matrix entries of `batch` input components are loaded before their products,
        // so that their loads wait one memory latency together (Tuning::m2l_component_batch).
        constexpr int batch = Tune::m2l_component_batch;
        Real const *const tile_rows = A_transposed + first_row;
        auto const rowVector = [&](int k) {
          return *reinterpret_cast<RowVector const *>(tile_rows + k * padded);
        };
        int k = 0;
        for (; k + batch <= n; k += batch)
        {
          RowVector a[batch];
          for (int u = 0; u < batch; ++u)
            a[u] = rowVector(k + u);
          for (int u = 0; u < batch; ++u)
            accumulate(a[u], k + u);
        }
        for (; k < n; ++k)
          accumulate(rowVector(k), k);
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
    int const rows =
        (first_row + groups.block_rows < num_rows ? first_row + groups.block_rows : num_rows) -
        first_row;
    Real *const gathered_data = static_cast<Real *>(
        team.team_scratch(0).get_shmem_aligned(n * columns * sizeof(Real), gathered_alignment));
    GatheredMatrix gathered = [&]() {
      if constexpr (column_major)
        return PanelColumns{gathered_data, n};
      else
        return RowMajorMatrix(gathered_data, n, columns);
    }();
    ProductMatrix product(team.team_scratch(0), n, columns);
    // The row word (M2LGroups::rows) of each column's entry.
    ScratchInts column_words(team.team_scratch(0), columns);
    // Exact on the flattened (column or row, complex coefficient c) indices: they stay below
    // max(columns, block_rows) * c, and max(m2l_max_product_columns, max_block_rows) * c^2
    // < 2^32 up to order 24 (c <= 325).
    kfmm::detail::SmallDivisor const by_coefficients(count_complex);
    // symmetry(i): the symmetry word of real component i (reflect); column-major, factors
    // (image_factor_rows) instead.
    ScratchInts symmetry(team.team_scratch(0), column_major ? 0 : n);
    ScratchReals factors(team.team_scratch(0), column_major ? image_factor_rows * n : 0);
    // inverse_units(r): 1 / the length unit of target row first_row + r, computed in double
    // as the class matrices' scaling is (a power of two away from the pair's).
    ScratchReals inverse_units(team.team_scratch(0), groups.block_rows);
    // Row r's columns of the current product are run_first(r) .. run_end(r) - 1 when
    // run_product(r) is the product's number: the sum then reads a row's run without
    // looking for it, and rows without entries in the product cost one comparison.
    ScratchInts runs(team.team_scratch(0), 3 * groups.block_rows);
    int *const run_first = runs.data();
    int *const run_end = run_first + groups.block_rows;
    int *const run_product = run_end + groups.block_rows;
    kfmm::kernels::detail::ScratchCoefficients<Real, ExecutionSpace> work(
        team.team_scratch(0), expansions::m2lTeamScratchSize(order));
    // The block's local expansions accumulate in team scratch and are written once, or in
    // place when they do not fit (the team alone writes its rows either way).
    kfmm::kernels::detail::ScratchCoefficients<Real, ExecutionSpace> block_locals(
        team.team_scratch(0), accumulate_in_scratch ? groups.block_rows * count_complex : 0);
    Kokkos::complex<Real> *const accumulated_complex =
        accumulate_in_scratch ? block_locals.data() : &locals(first_row, 0);
    Real *const accumulated = reinterpret_cast<Real *>(accumulated_complex);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * n),
                         [&](int i) { accumulated[i] = Real(0); });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int i) {
      int const parities = componentParities(i);
      int const code = componentExchange(i);
      if constexpr (column_major)
      {
        for (int mirror = 0; mirror < image_exchange_bit; ++mirror)
          factors(mirror * n + i) = static_cast<Real>(expansions::mirrorSign(mirror, parities));
        Real const sign = code & 2 ? Real(-1) : Real(1);
        factors(exchange_same * n + i) = code & 1 ? Real(0) : sign;
        factors(exchange_other * n + i) = code & 1 ? sign : Real(0);
      }
      else
      {
        int word = code << exchange_shift;
        for (int mirror = 0; mirror < image_exchange_bit; ++mirror)
          word |= expansions::mirrorSign(mirror, parities) < 0 ? 1 << mirror : 0;
        symmetry(i) = word;
      }
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int r) {
      inverse_units(r) =
          static_cast<Real>(1 / kfmm::kernels::detail::cellScale<double>(
                                    target_cells.side, target_cells.level(first_row + r)));
      run_product[r] = -1;
    });
    // The first chunk's gather reads every component's symmetry word, its sum every unit and run,
    // and the per-pair operator adds to locals that other threads have just zeroed.
    team.team_barrier();
    using Groups = M2LGroups<Memory>;
    auto const rowOfEntry = [&](std::int64_t entry) {
      return Groups::targetRow(groups.rows(entry));
    };

    int product_number = 0;
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
          int const entry = groups.sources(e);
          int const s = tree::PeriodicImage::cellOf(entry);
          expansions::m2lTeam(
              team, order,
              kfmm::kernels::detail::centreOffset<Real>(target_cells, t, source_cells, s,
                                                        shift(entry, 0), 0),
              kfmm::kernels::detail::centreOffset<Real>(target_cells, t, source_cells, s,
                                                        shift(entry, 1), 1),
              kfmm::kernels::detail::centreOffset<Real>(target_cells, t, source_cells, s,
                                                        shift(entry, 2), 2),
              &multipoles(s, 0), accumulated_complex + (t - first_row) * count_complex, work.data(),
              source_cells.template scale<Real>(s), target_cells.template scale<Real>(t));
        }
        team.team_barrier();
        continue;
      }
      int delta, ox, oy, oz;
      TranslationClassBounds::decode(groups.class_keys(cls), delta, ox, oy, oz);
      // Read where it is (through the L1 cache on a GPU): a copy to team scratch per chunk
      // cost more than it saved, and the scratch holds more product columns instead
      // (docs/TUNING.md, "The grouped M2L's product").
      Real const *matrix = &matrices(cls, 0, 0);
      // The pair's unit is the finer cell's: the target's, or 2^-delta times smaller when the
      // source is finer (delta < 0). A power of two: the product with a row's inverse unit
      // is exactly the unit's quotient rounded once.
      Real const finer_factor = delta >= 0 ? Real(1) : static_cast<Real>(1ULL << -delta);
      for (auto first = begin; first < end; first += columns, ++product_number)
      {
        int const count = end - first < columns ? static_cast<int>(end - first) : columns;
        int const tiled_count = (count + column_tile - 1) / column_tile * column_tile;
        // Each column's entry keeps its row word, and marks where its row's run starts and
        // ends.
        auto const markColumn = [&](int column, int word) {
          auto const entry = first + column;
          column_words(column) = word;
          int const r = Groups::targetRow(static_cast<std::uint16_t>(word));
          if (column == 0 || rowOfEntry(entry - 1) != r)
          {
            run_first[r] = column;
            run_product[r] = product_number;
          }
          if (column == count - 1 || rowOfEntry(entry + 1) != r)
            run_end[r] = column + 1;
        };
        // The columns past `count` to the tile's end are zeros.
        if constexpr (column_major)
        {
          // A column per item, its components in one vector loop.
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tiled_count), [&](int column) {
            Real *const out = &gathered(0, column);
            if (column >= count)
            {
              Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, n),
                                   [&](int i) { out[i * column_tile] = Real(0); });
              return;
            }
            int const word = groups.rows(first + column);
            gatherColumn(team,
                         reinterpret_cast<Real const *>(&multipoles(
                             tree::PeriodicImage::cellOf(groups.sources(first + column)), 0)),
                         out, Groups::imageBits(static_cast<std::uint16_t>(word)), factors.data(),
                         n);
            Kokkos::single(Kokkos::PerThread(team), [&]() { markColumn(column, word); });
          });
        }
        else
        {
          // One complex coefficient of two columns, half the tiled product apart, per item:
          // each thread has two independent chains of loads (entry, source, multipole) in
          // flight.
          int const half = tiled_count / 2;
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, half * count_complex), [&](int item) {
            int const pair = by_coefficients.quotient(item);
            int const j = item - pair * count_complex;
            int const columns_here[2] = {pair, pair + half};
            int words[2];
            Kokkos::complex<Real> values[2];
            for (int u = 0; u < 2; ++u)
            {
              int const column = columns_here[u];
              words[u] = column < count ? groups.rows(first + column) : 0;
              values[u] =
                  column < count
                      ? multipoles(tree::PeriodicImage::cellOf(groups.sources(first + column)), j)
                      : Kokkos::complex<Real>(0, 0);
            }
            int const word_re = symmetry(2 * j);
            int const word_im = symmetry(2 * j + 1);
            for (int u = 0; u < 2; ++u)
            {
              int const column = columns_here[u];
              Real re = values[u].real();
              Real im = values[u].imag();
              reflect(re, im, word_re, word_im,
                      Groups::imageBits(static_cast<std::uint16_t>(words[u])), true);
              gathered(2 * j, column) = re;
              gathered(2 * j + 1, column) = im;
              if (j == 0 && column < count)
                markColumn(column, words[u]);
            }
          });
        }
        team.team_barrier();
        multiply(team, matrix, gathered, product, count);
        team.team_barrier();
        // Mirror images of one class can share a target; the stable sort kept each target's
        // entries adjacent, so a row adds its run's columns, in order.
        if constexpr (column_major)
        {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](int r) {
            if (run_product[r] != product_number)
              return;
            Real const inv_unit = inverse_units(r) * finer_factor;
            for (int c = run_first[r]; c < run_end[r]; ++c)
              addColumn(team, &product(0, c), accumulated + r * n,
                        Groups::imageBits(static_cast<std::uint16_t>(column_words(c))),
                        factors.data(), n, inv_unit);
          });
        }
        else
        {
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows * count_complex), [&](int item) {
            int const r = by_coefficients.quotient(item);
            if (run_product[r] != product_number)
              return;
            int const j = item - r * count_complex;
            int const word_re = symmetry(2 * j);
            int const word_im = symmetry(2 * j + 1);
            Real real = Real(0);
            Real imaginary = Real(0);
            for (int c = run_first[r]; c < run_end[r]; ++c)
            {
              Real re = product(2 * j, c);
              Real im = product(2 * j + 1, c);
              reflect(re, im, word_re, word_im,
                      Groups::imageBits(static_cast<std::uint16_t>(column_words(c))), false);
              real += re;
              imaginary += im;
            }
            Real const inv_unit = inverse_units(r) * finer_factor;
            accumulated[r * n + 2 * j] += real * inv_unit;
            accumulated[r * n + 2 * j + 1] += imaginary * inv_unit;
          });
        }
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

} // namespace kfmm::farfield

#endif
