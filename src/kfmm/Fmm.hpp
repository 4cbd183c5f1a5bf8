// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FMM_HPP
#define KFMM_FMM_HPP

// The solver: tree and lists built once from the positions, then any number of evaluations
// for new charges (the static-geometry case of Gumerov & Duraiswami 2008), or the one-shot
// kfmm::evaluate.
//
// One evaluation (docs/ARCHITECTURE.md):
//   charges -> sorted order -> P2M (leaves) -> M2M (levels, bottom up)
//     -> M2L (fmm: grouped, by rotation or per pair) -> L2L (levels, top down)
//     -> P2P (leaf pairs) -> L2P (leaves; fmm) or M2P (treecode) -> caller's order
// P2M to L2L run beside P2P on a second instance where the backend allows it
// (detail/SideInstance.hpp, Options::concurrent_far_field); kfmm::evaluate runs its P2M and
// M2M there beside the build of the interaction lists (Fmm::upwardAtBuild).
// Every stage is a Kokkos team kernel in which one team writes one target (cell or leaf), or
// one block of targets (the grouped M2L), so no atomics are needed; every stage is a Kokkos
// Tools region, and with Options::time_stages it is fenced and timed into Stats.
//
// Everything between the sorting and the unsorting computes in units (detail/UnitFrame.hpp):
// positions relative to the bounding cube in units of its side, charges in units of the
// largest, so that the accuracy does not depend on the scale of either. The results are
// checked for NaN and infinity at the end (Options::check_results).

#include <kfmm/Exception.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/ArgumentLaunch.hpp>
#include <kfmm/detail/DeferredCounts.hpp>
#include <kfmm/detail/Precompiled.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/Resolution.hpp>
#include <kfmm/detail/SideInstance.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/Tuning.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/expansions/Operators.hpp>
#include <kfmm/kernels/Downward.hpp>
#include <kfmm/kernels/FarField.hpp>
#include <kfmm/kernels/GroupedM2L.hpp>
#include <kfmm/kernels/M2LMatrices.hpp>
#include <kfmm/kernels/M2LRotations.hpp>
#include <kfmm/kernels/P2P.hpp>
#include <kfmm/kernels/Permutation.hpp>
#include <kfmm/kernels/ShiftMatrices.hpp>
#include <kfmm/kernels/Upward.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>
#include <kfmm/kernels/detail/TargetGroups.hpp>
#include <kfmm/tree/DeviceCube.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/M2LGroups.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <tuple>
#include <utility>

namespace kfmm
{
namespace distributed
{
template <class Real, class MemorySpace>
class DistributedFmm;
} // namespace distributed

namespace detail
{

/// Marks the constructor of a solver on trees its caller built (the distributed solver's).
struct PrebuiltTrees
{
};

/// The charges of kfmm::evaluate's one evaluation, given to its solver's build.
template <class Charges>
struct ChargesAtBuild
{
  Charges const &charges;
};

/// The particles of the source cells of row `row` of a list.
template <class MemorySpace, class Offsets, class Sources>
KOKKOS_INLINE_FUNCTION std::size_t rowSourceParticles(CellView<MemorySpace> const &source_cells,
                                                      Offsets const &offsets,
                                                      Sources const &sources, int row)
{
  std::size_t particles = 0;
  for (auto s = offsets(row); s < offsets(row + 1); ++s)
    particles += source_cells.particle_end(sources(s)) - source_cells.particle_begin(sources(s));
  return particles;
}

/// Interactions of row `row` of a list whose rows are target leaves and each of whose entries
/// meets every target of the leaf once (the treecode's M2P list): targets times entries.
template <class MemorySpace, class Offsets>
struct LeafRowEntries
{
  CellView<MemorySpace> target_cells;
  Offsets offsets;

  KOKKOS_FUNCTION void operator()(int row, std::size_t &sum) const
  {
    int const leaf = target_cells.leaves(row);
    std::size_t const targets = target_cells.particle_end(leaf) - target_cells.particle_begin(leaf);
    sum += targets * static_cast<std::size_t>(offsets(row + 1) - offsets(row));
  }
};

/// The interactions of a list whose rows are target leaves (LeafRowEntries), reduced into
/// `total` (a rank-0 View; DeferredCounts' slot: nothing waits for the device).
template <class ExecutionSpace, class MemorySpace, class Offsets, class Total>
void countLeafRowEntries(ExecutionSpace const &space, CellView<MemorySpace> const &target_cells,
                         Offsets const &offsets, Total const &total)
{
  Kokkos::parallel_reduce(
      "kfmm::Fmm::count_pairs",
      Kokkos::RangePolicy<ExecutionSpace, ArgumentLaunch>(space, 0, offsets.extent(0) - 1),
      LeafRowEntries<MemorySpace, Offsets>{target_cells, offsets}, total);
}

/// Bytes held by the given Views.
template <class... Views>
std::size_t bytesOf(Views const &...views)
{
  return (std::size_t(0) + ... + (views.span() * sizeof(typename Views::value_type)));
}

/// The flops of each target particle's results (seed 002 balances its partition by the work
/// the previous evaluation measured): its leaf's near-field pairs, its leaf's M2P
/// translations (treecode), or its share of the M2L translations into its leaf and the
/// leaf's ancestors (those into a cell divided among the cell's targets), and its L2P. One
/// thread per target leaf; work(permutation(j)) for each of the leaf's sorted targets j.
template <class MemorySpace>
struct TargetWork
{
  CellView<MemorySpace> target_cells;
  CellView<MemorySpace> source_cells;
  Kokkos::View<std::int64_t *, MemorySpace> p2p_offsets; ///< rows: target leaves
  Kokkos::View<int *, MemorySpace> p2p_sources;
  Kokkos::View<std::int64_t *, MemorySpace> far_offsets; ///< rows: target cells (M2L), leaves
  bool far_rows_are_cells;
  double pair_flops;
  double far_flops; ///< per entry of the far-field list
  double target_flops;
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Kokkos::View<double *, MemorySpace> work;

  KOKKOS_FUNCTION void operator()(int row) const
  {
    int const leaf = target_cells.leaves(row);
    double const sources =
        static_cast<double>(rowSourceParticles(source_cells, p2p_offsets, p2p_sources, row));
    double w = pair_flops * sources + target_flops;
    if (far_rows_are_cells)
      for (int c = leaf; c >= 0; c = target_cells.parent(c))
        w += far_flops * static_cast<double>(far_offsets(c + 1) - far_offsets(c)) /
             (target_cells.particle_end(c) - target_cells.particle_begin(c));
    else if (far_offsets.extent(0) > 0)
      w += far_flops * static_cast<double>(far_offsets(row + 1) - far_offsets(row));
    for (int j = target_cells.particle_begin(leaf); j < target_cells.particle_end(leaf); ++j)
      work(permutation(j)) = w;
  }
};

} // namespace detail

/// The FMM / treecode solver for one set of positions, or for a set of sources and a set of
/// targets (points that are not sources: grid points, probes, another species).
///
/// \tparam Real         float or double: the precision of the expansions and kernels
/// \tparam MemorySpace  where the tree, lists and expansions live: the memory_space of the
///                      execution space the solver runs on
///
/// Positions, charges and results are Kokkos Views (any layout, any floating-point type) in
/// any memory space the execution space can access (Kokkos::SpaceAccessibility: its own, and
/// e.g. CudaUVMSpace or CudaHostPinnedSpace from Cuda), in the caller's particle order; a View
/// it cannot access is a compile-time error. The potential and field follow kfmm::directSum's
/// definitions. Positions may be given in double for a float solver: they are rounded only
/// after they are taken relative to their bounding cube, so a cloud far from the origin keeps
/// float's full resolution (Stats::precision_limited says where even that is not enough).
template <class Real, class MemorySpace>
class Fmm
{
  static_assert(std::is_same<Real, float>::value || std::is_same<Real, double>::value,
                "kfmm::Fmm: Real must be float or double");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "kfmm::Fmm: the second parameter must be a Kokkos memory space");

public:
  using real_type = Real;
  using memory_space = MemorySpace;

  /// Builds the octree and the interaction lists of `positions` (N x 3), and finds whether
  /// the precision resolves them (Stats::unresolved_pairs, precision_limited).
  /// \throws kfmm::Exception on invalid options or positions (NaN/Inf: the first bad index)
  template <class ExecutionSpace, class Positions>
  Fmm(ExecutionSpace const &space, Positions const &positions, Options const &options = {})
      : _options(options)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm", "positions", Positions, 2, "N x 3", ExecutionSpace);
    if constexpr (detail::viewFits<ExecutionSpace, Positions, 2>())
      build(detail::EntryPoint{"kfmm::Fmm"}, space, positions);
  }

  /// Builds the octrees of `sources` (N_s x 3) and of `targets` (N_t x 3) on one cube and the
  /// interaction lists of the targets' cells against the sources': evaluate() then gives the
  /// potential and field at the targets due to charges at the sources. A target at a
  /// source's position gets nothing from that source (as in kfmm::directSum).
  /// \throws kfmm::Exception on invalid options or positions (NaN/Inf: the argument and the
  /// first bad index)
  template <class ExecutionSpace, class Sources, class Targets,
            std::enable_if_t<Kokkos::is_view<Sources>::value && Kokkos::is_view<Targets>::value,
                             int> = 0>
  Fmm(ExecutionSpace const &space, Sources const &sources, Targets const &targets,
      Options const &options = {})
      : _options(options)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm", "sources", Sources, 2, "N_s x 3", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm", "targets", Targets, 2, "N_t x 3", ExecutionSpace);
    if constexpr (detail::viewFits<ExecutionSpace, Sources, 2>() &&
                  detail::viewFits<ExecutionSpace, Targets, 2>())
      build(detail::EntryPoint{"kfmm::Fmm"}, space, sources, &targets);
  }

  /// The constructors for an entry point that checked the Views' types and builds a solver
  /// for its caller's one evaluation (kfmm::evaluate), of `charges`: messages name `caller`.
  /// The build starts that evaluation too (its upward pass; see build), and the solver's
  /// next evaluate() must be of the same charges.
  template <class ExecutionSpace, class Positions, class Charges>
  Fmm(detail::EntryPoint caller, ExecutionSpace const &space, Positions const &positions,
      detail::ChargesAtBuild<Charges> charges, Options const &options)
      : _options(options)
  {
    checkSpace<ExecutionSpace>();
    build(caller, space, positions, static_cast<Positions const *>(nullptr), &charges.charges);
  }

  template <class ExecutionSpace, class Sources, class Targets, class Charges>
  Fmm(detail::EntryPoint caller, ExecutionSpace const &space, Sources const &sources,
      Targets const &targets, detail::ChargesAtBuild<Charges> charges, Options const &options)
      : _options(options)
  {
    checkSpace<ExecutionSpace>();
    build(caller, space, sources, &targets, &charges.charges);
  }

  /// The solver of the distributed one (distributed/DistributedFmm.hpp) on trees it built on
  /// one cube, in the caller's units: `source_tree` of `sources` and `target_tree` of
  /// `targets` (positions in the trees' original order, already checked). The trees are
  /// moved to the solver's frame in place.
  template <class ExecutionSpace, class Sources, class Targets>
  Fmm(detail::PrebuiltTrees, detail::EntryPoint caller, ExecutionSpace const &space,
      tree::Octree<MemorySpace> const &source_tree, Sources const &sources,
      tree::Octree<MemorySpace> const &target_tree, Targets const &targets,
      Options const &options)
      : _options(options), _other_ranks_sources(true)
  {
    checkSpace<ExecutionSpace>();
    detail::ScopedRegion region("kfmm::Fmm::build");
    detail::validate(_options, caller.name);
    _options = detail::withTunedParameters<detail::Tuning<ExecutionSpace>, Real>(_options,
                                                                                   caller.name);
    stage(space, "tree", _build_stages, [&] {
      _source_tree = source_tree;
      _target_tree = target_tree;
      moveTreesToFrame(space, caller.name, true);
    });
    // The distributed solver runs the far field on the caller's instance: the M2L
    // matrices are made there too.
    buildOnTrees(space, detail::SideInstance<ExecutionSpace>(space, false), caller.name, sources,
                 &targets, false);
  }

private:
  template <class Real_, class MemorySpace_>
  friend class distributed::DistributedFmm;

  using Counts = detail::DeferredCounts<MemorySpace>;
  /// Stage names and times, as Stats::stage_seconds holds them.
  using Stages = decltype(Stats::stage_seconds);

  /// The constructors' work: one set of particles acting on itself.
  template <class ExecutionSpace, class Positions>
  void build(detail::EntryPoint caller, ExecutionSpace const &space, Positions const &positions)
  {
    build(caller, space, positions, static_cast<Positions const *>(nullptr));
  }

  /// The constructors' work: `sources` acting on `*targets`, or on themselves when `targets`
  /// is null (one tree). Given the `charges` of the one evaluation to come (kfmm::evaluate),
  /// their upward pass runs as soon as the trees are built (upwardAtBuild), beside the lists'
  /// build.
  template <class ExecutionSpace, class Sources, class Targets,
            class Charges = Kokkos::View<Real *, MemorySpace>>
  void build(detail::EntryPoint caller, ExecutionSpace const &space, Sources const &sources,
             Targets const *targets, Charges const *charges = nullptr)
  {
    detail::ScopedRegion region("kfmm::Fmm::build");
    std::string const where = caller.name;
    _rounds_positions =
        detail::roundsPositions<Real, typename Sources::non_const_value_type>() ||
        (targets && detail::roundsPositions<Real, typename Targets::non_const_value_type>());
    detail::validate(_options, where);
    _options = detail::withTunedParameters<detail::Tuning<ExecutionSpace>, Real>(_options, where);
    Options const &options = _options;

    stage(space, "tree", _build_stages, [&] {
      char const *const sources_name = targets ? "sources" : "positions";
      tree::detail::checkPositionsShape<ExecutionSpace>(where, sources, sources_name);
      if (targets)
        tree::detail::checkPositionsShape<ExecutionSpace>(where, *targets, "targets");
      // Both trees on one cube, so that their cells lie on one grid (the lists' rule and
      // the M2L's translation classes compare cells of the two). The device finds it, and
      // checks the positions with it: the host learns both at the first tree's first read
      // of its levels, and names the first bad row then (tree/DeviceCube.hpp).
      _cube.find(space, *_memory, sources, targets);
      auto const not_finite = [&] {
        detail::requireFinite(space, where, sources_name, sources);
        if (targets)
          detail::requireFinite(space, where, "targets", *targets);
      };
      tree::detail::CheckedDeviceCube<MemorySpace, decltype(not_finite)> const cube{_cube,
                                                                                    not_finite};
      tree::detail::SplitByCount const rule{options.leaf_size};
      // The particles' order inside the cells is free: the keys are sorted only as far as
      // the trees' levels need (tree::detail::KeyOrder).
      auto const reads = tree::detail::LevelReads::tuned;
      auto const order = tree::detail::KeyOrder::cell_levels;
      auto const source_radii = sortingLeafRadii<ExecutionSpace>(
          where, _x, "kfmm::Fmm::sorted_positions", Counts::unresolved_sources);
      if (targets)
        // Both trees' levels are read together, where they are counted.
        std::tie(_source_tree, _target_tree) = tree::detail::buildTwoOctreesOfValidInput(
            space, *_memory, sources, *targets, cube, rule, source_radii,
            sortingLeafRadii<ExecutionSpace>(where, _target_x, "kfmm::Fmm::sorted_targets",
                                             Counts::unresolved_targets),
            reads, order);
      else
      {
        _source_tree = tree::detail::buildOctreeOfValidInput(space, *_memory, sources, cube,
                                                             rule, source_radii, reads, order);
        _target_x = _x;
      }
      moveTreesToFrame(space, where, targets != nullptr);
    });
    if (charges)
      upwardAtBuild(space, where, *charges);
    buildOnTrees(space, sideInstance(space), where, sources, targets, true);
  }

  /// The start of kfmm::evaluate's one evaluation, of `charges`, once the trees are built:
  /// the solver's arrays and the charges' unit on the caller's instance, then the charges'
  /// sort and, on the side instance, P2M and M2M (sortedUpward). The lists' build, which
  /// leaves much of a GPU idle (small traversal rounds, a read of their sizes by the host),
  /// then runs beside the upward pass rather than before it. evaluate() skips these stages
  /// (_upward_done). The side instance may still read the sorted positions and
  /// charges, the source tree's cells and the shift matrices, and write the multipoles, while
  /// the caller's instance builds on: none of these goes back to the workspace before the
  /// evaluation, so no later take() on the caller's instance reuses their memory
  /// (detail/Workspace.hpp). Only the arrays these stages use are taken here, before the
  /// lists' transient ones (allocateUpward); the others wait for the setup.
  template <class ExecutionSpace, class Charges>
  void upwardAtBuild(ExecutionSpace const &space, std::string const &where,
                     Charges const &charges)
  {
    detail::requireExtent(where, "charges", charges.extent(0), size());
    if (!computes())
      return;
    stage(space, "allocate", _build_stages, [&] { allocateUpward(space); });
    chargeUnitStage(space, where, charges, _build_stages);
    sortedUpward(space, charges, _build_stages);
    _upward_done = true;
  }

  /// How the solver's own tree builds measure their leaves' radii (tree::detail::buildCells):
  /// the particles sorted into `sorted` (taken here; the solver keeps them, in its frame and
  /// precision, with their unresolved pairs counted into the count `unresolved`), then the
  /// radii from them, read in order (tree::detail::SortedPoints). Gathered through the
  /// permutation a second time, the radii had taken 9.9 ms at 1e8 particles on an H200
  /// (perf/RESULTS.md, 2026-11-25).
  template <class ExecutionSpace>
  auto sortingLeafRadii(std::string const &where, Kokkos::View<Real *[3], MemorySpace> &sorted,
                        char const *label, typename Counts::Count unresolved)
  {
    return [this, where, &sorted, label, unresolved](ExecutionSpace const &space,
                                                     tree::Octree<MemorySpace> const &tree,
                                                     auto const &positions) {
      // The frame, as soon as the host knows the cube (both trees share it).
      _frame = detail::unitFrame(tree.cube, where);
      _memory->take(space, sorted, label, tree.numParticles());
      detail::sortPositions(space, *_memory, tree.permutation, positions, _frame, sorted,
                            _counts.slot(unresolved));
      using Points = tree::detail::SortedPoints<Kokkos::View<Real *[3], MemorySpace>>;
      tree::detail::leafRadiiOf(space, tree, Points{sorted, _frame});
    };
  }

  /// The trees into the solver's frame (detail/UnitFrame.hpp); one tree serves as both when
  /// the targets are not a set of their own.
  template <class ExecutionSpace>
  void moveTreesToFrame(ExecutionSpace const &space, std::string const &where, bool two_trees)
  {
    _frame = detail::unitFrame(_source_tree.cube, where);
    tree::moveToFrame(space, _source_tree, _frame);
    if (two_trees)
      tree::moveToFrame(space, _target_tree, _frame);
    else
      _target_tree = _source_tree;
  }

  /// The build after the trees: lists, the sorted positions unless the trees' builds made them
  /// (`positions_sorted`), M2L operators and the work counts. The grouped M2L's matrices are
  /// made on the `side` instance, on which the evaluations' far field runs, and its grouping
  /// there too where it runs beside the near field (m2lBeside).
  template <class ExecutionSpace, class Sources, class Targets>
  void buildOnTrees(ExecutionSpace const &space, detail::SideInstance<ExecutionSpace> const &side,
                    std::string const &where, Sources const &sources, Targets const *targets,
                    bool positions_sorted)
  {
    Options const &options = _options;
    bool const fmm = options.method == Method::fmm;
    // Where the backend's tuning says so, the grouped M2L's classes are counted on the
    // traversal's far entries, so that their number comes back in the lists' read
    // (tree::detail::M2LClassCount).
    M2LVariant const variant = fmm ? chooseM2LVariant<ExecutionSpace>() : M2LVariant::automatic;
    bool const grouped = variant == M2LVariant::grouped && groupedM2LFits<ExecutionSpace>(where);
    std::optional<tree::detail::M2LClassCount<MemorySpace>> classes;
    if (grouped && detail::Tuning<ExecutionSpace>::m2l_classes_in_lists_read)
      classes.emplace(space, *_memory, _target_tree, _source_tree,
                      minClassEntries<ExecutionSpace>());
    auto *const counted = classes ? &*classes : nullptr;
    stage(space, "lists", _build_stages, [&] {
      double const separation = _frame.length(
          detail::softeningSeparation<detail::Tuning<ExecutionSpace>, Real>(options));
      _lists = tree::detail::buildInteractionListsIn(space, *_memory, _target_tree, _source_tree,
                                                     options.theta, options.method,
                                                     options.acceptance, separation,
                                                     targets && !_other_ranks_sources, 1, counted);
    });
    // The particles' sorted keys served the trees' builds only: 8 bytes per particle less.
    _memory->give(_source_tree.keys);
    _memory->give(_target_tree.keys);
    bool const m2l_beside = grouped && m2lBeside(side);
    auto const prepareM2L = [&] {
      if (grouped)
        stage(space, "M2L matrices", _build_stages,
              [&] { prepareGroupedM2L(space, side, m2l_beside, where, counted); });
      else if (variant == M2LVariant::grouped || variant == M2LVariant::rotation)
        stage(space, "M2L rotations", _build_stages, [&] { prepareRotationM2L(space); });
    };
    // Where the grouped M2L's grouping runs beside the caller's instance (m2lBeside), the
    // setup's arrays are taken before it: blocks that the grouping gives back may still be
    // in use on the side instance, and only work queued there takes them again
    // (detail/Workspace.hpp). Otherwise the grouping comes first, and the setup reuses its
    // blocks (10-15 % less memory held).
    if (!m2l_beside)
      prepareM2L();
    stage(space, "setup", _build_stages, [&] {
      if (!_upward_done)
        allocateUpward(space);
      allocateDownward(space);
      if (!positions_sorted)
        sortPositions(space, sources, targets);
      detail::invertPermutation(space, _target_tree.permutation, _target_ranks);
      using Tune = detail::Tuning<ExecutionSpace>;
      _p2p_groups = detail::buildTargetGroups(space, *_memory, targetCells(), _lists.p2p.numRows(),
                                              numTargets(),
                                              Tune::p2p_group_lanes * Tune::p2p_targets_per_thread);
    });
    if (m2l_beside)
      prepareM2L();
    countWork(space, side);
    _counts_pending = true;
    _stats.stage_seconds = _build_stages;
  }

public:
  /// Potential and field at every target due to `charges` (N_s) at the sources: at every
  /// particle due to all others for a solver of one set. Results go to `potential` (N_t) and
  /// `field` (N_t x 3) in the caller's order of the targets.
  /// \throws kfmm::Exception on mismatched extents or NaN/Inf charges, and (unless
  /// Options::check_results is off) when a potential or field is NaN or infinite: the message
  /// names the first such particle, its position and the likely cause (a result beyond the
  /// range of the precision). With the results' check the charges are checked at the end,
  /// with the results, which are then undefined.
  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void evaluate(ExecutionSpace const &space, Charges const &charges, Potential const &potential,
                Field const &field)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm::evaluate", "charges", Charges, 1, "N", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm::evaluate", "potential", Potential, 1, "N",
                             ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm::evaluate", "field", Field, 2, "N x 3", ExecutionSpace);
    static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                  "kfmm::Fmm::evaluate: arguments 'potential' and 'field' must hold non-const "
                  "float or double");
    if constexpr (detail::viewFits<ExecutionSpace, Charges, 1>() &&
                  detail::viewFits<ExecutionSpace, Potential, 1>() &&
                  detail::viewFits<ExecutionSpace, Field, 2>() &&
                  detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
      evaluate(detail::EntryPoint{"kfmm::Fmm::evaluate"}, space, charges, potential, field);
  }

  /// evaluate() for an entry point that checked the Views' types (kfmm::evaluate): messages
  /// name `caller`.
  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void evaluate(detail::EntryPoint caller, ExecutionSpace const &space, Charges const &charges,
                Potential const &potential, Field const &field)
  {
    detail::ScopedRegion region("kfmm::Fmm::evaluate");
    std::string const where = caller.name;
    auto const n = numTargets();
    detail::requireExtent(where, "charges", charges.extent(0), size());
    detail::requireExtent(where, "potential", potential.extent(0), n);
    detail::requireExtent(where, "field", field.extent(0), n);
    detail::requireExtent(where, "field (columns)", field.extent(1), 3);
    // The build of kfmm::evaluate's solver ran the charges' unit, their sort and the
    // upward pass (upwardAtBuild).
    bool const upward_done = std::exchange(_upward_done, false);
    _stats.stage_seconds = _build_stages;
    _stats.results_checked = false;
    _stats.far_field_concurrent = false;
    if (!upward_done)
      chargeUnitStage(space, where, charges, _stats.stage_seconds);
    if (n == 0)
      return;
    if (!computes())
      // No sources, or every pair is at distance zero and contributes nothing: no O(N^2)
      // near field of the one leaf that holds them all.
      stage(space, size() == 0 ? "no sources" : "all at one point", _stats.stage_seconds, [&] {
        Kokkos::deep_copy(space, potential, 0);
        Kokkos::deep_copy(space, field, 0);
      });
    else
    {
      if (!upward_done)
        sortedUpward(space, charges, _stats.stage_seconds);
      fieldStages(space);
      returnResults(space, potential, field);
    }
    if (_options.check_results)
    {
      stage(space, "check results", _stats.stage_seconds, [&] {
        checkResults(space, where, charges, potential, field, chargeUnitOnDevice());
      });
      _stats.results_checked = true;
    }
    requireResolved(where);
  }

  /// Times, counts and sizes of the build and of the last evaluation. The first call after
  /// the build waits for the device: the build's counts are reductions it did not wait for
  /// (detail/DeferredCounts.hpp).
  Stats const &stats() const
  {
    if (_counts_pending)
      readCounts();
    return _stats;
  }
  /// The options the solver runs with: the caller's, with the order and theta chosen for a
  /// tolerance and the tuned leaf size filled in.
  Options const &options() const { return _options; }
  /// Number of particles (of sources, for a solver of sources and targets).
  std::size_t size() const { return _source_tree.numParticles(); }
  /// Number of targets: size() for a solver of one set.
  std::size_t numTargets() const { return _target_tree.numParticles(); }

private:
  /// Whether an evaluation computes anything: it does unless there are no targets or no
  /// sources, or all particles are at one point.
  bool computes() const { return numTargets() > 0 && size() > 0 && !allAtOnePoint(); }

  /// Whether the charges' unit is found on the device: where the results' check will read
  /// the device anyway, which then checks the charges too.
  bool chargeUnitOnDevice() const { return computes() && _options.check_results; }

  /// The charges' unit, on the device (chargeUnitOnDevice), else on the host, which waits for
  /// it and checks the charges here.
  template <class ExecutionSpace, class Charges>
  void chargeUnitStage(ExecutionSpace const &space, std::string const &where,
                       Charges const &charges, Stages &record)
  {
    stage(space, "charge unit", record, [&] {
      if (chargeUnitOnDevice())
        detail::findChargeUnit(space, charges, _frame.length_exponent, _largest_charge,
                               _charge_unit, Kokkos::subview(_checks, charges_suspect));
      else
      {
        int const charge_exponent = detail::chargeExponent(space, where, "charges", charges);
        if (computes())
          setChargeUnit(space, charge_exponent);
      }
    });
  }

  /// The charge unit 2^charge_exponent, which the host found, where the kernels read it.
  template <class ExecutionSpace>
  void setChargeUnit(ExecutionSpace const &space, int charge_exponent)
  {
    Kokkos::parallel_for(
        "kfmm::Fmm::set_charge_unit", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
        detail::SetChargeUnit<Real, MemorySpace>{_charge_unit, _frame.length_exponent,
                                                 charge_exponent});
  }

  /// The charges in sorted order, in the charge unit (_charge_unit).
  template <class ExecutionSpace, class Charges>
  void sortChargesStage(ExecutionSpace const &space, Charges const &charges, Stages &record)
  {
    stage(space, "sort charges", record, [&] {
      detail::sortCharges(space, _source_tree.permutation, charges, _charge_unit, _q);
    });
  }

  /// The charges sorted on the caller's instance, then P2M and M2M after them on the side
  /// instance, where the far field's translations follow (fieldStages).
  template <class ExecutionSpace, class Charges>
  void sortedUpward(ExecutionSpace const &space, Charges const &charges, Stages &record)
  {
    sortChargesStage(space, charges, record);
    auto const side = sideInstance(space);
    side.follow();
    upwardStages(side.space(), record);
  }

  /// The near and far fields into the sorted results, once P2M and M2M are queued on the side
  /// instance (sortedUpward). The far field's translations need nothing of the near field,
  /// and the near field nothing of them, until the far field's last stage adds into the
  /// results: they run on the side instance (detail/SideInstance.hpp), beside the near field
  /// on the caller's, unless Options::concurrent_far_field is off or the stages are timed;
  /// the last stage follows both. In either case the near field adds before it, so the sums
  /// are the same.
  template <class ExecutionSpace>
  void fieldStages(ExecutionSpace const &space)
  {
    auto const side = sideInstance(space);
    _stats.far_field_concurrent = side.concurrent();
    side.follow();
    farFieldTranslations(side.space());
    nearFieldStage(space);
    side.join();
    farFieldToTargets(space);
  }

  /// The instance on which the far field runs beside the caller's `space`: a second one
  /// where the backend has one, unless Options::concurrent_far_field is off or the stages
  /// are timed (detail/SideInstance.hpp).
  template <class ExecutionSpace>
  detail::SideInstance<ExecutionSpace> sideInstance(ExecutionSpace const &space) const
  {
    return detail::SideInstance<ExecutionSpace>(
        space, _options.concurrent_far_field && !_options.time_stages);
  }

  /// The distributed solver's first part of an evaluation: the sorted charges, P2M and M2M.
  template <class ExecutionSpace, class Charges>
  void upward(ExecutionSpace const &space, Charges const &charges, int charge_exponent)
  {
    stage(space, "charge unit", _stats.stage_seconds,
          [&] { setChargeUnit(space, charge_exponent); });
    sortChargesStage(space, charges, _stats.stage_seconds);
    upwardStages(space, _stats.stage_seconds);
  }

  /// P2M and M2M: the source tree's multipoles.
  template <class ExecutionSpace>
  void upwardStages(ExecutionSpace const &space, Stages &record)
  {
    stage(space, "P2M", record, [&] { upwardP2M(space); });
    stage(space, "M2M", record, [&] { upwardM2M(space); });
  }

  /// The near field into the sorted results, zeroed first: every evaluation runs it before
  /// the far field's last stage, the other that adds to them (fieldStages; the distributed
  /// solver's evaluation).
  template <class ExecutionSpace>
  void nearFieldStage(ExecutionSpace const &space)
  {
    stage(space, "P2P", _stats.stage_seconds, [&] {
      detail::zeroFill(space, "kfmm::Fmm::clear_results", _results);
      nearField(space);
    });
  }

  /// The far field into the sorted results: M2L, L2L and L2P (FMM), or M2P (treecode).
  template <class ExecutionSpace>
  void farFieldStages(ExecutionSpace const &space)
  {
    farFieldTranslations(space);
    farFieldToTargets(space);
  }

  /// The far field's translations of multipoles into the target tree's locals: M2L and L2L
  /// (FMM); none for the treecode.
  template <class ExecutionSpace>
  void farFieldTranslations(ExecutionSpace const &space)
  {
    if (_options.method != Method::fmm)
      return;
    stage(space, "M2L", _stats.stage_seconds, [&] { farFieldM2L(space); });
    stage(space, "L2L", _stats.stage_seconds, [&] { downwardL2L(space); });
  }

  /// The far field's last stage, which adds into the sorted results: L2P (FMM) or M2P
  /// (treecode).
  template <class ExecutionSpace>
  void farFieldToTargets(ExecutionSpace const &space)
  {
    if (_options.method == Method::fmm)
      stage(space, "L2P", _stats.stage_seconds, [&] { downwardL2P(space); });
    else
      stage(space, "M2P", _stats.stage_seconds, [&] { farFieldM2P(space); });
  }

  /// The sorted results, in the caller's order and units (those of the charge unit that
  /// sorted the charges).
  template <class ExecutionSpace, class Potential, class Field>
  void returnResults(ExecutionSpace const &space, Potential const &potential, Field const &field)
  {
    stage(space, "unsort results", _stats.stage_seconds, [&] {
      auto const not_finite = Kokkos::subview(_checks, results_not_finite);
      detail::zeroFill(space, "kfmm::Fmm::clear_results_check", not_finite);
      detail::unsortResults(space, _target_ranks, _results, _charge_unit, potential, field,
                            not_finite);
    });
  }

  /// The solver's team kernels. Dynamic scheduling: on the host a thread takes the next team
  /// when it is done, since teams (cells, blocks of the grouped M2L, leaves) differ in work by
  /// their lists' lengths; GPUs schedule blocks so anyway and ignore it. `LaunchBounds`
  /// caps a kernel's registers on GPUs (Tuning). `Launch`: functors are kernel arguments by
  /// default (detail/ArgumentLaunch.hpp).
  template <class ExecutionSpace, class LaunchBounds = Kokkos::LaunchBounds<>,
            class Launch = detail::ArgumentLaunch>
  using Policy = Kokkos::TeamPolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>,
                                    LaunchBounds, Launch>;
  using Coefficients = detail::CoefficientArray<Real, MemorySpace>;

  template <class ExecutionSpace>
  static void checkSpace()
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "kfmm::Fmm: the first argument must be a Kokkos execution space");
    // The kernels keep the tree and the expansions in the execution space's own memory; the
    // caller's Views may be in any memory space the execution space can access.
    static_assert(std::is_same<typename ExecutionSpace::memory_space, MemorySpace>::value,
                  "kfmm::Fmm: the solver's MemorySpace must be the execution space's "
                  "memory_space: Fmm<Real, ExecutionSpace::memory_space>");
  }

  /// Runs one stage inside a profiling region; with Options::time_stages fenced, its time
  /// added to `record`.
  template <class ExecutionSpace, class Work>
  void stage(ExecutionSpace const &space, std::string const &name, Stages &record,
             Work &&work)
  {
    detail::ScopedRegion region("kfmm::Fmm::" + name);
    Kokkos::Timer timer;
    work();
    if (!_options.time_stages)
      return;
    space.fence();
    record.emplace_back(name, timer.seconds());
  }

  /// Whether all particles are at one point (the cube's extent is zero).
  bool allAtOnePoint() const { return _source_tree.cube.extent == 0; }

  /// Throws when a charge (where `charges_on_device`: the device found their unit) or a
  /// potential or field is NaN or infinite, naming the first such charge, or particle in the
  /// caller's order, where it is, and why that happens.
  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void checkResults(ExecutionSpace const &space, std::string const &where,
                    Charges const &charges, Potential const &potential, Field const &field,
                    bool charges_on_device) const
  {
    // The device flagged the charges whose largest magnitude may be NaN or infinite
    // (detail::findChargeUnit), and the results' return counted the bad rows as it wrote
    // them (detail::unsortResults); the first bad one is looked for only when there is one.
    // This read, of both, waits for the device.
    int checks[check_count] = {0, 0};
    Kokkos::deep_copy(Kokkos::View<int *, Kokkos::HostSpace>(checks, check_count), _checks);
    if (charges_on_device && checks[charges_suspect] != 0)
      detail::requireFinite(space, where, "charges", charges);
    int const not_finite = checks[results_not_finite];
    if (not_finite == 0)
      return;
    auto const bad = detail::firstNonFinite(space, potential, field);
    if (bad < 0)
      throw Exception("kfmm internal error: kfmm::Fmm::evaluate counted " +
                      std::to_string(not_finite) +
                      " results that are not finite, and found none");
    auto const result = detail::rowValues(space, potential, field, bad);
    double const phi = result[0];
    bool const potential_bad = !std::isfinite(phi);
    double const value = potential_bad                  ? phi
                         : !std::isfinite(result[1]) ? result[1]
                         : !std::isfinite(result[2]) ? result[2]
                                                     : result[3];
    auto const x = detail::rowOf(space, _target_x,
                                 detail::sortedIndexOf(space, _target_tree.permutation, bad));
    constexpr bool single = std::is_same<Real, float>::value;
    char const *const precision = single ? "float" : "double";
    auto const number = [](double v) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.*g", std::numeric_limits<Real>::max_digits10, v);
      return std::string(buffer);
    };
    std::string const position = "(" + number(_frame.caller(x[0], 0)) + ", " +
                                 number(_frame.caller(x[1], 1)) + ", " +
                                 number(_frame.caller(x[2], 2)) + ")";
    // The inputs are finite and the solver works in units where they are below 1, so what
    // overflows is a result or, for particles closer than the precision's range allows, a
    // pair's share of one.
    throw Exception(std::string("kfmm::Fmm::evaluate: the ") +
                    (potential_bad ? "potential" : "field") +
                    (separateTargets() ? " at target " : " of particle ") +
                    std::to_string(bad) + " at " + position + " is " +
                    (std::isnan(value) ? "NaN" : "infinite") +
                    ": a result, or a pair's share of it, is beyond the range of " + precision +
                    " (largest magnitude " +
                    number(static_cast<double>(std::numeric_limits<Real>::max())) + ")" +
                    (single ? "; compute in double precision, or " : "; ") +
                    "choose units or charges that bring the results into range");
  }

  int order() const { return _options.order; }
  /// Whether the targets are a set of their own (two trees).
  bool separateTargets() const { return _target_tree.centre.data() != _source_tree.centre.data(); }
  detail::CellView<MemorySpace> sourceCells() const
  {
    return detail::CellView<MemorySpace>(_source_tree);
  }
  detail::CellView<MemorySpace> targetCells() const
  {
    return detail::CellView<MemorySpace>(_target_tree);
  }
  int coefficients() const { return expansions::coefficientCount(_options.order); }

  /// The sorted positions of trees the solver did not build (the caller's prebuilt trees),
  /// with their unresolved pairs.
  template <class ExecutionSpace, class Sources, class Targets>
  void sortPositions(ExecutionSpace const &space, Sources const &sources, Targets const *targets)
  {
    _memory->take(space, _x, "kfmm::Fmm::sorted_positions", size());
    if (separateTargets())
      _memory->take(space, _target_x, "kfmm::Fmm::sorted_targets", numTargets());
    detail::sortPositions(space, *_memory, _source_tree.permutation, sources, _frame, _x,
                          _counts.slot(Counts::unresolved_sources));
    if (targets)
      detail::sortPositions(space, *_memory, _target_tree.permutation, *targets, _frame,
                            _target_x,
                            _counts.slot(Counts::unresolved_targets));
    else
      _target_x = _x;
  }

  /// The solver's arrays that the charges' unit and sort and the upward pass use (the
  /// charges, the evaluation's checks, the multipoles, the shift matrices): taken early where
  /// the build runs the upward pass (upwardAtBuild), so that nothing the side instance reads
  /// goes back to the workspace before the evaluation.
  template <class ExecutionSpace>
  void allocateUpward(ExecutionSpace const &space)
  {
    auto &memory = *_memory;
    memory.take(space, _q, "kfmm::Fmm::sorted_charges", size());
    memory.take(space, _checks, "kfmm::Fmm::evaluation_checks", check_count);
    detail::zeroFill(space, "kfmm::Fmm::clear_evaluation_checks", _checks);
    memory.take(space, _largest_charge, "kfmm::Fmm::largest_charge");
    memory.take(space, _charge_unit, "kfmm::Fmm::charge_unit");
    memory.take(space, _multipoles, "kfmm::Fmm::multipoles", _source_tree.numCells(),
                coefficients());
    if (shiftsByMatrices<ExecutionSpace>())
      _shift_matrices = detail::buildShiftMatrices<Real, ExecutionSpace, MemorySpace>(
          space, memory, order(), detail::Tuning<ExecutionSpace>::expansionTeamSize(order()));
  }

  /// The solver's other arrays (the results, the targets' ranks, the locals): taken in the
  /// setup, after the lists' transient arrays went back to the workspace, whose blocks they
  /// may then reuse (taken with the others in upwardAtBuild, they had raised a 1e6
  /// evaluation's peak by 10-14 bytes per particle; perf/RESULTS.md, 2026-11-27).
  template <class ExecutionSpace>
  void allocateDownward(ExecutionSpace const &space)
  {
    auto const nt = numTargets();
    auto &memory = *_memory;
    memory.take(space, _results, "kfmm::Fmm::sorted_results", nt);
    memory.take(space, _target_ranks, "kfmm::Fmm::target_ranks", nt);
    if (_options.method == Method::fmm)
      memory.take(space, _locals, "kfmm::Fmm::locals", _target_tree.numCells(), coefficients());
  }

  /// Whether M2M and L2L run as matrix products (kernels/ShiftMatrices.hpp): the backend's
  /// measured choice for the order.
  template <class ExecutionSpace>
  bool shiftsByMatrices() const
  {
    return order() <= detail::Tuning<ExecutionSpace>::shift_matrix_max_order;
  }

  /// Whether the grouped M2L's grouping (prepareGroupedM2L) runs on the side instance, beside
  /// the near field, rather than before it on the caller's `space`: where the instances run
  /// at once and the far field is the lighter part, so that the side's chain (grouping, M2L,
  /// L2L) still ends before the near field does. The parts are weighed by their estimated
  /// flops, the far field's times the backend's Tuning::far_field_flop_cost; the near
  /// field's pairs came back in the lists' read (InteractionLists::near_pairs), so the choice
  /// waits for nothing. An estimate from the mean leaf occupancy instead chose "before" at
  /// order 7, theta 0.84, leaf 248 on 1e6 uniform particles, where it was 45 % of the count
  /// (leaves at two depths) and the count chooses "beside"; the count was level or faster in
  /// all four cases of one A/B lease. On 1e6 uniform particles at order 7 the grouping beside
  /// the near field made the evaluation 1.8-4.3 % faster in four A/B runs; on Plummer
  /// particles at the defaults, where the M2L takes twice the near field's time, 14 % slower
  /// (perf/RESULTS.md, 2026-11-28).
  template <class ExecutionSpace>
  bool m2lBeside(detail::SideInstance<ExecutionSpace> const &side) const
  {
    if (!side.concurrent())
      return false;
    double const near_flops = detail::flops_per_interaction * double(_lists.near_pairs);
    double const far_flops = double(_lists.m2l.size) * double(expansions::flops::m2l(order()));
    return detail::Tuning<ExecutionSpace>::far_field_flop_cost * far_flops < near_flops;
  }

  /// Interaction counts, flop estimate, depth and memory, for Stats. The near field's pairs
  /// came back with the lists' sizes; the treecode's pair count is a reduction into the
  /// deferred counts, and the grouped M2L's pairs outside its classes are recorded there from
  /// the grouping's device count; stats() reads them: the build does not wait for them.
  template <class ExecutionSpace>
  void countWork(ExecutionSpace const &space, detail::SideInstance<ExecutionSpace> const &side)
  {
    bool const two = separateTargets();
    _stats.order = order();
    _stats.theta = _options.theta;
    _stats.leaf_size = _options.leaf_size;
    _stats.depth = kfmm::detail::max(_source_tree.depth(), _target_tree.depth());
    _stats.cells = static_cast<std::size_t>(_source_tree.numCells()) +
                   (two ? static_cast<std::size_t>(_target_tree.numCells()) : 0);
    _stats.leaves = static_cast<std::size_t>(_source_tree.numLeaves()) +
                    (two ? static_cast<std::size_t>(_target_tree.numLeaves()) : 0);
    // All particles at one point: the evaluation skips every stage.
    _stats.p2p_interactions = allAtOnePoint() ? 0 : _lists.near_pairs;
    _stats.m2l_interactions = _options.method == Method::fmm ? _lists.m2l.size : 0;
    if (_options.method == Method::fmm)
      _stats.m2l_variant = m2lVariantName(_m2l_variant);
    if (_m2l_variant == M2LVariant::grouped)
    {
      _stats.m2l_classes = static_cast<std::size_t>(_m2l_groups.num_classes);
      _stats.m2l_matrix_bytes = detail::bytesOf(_m2l_matrices);
      // Left on the device by the grouping, on the side instance: read with the other
      // deferred counts.
      _counts.record(side.space(), Counts::m2l_per_pair, _m2l_groups.per_pair_count);
    }
    if (_m2l_variant == M2LVariant::rotation)
    {
      _stats.m2l_classes = static_cast<std::size_t>(_m2l_rotations.num_directions);
      _stats.m2l_matrix_bytes = _m2l_rotations.bytes();
      _stats.m2l_per_pair_interactions = static_cast<std::size_t>(_m2l_rotations.per_pair_entries);
    }
    if (_options.method == Method::treecode && _target_tree.numLeaves() > 0)
      detail::countLeafRowEntries(space, targetCells(), _lists.m2p.offsets,
                                  _counts.slot(Counts::m2p_pairs));
    int const p = order();
    double const sources = static_cast<double>(size());
    double const targets = static_cast<double>(numTargets());
    double const source_cells = static_cast<double>(_source_tree.numCells());
    double const target_cells = static_cast<double>(_target_tree.numCells());
    // Without the M2P's flops, which readCounts adds.
    _stats.flops = detail::flops_per_interaction * double(_stats.p2p_interactions) +
                   sources * double(expansions::flops::p2m(p)) +
                   source_cells * double(expansions::flops::m2m(p)) + m2lFlops();
    if (_options.method == Method::fmm)
      _stats.flops += target_cells * double(expansions::flops::l2l(p)) +
                      targets * double(expansions::flops::l2p(p));
    auto const treeBytes = [](tree::Octree<MemorySpace> const &t) {
      return detail::bytesOf(t.keys, t.permutation, t.cell_keys, t.level, t.centre, t.radius,
                             t.particle_begin, t.particle_end, t.first_child, t.child_count,
                             t.parent, t.leaves);
    };
    _stats.bytes = detail::bytesOf(_x, _q, _results, _target_ranks, _multipoles, _locals) +
                   treeBytes(_source_tree) +
                   (two ? treeBytes(_target_tree) + detail::bytesOf(_target_x) : 0) +
                   detail::bytesOf(_lists.m2l.offsets, _lists.m2l.sources, _lists.m2p.offsets,
                                   _lists.m2p.sources, _lists.p2p.offsets, _lists.p2p.sources,
                                   _p2p_groups.entries) +
                   _m2l_groups.bytes() + _stats.m2l_matrix_bytes + detail::bytesOf(_shift_matrices);
  }

  /// Throws kfmm::PrecisionError, naming `where`, when the build found that the precision
  /// does not resolve the particles (Stats::precision_limited), unless
  /// Options::allow_unresolved. Waits for the build's counts where it rounded positions.
  void requireResolved(std::string const &where) const
  {
    if (!_rounds_positions || _options.allow_unresolved || !stats().precision_limited)
      return;
    throw detail::unresolvedError<Real>(where, _stats.unresolved_pairs, countedParticles());
  }

  /// The particles whose pairs Stats::unresolved_pairs counts: the sources and the targets,
  /// or in the distributed solver's trees this rank's own particles (the targets) alone.
  std::size_t countedParticles() const
  {
    return _other_ranks_sources ? numTargets()
                                : size() + (separateTargets() ? numTargets() : 0);
  }

  /// The build's deferred counts into Stats, with the flops that depend on them.
  void readCounts() const
  {
    _counts.wait();
    _counts_pending = false;
    _stats.m2p_interactions = _counts[Counts::m2p_pairs];
    // The distributed solver's sources hold other ranks' particles too, whose pairs those
    // ranks count: there each rank counts its own particles (the targets) alone, so that the
    // ranks' counts add up to about one rank's.
    _stats.unresolved_pairs = _counts[Counts::unresolved_targets] +
                              (_other_ranks_sources ? 0 : _counts[Counts::unresolved_sources]);
    if (_m2l_variant == M2LVariant::grouped)
      _stats.m2l_per_pair_interactions = _counts[Counts::m2l_per_pair];
    _stats.precision_limited =
        detail::precisionLimited(_stats.unresolved_pairs, countedParticles());
    _stats.flops += double(_stats.m2p_interactions) * double(expansions::flops::m2p(order()));
  }

  /// Each target's flops in the evaluations (detail::TargetWork), into `work` (one entry per
  /// target, in the order of the targets the solver was built with).
  template <class ExecutionSpace>
  void targetWork(ExecutionSpace const &space,
                  Kokkos::View<double *, MemorySpace> const &work) const
  {
    int const p = order();
    bool const fmm = _options.method == Method::fmm;
    // The M2L's flops per entry averaged over the variant's kinds of entries (its entries
    // are known on the host; the M2P's pair count, a deferred one, is not needed).
    double const m2l_entries = static_cast<double>(_stats.m2l_interactions);
    double const far_flops = !fmm ? double(expansions::flops::m2p(p))
                             : m2l_entries > 0 ? m2lFlops() / m2l_entries
                                               : 0;
    Kokkos::parallel_for(
        "kfmm::Fmm::target_work",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, _target_tree.numLeaves()),
        detail::TargetWork<MemorySpace>{targetCells(), sourceCells(), _lists.p2p.offsets,
                                        _lists.p2p.sources,
                                        fmm ? _lists.m2l.offsets : _lists.m2p.offsets, fmm,
                                        detail::flops_per_interaction, far_flops,
                                        fmm ? double(expansions::flops::l2p(p)) : 0.0,
                                        _target_tree.permutation, work});
  }

  /// A team policy for the expansion operators over `teams` cells, with `scratch` bytes,
  /// under `LaunchBounds`.
  template <class LaunchBounds = Kokkos::LaunchBounds<>, class ExecutionSpace>
  Policy<ExecutionSpace, LaunchBounds> expansionPolicy(ExecutionSpace const &space, int teams,
                                                       std::size_t scratch) const
  {
    return Policy<ExecutionSpace, LaunchBounds>(
               space, teams, detail::Tuning<ExecutionSpace>::expansionTeamSize(order()))
        .set_scratch_size(0, Kokkos::PerTeam(scratch));
  }

  template <class ExecutionSpace>
  void upwardP2M(ExecutionSpace const &space)
  {
    detail::zeroFill(space, "kfmm::Fmm::clear_multipoles", _multipoles);
    using Kernel = detail::P2MKernel<ExecutionSpace, Real, decltype(_x), decltype(_q)>;
    int const team_size = detail::Tuning<ExecutionSpace>::expansionTeamSize(order());
    Kokkos::parallel_for("kfmm::Fmm::P2M",
                         expansionPolicy(space, _source_tree.numLeaves(),
                                         Kernel::scratchBytes(order(), team_size)),
                         Kernel{sourceCells(), _x, _q, _multipoles, order()});
  }

  template <class ExecutionSpace>
  void upwardM2M(ExecutionSpace const &space)
  {
    using Kernel = detail::M2MKernel<ExecutionSpace, Real>;
    using Product = detail::ShiftProductKernel<ExecutionSpace, Real>;
    bool const matrices = shiftsByMatrices<ExecutionSpace>();
    for (int level = _source_tree.depth() - 1; level >= 0; --level)
    {
      int const first = _source_tree.level_offsets[level];
      int const count = _source_tree.level_offsets[level + 1] - first;
      if (matrices)
        Kokkos::parallel_for(
            "kfmm::Fmm::M2M_product", expansionPolicy(space, count, Product::scratchBytes(order())),
            Product{sourceCells(), _multipoles, _shift_matrices, order(), first, 0});
      else
        Kokkos::parallel_for(
            "kfmm::Fmm::M2M", expansionPolicy(space, count, Kernel::scratchBytes(order())),
            Kernel{sourceCells(), _multipoles, order(), first});
    }
  }

  /// The M2L variant to prepare: as asked, or the backend's choice for the order.
  template <class ExecutionSpace>
  M2LVariant chooseM2LVariant() const
  {
    if (_options.m2l_variant != M2LVariant::automatic)
      return _options.m2l_variant;
    return detail::automaticM2LVariant<detail::Tuning<ExecutionSpace>, Real>(order());
  }

  /// Estimated flops of the M2L: the pairs of each operator times its cost.
  double m2lFlops() const
  {
    double const pairs = static_cast<double>(_stats.m2l_interactions);
    if (_m2l_variant != M2LVariant::rotation)
      return pairs * double(expansions::flops::m2l(order()));
    double const per_pair = static_cast<double>(_stats.m2l_per_pair_interactions);
    return (pairs - per_pair) * double(expansions::flops::m2lRotated(order())) +
           per_pair * double(expansions::flops::m2l(order()));
  }

  /// Computes the rotation tables of the M2L list's directions (kernels/M2LRotations.hpp).
  template <class ExecutionSpace>
  void prepareRotationM2L(ExecutionSpace const &space)
  {
    _m2l_rotations = detail::buildM2LRotations<Real>(space, _target_tree, _source_tree,
                                                     _lists.m2l, order());
    _m2l_variant = M2LVariant::rotation;
  }

  /// Whether the grouped M2L's kernel fits the backend's team scratch at this order: where
  /// it does not, an automatic choice takes the rotation M2L, and an explicit request throws,
  /// its message naming the entry point `where`.
  template <class ExecutionSpace>
  bool groupedM2LFits(std::string const &where) const
  {
    int const block_rows = detail::Tuning<ExecutionSpace>::m2lBlockRows(order());
    if (detail::GroupedM2LKernel<ExecutionSpace, Real>::productColumns(order(), block_rows) >= 1)
      return true;
    detail::require(_options.m2l_variant != M2LVariant::grouped, where,
                    "the grouped M2L at order " + detail::formatNumber(order()) +
                        " does not fit this backend's team scratch; lower 'order' or choose "
                        "m2l_variant rotation or automatic");
    return false;
  }

  /// The fewest pairs of a translation class that gets a matrix (tree/M2LGroups.hpp).
  template <class ExecutionSpace>
  int minClassEntries() const
  {
    return kfmm::detail::max(1, detail::realCoefficientCount(order()) /
                                    detail::Tuning<ExecutionSpace>::m2l_min_class_fraction);
  }

  /// Groups the M2L list, by the classes the lists' traversal counted where it did
  /// (`classes`, whose numbering goes back to the workspace here), and computes the class
  /// matrices (tree/M2LGroups.hpp, kernels/M2LMatrices.hpp), the matrices on the `side`
  /// instance, and the grouping there too where `beside` (m2lBeside), once that instance has
  /// followed the caller's `space` past the lists: only the M2L, which runs there too, reads
  /// them, and the caller's instance goes on to the near field meanwhile (the grouping's
  /// small kernels take about 0.2 ms at 1e6 particles). Else the grouping runs on `space`.
  /// Without the classes' count from the lists (Tuning::m2l_classes_in_lists_read) the
  /// grouping reads their number on the host. An automatic choice whose matrices would exceed
  /// the backend's budget takes the rotation M2L instead; an explicit request throws, its
  /// message naming the entry point `where`.
  template <class ExecutionSpace>
  void prepareGroupedM2L(ExecutionSpace const &space,
                         detail::SideInstance<ExecutionSpace> const &side, bool beside,
                         std::string const &where,
                         tree::detail::M2LClassCount<MemorySpace> *classes)
  {
    using Tune = detail::Tuning<ExecutionSpace>;
    int const block_rows = Tune::m2lBlockRows(order());
    ExecutionSpace const grouping_space = beside ? side.space() : space;
    if (beside)
      side.follow();
    auto groups = tree::detail::groupM2LIn(grouping_space, *_memory, _target_tree, _source_tree,
                                           _lists.m2l, block_rows,
                                           minClassEntries<ExecutionSpace>(),
                                           tree::detail::SortKeyWidth::fitted, classes);
    if (classes != nullptr)
      _memory->give(classes->key_index);
    std::size_t const bytes = detail::m2lMatrixBytes<Real>(groups.num_classes, order());
    if (bytes > Tune::m2l_matrix_budget_bytes)
    {
      detail::require(_options.m2l_variant != M2LVariant::grouped, where,
                      "the grouped M2L needs " + detail::formatNumber(bytes >> 20) +
                          " MiB of translation matrices, more than this backend's budget of " +
                          detail::formatNumber(Tune::m2l_matrix_budget_bytes >> 20) +
                          " MiB; lower 'order', raise 'theta' or choose m2l_variant "
                          "rotation or automatic");
      // The groups' blocks go back to the workspace: the caller's instance waits for the
      // grouping, so that no later take there can race it.
      if (beside)
        side.join();
      groups.giveTo(*_memory);
      prepareRotationM2L(space);
      return;
    }
    _m2l_groups = groups;
    // The matrices read the classes' keys, which the grouping wrote.
    if (!beside)
      side.follow();
    _m2l_matrices = detail::buildM2LMatrices<Real>(side.space(), *_memory, _m2l_groups, order(),
                                                   Tune::expansionTeamSize(order()));
    _m2l_variant = M2LVariant::grouped;
    // The groups hold every M2L entry's source: the list's copy is not read again (its
    // offsets, a few bytes per cell, give the rows' count). 4 bytes per entry less.
    _memory->give(_lists.m2l.sources);
  }

  /// The grouped M2L kernel, one team per block of target rows, under `LaunchBounds`.
  template <class LaunchBounds, class ExecutionSpace, class Kernel>
  void launchGroupedM2L(ExecutionSpace const &space, Kernel const &kernel)
  {
    Kokkos::parallel_for(
        "kfmm::Fmm::M2L_grouped",
        Policy<ExecutionSpace, LaunchBounds>(
            space, _m2l_groups.num_blocks,
            detail::Tuning<ExecutionSpace>::m2lGroupedTeamSize(order()))
            .set_scratch_size(0, Kokkos::PerTeam(kernel.scratchBytes())),
        kernel);
  }

  template <class ExecutionSpace>
  void farFieldM2L(ExecutionSpace const &space)
  {
    if (_m2l_variant == M2LVariant::grouped)
    {
      detail::GroupedM2LKernel<ExecutionSpace, Real> const kernel(
          targetCells(), sourceCells(), _m2l_groups, _m2l_matrices, _multipoles, _locals,
          order(), _lists.m2l.numRows());
      using Tune = detail::Tuning<ExecutionSpace>;
      if (kernel.scratchBytes() <= Tune::m2l_capped_scratch_bytes)
        launchGroupedM2L<typename Tune::M2LGroupedLaunchBounds>(space, kernel);
      else
        launchGroupedM2L<Kokkos::LaunchBounds<>>(space, kernel);
      return;
    }
    // The per-pair and the rotation M2L share a kernel; without rotation tables
    // (_m2l_rotations empty) every pair is translated directly.
    using Kernel = detail::M2LKernel<ExecutionSpace, Real, decltype(_lists.m2l.offsets),
                                     decltype(_lists.m2l.sources)>;
    Kokkos::parallel_for(
        _m2l_variant == M2LVariant::rotation ? "kfmm::Fmm::M2L_rotation" : "kfmm::Fmm::M2L",
        expansionPolicy<typename detail::Tuning<ExecutionSpace>::M2LLaunchBounds>(
            space, _lists.m2l.numRows(), Kernel::scratchBytes(order())),
        Kernel{targetCells(), sourceCells(), _lists.m2l.offsets, _lists.m2l.sources,
               _m2l_rotations, _multipoles, _locals, order()});
  }

  template <class ExecutionSpace>
  void farFieldM2P(ExecutionSpace const &space)
  {
    using Kernel =
        detail::M2PKernel<ExecutionSpace, Real, decltype(_lists.m2p.offsets),
                          decltype(_lists.m2p.sources), decltype(_x), SortedPotential, SortedField>;
    Kokkos::parallel_for(
        "kfmm::Fmm::M2P",
        expansionPolicy(space, _lists.m2p.numRows(), Kernel::scratchBytes(order())),
        Kernel{targetCells(), sourceCells(), _lists.m2p.offsets, _lists.m2p.sources, _multipoles,
               _target_x, sortedPotential(), sortedField(), order()});
  }

  template <class ExecutionSpace>
  void downwardL2L(ExecutionSpace const &space)
  {
    using Kernel = detail::L2LKernel<ExecutionSpace, Real>;
    using Product = detail::ShiftProductKernel<ExecutionSpace, Real>;
    bool const matrices = shiftsByMatrices<ExecutionSpace>();
    for (int level = 1; level <= _target_tree.depth(); ++level)
    {
      int const first = _target_tree.level_offsets[level];
      int const count = _target_tree.level_offsets[level + 1] - first;
      // The product runs per parent (level - 1) and writes its children (level).
      int const parents = _target_tree.level_offsets[level - 1];
      int const parent_count = first - parents;
      if (matrices)
        Kokkos::parallel_for(
            "kfmm::Fmm::L2L_product",
            expansionPolicy(space, parent_count, Product::scratchBytes(order())),
            Product{targetCells(), _locals, _shift_matrices, order(), parents, 1});
      else
        Kokkos::parallel_for(
            "kfmm::Fmm::L2L", expansionPolicy(space, count, Kernel::scratchBytes(order())),
            Kernel{targetCells(), _locals, order(), first});
    }
  }

  template <class ExecutionSpace>
  void downwardL2P(ExecutionSpace const &space)
  {
    using Kernel =
        detail::L2PKernel<ExecutionSpace, Real, decltype(_x), SortedPotential, SortedField>;
    Kokkos::parallel_for("kfmm::Fmm::L2P",
                         expansionPolicy(space, _target_tree.numLeaves(),
                                         Kernel::scratchBytes(order())),
                         Kernel{targetCells(), _locals, _target_x, sortedPotential(), sortedField(),
                                order()});
  }

  template <class ExecutionSpace>
  void nearField(ExecutionSpace const &space)
  {
    using Tune = detail::Tuning<ExecutionSpace>;
    double const softening = _frame.length(_options.softening);
    using Kernel = detail::P2PKernel<ExecutionSpace, Real, Tune::p2p_group_lanes,
                                     Tune::p2p_targets_per_thread, decltype(_x), decltype(_q),
                                     decltype(_lists.p2p.offsets), decltype(_lists.p2p.sources),
                                     SortedPotential, SortedField>;
    // The groups were cut for this space's kernel when the solver was built.
    if (_p2p_groups.targets != Kernel::group_targets)
      throw std::logic_error("kfmm::Fmm: the near field's target groups were made for another "
                             "execution space");
    int const groups_per_team = Tune::p2p_team_size / Tune::p2p_group_lanes;
    int const source_tile = Tune::p2pSourceTile(static_cast<int>(sizeof(typename Kernel::Staged)));
    Kokkos::parallel_for(
        "kfmm::Fmm::P2P",
        Policy<ExecutionSpace, typename Tune::P2PLaunchBounds, detail::DefaultLaunch>(
            space, (_p2p_groups.bound() + groups_per_team - 1) / groups_per_team,
            Tune::p2p_team_size)
            .set_scratch_size(0, Kokkos::PerTeam(
                                     Kernel::scratchBytes(Tune::p2p_team_size, source_tile))),
        Kernel{targetCells(), sourceCells(), _target_x, _x, _q, _lists.p2p.offsets,
               _lists.p2p.sources, _p2p_groups.entries, _p2p_groups.count, sortedPotential(),
               sortedField(), static_cast<Real>(softening * softening), source_tile,
               !separateTargets()});
  }

  /// Where the solver's arrays come from (detail/Workspace.hpp): a pooled workspace, which
  /// returns to the process's pool when the last copy of the solver is destroyed.
  std::shared_ptr<detail::Workspace<MemorySpace>> _memory =
      detail::WorkspacePool<MemorySpace>::shared().lease();
  Options _options;
  tree::Octree<MemorySpace> _source_tree; ///< in the solver's units (_frame)
  tree::Octree<MemorySpace> _target_tree; ///< the source tree for a solver of one set
  detail::UnitFrame _frame;        ///< the caller's coordinates -> the solver's
  tree::detail::DeviceCube<MemorySpace> _cube; ///< the trees' cube as the build finds it
  tree::InteractionLists<MemorySpace> _lists;
  detail::TargetGroups<MemorySpace> _p2p_groups; ///< the near field's units of work
  Kokkos::View<Real *[3], MemorySpace> _x;        ///< source positions, sorted order
  Kokkos::View<Real *[3], MemorySpace> _target_x; ///< target positions, sorted order (or _x)
  Kokkos::View<Real *, MemorySpace> _q;        ///< charges, sorted order
  /// The sorted targets' results, a row (potential, field x, y, z) per target: returned to
  /// the caller's order, a target's results are one 16-byte read (unsortResults).
  Kokkos::View<Real *[4], Kokkos::LayoutRight, MemorySpace> _results;
  using SortedPotential = Kokkos::View<Real *, Kokkos::LayoutStride, MemorySpace>;
  using SortedField = Kokkos::View<Real **, Kokkos::LayoutStride, MemorySpace>;
  /// _results' potential and field columns, as the far- and near-field kernels add to them.
  SortedPotential sortedPotential() const { return Kokkos::subview(_results, Kokkos::ALL, 0); }
  SortedField sortedField() const
  {
    return Kokkos::subview(_results, Kokkos::ALL, Kokkos::make_pair(1, 4));
  }
  /// The sorted position of each of the caller's targets: the target tree's permutation
  /// inverted.
  Kokkos::View<std::uint32_t *, MemorySpace> _target_ranks;
  /// What an evaluation's end reads of the device (checkResults): whether a charge may be NaN
  /// or infinite, and the number of results that are.
  static constexpr int charges_suspect = 0;
  static constexpr int results_not_finite = 1;
  static constexpr int check_count = 2;
  Kokkos::View<int *, MemorySpace> _checks;
  Kokkos::View<double, MemorySpace> _largest_charge;      ///< findChargeUnit's reduction
  Kokkos::View<detail::ChargeUnit<Real>, MemorySpace> _charge_unit; ///< the evaluation's
  Coefficients _multipoles;
  Coefficients _locals; ///< fmm only
  /// The M2L variant prepared (per_pair until a grouped or rotation one is).
  M2LVariant _m2l_variant = M2LVariant::per_pair;
  tree::M2LGroups<MemorySpace> _m2l_groups;                  ///< grouped M2L only
  detail::M2LMatrixArray<Real, MemorySpace> _m2l_matrices; ///< grouped M2L only
  detail::M2LRotations<Real, MemorySpace> _m2l_rotations;  ///< rotation M2L only
  detail::ShiftMatrixArray<Real, MemorySpace> _shift_matrices; ///< M2M and L2L as products only
  Stages _build_stages;
  /// Whether the build ran the upward pass of kfmm::evaluate's one evaluation
  /// (upwardAtBuild), which that evaluation then skips.
  bool _upward_done = false;
  /// The build's counts that Stats reads once the device has made them (stats()).
  Counts _counts;
  mutable bool _counts_pending = false;
  mutable Stats _stats;
  /// Whether the build rounded positions to Real (detail::roundsPositions), so that it may
  /// have found pairs the precision does not resolve: only then does an evaluation wait for
  /// the build's counts to check (requireResolved).
  bool _rounds_positions = false;
  /// Whether the sources include other ranks' particles (the distributed solver's trees).
  bool _other_ranks_sources = false;
};

namespace detail
{

template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Stats evaluateOnce(ExecutionSpace const &space, Positions const &positions,
                   Charges const &charges, Potential const &potential, Field const &field,
                   Options const &options)
{
  detail::ScopedRegion region("kfmm::evaluate");
  EntryPoint const caller{"kfmm::evaluate"};
  Fmm<typename Potential::value_type, typename ExecutionSpace::memory_space> fmm(
      caller, space, positions, ChargesAtBuild<Charges>{charges}, options);
  fmm.evaluate(caller, space, charges, potential, field);
  // The solver's destruction on return waits for its kernels before its memory goes back to
  // the pool (detail/Workspace.hpp).
  return fmm.stats();
}

/// kfmm::evaluate's work at targets that are not the sources, on Views whose types it checked.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field>
Stats evaluateAtTargets(ExecutionSpace const &space, Sources const &sources,
                        Charges const &charges, Targets const &targets,
                        Potential const &potential, Field const &field, Options const &options)
{
  detail::ScopedRegion region("kfmm::evaluate");
  EntryPoint const caller{"kfmm::evaluate"};
  Fmm<typename Potential::value_type, typename ExecutionSpace::memory_space> fmm(
      caller, space, sources, targets, ChargesAtBuild<Charges>{charges}, options);
  fmm.evaluate(caller, space, charges, potential, field);
  // The solver's destruction on return waits for its kernels before its memory goes back to
  // the pool (detail/Workspace.hpp).
  return fmm.stats();
}

} // namespace detail

/// One-shot evaluation: builds the tree and lists of `positions`, evaluates the potential
/// and field of `charges` at every particle, and returns what it did. The precision is the
/// value type of `potential`. The Views are those of kfmm::Fmm; with kfmm::precompiled
/// linked, Views in the execution space's memory space and default layout, all of one
/// precision, use the library's compiled instance (kfmm/detail/Precompiled.hpp).
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Stats evaluate(ExecutionSpace const &space, Positions const &positions, Charges const &charges,
               Potential const &potential, Field const &field, Options const &options = {})
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::evaluate: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "positions", Positions, 2, "N x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "charges", Charges, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "potential", Potential, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "field", Field, 2, "N x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::evaluate: arguments 'potential' and 'field' must hold non-const float or "
                "double");
  if constexpr (Kokkos::is_execution_space<ExecutionSpace>::value &&
                detail::viewFits<ExecutionSpace, Positions, 2>() &&
                detail::viewFits<ExecutionSpace, Charges, 1>() &&
                detail::viewFits<ExecutionSpace, Potential, 1>() &&
                detail::viewFits<ExecutionSpace, Field, 2>() &&
                detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
  {
    using Views = detail::PrecompiledViews<ExecutionSpace, typename Potential::value_type>;
    detail::noteSolverCompilation<ExecutionSpace, typename Potential::value_type, Positions,
                                  Charges, Potential, Field>();
    return detail::evaluateOnce(space, detail::precompiledForm<typename Views::Positions>(positions),
                                detail::precompiledForm<typename Views::Charges>(charges),
                                detail::precompiledForm<typename Views::Potential>(potential),
                                detail::precompiledForm<typename Views::Field>(field), options);
  }
  else
    return {};
}

/// One-shot evaluation at targets that are not the sources (grid points, probes, another
/// species): builds the octrees of `sources` (N_s x 3) and `targets` (N_t x 3) on one cube
/// and evaluates the potential and field at the targets of `charges` (N_s) at the sources,
/// into `potential` (N_t) and `field` (N_t x 3), the definitions of kfmm::directSum (a
/// target at a source's position gets nothing from that source). The Views are those of
/// kfmm::Fmm; the precision is the value type of `potential`. With `targets` equal to
/// `sources` the results are those of the evaluation of one set, to rounding. kfmm::precompiled
/// holds this call too, for the Views it holds kfmm::evaluate's.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field, std::enable_if_t<Kokkos::is_view<Field>::value, int> = 0>
Stats evaluate(ExecutionSpace const &space, Sources const &sources, Charges const &charges,
               Targets const &targets, Potential const &potential, Field const &field,
               Options const &options = {})
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::evaluate: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "sources", Sources, 2, "N_s x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "charges", Charges, 1, "N_s", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "targets", Targets, 2, "N_t x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "potential", Potential, 1, "N_t", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "field", Field, 2, "N_t x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::evaluate: arguments 'potential' and 'field' must hold non-const float or "
                "double");
  if constexpr (Kokkos::is_execution_space<ExecutionSpace>::value &&
                detail::viewFits<ExecutionSpace, Sources, 2>() &&
                detail::viewFits<ExecutionSpace, Charges, 1>() &&
                detail::viewFits<ExecutionSpace, Targets, 2>() &&
                detail::viewFits<ExecutionSpace, Potential, 1>() &&
                detail::viewFits<ExecutionSpace, Field, 2>() &&
                detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
  {
    using Views = detail::PrecompiledViews<ExecutionSpace, typename Potential::value_type>;
    detail::noteSolverCompilation<ExecutionSpace, typename Potential::value_type, Sources,
                                  Charges, Potential, Field, Targets>();
    return detail::evaluateAtTargets(
        space, detail::precompiledForm<typename Views::Positions>(sources),
        detail::precompiledForm<typename Views::Charges>(charges),
        detail::precompiledForm<typename Views::Positions>(targets),
        detail::precompiledForm<typename Views::Potential>(potential),
        detail::precompiledForm<typename Views::Field>(field), options);
  }
  else
    return {};
}

} // namespace kfmm

#endif
