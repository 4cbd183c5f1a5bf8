// SPDX-License-Identifier: BSD-3-Clause
// The kfmm command-line program: potential and field of a generated or given particle set,
// timed stage by stage and checked against the direct sum. docs/CLI.md documents it.
//
// main() only orders the steps and maps failures to exit statuses: the command line is
// parsed and the input file read before Kokkos starts, so that mistakes fail fast and
// nothing is written.
#include "CommandLine.hpp"
#include "Run.hpp"

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
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_usage;
  }
  if (configuration.help)
  {
    std::fputs(helpText().c_str(), stdout);
    return exit_success;
  }

  // The --input and --targets files, read and checked before anything runs.
  std::optional<kfmm::io::ParticleTable> input, targets;
  try
  {
    auto const read = [&](std::string const &path, char const *what) {
      kfmm::io::ReadOptions options;
      options.progress = !configuration.quiet;
      auto table = kfmm::io::readParticles(path, options);
      if (table.size() == 0)
        throw kfmm::io::FileError("'" + path + "' holds no " + what);
      return table;
    };
    if (!configuration.input.empty())
      input = read(configuration.input, "particles");
    if (!configuration.targets.empty())
      targets = read(configuration.targets, "targets");
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_input;
  }

  // Kokkos prints its options while it starts; then that was all that was asked for.
  bool kokkos_help = false;
  for (std::size_t i = 1; i < kokkos_arguments.size(); ++i)
    kokkos_help = kokkos_help || std::string(kokkos_arguments[i]) == "--kokkos-help";
  int kokkos_argc = static_cast<int>(kokkos_arguments.size());
  kokkos_arguments.push_back(nullptr);
  Kokkos::ScopeGuard guard(kokkos_argc, kokkos_arguments.data());
  if (kokkos_help)
    return exit_success;
  try
  {
    run(configuration, input ? &*input : nullptr, targets ? &*targets : nullptr);
  }
  catch (InputError const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_input;
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return exit_failure;
  }
  return exit_success;
}
