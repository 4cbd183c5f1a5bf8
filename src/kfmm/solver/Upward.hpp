// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_UPWARD_HPP
#define KFMM_SOLVER_UPWARD_HPP

// The upward pass: the charges' unit, the charges in sorted order, then the source tree's
// multipoles, P2M at the leaves and M2M level by level to the root (Greengard & Rokhlin
// 1987; M2M as matrix products at low orders, kernels/ShiftMatrices.hpp).

#include <kfmm/detail/TeamPolicies.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/kernels/Permutation.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/kernels/Upward.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace kfmm::solver
{

/// Whether M2M and L2L run as matrix products (kernels/ShiftMatrices.hpp): the backend's
/// measured choice for the order.
template <class ExecutionSpace>
bool shiftsByMatrices(int order)
{
  return order <= tuning::Tuning<ExecutionSpace>::shift_matrix_max_order;
}

/// The charge unit 2^charge_exponent, which the host found, where the kernels read it.
template <class ExecutionSpace, class Real, class MemorySpace>
void setChargeUnit(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                   int charge_exponent)
{
  Kokkos::parallel_for("kfmm::Fmm::set_charge_unit",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                       detail::SetChargeUnit<Real, MemorySpace>{
                           state.charge_unit, state.frame.length_exponent, charge_exponent});
}

/// The charges' unit, on the device (State::chargeUnitOnDevice), else on the host, which
/// waits for it and checks the charges here.
template <class ExecutionSpace, class Real, class MemorySpace, class Charges>
void chargeUnitStage(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                     std::string const &where, Charges const &charges,
                     typename State<Real, MemorySpace>::Stages &record)
{
  runStage(space, state.options, "charge unit", record, [&] {
    if (state.chargeUnitOnDevice())
      detail::findChargeUnit(space, charges, state.frame.length_exponent, state.largest_charge,
                             state.charge_unit,
                             Kokkos::subview(state.checks, state.charges_suspect));
    else
    {
      int const charge_exponent = detail::chargeExponent(space, where, "charges", charges);
      if (state.computes())
        setChargeUnit(space, state, charge_exponent);
    }
  });
}

/// The charges in sorted order, in the charge unit.
template <class ExecutionSpace, class Real, class MemorySpace, class Charges>
void sortChargesStage(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                      Charges const &charges, typename State<Real, MemorySpace>::Stages &record)
{
  runStage(space, state.options, "sort charges", record, [&] {
    kernels::sortCharges(space, state.source_tree.permutation, charges, state.charge_unit, state.q);
  });
}

/// P2M: the leaves' multipoles, the others' cleared.
template <class ExecutionSpace, class Real, class MemorySpace>
void p2m(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  int const order = state.order();
  detail::zeroFill(space, "kfmm::Fmm::clear_multipoles", state.multipoles);
  using Kernel = kernels::P2MKernel<ExecutionSpace, Real, decltype(state.x), decltype(state.q)>;
  int const team_size = tuning::Tuning<ExecutionSpace>::expansionTeamSize(order);
  Kokkos::parallel_for("kfmm::Fmm::P2M",
                       detail::expansionPolicy(space, order, state.source_tree.numLeaves(),
                                               Kernel::scratchBytes(order, team_size)),
                       Kernel{state.sourceCells(), state.x, state.q, state.multipoles, order});
}

/// M2M: each inner cell's multipole from its children's, level by level to the root.
template <class ExecutionSpace, class Real, class MemorySpace>
void m2m(ExecutionSpace const &space, State<Real, MemorySpace> &state)
{
  using Kernel = kernels::M2MKernel<ExecutionSpace, Real>;
  using Product = kernels::ShiftProductKernel<ExecutionSpace, Real>;
  int const order = state.order();
  auto const &tree = state.source_tree;
  bool const matrices = shiftsByMatrices<ExecutionSpace>(order);
  for (int level = tree.depth() - 1; level >= 0; --level)
  {
    int const first = tree.level_offsets[level];
    int const count = tree.level_offsets[level + 1] - first;
    if (matrices)
      Kokkos::parallel_for(
          "kfmm::Fmm::M2M_product",
          detail::expansionPolicy(space, order, count, Product::scratchBytes(order)),
          Product{state.sourceCells(), state.multipoles, state.shift_matrices, order, first, 0});
    else
      Kokkos::parallel_for(
          "kfmm::Fmm::M2M",
          detail::expansionPolicy(space, order, count, Kernel::scratchBytes(order)),
          Kernel{state.sourceCells(), state.multipoles, order, first});
  }
}

/// P2M and M2M, as two stages.
template <class ExecutionSpace, class Real, class MemorySpace>
void upwardStages(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                  typename State<Real, MemorySpace>::Stages &record)
{
  runStage(space, state.options, "P2M", record, [&] { p2m(space, state); });
  runStage(space, state.options, "M2M", record, [&] { m2m(space, state); });
}

} // namespace kfmm::solver

#endif
