// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_COMMAND_LINE_HPP
#define KFMM_APPS_COMMAND_LINE_HPP

// The kfmm program's options: parsing, validation and the --help text. Everything that can
// be checked without running anything is checked here, so that a bad command line fails
// before any work is done or any file is written.

#include <kfmm/Options.hpp>
#include <kfmm/io/Generators.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kfmm::app
{

/// A bad command line; main() prints "kfmm: error: <message>" and exits with status 2.
class UsageError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

enum class Precision
{
  single,
  double_
};

inline char const *precisionName(Precision p)
{
  return p == Precision::single ? "float" : "double";
}

struct Configuration
{
  /// Number of generated particles; 0 until parsed (then the default if --n is not given).
  std::size_t n = 0;
  Distribution distribution = Distribution::plummer;
  std::uint64_t seed = 1;
  Options options;
  /// With --tolerance: order and theta measured on the problem (kfmm::calibrate), or
  /// chosen from the backend's accuracy table alone (--tolerance-choice table).
  bool measure_tolerance = true;
  Precision precision = Precision::single;
  /// Particles sampled for the comparison with the direct sum; 0: no comparison.
  std::size_t check = 1000;
  /// Timed runs after the first one; their median is reported when there are any.
  int repeat = 0;
  /// On several ranks: time steps after the runs, each the particles moved by step_move in a
  /// pseudo-random direction, DistributedFmm::rebuild and an evaluation; 0: none.
  int steps = 0;
  double step_move = 1e-3;
  std::string input;
  /// A particle file whose positions are the targets (its charges are not used); empty: the
  /// particles are the targets.
  std::string targets;
  std::string output;
  std::string json;
  /// --allow-unresolved: write results that the precision does not resolve (with a warning)
  /// instead of stopping with exit_unresolved.
  bool allow_unresolved = false;
  /// --allow-missed-tolerance: exit status 0 where --check measures a field error above
  /// --tolerance (the warning is still printed) instead of exit_tolerance_missed.
  bool allow_missed_tolerance = false;
  bool quiet = false;
  bool help = false;
  bool version = false;
};

/// Parses the program's own arguments (without argv[0] and the --kokkos-* ones). Throws
/// UsageError with a one-line message on an unknown option, a missing, malformed or
/// out-of-range value, an option that conflicts with another, or an output path that cannot
/// be written (unknown extension, missing folder).
Configuration parseCommandLine(std::vector<std::string> const &arguments);

/// The --help text, with this build's defaults.
std::string helpText();

/// Checks the values of the --kokkos-* arguments that take a number, which Kokkos 3.4 would
/// otherwise answer with an uncaught exception or an abort; throws UsageError.
void checkKokkosArguments(std::vector<std::string> const &arguments);

/// Particles of the default problem in this build: larger when the default execution space
/// is a GPU.
std::size_t defaultParticleCount();

} // namespace kfmm::app

#endif
