// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_FAR_FIELD_HPP
#define KFMM_SOLVER_FAR_FIELD_HPP

// The far field's interactions: the FMM's M2L, source cells' multipoles into target cells'
// locals under the build's plan (farfield/Plan.hpp), and the treecode's M2P, source cells'
// multipoles evaluated directly at the targets of each leaf (seed 001).

#include <kfmm/detail/TeamPolicies.hpp>
#include <kfmm/farfield/Plan.hpp>
#include <kfmm/kernels/M2P.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::solver
{

/// M2L, as a stage.
template <class ExecutionSpace, class Real, class MemorySpace>
void m2lStage(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  runStage(space, state.options, "M2L", state.stats.stage_seconds, [&] {
    farfield::translate(space, state.far_field, state.targetCells(), state.sourceCells(),
                        state.lists, state.multipoles, state.locals, state.order());
  });
}

/// M2P (treecode) into the sorted results.
template <class ExecutionSpace, class Real, class MemorySpace>
void m2p(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  using S = State<Real, MemorySpace>;
  auto const &lists = state.lists;
  int const order = state.order();
  using Kernel = kernels::M2PKernel<ExecutionSpace, Real, decltype(lists.m2p.offsets),
                                    decltype(lists.m2p.sources), typename S::Positions,
                                    typename S::SortedPotential, typename S::SortedField>;
  Kokkos::parallel_for(
      "kfmm::Fmm::M2P",
      detail::expansionPolicy(space, order, lists.m2p.numRows(), Kernel::scratchBytes(order)),
      Kernel{state.targetCells(), state.sourceCells(), lists.m2p.offsets, lists.m2p.sources,
             state.multipoles, state.target_x, state.sortedPotential(), state.sortedField(),
             order});
}

} // namespace kfmm::solver

#endif
