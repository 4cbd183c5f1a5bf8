// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXAMPLES_NBODY_HPP
#define KFMM_EXAMPLES_NBODY_HPP

// What the N-body examples share (nbody.cpp on one process, nbody_mpi.cpp on MPI ranks): the
// settings, the Plummer sphere's velocities, the leapfrog's kick and drift, and the energy of
// a rank's particles. Units: G = 1, total mass 1, Plummer scale radius 1, so the dynamical
// time is about 1. The masses are kfmm's charges and the acceleration is kfmm's field; the
// potential energy is U = -1/2 sum_i m_i phi_i.
#include <Kokkos_Core.hpp>
#include <Kokkos_Random.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace nbody
{

using Space = Kokkos::DefaultExecutionSpace;
using Vectors = Kokkos::View<double *[3], Space::memory_space>;
using Scalars = Kokkos::View<double *, Space::memory_space>;

/// Plummer softening length: close pairs feel 1/sqrt(r^2 + eps^2) instead of 1/r.
constexpr double softening = 0.01;

struct Settings
{
  int n = 10000;
  int steps = 100;
  double dt = 0.01;
};

/// The settings of the command line; throws std::invalid_argument on a bad one.
inline Settings parse(int argc, char *argv[])
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
  if (s.n < 2 || s.steps < 0 || !(s.dt > 0))
    throw std::invalid_argument("need --n >= 2, --steps >= 0 and --dt > 0");
  return s;
}

/// Velocities of the Plummer sphere in equilibrium (Aarseth, Henon & Wielen 1974): the speed
/// is q times the escape speed sqrt(2) (1 + r^2)^(-1/4), with q drawn from
/// q^2 (1 - q^2)^(7/2) by rejection, in an isotropic direction.
inline void plummerVelocities(Vectors const &x, Vectors const &v, std::uint64_t seed)
{
  Kokkos::Random_XorShift64_Pool<Space> pool(seed);
  Kokkos::parallel_for(
      "kfmm::nbody::velocities", Kokkos::RangePolicy<Space>(0, x.extent(0)), KOKKOS_LAMBDA(int i) {
        auto random = pool.get_state();
        double q = 0, y = 1;
        while (y > q * q * pow(1 - q * q, 3.5))
        {
          q = random.drand();
          y = 0.1 * random.drand(); // the density's maximum is below 0.1
        }
        double const r2 = x(i, 0) * x(i, 0) + x(i, 1) * x(i, 1) + x(i, 2) * x(i, 2);
        double const speed = q * sqrt(2.0) * pow(1 + r2, -0.25);
        double const z = 2 * random.drand() - 1;
        double const angle = 6.283185307179586 * random.drand();
        double const rho = sqrt(1 - z * z);
        v(i, 0) = speed * rho * cos(angle);
        v(i, 1) = speed * rho * sin(angle);
        v(i, 2) = speed * z;
        pool.free_state(random);
      });
}

/// v += a dt
inline void kick(Vectors const &v, Vectors const &a, double dt)
{
  Kokkos::parallel_for(
      "kfmm::nbody::kick", Kokkos::RangePolicy<Space>(0, v.extent(0)), KOKKOS_LAMBDA(int i) {
        for (int c = 0; c < 3; ++c)
          v(i, c) += a(i, c) * dt;
      });
}

/// x += v dt
inline void drift(Vectors const &x, Vectors const &v, double dt)
{
  Kokkos::parallel_for(
      "kfmm::nbody::drift", Kokkos::RangePolicy<Space>(0, x.extent(0)), KOKKOS_LAMBDA(int i) {
        for (int c = 0; c < 3; ++c)
          x(i, c) += v(i, c) * dt;
      });
}

struct Energy
{
  double kinetic = 0;
  double potential = 0;
  double total() const { return kinetic + potential; }
};

/// Kinetic energy 1/2 sum m v^2 and potential energy -1/2 sum m phi of these particles (each
/// pair once, with the attractive sign of gravity; kfmm's phi = sum_j m_j / r_ij is positive).
inline Energy energy(Scalars const &m, Vectors const &v, Scalars const &phi)
{
  Energy e;
  Kokkos::parallel_reduce(
      "kfmm::nbody::kinetic_energy", Kokkos::RangePolicy<Space>(0, m.extent(0)),
      KOKKOS_LAMBDA(int i, double &sum) {
        sum += 0.5 * m(i) * (v(i, 0) * v(i, 0) + v(i, 1) * v(i, 1) + v(i, 2) * v(i, 2));
      },
      e.kinetic);
  Kokkos::parallel_reduce(
      "kfmm::nbody::potential_energy", Kokkos::RangePolicy<Space>(0, m.extent(0)),
      KOKKOS_LAMBDA(int i, double &sum) { sum -= 0.5 * m(i) * phi(i); }, e.potential);
  return e;
}

/// The usage line of `program`.
inline std::string usage(char const *program)
{
  return std::string("usage: ") + program + " [--n N] [--steps S] [--dt DT]";
}

inline void printHeader()
{
  std::printf("%6s %8s %14s %14s %14s %11s\n", "step", "time", "kinetic", "potential", "total",
              "drift");
}

/// One line of the energy table: `e` at `step`, its drift from `start`.
inline void printEnergy(int step, double dt, Energy const &e, Energy const &start)
{
  std::printf("%6d %8.3f %14.8f %14.8f %14.8f %11.3e\n", step, step * dt, e.kinetic, e.potential,
              e.total(), (e.total() - start.total()) / std::abs(start.total()));
}

} // namespace nbody

#endif
