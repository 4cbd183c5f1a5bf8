// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_BUILD_HPP
#define KFMM_SOLVER_BUILD_HPP

// The build: the octrees of the sources and targets on one cube (Morton keys and the radix
// sort, tree/Octree.hpp), moved into the solver's units; the interaction lists
// (tree/InteractionLists.hpp); the far field's plan (farfield/Plan.hpp); the arrays of the
// evaluations and the near field's target groups; and the work counts (solver/WorkCount.hpp).

#include <kfmm/Options.hpp>
#include <kfmm/detail/DeferredCounts.hpp>
#include <kfmm/detail/Resolution.hpp>
#include <kfmm/detail/SideInstance.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/farfield/M2LGroups.hpp>
#include <kfmm/farfield/Plan.hpp>
#include <kfmm/kernels/Permutation.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/kernels/detail/TargetGroups.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>
#include <kfmm/solver/Upward.hpp>
#include <kfmm/solver/WorkCount.hpp>
#include <kfmm/tree/DeviceCube.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <optional>
#include <string>
#include <tuple>

namespace kfmm::solver
{

/// The trees into the solver's frame (detail/UnitFrame.hpp); one tree serves as both when
/// the targets are not a set of their own.
template <class ExecutionSpace, class Real, class MemorySpace>
void moveTreesToFrame(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                      std::string const &where, bool two_trees)
{
  state.frame = detail::unitFrame(state.source_tree.cube, where);
  tree::moveToFrame(space, state.source_tree, state.frame);
  if (two_trees)
    tree::moveToFrame(space, state.target_tree, state.frame);
  else
    state.target_tree = state.source_tree;
}

/// How the solver's own tree builds measure their leaves' radii (tree::detail::buildCells):
/// the particles sorted into `sorted` (taken here; the state keeps them, in its frame and
/// precision, with their unresolved pairs counted into the count `unresolved`), then the
/// radii from them, read in order (tree::detail::SortedPoints), rather than gathered through
/// the permutation a second time.
template <class ExecutionSpace, class Real, class MemorySpace>
auto sortingLeafRadii(State<Real, MemorySpace> &state, std::string const &where,
                      typename State<Real, MemorySpace>::Positions &sorted, char const *label,
                      typename State<Real, MemorySpace>::Counts::Count unresolved)
{
  return [&state, where, &sorted, label, unresolved](ExecutionSpace const &space,
                                                     tree::Octree<MemorySpace> const &tree,
                                                     auto const &positions) {
    // The frame, as soon as the host knows the cube (both trees share it).
    state.frame = detail::unitFrame(tree.cube, where);
    state.memory->take(space, sorted, label, tree.numParticles());
    kernels::sortPositions(space, *state.memory, tree.permutation, positions, state.frame, sorted,
                           state.counts.slot(unresolved));
    using Points = tree::detail::SortedPoints<typename State<Real, MemorySpace>::Positions>;
    tree::detail::leafRadiiOf(space, tree, Points{sorted, state.frame});
  };
}

/// The trees of `sources` and of `*targets` (or of the sources alone, one tree, when
/// `targets` is null) on one cube, in the solver's frame, with the particles sorted.
template <class ExecutionSpace, class Real, class MemorySpace, class Sources, class Targets>
void buildTrees(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                std::string const &where, Sources const &sources, Targets const *targets)
{
  using Counts = typename State<Real, MemorySpace>::Counts;
  char const *const sources_name = targets ? "sources" : "positions";
  tree::detail::checkPositionsShape<ExecutionSpace>(where, sources, sources_name);
  if (targets)
    tree::detail::checkPositionsShape<ExecutionSpace>(where, *targets, "targets");
  detail::require(!(targets && state.options.periodic.enabled), where,
                  "option 'periodic' needs the particles to be both the sources and the targets: "
                  "separate targets are not supported yet");
  // With periodic boundaries the cube is the period: the box given, or the particles' own.
  Periodic const &box = state.options.periodic;
  if (box.enabled && !box.ownCube())
    state.cube.fix(tree::Cube{{box.lower[0], box.lower[1], box.lower[2]}, box.side[0]});
  else
    state.cube.fix(std::nullopt);
  // Both trees on one cube, so that their cells lie on one grid (the lists' rule and the
  // M2L's translation classes compare cells of the two). The device finds it, and checks the
  // positions with it: the host learns both at the first tree's first read of its levels,
  // and names the first bad row then (tree/DeviceCube.hpp).
  state.cube.find(space, *state.memory, sources, targets);
  auto const not_finite = [&] {
    detail::requireFinite(space, where, sources_name, sources);
    if (targets)
      detail::requireFinite(space, where, "targets", *targets);
  };
  tree::detail::CheckedDeviceCube<MemorySpace, decltype(not_finite)> const cube{state.cube,
                                                                                not_finite};
  tree::detail::SplitByCount const rule{state.options.leaf_size};
  // The particles' order inside the cells is free: the keys are sorted only as far as the
  // trees' levels need (tree::detail::KeyOrder).
  auto const reads = tree::detail::LevelReads::tuned;
  auto const order = tree::detail::KeyOrder::cell_levels;
  auto const source_radii = sortingLeafRadii<ExecutionSpace>(
      state, where, state.x, "kfmm::Fmm::sorted_positions", Counts::unresolved_sources);
  if (targets)
    // Both trees' levels are read together, where they are counted.
    std::tie(state.source_tree, state.target_tree) = tree::detail::buildTwoOctreesOfValidInput(
        space, *state.memory, sources, *targets, cube, rule, source_radii,
        sortingLeafRadii<ExecutionSpace>(state, where, state.target_x, "kfmm::Fmm::sorted_targets",
                                         Counts::unresolved_targets),
        reads, order);
  else
  {
    state.source_tree = tree::detail::buildOctreeOfValidInput(space, *state.memory, sources, cube,
                                                              rule, source_radii, reads, order);
    state.target_x = state.x;
  }
  moveTreesToFrame(space, state, where, targets != nullptr);
}

/// The sorted positions of trees the solver did not build (the caller's prebuilt trees),
/// with their unresolved pairs.
template <class ExecutionSpace, class Real, class MemorySpace, class Sources, class Targets>
void sortPositions(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                   Sources const &sources, Targets const *targets)
{
  using Counts = typename State<Real, MemorySpace>::Counts;
  auto &memory = *state.memory;
  memory.take(space, state.x, "kfmm::Fmm::sorted_positions", state.size());
  if (state.separateTargets())
    memory.take(space, state.target_x, "kfmm::Fmm::sorted_targets", state.numTargets());
  kernels::sortPositions(space, memory, state.source_tree.permutation, sources, state.frame,
                         state.x, state.counts.slot(Counts::unresolved_sources));
  if (targets)
    kernels::sortPositions(space, memory, state.target_tree.permutation, *targets, state.frame,
                           state.target_x, state.counts.slot(Counts::unresolved_targets));
  else
    state.target_x = state.x;
}

/// The arrays that the charges' unit and sort and the upward pass use (the charges, the
/// evaluation's checks, the multipoles, the shift matrices): taken early where the build
/// runs the upward pass (solver::upwardAtBuild), so that nothing the side instance reads goes
/// back to the workspace before the evaluation.
template <class ExecutionSpace, class Real, class MemorySpace>
void allocateUpward(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  using S = State<Real, MemorySpace>;
  auto &memory = *state.memory;
  int const order = state.order();
  memory.take(space, state.q, "kfmm::Fmm::sorted_charges", state.size());
  memory.take(space, state.checks, "kfmm::Fmm::evaluation_checks", S::check_count);
  detail::zeroFill(space, "kfmm::Fmm::clear_evaluation_checks", state.checks);
  memory.take(space, state.largest_charge, "kfmm::Fmm::largest_charge");
  memory.take(space, state.charge_unit, "kfmm::Fmm::charge_unit");
  memory.take(space, state.multipoles, "kfmm::Fmm::multipoles", state.source_tree.numCells(),
              state.coefficients());
  if (shiftsByMatrices<ExecutionSpace>(order))
    state.shift_matrices = kernels::buildShiftMatrices<Real, ExecutionSpace, MemorySpace>(
        space, memory, order, tuning::Tuning<ExecutionSpace>::expansionTeamSize(order));
}

/// The other arrays (the results, the targets' ranks, the locals): taken in the setup, after
/// the lists' transient arrays went back to the workspace, whose blocks they may then reuse
/// rather than raise the peak.
template <class ExecutionSpace, class Real, class MemorySpace>
void allocateDownward(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  auto const nt = state.numTargets();
  auto &memory = *state.memory;
  memory.take(space, state.results, "kfmm::Fmm::sorted_results", nt);
  memory.take(space, state.target_ranks, "kfmm::Fmm::target_ranks", nt);
  if (state.options.method == Method::fmm)
    memory.take(space, state.locals, "kfmm::Fmm::locals", state.target_tree.numCells(),
                state.coefficients());
}

/// The build after the trees: lists, the sorted positions unless the trees' builds made them
/// (`positions_sorted`), the far field's plan and the work counts. The grouped M2L's matrices
/// are made on the `side` instance, on which the evaluations' far field runs, and its
/// grouping there too where it runs beside the near field (farfield::groupsBeside).
template <class ExecutionSpace, class Real, class MemorySpace, class Sources, class Targets>
void buildOnTrees(ExecutionSpace const &space, detail::SideInstance<ExecutionSpace> const &side,
                  State<Real, MemorySpace> &state, std::string const &where, Sources const &sources,
                  Targets const *targets, bool positions_sorted)
{
  Options const &options = state.options;
  auto &memory = *state.memory;
  bool const fmm = options.method == Method::fmm;
  int const order = state.order();
  auto &record = state.build_stages;
  // Where the backend's tuning says so, the grouped M2L's classes are counted on the
  // traversal's far entries, so that their number comes back in the lists' read
  // (farfield::M2LClassCount): where the order alone chooses the grouped M2L.
  bool const grouped_by_order =
      fmm && farfield::chooseVariant<ExecutionSpace, Real>(options) == M2LVariant::grouped &&
      farfield::groupedFits<ExecutionSpace, Real>(options, where);
  std::optional<farfield::M2LClassCount<MemorySpace>> classes;
  if (grouped_by_order && tuning::Tuning<ExecutionSpace>::m2l_classes_in_lists_read)
    classes.emplace(space, memory, state.target_tree, state.source_tree,
                    farfield::minClassEntries<ExecutionSpace>(order));
  auto *const counted = classes ? &*classes : nullptr;
  runStage(space, options, "lists", record, [&] {
    // Softening enters the acceptance as a least separation (docs/ACCURACY.md); the stricter
    // test of unequal cells serves separate targets, not the distributed ranks' trees. A
    // sparse leaf meets the cells of its accepted pairs directly where it is the larger cell
    // (PairRule::sparseLeafPair); the distributed ranks receive what that needs.
    double const separation = state.frame.length(
        detail::softeningSeparation<tuning::Tuning<ExecutionSpace>, Real>(options));
    tree::SparseLeaves const sparse = farfield::sparseLeaves(order, options.leaf_size);
    state.lists = tree::detail::buildInteractionListsIn(
        space, memory, state.target_tree, state.source_tree, options.theta, options.method,
        options.acceptance, separation, targets && !state.other_ranks_sources, sparse, 1, counted,
        options.periodic.enabled, tuning::Tuning<ExecutionSpace>::lists_image_pairs);
  });
  if (options.periodic.enabled && fmm)
    state.lattice = periodic::farLattice<ExecutionSpace, MemorySpace>(
        space, state.source_tree.cube.side, order);
  // The automatic choice knows the M2L list's length now (automaticM2LVariant).
  M2LVariant const variant = fmm ? farfield::chooseVariant<ExecutionSpace, Real>(
                                       options, static_cast<double>(state.lists.m2l.size))
                                 : M2LVariant::automatic;
  bool const grouped = variant == M2LVariant::grouped &&
                       farfield::groupedFits<ExecutionSpace, Real>(options, where);
  // The particles' sorted keys served the trees' builds only: 8 bytes per particle less.
  memory.give(state.source_tree.keys);
  memory.give(state.target_tree.keys);
  bool const groups_beside = grouped && farfield::groupsBeside(side, state.lists, order);
  auto const prepareFarField = [&] {
    if (grouped)
      runStage(space, options, "M2L matrices", record, [&] {
        farfield::prepareGrouped(space, side, groups_beside, where, options, memory,
                                 state.far_field, state.target_tree, state.source_tree, state.lists,
                                 counted);
      });
    else if (variant == M2LVariant::grouped || variant == M2LVariant::rotation)
      runStage(space, options, "M2L rotations", record, [&] {
        farfield::prepareRotation(space, state.far_field, state.target_tree, state.source_tree,
                                  state.lists, order);
      });
  };
  // Where the grouping runs beside the caller's instance, the setup's arrays are taken before
  // it: blocks that the grouping gives back may still be in use on the side instance, and
  // only work queued there takes them again (detail/Workspace.hpp). Otherwise the grouping
  // comes first, and the setup reuses its blocks.
  if (!groups_beside)
    prepareFarField();
  runStage(space, options, "setup", record, [&] {
    if (!state.upward_done)
      allocateUpward(space, state);
    allocateDownward(space, state);
    if (!positions_sorted)
      sortPositions(space, state, sources, targets);
    kernels::invertPermutation(space, state.target_tree.permutation, state.target_ranks);
    using Tune = tuning::Tuning<ExecutionSpace>;
    state.p2p_groups = kernels::detail::buildTargetGroups(
        space, memory, state.targetCells(), state.lists.p2p.numRows(), state.numTargets(),
        Tune::p2p_group_lanes * Tune::p2p_targets_per_thread);
  });
  if (groups_beside)
    prepareFarField();
  countWork(space, side, state);
  state.stats.stage_seconds = state.build_stages;
}

/// The state of trees the caller built on one cube, in the caller's units (the distributed
/// solver's): `source_tree` of `sources` and `target_tree` of `targets` (positions in the
/// trees' original order, already checked), moved to the solver's frame in place, with
/// `options` validated and tuned, ready for buildOnTrees.
template <class ExecutionSpace, class Real, class MemorySpace>
void adoptTrees(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                std::string const &where, tree::Octree<MemorySpace> const &source_tree,
                tree::Octree<MemorySpace> const &target_tree, Options const &options)
{
  detail::validate(options, where);
  state.options = detail::withTunedParameters<tuning::Tuning<ExecutionSpace>, Real>(options, where);
  state.other_ranks_sources = true;
  runStage(space, state.options, "tree", state.build_stages, [&] {
    state.source_tree = source_tree;
    state.target_tree = target_tree;
    moveTreesToFrame(space, state, where, true);
  });
}

} // namespace kfmm::solver

#endif
