// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_APPS_ELAPSED_LINE_HPP
#define KFMM_APPS_ELAPSED_LINE_HPP

// Progress of a long step whose own progress cannot be seen from outside (a solve: the tree,
// the lists and the evaluation run as one call): on a terminal, one line on stderr rewritten
// in place with the time so far ("kfmm: solving (run 2 of 4): 3.5 s"), erased when the step
// ends, so that the report below it stays as it was. Nothing at all when stderr is not a
// terminal or the line is not wanted (--quiet), and nothing during the first second, so that
// quick steps stay silent.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kfmm::app
{

class ElapsedLine
{
public:
  ElapsedLine(std::string label, bool show);
  ~ElapsedLine();

  ElapsedLine(ElapsedLine const &) = delete;
  ElapsedLine &operator=(ElapsedLine const &) = delete;

private:
  void tick();

  std::string _label;
  std::chrono::steady_clock::time_point _start;
  std::mutex _mutex;
  std::condition_variable _wake;
  bool _done = false;
  bool _printed = false;
  std::thread _thread;
};

} // namespace kfmm::app

#endif
