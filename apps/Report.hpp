// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_REPORT_HPP
#define KFMM_APPS_REPORT_HPP

// What one run of the program measured, printed as a text table on stdout and, on request,
// written as JSON (docs/CLI.md lists the keys).

#include "CommandLine.hpp"

#include <kfmm/Calibration.hpp>
#include <kfmm/Stats.hpp>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace kfmm::app
{

/// The Kokkos build and the default execution space (Kokkos must be initialised).
struct KokkosInfo
{
  std::string version;
  std::vector<std::string> enabled_spaces;
  std::string default_space;
  int concurrency = 0;
  bool gpu = false;
};

KokkosInfo kokkosInfo();

/// The comparison with the direct sum on sampled particles.
struct CheckResult
{
  std::size_t targets = 0;
  double potential_error = NAN;
  double field_error = NAN;
  double seconds = 0;
};

/// The steps of the local essential trees' build (kfmm::distributed::EssentialTreeSteps), in
/// the order the reports list them.
constexpr int essential_tree_step_count = 6;
inline constexpr char const *essential_tree_step_names[essential_tree_step_count] = {
    "own_tree", "shared_cells", "regions", "select_sent", "exchange_sent", "essential_tree"};

/// What one MPI rank of a distributed run did (apps/Distributed.cpp): times are the medians
/// over the runs summarised, as the stage table's.
struct RankReport
{
  std::size_t particles = 0;    ///< owned after the partition
  std::size_t ghosts = 0;       ///< other ranks' particles it receives
  std::size_t pruned_cells = 0; ///< other ranks' cells whose multipoles it receives
  double build_seconds = 0;
  double build_communication_seconds = 0;
  double partition_seconds = 0;       ///< of build_seconds
  double essential_trees_seconds = 0; ///< of build_seconds
  /// essential_trees_seconds step by step (essential_tree_step_names; 0 unless the stages
  /// are timed).
  double essential_tree_steps[essential_tree_step_count] = {};
  double evaluate_seconds = 0;
  double evaluate_communication_seconds = 0;
  double wall_seconds = 0; ///< its own wall time of a run (construct and evaluate)
};

/// The time steps of a distributed run (--steps): each step's times are the slowest rank's,
/// and the report gives their medians over the steps.
struct StepsReport
{
  int steps = 0;
  double move = 0;                                             ///< --step-move
  double seconds = 0;                                          ///< a step: rebuild and evaluation
  double rebuild_seconds = 0;                                  ///< DistributedFmm::rebuild
  double partition_seconds = 0;                                ///< of the rebuild
  double essential_trees_seconds = 0;                          ///< of the rebuild
  double essential_tree_steps[essential_tree_step_count] = {}; ///< of essential_trees_seconds
  /// Of the rebuild, the time in the local essential trees' MPI calls (RankStats'
  /// build_communication_seconds).
  double rebuild_communication_seconds = 0;
  double evaluate_seconds = 0;
  double evaluate_communication_seconds = 0; ///< of the evaluation, in MPI calls
  int splitters_kept = 0;                    ///< steps whose rebuild kept the previous splitters
  /// Particles a step's rebuild sent to other ranks, summed over the ranks (median over the
  /// steps): those that crossed a range boundary.
  double sent_particles = 0;
};

struct Report
{
  Configuration configuration;
  std::size_t n = 0;
  /// Targets of the --targets file; 0 when the results are at the particles.
  std::size_t targets = 0;
  KokkosInfo kokkos;
  /// The solver's statistics; stage_seconds holds the median of each stage over the runs
  /// summarised.
  Stats stats;
  /// Runs summarised: the first one alone (1), or the --repeat runs after it.
  int runs = 1;
  /// Wall time of the first run, and the reported wall time (the first run, or the median
  /// of the runs after it).
  double first_seconds = 0;
  double seconds = 0;
  std::optional<CheckResult> check;
  /// With --tolerance measured on the problem (the first run).
  std::optional<kfmm::Calibration> calibration;
  /// Bytes of the program's particle and result Views, and the host's peak resident set
  /// (0 where the platform does not tell).
  std::size_t particle_bytes = 0;
  std::size_t host_peak_bytes = 0;
  /// MPI ranks of the run; with more than one, `seconds` and `first_seconds` are the largest
  /// of the ranks' wall times, `stats` is rank 0's, and per_rank holds one entry per rank.
  int ranks = 1;
  std::vector<RankReport> per_rank;
  StepsReport steps; ///< steps 0: none
};

/// The median of `values` (not empty): the upper one of an even count.
double median(std::vector<double> values);

/// The statistics of the last of `runs` with each stage's time replaced by its median over
/// them.
Stats medianStats(std::vector<Stats> const &runs);

/// The --version text: kfmm's version, and the Kokkos it was built with (before Kokkos
/// starts).
std::string versionText();

/// The peak resident memory of this process, or 0 where unknown.
std::size_t hostPeakBytes();

void printReport(std::FILE *out, Report const &report);

/// The error message (no "kfmm: error:", no line end) for a solve whose precision does not
/// resolve the particles (Stats::precision_limited), without --allow-unresolved.
std::string precisionMessage(Configuration const &configuration, std::size_t n, Stats const &stats);

/// The warning line (with its line end) for such a solve with --allow-unresolved.
std::string precisionWarning(Configuration const &configuration, std::size_t n, Stats const &stats);

/// The run's exit status once its report is written: exit_tolerance_missed, after a warning
/// on stderr (even with --quiet), where --check measured a field error above --tolerance
/// (or none it could measure) and --allow-missed-tolerance was not given; else exit_success.
int checkedStatus(Report const &report);

/// What the elapsed-time line says during run `run` (0: the first) of 1 + `repeat`.
std::string runLabel(int run, int repeat);

/// The report as a JSON document (non-finite numbers as null).
std::string jsonReport(Report const &report);

} // namespace kfmm::app

#endif
