// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_IO_TEMPORARY_FILES_HPP
#define KFMM_IO_TEMPORARY_FILES_HPP

// The temporary files that output files are being written under (io::detail::OutputFile),
// so that a program interrupted while it writes can remove them: removeTemporaryFiles() is
// safe to call from a signal handler (fixed slots of atomic pointers, unlink), and a program
// that wants that installs the handler itself (the kfmm program does; a library does not
// take signals from its caller).

#include <atomic>
#include <cstddef>

#if !defined(_WIN32)
#include <unistd.h>
#endif

namespace kfmm::io
{
namespace detail
{

/// Files being written at once; beyond this many, the rest are not removed on a signal.
constexpr std::size_t temporary_file_slots = 16;

/// The paths, each a C string that its OutputFile keeps alive while it is here.
inline std::atomic<char const *> temporary_files[temporary_file_slots] = {};

/// Records `path` (kept alive by the caller until forgetTemporaryFile).
inline void rememberTemporaryFile(char const *path)
{
  for (auto &slot : temporary_files)
  {
    char const *expected = nullptr;
    if (slot.compare_exchange_strong(expected, path))
      return;
  }
}

inline void forgetTemporaryFile(char const *path)
{
  for (auto &slot : temporary_files)
  {
    char const *expected = path;
    if (slot.compare_exchange_strong(expected, nullptr))
      return;
  }
}

} // namespace detail

/// Removes every output file's temporary file that is being written now. Async-signal-safe.
inline void removeTemporaryFiles() noexcept
{
#if !defined(_WIN32)
  for (auto &slot : detail::temporary_files)
    if (char const *path = slot.exchange(nullptr))
      ::unlink(path);
#endif
}

} // namespace kfmm::io

#endif
