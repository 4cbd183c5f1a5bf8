// SPDX-License-Identifier: BSD-3-Clause
#include "ElapsedLine.hpp"

#include <kfmm/io/Progress.hpp>

#include <cstdio>

namespace kfmm::app
{

ElapsedLine::ElapsedLine(std::string label, bool show)
    : _label(std::move(label)), _start(std::chrono::steady_clock::now())
{
  if (show && io::Progress::stderrIsTerminal())
    _thread = std::thread([this] { tick(); });
}

ElapsedLine::~ElapsedLine()
{
  if (!_thread.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(_mutex);
    _done = true;
  }
  _wake.notify_one();
  _thread.join();
}

void ElapsedLine::tick()
{
  using namespace std::chrono;
  std::unique_lock<std::mutex> lock(_mutex);
  auto next = _start + seconds(1);
  while (!_wake.wait_until(lock, next, [this] { return _done; }))
  {
    double const elapsed = duration<double>(steady_clock::now() - _start).count();
    // "\033[K" clears what a longer line before left.
    std::fprintf(stderr, "\rkfmm: %s: %.1f s\033[K", _label.c_str(), elapsed);
    std::fflush(stderr);
    _printed = true;
    next += milliseconds(250);
  }
  if (_printed)
  {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

} // namespace kfmm::app
