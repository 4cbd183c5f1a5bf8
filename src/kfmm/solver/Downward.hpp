// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_DOWNWARD_HPP
#define KFMM_SOLVER_DOWNWARD_HPP

// The downward pass: each cell's local expansion passed to its children, level by level from
// the root (L2L; as matrix products at low orders), then evaluated at the targets of each
// leaf (L2P) (Greengard & Rokhlin 1987). With the far field's interactions
// (solver/FarField.hpp), the two halves the schedules run: the translations, which need
// nothing of the near field, and the last stage, which adds into the results after it.

#include <kfmm/Options.hpp>
#include <kfmm/detail/TeamPolicies.hpp>
#include <kfmm/kernels/Downward.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/solver/FarField.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>
#include <kfmm/solver/Upward.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::solver
{

/// L2L: each cell's local from its parent's, level by level from the root.
template <class ExecutionSpace, class Real, class MemorySpace>
void l2l(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  using Kernel = kernels::L2LKernel<ExecutionSpace, Real>;
  using Product = kernels::ShiftProductKernel<ExecutionSpace, Real>;
  int const order = state.order();
  auto const &tree = state.target_tree;
  bool const matrices = shiftsByMatrices<ExecutionSpace>(order);
  for (int level = 1; level <= tree.depth(); ++level)
  {
    int const first = tree.level_offsets[level];
    int const count = tree.level_offsets[level + 1] - first;
    // The product runs per parent (level - 1) and writes its children (level).
    int const parents = tree.level_offsets[level - 1];
    int const parent_count = first - parents;
    if (matrices)
      Kokkos::parallel_for(
          "kfmm::Fmm::L2L_product",
          detail::expansionPolicy(space, order, parent_count, Product::scratchBytes(order)),
          Product{state.targetCells(), state.locals, state.shift_matrices, order, parents, 1});
    else
      Kokkos::parallel_for(
          "kfmm::Fmm::L2L",
          detail::expansionPolicy(space, order, count, Kernel::scratchBytes(order)),
          Kernel{state.targetCells(), state.locals, order, first});
  }
}

/// L2P: the leaves' locals at their targets, added into the sorted results.
template <class ExecutionSpace, class Real, class MemorySpace>
void l2p(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  using S = State<Real, MemorySpace>;
  using Kernel = kernels::L2PKernel<ExecutionSpace, Real, typename S::Positions,
                                    typename S::SortedPotential, typename S::SortedField>;
  int const order = state.order();
  Kokkos::parallel_for("kfmm::Fmm::L2P",
                       detail::expansionPolicy(space, order, state.target_tree.numLeaves(),
                                               Kernel::scratchBytes(order)),
                       Kernel{state.targetCells(), state.locals, state.target_x,
                              state.sortedPotential(), state.sortedField(), order});
}

/// The far field's translations of multipoles into the target tree's locals: M2L and L2L
/// (FMM); none for the treecode.
template <class ExecutionSpace, class Real, class MemorySpace>
void farFieldTranslations(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  if (state.options.method != Method::fmm)
    return;
  m2lStage(space, state);
  if (state.lattice.enabled())
    runStage(space, state.options, "far lattice", state.stats.stage_seconds, [&] {
      periodic::addFarLattice(space, state.lattice, state.sourceCells(), state.x, state.q,
                              state.multipoles, state.locals, state.order());
    });
  runStage(space, state.options, "L2L", state.stats.stage_seconds, [&] { l2l(space, state); });
}

/// The far field's last stage, which adds into the sorted results: L2P (FMM) or M2P
/// (treecode).
template <class ExecutionSpace, class Real, class MemorySpace>
void farFieldToTargets(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  if (state.options.method == Method::fmm)
    runStage(space, state.options, "L2P", state.stats.stage_seconds, [&] { l2p(space, state); });
  else
    runStage(space, state.options, "M2P", state.stats.stage_seconds, [&] { m2p(space, state); });
  if (state.lattice.enabled())
    runStage(space, state.options, "background", state.stats.stage_seconds, [&] {
      periodic::addBackground(space, state.lattice, state.targetCells(), state.multipoles,
                              state.target_x, state.sortedPotential(), state.sortedField());
    });
}

} // namespace kfmm::solver

#endif
