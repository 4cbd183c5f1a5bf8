// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXPANSIONS_SPHERICAL_HARMONICS_HPP
#define KFMM_EXPANSIONS_SPHERICAL_HARMONICS_HPP

// Coefficient storage and the solid harmonics every expansion operator is built from.
//
// Normalisation ("balanced" solid harmonics). With (r, theta, phi) the spherical coordinates
// of a vector x and P_n^m the associated Legendre function WITHOUT the Condon-Shortley phase
// (P_1^1(cos theta) = sin theta), kfmm uses, for 0 <= |m| <= n,
//
//   regular    R_n^m(x) = n! / (n+|m|)!  * r^n       * P_n^|m|(cos theta) * e^{i m phi}
//   irregular  I_n^m(x) = (n-|m|)! / n!  * r^{-n-1}  * P_n^|m|(cos theta) * e^{i m phi}
//
// so that R_n^{-m} = conj(R_n^m), I_n^{-m} = conj(I_n^m), and the expansion of 1/|x - y|
// behind seed 001, eqs. (2)-(3) (the Legendre generating function and the addition theorem
// for spherical harmonics, as in Greengard & Rokhlin 1987) reads
//
//   1 / |x - y| = sum_{n >= 0} sum_{|m| <= n} conj(R_n^m(y)) I_n^m(x),      |y| < |x|.     (H1)
//
// These are the scaled harmonics of Epton & Dembart (1995) (up to their sign convention),
// R~ = R / n! and I~ = n! I (in seed 001's notation R~_n^m = r^n Y_n^m A_n^m and
// I~_n^m = Y_n^m / (A_n^m r^{n+1}), eqs. (5), (6), (10)), with the factorials rebalanced
// by n!: on the unit sphere |R_n^m| <= 1 and |I_n^m| <= C(2n, n)^{1/2} (3e11 at n = 40,
// 8e13 at n = 48), so no factorial of the classic forms ((2p)! overflows float from
// p = 18) ever appears. With the expansion scale near the cell radius (Operators.hpp),
// every operator of order p <= max_order runs in float without overflow, and underflows
// only terms that are negligible anyway (high degrees evaluated far away). The
// translations keep a binomial C(a, b) <= C(2 max_order, max_order) per pair of degrees,
// never per term.
//
// Both are polynomials (times r^{-2n-1} for I) in the Cartesian coordinates, evaluated by
// the stable upward three-term recurrences in n of P_n^m (seed 001, eqs. (7)-(9)) divided
// through by the factorials above:
//
//   R_m^m = (rho / 2)^m e^{i m phi},                rho = r sin theta = sqrt(x^2 + y^2)
//   R_{n+1}^m = [(n+1)(2n+1) z R_n^m - (n+1) n r^2 R_{n-1}^m] / ((n+m+1)(n-m+1))          (R1)
//   I_m^m = (2m-1)!! / m! * rho^m / r^{2m+1} e^{i m phi}
//   I_{n+1}^m = [(2n+1) z I_n^m - (n^2-m^2)/n I_{n-1}^m] / ((n+1) r^2)                      (I1)
//
// No trigonometric function is called: e^{i phi} = (x + i y) / rho. Below, |R_n^m| and
// |I_n^m| name the real amplitudes R_n^m e^{-i m phi} and I_n^m e^{-i m phi} (they carry
// the sign of P_n^m; they are not absolute values).
//
// Storage: coefficients of degrees n = 0..p, orders 0 <= m <= n only, at index
// n (n+1) / 2 + m; the m < 0 ones are the complex conjugates (real charges).

#include <kfmm/detail/Math.hpp>

#include <Kokkos_Complex.hpp>
#include <Kokkos_Core.hpp>

namespace kfmm::expansions
{

/// Highest expansion order the operators accept. It sizes the local arrays of the serial
/// M2M, L2L and M2L (the M2L keeps irregular harmonics up to degree 2 max_order); the team
/// variants take scratch sized for p from the caller, and p <= max_order is the range
/// they are validated for (in float as in double).
inline constexpr int max_order = 24;

/// Number of stored coefficients of an expansion of order p (degrees 0..p, 0 <= m <= n).
KOKKOS_INLINE_FUNCTION constexpr int coefficientCount(int p) { return (p + 1) * (p + 2) / 2; }

/// Position of the coefficient of degree n and order 0 <= m <= n.
KOKKOS_INLINE_FUNCTION constexpr int coefficientIndex(int n, int m) { return n * (n + 1) / 2 + m; }

namespace detail
{

template <class Real>
using Complex = Kokkos::complex<Real>;

KOKKOS_INLINE_FUNCTION constexpr int iabs(int k) { return k < 0 ? -k : k; }

/// (-1)^k as a Real, without a branch.
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr Real parity(int k)
{
  return Real(1 - 2 * (k & 1));
}

/// Degree n of the coefficient at `index` (the inverse of coefficientIndex for its n).
KOKKOS_INLINE_FUNCTION int degreeOf(int index)
{
  int n =
      static_cast<int>((kfmm::detail::sqrt(8.0f * static_cast<float>(index) + 1.0f) - 1.0f) * 0.5f);
  // Guard the float square root against rounding at exact triangular numbers.
  if (coefficientIndex(n + 1, 0) <= index)
    ++n;
  if (coefficientIndex(n, 0) > index)
    --n;
  return n;
}

/// A vector split into what the recurrences (R1) and (I1) need: its height z, r^2, its
/// distance rho from the z axis and the phase e^{i phi} = (x + i y) / rho (1 on the axis).
template <class Real>
struct Polar
{
  Real z;
  Real r2;
  Real rho;
  Real cos_phi;
  Real sin_phi;
};

template <class Real>
KOKKOS_INLINE_FUNCTION Polar<Real> polar(Real x, Real y, Real z)
{
  Real const rho2 = x * x + y * y;
  Real const rho = kfmm::detail::sqrt(rho2);
  Polar<Real> g{z, rho2 + z * z, rho, Real(1), Real(0)};
  if (rho > Real(0))
  {
    Real const inv = Real(1) / rho;
    g.cos_phi = x * inv;
    g.sin_phi = y * inv;
  }
  return g;
}

/// The same vector scaled to unit length (z = cos theta, rho = sin theta, r^2 = 1), and its
/// length in `r`. Precondition: the vector is not zero.
template <class Real>
KOKKOS_INLINE_FUNCTION Polar<Real> unitPolar(Real x, Real y, Real z, Real &r)
{
  Polar<Real> g = polar(x, y, z);
  r = kfmm::detail::sqrt(g.r2);
  Real const inv_r = Real(1) / r;
  g.z *= inv_r;
  g.rho *= inv_r;
  g.r2 = Real(1);
  return g;
}

/// x^k for a small integer k >= 0 by repeated squaring (the same rounding in every caller).
template <class T>
KOKKOS_INLINE_FUNCTION T ipow(T x, int k)
{
  T result(1);
  while (k > 0)
  {
    if (k & 1)
      result = result * x;
    x = x * x;
    k >>= 1;
  }
  return result;
}

/// e^{i m phi} of a Polar, by repeated squaring.
template <class Real>
KOKKOS_INLINE_FUNCTION Complex<Real> phase(Polar<Real> const &g, int m)
{
  return ipow(Complex<Real>(g.cos_phi, g.sin_phi), m);
}

/// One step up a column of regular harmonics, (R1): |R_{n+1}^m| = up z |R_n^m| - down r^2
/// |R_{n-1}^m|, its two factors depending on n and m alone.
template <class Real>
struct RegularStep
{
  Real up;   ///< (n + 1)(2n + 1) / ((n + m + 1)(n - m + 1))
  Real down; ///< (n + 1) n / ((n + m + 1)(n - m + 1))

  KOKKOS_INLINE_FUNCTION static RegularStep of(int n, int m)
  {
    Real const inv = Real(1) / Real((n + m + 1) * (n - m + 1));
    return {Real((n + 1) * (2 * n + 1)) * inv, Real((n + 1) * n) * inv};
  }

  /// |R_{n+1}^m| from |R_n^m| (`a`) and |R_{n-1}^m| (`a_prev`, 0 when n = m).
  KOKKOS_INLINE_FUNCTION Real next(Real z, Real r2, Real a, Real a_prev) const
  {
    return up * z * a - down * r2 * a_prev;
  }
};

/// The next real amplitude up a column of regular harmonics, (R1):
/// |R_{n+1}^m| from |R_n^m| (`a`) and |R_{n-1}^m| (`a_prev`, 0 when n = m).
template <class Real>
KOKKOS_INLINE_FUNCTION Real regularNext(int n, int m, Real z, Real r2, Real a, Real a_prev)
{
  return RegularStep<Real>::of(n, m).next(z, r2, a, a_prev);
}

/// The steps of (R1) computed where they are taken (one division each): for operators
/// applied once per pair or per thread.
template <class Real>
struct ComputedRegularSteps
{
  KOKKOS_INLINE_FUNCTION RegularStep<Real> operator()(int n, int m) const
  {
    return RegularStep<Real>::of(n, m);
  }
};

/// The steps of (R1) read from a table at coefficientIndex(n, m), made once for many
/// particles (the team P2M and L2P, TeamOperators.hpp): computed, a step is a division and
/// four integer conversions, most of the work of a P2M or L2P step.
template <class Real>
struct TabulatedRegularSteps
{
  RegularStep<Real> const *table;

  KOKKOS_INLINE_FUNCTION RegularStep<Real> operator()(int n, int m) const
  {
    return table[coefficientIndex(n, m)];
  }
};

/// The next real amplitude up a column of irregular harmonics, (I1), with `inv_r2` = 1/r^2:
/// |I_{n+1}^m| from |I_n^m| (`b`) and |I_{n-1}^m| (`b_prev`, 0 when n = m).
template <class Real>
KOKKOS_INLINE_FUNCTION Real irregularNext(int n, int m, Real z, Real inv_r2, Real b, Real b_prev)
{
  // (n^2 - m^2) / n vanishes at n = m, where b_prev is not defined; it also covers n = 0.
  Real const c = Real(n * n - m * m) / Real(n > 0 ? n : 1);
  return (Real(2 * n + 1) * z * b - c * b_prev) * (inv_r2 / Real(n + 1));
}

/// |R_m^m| = (rho / 2)^m, the foot of column m of (R1).
template <class Real>
KOKKOS_INLINE_FUNCTION Real regularDiagonal(Polar<Real> const &g, int m)
{
  return ipow(Real(0.5) * g.rho, m);
}

/// |I_m^m| = (2m-1)!!/m! rho^m / r^{2m+1}, the foot of column m of (I1), as the product
/// prod_{i <= m} (2i-1)/i * rho / r^2 (each factor is at most 2 rho / r^2: no overflow).
template <class Real>
KOKKOS_INLINE_FUNCTION Real irregularDiagonal(Polar<Real> const &g, int m, Real inv_r)
{
  Real const t = g.rho * inv_r * inv_r;
  Real b = inv_r;
  for (int i = 1; i <= m; ++i)
    b *= Real(2 * i - 1) / Real(i) * t;
  return b;
}

/// Column m of real regular amplitudes |R_n^m(x)| for n = m..n_max into table[index(n, m)].
template <class Real>
KOKKOS_INLINE_FUNCTION void regularColumn(Polar<Real> const &g, int m, int n_max, Real *table)
{
  Real a_prev = Real(0);
  Real a = regularDiagonal(g, m);
  for (int n = m; n <= n_max; ++n)
  {
    table[coefficientIndex(n, m)] = a;
    Real const next = regularNext(n, m, g.z, g.r2, a, a_prev);
    a_prev = a;
    a = next;
  }
}

/// Column m of real irregular amplitudes |I_n^m(x)| for n = m..n_max into
/// table[index(n, m)]; `inv_r` = 1/|x|.
template <class Real>
KOKKOS_INLINE_FUNCTION void irregularColumn(Polar<Real> const &g, int m, int n_max, Real inv_r,
                                            Real *table)
{
  Real const inv_r2 = inv_r * inv_r;
  Real b_prev = Real(0);
  Real b = irregularDiagonal(g, m, inv_r);
  for (int n = m; n <= n_max; ++n)
  {
    table[coefficientIndex(n, m)] = b;
    Real const next = irregularNext(n, m, g.z, inv_r2, b, b_prev);
    b_prev = b;
    b = next;
  }
}

} // namespace detail

/// The regular solid harmonic R_n^m(x) of the normalisation above, for any |m| <= n (a
/// reference evaluation for tests and tools: the operators never call it).
template <class Real>
KOKKOS_INLINE_FUNCTION Kokkos::complex<Real> regularHarmonic(int n, int m, Real x, Real y, Real z)
{
  auto const g = detail::polar(x, y, z);
  int const am = detail::iabs(m);
  Real a_prev = Real(0);
  Real a = detail::regularDiagonal(g, am);
  for (int k = am; k < n; ++k)
  {
    Real const next = detail::regularNext(k, am, g.z, g.r2, a, a_prev);
    a_prev = a;
    a = next;
  }
  auto const e = detail::phase(g, am);
  return Kokkos::complex<Real>(a * e.real(), m < 0 ? -a * e.imag() : a * e.imag());
}

/// The irregular solid harmonic I_n^m(x) of the normalisation above, for any |m| <= n and
/// x != 0.
template <class Real>
KOKKOS_INLINE_FUNCTION Kokkos::complex<Real> irregularHarmonic(int n, int m, Real x, Real y, Real z)
{
  auto const g = detail::polar(x, y, z);
  Real const inv_r = Real(1) / kfmm::detail::sqrt(g.r2);
  int const am = detail::iabs(m);
  Real b_prev = Real(0);
  Real b = detail::irregularDiagonal(g, am, inv_r);
  for (int k = am; k < n; ++k)
  {
    Real const next = detail::irregularNext(k, am, g.z, inv_r * inv_r, b, b_prev);
    b_prev = b;
    b = next;
  }
  auto const e = detail::phase(g, am);
  return Kokkos::complex<Real>(b * e.real(), m < 0 ? -b * e.imag() : b * e.imag());
}

} // namespace kfmm::expansions

#endif
