// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_PERIODIC_LATTICE_COEFFICIENTS_HPP
#define KFMM_PERIODIC_LATTICE_COEFFICIENTS_HPP

// The far lattice of a cubic periodic box as a harmonic function, expanded once per order.
//
// With period L (volume V = L^3) the potential of a unit charge at the origin and its
// periodic images, with a uniform neutralising background and the tin-foil (conducting)
// boundary, is Ewald's (Ewald 1921; Deserno & Holm 1998, eq. (5) and the k = 0 convention):
//
//   psi(w) = sum_n erfc(a |w + nL|) / |w + nL|
//            + (4 pi / V) sum_{k != 0} exp(-k^2 / (4 a^2)) / k^2 cos(k . w) - pi / (a^2 V),
//
// k = 2 pi m / L, for any splitting parameter a > 0; the last term makes its mean over the
// box zero (a potential of a non-neutral system is defined up to a constant: this is the
// convention of the Ewald sums of cosmological codes). The solver computes the images with
// |n_d| <= 2 directly (tree/PeriodicImage.hpp) and needs the rest, the far lattice
//
//   psi_far(w) = psi(w) - sum_{|n_d| <= 2} 1 / |w + nL|,
//
// for |w| up to sqrt(3) L (a target and a source in the box). Its Laplacian is 4 pi / V (the
// background), so psi_far = h + (2 pi / (3 V)) |w|^2 with h harmonic for |w| < 3L, where its
// nearest singularity lies; the quadratic is the background's (periodic/FarLattice.hpp adds
// it at the particles). h is expanded in the regular solid harmonics of
// expansions/SphericalHarmonics.hpp, h(w) = sum_{l, m} a_l^m R_l^m(w), by quadrature on the
// sphere |w| = 1.75 L: Gauss-Legendre in cos(theta) times the trapezoidal rule in phi, exact
// for the products of harmonics up to degree 2 n_theta - 1, with n_theta chosen so that the
// degrees beyond it, which fall as (1.75 / 3)^l, alias below 1e-16 of h.
//
// Then sum_j q_j h(x - x_j), for targets x and sources x_j in the box, is an M2L from the
// sources' multipole about the box's centre c to a local expansion about it: by (H1), a
// source at c - D alone gives 1 / |w + D| = sum_{j, k} (-1)^j I_j^{-k}(D) R_j^k(w), so (T2) with
// the lattice's coefficients in place of the irregular harmonics, I_l^m(D) -> T_l^m =
// (-1)^l a_l^{-m} = (-1)^l conj(a_l^m), translates any multipole by the whole far lattice
// (the translation classes' argument in reverse: (T2) is linear in the I_l^m(D)). On a
// cubic lattice T_l^m vanishes for odd l and for l = 2, where the lattice sums of the
// irregular harmonics are conditionally convergent: the tin-foil boundary and the
// background fix them through psi (Smith 1981; Lambert, Darden & Board 1996 sum the same
// lattice in shells).

#include <kfmm/detail/Math.hpp>
#include <kfmm/expansions/SphericalHarmonics.hpp>

#include <cmath>
#include <complex>
#include <map>
#include <mutex>
#include <vector>

namespace kfmm::periodic
{

using kfmm::detail::pi;

/// psi_far(w) - (2 pi / 3) |w|^2 = h(w) for the unit period (L = V = 1), |w| < 3: the
/// Ewald sum with splitting parameter 3, whose real-space terms erfc(3 r) / r are below
/// 1e-20 beyond the images |n_d| <= 4 and whose reciprocal terms are below 1e-16 beyond
/// |m| = 6; the near images' 1/r taken out of their real-space terms (-erf(3 r) / r, smooth).
inline double unitFarLattice(double wx, double wy, double wz)
{
  constexpr double alpha = 3;
  constexpr int real_reach = 4;
  constexpr int wave_reach = 6;
  double sum = 0;
  for (int nx = -real_reach; nx <= real_reach; ++nx)
    for (int ny = -real_reach; ny <= real_reach; ++ny)
      for (int nz = -real_reach; nz <= real_reach; ++nz)
      {
        double const dx = wx + nx, dy = wy + ny, dz = wz + nz;
        double const r = std::sqrt(dx * dx + dy * dy + dz * dz);
        bool const near = std::abs(nx) <= 2 && std::abs(ny) <= 2 && std::abs(nz) <= 2;
        if (near)
          sum -= r > 0 ? std::erf(alpha * r) / r : 2 * alpha / std::sqrt(pi);
        else if (alpha * r < 7)
          sum += std::erfc(alpha * r) / r;
      }
  // (4 pi / V) e^{-k^2 / 4 a^2} / k^2 = e^{-pi^2 m^2 / a^2} / (pi m^2), over m and -m
  // together: 2 cos(2 pi m . w) for the half with m > 0 in lexicographic order.
  std::complex<double> phase_x[2 * wave_reach + 1], phase_y[2 * wave_reach + 1],
      phase_z[2 * wave_reach + 1];
  for (int m = -wave_reach; m <= wave_reach; ++m)
  {
    phase_x[m + wave_reach] = std::polar(1.0, 2 * pi * m * wx);
    phase_y[m + wave_reach] = std::polar(1.0, 2 * pi * m * wy);
    phase_z[m + wave_reach] = std::polar(1.0, 2 * pi * m * wz);
  }
  for (int mx = 0; mx <= wave_reach; ++mx)
    for (int my = -wave_reach; my <= wave_reach; ++my)
      for (int mz = -wave_reach; mz <= wave_reach; ++mz)
      {
        bool const positive = mx > 0 || (mx == 0 && (my > 0 || (my == 0 && mz > 0)));
        int const m2 = mx * mx + my * my + mz * mz;
        if (!positive || m2 > wave_reach * wave_reach)
          continue;
        double const weight = std::exp(-pi * pi * m2 / (alpha * alpha)) / (pi * m2);
        std::complex<double> const e =
            phase_x[mx + wave_reach] * phase_y[my + wave_reach] * phase_z[mz + wave_reach];
        sum += 2 * weight * e.real();
      }
  double const w2 = wx * wx + wy * wy + wz * wz;
  return sum - pi / (alpha * alpha) - 2 * pi / 3 * w2;
}

/// Gauss-Legendre nodes and weights on [-1, 1] (Newton's iteration on P_n from the
/// Chebyshev guesses).
inline void gaussLegendre(int n, std::vector<double> &nodes, std::vector<double> &weights)
{
  nodes.resize(n);
  weights.resize(n);
  for (int i = 0; i < n; ++i)
  {
    double z = std::cos(pi * (i + 0.75) / (n + 0.5));
    double derivative = 1;
    for (int iteration = 0; iteration < 100; ++iteration)
    {
      double p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k)
      {
        double const p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      derivative = n * (z * p1 - p0) / (z * z - 1);
      double const step = p1 / derivative;
      z -= step;
      if (std::abs(step) < 1e-16)
        break;
    }
    nodes[i] = z;
    weights[i] = 2 / ((1 - z * z) * derivative * derivative);
  }
}

/// The far lattice's coefficients T_l^m for the unit period, l <= degree, 0 <= m <= l, at
/// expansions::coefficientIndex(l, m) (the file comment): computed once per degree in a
/// process, in double, and kept.
inline std::vector<std::complex<double>> const &unitLatticeCoefficients(int degree)
{
  static std::mutex mutex;
  static std::map<int, std::vector<std::complex<double>>> computed;
  std::lock_guard<std::mutex> const lock(mutex);
  auto const found = computed.find(degree);
  if (found != computed.end())
    return found->second;

  constexpr double radius = 1.75;
  int const n_theta = degree / 2 + 36;
  int const n_phi = 2 * n_theta;
  std::vector<double> nodes, weights;
  gaussLegendre(n_theta, nodes, weights);
  int const count = expansions::coefficientCount(degree);
  std::vector<std::complex<double>> projection(count), norm_sum(count);
  std::vector<double> amplitude(count);
  std::vector<std::complex<double>> ring(degree + 1);
  for (int i = 0; i < n_theta; ++i)
  {
    double const z = nodes[i];
    double const rho = std::sqrt(1 - z * z);
    // Along the ring: F(m) = sum_j h(theta_i, phi_j) e^{-i m phi_j} (dphi = 2 pi / n_phi).
    for (auto &f : ring)
      f = 0;
    for (int j = 0; j < n_phi; ++j)
    {
      double const phi = 2 * pi * j / n_phi;
      double const h =
          unitFarLattice(radius * rho * std::cos(phi), radius * rho * std::sin(phi), radius * z);
      for (int m = 0; m <= degree; ++m)
        ring[m] += h * std::polar(1.0, -m * phi);
    }
    // |R_l^m| on the unit sphere at this ring (phi = 0).
    auto const g = expansions::detail::polar(rho, 0.0, z);
    for (int m = 0; m <= degree; ++m)
      expansions::detail::regularColumn(g, m, degree, amplitude.data());
    for (int l = 0; l <= degree; ++l)
      for (int m = 0; m <= l; ++m)
      {
        int const index = expansions::coefficientIndex(l, m);
        projection[index] += weights[i] * amplitude[index] * ring[m] * (2 * pi / n_phi);
        norm_sum[index] += weights[i] * amplitude[index] * amplitude[index] * (2 * pi);
      }
  }
  std::vector<std::complex<double>> coefficients(count);
  for (int l = 0; l <= degree; ++l)
    for (int m = 0; m <= l; ++m)
    {
      int const index = expansions::coefficientIndex(l, m);
      // a_l^m on the sphere of radius `radius`: R_l^m(radius u) = radius^l R_l^m(u).
      std::complex<double> const a =
          projection[index] / norm_sum[index].real() / std::pow(radius, l);
      coefficients[index] = (l % 2 == 0 ? 1.0 : -1.0) * std::conj(a);
    }
  return computed.emplace(degree, std::move(coefficients)).first->second;
}

} // namespace kfmm::periodic

#endif
