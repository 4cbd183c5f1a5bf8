// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXPANSIONS_OPERATORS_HPP
#define KFMM_EXPANSIONS_OPERATORS_HPP

// The six expansion operators of the treecode and the FMM (seed 001, section 2 and Fig. 1)
// as serial device functions: one thread computes one whole operator. The team variants in
// TeamOperators.hpp share the per-coefficient code below, so both give the same numbers.
//
// Expansions (see SphericalHarmonics.hpp for R_n^m, I_n^m and their normalisation). Each
// coefficient array carries a length `scale` chosen by the caller (the cell radius keeps
// every stored coefficient O(1) whatever the depth, which float needs at high order; any
// positive value is correct). With y_j = x_j - centre the source offsets:
//
//   multipole  M_n^m = sum_j q_j conj(R_n^m(y_j / s))                              seed 001 (2)
//              phi(x) = 1/s sum_{n<=p} sum_{|m|<=n} M_n^m I_n^m((x - centre) / s)
//   local      L_n^m = sum_j q_j conj(I_n^m(y_j / t)) / t                          seed 001 (3)
//              phi(x) = sum_{n<=p} sum_{|m|<=n} L_n^m R_n^m((x - centre) / t)
//
// both from (H1). Translations, with m, mu the orders, C(a, b) binomials and the sign
// S(a, b) = (-1)^{(|a| + |b| - |a+b|)/2} (= i^{|a|+|b|-|a+b|}, the factor seed 001 writes
// i^{|k-m|-|k|-|m|} in eq. (4)). They are the addition theorems of the scaled harmonics
// (Epton & Dembart 1995; Cheng, Greengard & Rokhlin 1999) rewritten in the normalisation
// above, where the factorials of seed 001's A_n^m (eq. (5)) reduce to one binomial per
// pair of degrees:
//
//   M2M  (d = child - parent centre, child scale s, parent scale s')
//     M'_l^m = sum_{lambda<=l} C(l, lambda) (s/s')^{l-lambda}
//              sum_mu S(mu, m-mu) conj(R_lambda^mu(d/s')) M_{l-lambda}^{m-mu}             (T1)
//   M2L  (D = target - source centre, source scale s, target scale t, r = |D|)
//     L_j^k = (-1)^j / r sum_{n<=p} C(j+n, n) (t/r)^j (s/r)^n
//              sum_{|m|<=n} S(m, -k) M_n^m I_{j+n}^{m-k}(D/r)                              (T2)
//     seed 001, eq. (4), with its square truncation n <= p, j <= p; for k >= 0,
//     S(m, -k) = (-1)^{max(0, min(m, k))}
//   L2L  (d = child - parent centre, parent scale t, child scale t')
//     L'_j^k = sum_{n=j}^{p} C(n, j) (t'/t)^j sum_mu S(k, mu) L_n^{k+mu} R_{n-j}^mu(d/t)     (T3)
//
// L2P and M2P take the gradient as the degree-1 part of the expansion moved onto the
// particle (T3 resp. T2 with a unit scale, j <= 1): there R_1^0(w) = w_z and
// R_1^{+-1}(w) = (w_x +- i w_y)/2, so phi(x + w) = L_0^0 + Re(L_1^1) w_x - Im(L_1^1) w_y +
// L_1^0 w_z + O(w^2) and grad phi = (Re L_1^1, -Im L_1^1, L_1^0). No pole of the spherical
// coordinates is involved.
//
// M2M, M2L and L2L rotate the phase out of the inner sums: R_lambda^mu(d) = |R_lambda^mu|
// e^{i mu phi}, and e^{i mu phi} = e^{i m phi} e^{-i (m - mu) phi} moves onto the input
// (rotated once, O(p^2)) and the output (O(p^2)), leaving real harmonics times complex
// coefficients in the O(p^4) sums (half the flops of complex times complex, and one shared
// table of real harmonics per pair as in seed 001, Listings 3-4, which defer e^{i m beta}).
//
// Conventions: potential(x) = sum_j q_j / |x - x_j|, field = grad potential; every operator
// adds to its output.

#include <kfmm/expansions/SphericalHarmonics.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::expansions
{
namespace detail
{

/// Multiply coefficient c by the phase e, then by the real `scale`.
template <class Real>
KOKKOS_INLINE_FUNCTION Complex<Real> rotate(Complex<Real> const &c, Complex<Real> const &e,
                                            Real scale)
{
  return Complex<Real>((c.real() * e.real() - c.imag() * e.imag()) * scale,
                       (c.real() * e.imag() + c.imag() * e.real()) * scale);
}

/// conj(e) * acc * factor added to out: the phase and scale of one translated coefficient.
template <class Real>
KOKKOS_INLINE_FUNCTION void addUnrotated(Complex<Real> &out, Complex<Real> const &e,
                                         Complex<Real> const &acc, Real factor)
{
  out += Complex<Real>((e.real() * acc.real() + e.imag() * acc.imag()) * factor,
                       (e.real() * acc.imag() - e.imag() * acc.real()) * factor);
}

/// Column m of a translated input: out_n^m = in_n^m e^{i m phi} ratio^n for n = m..p.
template <class Real>
KOKKOS_INLINE_FUNCTION void rotateColumn(int m, int p, Complex<Real> const &e_m, Real ratio,
                                         Complex<Real> const *in, Complex<Real> *out)
{
  Real scale = ipow(ratio, m);
  for (int n = m; n <= p; ++n)
  {
    int const i = coefficientIndex(n, m);
    out[i] = rotate(in[i], e_m, scale);
    scale *= ratio;
  }
}

/// The inner sums of (T2) for one output (j, k), before the output phase and scale:
///   sum_n C(j+n, n) sum_{|m|<=n} (-1)^{max(0,min(m,k))} Mrot_n^m |I_{j+n}^{m-k}|
/// with Mrot = M e^{i m phi} (s/r)^n and `irr` the real irregular table up to degree j + p.
/// The orders m and -m are taken together: with a = Mrot_n^m, m > 0, their terms are
/// sigma a I1 + conj(a) I2 = (a_re (sigma I1 + I2), a_im (sigma I1 - I2)), where
/// I1 = |I_{j+n}^{|m-k|}| and I2 = |I_{j+n}^{m+k}|: 7 flops for two complex terms. The trip
/// counts do not depend on k, so the threads of a team never diverge.
template <class Real>
KOKKOS_INLINE_FUNCTION Complex<Real> m2lSum(int p, int j, int k, Complex<Real> const *Mrot,
                                            Real const *irr)
{
  Real acc_re = Real(0);
  Real acc_im = Real(0);
  Real binomial = Real(1); // C(j + n, n)
  for (int n = 0; n <= p; ++n)
  {
    Real const *column = irr + coefficientIndex(j + n, 0);
    Complex<Real> const *source = Mrot + coefficientIndex(n, 0);
    Real const i0 = column[k];
    Real sum_re = source[0].real() * i0;
    Real sum_im = source[0].imag() * i0;
    Real sigma = Real(1);
    for (int m = 1; m <= n; ++m)
    {
      sigma = m <= k ? -sigma : sigma;
      Real const i1 = sigma * column[iabs(m - k)];
      Real const i2 = column[m + k];
      sum_re += source[m].real() * (i1 + i2);
      sum_im += source[m].imag() * (i1 - i2);
    }
    acc_re += binomial * sum_re;
    acc_im += binomial * sum_im;
    binomial = binomial * Real(j + n + 1) / Real(n + 1);
  }
  return Complex<Real>(acc_re, acc_im);
}

/// The inner sums of (T1) for one output (l, m >= 0), before the output phase:
///   sum_lambda C(l, lambda) sum_mu S(mu, m-mu) |R_lambda^mu| Nrot_{l-lambda}^{m-mu}
/// with Nrot = M_child e^{i nu phi} (s/s')^n and `reg` the real regular table.
template <class Real>
KOKKOS_INLINE_FUNCTION Complex<Real> m2mSum(int l, int m, Complex<Real> const *Nrot,
                                            Real const *reg)
{
  Real acc_re = Real(0);
  Real acc_im = Real(0);
  Real binomial = Real(1); // C(l, lambda)
  for (int lambda = 0; lambda <= l; ++lambda)
  {
    int const n = l - lambda;
    int const mu_first = kfmm::detail::max(-lambda, m - n);
    int const mu_last = kfmm::detail::min(lambda, m + n);
    Real sum_re = Real(0);
    Real sum_im = Real(0);
    for (int mu = mu_first; mu <= mu_last; ++mu)
    {
      int const nu = m - mu;
      Real const a =
          parity<Real>((iabs(mu) + iabs(nu) - m) / 2) * reg[coefficientIndex(lambda, iabs(mu))];
      Complex<Real> const c = Nrot[coefficientIndex(n, iabs(nu))];
      sum_re += a * c.real();
      sum_im += nu < 0 ? -a * c.imag() : a * c.imag();
    }
    acc_re += binomial * sum_re;
    acc_im += binomial * sum_im;
    binomial = binomial * Real(l - lambda) / Real(lambda + 1);
  }
  return Complex<Real>(acc_re, acc_im);
}

/// The inner sums of (T3) for one output (j, k >= 0), before the output phase and scale:
///   sum_{n>=j} C(n, j) sum_mu S(k, mu) Lrot_n^{k+mu} |R_{n-j}^mu|
/// with Lrot = L_parent e^{i m phi} and `reg` the real regular table.
template <class Real>
KOKKOS_INLINE_FUNCTION Complex<Real> l2lSum(int p, int j, int k, Complex<Real> const *Lrot,
                                            Real const *reg)
{
  Real acc_re = Real(0);
  Real acc_im = Real(0);
  Real binomial = Real(1); // C(n, j)
  for (int n = j; n <= p; ++n)
  {
    int const lambda = n - j;
    Real sum_re = Real(0);
    Real sum_im = Real(0);
    for (int mu = -lambda; mu <= lambda; ++mu)
    {
      int const m = k + mu;
      Real const a =
          parity<Real>((k + iabs(mu) - iabs(m)) / 2) * reg[coefficientIndex(lambda, iabs(mu))];
      Complex<Real> const c = Lrot[coefficientIndex(n, iabs(m))];
      sum_re += a * c.real();
      sum_im += m < 0 ? -a * c.imag() : a * c.imag();
    }
    acc_re += binomial * sum_re;
    acc_im += binomial * sum_im;
    binomial = binomial * Real(n + 1) / Real(n + 1 - j);
  }
  return Complex<Real>(acc_re, acc_im);
}

/// Per-pair set-up of (T2): the unit direction, the real irregular table up to degree 2p
/// (column by column, so a team can share the columns out) and the rotated source.
template <class Real>
struct M2LPair
{
  Polar<Real> g;
  Real r;
  Real source_ratio; // s / r
  Real target_ratio; // t / r

  KOKKOS_INLINE_FUNCTION M2LPair(Real dx, Real dy, Real dz, Real source_scale, Real target_scale)
  {
    g = unitPolar(dx, dy, dz, r);
    source_ratio = source_scale / r;
    target_ratio = target_scale / r;
  }

  /// Column `column` (0..2p) of the irregular table, and, for column <= p, of the rotated
  /// source and its phase.
  KOKKOS_INLINE_FUNCTION void setUpColumn(int p, int column, Complex<Real> const *M,
                                          Complex<Real> *Mrot, Complex<Real> *phases,
                                          Real *irr) const
  {
    irregularColumn(g, column, 2 * p, Real(1), irr);
    if (column <= p)
    {
      Complex<Real> const e = phase(g, column);
      phases[column] = e;
      rotateColumn(column, p, e, source_ratio, M, Mrot);
    }
  }

  /// The contribution of the pair to output coefficient `index` (degree j, order k), for
  /// launchers that sum many pairs in registers before writing.
  KOKKOS_INLINE_FUNCTION Complex<Real> coefficient(int p, int index, Complex<Real> const *Mrot,
                                                   Complex<Real> const *phases,
                                                   Real const *irr) const
  {
    int const j = degreeOf(index);
    int const k = index - coefficientIndex(j, 0);
    Real const factor = parity<Real>(j) * ipow(target_ratio, j) / r;
    Complex<Real> out(Real(0), Real(0));
    addUnrotated(out, phases[k], m2lSum(p, j, k, Mrot, irr), factor);
    return out;
  }

  /// Adds the contribution to output coefficient `index` to L[index].
  KOKKOS_INLINE_FUNCTION void addCoefficient(int p, int index, Complex<Real> const *Mrot,
                                             Complex<Real> const *phases, Real const *irr,
                                             Complex<Real> *L) const
  {
    L[index] += coefficient(p, index, Mrot, phases, irr);
  }
};

/// Per-pair set-up of (T1) and (T3): the offset in units of `unit`, its real regular table
/// up to degree p and the rotated input.
template <class Real>
struct ShiftPair
{
  Polar<Real> g;

  KOKKOS_INLINE_FUNCTION ShiftPair(Real dx, Real dy, Real dz, Real unit)
  {
    Real const inv = Real(1) / unit;
    g = polar(dx * inv, dy * inv, dz * inv);
  }

  KOKKOS_INLINE_FUNCTION void setUpColumn(int p, int column, Real input_ratio,
                                          Complex<Real> const *in, Complex<Real> *rotated,
                                          Complex<Real> *phases, Real *reg) const
  {
    regularColumn(g, column, p, reg);
    Complex<Real> const e = phase(g, column);
    phases[column] = e;
    rotateColumn(column, p, e, input_ratio, in, rotated);
  }
};

/// Adds output coefficient `index` of (T1).
template <class Real>
KOKKOS_INLINE_FUNCTION void m2mCoefficient(int index, Complex<Real> const *Nrot,
                                           Complex<Real> const *phases, Real const *reg,
                                           Complex<Real> *M_parent)
{
  int const l = degreeOf(index);
  int const m = index - coefficientIndex(l, 0);
  addUnrotated(M_parent[index], phases[m], m2mSum(l, m, Nrot, reg), Real(1));
}

/// Adds output coefficient `index` of (T3); `ratio` = t'/t.
template <class Real>
KOKKOS_INLINE_FUNCTION void l2lCoefficient(int p, int index, Real ratio, Complex<Real> const *Lrot,
                                           Complex<Real> const *phases, Real const *reg,
                                           Complex<Real> *L_child)
{
  int const j = degreeOf(index);
  int const k = index - coefficientIndex(j, 0);
  addUnrotated(L_child[index], phases[k], l2lSum(p, j, k, Lrot, reg), ipow(ratio, j));
}

} // namespace detail

/// Approximate floating-point operation counts (additions and multiplications; a division
/// or square root counts as one) of one call of each operator at order p, for the solver's
/// statistics. They follow the loops below.
namespace flops
{

/// P2M per particle: per coefficient, one step of (R1) (7) and q conj(R) added (4).
KOKKOS_INLINE_FUNCTION constexpr long p2m(int p) { return 11L * coefficientCount(p) + 20; }

/// L2P per particle: per coefficient, (R1) (7), R = |R| e (2), potential (3) and the two
/// gradient terms (14).
KOKKOS_INLINE_FUNCTION constexpr long l2p(int p) { return 26L * coefficientCount(p) + 20; }

/// M2P per particle: as L2P, with (I1) one degree further.
KOKKOS_INLINE_FUNCTION constexpr long m2p(int p) { return 26L * coefficientCount(p + 1) + 20; }

/// M2L per pair: (p+1)(p+2)/2 outputs, each sum_{n<=p} (7 n + 10) from m2lSum, plus the
/// set-up (irregular table to degree 2p, rotated source) and the output phase.
KOKKOS_INLINE_FUNCTION constexpr long m2l(int p)
{
  long const per_output = 7L * p * (p + 1) / 2 + 10L * (p + 1) + 12;
  return coefficientCount(p) * per_output + 8L * coefficientCount(2 * p) + 8L * coefficientCount(p);
}

/// M2M or L2L per pair: 5 flops per term of (T1)/(T3), term counts summed exactly.
KOKKOS_INLINE_FUNCTION constexpr long m2m(int p)
{
  long terms = 0;
  for (int l = 0; l <= p; ++l)
    for (int m = 0; m <= l; ++m)
      for (int lambda = 0; lambda <= l; ++lambda)
      {
        int const n = l - lambda;
        int const first = -lambda > m - n ? -lambda : m - n;
        int const last = lambda < m + n ? lambda : m + n;
        terms += last >= first ? last - first + 1 : 0;
      }
  return 5 * terms + 16L * coefficientCount(p);
}

KOKKOS_INLINE_FUNCTION constexpr long l2l(int p)
{
  long terms = 0;
  for (int j = 0; j <= p; ++j)
    for (int n = j; n <= p; ++n)
      terms += (j + 1) * (2 * (n - j) + 1);
  return 5 * terms + 16L * coefficientCount(p);
}

} // namespace flops

/// P2M: adds one charge to a multipole expansion (seed 001, eq. (2)):
/// M_n^m += q conj(R_n^m(d / scale)), the regular harmonics generated on the fly column by
/// column with (R1), so no local array is used.
///
/// \param [in]     p      expansion order, 0 <= p <= max_order
/// \param [in]     dx,dy,dz  particle position minus expansion centre
/// \param [in]     q      charge
/// \param [in,out] M      coefficientCount(p) multipole coefficients (added to)
/// \param [in]     scale  length unit of M (> 0; the cell radius is a good choice)
template <class Real>
KOKKOS_INLINE_FUNCTION void p2m(int p, Real dx, Real dy, Real dz, Real q, Kokkos::complex<Real> *M,
                                Real scale = Real(1))
{
  using detail::Complex;
  Real const inv = Real(1) / scale;
  auto const g = detail::polar(dx * inv, dy * inv, dz * inv);
  Real diagonal = q; // q |R_m^m|
  Complex<Real> e(Real(1), Real(0));
  Complex<Real> const e1(g.cos_phi, g.sin_phi);
  for (int m = 0; m <= p; ++m)
  {
    // q conj(R_n^m) = q |R_n^m| e^{-i m phi}
    Real a_prev = Real(0);
    Real a = diagonal;
    for (int n = m; n <= p; ++n)
    {
      M[coefficientIndex(n, m)] += Complex<Real>(a * e.real(), -a * e.imag());
      Real const next = detail::regularNext(n, m, g.z, g.r2, a, a_prev);
      a_prev = a;
      a = next;
    }
    diagonal *= Real(0.5) * g.rho;
    e = e * e1;
  }
}

/// L2P: adds the potential and field of a local expansion at one point (seed 001, eq. (3)),
/// the field from the degree-1 part of (T3) moved onto the point. The harmonics are
/// generated on the fly; no local array is used.
///
/// \param [in]     p      expansion order
/// \param [in]     dx,dy,dz  point minus expansion centre
/// \param [in]     L      coefficientCount(p) local coefficients
/// \param [in,out] phi    potential (added to)
/// \param [in,out] gx,gy,gz  field = grad potential (added to)
/// \param [in]     scale  length unit of L
/// \param [in]     steps  the steps of (R1): computed, or read from a table
///                        (detail::TabulatedRegularSteps)
template <class Real, class Steps = detail::ComputedRegularSteps<Real>>
KOKKOS_INLINE_FUNCTION void l2p(int p, Real dx, Real dy, Real dz, Kokkos::complex<Real> const *L,
                                Real &phi, Real &gx, Real &gy, Real &gz, Real scale = Real(1),
                                Steps const &steps = {})
{
  using detail::Complex;
  Real const inv = Real(1) / scale;
  auto const g = detail::polar(dx * inv, dy * inv, dz * inv);
  Real potential = Real(0);
  Real l10 = Real(0);                      // L'_1^0 * scale
  Real l11_re = Real(0), l11_im = Real(0); // L'_1^1 * scale
  Real diagonal = Real(1);
  Complex<Real> e(Real(1), Real(0));
  Complex<Real> const e1(g.cos_phi, g.sin_phi);
  for (int mu = 0; mu <= p; ++mu)
  {
    // m and -m together: 2 Re(L_n^m R_n^m), once for m = 0.
    Real const weight = mu == 0 ? Real(1) : Real(2);
    Real a_prev = Real(0);
    Real a = diagonal;
    for (int n = mu; n <= p; ++n)
    {
      Real const r_re = a * e.real();
      Real const r_im = a * e.imag();
      Complex<Real> const c = L[coefficientIndex(n, mu)];
      potential += weight * (c.real() * r_re - c.imag() * r_im);
      if (n < p)
      {
        // (T3) with j = 1 and unit child scale: the coefficients of degree n + 1 meet
        // R_n^mu with weight C(n+1, 1) = n + 1.
        Real const w = Real(n + 1);
        Complex<Real> const up = L[coefficientIndex(n + 1, mu)];
        l10 += w * weight * (up.real() * r_re - up.imag() * r_im);
        // L'_1^1: + L_{n+1}^{mu+1} R_n^mu (order m = mu + 1 >= 1) ...
        Complex<Real> const right = L[coefficientIndex(n + 1, mu + 1)];
        l11_re += w * (right.real() * r_re - right.imag() * r_im);
        l11_im += w * (right.real() * r_im + right.imag() * r_re);
        // ... - conj(L_{n+1}^{mu-1} R_n^mu) (order m = 1 - mu <= 0, R_n^{-mu} = conj R_n^mu)
        if (mu > 0)
        {
          Complex<Real> const left = L[coefficientIndex(n + 1, mu - 1)];
          l11_re -= w * (left.real() * r_re - left.imag() * r_im);
          l11_im += w * (left.real() * r_im + left.imag() * r_re);
        }
      }
      Real const next = steps(n, mu).next(g.z, g.r2, a, a_prev);
      a_prev = a;
      a = next;
    }
    diagonal *= Real(0.5) * g.rho;
    e = e * e1;
  }
  phi += potential;
  gx += l11_re * inv;
  gy -= l11_im * inv;
  gz += l10 * inv;
}

/// M2P: adds the potential and field of a multipole expansion at one point (the treecode
/// far field, seed 001, eq. (2)), the field from the degree-1 part of (T2) at the point.
/// The irregular harmonics up to degree p + 1 are generated on the fly with (I1).
///
/// \param [in]     p      expansion order
/// \param [in]     dx,dy,dz  point minus expansion centre (|d| > the source radius)
/// \param [in]     M      coefficientCount(p) multipole coefficients
/// \param [in,out] phi    potential (added to)
/// \param [in,out] gx,gy,gz  field = grad potential (added to)
/// \param [in]     scale  length unit of M
template <class Real>
KOKKOS_INLINE_FUNCTION void m2p(int p, Real dx, Real dy, Real dz, Kokkos::complex<Real> const *M,
                                Real &phi, Real &gx, Real &gy, Real &gz, Real scale = Real(1))
{
  using detail::Complex;
  Real const inv = Real(1) / scale;
  auto const g = detail::polar(dx * inv, dy * inv, dz * inv);
  Real const inv_r = Real(1) / kfmm::detail::sqrt(g.r2);
  Real const inv_r2 = inv_r * inv_r;
  Real potential = Real(0);
  Real l10 = Real(0);
  Real l11_re = Real(0), l11_im = Real(0);
  Complex<Real> e(Real(1), Real(0));
  Complex<Real> const e1(g.cos_phi, g.sin_phi);
  Real diagonal = inv_r; // |I_mu^mu|
  Real const diagonal_step = g.rho * inv_r2;
  for (int mu = 0; mu <= p + 1; ++mu)
  {
    Real const weight = mu == 0 ? Real(1) : Real(2);
    Real b_prev = Real(0);
    Real b = diagonal;
    for (int n = mu; n <= p + 1; ++n)
    {
      Real const i_re = b * e.real();
      Real const i_im = b * e.imag();
      if (n <= p)
      {
        Complex<Real> const c = M[coefficientIndex(n, mu)];
        potential += weight * (c.real() * i_re - c.imag() * i_im);
      }
      if (n >= 1)
      {
        // (T2) with j = 1 and a unit target scale: M_{n-1} meets I_n with weight
        // -C(n, n-1) = -n; the order signs (-1)^{max(0, min(m, 1))} give
        //   L_1^0 = -sum n M_{n-1}^m I_n^m,
        //   L_1^1 = sum n [M_{n-1}^{mu+1} I_n^mu - conj(M_{n-1}^{mu-1} I_n^mu)].
        Real const w = Real(n);
        if (mu <= n - 1)
        {
          Complex<Real> const c = M[coefficientIndex(n - 1, mu)];
          l10 -= w * weight * (c.real() * i_re - c.imag() * i_im);
        }
        if (mu + 1 <= n - 1)
        {
          Complex<Real> const right = M[coefficientIndex(n - 1, mu + 1)];
          l11_re += w * (right.real() * i_re - right.imag() * i_im);
          l11_im += w * (right.real() * i_im + right.imag() * i_re);
        }
        if (mu >= 1)
        {
          Complex<Real> const left = M[coefficientIndex(n - 1, mu - 1)];
          l11_re -= w * (left.real() * i_re - left.imag() * i_im);
          l11_im += w * (left.real() * i_im + left.imag() * i_re);
        }
      }
      Real const next = detail::irregularNext(n, mu, g.z, inv_r2, b, b_prev);
      b_prev = b;
      b = next;
    }
    diagonal *= Real(2 * mu + 1) / Real(mu + 1) * diagonal_step;
    e = e * e1;
  }
  phi += potential * inv;
  Real const inv2 = inv * inv;
  gx += l11_re * inv2;
  gy -= l11_im * inv2;
  gz += l10 * inv2;
}

/// M2M: translates a child's multipole expansion to its parent's centre and adds it, (T1).
/// Exact: the parent coefficients up to degree p depend only on child degrees <= p.
/// Thread-local arrays of 8 KiB (double) hold the regular table and the rotated input;
/// on a GPU prefer m2mTeam.
///
/// \param [in]     p        expansion order, <= max_order
/// \param [in]     dx,dy,dz child centre minus parent centre
/// \param [in]     M_child  coefficientCount(p) coefficients, scale `child_scale`
/// \param [in,out] M_parent coefficientCount(p) coefficients, scale `parent_scale` (added to)
template <class Real>
KOKKOS_INLINE_FUNCTION void m2m(int p, Real dx, Real dy, Real dz,
                                Kokkos::complex<Real> const *M_child,
                                Kokkos::complex<Real> *M_parent, Real child_scale = Real(1),
                                Real parent_scale = Real(1))
{
  using detail::Complex;
  KOKKOS_EXPECTS(0 <= p && p <= max_order);
  Real reg[coefficientCount(max_order)];
  Complex<Real> rotated[coefficientCount(max_order)];
  Complex<Real> phases[max_order + 1];
  detail::ShiftPair<Real> const pair(dx, dy, dz, parent_scale);
  Real const ratio = child_scale / parent_scale;
  for (int column = 0; column <= p; ++column)
    pair.setUpColumn(p, column, ratio, M_child, rotated, phases, reg);
  for (int index = 0; index < coefficientCount(p); ++index)
    detail::m2mCoefficient(index, rotated, phases, reg, M_parent);
}

/// M2L: converts a source cell's multipole expansion into a local expansion about a
/// well-separated target centre and adds it, (T2) = seed 001, eq. (4).
/// It keeps the real irregular table to degree 2 max_order and the rotated source in
/// thread-local arrays (15 KiB in double, 8 KiB in float): one pair per CPU thread is
/// fine; on a GPU use m2lTeam, which puts them in team scratch sized for p.
///
/// \param [in]     p        expansion order, <= max_order
/// \param [in]     dx,dy,dz target centre minus source centre (non-zero)
/// \param [in]     M        coefficientCount(p) multipole coefficients, scale `source_scale`
/// \param [in,out] L        coefficientCount(p) local coefficients, scale `target_scale`
///                          (added to)
template <class Real>
KOKKOS_INLINE_FUNCTION void m2l(int p, Real dx, Real dy, Real dz, Kokkos::complex<Real> const *M,
                                Kokkos::complex<Real> *L, Real source_scale = Real(1),
                                Real target_scale = Real(1))
{
  using detail::Complex;
  KOKKOS_EXPECTS(0 <= p && p <= max_order);
  Real irr[coefficientCount(2 * max_order)];
  Complex<Real> rotated[coefficientCount(max_order)];
  Complex<Real> phases[max_order + 1];
  detail::M2LPair<Real> const pair(dx, dy, dz, source_scale, target_scale);
  for (int column = 0; column <= 2 * p; ++column)
    pair.setUpColumn(p, column, M, rotated, phases, irr);
  for (int index = 0; index < coefficientCount(p); ++index)
    pair.addCoefficient(p, index, rotated, phases, irr, L);
}

/// L2L: translates a parent's local expansion to a child's centre and adds it, (T3).
/// Exact (a shift of a polynomial of degree p). Thread-local arrays as m2m.
///
/// \param [in]     p        expansion order, <= max_order
/// \param [in]     dx,dy,dz child centre minus parent centre
/// \param [in]     L_parent coefficientCount(p) coefficients, scale `parent_scale`
/// \param [in,out] L_child  coefficientCount(p) coefficients, scale `child_scale` (added to)
template <class Real>
KOKKOS_INLINE_FUNCTION void l2l(int p, Real dx, Real dy, Real dz,
                                Kokkos::complex<Real> const *L_parent,
                                Kokkos::complex<Real> *L_child, Real parent_scale = Real(1),
                                Real child_scale = Real(1))
{
  using detail::Complex;
  KOKKOS_EXPECTS(0 <= p && p <= max_order);
  Real reg[coefficientCount(max_order)];
  Complex<Real> rotated[coefficientCount(max_order)];
  Complex<Real> phases[max_order + 1];
  detail::ShiftPair<Real> const pair(dx, dy, dz, parent_scale);
  for (int column = 0; column <= p; ++column)
    pair.setUpColumn(p, column, Real(1), L_parent, rotated, phases, reg);
  Real const ratio = child_scale / parent_scale;
  for (int index = 0; index < coefficientCount(p); ++index)
    detail::l2lCoefficient(p, index, ratio, rotated, phases, reg, L_child);
}

} // namespace kfmm::expansions

#endif
