// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_DISTRIBUTED_HPP
#define KFMM_APPS_DISTRIBUTED_HPP

// The program on several MPI ranks (`mpiexec -n R kfmm ...`, R > 1): rank r takes the
// particles [N r / R, N (r + 1) / R) in input order, kfmm::distributed::DistributedFmm solves,
// rank 0 gathers what it checks or writes and reports. One rank runs apps/Run.cpp instead.
//
// Every step that could fail on one rank alone is followed by an agreement of all ranks
// (agree), so that a failure never leaves the other ranks waiting in a collective call: the
// lowest failing rank reports it, and every rank exits with its status.

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include "CommandLine.hpp"

#include <kfmm/io/ParticleFile.hpp>

#include <stdexcept>

namespace kfmm::app
{

/// MPI for the program's lifetime: MPI_Init_thread (only the main thread calls MPI) and, on
/// destruction, MPI_Finalize.
class MpiSession
{
public:
  MpiSession(int &argc, char **&argv);
  MpiSession(MpiSession const &) = delete;
  MpiSession &operator=(MpiSession const &) = delete;
  ~MpiSession();

  int rank() const { return _rank; }
  int ranks() const { return _ranks; }

private:
  int _rank = 0;
  int _ranks = 1;
};

/// The outcome of a step all ranks agreed on: the exit status of the lowest rank that failed
/// (exit_success when none did), and whether this rank is that one, which reports why.
struct Agreement
{
  int status = 0;
  bool report = false;
};

/// Collective over MPI_COMM_WORLD: every rank passes its own step's exit status.
Agreement agree(int status);

/// Thrown on the ranks where a step succeeded, or failed after a lower rank did, when another
/// rank failed: that rank reports the failure; this one only exits with `status`.
class OtherRankFailed : public std::runtime_error
{
public:
  explicit OtherRankFailed(int status)
      : std::runtime_error("kfmm: another rank failed"), status(status)
  {
  }
  int status;
};

/// Runs `configuration` on every rank of MPI_COMM_WORLD (Kokkos initialised, more than one
/// rank, no --targets); `input` holds the --input file's records (every rank's copy), or is
/// null to generate the particles. Collective. Throws on every rank when it fails on any: on
/// the rank that reports, InputError or another std::exception as run() does; elsewhere
/// OtherRankFailed.
int runDistributed(Configuration const &configuration, io::ParticleTable const *input);

} // namespace kfmm::app

#endif
#endif
