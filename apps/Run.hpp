// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_RUN_HPP
#define KFMM_APPS_RUN_HPP

// One run of the program: set up the particles, solve (timed, repeated), check, report, write.

#include "CommandLine.hpp"

#include <kfmm/io/ParticleFile.hpp>

#include <stdexcept>

namespace kfmm::app
{

/// The program's exit statuses (docs/CLI.md).
enum ExitStatus : int
{
  exit_success = 0,
  exit_failure = 1,    ///< something failed while running (solver, memory, writing a file)
  exit_usage = 2,      ///< bad command line; nothing was run or written
  exit_input = 3,      ///< the --input or --targets file cannot be used; nothing was run or written
  exit_unresolved = 4, ///< the precision does not resolve the particles; nothing was written
  exit_tolerance_missed = 5 ///< --check measured an error above --tolerance; all was written
};

/// The --input or --targets file's contents cannot be used (exit_input).
class InputError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/// The precision does not resolve the particles and --allow-unresolved was not given
/// (exit_unresolved): the results would not be as accurate as asked, so none are written.
class UnresolvedError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/// Whether the first run measures the order and theta for --tolerance (kfmm::calibrate, or
/// kfmm::distributed::calibrate on several ranks). With --periodic its reference is Ewald's
/// sum, which has no softening: a softened periodic box takes the table's choice.
bool measuresTolerance(Configuration const &c);

/// Runs `configuration` on the default execution space (Kokkos initialised); `input` holds
/// the --input file's records, or is null to generate the particles; `targets` holds the
/// --targets file's records, or is null to compute at the particles. Returns exit_success, or
/// exit_tolerance_missed (checkedStatus).
int run(Configuration const &configuration, io::ParticleTable const *input,
        io::ParticleTable const *targets);

} // namespace kfmm::app

#endif
