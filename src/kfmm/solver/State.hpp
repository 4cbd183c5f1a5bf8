// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_STATE_HPP
#define KFMM_SOLVER_STATE_HPP

// The solver's state: everything the stages read and write, in one plain struct that each
// stage takes explicitly (solver/Build.hpp to solver/Results.hpp). kfmm::Fmm holds one and
// runs the stages in its schedule (solver/Schedule.hpp); the distributed solver holds one
// per rank and runs the same stages in its own (distributed/DistributedFmm.hpp).
//
// Everything between the sorting and the unsorting is in units (detail/UnitFrame.hpp):
// positions relative to the bounding cube in units of its side, charges in units of the
// largest, so that the accuracy does not depend on the scale of either.

#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/DeferredCounts.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/expansions/SphericalHarmonics.hpp>
#include <kfmm/farfield/Plan.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/TargetGroups.hpp>
#include <kfmm/periodic/FarLattice.hpp>
#include <kfmm/tree/DeviceCube.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace kfmm::solver
{

template <class Real, class MemorySpace>
struct State
{
  using Counts = detail::DeferredCounts<MemorySpace>;
  /// Stage names and times, as Stats::stage_seconds holds them.
  using Stages = decltype(Stats::stage_seconds);
  using Coefficients = kernels::detail::CoefficientArray<Real, MemorySpace>;
  using Positions = Kokkos::View<Real *[3], MemorySpace>;
  using SortedPotential = Kokkos::View<Real *, Kokkos::LayoutStride, MemorySpace>;
  using SortedField = Kokkos::View<Real **, Kokkos::LayoutStride, MemorySpace>;

  /// What an evaluation's end reads of the device (solver::checkResults): whether a charge
  /// may be NaN or infinite, and the number of results that are.
  static constexpr int charges_suspect = 0;
  static constexpr int results_not_finite = 1;
  static constexpr int check_count = 2;

  /// Where the arrays come from (detail/Workspace.hpp): a pooled workspace, which returns to
  /// the process's pool when the last copy of the state is destroyed.
  std::shared_ptr<detail::Workspace<MemorySpace>> memory =
      detail::WorkspacePool<MemorySpace>::shared().lease();
  /// The caller's options, with the tolerance's order and theta and the tuned leaf size.
  Options options;
  tree::Octree<MemorySpace> source_tree;      ///< in units (frame)
  tree::Octree<MemorySpace> target_tree;      ///< the source tree for a solver of one set
  detail::UnitFrame frame;                    ///< the caller's coordinates -> the solver's
  tree::detail::DeviceCube<MemorySpace> cube; ///< the trees' cube as the build finds it
  tree::InteractionLists<MemorySpace> lists;
  kernels::detail::TargetGroups<MemorySpace> p2p_groups; ///< the near field's units of work
  farfield::Plan<Real, MemorySpace> far_field;           ///< how the M2L translates (fmm only)
  Positions x;                                           ///< source positions, sorted order
  Positions target_x;                                    ///< target positions, sorted order (or x)
  Kokkos::View<Real *, MemorySpace> q; ///< charges, sorted order, in the charge unit
  /// The sorted targets' results, a row (potential, field x, y, z) per target: returned to
  /// the caller's order, a target's results are one 16-byte read (kernels::unsortResults).
  Kokkos::View<Real *[4], Kokkos::LayoutRight, MemorySpace> results;
  /// The sorted position of each of the caller's targets: the target tree's permutation
  /// inverted.
  Kokkos::View<std::uint32_t *, MemorySpace> target_ranks;
  Kokkos::View<int *, MemorySpace> checks;                         ///< check_count entries
  Kokkos::View<double, MemorySpace> largest_charge;                ///< findChargeUnit's reduction
  Kokkos::View<detail::ChargeUnit<Real>, MemorySpace> charge_unit; ///< the evaluation's
  Coefficients multipoles;
  Coefficients locals;                                         ///< fmm only
  kernels::ShiftMatrixArray<Real, MemorySpace> shift_matrices; ///< M2M and L2L as products only
  periodic::FarLattice<MemorySpace> lattice;                   ///< periodic boundaries only
  Stages build_stages;
  /// Whether the build ran the upward pass of kfmm::evaluate's one evaluation, which that
  /// evaluation then skips (solver::upwardAtBuild).
  bool upward_done = false;
  /// The build's counts that Stats reads once the device has made them (solver::readCounts).
  Counts counts;
  /// Whether counts holds values Stats has not read yet. Mutable with stats: reading them is
  /// a const query of the solver that waits for the device once.
  mutable bool counts_pending = false;
  mutable Stats stats;
  /// Whether the build rounded positions to Real (detail::roundsPositions), so that it may
  /// have found pairs the precision does not resolve: only then does an evaluation wait for
  /// the build's counts to check (solver::requireResolved).
  bool rounds_positions = false;
  /// Whether the sources include other ranks' particles (the distributed solver's trees).
  bool other_ranks_sources = false;

  int order() const { return options.order; }
  int coefficients() const { return expansions::coefficientCount(options.order); }
  /// Number of sources.
  std::size_t size() const { return source_tree.numParticles(); }
  /// Number of targets: size() for a solver of one set.
  std::size_t numTargets() const { return target_tree.numParticles(); }
  /// Whether the targets are a set of their own (two trees).
  bool separateTargets() const { return target_tree.centre.data() != source_tree.centre.data(); }
  /// Whether all particles are at one point (the cube's extent is zero) and have no periodic
  /// images.
  bool allAtOnePoint() const { return source_tree.cube.extent == 0 && !options.periodic.enabled; }
  /// Whether an evaluation computes anything: it does unless there are no targets or no
  /// sources, or all particles are at one point.
  bool computes() const { return numTargets() > 0 && size() > 0 && !allAtOnePoint(); }
  /// Whether every source and every target lies in the one leaf of its tree, without periodic
  /// images, on one rank: no pair of cells is far, no multipole is read, and an evaluation is
  /// the direct sum (solver::fieldStages). Only where computes().
  bool oneLeaf() const
  {
    return source_tree.numCells() == 1 && target_tree.numCells() == 1 &&
           !options.periodic.enabled && !other_ranks_sources;
  }
  /// Whether the charges' unit is found on the device: where the results' check will read
  /// the device anyway, which then checks the charges too.
  bool chargeUnitOnDevice() const { return computes() && options.check_results; }
  /// The particles whose pairs Stats::unresolved_pairs counts: the sources and the targets,
  /// or in the distributed solver's trees this rank's own particles (the targets) alone.
  std::size_t countedParticles() const
  {
    return other_ranks_sources ? numTargets() : size() + (separateTargets() ? numTargets() : 0);
  }

  kernels::detail::CellView<MemorySpace> sourceCells() const
  {
    return kernels::detail::CellView<MemorySpace>(source_tree);
  }
  kernels::detail::CellView<MemorySpace> targetCells() const
  {
    return kernels::detail::CellView<MemorySpace>(target_tree);
  }
  /// The results' potential and field columns, as the far- and near-field kernels add to them.
  SortedPotential sortedPotential() const { return Kokkos::subview(results, Kokkos::ALL, 0); }
  SortedField sortedField() const
  {
    return Kokkos::subview(results, Kokkos::ALL, Kokkos::make_pair(1, 4));
  }
};

} // namespace kfmm::solver

#endif
