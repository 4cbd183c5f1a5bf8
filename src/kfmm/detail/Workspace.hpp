// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_WORKSPACE_HPP
#define KFMM_DETAIL_WORKSPACE_HPP

// Device memory that outlives the solver that used it, so that building and destroying
// solvers (one per time step, or kfmm::evaluate called in a loop) allocates nothing after
// the first build.
//
// Why: in Kokkos 3.4 a View's allocation on CUDA is a cudaMalloc followed by a blocking copy
// of its header, and its release a cudaFree, which waits for the whole device. A build of 1e6
// particles makes dozens of them and as many releases, build and destruction together, a
// large part of a small evaluation's time (docs/TUNING.md, "Memory kept between solvers").
// The caching device allocators of CUB and of the GPU libraries built on it answer the same
// cost the same way.
//
// A Workspace hands out Views:
//   - direct (default constructed): take() is an ordinary labelled allocation, which its View
//     owns, and give() drops the View; the public entry points (tree::buildOctree,
//     tree::buildInteractionLists, ...) run this way, so what they return owns its memory;
//   - pooled (WorkspacePool::lease()): take() returns an unmanaged View of a block of the
//     workspace, the smallest free one that fits or a new one, and give() marks the block free
//     for the next take. kfmm::Fmm leases one for its lifetime: its arrays and its build's
//     transient arrays come from it, and the transient ones go back as soon as the build no
//     longer reads them, so that later stages reuse them. The distributed solver's local
//     essential trees lease another, the same way (distributed/LocalEssentialTree.hpp).
// Blocks given back during a build are reused by kernels queued later on the same execution
// space instance, which runs them in order, so no synchronisation is needed. Blocks that
// kernels of a second instance (detail/SideInstance.hpp) may still use are not given back
// while they may (kfmm::Fmm's upward pass at its build, its M2L matrices), unless from then
// on only that instance takes blocks: kfmm::Fmm's grouping of its M2L list, where it runs on
// the side instance, is the build's last work to take blocks but for the matrices, which
// follow it there. When the lease
// ends (the solver is destroyed), the workspace waits for the device (Kokkos::fence) and
// returns to the process's pool, where the next lease finds its blocks, unless it holds more
// than Tuning::workspace_cache_bytes: then its blocks are released. kfmm::releaseCachedMemory
// releases the pool's idle blocks; Kokkos' finalisation releases them all. A solver that
// builds again and again, whatever its size (the distributed solver's time steps), keeps its
// workspaces instead: reclaim() frees their blocks for the next build, and releaseUntaken()
// after it drops the blocks that build did not take.

#include <kfmm/tuning/Tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kfmm::detail
{

template <class MemorySpace>
class WorkspacePool;

/// The Views of one solver (see the file comment).
template <class MemorySpace>
class Workspace
{
public:
  /// A direct workspace: every take is an allocation of its own.
  Workspace() = default;
  Workspace(Workspace const &) = delete;
  Workspace &operator=(Workspace const &) = delete;
  ~Workspace() { releaseBlocks(); }

  /// A direct workspace for callers that have none (it holds no state).
  static Workspace &direct()
  {
    static Workspace instance;
    return instance;
  }

  /// A View of the given extents, contents undefined. Direct: labelled `label` and owning its
  /// memory. Pooled: a block of this workspace that no other taken View uses (the block's
  /// allocation is labelled "kfmm::workspace").
  template <class View, class ExecutionSpace, class... Extents>
  View take(ExecutionSpace const &space, std::string const &label, Extents... extents)
  {
    static_assert(std::is_same<typename View::memory_space, MemorySpace>::value,
                  "kfmm::detail::Workspace::take: the View must be of the workspace's memory "
                  "space");
    if (!_pooled)
      return View(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), extents...);
    std::size_t const bytes = View::required_allocation_size(static_cast<std::size_t>(extents)...);
    if (bytes == 0)
      return View(nullptr, extents...);
    return View(static_cast<typename View::pointer_type>(block(bytes)), extents...);
  }

  /// take() into `view`, of the View's own type.
  template <class View, class ExecutionSpace, class... Extents>
  void take(ExecutionSpace const &space, View &view, std::string const &label, Extents... extents)
  {
    view = take<View>(space, label, extents...);
  }

  /// Makes the rank-1 `view` hold at least `n` entries, taking a new one in place of a
  /// smaller one; contents are not kept.
  template <class View, class ExecutionSpace>
  void reserve(ExecutionSpace const &space, View &view, std::size_t n, std::string const &label)
  {
    if (view.extent(0) >= n)
      return;
    give(view); // first: its block may serve the larger array
    take(space, view, label, n);
  }

  /// Ends the use of `view` (taken from this workspace, or empty) and empties it. Kernels
  /// queued on the same execution space instance before a later take of its block have read
  /// it by then; work on another instance must have finished.
  template <class View>
  void give(View &view)
  {
    if (_pooled && view.data() != nullptr)
    {
      void const *const data = view.data();
      auto const found = std::find_if(_blocks.begin(), _blocks.end(),
                                      [&](Block const &b) { return b.data == data; });
      if (found != _blocks.end())
        found->used = false;
    }
    view = View();
  }

  bool pooled() const { return _pooled; }

  /// Marks every block free for a new build, which takes them again: only once no View taken
  /// from the workspace is in use and the device has finished with its blocks (Kokkos::fence).
  void reclaim()
  {
    for (auto &b : _blocks)
    {
      b.used = false;
      b.taken = false;
    }
  }

  /// Releases the blocks that no take() used since the last reclaim(): a workspace that one
  /// build after another reclaims holds what the last build needed, not every size before.
  void releaseUntaken()
  {
    auto const untaken = std::stable_partition(_blocks.begin(), _blocks.end(),
                                               [](Block const &b) { return b.taken; });
    for (auto b = untaken; b != _blocks.end(); ++b)
      Kokkos::kokkos_free<MemorySpace>(b->data);
    _blocks.erase(untaken, _blocks.end());
  }

  /// Device memory the workspace's blocks hold (0 when direct).
  std::size_t heldBytes() const
  {
    std::size_t sum = 0;
    for (auto const &b : _blocks)
      sum += b.bytes;
    return sum;
  }

private:
  friend class WorkspacePool<MemorySpace>;

  struct Block
  {
    void *data;
    std::size_t bytes;
    bool used;
    bool taken; ///< by some take() since the last reclaim()
  };

  /// A free block of at least `bytes`: the smallest that fits, else a new one. New blocks are
  /// rounded up to an eighth of their size's power of two, so that the slightly different
  /// sizes of the next build (the lists' lengths move with the particles) fit them.
  void *block(std::size_t bytes)
  {
    Block *best = nullptr;
    for (auto &b : _blocks)
      if (!b.used && b.bytes >= bytes && (best == nullptr || b.bytes < best->bytes))
        best = &b;
    if (best == nullptr)
    {
      std::size_t granule = 4096;
      while (granule * 16 <= bytes)
        granule *= 2;
      std::size_t const rounded = (bytes + granule - 1) / granule * granule;
      void *const data = Kokkos::kokkos_malloc<MemorySpace>("kfmm::workspace", rounded);
      _blocks.push_back(Block{data, rounded, false, false});
      best = &_blocks.back();
    }
    best->used = true;
    best->taken = true;
    return best->data;
  }

  void releaseBlocks()
  {
    for (auto const &b : _blocks)
      Kokkos::kokkos_free<MemorySpace>(b.data);
    _blocks.clear();
  }

  bool _pooled = false;
  std::vector<Block> _blocks;
};

/// The process's idle pooled workspaces of one memory space (see the file comment).
template <class MemorySpace>
class WorkspacePool
{
public:
  using Lease = std::shared_ptr<Workspace<MemorySpace>>;

  static WorkspacePool &shared()
  {
    static WorkspacePool *const pool = [] {
      auto *const created = new WorkspacePool; // lives as long as the process
      Kokkos::push_finalize_hook([created] { created->releaseIdle(); });
      return created;
    }();
    return *pool;
  }

  /// A pooled workspace, an idle one of the pool when there is one. It returns to the pool
  /// when the last copy of the lease is dropped, after a Kokkos::fence.
  Lease lease()
  {
    std::unique_ptr<Workspace<MemorySpace>> workspace;
    {
      std::lock_guard<std::mutex> lock(_mutex);
      if (!_idle.empty())
      {
        workspace = std::move(_idle.back());
        _idle.pop_back();
      }
    }
    if (!workspace)
    {
      workspace = std::make_unique<Workspace<MemorySpace>>();
      workspace->_pooled = true;
    }
    return Lease(workspace.release(), [this](Workspace<MemorySpace> *returned) {
      giveBack(std::unique_ptr<Workspace<MemorySpace>>(returned));
    });
  }

  /// Releases the blocks of every idle workspace.
  void releaseIdle()
  {
    std::lock_guard<std::mutex> lock(_mutex);
    _idle.clear();
  }

  /// Device memory the idle workspaces hold.
  std::size_t idleBytes()
  {
    std::lock_guard<std::mutex> lock(_mutex);
    std::size_t sum = 0;
    for (auto const &w : _idle)
      sum += w->heldBytes();
    return sum;
  }

private:
  WorkspacePool() = default;

  void giveBack(std::unique_ptr<Workspace<MemorySpace>> workspace)
  {
    if (!Kokkos::is_initialized())
    {
      // Kokkos has finalised and released its memory: the blocks cannot be freed any more.
      workspace->_blocks.clear();
      return;
    }
    // Kernels queued on any instance may still read the blocks.
    Kokkos::fence();
    using Tune = tuning::Tuning<typename MemorySpace::execution_space>;
    if (workspace->heldBytes() > Tune::workspace_cache_bytes)
      return; // released by the destructor
    workspace->reclaim();
    std::lock_guard<std::mutex> lock(_mutex);
    _idle.push_back(std::move(workspace));
  }

  std::mutex _mutex;
  std::vector<std::unique_ptr<Workspace<MemorySpace>>> _idle;
};

} // namespace kfmm::detail

#endif
