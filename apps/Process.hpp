// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_PROCESS_HPP
#define KFMM_APPS_PROCESS_HPP

// What the program does to its process as a whole: where a library's start-up notes go, and
// what an interrupt leaves behind.

#include <functional>

namespace kfmm::app
{

/// Runs `start` with the standard output sent to the standard error. Kokkos prints its
/// start-up notes (OMP_PROC_BIND unset, say) on stdout, where they would mix into the report
/// and into output that scripts read.
void withStdoutOnStderr(std::function<void()> const &start);

/// On SIGINT, SIGTERM or SIGHUP the temporary files of the output files being written are
/// removed (kfmm/io/TemporaryFiles.hpp) before the process ends as the signal would end it.
void removeTemporaryFilesOnSignal();

} // namespace kfmm::app

#endif
