// SPDX-License-Identifier: BSD-3-Clause
// A self-gravitating Plummer sphere integrated with the leapfrog (kick-drift-kick) scheme,
// the accelerations from kfmm every step. Units: G = 1, total mass 1, Plummer scale radius 1,
// so the dynamical time is about 1. The masses are kfmm's charges and the acceleration is
// kfmm's field; the potential energy is U = -1/2 sum_i m_i phi_i. The total energy is printed
// every few steps and its relative drift at the end: the leapfrog keeps it bounded, so the
// drift measures the step size and the accuracy of the forces together.
//
//   kfmm_nbody [--n N] [--steps S] [--dt DT]
#include <kfmm/io/Generators.hpp>
#include <kfmm/kfmm.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

#include "NBody.hpp"

namespace nbody
{

int simulate(Settings const &s)
{
  Space space;
  Vectors x("kfmm::nbody::positions", s.n);
  Vectors v("kfmm::nbody::velocities", s.n);
  Vectors a("kfmm::nbody::accelerations", s.n);
  Scalars m("kfmm::nbody::masses", s.n);
  Scalars phi("kfmm::nbody::potential", s.n);
  kfmm::generate(space, kfmm::Distribution::plummer, 42, x, m); // masses 1/N
  plummerVelocities(x, v, 43);

  kfmm::Options options;
  options.softening = softening;
  // The particles move, so the tree is rebuilt at every evaluation: the one-shot call.
  auto const accelerate = [&] { return kfmm::evaluate(space, x, m, phi, a, options); };

  std::printf("kfmm nbody: %d particles, %d steps of %g, softening %g, on %s\n", s.n, s.steps, s.dt,
              softening, Space::name());
  printHeader();
  accelerate();
  Energy const start = energy(m, v, phi);
  auto const report = [&](int step) {
    Energy const e = energy(m, v, phi);
    printEnergy(step, s.dt, e, start);
    return e;
  };
  report(0);

  int const every = s.steps >= 10 ? s.steps / 10 : 1;
  Energy end = start;
  Kokkos::Timer timer;
  double force_seconds = 0;
  for (int step = 1; step <= s.steps; ++step)
  {
    kick(v, a, 0.5 * s.dt);
    drift(x, v, s.dt);
    // kfmm::evaluate returns when its kernels have ended.
    Kokkos::Timer force_timer;
    accelerate();
    force_seconds += force_timer.seconds();
    kick(v, a, 0.5 * s.dt);
    if (step % every == 0 || step == s.steps)
      end = report(step);
  }
  space.fence();
  double const seconds = timer.seconds();
  double const relative_drift = std::abs(end.total() - start.total()) / std::abs(start.total());
  std::printf("relative energy drift %.3e after %d steps; %.3f s per step, %.0f%% of it in kfmm\n",
              relative_drift, s.steps, s.steps > 0 ? seconds / s.steps : 0.0,
              seconds > 0 ? 100 * force_seconds / seconds : 0.0);
  // A non-finite energy means the integration blew up.
  return std::isfinite(relative_drift) ? 0 : 1;
}

} // namespace nbody

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  nbody::Settings settings;
  try
  {
    settings = nbody::parse(argc, argv);
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm_nbody: error: %s\n%s\n", e.what(),
                 nbody::usage("kfmm_nbody").c_str());
    return 2;
  }
  try
  {
    return nbody::simulate(settings);
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm_nbody: error: %s\n", e.what());
    return 1;
  }
}
