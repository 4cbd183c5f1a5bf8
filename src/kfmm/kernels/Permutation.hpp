// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_PERMUTATION_HPP
#define KFMM_KERNELS_PERMUTATION_HPP

// Moving particle data between the caller's order and the tree's sorted (Morton) order,
// in which every cell's particles are contiguous. `permutation(i)` is the caller's index of
// sorted particle i.

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// sorted(i, :) = positions(permutation(i), :), converted to the sorted array's type.
template <class ExecutionSpace, class Permutation, class Positions, class Sorted>
void sortPositions(ExecutionSpace const &space, Permutation const &permutation,
                   Positions const &positions, Sorted const &sorted)
{
  using Real = typename Sorted::non_const_value_type;
  Kokkos::parallel_for(
      "kfmm::permutation::sort_positions",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) {
        for (int d = 0; d < 3; ++d)
          sorted(i, d) = static_cast<Real>(positions(permutation(i), d));
      });
}

/// sorted(i) = charges(permutation(i)), and the sorted results zeroed for accumulation.
template <class ExecutionSpace, class Permutation, class Charges, class SortedCharges,
          class SortedPotential, class SortedField>
void sortCharges(ExecutionSpace const &space, Permutation const &permutation,
                 Charges const &charges, SortedCharges const &sorted,
                 SortedPotential const &potential, SortedField const &field)
{
  using Real = typename SortedCharges::non_const_value_type;
  Kokkos::parallel_for(
      "kfmm::permutation::sort_charges",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) {
        sorted(i) = static_cast<Real>(charges(permutation(i)));
        potential(i) = 0;
        for (int d = 0; d < 3; ++d)
          field(i, d) = 0;
      });
}

/// potential(permutation(i)) = sorted_potential(i), likewise the field: each output entry
/// is written exactly once.
template <class ExecutionSpace, class Permutation, class SortedPotential, class SortedField,
          class Potential, class Field>
void unsortResults(ExecutionSpace const &space, Permutation const &permutation,
                   SortedPotential const &sorted_potential, SortedField const &sorted_field,
                   Potential const &potential, Field const &field)
{
  Kokkos::parallel_for(
      "kfmm::permutation::unsort_results",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted_potential.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) {
        auto const j = permutation(i);
        potential(j) = sorted_potential(i);
        for (int d = 0; d < 3; ++d)
          field(j, d) = sorted_field(i, d);
      });
}

} // namespace kfmm::detail

#endif
