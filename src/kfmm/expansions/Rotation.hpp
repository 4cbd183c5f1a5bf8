// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXPANSIONS_ROTATION_HPP
#define KFMM_EXPANSIONS_ROTATION_HPP

// The rotation - coaxial translation - rotation M2L (RCR: White & Head-Gordon 1996; Gumerov &
// Duraiswami 2008; Fortin & Lamotte 2013 find it faster than their BLAS M2L at high orders
// only, as kfmm's measurements do, docs/TUNING.md): rotate the source's
// multipole expansion so that the pair's offset lies on the z axis, translate it along that
// axis, rotate the local expansion back. Each step is O(p^3) per pair, against O(p^4) for
// (T2) of Operators.hpp. See SphericalHarmonics.hpp for R_n^m and I_n^m.
//
// With Q = R_y(-theta), the rotation that takes the direction (sin theta, 0, cos theta) to
// the z axis, the regular harmonics of one degree n mix among themselves:
//
//   R_n^m(Q y) = sum_{|m'| <= n} W^n_{m m'}(theta) R_n^{m'}(y),                           (W)
//   W^n_{m m'} = (c_{n|m|} / c_{n|m'|}) e_m e_{m'} d^n_{m' m}(theta),
//   c_{n m} = n! / sqrt((n + m)! (n - m)!),    e_m = (-1)^m for m >= 0, 1 for m < 0,
//
// with d^n the Wigner small-d matrix of the orthonormal harmonics (Edmonds 1957, ch. 4). The
// factors convert between kfmm's balanced harmonics and the orthonormal ones with the
// Condon-Shortley phase: R_n^m = c_{n|m|} e_m sqrt(4 pi / (2n + 1)) r^n Y_n^m.
// W is real (the rotation commutes with y -> -y, which conjugates every R_n^m).
//
// d^n_{m' m}(beta) is evaluated through a Jacobi polynomial (Edmonds 1957, ch. 4),
// whose three-term recurrence in the degree is stable for cos beta in [-1, 1]: with
// k = min(n + m, n - m, n + m', n - m'),
//   k = n + m:  a = m' - m, lambda = m' - m;      k = n - m:  a = m - m', lambda = 0;
//   k = n + m': a = m - m', lambda = 0;           k = n - m': a = m' - m, lambda = m' - m;
//   b = 2n - 2k - a,
//   d^n_{m' m} = (-1)^lambda C(2n - k, k + a)^{1/2} C(k + b, b)^{-1/2}
//                sin^a(beta / 2) cos^b(beta / 2) P_k^{(a, b)}(cos beta).
// The explicit sum over s (Wigner's formula) would lose up to 8 digits to cancellation at
// degree 24; the recurrence loses none.
//
// A multipole expansion then rotates with W and a local one with W's transpose:
//   M'_n^m = sum_{m'} W^n_{m m'} M_n^{m'}     (M' = sum_j q_j conj(R_n^m(Q y_j)), W real)
//   L_n^{m'} = sum_m W^n_{m m'} L'_n^m        (sum L'_n^m R_n^m(Q x) = sum L_n^m R_n^m(x))
// where primes are coefficients in the rotated frame. Both use only orders >= 0, the
// others being conjugates (real charges): for an output order k >= 0,
//   M'_n^k = sum_{m' >= 0} A_{k m'} Re M_n^{m'} + i B_{k m'} Im M_n^{m'},
//   A_{k m'} = W_{k m'} + W_{k,-m'}, B_{k m'} = W_{k m'} - W_{k,-m'} (m' > 0); W_{k 0}, 0.
// The transposed pair is the same with W_{m' k} and W_{-m', k}.
//
// The whole M2L of a pair with offset D = target - source centre, r = |D|, polar angles
// (theta, phi), source scale s and target scale t:
//   1. Mz_n^m = M_n^m e^{i m phi} (s/r)^n   (rotation about z by -phi, Operators.hpp)
//   2. M'_n^k = sum_{m'} W^n_{k m'}(theta) Mz_n^{m'}                                 (W)
//   3. L'_j^k = (-1)^(j+k) (t/r)^j / r sum_{n=k}^{p} C(j+n, n) M'_n^k                 (C)
//      (T2) with D on the z axis, where I_{j+n}^{m-k}(z) = 0 unless m = k, and 1 then;
//      the binomials come from a table made once per team (coaxialBinomialsTeam): built
//      term by term, each one a division after the last, they made one long chain of
//      dependent divisions per coefficient;
//   4. L_j^{m'} += e^{-i m' phi} sum_m W^j_{m m'}(theta) L'_j^m.
// The tables of one direction (rotationTableSize(p) reals) hold the pairs (A, B) of step 2
// and of step 4 for every degree, computed once per direction in double (M2LRotations.hpp).

#include <kfmm/expansions/Operators.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::expansions
{
namespace detail
{

/// Binomial coefficient C(a, b) in double, 0 <= b <= a (exact below 2^53).
KOKKOS_INLINE_FUNCTION double binomial(int a, int b)
{
  if (b > a - b)
    b = a - b;
  double c = 1.0;
  for (int i = 1; i <= b; ++i)
    c = c * double(a - b + i) / double(i);
  return c;
}

/// The Jacobi polynomial P_k^{(a, b)}(x) by its three-term recurrence in the degree.
KOKKOS_INLINE_FUNCTION double jacobi(int k, int a, int b, double x)
{
  double previous = 1.0;
  if (k == 0)
    return previous;
  double current = 0.5 * (2 * (a + 1) + (a + b + 2) * (x - 1.0));
  for (int i = 2; i <= k; ++i)
  {
    double const s = 2 * i + a + b;
    double const next = ((s - 1) * (s * (s - 2) * x + double(a * a - b * b)) * current -
                         2.0 * (i + a - 1) * (i + b - 1) * s * previous) /
                        (2.0 * i * (i + a + b) * (s - 2));
    previous = current;
    current = next;
  }
  return current;
}

} // namespace detail

/// The Wigner small-d matrix element d^n_{m' m}(beta), |m|, |m'| <= n, given cos beta and
/// the half-angle sine and cosine (see the file comment).
KOKKOS_INLINE_FUNCTION double wignerSmallD(int n, int m_prime, int m, double cos_beta,
                                           double sin_half, double cos_half)
{
  int const candidates[4] = {n + m, n - m, n + m_prime, n - m_prime};
  int which = 0;
  for (int i = 1; i < 4; ++i)
    which = candidates[i] < candidates[which] ? i : which;
  int const k = candidates[which];
  int const a = which == 0 || which == 3 ? m_prime - m : m - m_prime;
  int const lambda = which == 0 || which == 3 ? m_prime - m : 0;
  int const b = 2 * n - 2 * k - a;
  double const norm =
      kfmm::detail::sqrt(detail::binomial(2 * n - k, k + a) / detail::binomial(k + b, b));
  return detail::parity<double>(lambda) * norm * detail::ipow(sin_half, a) *
         detail::ipow(cos_half, b) * detail::jacobi(k, a, b, cos_beta);
}

/// W^n_{m m'}(theta) of (W): R_n^m(Q y) = sum_{m'} W^n_{m m'} R_n^{m'}(y), Q = R_y(-theta).
KOKKOS_INLINE_FUNCTION double rotationElement(int n, int m, int m_prime, double cos_theta,
                                              double sin_half, double cos_half)
{
  using detail::iabs;
  // c_{n|m|} / c_{n|m'|} = sqrt(C(2n, n + |m|) / C(2n, n + |m'|)).
  double const ratio = kfmm::detail::sqrt(detail::binomial(2 * n, n + iabs(m)) /
                                          detail::binomial(2 * n, n + iabs(m_prime)));
  double const signs = (m >= 0 ? detail::parity<double>(m) : 1.0) *
                       (m_prime >= 0 ? detail::parity<double>(m_prime) : 1.0);
  return ratio * signs * wignerSmallD(n, m_prime, m, cos_theta, sin_half, cos_half);
}

/// Table entries per step of a direction's rotations: for each degree n, (n + 1)^2 pairs.
KOKKOS_INLINE_FUNCTION constexpr int rotationEntries(int p)
{
  return (p + 1) * (p + 2) * (2 * p + 3) / 6;
}

/// First entry of degree n.
KOKKOS_INLINE_FUNCTION constexpr int rotationEntryOffset(int n)
{
  return n * (n + 1) * (2 * n + 1) / 6;
}

/// Reals of one direction's tables: the (A, B) pairs of step 2, then those of step 4.
KOKKOS_INLINE_FUNCTION constexpr int rotationTableSize(int p) { return 4 * rotationEntries(p); }

/// Fills entry e of the tables of the direction with polar angle theta (cos and sin given):
/// degree n, row and column (e = rotationEntryOffset(n) + row * (n + 1) + col). Step 2's
/// row is the output order k and its column the input order m'; step 4's row is the output
/// order m' and its column the input order m. A degree's table is stored by columns, pair
/// (row, col) at rotationEntryOffset(n) + col * (n + 1) + row: the threads of a team, one
/// output order each, then read consecutive pairs at each step of their rows (coalesced on
/// a GPU).
template <class Real>
KOKKOS_INLINE_FUNCTION void rotationTableEntry(int p, int e, double cos_theta, double sin_theta,
                                               Real *table)
{
  int n = 0;
  while (rotationEntryOffset(n + 1) <= e)
    ++n;
  int const row = (e - rotationEntryOffset(n)) / (n + 1);
  int const col = (e - rotationEntryOffset(n)) % (n + 1);
  // Half angles without cancellation on either side of theta = pi/2.
  double sin_half, cos_half;
  if (cos_theta >= 0)
  {
    cos_half = kfmm::detail::sqrt(0.5 * (1.0 + cos_theta));
    sin_half = 0.5 * sin_theta / cos_half;
  }
  else
  {
    sin_half = kfmm::detail::sqrt(0.5 * (1.0 - cos_theta));
    cos_half = 0.5 * sin_theta / sin_half;
  }
  auto const w = [&](int m, int m_prime) {
    return rotationElement(n, m, m_prime, cos_theta, sin_half, cos_half);
  };
  int const stored = rotationEntryOffset(n) + col * (n + 1) + row;
  Real *forward = table + 2 * stored;
  Real *backward = table + 2 * rotationEntries(p) + 2 * stored;
  if (col == 0)
  {
    forward[0] = static_cast<Real>(w(row, 0));
    forward[1] = Real(0);
    backward[0] = static_cast<Real>(w(0, row));
    backward[1] = Real(0);
  }
  else
  {
    double const plus = w(row, col), minus = w(row, -col);
    forward[0] = static_cast<Real>(plus + minus);
    forward[1] = static_cast<Real>(plus - minus);
    double const up = w(col, row), down = w(-col, row);
    backward[0] = static_cast<Real>(up + down);
    backward[1] = static_cast<Real>(up - down);
  }
}

/// Scratch of m2lRotatedTeam, in Kokkos::complex<Real>: the source in the rotated frame and
/// its translation.
KOKKOS_INLINE_FUNCTION constexpr int m2lRotatedTeamScratchSize(int p)
{
  return 2 * coefficientCount(p);
}

/// Reals of the table of step 3's binomials C(j + n, n), 0 <= j, n <= p.
KOKKOS_INLINE_FUNCTION constexpr int coaxialBinomialCount(int p) { return (p + 1) * (p + 1); }

/// Fills `binomials` (coaxialBinomialCount(p) reals, row j holding C(j + n, n) at n) with the
/// team's threads, for m2lRotatedTeam; exact in double below 2^53 (up to C(48, 24) at
/// order 24), then rounded once to Real. The caller makes it visible to the team (a barrier,
/// as m2lRotatedTeam begins with).
template <class TeamMember, class Real>
KOKKOS_INLINE_FUNCTION void coaxialBinomialsTeam(TeamMember const &team, int p, Real *binomials)
{
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, coaxialBinomialCount(p)), [&](int i) {
    int const j = i / (p + 1);
    int const n = i - j * (p + 1);
    binomials[i] = static_cast<Real>(detail::binomial(j + n, n));
  });
}

namespace detail
{

/// sum over m = 0..n of (A Re c_m, B Im c_m) for one row of a table of degree n, whose
/// pairs lie n + 1 apart (stored by columns): the rotation of one output coefficient (steps
/// 2 and 4). The pairs of `batch` steps are loaded before their products, so that their
/// loads wait one memory latency together: a direction's tables take 157 KiB at order 23 in
/// double, more than a GPU's L1 cache holds, so that many of these loads miss it
/// (docs/TUNING.md, "The M2L variant by order").
template <class Real>
KOKKOS_INLINE_FUNCTION Complex<Real> rotateRow(int n, Real const *row, Complex<Real> const *c)
{
  constexpr int batch = 4;
  int const stride = 2 * (n + 1);
  Real re[2] = {Real(0), Real(0)}, im[2] = {Real(0), Real(0)};
  int m = 0;
  for (; m + batch <= n + 1; m += batch)
  {
    Real a[batch], b[batch];
    for (int u = 0; u < batch; ++u)
    {
      a[u] = row[(m + u) * stride];
      b[u] = row[(m + u) * stride + 1];
    }
    for (int u = 0; u < batch; ++u)
    {
      re[u % 2] += a[u] * c[m + u].real();
      im[u % 2] += b[u] * c[m + u].imag();
    }
  }
  for (; m <= n; ++m)
  {
    re[0] += row[m * stride] * c[m].real();
    im[0] += row[m * stride + 1] * c[m].imag();
  }
  return Complex<Real>(re[0] + re[1], im[0] + im[1]);
}

} // namespace detail

/// Team M2L by rotation, coaxial translation and rotation back (the file comment's steps 1-4),
/// added to L; `table` holds the rotations of the pair's direction (rotationTableSize(p)
/// reals) and `binomials` the table of coaxialBinomialsTeam. Arguments otherwise as m2lTeam;
/// `work` is m2lRotatedTeamScratchSize(p) elements of team scratch. Each step is one pass of
/// the team's threads over the coefficients, whole output coefficients per thread, so L[i]
/// is written by the thread of i as in m2lTeam.
template <class TeamMember, class Real>
KOKKOS_INLINE_FUNCTION void m2lRotatedTeam(TeamMember const &team, int p, Real dx, Real dy, Real dz,
                                           Real const *table, Real const *binomials,
                                           Kokkos::complex<Real> const *M, Kokkos::complex<Real> *L,
                                           Kokkos::complex<Real> *work, Real source_scale = Real(1),
                                           Real target_scale = Real(1))
{
  using detail::Complex;
  int const count = coefficientCount(p);
  Complex<Real> *a = work;         // Mz, then L'
  Complex<Real> *b = work + count; // M'
  Real r;
  auto const g = detail::unitPolar(dx, dy, dz, r);
  Real const source_ratio = source_scale / r;
  Real const target_ratio = target_scale / r;
  Real const *backward = table + 2 * rotationEntries(p);
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int index) {
    int const n = detail::degreeOf(index);
    int const m = index - coefficientIndex(n, 0);
    a[index] = detail::rotate(M[index], detail::phase(g, m), detail::ipow(source_ratio, n));
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int index) {
    int const n = detail::degreeOf(index);
    int const k = index - coefficientIndex(n, 0);
    b[index] =
        detail::rotateRow(n, table + 2 * (rotationEntryOffset(n) + k), a + coefficientIndex(n, 0));
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int index) {
    int const j = detail::degreeOf(index);
    int const k = index - coefficientIndex(j, 0);
    Real const *binomial = binomials + j * (p + 1); // C(j + n, n) at n
    Real re = Real(0), im = Real(0);
    for (int n = k; n <= p; ++n)
    {
      Complex<Real> const c = b[coefficientIndex(n, k)];
      re += binomial[n] * c.real();
      im += binomial[n] * c.imag();
    }
    Real const factor = detail::parity<Real>(j + k) * detail::ipow(target_ratio, j) / r;
    a[index] = Complex<Real>(re * factor, im * factor);
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int index) {
    int const j = detail::degreeOf(index);
    int const m = index - coefficientIndex(j, 0);
    detail::addUnrotated(L[index], detail::phase(g, m),
                         detail::rotateRow(j, backward + 2 * (rotationEntryOffset(j) + m),
                                           a + coefficientIndex(j, 0)),
                         Real(1));
  });
}

namespace flops
{

/// M2L per pair by rotation (m2lRotatedTeam): steps 2 and 4 take 4 flops per table pair,
/// step 3 three per term, steps 1 and 4 about 12 per coefficient for phases and scales.
KOKKOS_INLINE_FUNCTION constexpr long m2lRotated(int p)
{
  long terms = 0;
  for (int j = 0; j <= p; ++j)
    for (int k = 0; k <= j; ++k)
      terms += p - k + 1;
  return 8L * rotationEntries(p) + 3 * terms + 24L * coefficientCount(p);
}

} // namespace flops
} // namespace kfmm::expansions

#endif
