// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_RESOLUTION_HPP
#define KFMM_DETAIL_RESOLUTION_HPP

// Whether the solver's precision resolves the particles once their coordinates are rounded to
// it in the solver's units (detail/UnitFrame.hpp). Rounding moves a particle by up to half a
// unit in the last place of its coordinates; where two particles are so close that this is a
// sizeable part of their distance, that distance and the field between them are lost whatever
// the expansions do: in float, a cluster 1e-6 wide 1e7 from the centre of the particles'
// cube collapses to a point, and particles 1e-3 apart on a line 1e6 long move by 3 % of
// their distance. Nearest neighbours are taken as neighbours in the tree's (Morton) order,
// where nearly coincident particles almost always end up next to each other: one pass over
// the particles, no search.

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/UnitFrame.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace kfmm::detail
{

/// A pair that rounding moves by more than this part of its distance is unresolved: its
/// field is then off by more than about 1e-3, above what the options give (1e-4 and below).
constexpr double unresolved_rounding = 1.0 / 1024;

/// The part of the particles in unresolved pairs from which a solve counts as limited by
/// its precision (Stats::precision_limited). Not 0: among 10^8 or more random particles a
/// few are that close by chance, while their share of the error stays negligible.
constexpr double limiting_fraction = 1e-3;

/// Adds 1 to `unresolved` when rounding to Real leaves sorted particles i - 1 and i unresolved.
template <class Real, class Permutation, class Positions>
struct UnresolvedPairs
{
  Permutation permutation;
  Positions positions;
  UnitFrame frame;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, std::size_t &unresolved) const
  {
    auto const a = permutation(i - 1);
    auto const b = permutation(i);
    double distance = 0, moved = 0;
    for (int d = 0; d < 3; ++d)
    {
      double const ua = frame.position(static_cast<double>(positions(a, d)), d);
      double const ub = frame.position(static_cast<double>(positions(b, d)), d);
      double const ra = static_cast<double>(static_cast<Real>(ua)) - ua;
      double const rb = static_cast<double>(static_cast<Real>(ub)) - ub;
      distance = max(distance, ua > ub ? ua - ub : ub - ua);
      moved = max(moved, (ra < 0 ? -ra : ra) + (rb < 0 ? -rb : rb));
    }
    if (distance > 0 && moved > unresolved_rounding * distance)
      ++unresolved;
  }
};

/// The pairs of particles adjacent in the sorted order (sorted i - 1 and i, caller's indices
/// permutation(i - 1) and permutation(i)) at a non-zero distance that rounding their unit
/// coordinates to Real moves by more than unresolved_rounding of that distance (max norms,
/// computed in double from the caller's `positions`). One reduction over the positions in
/// Morton order (two gathers per particle); only the count comes back. Positions given in
/// Real or narrower take no pass: the frame moves them exactly (UnitFrame.hpp), so no pair
/// moves at all.
template <class Real, class ExecutionSpace, class Permutation, class Positions>
std::size_t countUnresolvedPairs(ExecutionSpace const &space, Permutation const &permutation,
                                 Positions const &positions, UnitFrame const &frame)
{
  std::size_t count = 0;
  if (sizeof(typename Positions::non_const_value_type) <= sizeof(Real) ||
      permutation.extent(0) < 2)
    return count;
  Kokkos::parallel_reduce(
      "kfmm::resolution::unresolved_pairs",
      Kokkos::RangePolicy<ExecutionSpace>(space, 1, permutation.extent(0)),
      UnresolvedPairs<Real, Permutation, Positions>{permutation, positions, frame}, count);
  return count;
}

/// Whether `unresolved` pairs among `n` particles make a solve precision-limited.
inline bool precisionLimited(std::size_t unresolved, std::size_t n)
{
  return unresolved > 0 &&
         static_cast<double>(2 * unresolved) >= limiting_fraction * static_cast<double>(n);
}

} // namespace kfmm::detail

#endif
