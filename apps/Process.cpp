// SPDX-License-Identifier: BSD-3-Clause
#include "Process.hpp"

#include <kfmm/io/TemporaryFiles.hpp>

#include <csignal>
#include <cstdio>

#include <unistd.h>

namespace kfmm::app
{
namespace
{

extern "C" void removeTemporaryFilesAndEnd(int signal)
{
  kfmm::io::removeTemporaryFiles();
  // The default action now, so that the parent sees the process ended by the signal.
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  raise(signal);
}

} // namespace

void withStdoutOnStderr(std::function<void()> const &start)
{
  std::fflush(stdout);
  int const saved = dup(STDOUT_FILENO);
  if (saved < 0)
  {
    start();
    return;
  }
  dup2(STDERR_FILENO, STDOUT_FILENO);
  auto const restore = [&] {
    std::fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
  };
  try
  {
    start();
  }
  catch (...)
  {
    restore();
    throw;
  }
  restore();
}

void removeTemporaryFilesOnSignal()
{
  struct sigaction action = {};
  action.sa_handler = removeTemporaryFilesAndEnd;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP})
  {
    struct sigaction previous = {};
    // A signal the caller ignores (nohup's SIGHUP) stays ignored.
    if (sigaction(signal, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN)
      continue;
    sigaction(signal, &action, nullptr);
  }
}

} // namespace kfmm::app
