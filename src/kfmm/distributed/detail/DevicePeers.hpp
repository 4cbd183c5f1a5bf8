// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_DETAIL_DEVICE_PEERS_HPP
#define KFMM_DISTRIBUTED_DETAIL_DEVICE_PEERS_HPP

// The exchange of StagedExchange.hpp between the GPUs of one node, device to device: without
// it, every block crosses the host twice (device to page-locked buffer, MPI's shared-memory
// copy, buffer to device), which on one node of NVLinked GPUs is the distributed solver's
// largest cost (perf/RESULTS.md, "Several GPUs").
//
// Each process keeps one receive buffer in device memory, its mailbox, exported with a CUDA
// inter-process memory handle; the other processes of the node map it once (per size of the
// mailbox) and write their blocks into it with device-to-device copies, over NVLink where the
// GPUs have it. One exchange:
//  1. push(): the rank grows its mailbox if the blocks it receives need more room, and tells
//     every rank, in one MPI_Alltoall, its mailbox's handle, its generation (how often it
//     grew) and where that rank's block goes in it (the blocks in rank order, as the staged
//     exchange lays them out). It then queues the copies of its own blocks into the others'
//     mailboxes on the caller's stream, behind the kernels that made them. A mapping of a
//     mailbox that has since grown is closed here, by every rank, whether it sends or not.
//  2. settle(), after the caller fenced its space (its own copies done): waits for every
//     rank's copies (MPI_Barrier): its mailbox then holds every block it receives. A mailbox given
//     up by growing is freed only now, when no rank maps it any longer.
// A rank writes into another's mailbox only after that rank entered the exchange's
// MPI_Alltoall, which it does after it copied the last exchange's blocks out of its mailbox
// (StagedExchange::finish, after settle()), so no block is written over before it is read.
//
// usable() says, once per group of processes (collectively, at its first exchange), whether
// every rank of the communicator is on this node and every pair of their GPUs can reach each
// other (the same GPU, or peer access), and whether the mailboxes could be mapped. Where not
// (ranks on several nodes, one GPU visible per process through CUDA_VISIBLE_DEVICES, a Kokkos
// whose allocations cannot be exported), StagedExchange goes through host buffers.
// The mailboxes are freed when Kokkos finalises.

#include <kfmm/Config.hpp>

#if defined(KOKKOS_ENABLE_CUDA) && defined(KFMM_ENABLE_CUDA_IPC)

#include <kfmm/Exception.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>

#include <Kokkos_Core.hpp>

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kfmm::distributed::detail
{

/// Where a rank's block goes in another rank's mailbox (push(), step 1).
struct MailboxPost
{
  cudaIpcMemHandle_t handle;
  std::uint64_t generation;
  std::uint64_t offset;
};

/// The process's mailbox and its mappings of the other processes' (see the file comment).
class DevicePeers
{
public:
  /// The process's one instance, emptied when Kokkos finalises.
  static DevicePeers &shared()
  {
    static DevicePeers *const peers = [] {
      auto *const created = new DevicePeers; // lives as long as the process
      Kokkos::push_finalize_hook([created] { created->release(); });
      return created;
    }();
    return *peers;
  }

  /// Whether the exchange over `comm` can go device to device (see the file comment).
  /// Collective over `comm` at the first call for its group of processes.
  bool usable(MPI_Comm comm)
  {
    std::vector<int> const group = worldRanksOf(comm);
    if (group.size() < 2)
      return false;
    auto const known = _usable.find(group);
    if (known != _usable.end())
      return known->second;
    int const ok = reachesEveryRank(comm, group) ? 1 : 0;
    int every = 0;
    MPI_Allreduce(&ok, &every, 1, MPI_INT, MPI_MIN, comm);
    _usable[group] = every == 1;
    return every == 1;
  }

  /// Step 1 of an exchange (collective): recv_blocks[s] of the mailbox from rank s, and
  /// send_blocks[d] of `send` into rank d's mailbox, queued on `stream`. The rank's own blocks
  /// are empty (the caller copies them itself), and recv_blocks lie end to end from 0.
  void push(MPI_Comm comm, cudaStream_t stream, unsigned char const *send,
            std::vector<Block> const &send_blocks, std::vector<Block> const &recv_blocks)
  {
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    std::vector<int> const group = worldRanksOf(comm);
    std::size_t const bytes =
        recv_blocks.empty() ? 0 : recv_blocks.back().offset + recv_blocks.back().bytes;
    grow(bytes);
    std::vector<MailboxPost> mine(ranks), theirs(ranks);
    for (int r = 0; r < ranks; ++r)
      mine[r] = MailboxPost{_handle, _generation, recv_blocks[r].offset};
    MPI_Alltoall(mine.data(), sizeof(MailboxPost), MPI_BYTE, theirs.data(), sizeof(MailboxPost),
                 MPI_BYTE, comm);
    for (int r = 0; r < ranks; ++r)
    {
      if (group[r] == _world_rank)
        continue;
      Mapping &mapping = current(group[r], theirs[r]);
      if (send_blocks[r].bytes == 0)
        continue;
      if (mapping.base == nullptr)
        map(mapping, theirs[r]);
      check(cudaMemcpyAsync(mapping.base + theirs[r].offset, send + send_blocks[r].offset,
                            send_blocks[r].bytes, cudaMemcpyDefault, stream),
            "cudaMemcpyAsync");
    }
  }

  /// Step 2 of an exchange (collective): returns once every rank's copies into this rank's
  /// mailbox are done. The caller's copies are done (its space fenced) before the call.
  void settle(MPI_Comm comm)
  {
    MPI_Barrier(comm);
    freeRetired();
  }

  /// The mailbox, in device memory: what push() said arrives there after settle().
  unsigned char *mailbox() const { return _mailbox; }

private:
  /// A mapping of another process's mailbox, or a mailbox of this one's given up by growing.
  struct Mapping
  {
    unsigned char *base = nullptr;
    std::uint64_t generation = 0;
    std::size_t bytes = 0;
  };

  DevicePeers() { MPI_Comm_rank(MPI_COMM_WORLD, &_world_rank); }

  static void check(cudaError_t status, char const *call)
  {
    if (status != cudaSuccess)
      throw kfmm::Exception(std::string("kfmm::distributed: ") + call + " failed between the " +
                            "GPUs of this node: " + cudaGetErrorString(status));
  }

  /// The ranks of `comm` in MPI_COMM_WORLD, in the order of `comm`: the group's key.
  static std::vector<int> worldRanksOf(MPI_Comm comm)
  {
    MPI_Group mine = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    MPI_Comm_group(comm, &mine);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int size = 0;
    MPI_Group_size(mine, &size);
    std::vector<int> ranks(size), in_world(size);
    for (int r = 0; r < size; ++r)
      ranks[r] = r;
    MPI_Group_translate_ranks(mine, size, ranks.data(), world, in_world.data());
    MPI_Group_free(&mine);
    MPI_Group_free(&world);
    return in_world;
  }

  /// This rank's part of usable()'s question: every rank on this node, its GPU reachable
  /// from this one, and its mailbox mapped here (collective over `comm`).
  bool reachesEveryRank(MPI_Comm comm, std::vector<int> const &group)
  {
    int ranks = 0, rank = 0;
    MPI_Comm_size(comm, &ranks);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int node_ranks = 0;
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);
    // Every rank takes part in the collectives below whatever it finds, so that all agree.
    bool ok = node_ranks == ranks;
    int device = 0;
    ok = ok && cudaGetDevice(&device) == cudaSuccess;
    constexpr int bus_id_length = 32;
    std::vector<char> bus_ids(static_cast<std::size_t>(ranks) * bus_id_length, '\0');
    char *const own_id = bus_ids.data() + static_cast<std::size_t>(rank) * bus_id_length;
    ok = ok && cudaDeviceGetPCIBusId(own_id, bus_id_length, device) == cudaSuccess;
    MPI_Allgather(MPI_IN_PLACE, bus_id_length, MPI_CHAR, bus_ids.data(), bus_id_length, MPI_CHAR,
                  comm);
    for (int r = 0; ok && r < ranks; ++r)
    {
      int other = -1, reach = 0;
      ok = cudaDeviceGetByPCIBusId(&other, bus_ids.data() + std::size_t(r) * bus_id_length) ==
           cudaSuccess;
      ok = ok && (other == device ||
                  (cudaDeviceCanAccessPeer(&reach, device, other) == cudaSuccess && reach == 1));
    }
    cudaGetLastError(); // a refused query above leaves its error; the answer is `ok`
    // Every mailbox mapped by every other rank, as push() will.
    try
    {
      if (ok)
        grow(1);
    }
    catch (kfmm::Exception const &)
    {
      ok = false;
    }
    MailboxPost const own{_handle, _generation, 0};
    std::vector<MailboxPost> posts(ranks);
    MPI_Allgather(&own, sizeof(MailboxPost), MPI_BYTE, posts.data(), sizeof(MailboxPost), MPI_BYTE,
                  comm);
    for (int r = 0; ok && r < ranks; ++r)
    {
      if (group[r] == _world_rank)
        continue;
      Mapping &mapping = current(group[r], posts[r]);
      try
      {
        if (mapping.base == nullptr)
          map(mapping, posts[r]);
      }
      catch (kfmm::Exception const &)
      {
        ok = false;
      }
    }
    return ok;
  }

  /// A mailbox of at least `bytes` bytes; the old one is freed at the next settle(), when
  /// every rank of the exchange has closed its mapping of it (push()).
  void grow(std::size_t bytes)
  {
    if (_mailbox != nullptr && _bytes >= bytes)
      return;
    std::size_t const grown = std::max({bytes, 2 * _bytes, std::size_t(1) << 20});
    void *const taken = Kokkos::CudaSpace().allocate("kfmm::distributed::peer_mailbox", grown);
    cudaIpcMemHandle_t handle;
    cudaError_t const exported = cudaIpcGetMemHandle(&handle, taken);
    if (exported != cudaSuccess)
    {
      cudaGetLastError();
      Kokkos::CudaSpace().deallocate("kfmm::distributed::peer_mailbox", taken, grown);
      check(exported, "cudaIpcGetMemHandle");
    }
    if (_mailbox != nullptr)
      _retired.push_back(Mapping{_mailbox, _generation, _bytes});
    _mailbox = static_cast<unsigned char *>(taken);
    _bytes = grown;
    _handle = handle;
    ++_generation;
  }

  /// This process's mapping of the mailbox of the process of world rank `peer`, closed if
  /// `post` says that mailbox has grown since (then empty, for map()).
  Mapping &current(int peer, MailboxPost const &post)
  {
    Mapping &mapping = _mapped[peer];
    if (mapping.base != nullptr && mapping.generation != post.generation)
      unmap(mapping);
    return mapping;
  }

  void map(Mapping &mapping, MailboxPost const &post)
  {
    void *base = nullptr;
    check(cudaIpcOpenMemHandle(&base, post.handle, cudaIpcMemLazyEnablePeerAccess),
          "cudaIpcOpenMemHandle");
    mapping.base = static_cast<unsigned char *>(base);
    mapping.generation = post.generation;
  }

  static void unmap(Mapping &mapping)
  {
    cudaIpcCloseMemHandle(mapping.base);
    mapping = Mapping{};
  }

  void freeRetired()
  {
    for (Mapping const &retired : _retired)
      Kokkos::CudaSpace().deallocate("kfmm::distributed::peer_mailbox", retired.base,
                                     retired.bytes);
    _retired.clear();
  }

  /// Kokkos' finalisation: the mappings closed, the mailboxes freed.
  void release()
  {
    for (auto &entry : _mapped)
      if (entry.second.base != nullptr)
        unmap(entry.second);
    _mapped.clear();
    freeRetired();
    if (_mailbox != nullptr)
      Kokkos::CudaSpace().deallocate("kfmm::distributed::peer_mailbox", _mailbox, _bytes);
    _mailbox = nullptr;
    _bytes = 0;
    _usable.clear();
  }

  int _world_rank = 0;
  unsigned char *_mailbox = nullptr;
  std::size_t _bytes = 0;
  cudaIpcMemHandle_t _handle{};
  std::uint64_t _generation = 0;
  std::vector<Mapping> _retired;            ///< freed at the next settle()
  std::map<int, Mapping> _mapped;           ///< by the other process's rank in the world
  std::map<std::vector<int>, bool> _usable; ///< by group: the ranks in the world, in order
};

} // namespace kfmm::distributed::detail

#endif

#endif
