// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_ADVERSARIAL_HPP
#define KFMM_TESTS_ADVERSARIAL_HPP

// Particle sets that real simulations produce and that a solver computing in its caller's
// units gets wrong: coordinates far from 1 (astrophysical or atomic units), clusters far
// smaller than the set, points on a line, coincident points, charges summing to zero, results
// beyond float's range. Generated on the host in double from a seed, for the Catch2 tests and,
// written to files, for the program's tests.

#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kfmm::test
{

enum class Adversarial
{
  large_cube,       ///< uniform in a cube of side 1e20 at the origin, charges 1e15
  small_cube,       ///< uniform in a cube of side 1e-15 at the origin, charges 1/N
  two_clusters,     ///< two cubes of side 1e-12, at the origin and 1 away along x
  multiscale,       ///< half uniform in a cube of side 1e8, half in a 1e-6 cube inside it
  identical,        ///< every particle at one point
  line,             ///< uniform on a segment 1e6 long
  duplicated_pairs, ///< uniform in the unit cube, each point twice
  neutral,          ///< uniform in [-1, 1]^3, charges of both signs in pairs summing to 0
  huge_potential    ///< uniform in the unit cube, charges 1, but particles 2 (at the
                    ///< origin) and 3 are 1e-10 apart with charges 1e30: their potentials
                    ///< are 1e40
};

inline std::vector<Adversarial> allAdversarial()
{
  return {Adversarial::large_cube,       Adversarial::small_cube, Adversarial::two_clusters,
          Adversarial::multiscale,       Adversarial::identical,  Adversarial::line,
          Adversarial::duplicated_pairs, Adversarial::neutral,    Adversarial::huge_potential};
}

inline char const *adversarialName(Adversarial a)
{
  switch (a)
  {
  case Adversarial::large_cube: return "large_cube";
  case Adversarial::small_cube: return "small_cube";
  case Adversarial::two_clusters: return "two_clusters";
  case Adversarial::multiscale: return "multiscale";
  case Adversarial::identical: return "identical";
  case Adversarial::line: return "line";
  case Adversarial::duplicated_pairs: return "duplicated_pairs";
  case Adversarial::neutral: return "neutral";
  default: return "huge_potential";
  }
}

/// Positions (N x 3) and charges (N) on the host, in double.
struct HostParticles
{
  Kokkos::View<double *[3], Kokkos::HostSpace> x;
  Kokkos::View<double *, Kokkos::HostSpace> q;

  explicit HostParticles(std::size_t n) : x("kfmm::test::host_x", n), q("kfmm::test::host_q", n) {}
  std::size_t size() const { return x.extent(0); }
};

/// The set `a` of n particles (n >= 4), the same for the same seed on every platform.
inline HostParticles adversarial(Adversarial a, std::size_t n, std::uint64_t seed = 1)
{
  using kfmm::detail::uniform01;
  HostParticles p(n);
  // Coordinate d of particle i: uniform in [0, 1).
  auto const u = [&](std::size_t i, int d) { return uniform01(seed, i, d); };
  auto const cube = [&](std::size_t i, double side, double x0) {
    for (int d = 0; d < 3; ++d)
      p.x(i, d) = (d == 0 ? x0 : 0.0) + side * u(i, d);
  };
  for (std::size_t i = 0; i < n; ++i)
  {
    p.q(i) = 1.0 / static_cast<double>(n);
    switch (a)
    {
    case Adversarial::large_cube:
      cube(i, 1e20, 0);
      p.q(i) = 1e15;
      break;
    case Adversarial::small_cube: cube(i, 1e-15, 0); break;
    case Adversarial::two_clusters: cube(i, 1e-12, i < n / 2 ? 0.0 : 1.0); break;
    case Adversarial::multiscale:
      if (i < n / 2)
        cube(i, 1e8, 0);
      else
        for (int d = 0; d < 3; ++d) // the cluster's corner: particle 0's coordinates
          p.x(i, d) = 1e8 * u(0, d) + 1e-6 * u(i, d);
      break;
    case Adversarial::identical:
      p.x(i, 0) = 0.3;
      p.x(i, 1) = -0.2;
      p.x(i, 2) = 0.1;
      p.q(i) = 1;
      break;
    case Adversarial::line:
    {
      double const t = 1e6 * u(i, 0);
      p.x(i, 0) = t;
      p.x(i, 1) = 0.5 * t;
      p.x(i, 2) = 0.25 * t;
      p.q(i) = 1;
      break;
    }
    case Adversarial::duplicated_pairs:
      cube(i, 1, 0);
      if (i % 2 == 1)
        for (int d = 0; d < 3; ++d)
          p.x(i, d) = p.x(i - 1, d);
      p.q(i) = 1;
      break;
    case Adversarial::neutral:
      cube(i, 2, 0);
      for (int d = 0; d < 3; ++d)
        p.x(i, d) -= 1;
      // Pairs (2m, 2m + 1) of opposite charges of magnitude in [1, 2).
      p.q(i) = i % 2 == 0 ? 1 + u(i, 3) : -p.q(i - 1);
      if (i == n - 1 && n % 2 == 1)
        p.q(i) = 0;
      break;
    case Adversarial::huge_potential:
      cube(i, 1, 0);
      p.q(i) = 1;
      if (i == 2 || i == 3)
      {
        // At the origin, where float resolves 1e-10.
        for (int d = 0; d < 3; ++d)
          p.x(i, d) = 0;
        p.x(i, 0) = i == 3 ? 1e-10 : 0;
        p.q(i) = 1e30;
      }
      break;
    }
  }
  return p;
}

} // namespace kfmm::test

#endif
