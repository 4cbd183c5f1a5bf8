// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXPANSIONS_SYMMETRIES_HPP
#define KFMM_EXPANSIONS_SYMMETRIES_HPP

// The symmetries of the expansion coefficients under the reflections of the planes x = 0,
// y = 0, z = 0 and x = y. They let one translation operator serve all the offsets that are
// images of one another: the M2L's translation classes (farfield/M2LGroups.hpp) and the
// shift matrices' children (kernels/ShiftMatrices.hpp).

#include <Kokkos_Macros.hpp>

namespace kfmm::expansions
{

/// Mirror symmetry of the translations. Reflecting the plane x = 0 maps the coefficients
/// of degree n and order m (multipole or local alike, Operators.hpp) to (-1)^m conj(.),
/// reflecting y = 0 to conj(.), and z = 0 to (-1)^(n+m) (.), since e^{i m phi} and
/// P_n^m(cos theta) change so under x -> -x, y -> -y, z -> -z. In the real representation
/// (real and imaginary parts interleaved) each reflection F is a diagonal of signs D_F, and
/// the M2L operator of the mirrored offset is T(F o) = D_F T(o) D_F.
///
/// mirrorParities gives, for real component `real` (coefficient real / 2, of degree n and
/// order m; its imaginary part when real is odd), bit d set when reflection d (0: x, 1: y,
/// 2: z) flips its sign.
KOKKOS_INLINE_FUNCTION int mirrorParities(int n, int m, int real)
{
  int const imaginary = real & 1;
  return ((m + imaginary) & 1) | (imaginary << 1) | (((n + m) & 1) << 2);
}

/// The sign of a component with `parities` under the reflections of `mirror` (bit d set for
/// a negative offset component d; higher bits are ignored).
KOKKOS_INLINE_FUNCTION int mirrorSign(int mirror, int parities)
{
  int const flips = mirror & parities;
  return 1 - 2 * ((flips ^ (flips >> 1) ^ (flips >> 2)) & 1);
}

/// Exchange symmetry of the translations. Reflecting the plane x = y (exchanging x and y)
/// takes phi to pi/2 - phi, so e^{-i m phi} becomes (-i)^m e^{i m phi}: a multipole
/// coefficient of order m (Operators.hpp: sum q r^n P_n^m e^{-i m phi}) maps to
/// (-i)^m conj(.), and a local one alike (its potential, Re sum L r^n P_n^m e^{i m phi}, is
/// unchanged when L maps so). In the real representation this exchange S is, per
/// coefficient, (re, im) -> (re, -im), (-im, -re), (-re, im), (im, re) for m = 0, 1, 2, 3
/// mod 4: D_S, its own inverse. An offset o = F(S(o_c)) (S exchanging o_c's x and y, then the
/// reflections F) has the operator T(o) = D_F D_S T(o_c) D_S D_F.
///
/// exchangeCode gives, for the real (imaginary = 0) or imaginary part of a coefficient of
/// order m after the exchange, bit 0 set when it is the other part of the pair before it,
/// bit 1 set when it is negated.
KOKKOS_INLINE_FUNCTION int exchangeCode(int m, int imaginary)
{
  int const quarter = m & 3;
  bool const negated = imaginary ? quarter <= 1 : (quarter == 1 || quarter == 2);
  return (m & 1) | (negated ? 2 : 0);
}

} // namespace kfmm::expansions

#endif
