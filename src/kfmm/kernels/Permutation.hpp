// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_PERMUTATION_HPP
#define KFMM_KERNELS_PERMUTATION_HPP

// Moving particle data between the caller's order and units and the tree's sorted (Morton)
// order in the solver's units (detail/UnitFrame.hpp), in which every cell's particles are
// contiguous. `permutation(i)` is the caller's index of sorted particle i. The change of
// units rides on these copies, so it costs no pass of its own.

#include <kfmm/detail/Resolution.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/detail/ZeroFill.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace kfmm::kernels
{

/// sorted(i, :) = positions(permutation(i), :) in the frame's units, for one chunk of sorted
/// particles per team; when the positions are wider than Real, the chunk's unresolved pairs
/// (i - 1, i) are counted too (detail/Resolution.hpp), into chunk_counts(chunk). The unit
/// coordinates (in double) of the chunk and of the particle before it pass through team
/// scratch, so that each position is gathered once for both: in two kernels, each gathering
/// the positions through the permutation, the count took as long as the sort.
/// The count is not a Kokkos reduction: a team adds its pairs in scratch and writes one count,
/// and sortPositions sums the teams' counts. As a Kokkos reduction, its code took a large
/// share of the kernel's instructions and left the GPU's multiprocessors idle for much of
/// its time; a thread per particle alone did not change that (docs/TUNING.md, "Passes over
/// arrays").
template <class ExecutionSpace, class Permutation, class Positions, class Sorted, class ChunkCounts>
struct SortPositions
{
  using Real = typename Sorted::non_const_value_type;
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Units =
      Kokkos::View<double *[3], Kokkos::LayoutRight, typename ExecutionSpace::scratch_memory_space,
                   Kokkos::MemoryUnmanaged>;
  using TeamCount =
      Kokkos::View<int *, typename ExecutionSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  static constexpr bool counts_unresolved =
      kfmm::detail::roundsPositions<Real, typename Positions::non_const_value_type>();
  /// Sorted particles per team.
  static constexpr int chunk = 256;

  Permutation permutation;
  Positions positions;
  kfmm::detail::UnitFrame frame;
  Sorted sorted;
  ChunkCounts chunk_counts; ///< when counts_unresolved: one per team

  static std::size_t scratchBytes()
  {
    return counts_unresolved ? Units::shmem_size(chunk + 1) + TeamCount::shmem_size(1) : 0;
  }

  KOKKOS_INLINE_FUNCTION void operator()(Member const &team) const
  {
    if constexpr (!counts_unresolved)
      sortChunk(team, Units());
    else
    {
      Units const units(team.team_scratch(0), chunk + 1);
      TeamCount const count(team.team_scratch(0), 1);
      Kokkos::single(Kokkos::PerTeam(team), [&]() { count(0) = 0; });
      sortChunk(team, units);
      team.team_barrier();
      std::int64_t const begin = static_cast<std::int64_t>(team.league_rank()) * chunk;
      std::int64_t const end = chunkEnd(begin);
      // Unresolved pairs are rare: a scratch atomic each costs less than a team reduction.
      Kokkos::parallel_for(
          Kokkos::TeamThreadRange(team, begin > 0 ? begin : std::int64_t(1), end),
          [&](std::int64_t i) {
            if (kfmm::detail::unresolvedPair<Real>(&units(i - begin, 0), &units(i - begin + 1, 0)))
              Kokkos::atomic_add(&count(0), 1);
          });
      team.team_barrier();
      Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk_counts(team.league_rank()) = count(0); });
    }
  }

private:
  KOKKOS_INLINE_FUNCTION std::int64_t chunkEnd(std::int64_t begin) const
  {
    auto const n = static_cast<std::int64_t>(sorted.extent(0));
    return begin + chunk < n ? begin + chunk : n;
  }

  /// The chunk's sorted positions; with `units` (row i - begin + 1 for particle i, row 0 the
  /// one before the chunk, when there is one) also their unit coordinates in double. The
  /// particle before the chunk is gathered by the thread of the chunk's first, beside its
  /// own: both gathers' loads are issued before either value is used.
  KOKKOS_INLINE_FUNCTION void sortChunk(Member const &team, Units const &units) const
  {
    std::int64_t const begin = static_cast<std::int64_t>(team.league_rank()) * chunk;
    std::int64_t const end = chunkEnd(begin);
    bool const keeps_units = units.extent(0) > 0;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](std::int64_t i) {
      bool const before = keeps_units && i == begin && begin > 0;
      auto const p = permutation(i);
      auto const p_before = before ? permutation(i - 1) : p;
      double x[3], x_before[3];
      for (int d = 0; d < 3; ++d)
        x[d] = static_cast<double>(positions(p, d));
      if (before)
        for (int d = 0; d < 3; ++d)
          x_before[d] = static_cast<double>(positions(p_before, d));
      for (int d = 0; d < 3; ++d)
      {
        double const u = frame.position(x[d], d);
        if (keeps_units)
          units(i - begin + 1, d) = u;
        if (before)
          units(0, d) = frame.position(x_before[d], d);
        sorted(i, d) = static_cast<Real>(u);
      }
    });
  }
};

/// The sum of SortPositions' per-team counts.
template <class Counts>
struct SumChunkCounts
{
  Counts counts;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, std::size_t &sum) const
  {
    sum += static_cast<std::size_t>(counts(i));
  }
};

/// sorted(i, :) = positions(permutation(i), :) in the frame's units, in the sorted array's
/// type (the difference from the shift is taken in double, before any rounding to it).
/// Writes into `unresolved` (a rank-0 View of std::size_t) the pairs of particles adjacent in
/// the sorted order (sorted i - 1 and i) at a non-zero distance that rounding their unit
/// coordinates to that type moves by more than unresolved_rounding of that distance (max
/// norms, in double from the caller's `positions`; detail/Resolution.hpp); 0 for positions
/// given in that type or a narrower one. Where the device can write `unresolved` (the
/// solver's detail/DeferredCounts.hpp) nothing waits for the device; a View of host-only
/// memory waits for the count. The teams' counts take a block of `memory` while the sort
/// runs.
template <class ExecutionSpace, class MemorySpace, class Permutation, class Positions, class Sorted,
          class Count>
void sortPositions(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                   Permutation const &permutation, Positions const &positions,
                   kfmm::detail::UnitFrame const &frame, Sorted const &sorted,
                   Count const &unresolved)
{
  static_assert(Count::rank == 0, "kfmm::kernels::sortPositions: the count is a rank-0 View");
  using ChunkCounts = Kokkos::View<int *, MemorySpace>;
  using Kernel = SortPositions<ExecutionSpace, Permutation, Positions, Sorted, ChunkCounts>;
  auto const n = sorted.extent(0);
  auto const teams = static_cast<int>((n + Kernel::chunk - 1) / Kernel::chunk);
  Kernel kernel{permutation, positions, frame, sorted, {}};
  if (n > 0)
  {
    if constexpr (Kernel::counts_unresolved)
      memory.take(space, kernel.chunk_counts, "kfmm::permutation::chunk_unresolved", teams);
    Kokkos::parallel_for(
        "kfmm::permutation::sort_positions",
        Kokkos::TeamPolicy<ExecutionSpace>(
            space, teams, kfmm::tuning::Tuning<ExecutionSpace>::sort_positions_team_size)
            .set_scratch_size(0, Kokkos::PerTeam(Kernel::scratchBytes())),
        kernel);
    if constexpr (Kernel::counts_unresolved)
    {
      Kokkos::parallel_reduce("kfmm::permutation::count_unresolved",
                              Kokkos::RangePolicy<ExecutionSpace>(space, 0, teams),
                              SumChunkCounts<ChunkCounts>{kernel.chunk_counts}, unresolved);
      memory.give(kernel.chunk_counts);
      return;
    }
  }
  if constexpr (Kokkos::SpaceAccessibility<ExecutionSpace,
                                           typename Count::memory_space>::accessible)
    kfmm::detail::zeroFill(space, "kfmm::permutation::no_unresolved_pairs", unresolved);
  else
    unresolved() = 0;
}

/// sorted(i) = charges(permutation(i)) in the charge unit unit() (detail/UnitFrame.hpp's
/// ChargeUnit, in device memory: in double, then rounded).
template <class Permutation, class Charges, class SortedCharges, class Unit>
struct SortCharges
{
  using Real = typename SortedCharges::non_const_value_type;

  Permutation permutation;
  Charges charges;
  Unit unit;
  SortedCharges sorted;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    sorted(i) = static_cast<Real>(unit().to_unit(static_cast<double>(charges(permutation(i)))));
  }
};

/// sorted(i) = charges(permutation(i)) in the charge unit unit() (a rank-0 View of a
/// ChargeUnit).
template <class ExecutionSpace, class Permutation, class Charges, class SortedCharges, class Unit>
void sortCharges(ExecutionSpace const &space, Permutation const &permutation,
                 Charges const &charges, Unit const &unit, SortedCharges const &sorted)
{
  static_assert(Unit::rank == 0, "kfmm::kernels::sortCharges: the unit is a rank-0 View");
  Kokkos::parallel_for(
      "kfmm::permutation::sort_charges",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted.extent(0)),
      SortCharges<Permutation, Charges, SortedCharges, Unit>{permutation, charges, unit, sorted});
}

/// ranks(permutation(i)) = i.
template <class Permutation, class Ranks>
struct InvertPermutation
{
  Permutation permutation;
  Ranks ranks;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    ranks(permutation(i)) = static_cast<typename Ranks::non_const_value_type>(i);
  }
};

/// The sorted position of every caller's particle: ranks(permutation(i)) = i. Built once
/// per solver, it lets the results go back to the caller's order as a gather
/// (unsortResults).
template <class ExecutionSpace, class Permutation, class Ranks>
void invertPermutation(ExecutionSpace const &space, Permutation const &permutation,
                       Ranks const &ranks)
{
  Kokkos::parallel_for("kfmm::permutation::invert",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, permutation.extent(0)),
                       InvertPermutation<Permutation, Ranks>{permutation, ranks});
}

/// potential(j) and field(j, :) from the sorted results of the caller's particle j (row
/// ranks(j) of `sorted`: potential, field x, y, z), scaled back by unit().results;
/// not_finite() counts the particles whose results, as written, are NaN or infinite.
template <class Ranks, class Sorted, class Unit, class Potential, class Field, class Count>
struct UnsortResults
{
  Ranks ranks;
  Sorted sorted;
  Unit unit;
  Potential potential;
  Field field;
  Count not_finite;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t j) const
  {
    using PotentialValue = typename Potential::non_const_value_type;
    using FieldValue = typename Field::non_const_value_type;
    auto const scale = unit().results;
    auto const i = ranks(j);
    auto const phi = static_cast<PotentialValue>(scale.potential(sorted(i, 0)));
    potential(j) = phi;
    bool finite = kfmm::detail::isfinite(phi);
    for (int d = 0; d < 3; ++d)
    {
      auto const f = static_cast<FieldValue>(scale.field(sorted(i, d + 1)));
      field(j, d) = f;
      finite = finite && kfmm::detail::isfinite(f);
    }
    // Rare (a result beyond the precision's range), so an atomic costs nothing.
    if (!finite)
      Kokkos::atomic_add(&not_finite(), typename Count::value_type(1));
  }
};

/// The sorted results (rows of potential and field) in the caller's order, scaled back to
/// the caller's units in the results' precision by unit().results (a rank-0 View of a
/// ChargeUnit, detail/UnitFrame.hpp). A gather: each caller's particle reads its
/// row (16 bytes in float, one memory sector) and its results are written in order. As a
/// scatter through the permutation, each of the four results was a write of its own to a
/// random place, several times slower than the gather and the permutation's inversion in
/// the build together (docs/TUNING.md, "Passes over arrays").
/// `not_finite` (a rank-0 int View the kernel can write, zero before) becomes the number of
/// particles whose results are NaN or infinite: checked as they are written, the results
/// need no pass of their own.
template <class ExecutionSpace, class Ranks, class Sorted, class Unit, class Potential, class Field,
          class Count>
void unsortResults(ExecutionSpace const &space, Ranks const &ranks, Sorted const &sorted,
                   Unit const &unit, Potential const &potential, Field const &field,
                   Count const &not_finite)
{
  static_assert(Count::rank == 0, "kfmm::kernels::unsortResults: the count is a rank-0 View");
  static_assert(Unit::rank == 0, "kfmm::kernels::unsortResults: the unit is a rank-0 View");
  Kokkos::parallel_for("kfmm::permutation::unsort_results",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, ranks.extent(0)),
                       UnsortResults<Ranks, Sorted, Unit, Potential, Field, Count>{
                           ranks, sorted, unit, potential, field, not_finite});
}

/// Whether sorted particle i is the caller's particle `index`.
template <class Permutation>
struct IsSortedPositionOf
{
  Permutation permutation;
  std::int64_t index;

  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t i) const
  {
    return static_cast<std::int64_t>(permutation(i)) == index;
  }
};

/// The sorted position of the caller's particle `index`: the i with permutation(i) == index
/// (one search, for messages).
template <class ExecutionSpace, class Permutation>
std::int64_t sortedIndexOf(ExecutionSpace const &space, Permutation const &permutation,
                           std::int64_t index)
{
  return kfmm::detail::firstIndexWhere(space, static_cast<std::int64_t>(permutation.extent(0)),
                                       IsSortedPositionOf<Permutation>{permutation, index});
}

} // namespace kfmm::kernels

#endif
