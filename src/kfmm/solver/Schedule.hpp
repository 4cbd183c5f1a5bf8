// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_SCHEDULE_HPP
#define KFMM_SOLVER_SCHEDULE_HPP

// The schedule of kfmm::Fmm: which stages run, in which order, on which instance.
//
// Build: tree -> lists -> far-field plan -> setup -> work counts (solver/Build.hpp); given
// the charges of the one evaluation to come (kfmm::evaluate), their upward pass runs as soon
// as the trees are built, beside the lists' build (upwardAtBuild).
// Evaluation: charges -> sorted order -> P2M -> M2M (solver/Upward.hpp)
//   -> M2L -> L2L (fmm; solver/FarField.hpp, solver/Downward.hpp) beside P2P
//   (solver/NearField.hpp) -> L2P (fmm) or M2P (treecode) -> caller's order; for trees of
//   one leaf (State::oneLeaf), charges -> sorted order -> the direct sum -> caller's order
//   (solver/Results.hpp) -> with Options::check_samples, the error on sampled targets
//   against the direct sum, and the tolerance's contract (solver/SampledCheck.hpp).
// P2M to L2L run beside P2P on a second instance where the backend allows it
// (detail/SideInstance.hpp, Options::concurrent_far_field). Every stage is a Kokkos team
// kernel in which one team writes one target (cell or leaf), or one block of targets (the
// grouped M2L), so no atomics are needed.

#include <kfmm/Options.hpp>
#include <kfmm/detail/Resolution.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/SideInstance.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/solver/Build.hpp>
#include <kfmm/solver/Downward.hpp>
#include <kfmm/solver/NearField.hpp>
#include <kfmm/solver/Results.hpp>
#include <kfmm/solver/SampledCheck.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>
#include <kfmm/solver/Upward.hpp>
#include <kfmm/solver/WorkCount.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <utility>

namespace kfmm::solver
{

/// The instance on which the far field runs beside the caller's `space`: a second one where
/// the backend has one, unless Options::concurrent_far_field is off or the stages are timed.
template <class ExecutionSpace>
detail::SideInstance<ExecutionSpace> sideInstance(ExecutionSpace const &space,
                                                  Options const &options)
{
  return detail::SideInstance<ExecutionSpace>(space,
                                              options.concurrent_far_field && !options.time_stages);
}

/// The charges sorted on the caller's instance, then P2M and M2M after them on the side
/// instance, where the far field's translations follow (fieldStages).
template <class ExecutionSpace, class Real, class MemorySpace, class Charges>
void sortedUpward(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                  Charges const &charges, typename State<Real, MemorySpace>::Stages &record)
{
  sortChargesStage(space, state, charges, record);
  // A tree of one leaf reads no multipole.
  if (state.oneLeaf())
    return;
  auto const side = sideInstance(space, state.options);
  side.follow();
  upwardStages(side.space(), state, record);
}

/// The start of kfmm::evaluate's one evaluation, of `charges`, once the trees are built:
/// the arrays and the charges' unit on the caller's instance, then the charges' sort and, on
/// the side instance, P2M and M2M (sortedUpward). The lists' build, which leaves much of a
/// GPU idle (small traversal rounds, a read of their sizes by the host), then runs beside the
/// upward pass rather than before it. The evaluation skips these stages (State::upward_done).
/// The side instance may still read the sorted positions and charges, the source tree's
/// cells and the shift matrices, and write the multipoles, while the caller's instance builds
/// on: none of these goes back to the workspace before the evaluation, so no later take() on
/// the caller's instance reuses their memory (detail/Workspace.hpp). Only the arrays these
/// stages use are taken here, before the lists' transient ones; the others wait for the
/// setup.
template <class ExecutionSpace, class Real, class MemorySpace, class Charges>
void upwardAtBuild(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                   std::string const &where, Charges const &charges)
{
  detail::requireExtent(where, "charges", charges.extent(0), state.size());
  if (!state.computes())
    return;
  runStage(space, state.options, "allocate", state.build_stages,
           [&] { allocateUpward(space, state); });
  chargeUnitStage(space, state, where, charges, state.build_stages);
  sortedUpward(space, state, charges, state.build_stages);
  state.upward_done = true;
}

/// The build of a solver: `sources` acting on `*targets`, or on themselves when `targets` is
/// null (one tree). Given the `charges` of the one evaluation to come (kfmm::evaluate), their
/// upward pass runs as soon as the trees are built (upwardAtBuild), beside the lists' build.
template <class ExecutionSpace, class Real, class MemorySpace, class Sources, class Targets,
          class Charges = Kokkos::View<Real *, MemorySpace>>
void build(ExecutionSpace const &space, State<Real, MemorySpace> &state, std::string const &where,
           Sources const &sources, Targets const *targets, Charges const *charges = nullptr)
{
  detail::ScopedRegion region("kfmm::Fmm::build");
  state.rounds_positions =
      detail::roundsPositions<Real, typename Sources::non_const_value_type>() ||
      (targets && detail::roundsPositions<Real, typename Targets::non_const_value_type>());
  detail::validate(state.options, where);
  state.options =
      detail::withTunedParameters<tuning::Tuning<ExecutionSpace>, Real>(state.options, where);
  runStage(space, state.options, "tree", state.build_stages,
           [&] { buildTrees(space, state, where, sources, targets); });
  if (charges)
    upwardAtBuild(space, state, where, *charges);
  buildOnTrees(space, sideInstance(space, state.options), state, where, sources, targets, true);
}

/// The near and far fields into the sorted results, once P2M and M2M are queued on the side
/// instance (sortedUpward). The far field's translations need nothing of the near field, and
/// the near field nothing of them, until the far field's last stage adds into the results:
/// they run on the side instance, beside the near field on the caller's, unless
/// Options::concurrent_far_field is off or the stages are timed; the last stage follows both.
/// In either case the near field adds before it, so the sums are the same.
template <class ExecutionSpace, class Real, class MemorySpace>
void fieldStages(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  // A tree of one leaf: nothing is far, and the near field is the direct sum.
  if (state.oneLeaf())
  {
    state.stats.far_field_concurrent = false;
    directSumStage(space, state);
    return;
  }
  auto const side = sideInstance(space, state.options);
  state.stats.far_field_concurrent = side.concurrent();
  side.follow();
  farFieldTranslations(side.space(), state);
  nearFieldStage(space, state);
  side.join();
  farFieldToTargets(space, state);
}

/// One evaluation: potential and field at every target due to `charges` at the sources, in
/// the caller's order, checked where Options::check_results (solver/Results.hpp), the
/// precision's resolution required (solver::requireResolved), and with
/// Options::check_samples their error measured on sampled targets, and with a tolerance
/// required within it (solver/SampledCheck.hpp). Messages name `where`.
template <class ExecutionSpace, class Real, class MemorySpace, class Charges, class Potential,
          class Field>
void evaluate(ExecutionSpace const &space, State<Real, MemorySpace> &state,
              std::string const &where, Charges const &charges, Potential const &potential,
              Field const &field)
{
  detail::ScopedRegion region("kfmm::Fmm::evaluate");
  auto const n = state.numTargets();
  detail::requireExtent(where, "charges", charges.extent(0), state.size());
  detail::requireExtent(where, "potential", potential.extent(0), n);
  detail::requireExtent(where, "field", field.extent(0), n);
  detail::requireExtent(where, "field (columns)", field.extent(1), 3);
  // The build of kfmm::evaluate's solver ran the charges' unit, their sort and the upward
  // pass (upwardAtBuild).
  bool const upward_done = std::exchange(state.upward_done, false);
  auto &stats = state.stats;
  stats.stage_seconds = state.build_stages;
  stats.results_checked = false;
  stats.far_field_concurrent = false;
  stats.sampled_targets = 0;
  stats.sampled_potential_error = 0;
  stats.sampled_field_error = 0;
  stats.tolerance_missed = false;
  if (!upward_done)
    chargeUnitStage(space, state, where, charges, stats.stage_seconds);
  if (n == 0)
    return;
  if (!state.computes())
    // No sources, or every pair is at distance zero and contributes nothing: no O(N^2) near
    // field of the one leaf that holds them all.
    runStage(space, state.options, state.size() == 0 ? "no sources" : "all at one point",
             stats.stage_seconds, [&] {
               Kokkos::deep_copy(space, potential, 0);
               Kokkos::deep_copy(space, field, 0);
             });
  else
  {
    if (!upward_done)
      sortedUpward(space, state, charges, stats.stage_seconds);
    fieldStages(space, state);
    returnResults(space, state, potential, field);
  }
  if (state.options.check_results)
  {
    runStage(space, state.options, "check results", stats.stage_seconds, [&] {
      checkResults(space, state, where, charges, potential, field, state.chargeUnitOnDevice());
    });
    stats.results_checked = true;
  }
  requireResolved(state, where);
  if (state.options.check_samples > 0)
  {
    runStage(space, state.options, "sampled check", stats.stage_seconds,
             [&] { measureSampledError(space, state, where, charges, potential, field); });
    requireTolerance(state, where);
  }
}

} // namespace kfmm::solver

#endif
