// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_STREAMING_HPP
#define KFMM_DETAIL_STREAMING_HPP

// Launch shapes for the kernels that pass once over an array of particles or values in order,
// a few operations per element (fills, keys, copies, checks, extents). Every caller names its
// kernel with a "kfmm::..." label.
//
// Kokkos 3.4 launches a RangePolicy on CUDA as blocks of 64 threads of one element each, so
// that a pass over a large array is bounded by how fast the GPU starts blocks, not by its
// memory's bandwidth. Its RangePolicy reductions launch at most 256 blocks, a quarter of the
// GPU's resident warps or less, too few to keep the memory busy.
// streamFor gives each work item several elements, streamReduce gives each team a chunk of
// elements: the backend's Tuning says how many (docs/TUNING.md, "Passes over arrays").
// Kernels that gather or scatter through a permutation stay one element per work item: with
// several, each thread waits on its random accesses one after the other.

#include <kfmm/tuning/Tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace kfmm::detail
{

/// Elements item, item + items, item + 2 items, ... below n for one work item: consecutive
/// items take consecutive elements, so the accesses of a warp stay contiguous.
template <class Functor>
struct StridedElements
{
  Functor functor;
  std::size_t n;
  std::size_t items;
  int per_item;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const
  {
    for (int k = 0; k < per_item; ++k)
    {
      std::size_t const i = item + k * items;
      if (i < n)
        functor(i);
    }
  }
};

/// functor(i) for every i in [0, n), in one kernel named `label`.
template <class ExecutionSpace, class Functor>
void streamFor(std::string const &label, ExecutionSpace const &space, std::size_t n,
               Functor const &functor)
{
  if (n == 0)
    return;
  constexpr int per_item = tuning::Tuning<ExecutionSpace>::stream_elements_per_item;
  std::size_t const items = (n + per_item - 1) / per_item;
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, items),
                       StridedElements<Functor>{functor, n, items, per_item});
}

/// A reduction over [0, n) by chunks of stream_team_size * stream_elements_per_thread
/// elements, one chunk per team: each thread adds its elements of the chunk to its own
/// value, and Kokkos joins every thread's value.
template <class ExecutionSpace, class Functor, class Value>
struct ChunkReduction
{
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Functor functor;
  std::size_t n;
  std::size_t chunk;

  KOKKOS_INLINE_FUNCTION void operator()(Member const &team, Value &value) const
  {
    std::size_t const begin = team.league_rank() * chunk;
    std::size_t const end = begin + chunk < n ? begin + chunk : n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end),
                         [&](std::size_t i) { functor(i, value); });
  }
};

/// Kokkos::parallel_reduce of functor(i, value) over [0, n) into `reducer` (a Kokkos reducer:
/// Kokkos::Min<std::int64_t>(result), say), in one kernel named `label`.
template <class ExecutionSpace, class Functor, class Reducer>
void streamReduce(std::string const &label, ExecutionSpace const &space, std::size_t n,
                  Functor const &functor, Reducer const &reducer)
{
  using Tune = tuning::Tuning<ExecutionSpace>;
  using Value = typename Reducer::value_type;
  std::size_t const chunk =
      static_cast<std::size_t>(Tune::stream_team_size) * Tune::stream_elements_per_thread;
  auto const teams = static_cast<int>((n + chunk - 1) / chunk);
  if (teams == 0)
  {
    reducer.init(reducer.reference());
    return;
  }
  Kokkos::parallel_reduce(
      label, Kokkos::TeamPolicy<ExecutionSpace>(space, teams, Tune::stream_team_size),
      ChunkReduction<ExecutionSpace, Functor, Value>{functor, n, chunk}, reducer);
}

} // namespace kfmm::detail

#endif
