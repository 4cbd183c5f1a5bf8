// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_DETAIL_COLLECTIVES_HPP
#define KFMM_DISTRIBUTED_DETAIL_COLLECTIVES_HPP

// What kfmm's distributed code needs from MPI beyond single calls:
// - Communicator: kfmm's own duplicate of the caller's communicator, so that kfmm's messages
//   never match the caller's (MPI_Comm_dup is collective), freed when it goes out of scope;
// - allGatherv: every rank's array in rank order on every rank, with 64-bit sizes. MPI counts
//   are ints, so one message holds at most 2^31 - 1 elements: the arrays are sent as bytes in
//   pieces of at most `piece_bytes`, each rank's in turn (MPI_Bcast from that rank), after one
//   MPI_Allgather of the 64-bit sizes. Any total size works, including ranks with nothing.
// Every function here is collective over its communicator: all its ranks must call it, in the
// same order.

#include <kfmm/Exception.hpp>

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace kfmm::distributed::detail
{

/// kfmm's duplicate of a caller's communicator (MPI_Comm_dup, collective), freed by the
/// destructor (MPI_Comm_free, collective).
class Communicator
{
public:
  explicit Communicator(MPI_Comm comm)
  {
    int const status = MPI_Comm_dup(comm, &_comm);
    if (status != MPI_SUCCESS)
      throw kfmm::Exception("kfmm::distributed: MPI_Comm_dup failed (MPI error " +
                            std::to_string(status) + ")");
  }
  Communicator(Communicator const &) = delete;
  Communicator &operator=(Communicator const &) = delete;
  ~Communicator() { MPI_Comm_free(&_comm); }

  MPI_Comm get() const { return _comm; }

private:
  MPI_Comm _comm = MPI_COMM_NULL;
};

/// The largest piece one message carries: 1 GiB, well within MPI's int count of bytes.
constexpr std::size_t max_piece_bytes = std::size_t(1) << 30;

/// Every rank's `local` elements, in rank order, on every rank (collective). Trivially
/// copyable elements; sizes are 64-bit and messages are cut into pieces of at most
/// `piece_bytes` bytes (positive; smaller values serve tests of the cutting).
template <class T>
std::vector<T> allGatherv(MPI_Comm comm, std::vector<T> const &local,
                          std::size_t piece_bytes = max_piece_bytes)
{
  static_assert(std::is_trivially_copyable<T>::value,
                "kfmm::distributed::detail::allGatherv: elements are sent as bytes");
  if (piece_bytes == 0 || piece_bytes > max_piece_bytes)
    throw kfmm::Exception("kfmm::distributed::detail::allGatherv: piece_bytes must be in [1, "
                          "2^30], got " + std::to_string(piece_bytes));
  int ranks = 0, rank = 0;
  MPI_Comm_size(comm, &ranks);
  MPI_Comm_rank(comm, &rank);
  std::int64_t const count = static_cast<std::int64_t>(local.size());
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks));
  MPI_Allgather(&count, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, comm);
  std::vector<std::size_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  for (int r = 0; r < ranks; ++r)
    first[r + 1] = first[r] + static_cast<std::size_t>(counts[r]);
  std::vector<T> all(first[ranks]);
  if (!local.empty())
    std::memcpy(all.data() + first[rank], local.data(), local.size() * sizeof(T));
  auto *const bytes = reinterpret_cast<unsigned char *>(all.data());
  for (int r = 0; r < ranks; ++r)
  {
    std::size_t const end = first[r + 1] * sizeof(T);
    for (std::size_t begin = first[r] * sizeof(T); begin < end; begin += piece_bytes)
    {
      std::size_t const size = end - begin < piece_bytes ? end - begin : piece_bytes;
      MPI_Bcast(bytes + begin, static_cast<int>(size), MPI_BYTE, r, comm);
    }
  }
  return all;
}

} // namespace kfmm::distributed::detail

#endif
