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
// where nearly coincident particles almost always end up next to each other: the pairs are
// counted as the positions are sorted (kernels/Permutation.hpp), no search.

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Math.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace kfmm::detail
{

/// A pair that rounding moves by more than this part of its distance is unresolved: its
/// field is then off by more than about 1e-3, above what the options give (1e-4 and below).
constexpr double unresolved_rounding = 1.0 / 1024;

/// The part of the particles in unresolved pairs from which a solve counts as limited by
/// its precision (Stats::precision_limited). Not 0: among 10^8 or more random particles a
/// few are that close by chance, while their share of the error stays negligible.
constexpr double limiting_fraction = 1e-3;

/// Whether rounding the unit coordinates `ua` and `ub` of two particles (in double) to Real
/// leaves the pair unresolved: at a non-zero distance (max norm) that the rounding of both
/// moves by more than unresolved_rounding of it.
template <class Real>
KOKKOS_INLINE_FUNCTION bool unresolvedPair(double const *ua, double const *ub)
{
  double distance = 0, moved = 0;
  for (int d = 0; d < 3; ++d)
  {
    double const ra = static_cast<double>(static_cast<Real>(ua[d])) - ua[d];
    double const rb = static_cast<double>(static_cast<Real>(ub[d])) - ub[d];
    distance = max(distance, ua[d] > ub[d] ? ua[d] - ub[d] : ub[d] - ua[d]);
    moved = max(moved, (ra < 0 ? -ra : ra) + (rb < 0 ? -rb : rb));
  }
  return distance > 0 && moved > unresolved_rounding * distance;
}

/// Whether positions of type Position need the check in a solver of Real: positions given
/// in Real or narrower are moved to the frame exactly (UnitFrame.hpp), so no pair moves.
template <class Real, class Position>
constexpr bool roundsPositions()
{
  return sizeof(Position) > sizeof(Real);
}

/// Whether `unresolved` pairs among `n` particles make a solve precision-limited.
inline bool precisionLimited(std::size_t unresolved, std::size_t n)
{
  return unresolved > 0 &&
         static_cast<double>(2 * unresolved) >= limiting_fraction * static_cast<double>(n);
}

/// What a precision-limited solve says: `unresolved` pairs among `n` particles, for a solver
/// of precision `precision` ("float").
inline std::string unresolvedText(char const *precision, std::size_t unresolved, std::size_t n)
{
  return std::string(precision) +
         " does not resolve these particles: " + std::to_string(unresolved) + " pairs of the " +
         std::to_string(n) +
         " particles are so close, for their coordinates, that rounding them to " + precision +
         " changes their distance by more than 1/1024; their results may be far less accurate "
         "than the options give";
}

/// The error of a solver of precision Real, entered at `where`, that does not resolve its
/// particles (unless Options::allow_unresolved).
template <class Real>
PrecisionError unresolvedError(std::string const &where, std::size_t unresolved, std::size_t n)
{
  return PrecisionError(
      where + ": " +
      unresolvedText(std::is_same<Real, float>::value ? "float" : "double", unresolved, n) +
      ": compute in double with the positions in double, or set Options::allow_unresolved to "
      "accept such results");
}

} // namespace kfmm::detail

#endif
