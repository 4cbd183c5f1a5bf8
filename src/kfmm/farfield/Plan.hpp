// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_PLAN_HPP
#define KFMM_FARFIELD_PLAN_HPP

// The far field's plan: how the M2L list's translations are done, chosen and prepared once
// per build and applied at every evaluation.
//
//  - per pair: each entry translated by the full operator (Greengard & Rokhlin 1987);
//  - rotation: each entry rotated onto the axis of its direction, translated along it and
//    rotated back, O(p^3) instead of O(p^4) (White & Head-Gordon 1994); the rotation tables
//    of the list's distinct directions are computed once (farfield/M2LRotations.hpp);
//  - grouped: the entries grouped by translation class (a lattice offset between cells of
//    one level) into blocks, each class's operator a dense matrix, so that the M2L is a batch
//    of dense products (seed 003; farfield/M2LGroups.hpp, farfield/M2LMatrices.hpp,
//    farfield/GroupedM2L.hpp).
//
// The variant is the caller's (Options::m2l_variant) or the backend's measured choice for the
// order (Options.hpp, automaticM2LVariant). An automatic grouped choice falls back to the
// rotation where the grouped kernel or its matrices do not fit the backend.

#include <kfmm/Options.hpp>
#include <kfmm/detail/FormatNumber.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/SideInstance.hpp>
#include <kfmm/detail/TeamPolicies.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/expansions/Operators.hpp>
#include <kfmm/farfield/GroupedM2L.hpp>
#include <kfmm/farfield/M2LGroups.hpp>
#include <kfmm/farfield/M2LMatrices.hpp>
#include <kfmm/farfield/M2LRotations.hpp>
#include <kfmm/farfield/M2LKernel.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace kfmm::farfield
{

/// The M2L variant prepared and what it translates with.
template <class Real, class MemorySpace>
struct Plan
{
  /// per_pair until a grouped or rotation plan is prepared.
  M2LVariant variant = M2LVariant::per_pair;
  M2LGroups<MemorySpace> groups;              ///< grouped only
  M2LMatrixArray<Real, MemorySpace> matrices; ///< grouped only
  M2LRotations<Real, MemorySpace> rotations;  ///< rotation only
};

/// The M2L variant to prepare: as asked, or the backend's choice for the order and an M2L
/// list of `entries` entries (0: before the lists, by the order alone).
template <class ExecutionSpace, class Real>
M2LVariant chooseVariant(Options const &options, double entries = 0)
{
  if (options.m2l_variant != M2LVariant::automatic)
    return options.m2l_variant;
  return detail::automaticM2LVariant<tuning::Tuning<ExecutionSpace>, Real>(options.order, entries);
}

/// Whether the grouped M2L's kernel fits the backend's team scratch at the order: where it
/// does not, an automatic choice takes the rotation M2L, and an explicit request throws, its
/// message naming the entry point `where`.
template <class ExecutionSpace, class Real>
bool groupedFits(Options const &options, std::string const &where)
{
  int const order = options.order;
  int const block_rows = tuning::Tuning<ExecutionSpace>::m2lBlockRows(order);
  if (GroupedM2LKernel<ExecutionSpace, Real>::productColumns(order, block_rows) >= 1)
    return true;
  detail::require(options.m2l_variant != M2LVariant::grouped, where,
                  "the grouped M2L at order " + detail::formatNumber(order) +
                      " does not fit this backend's team scratch; lower 'order' or choose "
                      "m2l_variant rotation or automatic");
  return false;
}

/// The fewest pairs of a translation class that gets a matrix (farfield/M2LGroups.hpp).
template <class ExecutionSpace>
int minClassEntries(int order)
{
  return kfmm::detail::max(1, realCoefficientCount(order) /
                                  tuning::Tuning<ExecutionSpace>::m2l_min_class_fraction);
}

/// The rule of sparse leaves at `order` and `leaf_size` (tree::detail::PairRule::
/// sparseLeafPair). A sparse leaf has at most as many particles as the flops of one M2L
/// translation would evaluate a multipole at (M2P), so that its own expansion hardly pays,
/// and at most an eighth of `leaf_size`, the mean share of the children of a cell that split,
/// so that only leaves that their region's density left large count. Its pairs are direct up
/// to the particle pairs of two full leaves, the near field's unit of work, so that no pair
/// of it costs more than one near pair can.
inline tree::SparseLeaves sparseLeaves(int order, int leaf_size)
{
  double const translation =
      double(expansions::flops::m2l(order)) / double(expansions::flops::m2p(order));
  return {kfmm::detail::min(translation, leaf_size / 8.0), double(leaf_size) * leaf_size};
}

/// Whether the grouped M2L's grouping runs on the side instance, beside the near field,
/// rather than before it on the caller's instance: where the instances run at once and the
/// far field is the lighter part, so that the side's chain (grouping, M2L, L2L) still ends
/// before the near field does. The parts are weighed by their estimated flops, the far
/// field's times the backend's Tuning::far_field_flop_cost; the near field's pairs come back
/// in the lists' read (InteractionLists::near_pairs), so the choice waits for nothing. A mean
/// leaf occupancy would misjudge trees whose leaves lie at two depths (docs/TUNING.md).
template <class ExecutionSpace, class MemorySpace>
bool groupsBeside(detail::SideInstance<ExecutionSpace> const &side,
                  tree::InteractionLists<MemorySpace> const &lists, int order)
{
  if (!side.concurrent())
    return false;
  double const near_flops = kernels::detail::flops_per_interaction * double(lists.near_pairs);
  double const far_flops = double(lists.m2l.size) * double(expansions::flops::m2l(order));
  return tuning::Tuning<ExecutionSpace>::far_field_flop_cost * far_flops < near_flops;
}

/// Estimated flops of the M2L: `pairs` entries, of which `per_pair` the rotation plan
/// translates by the full operator.
template <class Real, class MemorySpace>
double flops(Plan<Real, MemorySpace> const &plan, std::size_t pairs, std::size_t per_pair,
             int order)
{
  if (plan.variant != M2LVariant::rotation)
    return double(pairs) * double(expansions::flops::m2l(order));
  return (double(pairs) - double(per_pair)) * double(expansions::flops::m2lRotated(order)) +
         double(per_pair) * double(expansions::flops::m2l(order));
}

/// The rotation tables of the M2L list's directions (farfield/M2LRotations.hpp).
template <class ExecutionSpace, class Real, class MemorySpace>
void prepareRotation(ExecutionSpace const &space, Plan<Real, MemorySpace> &plan,
                     tree::Octree<MemorySpace> const &target_tree,
                     tree::Octree<MemorySpace> const &source_tree,
                     tree::InteractionLists<MemorySpace> const &lists, int order)
{
  plan.rotations = buildM2LRotations<Real>(space, target_tree, source_tree, lists.m2l, order);
  plan.variant = M2LVariant::rotation;
}

/// Groups the M2L list, by the classes the lists' traversal counted where it did
/// (`classes`, whose numbering goes back to the workspace here), and computes the class
/// matrices, the matrices on the `side` instance, and the grouping there too where `beside`
/// (groupsBeside), once that instance has followed the caller's `space` past the lists: only
/// the M2L, which runs there too, reads them, and the caller's instance goes on to the near
/// field meanwhile. Else the grouping runs on `space`. Without the classes' count from the
/// lists (Tuning::m2l_classes_in_lists_read) the grouping reads their number on the host. An
/// automatic choice whose matrices would exceed the backend's budget takes the rotation M2L
/// instead; an explicit request throws, its message naming the entry point `where`.
template <class ExecutionSpace, class Real, class MemorySpace>
void prepareGrouped(ExecutionSpace const &space, detail::SideInstance<ExecutionSpace> const &side,
                    bool beside, std::string const &where, Options const &options,
                    detail::Workspace<MemorySpace> &memory, Plan<Real, MemorySpace> &plan,
                    tree::Octree<MemorySpace> const &target_tree,
                    tree::Octree<MemorySpace> const &source_tree,
                    tree::InteractionLists<MemorySpace> &lists, M2LClassCount<MemorySpace> *classes)
{
  using Tune = tuning::Tuning<ExecutionSpace>;
  int const order = options.order;
  int const block_rows = Tune::m2lBlockRows(order);
  ExecutionSpace const grouping_space = beside ? side.space() : space;
  if (beside)
    side.follow();
  auto groups = groupM2LIn(grouping_space, memory, target_tree, source_tree, lists.m2l, block_rows,
                           minClassEntries<ExecutionSpace>(order), SortKeyWidth::fitted, classes);
  if (classes != nullptr)
    memory.give(classes->key_index);
  std::size_t const bytes = m2lMatrixBytes<ExecutionSpace, Real>(groups.num_classes, order);
  if (bytes > Tune::m2l_matrix_budget_bytes)
  {
    detail::require(options.m2l_variant != M2LVariant::grouped, where,
                    "the grouped M2L needs " + detail::formatNumber(bytes >> 20) +
                        " MiB of translation matrices, more than this backend's budget of " +
                        detail::formatNumber(Tune::m2l_matrix_budget_bytes >> 20) +
                        " MiB; lower 'order', raise 'theta' or choose m2l_variant "
                        "rotation or automatic");
    // The groups' blocks go back to the workspace: the caller's instance waits for the
    // grouping, so that no later take there can race it.
    if (beside)
      side.join();
    groups.giveTo(memory);
    prepareRotation(space, plan, target_tree, source_tree, lists, order);
    return;
  }
  plan.groups = groups;
  // The matrices read the classes' keys, which the grouping wrote.
  if (!beside)
    side.follow();
  plan.matrices = buildM2LMatrices<Real>(side.space(), memory, plan.groups, order,
                                         Tune::expansionTeamSize(order));
  plan.variant = M2LVariant::grouped;
  // The groups hold every M2L entry's source: the list's copy is not read again (its
  // offsets, a few bytes per cell, give the rows' count). 4 bytes per entry less.
  memory.give(lists.m2l.sources);
}

/// Bytes of the plan's matrices or rotation tables.
template <class Real, class MemorySpace>
std::size_t matrixBytes(Plan<Real, MemorySpace> const &plan)
{
  if (plan.variant == M2LVariant::grouped)
    return plan.matrices.span() * sizeof(Real);
  if (plan.variant == M2LVariant::rotation)
    return plan.rotations.bytes();
  return 0;
}

/// The M2L: the multipoles of the source cells into the locals of the target cells, under
/// the plan. The per-pair and the rotation M2L share a kernel; without rotation tables every
/// pair is translated directly.
template <class ExecutionSpace, class Real, class MemorySpace>
void translate(ExecutionSpace const &space, Plan<Real, MemorySpace> const &plan,
               kernels::detail::CellView<MemorySpace> const &target_cells,
               kernels::detail::CellView<MemorySpace> const &source_cells,
               tree::InteractionLists<MemorySpace> const &lists,
               kernels::detail::CoefficientArray<Real, MemorySpace> const &multipoles,
               kernels::detail::CoefficientArray<Real, MemorySpace> const &locals, int order)
{
  using Tune = tuning::Tuning<ExecutionSpace>;
  if (plan.variant == M2LVariant::grouped)
  {
    GroupedM2LKernel<ExecutionSpace, Real> const kernel(target_cells, source_cells, plan.groups,
                                                        plan.matrices, multipoles, locals, order,
                                                        lists.m2l.numRows(), lists.shift);
    // One team per block of target rows.
    auto const launch = [&](auto bounds) {
      using LaunchBounds = decltype(bounds);
      Kokkos::parallel_for("kfmm::Fmm::M2L_grouped",
                           detail::TeamPolicy<ExecutionSpace, LaunchBounds>(
                               space, plan.groups.num_blocks, Tune::m2lGroupedTeamSize(order))
                               .set_scratch_size(0, Kokkos::PerTeam(kernel.scratchBytes())),
                           kernel);
    };
    if (kernel.scratchBytes() <= Tune::m2l_capped_scratch_bytes)
      launch(typename Tune::M2LGroupedLaunchBounds{});
    else
      launch(Kokkos::LaunchBounds<>{});
    return;
  }
  using Kernel =
      M2LKernel<ExecutionSpace, Real, decltype(lists.m2l.offsets), decltype(lists.m2l.sources)>;
  Kokkos::parallel_for(
      plan.variant == M2LVariant::rotation ? "kfmm::Fmm::M2L_rotation" : "kfmm::Fmm::M2L",
      detail::expansionPolicy<typename Tune::M2LLaunchBounds>(space, order, lists.m2l.numRows(),
                                                              Kernel::scratchBytes(order)),
      Kernel{target_cells, source_cells, lists.m2l.offsets, lists.m2l.sources, plan.rotations,
             multipoles, locals, order, lists.shift});
}

} // namespace kfmm::farfield

#endif
