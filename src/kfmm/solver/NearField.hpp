// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_NEAR_FIELD_HPP
#define KFMM_SOLVER_NEAR_FIELD_HPP

// The near field: P2P, each target leaf's particles against the particles of the source
// leaves of its row of the P2P list, in groups of targets cut at the build
// (kernels/detail/TargetGroups.hpp; seed 001, section 3); for a tree of one leaf, the
// all-pairs kernel.

#include <kfmm/detail/ArgumentLaunch.hpp>
#include <kfmm/detail/TeamPolicies.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/kernels/DirectSum.hpp>
#include <kfmm/kernels/P2P.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>

#include <Kokkos_Core.hpp>

#include <stdexcept>

namespace kfmm::solver
{

/// P2P into the sorted results, its sources translated by `shift` (tree::ImageShift with
/// periodic boundaries, else tree::NoImageShift).
template <class ExecutionSpace, class Real, class MemorySpace, class Shift>
void p2p(ExecutionSpace const &space, State<Real, MemorySpace> &state, Shift const &shift)
{
  using Tune = tuning::Tuning<ExecutionSpace>;
  using S = State<Real, MemorySpace>;
  double const softening = state.frame.length(state.options.softening);
  auto const &lists = state.lists;
  using Kernel =
      kernels::P2PKernel<ExecutionSpace, Real, Tune::p2p_group_lanes, Tune::p2p_targets_per_thread,
                         typename S::Positions, decltype(state.q), decltype(lists.p2p.offsets),
                         decltype(lists.p2p.sources), typename S::SortedPotential,
                         typename S::SortedField, Shift>;
  // The groups were cut for this space's kernel when the solver was built.
  if (state.p2p_groups.targets != Kernel::group_targets)
    throw std::logic_error("kfmm::Fmm: the near field's target groups were made for another "
                           "execution space");
  int const groups_per_team = Tune::p2p_team_size / Tune::p2p_group_lanes;
  int const source_tile = Tune::p2pSourceTile(static_cast<int>(sizeof(typename Kernel::Staged)));
  Kokkos::parallel_for(
      "kfmm::Fmm::P2P",
      detail::TeamPolicy<ExecutionSpace, typename Tune::P2PLaunchBounds, detail::DefaultLaunch>(
          space, (state.p2p_groups.bound() + groups_per_team - 1) / groups_per_team,
          Tune::p2p_team_size)
          .set_scratch_size(
              0, Kokkos::PerTeam(Kernel::scratchBytes(Tune::p2p_team_size, source_tile))),
      Kernel{state.targetCells(), state.sourceCells(), state.target_x, state.x, state.q,
             lists.p2p.offsets, lists.p2p.sources, state.p2p_groups.entries, state.p2p_groups.count,
             state.sortedPotential(), state.sortedField(), static_cast<Real>(softening * softening),
             source_tile, !state.separateTargets(), shift});
}

/// The near field of a tree of one leaf (State::oneLeaf) into the sorted results: every
/// target against every source by the all-pairs kernel, in slices of the sources that occupy
/// the execution space (kernels/DirectSum.hpp), where the P2P kernel's groups of one leaf
/// leave most of a GPU idle. Positions and charges are in units already, and the sums stay
/// in units, as P2P's.
template <class ExecutionSpace, class Real, class MemorySpace>
void directSumStage(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  runStage(space, state.options, "P2P", state.stats.stage_seconds, [&] {
    kernels::launchDirectSumInUnits(
        "kfmm::Fmm::P2P_one_leaf", space, state.target_x, state.x, state.q, state.sortedPotential(),
        state.sortedField(), detail::UnitFrame{}, detail::PowerOfTwo<double>::of(0),
        detail::ResultScale<Real>::of(0, 0), state.frame.length(state.options.softening));
  });
}

/// The near field into the sorted results, zeroed first: every evaluation runs it before the
/// far field's last stage, the other that adds to them (solver::farFieldToTargets).
template <class ExecutionSpace, class Real, class MemorySpace>
void nearFieldStage(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  runStage(space, state.options, "P2P", state.stats.stage_seconds, [&] {
    detail::zeroFill(space, "kfmm::Fmm::clear_results", state.results);
    if (state.options.periodic.enabled)
      p2p(space, state, state.lists.shift);
    else
      p2p(space, state, tree::NoImageShift{});
  });
}

} // namespace kfmm::solver

#endif
