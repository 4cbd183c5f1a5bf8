// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_HOST_PARTICLES_ON_DEVICE_HPP
#define KFMM_TESTS_HOST_PARTICLES_ON_DEVICE_HPP

// Moving the tests' host particle sets (Adversarial.hpp) to a configuration's memory
// (kfmm::test::onHost, in TestParticles.hpp, brings results back).

#include <Kokkos_Core.hpp>

#include <cstddef>

#include "Adversarial.hpp"
#include "TestParticles.hpp"

namespace kfmm::test
{

/// `h` in the config's memory, rounded to its precision.
template <class Config>
Particles<Config> onDevice(HostParticles const &h)
{
  using Real = typename Config::real_type;
  Particles<Config> p(h.size());
  auto x = Kokkos::create_mirror_view(p.x);
  auto q = Kokkos::create_mirror_view(p.q);
  for (std::size_t i = 0; i < h.size(); ++i)
  {
    for (int d = 0; d < 3; ++d)
      x(i, d) = static_cast<Real>(h.x(i, d));
    q(i) = static_cast<Real>(h.q(i));
  }
  Kokkos::deep_copy(p.x, x);
  Kokkos::deep_copy(p.q, q);
  return p;
}

} // namespace kfmm::test

#endif
