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
// - postExchange: what MPI_Alltoallv does (rank r's block d goes to rank d, and arrives in
//   rank order), with 64-bit counts: the blocks travel as bytes in pieces of at most
//   `piece_bytes`, as non-blocking point-to-point messages (the exchange of values in any
//   memory space, StagedExchange.hpp, posts through it).
// - requireOnAllRanks: an argument check that throws on every rank when it fails on any, with
//   the same message (the lowest failing rank's) on every rank.
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

/// Throws unless piece_bytes is in [1, max_piece_bytes]; `where` names the caller.
inline void requirePieceBytes(char const *where, std::size_t piece_bytes)
{
  if (piece_bytes == 0 || piece_bytes > max_piece_bytes)
    throw kfmm::Exception(std::string(where) + ": piece_bytes must be in [1, 2^30], got " +
                          std::to_string(piece_bytes));
}

/// Every rank's `local` elements, in rank order, on every rank (collective). Trivially
/// copyable elements; sizes are 64-bit and messages are cut into pieces of at most
/// `piece_bytes` bytes (positive; smaller values serve tests of the cutting).
template <class T>
std::vector<T> allGatherv(MPI_Comm comm, std::vector<T> const &local,
                          std::size_t piece_bytes = max_piece_bytes)
{
  static_assert(std::is_trivially_copyable<T>::value,
                "kfmm::distributed::detail::allGatherv: elements are sent as bytes");
  requirePieceBytes("kfmm::distributed::detail::allGatherv", piece_bytes);
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

/// The counts each rank receives from every rank, given the counts this rank sends to each
/// (collective: MPI_Alltoall of 64-bit counts).
inline std::vector<std::int64_t> receiveCounts(MPI_Comm comm,
                                               std::vector<std::int64_t> const &send_counts)
{
  std::vector<std::int64_t> recv_counts(send_counts.size());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT64_T, recv_counts.data(), 1, MPI_INT64_T, comm);
  return recv_counts;
}

/// One rank's block of an exchange: where it starts in the buffer and how long it is, in
/// bytes.
struct Block
{
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

/// Posts the non-blocking messages of an exchange of bytes and appends their requests:
/// send_blocks[d] of `send` to rank d and recv_blocks[s] of `recv` from rank s, in pieces of
/// at most `piece_bytes` (the same on every rank). An empty block posts nothing; both sides
/// of a pair agree on the length (MPI keeps the order of messages between two ranks on one
/// communicator and tag, so the pieces arrive in order).
inline void postExchange(MPI_Comm comm, void const *send, std::vector<Block> const &send_blocks,
                         void *recv, std::vector<Block> const &recv_blocks,
                         std::vector<MPI_Request> &requests,
                         std::size_t piece_bytes = max_piece_bytes)
{
  requirePieceBytes("kfmm::distributed::detail::postExchange", piece_bytes);
  auto *const in = static_cast<unsigned char *>(recv);
  auto const *const out = static_cast<unsigned char const *>(send);
  auto const post = [&](Block const &block, int peer, bool receiving) {
    std::size_t const end = block.offset + block.bytes;
    for (std::size_t begin = block.offset; begin < end; begin += piece_bytes)
    {
      int const size = static_cast<int>(end - begin < piece_bytes ? end - begin : piece_bytes);
      requests.emplace_back();
      if (receiving)
        MPI_Irecv(in + begin, size, MPI_BYTE, peer, 0, comm, &requests.back());
      else
        MPI_Isend(out + begin, size, MPI_BYTE, peer, 0, comm, &requests.back());
    }
  };
  for (int r = 0; r < static_cast<int>(recv_blocks.size()); ++r)
    post(recv_blocks[r], r, true);
  for (int r = 0; r < static_cast<int>(send_blocks.size()); ++r)
    post(send_blocks[r], r, false);
}

/// The blocks of `counts` elements of `element_bytes` each, one after another in rank order.
inline std::vector<Block> consecutiveBlocks(std::vector<std::int64_t> const &counts,
                                            std::size_t element_bytes)
{
  std::vector<Block> blocks(counts.size());
  std::size_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
  {
    blocks[r] = {offset, static_cast<std::size_t>(counts[r]) * element_bytes};
    offset += blocks[r].bytes;
  }
  return blocks;
}

/// Runs `check` on every rank and throws on all of them when it threw on any, every rank with
/// the same message: that of the lowest rank where it threw (one MPI_Allreduce, and an
/// MPI_Bcast of the message only on failure). A rank that threw alone would leave the others
/// waiting in the next collective call; the same text everywhere lets a caller that reports
/// from one rank, or compares ranks, see the cause.
template <class Check>
void requireOnAllRanks(MPI_Comm comm, std::string const &where, Check const &check)
{
  std::string failure;
  bool failed = false;
  try
  {
    check();
  }
  catch (kfmm::Exception const &e)
  {
    failure = e.what();
    failed = true;
  }
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  int first_failed = failed ? rank : ranks;
  MPI_Allreduce(MPI_IN_PLACE, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == ranks)
    return;
  unsigned long long length = failure.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, first_failed, comm);
  failure.resize(static_cast<std::size_t>(length));
  if (length > 0)
    MPI_Bcast(&failure[0], static_cast<int>(length), MPI_CHAR, first_failed, comm);
  if (failure.empty())
    failure = where + ": invalid arguments";
  throw kfmm::Exception(failure);
}

} // namespace kfmm::distributed::detail

#endif
