// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_DEVICE_CUBE_HPP
#define KFMM_TREE_DEVICE_CUBE_HPP

// The solver's cube, found on the device, so that the build queues its trees' Morton keys
// without waiting for the positions' box.
//
// Why: the box was a reduction into a host variable. The host waited for the device before
// it could queue the keys, and the device idled while the host went on: one of the four
// round trips of a build (docs/TUNING.md, "Round trips to the host"). Here:
//   - each set's extents are reduced into memory that the device writes and the host reads
//     (Tuning::staging_space, page-locked on CUDA), with no wait;
//   - one kernel makes the cube around them (tree::cubeAround), for the Morton keys' kernel
//     in device memory and for the host beside the extents;
//   - the host reads the cube when it next waits for the device anyway: at the tree's first
//     read of its levels' sizes (tree::detail::buildCells), before which it needs no cube.
// The positions' check goes with the box: a coordinate that is not finite makes the extents
// infinite (WidenExtents), and read() then calls the build's handler, which finds the first
// bad row and throws. The keys of such a build are defined (mortonKey maps a NaN to 0) and
// never used. With periodic boundaries the cube is the period, given (fixed()); read() then
// checks that the extents lie in it.

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Streaming.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/tree/Morton.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <optional>
#include <string>

namespace kfmm::tree::detail
{

/// The two sets' extents and the cube around them, where the host reads them.
struct StagedCube
{
  Extents sets[2];
  Cube cube;
};

/// cube() and staged().cube become the cube around the boxes of staged().sets, or the
/// `fixed` one (with the particles' extent) where there is one.
template <class CubeView, class StagedView>
struct CubeOfExtents
{
  CubeView cube;
  StagedView staged;
  Cube fixed;
  bool is_fixed;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    Cube around = cubeAround(unite(boxOf(staged().sets[0]), boxOf(staged().sets[1])));
    if (is_fixed)
    {
      double const extent = around.extent;
      around = fixed;
      around.extent = extent;
    }
    cube() = around;
    staged().cube = around;
  }
};

/// The cube around one set of particles or two (sources and targets), found on the device
/// (see the file comment). A solver keeps one for its builds.
template <class MemorySpace>
class DeviceCube
{
public:
  using staging_space =
      typename kfmm::tuning::Tuning<typename MemorySpace::execution_space>::staging_space;

  DeviceCube() : _staging(kfmm::detail::WorkspacePool<staging_space>::shared().lease()) {}

  /// The cube that find() takes instead of the particles' (periodic boundaries: the
  /// period), or none. Every particle must lie in it, which read() checks.
  void fix(std::optional<Cube> const &cube) { _fixed = cube; }

  /// Queues on `space` the reductions of the extents of `sources` and of `*targets` (none
  /// when null), and the cube's kernel. The device's copy of the cube comes from `memory`.
  template <class ExecutionSpace, class Sources, class Targets>
  void find(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
            Sources const &sources, Targets const *targets)
  {
    if (_cube.data() == nullptr)
      memory.take(space, _cube, "kfmm::tree::cube");
    if (_staged.data() == nullptr)
      _staging->take(Kokkos::DefaultHostExecutionSpace{}, _staged, "kfmm::tree::staged_cube");
    reduceExtents(space, sources, 0);
    if (targets)
      reduceExtents(space, *targets, 1);
    else
      Reducer(extentsOf(1)).init(_staged().sets[1]); // no set: the reduction's identity
    Kokkos::parallel_for("kfmm::tree::cube_of_extents",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                         CubeOfExtents<Kokkos::View<Cube, MemorySpace>, Staged>{
                             _cube, _staged, _fixed.value_or(Cube{}), _fixed.has_value()});
  }

  /// The cube in device memory, for kernels queued after find().
  Kokkos::View<Cube, MemorySpace> const &onDevice() const { return _cube; }

  /// The cube, once the host has waited for the kernels find() queued. When a set's extents
  /// are not finite, not_finite() is called first, and must throw.
  template <class NotFinite>
  Cube read(NotFinite const &not_finite) const
  {
    StagedCube const &staged = _staged();
    for (Extents const &set : staged.sets)
      if (!isFinite(boxOf(set)))
      {
        not_finite();
        throw Exception("kfmm internal error: the box of the positions is not finite, their "
                        "values are");
      }
    if (_fixed)
      for (Extents const &set : staged.sets)
        for (int d = 0; d < 3; ++d)
        {
          double const lo = _fixed->origin[d];
          double const hi = lo + _fixed->side;
          // The identity of an empty set is an inverted box: nothing to check.
          if (set.lo[d] <= set.hi[d] && (set.lo[d] < lo || set.hi[d] >= hi))
            throw Exception("kfmm: periodic boundaries: the particles' coordinates along axis " +
                            std::to_string(d) + " span [" + kfmm::detail::formatNumber(set.lo[d]) +
                            ", " + kfmm::detail::formatNumber(set.hi[d]) +
                            "], outside the periodic box [" + kfmm::detail::formatNumber(lo) +
                            ", " + kfmm::detail::formatNumber(hi) + "); wrap them into the box");
        }
    return staged.cube;
  }

private:
  using Staged = Kokkos::View<StagedCube, staging_space>;
  using Reducer = ExtentsReducer<staging_space>;

  typename Reducer::result_view_type extentsOf(int set) const
  {
    return typename Reducer::result_view_type(&_staged.data()->sets[set]);
  }

  /// _staged().sets[set] = the extents of `positions` (the reduction's identity for none).
  template <class ExecutionSpace, class Positions>
  void reduceExtents(ExecutionSpace const &space, Positions const &positions, int set)
  {
    kfmm::detail::streamReduce("kfmm::tree::bounding_box", space, positions.extent(0),
                               WidenExtents<Positions>{positions}, Reducer(extentsOf(set)));
  }

  std::shared_ptr<kfmm::detail::Workspace<staging_space>> _staging;
  Staged _staged;
  Kokkos::View<Cube, MemorySpace> _cube;
  std::optional<Cube> _fixed;
};

/// What a build is given as its cube (tree::detail::buildOctreeOfValidInput): a DeviceCube,
/// and what to call when its positions are not finite (it throws), both as long as the
/// build runs.
template <class MemorySpace, class NotFinite>
struct CheckedDeviceCube
{
  DeviceCube<MemorySpace> const &cube;
  NotFinite const &not_finite;
};

/// The cube as kernels read it.
template <class MemorySpace, class NotFinite>
Kokkos::View<Cube, MemorySpace> cubeForKernels(CheckedDeviceCube<MemorySpace, NotFinite> const &c)
{
  return c.cube.onDevice();
}

/// The cube as the host reads it, once it has waited for the device.
template <class MemorySpace, class NotFinite>
Cube cubeOnHost(CheckedDeviceCube<MemorySpace, NotFinite> const &c)
{
  return c.cube.read(c.not_finite);
}

} // namespace kfmm::tree::detail

#endif
