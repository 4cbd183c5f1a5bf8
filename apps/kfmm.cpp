// SPDX-License-Identifier: BSD-3-Clause
// The kfmm command-line program: potential and field of a generated or given particle set,
// timed stage by stage and checked against the direct sum. docs/CLI.md documents it.
//
// main() only orders the steps and maps failures to exit statuses: the command line is
// parsed and the input file read before Kokkos starts, so that mistakes fail fast and
// nothing is written.
//
// In an MPI build MPI starts first. One rank (mpiexec -n 1, or no mpiexec) runs exactly what
// a build without MPI runs (apps/Run.cpp); more ranks run apps/Distributed.cpp. Every rank
// takes every step; where a step can fail on some ranks only, the ranks agree on the outcome
// before the next collective call, the lowest failing rank says why, and all exit with its
// status. Only rank 0 prints otherwise.
#include "CommandLine.hpp"
#include "Distributed.hpp"
#include "Problem.hpp"
#include "Process.hpp"
#include "Report.hpp"
#include "Run.hpp"

#include <kfmm/Config.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/io/ParticleFile.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char *argv[])
{
  using namespace kfmm::app;

#if defined(KFMM_ENABLE_MPI)
  MpiSession mpi(argc, argv);
  int const ranks = mpi.ranks();
  bool const root = mpi.rank() == 0;
#else
  int const ranks = 1;
  bool const root = true;
#endif

  // --kokkos-* arguments are Kokkos' own; everything else is the program's.
  std::vector<char *> kokkos_arguments{argv[0]};
  std::vector<std::string> arguments;
  for (int i = 1; i < argc; ++i)
  {
    if (std::string(argv[i]).rfind("--kokkos-", 0) == 0)
      kokkos_arguments.push_back(argv[i]);
    else
      arguments.emplace_back(argv[i]);
  }

  Configuration configuration;
  try
  {
    configuration = parseCommandLine(arguments);
  }
  catch (UsageError const &e)
  {
    // Every rank parses the same command line and fails alike.
    if (root)
      std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_usage;
  }
  if (configuration.help || configuration.version)
  {
    if (root)
      std::fputs((configuration.help ? helpText() : versionText()).c_str(), stdout);
    return exit_success;
  }
  try
  {
    checkKokkosArguments(
        std::vector<std::string>(kokkos_arguments.begin() + 1, kokkos_arguments.end()));
  }
  catch (UsageError const &e)
  {
    if (root)
      std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_usage;
  }
  if (ranks == 1 && configuration.steps > 0)
  {
    std::fprintf(stderr, "kfmm: error: option '--steps' needs more than one MPI rank (on one "
                         "rank a step is a new solver: --repeat times it)\n");
    return exit_usage;
  }
  if (ranks > 1 && !configuration.targets.empty())
  {
    if (root)
      std::fprintf(stderr,
                   "kfmm: error: option '--targets' is not supported with more than one rank "
                   "(this run has %d)\n",
                   ranks);
    return exit_usage;
  }

  // The --input and --targets files, read and checked before anything runs.
  std::optional<kfmm::io::ParticleTable> input, targets;
  std::string failure;
  try
  {
    auto const read = [&](std::string const &path, char const *what) {
      kfmm::io::ReadOptions options;
      options.progress = !configuration.quiet && root;
      auto table = kfmm::io::readParticles(path, options);
      if (table.size() == 0)
        throw kfmm::io::FileError("'" + path + "' holds no " + what);
      requireRepresentableExtent(table);
      return table;
    };
    if (!configuration.input.empty())
      input = read(configuration.input, "particles");
    if (!configuration.targets.empty())
      targets = read(configuration.targets, "targets");
  }
  catch (std::exception const &e)
  {
    failure = e.what();
  }
  // Every rank reads the files and may fail alone: the ranks agree on the outcome, and the
  // lowest failing rank says why.
  int status = failure.empty() ? exit_success : exit_input;
  bool report = status != exit_success;
#if defined(KFMM_ENABLE_MPI)
  Agreement const agreement = agree(status);
  status = agreement.status;
  report = agreement.report;
#endif
  if (report)
    std::fprintf(stderr, "kfmm: error: %s\n", failure.c_str());
  if (status != exit_success)
    return status;

  // Kokkos prints its options while it starts; then that was all that was asked for.
  bool kokkos_help = false;
  for (std::size_t i = 1; i < kokkos_arguments.size(); ++i)
    kokkos_help = kokkos_help || std::string(kokkos_arguments[i]) == "--kokkos-help";
  int kokkos_argc = static_cast<int>(kokkos_arguments.size());
  kokkos_arguments.push_back(nullptr);
  std::optional<Kokkos::ScopeGuard> guard;
  try
  {
    if (kokkos_help)
      guard.emplace(kokkos_argc, kokkos_arguments.data());
    else
      // Kokkos' start-up notes (OMP_PROC_BIND unset, say) go to stderr, so that stdout holds
      // the report alone.
      withStdoutOnStderr([&] { guard.emplace(kokkos_argc, kokkos_arguments.data()); });
  }
  catch (std::exception const &e)
  {
    // Every rank passes the same arguments to Kokkos and fails alike.
    if (root)
      std::fprintf(stderr, "kfmm: error: Kokkos did not start: %s\n", e.what());
    return exit_usage;
  }
  if (kokkos_help)
    return exit_success;
  removeTemporaryFilesOnSignal();
  try
  {
#if defined(KFMM_ENABLE_MPI)
    if (ranks > 1)
      return runDistributed(configuration, input ? &*input : nullptr);
#endif
    return run(configuration, input ? &*input : nullptr, targets ? &*targets : nullptr);
  }
#if defined(KFMM_ENABLE_MPI)
  catch (OtherRankFailed const &e)
  {
    return e.status;
  }
#endif
  catch (InputError const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_input;
  }
  catch (UnresolvedError const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_unresolved;
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_failure;
  }
}
