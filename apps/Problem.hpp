// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_PROBLEM_HPP
#define KFMM_APPS_PROBLEM_HPP

// The particles the program works on, in the default execution space's memory: generated
// there, or copied from a particle file read on the host. Positions are held in double
// whatever the precision. A file's positions stay as read: the solver rounds them to its
// precision only relative to their bounding cube (kfmm::Fmm), tells where that precision does
// not resolve them (Stats::precision_limited), and the accuracy check compares with the
// positions the user gave. Generated positions are rounded to the precision of the run, so
// that a generated problem is the same problem for the solver and for the check.

#include <kfmm/detail/FormatNumber.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/io/ParticleFile.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace kfmm::app
{

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

/// True when the default execution space cannot touch host memory (a GPU).
constexpr bool default_space_is_gpu =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible;

/// Positions in double (N x 3): of the particles, or of the targets.
using Positions = Kokkos::View<double *[3], Memory>;

template <class Real>
struct Particles
{
  Positions positions;
  Kokkos::View<Real *, Memory> charges;

  std::size_t size() const { return positions.extent(0); }
  /// Bytes of the positions and charges.
  static constexpr std::size_t bytes_per_particle = 3 * sizeof(double) + sizeof(Real);
};

template <class Real>
struct Results
{
  Kokkos::View<Real *, Memory> potential;
  Kokkos::View<Real *[3], Memory> field;
};

template <class Real>
Particles<Real> allocateParticles(std::size_t n)
{
  return {Kokkos::View<double *[3], Memory>("kfmm::app::positions", n),
          Kokkos::View<Real *, Memory>("kfmm::app::charges", n)};
}

template <class Real>
Results<Real> allocateResults(std::size_t n)
{
  return {Kokkos::View<Real *, Memory>("kfmm::app::potential", n),
          Kokkos::View<Real *[3], Memory>("kfmm::app::field", n)};
}

/// The generated problem of `total` particles (0: of `n`), or its particles first .. first +
/// n - 1 (a rank's block, the same particles as in the whole problem).
template <class Real>
Particles<Real> generateParticles(Space const &space, std::size_t n, Distribution distribution,
                                  std::uint64_t seed, std::size_t first = 0, std::size_t total = 0)
{
  auto particles = allocateParticles<Real>(n);
  generate(space, distribution, seed, particles.positions, particles.charges, first,
           total > 0 ? total : n);
  auto const x = particles.positions;
  Kokkos::parallel_for(
      "kfmm::app::round_positions", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t i) {
        for (int d = 0; d < 3; ++d)
          x(i, d) = static_cast<double>(static_cast<Real>(x(i, d)));
      });
  space.fence();
  return particles;
}

/// Throws kfmm::io::FileError when a charge does not fit in Real.
template <class Real>
Particles<Real> copyParticles(io::ParticleTable const &table)
{
  auto particles = allocateParticles<Real>(table.size());
  io::copyToViews(table, particles.positions, particles.charges);
  return particles;
}

/// Throws kfmm::io::FileError, naming the file, when the positions of `table` span more along
/// an axis than a double can hold (x = -1e308 and 1e308, say): the solver could not place
/// them in a cube.
inline void requireRepresentableExtent(io::ParticleTable const &table)
{
  char const *const axes[] = {"x", "y", "z"};
  for (int d = 0; d < 3; ++d)
  {
    double lo = 0, hi = 0;
    for (std::size_t i = 0; i < table.size(); ++i)
    {
      double const v = table(i, d);
      lo = i == 0 || v < lo ? v : lo;
      hi = i == 0 || v > hi ? v : hi;
    }
    if (!std::isfinite(hi - lo))
      throw io::FileError("'" + table.path +
                          "': the positions span more than a double can hold "
                          "along " +
                          axes[d] + " (from " + detail::formatNumber(lo) + " to " +
                          detail::formatNumber(hi) +
                          "): scale or shift them into a smaller "
                          "range");
  }
}

} // namespace kfmm::app

#endif
