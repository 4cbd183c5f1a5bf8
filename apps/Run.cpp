// SPDX-License-Identifier: BSD-3-Clause
#include "Run.hpp"

#include "Check.hpp"
#include "ElapsedLine.hpp"
#include "Problem.hpp"
#include "Report.hpp"
#include "Solve.hpp"

#include <kfmm/detail/Math.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <vector>

namespace kfmm::app
{
namespace
{

/// The records of a file as Particles<Real>; a value that does not fit is an InputError.
template <class Real>
Particles<Real> fromFile(io::ParticleTable const &table)
{
  try
  {
    return copyParticles<Real>(table);
  }
  catch (io::FileError const &e)
  {
    throw InputError(e.what());
  }
}

template <class Real>
Particles<Real> setUp(Space const &space, Configuration const &c, io::ParticleTable const *input)
{
  if (!input)
    return generateParticles<Real>(space, c.n, c.distribution, c.seed);
  return fromFile<Real>(*input);
}

/// Each position moved by whole periods into the periodic box.
void wrapIntoBox(Space const &space, Positions const &x, Periodic const &box)
{
  double const lower[3] = {box.lower[0], box.lower[1], box.lower[2]};
  double const side[3] = {box.side[0], box.side[1], box.side[2]};
  Kokkos::parallel_for(
      "kfmm::app::wrap_positions", Kokkos::RangePolicy<Space>(space, 0, x.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) {
        for (int d = 0; d < 3; ++d)
        {
          double const wrapped =
              x(i, d) - side[d] * kfmm::detail::floor((x(i, d) - lower[d]) / side[d]);
          // Rounding may leave a coordinate just below the box, or on its upper face.
          x(i, d) = wrapped < lower[d]              ? lower[d]
                    : wrapped >= lower[d] + side[d] ? lower[d]
                                                    : wrapped;
        }
      });
}

template <class Real>
int runIn(Configuration const &c, io::ParticleTable const *input,
          io::ParticleTable const *targets_table)
{
  Space space;
  auto const particles = setUp<Real>(space, c, input);
  if (c.options.periodic.enabled)
    wrapIntoBox(space, particles.positions, c.options.periodic);
  std::size_t const n = particles.size();
  // The --targets file's records (its charges only go to the output file), or the particles.
  auto const targets = targets_table ? fromFile<double>(*targets_table) : Particles<double>{};
  Positions const at = targets_table ? targets.positions : particles.positions;
  std::size_t const nt = at.extent(0);
  auto const results = allocateResults<Real>(nt);

  Report report;
  report.configuration = c;
  report.n = n;
  report.targets = targets_table ? nt : 0;
  report.kokkos = kokkosInfo();

  // The first run pays for first touches and allocations; --repeat runs after it are warm.
  space.fence();
  Kokkos::Timer timer;
  // With --tolerance measured, the first run chooses the options of the runs after it.
  Options options = c.options;
  Stats const first = [&] {
    ElapsedLine const line(runLabel(0, c.repeat), !c.quiet);
    if (!measuresTolerance(c))
      return solve(space, c.options, particles, at, results);
    report.calibration.emplace();
    return calibrate(space, c.options, particles, at, results, options, *report.calibration);
  }();
  space.fence();
  report.first_seconds = timer.seconds();
  // Results the precision cannot give are an error unless asked for; then a warning, even
  // with --quiet: a result that may be far less accurate than asked for is not noise.
  if (first.precision_limited && !c.allow_unresolved)
    throw UnresolvedError(precisionMessage(c, n, first));
  if (first.precision_limited)
    std::fputs(precisionWarning(c, n, first).c_str(), stderr);
  std::vector<Stats> warm;
  std::vector<double> walls;
  for (int r = 0; r < c.repeat; ++r)
  {
    ElapsedLine const line(runLabel(r + 1, c.repeat), !c.quiet);
    timer.reset();
    warm.push_back(solve(space, options, particles, at, results));
    space.fence();
    walls.push_back(timer.seconds());
  }
  if (warm.empty())
  {
    report.stats = first;
    report.seconds = report.first_seconds;
    report.runs = 1;
  }
  else
  {
    report.stats = medianStats(warm);
    report.seconds = median(walls);
    report.runs = c.repeat;
  }

  if (c.check > 0)
    report.check = checkAccuracy(space, particles, at, results, c.check, c.seed,
                                 c.options.softening, periodOf(c.options), !c.quiet);
  report.particle_bytes = n * Particles<Real>::bytes_per_particle + nt * 4 * sizeof(Real) +
                          report.targets * Particles<double>::bytes_per_particle;
  report.host_peak_bytes = hostPeakBytes();
  if (!c.quiet)
    printReport(stdout, report);

  if (!c.output.empty())
  {
    auto const host = [](auto const &v) {
      return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
    };
    io::WriteOptions options;
    options.progress = !c.quiet;
    // The q column: the particles' charges, or the --targets file's as read.
    auto const write = [&](auto const &charges) {
      io::writeResults(c.output, host(at), host(charges), host(results.potential),
                       host(results.field), options);
    };
    if (targets_table)
      write(targets.charges);
    else
      write(particles.charges);
    if (!c.quiet)
      std::printf("  output        %s\n", c.output.c_str());
  }
  if (!c.json.empty())
  {
    std::string const text = jsonReport(report);
    io::detail::OutputFile file(c.json, "option '--json'");
    file.write(text.data(), text.size());
    file.commit();
    if (!c.quiet)
      std::printf("  report        %s\n", c.json.c_str());
  }
  return checkedStatus(report);
}

} // namespace

bool measuresTolerance(Configuration const &c)
{
  return c.options.tolerance > 0 && c.measure_tolerance &&
         !(c.options.periodic.enabled && c.options.softening > 0);
}

int run(Configuration const &configuration, io::ParticleTable const *input,
        io::ParticleTable const *targets)
{
  if (configuration.precision == Precision::single)
    return runIn<float>(configuration, input, targets);
  return runIn<double>(configuration, input, targets);
}

} // namespace kfmm::app
