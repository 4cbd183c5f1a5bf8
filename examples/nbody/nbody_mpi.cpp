// SPDX-License-Identifier: BSD-3-Clause
// The Plummer sphere of nbody.cpp on several MPI ranks (one per GPU), the way a
// domain-decomposed simulation runs kfmm's distributed solver: each rank starts with a block of
// the particles, and every step it
//   - kicks and drifts its particles (the leapfrog of nbody.cpp);
//   - takes over the particles that the solver's last build gave it (DistributedFmm::toOwners:
//     positions, velocities, masses), as such codes migrate particles to their domain's rank;
//   - rebuilds the solver from the previous step (DistributedFmm::rebuild) and evaluates.
// A rank's count changes from step to step; its arrays keep their memory (ParticleArray below)
// rather than being allocated anew every step. The energies are sums over the ranks, printed by
// rank 0, with the relative drift at the end as in nbody.cpp.
//
//   mpiexec -n R kfmm_nbody_mpi [--n N] [--steps S] [--dt DT]     (N particles over all ranks)
// With R GPUs per node, also --kokkos-num-devices=R, so that each rank takes its own.
#include <kfmm/distributed/DistributedFmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "NBody.hpp"

namespace nbody
{

using Solver = kfmm::distributed::DistributedFmm<double, Space::memory_space>;

/// A per-particle array (N or N x 3) of the particles this rank holds, whose memory outlives a
/// step: on a GPU a View allocated anew every step is a cudaMalloc, and the one it replaces a
/// cudaFree that waits for the whole device. Two buffers with room to spare take turns, the
/// values moving from one to the other; view() is the current one, N rows long.
template <class View>
class ParticleArray
{
public:
  ParticleArray(std::string label, View initial) : _label(std::move(label)), _view(initial) {}

  View const &view() const { return _view; }

  /// The values moved to the ranks that own their particles after the solver's last build
  /// (collective).
  void takeOver(Solver const &solver, Space const &space)
  {
    View const owned = room(solver.ownedCount());
    solver.toOwners(space, _view, owned);
    _view = owned;
    _next = 1 - _next;
  }

  /// view() made n rows long, its values undefined (for results).
  void resize(std::size_t n)
  {
    if (_view.extent(0) != n)
      _view = room(n);
  }

private:
  using Storage = Kokkos::View<typename View::non_const_value_type *, Space::memory_space>;
  static constexpr std::size_t columns = View::rank == 1 ? 1 : 3;

  /// An n-row View over the next buffer, grown (by an eighth more) where it is too small.
  View room(std::size_t n)
  {
    Storage &buffer = _buffers[_next];
    if (buffer.extent(0) < n * columns)
      buffer = Storage(Kokkos::view_alloc(Kokkos::WithoutInitializing, _label),
                       (n + n / 8 + 16) * columns);
    return View(buffer.data(), n);
  }

  std::string _label;
  View _view;
  Storage _buffers[2];
  int _next = 0;
};

/// The energy of every rank's particles (collective).
Energy totalEnergy(Scalars const &m, Vectors const &v, Scalars const &phi, MPI_Comm comm)
{
  Energy const mine = energy(m, v, phi);
  double sums[2] = {mine.kinetic, mine.potential};
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  return Energy{sums[0], sums[1]};
}

int simulate(Settings const &s, MPI_Comm comm)
{
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  Space space;
  // This rank's block of the sphere's particles: the same particles whatever the rank count.
  auto const n = static_cast<std::uint64_t>(s.n);
  std::uint64_t const first = n * rank / ranks, last = n * (rank + 1) / ranks;
  Vectors x0("kfmm::nbody::positions", last - first);
  Vectors v0("kfmm::nbody::velocities", last - first);
  Scalars m0("kfmm::nbody::masses", last - first);
  kfmm::generate(space, kfmm::Distribution::plummer, 42, x0, m0, first, n); // masses 1/N
  plummerVelocities(x0, v0, 43 + rank);

  kfmm::Options options;
  options.softening = softening;
  Solver solver(comm, space, x0, options);
  ParticleArray<Vectors> x("kfmm::nbody::positions", x0), v("kfmm::nbody::velocities", v0);
  ParticleArray<Scalars> m("kfmm::nbody::masses", m0), phi("kfmm::nbody::potential", Scalars());
  ParticleArray<Vectors> a("kfmm::nbody::accelerations", Vectors());
  auto const accelerate = [&] {
    phi.resize(x.view().extent(0));
    a.resize(x.view().extent(0));
    solver.evaluate(space, m.view(), phi.view(), a.view()); // collective
  };

  if (rank == 0)
  {
    std::printf("kfmm nbody: %d particles on %d ranks, %d steps of %g, softening %g, on %s\n", s.n,
                ranks, s.steps, s.dt, softening, Space::name());
    printHeader();
  }
  accelerate();
  Energy const start = totalEnergy(m.view(), v.view(), phi.view(), comm);
  auto const report = [&](int step) {
    Energy const e = totalEnergy(m.view(), v.view(), phi.view(), comm);
    if (rank == 0)
      printEnergy(step, s.dt, e, start);
    return e;
  };
  report(0);

  int const every = s.steps >= 10 ? s.steps / 10 : 1;
  Energy end = start;
  double sent = 0, force_seconds = 0;
  Kokkos::Timer timer;
  for (int step = 1; step <= s.steps; ++step)
  {
    kick(v.view(), a.view(), 0.5 * s.dt);
    drift(x.view(), v.view(), s.dt);
    Kokkos::Timer force_timer;
    x.takeOver(solver, space);
    v.takeOver(solver, space);
    m.takeOver(solver, space);
    solver.rebuild(space, x.view()); // collective: this step's trees
    accelerate();
    space.fence();
    force_seconds += force_timer.seconds();
    sent += static_cast<double>(solver.stats().sent_particles);
    kick(v.view(), a.view(), 0.5 * s.dt);
    if (step % every == 0 || step == s.steps)
      end = report(step);
  }
  space.fence();
  double const seconds = timer.seconds();
  MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_DOUBLE, MPI_SUM, comm);
  double const relative_drift = std::abs(end.total() - start.total()) / std::abs(start.total());
  if (rank == 0)
    std::printf("relative energy drift %.3e after %d steps; %.3f s per step, %.0f%% of it in kfmm; "
                "%.0f particles changed rank per step\n",
                relative_drift, s.steps, s.steps > 0 ? seconds / s.steps : 0.0,
                seconds > 0 ? 100 * force_seconds / seconds : 0.0,
                s.steps > 0 ? sent / s.steps : 0.0);
  // A non-finite energy means the integration blew up.
  return std::isfinite(relative_drift) ? 0 : 1;
}

} // namespace nbody

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  {
    Kokkos::ScopeGuard guard(argc, argv);
    nbody::Settings settings;
    try
    {
      // Every rank parses the same command line: all accept it or all refuse it.
      settings = nbody::parse(argc, argv);
    }
    catch (std::exception const &e)
    {
      if (rank == 0)
        std::fprintf(stderr, "kfmm_nbody_mpi: error: %s\n%s\n", e.what(),
                     nbody::usage("mpiexec -n R kfmm_nbody_mpi").c_str());
      status = 2;
    }
    if (status == 0)
    {
      try
      {
        status = nbody::simulate(settings, MPI_COMM_WORLD);
      }
      catch (std::exception const &e)
      {
        // kfmm's distributed solver throws the same exception on every rank.
        if (rank == 0)
          std::fprintf(stderr, "kfmm_nbody_mpi: error: %s\n", e.what());
        status = 1;
      }
    }
  }
  MPI_Finalize();
  return status;
}
