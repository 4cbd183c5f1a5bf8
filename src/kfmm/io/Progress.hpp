// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_IO_PROGRESS_HPP
#define KFMM_IO_PROGRESS_HPP

// Progress of a long host-side task (reading or writing a large file, a long accuracy check)
// on stderr. On a terminal one line is rewritten in place ("reading big.csv: 37%"); in a log
// file, where '\r' would pile up, a plain line is written every 10% at most once every two
// seconds, so that quick tasks stay silent and slow ones stay readable.

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

namespace kfmm::io
{

class Progress
{
public:
  /// `total`: the amount of work (bytes, interactions, ...); nothing is printed unless `show`.
  Progress(std::string label, double total, bool show)
      : label_(std::move(label)), total_(total), show_(show && total > 0),
        tty_(show_ && stderrIsTerminal()), last_print_(std::chrono::steady_clock::now())
  {
  }

  Progress(Progress const &) = delete;
  Progress &operator=(Progress const &) = delete;

  /// An unfinished in-place line is ended, so that an error message starts on a line of its
  /// own.
  ~Progress()
  {
    if (tty_ && printed_ && !finished_)
      std::fputc('\n', stderr);
  }

  /// `done` of `total` is complete. Cheap when nothing needs printing.
  void update(double done)
  {
    if (!show_ || finished_)
      return;
    int const percent = static_cast<int>(100 * (done < total_ ? done : total_) / total_);
    if (percent == percent_)
      return;
    if (tty_)
    {
      percent_ = percent;
      std::fprintf(stderr, "\r%s: %d%%", label_.c_str(), percent);
      std::fflush(stderr);
      printed_ = true;
      return;
    }
    auto const now = std::chrono::steady_clock::now();
    if (percent / 10 == percent_ / 10 || now - last_print_ < std::chrono::seconds(2))
      return;
    percent_ = percent;
    last_print_ = now;
    std::fprintf(stderr, "%s: %d%%\n", label_.c_str(), percent);
    printed_ = true;
  }

  /// The task is complete: a line that was shown ends at 100%.
  void finish()
  {
    if (finished_)
      return;
    finished_ = true;
    if (!printed_)
      return;
    std::fprintf(stderr, tty_ ? "\r%s: 100%%\n" : "%s: 100%%\n", label_.c_str());
    std::fflush(stderr);
  }

  static bool stderrIsTerminal()
  {
#if defined(_WIN32)
    return _isatty(_fileno(stderr)) != 0;
#else
    return isatty(fileno(stderr)) != 0;
#endif
  }

private:
  std::string label_;
  double total_;
  bool show_;
  bool tty_;
  bool printed_ = false;
  bool finished_ = false;
  int percent_ = 0;
  std::chrono::steady_clock::time_point last_print_;
};

} // namespace kfmm::io

#endif
