// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_WORK_COUNT_HPP
#define KFMM_SOLVER_WORK_COUNT_HPP

// What the solver does and holds, for Stats: interaction counts, the flop estimate, the
// trees' depth and the memory held; each target's flops for the distributed solver's
// partition (seed 002 balances its partition by the work the previous evaluation measured);
// and whether the precision resolves the particles.

#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/ArgumentLaunch.hpp>
#include <kfmm/detail/DeferredCounts.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Resolution.hpp>
#include <kfmm/detail/SideInstance.hpp>
#include <kfmm/expansions/Operators.hpp>
#include <kfmm/farfield/Plan.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>
#include <kfmm/solver/State.hpp>
#include <kfmm/tree/PeriodicImage.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace kfmm::solver
{
/// The particles of the source cells of row `row` of a list.
template <class MemorySpace, class Offsets, class Sources>
KOKKOS_INLINE_FUNCTION std::size_t
rowSourceParticles(kernels::detail::CellView<MemorySpace> const &source_cells,
                   Offsets const &offsets, Sources const &sources, int row)
{
  std::size_t particles = 0;
  for (auto s = offsets(row); s < offsets(row + 1); ++s)
  {
    int const cell = tree::PeriodicImage::cellOf(sources(s));
    particles += source_cells.particle_end(cell) - source_cells.particle_begin(cell);
  }
  return particles;
}

/// Interactions of row `row` of a list whose rows are target leaves and each of whose entries
/// meets every target of the leaf once (the treecode's M2P list): targets times entries.
template <class MemorySpace, class Offsets>
struct LeafRowEntries
{
  kernels::detail::CellView<MemorySpace> target_cells;
  Offsets offsets;

  KOKKOS_FUNCTION void operator()(int row, std::size_t &sum) const
  {
    int const leaf = target_cells.leaves(row);
    std::size_t const targets = target_cells.particle_end(leaf) - target_cells.particle_begin(leaf);
    sum += targets * static_cast<std::size_t>(offsets(row + 1) - offsets(row));
  }
};

/// The interactions of a list whose rows are target leaves (LeafRowEntries), reduced into
/// `total` (a rank-0 View; DeferredCounts' slot: nothing waits for the device).
template <class ExecutionSpace, class MemorySpace, class Offsets, class Total>
void countLeafRowEntries(ExecutionSpace const &space,
                         kernels::detail::CellView<MemorySpace> const &target_cells,
                         Offsets const &offsets, Total const &total)
{
  Kokkos::parallel_reduce(
      "kfmm::Fmm::count_pairs",
      Kokkos::RangePolicy<ExecutionSpace, detail::ArgumentLaunch>(space, 0, offsets.extent(0) - 1),
      LeafRowEntries<MemorySpace, Offsets>{target_cells, offsets}, total);
}

/// Bytes held by the given Views.
template <class... Views>
std::size_t bytesOf(Views const &...views)
{
  return (std::size_t(0) + ... + (views.span() * sizeof(typename Views::value_type)));
}

/// The flops of each target particle's results: its leaf's near-field pairs, its leaf's M2P
/// translations (treecode), or its share of the M2L translations into its leaf and the
/// leaf's ancestors (those into a cell divided among the cell's targets), and its L2P. One
/// thread per target leaf; work(permutation(j)) for each of the leaf's sorted targets j.
template <class MemorySpace>
struct TargetWork
{
  kernels::detail::CellView<MemorySpace> target_cells;
  kernels::detail::CellView<MemorySpace> source_cells;
  Kokkos::View<std::int64_t *, MemorySpace> p2p_offsets; ///< rows: target leaves
  Kokkos::View<int *, MemorySpace> p2p_sources;
  Kokkos::View<std::int64_t *, MemorySpace> far_offsets; ///< rows: target cells (M2L), leaves
  bool far_rows_are_cells;
  double pair_flops;
  double far_flops; ///< per entry of the far-field list
  double target_flops;
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Kokkos::View<double *, MemorySpace> work;

  KOKKOS_FUNCTION void operator()(int row) const
  {
    int const leaf = target_cells.leaves(row);
    double const sources =
        static_cast<double>(rowSourceParticles(source_cells, p2p_offsets, p2p_sources, row));
    double w = pair_flops * sources + target_flops;
    if (far_rows_are_cells)
      for (int c = leaf; c >= 0; c = target_cells.parent(c))
        w += far_flops * static_cast<double>(far_offsets(c + 1) - far_offsets(c)) /
             (target_cells.particle_end(c) - target_cells.particle_begin(c));
    else if (far_offsets.extent(0) > 0)
      w += far_flops * static_cast<double>(far_offsets(row + 1) - far_offsets(row));
    for (int j = target_cells.particle_begin(leaf); j < target_cells.particle_end(leaf); ++j)
      work(permutation(j)) = w;
  }
};

/// Estimated flops of the M2L, from the counts in Stats.
template <class Real, class MemorySpace>
double m2lFlops(State<Real, MemorySpace> const &state)
{
  return farfield::flops(state.far_field, state.stats.m2l_interactions,
                         state.stats.m2l_per_pair_interactions, state.order());
}

/// Interaction counts, flop estimate, depth and memory, into Stats. The near field's pairs
/// came back with the lists' sizes; the treecode's pair count is a reduction into the
/// deferred counts, and the grouped M2L's pairs outside its classes are recorded there from
/// the grouping's device count on the `side` instance; readCounts reads them: the build does
/// not wait for them.
template <class ExecutionSpace, class Real, class MemorySpace>
void countWork(ExecutionSpace const &space, detail::SideInstance<ExecutionSpace> const &side,
               State<Real, MemorySpace> &state)
{
  using Counts = typename State<Real, MemorySpace>::Counts;
  auto &stats = state.stats;
  Options const &options = state.options;
  auto const &source_tree = state.source_tree;
  auto const &target_tree = state.target_tree;
  auto const &lists = state.lists;
  auto const &plan = state.far_field;
  bool const two = state.separateTargets();
  bool const fmm = options.method == Method::fmm;
  stats.order = state.order();
  stats.theta = options.theta;
  stats.leaf_size = options.leaf_size;
  stats.depth = detail::max(source_tree.depth(), target_tree.depth());
  stats.cells = static_cast<std::size_t>(source_tree.numCells()) +
                (two ? static_cast<std::size_t>(target_tree.numCells()) : 0);
  stats.leaves = static_cast<std::size_t>(source_tree.numLeaves()) +
                 (two ? static_cast<std::size_t>(target_tree.numLeaves()) : 0);
  // All particles at one point: the evaluation skips every stage.
  stats.p2p_interactions = state.allAtOnePoint() ? 0 : lists.near_pairs;
  stats.m2l_interactions = fmm ? lists.m2l.size : 0;
  if (fmm)
    stats.m2l_variant = m2lVariantName(plan.variant);
  stats.m2l_matrix_bytes = farfield::matrixBytes(plan);
  if (plan.variant == M2LVariant::grouped)
  {
    stats.m2l_classes = static_cast<std::size_t>(plan.groups.num_classes);
    // Left on the device by the grouping, on the side instance: read with the other
    // deferred counts.
    state.counts.record(side.space(), Counts::m2l_per_pair, plan.groups.per_pair_count);
  }
  if (plan.variant == M2LVariant::rotation)
  {
    stats.m2l_classes = static_cast<std::size_t>(plan.rotations.num_directions);
    stats.m2l_per_pair_interactions = static_cast<std::size_t>(plan.rotations.per_pair_entries);
  }
  if (options.method == Method::treecode && target_tree.numLeaves() > 0)
    countLeafRowEntries(space, state.targetCells(), lists.m2p.offsets,
                        state.counts.slot(Counts::m2p_pairs));
  int const p = state.order();
  double const sources = static_cast<double>(state.size());
  double const targets = static_cast<double>(state.numTargets());
  double const source_cells = static_cast<double>(source_tree.numCells());
  double const target_cells = static_cast<double>(target_tree.numCells());
  // Without the M2P's flops, which readCounts adds.
  stats.flops = kernels::detail::flops_per_interaction * double(stats.p2p_interactions) +
                sources * double(expansions::flops::p2m(p)) +
                source_cells * double(expansions::flops::m2m(p)) + m2lFlops(state);
  if (fmm)
    stats.flops += target_cells * double(expansions::flops::l2l(p)) +
                   targets * double(expansions::flops::l2p(p));
  auto const treeBytes = [](tree::Octree<MemorySpace> const &t) {
    return bytesOf(t.keys, t.permutation, t.cell_keys, t.level, t.centre, t.radius,
                   t.particle_begin, t.particle_end, t.first_child, t.child_count, t.parent,
                   t.leaves);
  };
  stats.bytes =
      bytesOf(state.x, state.q, state.results, state.target_ranks, state.multipoles, state.locals) +
      treeBytes(source_tree) + (two ? treeBytes(target_tree) + bytesOf(state.target_x) : 0) +
      bytesOf(lists.m2l.offsets, lists.m2l.sources, lists.m2p.offsets, lists.m2p.sources,
              lists.p2p.offsets, lists.p2p.sources, state.p2p_groups.entries) +
      plan.groups.bytes() + stats.m2l_matrix_bytes + bytesOf(state.shift_matrices);
  state.counts_pending = true;
}

/// The build's deferred counts into Stats, with the flops that depend on them; waits for the
/// device. Const: a query of the state's mutable counts.
template <class Real, class MemorySpace>
void readCounts(State<Real, MemorySpace> const &state)
{
  using Counts = typename State<Real, MemorySpace>::Counts;
  auto &stats = state.stats;
  state.counts.wait();
  state.counts_pending = false;
  stats.m2p_interactions = state.counts[Counts::m2p_pairs];
  // The distributed solver's sources hold other ranks' particles too, whose pairs those
  // ranks count: there each rank counts its own particles (the targets) alone, so that the
  // ranks' counts add up to about one rank's.
  stats.unresolved_pairs =
      state.counts[Counts::unresolved_targets] +
      (state.other_ranks_sources ? 0 : state.counts[Counts::unresolved_sources]);
  if (state.far_field.variant == M2LVariant::grouped)
    stats.m2l_per_pair_interactions = state.counts[Counts::m2l_per_pair];
  stats.precision_limited =
      detail::precisionLimited(stats.unresolved_pairs, state.countedParticles());
  stats.flops += double(stats.m2p_interactions) * double(expansions::flops::m2p(state.order()));
}

/// Stats of the build and of the last evaluation, the build's counts read first where they
/// have not been (readCounts).
template <class Real, class MemorySpace>
Stats const &currentStats(State<Real, MemorySpace> const &state)
{
  if (state.counts_pending)
    readCounts(state);
  return state.stats;
}

/// Throws kfmm::PrecisionError, naming `where`, when the build found that the precision
/// does not resolve the particles (Stats::precision_limited), unless
/// Options::allow_unresolved. Waits for the build's counts where it rounded positions.
template <class Real, class MemorySpace>
void requireResolved(State<Real, MemorySpace> const &state, std::string const &where)
{
  if (!state.rounds_positions || state.options.allow_unresolved ||
      !currentStats(state).precision_limited)
    return;
  throw detail::unresolvedError<Real>(where, state.stats.unresolved_pairs,
                                      state.countedParticles());
}

/// Each target's flops in the evaluations (TargetWork), into `work` (one entry per
/// target, in the order of the targets the solver was built with).
template <class ExecutionSpace, class Real, class MemorySpace>
void targetWork(ExecutionSpace const &space, State<Real, MemorySpace> const &state,
                Kokkos::View<double *, MemorySpace> const &work)
{
  int const p = state.order();
  bool const fmm = state.options.method == Method::fmm;
  auto const &lists = state.lists;
  // The M2L's flops per entry averaged over the variant's kinds of entries (its entries
  // are known on the host; the M2P's pair count, a deferred one, is not needed).
  double const m2l_entries = static_cast<double>(state.stats.m2l_interactions);
  double const far_flops = !fmm              ? double(expansions::flops::m2p(p))
                           : m2l_entries > 0 ? m2lFlops(state) / m2l_entries
                                             : 0;
  Kokkos::parallel_for("kfmm::Fmm::target_work",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, state.target_tree.numLeaves()),
                       TargetWork<MemorySpace>{state.targetCells(), state.sourceCells(),
                                               lists.p2p.offsets, lists.p2p.sources,
                                               fmm ? lists.m2l.offsets : lists.m2p.offsets, fmm,
                                               kernels::detail::flops_per_interaction, far_flops,
                                               fmm ? double(expansions::flops::l2p(p)) : 0.0,
                                               state.target_tree.permutation, work});
}

} // namespace kfmm::solver

#endif
