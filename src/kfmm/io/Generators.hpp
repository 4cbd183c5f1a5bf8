// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_IO_GENERATORS_HPP
#define KFMM_IO_GENERATORS_HPP

// Seeded particle distributions shared by the tests, the kfmm program and the benchmarks.
// Particle i depends only on (seed, i): the same seed gives the same particles on every
// backend and thread count, generated in parallel on the device.

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Math.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace kfmm
{

enum class Distribution
{
  uniform,   ///< uniform in the cube [-1, 1]^3
  plummer,   ///< Plummer sphere of scale radius 1 (Plummer 1911), cut at 99.9% of the mass
  sphere,    ///< uniform on the unit sphere's surface
  ellipsoid, ///< on the surface of the ellipsoid with semi-axes 1:1:4 (Lashuk et al. 2009, V)
  cylinder   ///< uniform on the lateral surface of a cylinder of radius 1 and height 4
             ///< (Fortin & Lamotte 2013)
};

/// "uniform", "plummer", ... ; throws kfmm::Exception for an unknown name.
inline Distribution distributionFromName(std::string const &name)
{
  if (name == "uniform")
    return Distribution::uniform;
  if (name == "plummer")
    return Distribution::plummer;
  if (name == "sphere")
    return Distribution::sphere;
  if (name == "ellipsoid")
    return Distribution::ellipsoid;
  if (name == "cylinder")
    return Distribution::cylinder;
  throw Exception("kfmm::distributionFromName: unknown distribution '" + name +
                  "' (expected uniform, plummer, sphere, ellipsoid or cylinder)");
}

inline char const *distributionName(Distribution d)
{
  switch (d)
  {
  case Distribution::uniform: return "uniform";
  case Distribution::plummer: return "plummer";
  case Distribution::sphere: return "sphere";
  case Distribution::ellipsoid: return "ellipsoid";
  case Distribution::cylinder: return "cylinder";
  }
  return "?";
}

namespace detail
{

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): a counter-based generator, so that each
/// particle's random numbers come from its index alone.
KOKKOS_INLINE_FUNCTION std::uint64_t splitMix64(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The k-th uniform number in [0, 1) of particle i (53 random bits).
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t i, int k)
{
  std::uint64_t const bits = splitMix64(splitMix64(seed) ^ splitMix64(4 * i + k));
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

/// A point uniform on the unit sphere from two uniform numbers (Archimedes: z uniform).
KOKKOS_INLINE_FUNCTION void unitSphere(double u, double v, double &x, double &y, double &z)
{
  constexpr double two_pi = 6.283185307179586;
  z = 2 * u - 1;
  double const rho = sqrt(detail::max(0.0, 1 - z * z));
  x = rho * detail::cos(two_pi * v);
  y = rho * detail::sin(two_pi * v);
}

/// Particle first + i of the distribution `d` for `seed`: positions(i, :) and charges(i) =
/// `charge`.
template <class Positions, class Charges>
struct GenerateParticles
{
  using Real = typename Positions::non_const_value_type;

  Distribution d;
  std::uint64_t seed;
  double charge;
  Positions positions;
  Charges charges;
  std::uint64_t first = 0;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    std::uint64_t const index = first + i;
    double const u0 = detail::uniform01(seed, index, 0);
    double const u1 = detail::uniform01(seed, index, 1);
    double const u2 = detail::uniform01(seed, index, 2);
    double x = 0, y = 0, z = 0;
    switch (d)
    {
    case Distribution::uniform:
      x = 2 * u0 - 1;
      y = 2 * u1 - 1;
      z = 2 * u2 - 1;
      break;
    case Distribution::plummer:
    {
      // Inverse of the Plummer cumulative mass M(r) = r^3 / (1 + r^2)^(3/2) (Aarseth,
      // Henon & Wielen 1974), the mass fraction capped at 0.999 to bound the halo.
      double const m = detail::max(0.999 * u0, 1e-12);
      double const r = 1 / detail::sqrt(detail::pow(m, -2.0 / 3.0) - 1);
      detail::unitSphere(u1, u2, x, y, z);
      x *= r;
      y *= r;
      z *= r;
      break;
    }
    case Distribution::sphere: detail::unitSphere(u0, u1, x, y, z); break;
    case Distribution::ellipsoid:
      detail::unitSphere(u0, u1, x, y, z);
      z *= 4;
      break;
    case Distribution::cylinder:
    {
      constexpr double two_pi = 6.283185307179586;
      x = detail::cos(two_pi * u0);
      y = detail::sin(two_pi * u0);
      z = 4 * u1 - 2;
      break;
    }
    }
    positions(i, 0) = static_cast<Real>(x);
    positions(i, 1) = static_cast<Real>(y);
    positions(i, 2) = static_cast<Real>(z);
    charges(i) = static_cast<typename Charges::non_const_value_type>(charge);
  }
};

} // namespace detail

/// Fills `positions` (n x 3) and `charges` (n) with the particles first .. first + n - 1 of
/// the `total` particles that the form below generates for `total` (charges 1 / total): a
/// block of a problem too large for one process, generated where it is used, the same
/// particles whichever way the problem is cut.
template <class ExecutionSpace, class Positions, class Charges>
void generate(ExecutionSpace const &space, Distribution d, std::uint64_t seed,
              Positions const &positions, Charges const &charges, std::uint64_t first,
              std::uint64_t total)
{
  if (positions.extent(0) != charges.extent(0) || positions.extent(1) != 3)
    throw Exception("kfmm::generate: 'positions' must be N x 3 and 'charges' N long");
  auto const n = positions.extent(0);
  if (first > total || n > total - first)
    throw Exception("kfmm::generate: particles " + std::to_string(first) + " .. " +
                    std::to_string(first + n) + " are not a block of the " + std::to_string(total) +
                    " particles");
  double const charge = total > 0 ? 1.0 / static_cast<double>(total) : 0.0;
  Kokkos::parallel_for(
      "kfmm::generate", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
      detail::GenerateParticles<Positions, Charges>{d, seed, charge, positions, charges, first});
}

/// Fills `positions` (N x 3) with the distribution `d` and `charges` (N) with equal positive
/// charges summing to 1 (equal masses, as in an N-body problem).
template <class ExecutionSpace, class Positions, class Charges>
void generate(ExecutionSpace const &space, Distribution d, std::uint64_t seed,
              Positions const &positions, Charges const &charges)
{
  generate(space, d, seed, positions, charges, 0, positions.extent(0));
}

} // namespace kfmm

#endif
