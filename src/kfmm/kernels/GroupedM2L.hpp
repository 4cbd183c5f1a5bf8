// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_GROUPED_M2L_HPP
#define KFMM_KERNELS_GROUPED_M2L_HPP

// The grouped M2L: one team per block of target cells (tree/M2LGroups.hpp). For each chunk
// of its entries (one translation class, distinct targets) the team
//   1. gathers the chunk's source multipoles as the columns of a matrix in team scratch,
//   2. multiplies them by the class matrix (kernels/M2LMatrices.hpp) with Kokkos Kernels'
//      team GEMM (KokkosBatched::TeamGemm), and
//   3. adds each product column, divided by the pair's length unit, to its target's local
//      expansion.
// A chunk's offsets are mirror images of its class's offset: the gathered columns and the
// products take the mirror's signs (tree::mirrorSign). Large chunks are cut into products
// of at most `columns` columns. The team alone writes
// its block's locals, in the fixed order of the sorted entries: no atomics, and the result
// is the same bit for bit from run to run. Entries outside the dense classes (class -1)
// are translated one pair at a time with m2lTeam, as the per-pair M2L does.

#include <kfmm/detail/Tuning.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/kernels/M2LMatrices.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/tree/M2LGroups.hpp>

#include <KokkosBatched_Gemm_Decl.hpp>
#include <Kokkos_Core.hpp>

#include <type_traits>

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

  /// Kokkos Kernels' register-blocked or plain team GEMM, as the backend's tuning says.
  using GemmAlgorithm =
      typename std::conditional<Tuning<ExecutionSpace>::m2l_gemm_blocked,
                                KokkosBatched::Algo::Gemm::Blocked,
                                KokkosBatched::Algo::Gemm::Unblocked>::type;

  CellView<Memory> tree;
  tree::M2LGroups<Memory> groups;
  M2LMatrixArray<Real, Memory> matrices;
  CoefficientArray<Real, Memory> multipoles;
  CoefficientArray<Real, Memory> locals;
  int order;
  int columns; ///< most columns of one product
  int num_rows;

  static std::size_t scratchBytes(int p, int columns)
  {
    int const n = realCoefficientCount(p);
    return 2 * ScratchMatrix::shmem_size(n, columns) +
           scratchCoefficientBytes<Real, ExecutionSpace>(expansions::m2lTeamScratchSize(p));
  }

  /// The sign of real component i under the mirror bits (tree::mirrorSign).
  KOKKOS_INLINE_FUNCTION static Real sign(int mirror, int i)
  {
    int const n = expansions::detail::degreeOf(i / 2);
    return static_cast<Real>(tree::mirrorSign(mirror, n, i / 2 - expansions::coefficientIndex(n, 0), i));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const block = team.league_rank();
    int const n = realCoefficientCount(order);
    int const first_row = block * groups.block_rows;
    int const last_row = first_row + groups.block_rows < num_rows ? first_row + groups.block_rows
                                                                  : num_rows;
    ScratchMatrix gathered(team.team_scratch(0), n, columns);
    ScratchMatrix product(team.team_scratch(0), n, columns);
    ScratchCoefficients<Real, ExecutionSpace> work(team.team_scratch(0),
                                                   expansions::m2lTeamScratchSize(order));
    // The block's locals are contiguous (LayoutRight rows).
    Real *const block_locals = reinterpret_cast<Real *>(&locals(first_row, 0));
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, (last_row - first_row) * n),
                         [&](int i) { block_locals[i] = Real(0); });

    for (auto chunk = groups.block_chunks(block); chunk < groups.block_chunks(block + 1); ++chunk)
    {
      auto const begin = groups.chunk_begin(chunk);
      auto const end = groups.chunk_begin(chunk + 1);
      int const cls = groups.classes(begin) < 0 ? -1 : groups.classes(begin) / 8;
      if (cls < 0)
      {
        for (auto e = begin; e < end; ++e)
        {
          int const t = groups.targets(e);
          int const s = groups.sources(e);
          expansions::m2lTeam(team, order, tree.template offset<Real>(t, s, 0),
                              tree.template offset<Real>(t, s, 1),
                              tree.template offset<Real>(t, s, 2), &multipoles(s, 0),
                              &locals(t, 0), work.data(), tree.template scale<Real>(s),
                              tree.template scale<Real>(t));
        }
        team.team_barrier();
        continue;
      }
      int delta, ox, oy, oz;
      tree::TranslationClassBounds::decode(groups.class_keys(cls), delta, ox, oy, oz);
      auto const matrix = Kokkos::subview(matrices, cls, Kokkos::ALL, Kokkos::ALL);
      for (auto first = begin; first < end; first += columns)
      {
        int const count = end - first < columns ? static_cast<int>(end - first) : columns;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * n), [&](int item) {
          int const column = item / n;
          int const i = item % n;
          auto const *M = reinterpret_cast<Real const *>(&multipoles(groups.sources(first + column), 0));
          gathered(i, column) = M[i] * sign(groups.classes(first + column) % 8, i);
        });
        team.team_barrier();
        auto const used = Kokkos::make_pair(0, count);
        KokkosBatched::TeamGemm<TeamMember, KokkosBatched::Trans::NoTranspose,
                                KokkosBatched::Trans::NoTranspose, GemmAlgorithm>::
            invoke(team, Real(1), matrix, Kokkos::subview(gathered, Kokkos::ALL, used), Real(0),
                   Kokkos::subview(product, Kokkos::ALL, used));
        team.team_barrier();
        // Mirror images of one class can share a target; the stable sort kept each target's
        // entries adjacent, so the first column of a target adds them all, in order.
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count * n), [&](int item) {
          int const column = item / n;
          int const i = item % n;
          int const t = groups.targets(first + column);
          if (column > 0 && groups.targets(first + column - 1) == t)
            return;
          Real sum = Real(0);
          for (int c = column; c < count && groups.targets(first + c) == t; ++c)
            sum += product(i, c) * sign(groups.classes(first + c) % 8, i);
          int const finer = delta >= 0 ? tree.level(t) : tree.level(t) - delta;
          Real const inv_unit = static_cast<Real>(1 / cellScale<double>(tree.side, finer));
          reinterpret_cast<Real *>(&locals(t, 0))[i] += sum * inv_unit;
        });
        team.team_barrier();
      }
    }
  }
};

} // namespace kfmm::detail

#endif
