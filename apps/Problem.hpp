// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_PROBLEM_HPP
#define KFMM_APPS_PROBLEM_HPP

// The particles the program works on, in the default execution space's memory: generated
// there, or copied from a particle file read on the host.

#include <kfmm/io/Generators.hpp>
#include <kfmm/io/ParticleFile.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace kfmm::app
{

using Space = Kokkos::DefaultExecutionSpace;
using Memory = Space::memory_space;

/// True when the default execution space cannot touch host memory (a GPU).
constexpr bool default_space_is_gpu =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible;

template <class Real>
struct Particles
{
  Kokkos::View<Real *[3], Memory> positions;
  Kokkos::View<Real *, Memory> charges;

  std::size_t size() const { return positions.extent(0); }
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
  return {Kokkos::View<Real *[3], Memory>("kfmm::app::positions", n),
          Kokkos::View<Real *, Memory>("kfmm::app::charges", n)};
}

template <class Real>
Results<Real> allocateResults(std::size_t n)
{
  return {Kokkos::View<Real *, Memory>("kfmm::app::potential", n),
          Kokkos::View<Real *[3], Memory>("kfmm::app::field", n)};
}

template <class Real>
Particles<Real> generateParticles(Space const &space, std::size_t n, Distribution distribution,
                                  std::uint64_t seed)
{
  auto particles = allocateParticles<Real>(n);
  generate(space, distribution, seed, particles.positions, particles.charges);
  space.fence();
  return particles;
}

/// Throws kfmm::io::FileError when a value does not fit in Real.
template <class Real>
Particles<Real> copyParticles(io::ParticleTable const &table)
{
  auto particles = allocateParticles<Real>(table.size());
  io::copyToViews(table, particles.positions, particles.charges);
  return particles;
}

} // namespace kfmm::app

#endif
