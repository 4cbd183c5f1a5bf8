// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_PERMUTATION_HPP
#define KFMM_KERNELS_PERMUTATION_HPP

// Moving particle data between the caller's order and units and the tree's sorted (Morton)
// order in the solver's units (detail/UnitFrame.hpp), in which every cell's particles are
// contiguous. `permutation(i)` is the caller's index of sorted particle i. The change of
// units rides on these copies, so it costs no pass of its own.

#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// sorted(i, :) = positions(permutation(i), :) in the frame's units.
template <class Permutation, class Positions, class Sorted>
struct SortPositions
{
  using Real = typename Sorted::non_const_value_type;

  Permutation permutation;
  Positions positions;
  UnitFrame frame;
  Sorted sorted;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    for (int d = 0; d < 3; ++d)
      sorted(i, d) =
          static_cast<Real>(frame.position(static_cast<double>(positions(permutation(i), d)), d));
  }
};

/// sorted(i, :) = positions(permutation(i), :) in the frame's units, in the sorted array's
/// type (the difference from the shift is taken in double, before any rounding to it).
template <class ExecutionSpace, class Permutation, class Positions, class Sorted>
void sortPositions(ExecutionSpace const &space, Permutation const &permutation,
                   Positions const &positions, UnitFrame const &frame, Sorted const &sorted)
{
  Kokkos::parallel_for(
      "kfmm::permutation::sort_positions",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted.extent(0)),
      SortPositions<Permutation, Positions, Sorted>{permutation, positions, frame, sorted});
}

/// sorted(i) = charges(permutation(i)) times `to_unit` (in double, then rounded).
template <class Permutation, class Charges, class SortedCharges>
struct SortCharges
{
  using Real = typename SortedCharges::non_const_value_type;

  Permutation permutation;
  Charges charges;
  PowerOfTwo<double> to_unit;
  SortedCharges sorted;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    sorted(i) = static_cast<Real>(to_unit(static_cast<double>(charges(permutation(i)))));
  }
};

/// sorted(i) = charges(permutation(i)) times `to_unit` (in double, then rounded).
template <class ExecutionSpace, class Permutation, class Charges, class SortedCharges>
void sortCharges(ExecutionSpace const &space, Permutation const &permutation,
                 Charges const &charges, PowerOfTwo<double> const &to_unit,
                 SortedCharges const &sorted)
{
  Kokkos::parallel_for(
      "kfmm::permutation::sort_charges",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted.extent(0)),
      SortCharges<Permutation, Charges, SortedCharges>{permutation, charges, to_unit, sorted});
}

/// potential(permutation(i)) and field(permutation(i), :) from sorted result i, scaled back.
template <class Permutation, class SortedPotential, class SortedField, class Potential,
          class Field>
struct UnsortResults
{
  Permutation permutation;
  SortedPotential sorted_potential;
  SortedField sorted_field;
  ResultScale<typename SortedPotential::non_const_value_type> scale;
  Potential potential;
  Field field;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    auto const j = permutation(i);
    potential(j) = scale.potential(sorted_potential(i));
    for (int d = 0; d < 3; ++d)
      field(j, d) = scale.field(sorted_field(i, d));
  }
};

/// potential(permutation(i)) = sorted_potential(i) and likewise the field, scaled back to
/// the caller's units in the results' precision: each output entry is written exactly once.
template <class ExecutionSpace, class Permutation, class SortedPotential, class SortedField,
          class Potential, class Field>
void unsortResults(ExecutionSpace const &space, Permutation const &permutation,
                   SortedPotential const &sorted_potential, SortedField const &sorted_field,
                   ResultScale<typename SortedPotential::non_const_value_type> const &scale,
                   Potential const &potential, Field const &field)
{
  Kokkos::parallel_for(
      "kfmm::permutation::unsort_results",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, sorted_potential.extent(0)),
      UnsortResults<Permutation, SortedPotential, SortedField, Potential, Field>{
          permutation, sorted_potential, sorted_field, scale, potential, field});
}

/// Whether sorted particle i is the caller's particle `index`.
template <class Permutation>
struct IsSortedPositionOf
{
  Permutation permutation;
  std::int64_t index;

  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t i) const
  {
    return static_cast<std::int64_t>(permutation(i)) == index;
  }
};

/// The sorted position of the caller's particle `index`: the i with permutation(i) == index
/// (one search, for messages).
template <class ExecutionSpace, class Permutation>
std::int64_t sortedIndexOf(ExecutionSpace const &space, Permutation const &permutation,
                           std::int64_t index)
{
  return firstIndexWhere(space, static_cast<std::int64_t>(permutation.extent(0)),
                         IsSortedPositionOf<Permutation>{permutation, index});
}

} // namespace kfmm::detail

#endif
