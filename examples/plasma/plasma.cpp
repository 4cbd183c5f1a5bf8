// SPDX-License-Identifier: BSD-3-Clause
// A charge-neutral plasma in a periodic box, integrated with the leapfrog (kick-drift-kick)
// scheme, the electric field from kfmm with periodic boundaries every step. N/2 positive and
// N/2 negative particles of charge +-1/N and mass 1/N (a pair plasma) start uniformly in the
// unit box [0, 1)^3 with thermal velocities; each drift wraps them back into the box. kfmm's
// field is the gradient of the potential phi (phi = sum_j q_j / r_ij over all periodic images,
// tin-foil boundary), so the force on particle i is -q_i grad phi. The energy is
// 1/2 sum_i m_i v_i^2 + 1/2 sum_i q_i phi_i; it is printed every few steps with its relative
// drift, which the leapfrog keeps bounded.
//
//   kfmm_plasma [--n N] [--steps S] [--dt DT]
#include <kfmm/io/Generators.hpp>
#include <kfmm/kfmm.hpp>

#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace plasma
{

using Space = Kokkos::DefaultExecutionSpace;
using Vectors = Kokkos::View<double *[3], Space::memory_space>;
using Scalars = Kokkos::View<double *, Space::memory_space>;

/// Softening of close pairs: 1/sqrt(r^2 + eps^2), so that the step resolves encounters of
/// opposite charges.
constexpr double softening = 0.01;
/// Thermal speed of each velocity component.
constexpr double thermal_speed = 0.1;

struct Settings
{
  int n = 10000;
  int steps = 100;
  double dt = 0.005;
};

Settings parse(int argc, char *argv[])
{
  Settings s;
  for (int i = 1; i < argc; ++i)
  {
    std::string const option = argv[i];
    if (i + 1 >= argc)
      throw std::invalid_argument("option '" + option + "' needs a value");
    if (option != "--n" && option != "--steps" && option != "--dt")
      throw std::invalid_argument("unknown option '" + option + "'");
    std::string const value = argv[++i];
    std::size_t used = 0;
    try
    {
      if (option == "--n")
        s.n = std::stoi(value, &used);
      else if (option == "--steps")
        s.steps = std::stoi(value, &used);
      else
        s.dt = std::stod(value, &used);
    }
    catch (std::logic_error const &) // std::invalid_argument, std::out_of_range
    {
      used = 0;
    }
    if (used == 0 || used != value.size())
      throw std::invalid_argument("bad value '" + value + "' for option '" + option + "'");
  }
  if (s.n < 2 || s.n % 2 != 0 || s.steps < 0 || !(s.dt > 0))
    throw std::invalid_argument("need an even --n >= 2, --steps >= 0 and --dt > 0");
  return s;
}

/// Uniform positions in [0, 1)^3, charges +-1/n alternating, Gaussian velocities.
void initialise(Vectors const &x, Vectors const &v, Scalars const &q)
{
  Kokkos::Random_XorShift64_Pool<Space> pool(7);
  double const charge = 1.0 / static_cast<double>(x.extent(0));
  Kokkos::parallel_for(
      "kfmm::plasma::initialise", Kokkos::RangePolicy<Space>(0, x.extent(0)), KOKKOS_LAMBDA(int i) {
        auto random = pool.get_state();
        for (int c = 0; c < 3; ++c)
        {
          x(i, c) = random.drand();
          v(i, c) = thermal_speed * random.normal();
        }
        q(i) = i % 2 == 0 ? charge : -charge;
        pool.free_state(random);
      });
}

/// v -= (q / m) grad phi dt, with m = 1/n and q = +-1/n: q / m = +-1.
void kick(Vectors const &v, Scalars const &q, Vectors const &grad_phi, double dt)
{
  double const n = static_cast<double>(v.extent(0));
  Kokkos::parallel_for(
      "kfmm::plasma::kick", Kokkos::RangePolicy<Space>(0, v.extent(0)), KOKKOS_LAMBDA(int i) {
        for (int c = 0; c < 3; ++c)
          v(i, c) -= q(i) * n * grad_phi(i, c) * dt;
      });
}

/// x += v dt, wrapped into [0, 1).
void drift(Vectors const &x, Vectors const &v, double dt)
{
  Kokkos::parallel_for(
      "kfmm::plasma::drift", Kokkos::RangePolicy<Space>(0, x.extent(0)), KOKKOS_LAMBDA(int i) {
        for (int c = 0; c < 3; ++c)
        {
          double const moved = x(i, c) + v(i, c) * dt;
          double const wrapped = moved - floor(moved);
          x(i, c) = wrapped < 1 ? wrapped : 0; // rounding may land on the upper face
        }
      });
}

/// Kinetic energy 1/2 sum m v^2 (m = 1/n) and electrostatic energy 1/2 sum q phi.
void energy(Scalars const &q, Vectors const &v, Scalars const &phi, double &kinetic,
            double &electrostatic)
{
  double const m = 1.0 / static_cast<double>(q.extent(0));
  Kokkos::parallel_reduce(
      "kfmm::plasma::kinetic_energy", Kokkos::RangePolicy<Space>(0, q.extent(0)),
      KOKKOS_LAMBDA(int i, double &sum) {
        sum += 0.5 * m * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
      },
      kinetic);
  Kokkos::parallel_reduce(
      "kfmm::plasma::electrostatic_energy", Kokkos::RangePolicy<Space>(0, q.extent(0)),
      KOKKOS_LAMBDA(int i, double &sum) { sum += 0.5 * q(i) * phi(i); }, electrostatic);
}

int simulate(Settings const &s)
{
  Space space;
  Vectors x("kfmm::plasma::positions", s.n);
  Vectors v("kfmm::plasma::velocities", s.n);
  Vectors grad_phi("kfmm::plasma::grad_phi", s.n);
  Scalars q("kfmm::plasma::charges", s.n);
  Scalars phi("kfmm::plasma::potential", s.n);
  initialise(x, v, q);

  kfmm::Options options;
  options.tolerance = 1e-5;
  options.softening = softening;
  options.periodic.enabled = true;
  options.periodic.lower = {0, 0, 0};
  options.periodic.side = {1, 1, 1};
  // The particles move, so the tree is rebuilt at every evaluation: the one-shot call.
  auto const field = [&] { kfmm::evaluate(space, x, q, phi, grad_phi, options); };

  std::printf("kfmm plasma: %d particles in a periodic unit box, %d steps of %g, on %s\n", s.n,
              s.steps, s.dt, Space::name());
  std::printf("%6s %8s %14s %14s %14s %11s\n", "step", "time", "kinetic", "electrostatic", "total",
              "drift");
  field();
  double start = 0, end = 0;
  auto const report = [&](int step) {
    double kinetic = 0, electrostatic = 0;
    energy(q, v, phi, kinetic, electrostatic);
    double const total = kinetic + electrostatic;
    if (step == 0)
      start = total;
    std::printf("%6d %8.3f %14.8f %14.8f %14.8f %11.3e\n", step, step * s.dt, kinetic,
                electrostatic, total, (total - start) / std::abs(start));
    end = total;
  };
  report(0);
  int const every = s.steps >= 10 ? s.steps / 10 : 1;
  for (int step = 1; step <= s.steps; ++step)
  {
    kick(v, q, grad_phi, 0.5 * s.dt);
    drift(x, v, s.dt);
    field();
    kick(v, q, grad_phi, 0.5 * s.dt);
    if (step % every == 0 || step == s.steps)
      report(step);
  }
  double const relative_drift = std::abs(end - start) / std::abs(start);
  std::printf("relative energy drift %.3e after %d steps\n", relative_drift, s.steps);
  // A non-finite energy means the integration blew up.
  return std::isfinite(relative_drift) ? 0 : 1;
}

} // namespace plasma

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  plasma::Settings settings;
  try
  {
    settings = plasma::parse(argc, argv);
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr,
                 "kfmm_plasma: error: %s\nusage: kfmm_plasma [--n N] [--steps S] [--dt DT]\n",
                 e.what());
    return 2;
  }
  try
  {
    return plasma::simulate(settings);
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm_plasma: error: %s\n", e.what());
    return 1;
  }
}
