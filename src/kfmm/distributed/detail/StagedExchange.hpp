// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_DETAIL_STAGED_EXCHANGE_HPP
#define KFMM_DISTRIBUTED_DETAIL_STAGED_EXCHANGE_HPP

// The exchange of Collectives.hpp (rank r's block d goes to rank d and arrives in rank order)
// for values held in a Kokkos memory space, as the distributed solver moves them at every
// evaluation (charges, ghost charges, multipoles, results):
// - the rank's block to itself is copied within the memory space, not through MPI (with a
//   Morton partition, most of a rank's values stay with it);
// - where MPI can read the memory (a host space, or a device space with an MPI built to read
//   it: the KFMM_ENABLE_GPU_AWARE_MPI build option), the other blocks go to MPI in place;
// - CUDA memory, where every rank is on one node and their GPUs reach each other: device to
//   device, into each rank's mailbox (DevicePeers.hpp; the KFMM_ENABLE_CUDA_IPC build option);
// - otherwise they travel through host buffers in the backend's staging space
//   (Tuning::staging_space: page-locked memory on CUDA). Page-locking is slow (the driver pins
//   every page: tens of milliseconds per hundred MiB), and a time-stepping code builds a new
//   solver every step, so the process keeps one pair of buffers per staging space
//   (StagingBuffers), grown on demand and released when Kokkos finalises;
// - start() posts the messages and returns, and finish() waits for them and puts what
//   arrived in place: device work queued in between runs while the messages travel (seed
//   002 overlaps the exchange of its local essential trees with local work the same way).
// Both calls are collective: every rank of the communicator makes them, in the same order.

#include <kfmm/Config.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>
#include <kfmm/distributed/detail/DevicePeers.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>
#if defined(KFMM_ENABLE_GPU_AWARE_MPI) && defined(OPEN_MPI)
#include <mpi-ext.h> // MPIX_Query_cuda_support
#endif

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace kfmm::distributed::detail
{

/// Whether MPI reads and writes MemorySpace's memory itself: host memory always; device
/// memory when kfmm was built with KFMM_ENABLE_GPU_AWARE_MPI.
template <class MemorySpace>
constexpr bool mpiReadsMemoryOf()
{
#if defined(KFMM_ENABLE_GPU_AWARE_MPI)
  return true;
#else
  return Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
#endif
}

/// Whether exchanges of MemorySpace's values may go device to device between the GPUs of a
/// node (DevicePeers.hpp): CUDA memory that MPI does not read itself.
template <class MemorySpace>
constexpr bool devicePeersMayCarry()
{
#if defined(KOKKOS_ENABLE_CUDA) && defined(KFMM_ENABLE_CUDA_IPC)
  return !mpiReadsMemoryOf<MemorySpace>() &&
         std::is_same<typename MemorySpace::execution_space, Kokkos::Cuda>::value;
#else
  return false;
#endif
}

/// Throws when kfmm was built with KFMM_ENABLE_GPU_AWARE_MPI for device memory and the MPI
/// library says at run time that it cannot read CUDA memory (Open MPI tells; others are
/// trusted): MPI would otherwise crash on the first device pointer.
template <class MemorySpace>
void requireMpiReadsMemory(std::string const &where)
{
#if defined(KFMM_ENABLE_GPU_AWARE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT)
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible &&
      MPIX_Query_cuda_support() == 0)
    throw kfmm::Exception(where + ": kfmm was built with KFMM_ENABLE_GPU_AWARE_MPI=ON, but this "
                                  "MPI cannot read GPU memory (MPIX_Query_cuda_support() is 0); "
                                  "build kfmm with KFMM_ENABLE_GPU_AWARE_MPI=OFF or use a "
                                  "CUDA-aware MPI");
#else
  (void)where;
#endif
}

/// The process's host buffers of one staging space, shared by every StagedExchange: one
/// exchange at a time uses them (kfmm's exchanges are collective calls, one after another).
template <class StagingSpace>
struct StagingBuffers
{
  using Bytes = Kokkos::View<unsigned char *, StagingSpace>;
  Bytes send;
  Bytes receive;
  bool in_use = false;

  /// The buffers, emptied by a hook when Kokkos finalises (Views must not outlive Kokkos).
  static StagingBuffers &shared()
  {
    static StagingBuffers *const buffers = [] {
      auto *const created = new StagingBuffers; // lives as long as the process
      Kokkos::push_finalize_hook([created] {
        created->send = Bytes();
        created->receive = Bytes();
      });
      return created;
    }();
    return *buffers;
  }

  /// `buffer` with at least `bytes` bytes (its contents are not kept).
  static void grow(Bytes &buffer, std::size_t bytes, char const *label)
  {
    if (buffer.extent(0) >= bytes)
      return;
    buffer = Bytes(); // the old buffer is released before the new one is taken
    buffer = Bytes(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), bytes);
  }
};

/// An exchange of values in MemorySpace (see the top of this file).
template <class MemorySpace>
class StagedExchange
{
  using StagingSpace =
      typename kfmm::tuning::Tuning<typename MemorySpace::execution_space>::staging_space;
  using Bytes = Kokkos::View<unsigned char *, MemorySpace, Kokkos::MemoryUnmanaged>;
  using Buffers = StagingBuffers<StagingSpace>;

public:
  /// Posts the exchange of `send` (send_counts[d] elements for rank d, in rank order) into
  /// `recv` (recv_counts[s] elements from rank s, in rank order; receiveCounts gives them)
  /// and copies the rank's own block. `send` must stay unchanged, and `recv` unread, until
  /// finish(). The device's work queued before the call is finished first.
  template <class ExecutionSpace, class T>
  void start(MPI_Comm comm, ExecutionSpace const &space, T const *send,
             std::vector<std::int64_t> const &send_counts, T *recv,
             std::vector<std::int64_t> const &recv_counts)
  {
    static_assert(std::is_trivially_copyable<T>::value,
                  "kfmm::distributed::detail::StagedExchange: elements are sent as bytes");
    if (_started)
      throw kfmm::Exception("kfmm::distributed::detail::StagedExchange::start: the last "
                            "exchange was not finished");
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    std::vector<Block> send_blocks = consecutiveBlocks(send_counts, sizeof(T));
    std::vector<Block> recv_blocks = consecutiveBlocks(recv_counts, sizeof(T));
    Bytes const send_bytes(reinterpret_cast<unsigned char *>(const_cast<T *>(send)),
                           end(send_blocks));
    _recv = Bytes(reinterpret_cast<unsigned char *>(recv), end(recv_blocks));
    _own_recv = recv_blocks[rank];
    Block const own_send = send_blocks[rank];
    if (own_send.bytes != _own_recv.bytes)
      throw kfmm::Exception("kfmm::distributed::detail::StagedExchange::start: the rank "
                            "sends itself " +
                            std::to_string(own_send.bytes) + " bytes but expects " +
                            std::to_string(_own_recv.bytes));
    Kokkos::deep_copy(space, slice(_recv, _own_recv), slice(send_bytes, own_send));
    send_blocks[rank].bytes = 0;
    recv_blocks[rank].bytes = 0;
    _comm = comm;
    _route = Route::mpi_in_place;
    if constexpr (mpiReadsMemoryOf<MemorySpace>())
    {
      space.fence();
      postExchange(comm, send_bytes.data(), send_blocks, _recv.data(), recv_blocks, _requests);
    }
    else
    {
      // The other ranks' blocks, before and after the own one, side by side in the buffers.
      auto const closeGap = [rank](std::vector<Block> &blocks, std::size_t own_bytes) {
        for (std::size_t r = static_cast<std::size_t>(rank) + 1; r < blocks.size(); ++r)
          blocks[r].offset -= own_bytes;
      };
      closeGap(recv_blocks, _own_recv.bytes);
#if defined(KOKKOS_ENABLE_CUDA) && defined(KFMM_ENABLE_CUDA_IPC)
      if constexpr (devicePeersMayCarry<MemorySpace>() &&
                    std::is_same<ExecutionSpace, Kokkos::Cuda>::value)
        if (DevicePeers::shared().usable(comm))
        {
          // Device to device: from `send` itself into the other ranks' mailboxes.
          DevicePeers::shared().push(comm, space.cuda_stream(), send_bytes.data(), send_blocks,
                                     recv_blocks);
          _route = Route::device_peers;
          _started = true;
          return;
        }
#endif
      closeGap(send_blocks, own_send.bytes);
      _route = Route::staged;
      Buffers &buffers = Buffers::shared();
      if (buffers.in_use)
        throw kfmm::Exception("kfmm::distributed::detail::StagedExchange::start: another "
                              "exchange holds the staging buffers");
      Buffers::grow(buffers.send, send_bytes.extent(0) - own_send.bytes,
                    "kfmm::distributed::staged_send");
      Buffers::grow(buffers.receive, _recv.extent(0) - _own_recv.bytes,
                    "kfmm::distributed::staged_receive");
      buffers.in_use = true;
      copyAround(space, buffers.send, send_bytes, own_send, true);
      space.fence();
      postExchange(comm, buffers.send.data(), send_blocks, buffers.receive.data(), recv_blocks,
                   _requests);
    }
    _started = true;
  }

  /// Waits for the messages of the last start() and puts what arrived in `recv`; the
  /// device's work is finished on return. Returns the seconds spent waiting for the messages.
  template <class ExecutionSpace>
  double finish(ExecutionSpace const &space)
  {
    double waited = 0;
#if defined(KOKKOS_ENABLE_CUDA) && defined(KFMM_ENABLE_CUDA_IPC)
    if constexpr (devicePeersMayCarry<MemorySpace>())
      if (_route == Route::device_peers)
      {
        space.fence(); // this rank's copies into the others' mailboxes
        Kokkos::Timer timer;
        DevicePeers::shared().settle(_comm);
        waited = timer.seconds();
        using Mailbox = Kokkos::View<unsigned char *, Kokkos::CudaSpace, Kokkos::MemoryUnmanaged>;
        copyAround(space,
                   Mailbox(DevicePeers::shared().mailbox(), _recv.extent(0) - _own_recv.bytes),
                   _recv, _own_recv, false);
        space.fence();
      }
#endif
    if (_route != Route::device_peers)
    {
      Kokkos::Timer timer;
      MPI_Waitall(static_cast<int>(_requests.size()), _requests.data(), MPI_STATUSES_IGNORE);
      waited = timer.seconds();
      _requests.clear();
      if (_route == Route::staged)
      {
        Buffers &buffers = Buffers::shared();
        copyAround(space, buffers.receive, _recv, _own_recv, false);
        space.fence();
        buffers.in_use = false;
      }
      else
        space.fence();
    }
    _recv = Bytes();
    _started = false;
    return waited;
  }

private:
  static std::size_t end(std::vector<Block> const &blocks)
  {
    return blocks.empty() ? 0 : blocks.back().offset + blocks.back().bytes;
  }

  template <class View>
  static auto slice(View const &bytes, Block const &block)
  {
    return Kokkos::subview(bytes, Kokkos::make_pair(block.offset, block.offset + block.bytes));
  }

  /// Copies `bytes` but for its block `own` to the front of `staged` (to_staged), or back.
  template <class ExecutionSpace, class StagedBytes>
  static void copyAround(ExecutionSpace const &space, StagedBytes const &staged, Bytes const &bytes,
                         Block const &own, bool to_staged)
  {
    Block const before{0, own.offset};
    Block const after{own.offset + own.bytes, bytes.extent(0) - own.offset - own.bytes};
    Block const staged_after{own.offset, after.bytes};
    auto const copy = [&](Block const &staged_part, Block const &part) {
      if (part.bytes == 0)
        return;
      if (to_staged)
        Kokkos::deep_copy(space, slice(staged, staged_part), slice(bytes, part));
      else
        Kokkos::deep_copy(space, slice(bytes, part), slice(staged, staged_part));
    };
    copy(before, before);
    copy(staged_after, after);
  }

  /// How the blocks of the exchange under way travel (see the top of this file).
  enum class Route
  {
    mpi_in_place,
    device_peers,
    staged
  };

  std::vector<MPI_Request> _requests;
  MPI_Comm _comm = MPI_COMM_NULL;
  Route _route = Route::mpi_in_place;
  Bytes _recv;
  Block _own_recv;
  bool _started = false; ///< between start() and finish()
};

} // namespace kfmm::distributed::detail

#endif
