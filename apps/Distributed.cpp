// SPDX-License-Identifier: BSD-3-Clause
#include "Distributed.hpp"

#if defined(KFMM_ENABLE_MPI)

#include "Check.hpp"
#include "Problem.hpp"
#include "Report.hpp"
#include "Run.hpp"

#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/distributed/Calibrate.hpp>
#include <kfmm/distributed/DistributedFmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace kfmm::app
{

MpiSession::MpiSession(int &argc, char **&argv)
{
  // Only the main thread calls MPI; Kokkos' threads never do.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &_ranks);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

Agreement agree(int status)
{
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int const mine = status != exit_success ? rank : ranks;
  int first = ranks;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == ranks)
    return {};
  MPI_Bcast(&status, 1, MPI_INT, first, MPI_COMM_WORLD);
  return {status, rank == first};
}

namespace
{

int worldRank()
{
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize()
{
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  return ranks;
}

/// Runs `step` on every rank, then agrees (collective): when it failed on any rank, the
/// lowest failing rank rethrows its exception and every other rank throws OtherRankFailed.
template <class Step>
void onEveryRank(Step const &step)
{
  std::exception_ptr failure;
  int status = exit_success;
  try
  {
    step();
  }
  catch (InputError const &)
  {
    failure = std::current_exception();
    status = exit_input;
  }
  catch (std::exception const &)
  {
    failure = std::current_exception();
    status = exit_failure;
  }
  Agreement const agreement = agree(status);
  if (agreement.status == exit_success)
    return;
  if (agreement.report)
    std::rethrow_exception(failure);
  throw OtherRankFailed(agreement.status);
}

/// The particles [first, first + count) of rank `rank` of `ranks`: floor(n rank / ranks)
/// onwards, written as q rank + floor(s rank / ranks) (n = q ranks + s) so that n rank
/// cannot overflow.
struct Block
{
  std::size_t first = 0;
  std::size_t count = 0;
};

Block blockOf(std::size_t n, int rank, int ranks)
{
  auto const start = [&](std::size_t r) {
    std::size_t const R = static_cast<std::size_t>(ranks);
    return n / R * r + n % R * r / R;
  };
  std::size_t const first = start(static_cast<std::size_t>(rank));
  return {first, start(static_cast<std::size_t>(rank) + 1) - first};
}

/// The block's records of the --input file. Positions are kept in double; a charge that does
/// not fit in Real is an InputError worded as apps/Run.cpp's (io::copyToViews), naming the
/// record in the whole file.
template <class Real>
Particles<Real> fromFileBlock(io::ParticleTable const &table, Block const &block)
{
  auto particles = allocateParticles<Real>(block.count);
  auto x = Kokkos::create_mirror_view(particles.positions);
  auto q = Kokkos::create_mirror_view(particles.charges);
  for (std::size_t i = 0; i < block.count; ++i)
  {
    std::size_t const record = block.first + i;
    for (int c = 0; c < 3; ++c)
      x(i, c) = table(record, c);
    double const v = table(record, 3);
    if (!(std::abs(v) <= static_cast<double>(std::numeric_limits<Real>::max())))
      throw InputError("kfmm::io::copyToViews: " + table.location(record) +
                       ": q = " + kfmm::detail::formatNumber(v) +
                       " does not fit in float (use double precision)");
    q(i) = static_cast<Real>(v);
  }
  Kokkos::deep_copy(particles.positions, x);
  Kokkos::deep_copy(particles.charges, q);
  return particles;
}

/// A View's values on the host in row order (a GPU View of N x 3 may be column-major).
template <class View>
std::vector<typename View::non_const_value_type> rowsOnHost(View const &view)
{
  auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  std::size_t const columns = View::rank == 2 ? view.extent(1) : 1;
  std::vector<typename View::non_const_value_type> rows(view.extent(0) * columns);
  for (std::size_t i = 0; i < view.extent(0); ++i)
  {
    if constexpr (View::rank == 2)
      for (std::size_t c = 0; c < columns; ++c)
        rows[i * columns + c] = host(i, c);
    else
      rows[i] = host(i);
  }
  return rows;
}

/// Every rank's `local` elements in rank order on rank 0, empty elsewhere (collective). Sizes
/// are 64-bit and the bytes travel in pieces of at most 1 GiB, as MPI counts are ints.
template <class T>
std::vector<T> gatherToRoot(std::vector<T> const &local)
{
  int const rank = worldRank(), ranks = worldSize();
  std::int64_t const count = static_cast<std::int64_t>(local.size());
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks));
  MPI_Gather(&count, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::size_t const piece = kfmm::distributed::detail::max_piece_bytes;
  auto const pieces = [&](unsigned char *bytes, std::size_t size, auto const &move) {
    for (std::size_t begin = 0; begin < size; begin += piece)
      move(bytes + begin, static_cast<int>(std::min(piece, size - begin)));
  };
  if (rank != 0)
  {
    // MPI_Send does not write through its buffer; the cast only drops the const.
    auto *bytes =
        const_cast<unsigned char *>(reinterpret_cast<unsigned char const *>(local.data()));
    pieces(bytes, local.size() * sizeof(T),
           [](unsigned char *p, int size) { MPI_Send(p, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD); });
    return {};
  }
  std::size_t total = 0;
  for (auto const c : counts)
    total += static_cast<std::size_t>(c);
  std::vector<T> all(total);
  std::copy(local.begin(), local.end(), all.begin());
  auto *bytes = reinterpret_cast<unsigned char *>(all.data());
  std::size_t offset = local.size() * sizeof(T);
  for (int r = 1; r < ranks; ++r)
  {
    std::size_t const size = static_cast<std::size_t>(counts[r]) * sizeof(T);
    pieces(bytes + offset, size, [r](unsigned char *p, int piece_size) {
      MPI_Recv(p, piece_size, MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    });
    offset += size;
  }
  return all;
}

/// Each of a rank's particles' row in the input (the generators' or the file's order): the
/// time steps move particles between ranks.
using InputRows = Kokkos::View<std::int64_t *, Memory>;

/// All ranks' particles and results on rank 0 in input order (collective), as Views of the
/// default memory space for the check and host Views for the output file.
template <class Real>
struct Gathered
{
  Particles<Real> particles;
  Results<Real> results;
};

/// `input_rows` null: each rank holds its block of the input, in order.
template <class Real>
Gathered<Real> gatherAll(Particles<Real> const &particles, Results<Real> const &results,
                         InputRows const *input_rows)
{
  auto const x = gatherToRoot(rowsOnHost(particles.positions));
  auto const q = gatherToRoot(rowsOnHost(particles.charges));
  auto const phi = gatherToRoot(rowsOnHost(results.potential));
  auto const g = gatherToRoot(rowsOnHost(results.field));
  auto const rows = input_rows ? gatherToRoot(rowsOnHost(*input_rows))
                               : std::vector<std::int64_t>{};
  Gathered<Real> all;
  if (worldRank() != 0)
    return all;
  std::size_t const n = q.size();
  all.particles = allocateParticles<Real>(n);
  all.results = allocateResults<Real>(n);
  auto x_h = Kokkos::create_mirror_view(all.particles.positions);
  auto q_h = Kokkos::create_mirror_view(all.particles.charges);
  auto phi_h = Kokkos::create_mirror_view(all.results.potential);
  auto g_h = Kokkos::create_mirror_view(all.results.field);
  for (std::size_t k = 0; k < n; ++k)
  {
    std::size_t const i = rows.empty() ? k : static_cast<std::size_t>(rows[k]);
    for (int c = 0; c < 3; ++c)
    {
      x_h(i, c) = x[3 * k + c];
      g_h(i, c) = g[3 * k + c];
    }
    q_h(i) = q[k];
    phi_h(i) = phi[k];
  }
  Kokkos::deep_copy(all.particles.positions, x_h);
  Kokkos::deep_copy(all.particles.charges, q_h);
  Kokkos::deep_copy(all.results.potential, phi_h);
  Kokkos::deep_copy(all.results.field, g_h);
  return all;
}

/// The solver's steps of its local essential trees into out[0, essential_tree_step_count), in
/// the reports' order (essential_tree_step_names).
void copyTreeSteps(kfmm::distributed::EssentialTreeSteps const &steps, double *out)
{
  double const in[essential_tree_step_count] = {steps.own_tree,      steps.shared_cells,
                                                steps.regions,       steps.select_sent,
                                                steps.exchange_sent, steps.essential_tree};
  std::copy(in, in + essential_tree_step_count, out);
}

/// One run on this rank: its statistics and wall time.
struct RankRun
{
  Stats stats;
  RankReport rank;
};

/// Builds and evaluates a DistributedFmm, as apps/Solve.cpp's solve builds and evaluates a
/// kfmm::Fmm per run (collective; fenced). The ranks start together (a barrier), so that
/// each rank's wall time is measured from the same moment.
template <class Real>
RankRun solveOnce(Space const &space, Options const &options, Particles<Real> const &particles,
                  Results<Real> const &results)
{
  RankRun run;
  space.fence();
  MPI_Barrier(MPI_COMM_WORLD);
  // As Solve.cpp: the program decides itself what unresolved particles mean.
  Options allowed = options;
  allowed.allow_unresolved = true;
  onEveryRank([&] {
    Kokkos::Timer timer;
    kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space,
                                                           particles.positions, allowed);
    solver.evaluate(space, particles.charges, results.potential, results.field);
    space.fence();
    run.rank.wall_seconds = timer.seconds();
    kfmm::distributed::RankStats const &s = solver.stats();
    run.stats = s.solver;
    run.rank.particles = s.particles;
    run.rank.ghosts = s.ghosts;
    run.rank.pruned_cells = s.pruned_cells;
    run.rank.build_seconds = s.build_seconds;
    run.rank.build_communication_seconds = s.build_communication_seconds;
    run.rank.partition_seconds = s.partition_seconds;
    run.rank.essential_trees_seconds = s.essential_trees_seconds;
    copyTreeSteps(s.essential_tree_steps, run.rank.essential_tree_steps);
    run.rank.evaluate_seconds = s.evaluate_seconds;
    run.rank.evaluate_communication_seconds = s.evaluate_communication_seconds;
  });
  return run;
}

/// The first run with --tolerance measured: kfmm::distributed::calibrate, as Solve.cpp's
/// calibrate runs kfmm::calibrate (collective; fenced; the ranks start together). Its
/// statistics are the kept evaluation's and its wall time the whole calibration's; the chosen
/// setting goes to `chosen` and what was measured to `calibration`.
template <class Real>
RankRun calibrateOnce(Space const &space, Options const &given, Particles<Real> const &particles,
                      Results<Real> const &results, Options &chosen, Calibration &calibration)
{
  RankRun run;
  space.fence();
  MPI_Barrier(MPI_COMM_WORLD);
  // As Solve.cpp: the program judges unresolved particles and a missed tolerance itself.
  Options options = given;
  options.allow_unresolved = true;
  options.allow_missed_tolerance = true;
  onEveryRank([&] {
    Kokkos::Timer timer;
    calibration = kfmm::distributed::calibrate(MPI_COMM_WORLD, space, particles.positions,
                                               particles.charges, results.potential, results.field,
                                               options);
    space.fence();
    run.rank.wall_seconds = timer.seconds();
    run.stats = calibration.stats;
  });
  chosen = calibration.options;
  chosen.allow_unresolved = given.allow_unresolved;
  chosen.allow_missed_tolerance = given.allow_missed_tolerance;
  return run;
}

/// Particle i's row in the input: first + i (a rank's block).
struct BlockRows
{
  InputRows rows;
  std::int64_t first;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    rows(i) = first + static_cast<std::int64_t>(i);
  }
};

/// Moves particle i by `distance` in a direction uniform on the sphere, drawn from its input
/// row and the step as the generators draw particles.
struct MoveParticles
{
  Positions positions;
  double distance;
  InputRows input_rows;
  std::uint64_t step;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    auto const row = static_cast<std::uint64_t>(input_rows(i));
    double d[3];
    kfmm::detail::unitSphere(kfmm::detail::uniform01(step, row, 0),
                             kfmm::detail::uniform01(step, row, 1), d[0], d[1], d[2]);
    for (int k = 0; k < 3; ++k)
      positions(i, k) += distance * d[k];
  }
};

/// The time steps' per-particle arrays (positions, charges, input rows, results) come from a
/// pooled workspace: a step's new arrays take the blocks the step before gave back, as a
/// simulation keeps its particle arrays with room to spare, rather than a cudaMalloc and a
/// cudaFree (which waits for the whole device) per array and step.
using StepMemory = kfmm::detail::Workspace<Memory>;

/// Rows of a per-particle View (N x 3 or N) moved to the ranks that own its particles after
/// the solver's last build (collective), into an array of `memory`; `mine` goes back to it.
template <class Solver, class View>
View takenOver(Solver const &solver, Space const &space, View &mine, StepMemory &memory,
               std::string const &label)
{
  auto owned = memory.take<View>(space, label, solver.ownedCount());
  solver.toOwners(space, mine, owned);
  memory.give(mine); // toOwners waited for the device
  return owned;
}

/// A copy of `view` that owns its memory, for a View of a workspace that is about to go.
template <class View>
View owningCopy(Space const &space, View const &view, std::string const &label)
{
  View copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), view.extent(0));
  Kokkos::deep_copy(space, copy, view);
  return copy;
}

/// The time steps of --steps after the runs (collective), as a simulation runs them (README):
/// a solver built on the particles, then per step the particles moved, each rank taking over
/// the particles the last build gave it (positions, charges, input rows: `particles`,
/// `results` and `input_rows` end as the last step's), the solver rebuilt on them and
/// evaluated with `options` (the runs', measured for --tolerance) (fenced; the ranks start
/// each step together). Each step's times are the slowest rank's.
template <class Real>
StepsReport timeSteps(Space const &space, Configuration const &c, Options const &options,
                      Block const &block, Particles<Real> &particles, Results<Real> &results,
                      InputRows &input_rows)
{
  Options allowed = options;
  allowed.allow_unresolved = true;
  StepsReport report;
  report.steps = c.steps;
  report.move = c.step_move;
  std::vector<double> seconds, rebuild, partition, trees, rebuild_mpi, evaluate, evaluate_mpi, sent;
  std::vector<double> tree_steps[essential_tree_step_count];
  onEveryRank([&] {
    auto const memory = kfmm::detail::WorkspacePool<Memory>::shared().lease();
    kfmm::distributed::DistributedFmm<Real, Memory> solver(MPI_COMM_WORLD, space,
                                                           particles.positions, allowed);
    input_rows = InputRows(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kfmm::app::input_rows")),
        particles.size());
    Kokkos::parallel_for("kfmm::app::block_rows",
                         Kokkos::RangePolicy<Space>(space, 0, particles.size()),
                         BlockRows{input_rows, static_cast<std::int64_t>(block.first)});
    for (int step = 0; step < c.steps; ++step)
    {
      Kokkos::parallel_for("kfmm::app::move_particles",
                           Kokkos::RangePolicy<Space>(space, 0, particles.size()),
                           MoveParticles{particles.positions, c.step_move, input_rows,
                                         static_cast<std::uint64_t>(step)});
      space.fence();
      MPI_Barrier(MPI_COMM_WORLD);
      Kokkos::Timer timer;
      particles.positions =
          takenOver(solver, space, particles.positions, *memory, "kfmm::app::positions");
      particles.charges =
          takenOver(solver, space, particles.charges, *memory, "kfmm::app::charges");
      input_rows = takenOver(solver, space, input_rows, *memory, "kfmm::app::input_rows");
      if (results.potential.extent(0) != particles.size())
      {
        memory->give(results.potential);
        memory->give(results.field);
        memory->take(space, results.potential, "kfmm::app::potential", particles.size());
        memory->take(space, results.field, "kfmm::app::field", particles.size());
      }
      solver.rebuild(space, particles.positions);
      solver.evaluate(space, particles.charges, results.potential, results.field);
      space.fence();
      kfmm::distributed::RankStats const &s = solver.stats();
      constexpr int count = 7 + essential_tree_step_count;
      double times[count] = {timer.seconds(),
                             s.build_seconds,
                             s.partition_seconds,
                             s.essential_trees_seconds,
                             s.build_communication_seconds,
                             s.evaluate_seconds,
                             s.evaluate_communication_seconds};
      copyTreeSteps(s.essential_tree_steps, times + 7);
      MPI_Allreduce(MPI_IN_PLACE, times, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      for (int k = 0; k < essential_tree_step_count; ++k)
        tree_steps[k].push_back(times[7 + k]);
      double sent_now = static_cast<double>(s.sent_particles);
      MPI_Allreduce(MPI_IN_PLACE, &sent_now, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      sent.push_back(sent_now);
      seconds.push_back(times[0]);
      rebuild.push_back(times[1]);
      partition.push_back(times[2]);
      trees.push_back(times[3]);
      rebuild_mpi.push_back(times[4]);
      evaluate.push_back(times[5]);
      evaluate_mpi.push_back(times[6]);
      report.splitters_kept += s.splitters_reused ? 1 : 0;
    }
    if (c.steps > 0)
    {
      particles.positions = owningCopy(space, particles.positions, "kfmm::app::positions");
      particles.charges = owningCopy(space, particles.charges, "kfmm::app::charges");
      input_rows = owningCopy(space, input_rows, "kfmm::app::input_rows");
      results.potential = owningCopy(space, results.potential, "kfmm::app::potential");
      results.field = owningCopy(space, results.field, "kfmm::app::field");
      space.fence();
    }
  });
  if (c.steps > 0)
  {
    report.seconds = median(seconds);
    report.rebuild_seconds = median(rebuild);
    report.partition_seconds = median(partition);
    report.essential_trees_seconds = median(trees);
    for (int k = 0; k < essential_tree_step_count; ++k)
      report.essential_tree_steps[k] = median(tree_steps[k]);
    report.rebuild_communication_seconds = median(rebuild_mpi);
    report.evaluate_seconds = median(evaluate);
    report.evaluate_communication_seconds = median(evaluate_mpi);
    report.sent_particles = median(sent);
  }
  return report;
}

/// This rank's summary of `runs`: the counts of the last, each time the median.
RankReport summary(std::vector<RankRun> const &runs)
{
  RankReport r = runs.back().rank;
  auto const middle = [&](double RankReport::*field) {
    std::vector<double> values;
    for (auto const &run : runs)
      values.push_back(run.rank.*field);
    r.*field = median(values);
  };
  for (auto field : {&RankReport::build_seconds, &RankReport::build_communication_seconds,
                     &RankReport::partition_seconds, &RankReport::essential_trees_seconds,
                     &RankReport::evaluate_seconds, &RankReport::evaluate_communication_seconds,
                     &RankReport::wall_seconds})
    middle(field);
  for (int k = 0; k < essential_tree_step_count; ++k)
  {
    std::vector<double> values;
    for (auto const &run : runs)
      values.push_back(run.rank.essential_tree_steps[k]);
    r.essential_tree_steps[k] = median(values);
  }
  return r;
}

/// Rank 0's statistics with each stage's time the median over `runs`, and the counts that
/// add up over the ranks (interactions, flops, memory, unresolved pairs) summed (collective).
Stats reportedStats(std::vector<RankRun> const &runs)
{
  std::vector<Stats> all;
  for (auto const &run : runs)
    all.push_back(run.stats);
  Stats stats = medianStats(all);
  double sums[6] = {double(stats.p2p_interactions),
                    double(stats.m2l_interactions),
                    double(stats.m2p_interactions),
                    stats.flops,
                    double(stats.bytes),
                    double(stats.unresolved_pairs)};
  MPI_Allreduce(MPI_IN_PLACE, sums, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  stats.p2p_interactions = static_cast<std::size_t>(sums[0]);
  stats.m2l_interactions = static_cast<std::size_t>(sums[1]);
  stats.m2p_interactions = static_cast<std::size_t>(sums[2]);
  stats.flops = sums[3];
  stats.bytes = static_cast<std::size_t>(sums[4]);
  stats.unresolved_pairs = static_cast<std::size_t>(sums[5]);
  int limited = stats.precision_limited ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &limited, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  stats.precision_limited = limited != 0;
  return stats;
}

/// Every rank's report on rank 0, in rank order (collective).
std::vector<RankReport> gatherRankReports(RankReport const &mine)
{
  static_assert(std::is_trivially_copyable<RankReport>::value, "RankReport travels as bytes");
  std::vector<RankReport> all(worldRank() == 0 ? static_cast<std::size_t>(worldSize()) : 0);
  MPI_Gather(&mine, static_cast<int>(sizeof mine), MPI_BYTE, all.data(),
             static_cast<int>(sizeof mine), MPI_BYTE, 0, MPI_COMM_WORLD);
  return all;
}

double slowest(double seconds)
{
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

template <class Real>
int runIn(Configuration const &c, io::ParticleTable const *input)
{
  Space space;
  int const rank = worldRank(), ranks = worldSize();
  bool const root = rank == 0;
  std::size_t const n = input ? input->size() : c.n;
  Block const block = blockOf(n, rank, ranks);

  // A charge beyond float's range fails on the rank whose block holds it.
  Particles<Real> particles;
  Results<Real> results;
  onEveryRank([&] {
    particles =
        input ? fromFileBlock<Real>(*input, block)
              : generateParticles<Real>(space, block.count, c.distribution, c.seed, block.first, n);
    results = allocateResults<Real>(block.count);
  });

  Report report;
  report.configuration = c;
  report.n = n;
  report.kokkos = kokkosInfo();
  report.ranks = ranks;

  // The first run pays for first touches and allocations; --repeat runs after it are warm.
  // With --tolerance measured, it chooses the options of the runs after it.
  bool const measured = measuresTolerance(c);
  Options options = c.options;
  if (measured)
    report.calibration.emplace();
  std::vector<RankRun> first{
      measured ? calibrateOnce(space, c.options, particles, results, options, *report.calibration)
               : solveOnce(space, c.options, particles, results)};
  report.first_seconds = slowest(first.back().rank.wall_seconds);
  Stats const first_stats = reportedStats(first);
  // As in Run.cpp; the ranks agree on precision_limited (reportedStats), so all stop alike.
  if (first_stats.precision_limited && !c.allow_unresolved)
  {
    if (root)
      throw UnresolvedError(precisionMessage(c, n, first_stats));
    throw OtherRankFailed(exit_unresolved);
  }
  if (first_stats.precision_limited && root)
    std::fputs(precisionWarning(c, n, first_stats).c_str(), stderr);
  std::vector<RankRun> warm;
  std::vector<double> walls;
  for (int r = 0; r < c.repeat; ++r)
  {
    warm.push_back(solveOnce(space, options, particles, results));
    walls.push_back(slowest(warm.back().rank.wall_seconds));
  }
  if (warm.empty())
  {
    report.stats = first_stats;
    report.seconds = report.first_seconds;
    report.runs = 1;
  }
  else
  {
    report.stats = reportedStats(warm);
    report.seconds = median(walls);
    report.runs = c.repeat;
  }
  // A calibration's per-rank figures would be those of all its evaluations: only the runs
  // after it have them.
  if (!(measured && warm.empty()))
    report.per_rank = gatherRankReports(summary(warm.empty() ? first : warm));
  // The steps move the particles, and between ranks: the check and the output file then see
  // the last step's, put back in input order.
  InputRows input_rows;
  if (c.steps > 0)
    report.steps = timeSteps(space, c, options, block, particles, results, input_rows);

  // The check and the output file see every particle, in input order, on rank 0.
  Gathered<Real> all;
  if (c.check > 0 || !c.output.empty())
    onEveryRank([&] { all = gatherAll(particles, results, c.steps > 0 ? &input_rows : nullptr); });
  if (c.check > 0)
    onEveryRank([&] {
      if (root)
        report.check = checkAccuracy(space, all.particles, all.particles.positions, all.results,
                                     c.check, c.seed, c.options.softening, 0.0, !c.quiet);
    });
  report.particle_bytes = n * (Particles<Real>::bytes_per_particle + 4 * sizeof(Real));
  report.host_peak_bytes = hostPeakBytes();
  if (!c.quiet && root)
    printReport(stdout, report);

  onEveryRank([&] {
    if (!root || c.output.empty())
      return;
    auto const host = [](auto const &v) {
      return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
    };
    io::WriteOptions options;
    options.progress = !c.quiet;
    io::writeResults(c.output, host(all.particles.positions), host(all.particles.charges),
                     host(all.results.potential), host(all.results.field), options);
    if (!c.quiet)
      std::printf("  output        %s\n", c.output.c_str());
  });
  onEveryRank([&] {
    if (!root || c.json.empty())
      return;
    std::string const text = jsonReport(report);
    io::detail::OutputFile file(c.json, "option '--json'");
    file.write(text.data(), text.size());
    file.commit();
    if (!c.quiet)
      std::printf("  report        %s\n", c.json.c_str());
  });
  // Rank 0 checked; every rank exits with its status.
  int status = root ? checkedStatus(report) : exit_success;
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return status;
}

} // namespace

int runDistributed(Configuration const &configuration, io::ParticleTable const *input)
{
  if (configuration.precision == Precision::single)
    return runIn<float>(configuration, input);
  return runIn<double>(configuration, input);
}

} // namespace kfmm::app

#endif
