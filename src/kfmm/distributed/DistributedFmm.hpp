// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_DISTRIBUTED_FMM_HPP
#define KFMM_DISTRIBUTED_DISTRIBUTED_FMM_HPP

// The FMM over the particles of all MPI ranks (seed 002's distributed FMM, with seed 001's
// operators): each rank passes its own particles and gets their results, in its own order.
//
// Build, collective over kfmm's duplicate of the caller's communicator:
//  1. MortonPartition (MortonPartition.hpp): a global cube, and contiguous key ranges of
//     about equal particle counts whose boundaries fall between leaves of the octree of all
//     particles (PartitionOptions::leaf_size); each rank's particles move to their owner,
//     as doubles, so that every rank computes the keys the single-rank solver computes;
//  2. the owner's trees (LocalEssentialTree.hpp): its own tree (targets) and its local
//     essential tree (sources: its particles, other ranks' ghost particles and pruned cells),
//     both cells of the tree of all particles with that tree's radii;
//  3. the solver's build stages on the two trees (solver/Build.hpp): interaction lists, the
//     far field's plan.
// Evaluation: the charges to their owners; the ghosts' charges to the ranks that hold them;
// P2M and M2M; the pruned cells' multipoles to the ranks that hold them, then M2M again; M2L,
// L2L, L2P, P2P on the own tree (the solver's stages, solver/, composed in this order); the results
// back to the caller's order. Every rank uses the largest charge of all ranks as the unit (one
// MPI_Allreduce), as the single-rank solver uses the largest of its charges.
//
// The trees' cells, radii and so every interaction-list decision are those of the single-rank
// solver on all particles, and the multipoles of every cell are its multipoles: the results
// equal the single-rank solver's up to the order in which sums are formed
// (tests/tstDistributedFmm.cpp requires a relative L2 difference of at most 2e-6 in float and
// 1e-13 in double, far below the FMM's error, on 1 to 4 ranks).
//
// Data a rank keeps is copied on the device; the rest travels device to device between the
// GPUs of one node (detail/DevicePeers.hpp), through host buffers the process keeps
// (page-locked on CUDA), or in place with KFMM_ENABLE_GPU_AWARE_MPI
// (detail/StagedExchange.hpp; 64-bit counts, pieces of at most 1 GiB). Every public call is
// collective: all ranks call it, in the same order; when the arguments fail a check on any
// rank, every rank throws the same kfmm::Exception (detail/Collectives.hpp's
// requireOnAllRanks), with no hang.
//
// Time steps: rebuild() takes the particles at new positions and builds again from the
// previous build: MortonPartition::repartition keeps the key splitters while they still
// balance the counts (within 10 % of the mean by default; otherwise it samples new ones), and
// the communicator, the exchanges' buffers and the solver's pooled workspace carry over. The
// trees, the local essential tree and the lists are built afresh, so a rebuild's results are
// those of a new solver of the moved particles (tests/tstDistributedSteps.cpp). A simulation
// whose ranks take over the particles they own (toOwners: positions, charges, velocities, any
// per-particle value) and pass those from then on has its particles' positions, charges and
// results copied on the device, not sent: only the particles that crossed a range boundary
// since travel (RankStats::sent_particles), as in codes that migrate particles to their
// domain's rank every step.
//
// Balance: the ranges hold equal particle counts, or equal work given per particle (the
// weighted constructor; particleWork() gives the work a solver's lists count).
// Overlap: the pruned cells' multipoles travel while the near field runs.
// Not supported yet: Acceptance::classic (the selection of the local essential tree is derived
// for the theta rule), and Options::check_samples (its reference needs every source on every
// rank).

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include <kfmm/Exception.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/distributed/LocalEssentialTree.hpp>
#include <kfmm/distributed/MortonPartition.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>
#include <kfmm/distributed/detail/StagedExchange.hpp>
#include <kfmm/solver/Build.hpp>
#include <kfmm/solver/Downward.hpp>
#include <kfmm/solver/NearField.hpp>
#include <kfmm/solver/Results.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>
#include <kfmm/solver/Upward.hpp>
#include <kfmm/solver/WorkCount.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kfmm::distributed
{

/// What one rank of a DistributedFmm did: its solver's statistics (Stats: trees, lists,
/// stages), how much of the tree of all particles it holds, and its wall times, of which the
/// MPI calls (after the device's work before them is finished).
struct RankStats
{
  Stats solver;
  std::size_t particles = 0; ///< owned after the partition
  /// Of the caller's particles on this rank, those the partition sent to other ranks (through
  /// MPI); near zero when the caller passes the particles it owned (DistributedFmm::toOwners).
  std::size_t sent_particles = 0;
  std::size_t ghosts = 0;       ///< other ranks' particles in its local essential tree
  std::size_t pruned_cells = 0; ///< other ranks' cells whose multipoles it receives
  double build_seconds = 0;
  double build_communication_seconds = 0;
  /// Of build_seconds, the partition's (MortonPartition's construction, or its repartition in
  /// a rebuild).
  double partition_seconds = 0;
  /// Of build_seconds, the local essential trees' (both trees, what each rank sends, the
  /// exchange); the rest builds the solver on them.
  double essential_trees_seconds = 0;
  /// essential_trees_seconds step by step, where Options::time_stages asks for the stages'
  /// times (each step then ends with a fence); otherwise all 0.
  EssentialTreeSteps essential_tree_steps;
  double evaluate_seconds = 0;
  double evaluate_communication_seconds = 0;
  /// Whether the last rebuild() kept the previous partition's splitters (false after a
  /// construction).
  bool splitters_reused = false;
};

namespace detail
{

/// Throws on every rank unless every rank passed the same options.
inline void requireSameOptions(MPI_Comm comm, std::string const &where, Options const &options)
{
  constexpr int count = 9;
  double mine[count] = {double(options.order),
                        options.theta,
                        double(options.leaf_size),
                        double(static_cast<int>(options.method)),
                        options.softening,
                        options.tolerance,
                        double(static_cast<int>(options.acceptance)),
                        double(options.check_samples),
                        options.allow_missed_tolerance ? 1.0 : 0.0};
  double low[count], high[count];
  MPI_Allreduce(mine, low, count, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(mine, high, count, MPI_DOUBLE, MPI_MAX, comm);
  bool same = true;
  for (int k = 0; k < count; ++k)
    same = same && low[k] == high[k];
  kfmm::detail::require(same, where,
                        "every rank must pass the same options (order, theta, leaf_size, method, "
                        "softening, tolerance, acceptance, check_samples, "
                        "allow_missed_tolerance)");
}

/// |charges(i)| into the maximum.
template <class Charges>
struct LargestMagnitude
{
  Charges charges;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i, double &largest) const
  {
    double const q = charges(i) < 0 ? -charges(i) : charges(i);
    if (q > largest)
      largest = q;
  }
};

/// values(i) = from(index(i)).
template <class Values, class From, class Index>
struct Gather
{
  Values values;
  From from;
  Index index;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const { values(i) = from(index(i)); }
};

/// Row j of `rows` = the multipole of cell cells(j), as (real, imaginary) pairs; or (`into`)
/// the reverse.
template <class Real, class MemorySpace>
struct MoveMultipoles
{
  Kokkos::View<Kokkos::complex<Real> **, Kokkos::LayoutRight, MemorySpace> multipoles;
  Kokkos::View<Real **, Kokkos::LayoutRight, MemorySpace> rows;
  Kokkos::View<int *, MemorySpace> cells;
  bool into;

  KOKKOS_INLINE_FUNCTION void operator()(int j) const
  {
    int const c = cells(j);
    for (std::size_t k = 0; k < multipoles.extent(1); ++k)
    {
      if (into)
        multipoles(c, k) = Kokkos::complex<Real>(rows(j, 2 * k), rows(j, 2 * k + 1));
      else
      {
        rows(j, 2 * k) = multipoles(c, k).real();
        rows(j, 2 * k + 1) = multipoles(c, k).imag();
      }
    }
  }
};

/// Zeroes the multipole of cell c when it has children: M2M adds the children's into it.
template <class Real, class MemorySpace>
struct ClearInnerMultipoles
{
  Kokkos::View<Kokkos::complex<Real> **, Kokkos::LayoutRight, MemorySpace> multipoles;
  Kokkos::View<int *, MemorySpace> child_count;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    if (child_count(c) == 0)
      return;
    for (std::size_t k = 0; k < multipoles.extent(1); ++k)
      multipoles(c, k) = Kokkos::complex<Real>(0, 0);
  }
};

} // namespace detail

/// The FMM over the particles of all ranks in `comm` (see the top of this file). Real is the
/// precision of the computation (float or double), MemorySpace the execution space's.
template <class Real, class MemorySpace>
class DistributedFmm
{
  static_assert(std::is_same<Real, float>::value || std::is_same<Real, double>::value,
                "kfmm::distributed::DistributedFmm: Real must be float or double");

public:
  using real_type = Real;
  using memory_space = MemorySpace;

  /// Builds the solver of every rank's `positions` (N_local x 3, any N_local including 0).
  /// Collective: MPI_Comm_dup, then the partition's and the trees' collectives
  /// (MortonPartition.hpp, LocalEssentialTree.hpp). Every rank must pass the same options.
  /// \throws kfmm::Exception on every rank when any rank's options or positions are invalid
  /// (NaN/Inf, not N x 3), the options differ between ranks, or options.acceptance is
  /// Acceptance::classic
  template <class ExecutionSpace, class Positions>
  DistributedFmm(MPI_Comm comm, ExecutionSpace const &space, Positions const &positions,
                 Options const &options = {})
      : _comm(comm)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm", "positions", Positions, 2,
                             "N x 3", ExecutionSpace);
    if constexpr (kfmm::detail::viewFits<ExecutionSpace, Positions, 2>())
      build(space, positions, static_cast<Kokkos::View<double *, MemorySpace> const *>(nullptr),
            options);
  }

  /// As above, with the ranks' key ranges balanced by `weights` (N_local, non-negative and
  /// finite): each particle's expected work, such as particleWork() of the last solver of
  /// these particles (seed 002's balance by measured work, for Plummer-like distributions
  /// whose particles differ in cost). All zero on every rank: balanced by counts.
  /// \throws kfmm::Exception on every rank as above, or when any rank's weights are invalid
  template <class ExecutionSpace, class Positions, class Weights,
            std::enable_if_t<Kokkos::is_view<Weights>::value, int> = 0>
  DistributedFmm(MPI_Comm comm, ExecutionSpace const &space, Positions const &positions,
                 Weights const &weights, Options const &options = {})
      : _comm(comm)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm", "positions", Positions, 2,
                             "N x 3", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm", "weights", Weights, 1, "N",
                             ExecutionSpace);
    if constexpr (kfmm::detail::viewFits<ExecutionSpace, Positions, 2>() &&
                  kfmm::detail::viewFits<ExecutionSpace, Weights, 1>())
      build(space, positions, &weights, options);
  }

  /// Potential and field at this rank's particles due to the charges of all ranks' particles:
  /// `charges` (N_local) in, `potential` (N_local) and `field` (N_local x 3) out, in this
  /// rank's order. Collective (the transfers of MortonPartition.hpp, one MPI_Allreduce, two
  /// exchanges). With Options::check_results, a NaN or infinite result on any rank makes
  /// every rank throw.
  /// \throws kfmm::Exception on every rank when any rank's extents mismatch or its charges
  /// hold a NaN or an infinity
  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void evaluate(ExecutionSpace const &space, Charges const &charges, Potential const &potential,
                Field const &field)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm::evaluate", "charges", Charges, 1,
                             "N", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm::evaluate", "potential", Potential,
                             1, "N", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm::evaluate", "field", Field, 2,
                             "N x 3", ExecutionSpace);
    static_assert(kfmm::detail::holdsWritableReal<Potential>() &&
                      kfmm::detail::holdsWritableReal<Field>(),
                  "kfmm::distributed::DistributedFmm::evaluate: arguments 'potential' and "
                  "'field' must hold non-const float or double");
    if constexpr (kfmm::detail::viewFits<ExecutionSpace, Charges, 1>() &&
                  kfmm::detail::viewFits<ExecutionSpace, Potential, 1>() &&
                  kfmm::detail::viewFits<ExecutionSpace, Field, 2>() &&
                  kfmm::detail::holdsWritableReal<Potential>() &&
                  kfmm::detail::holdsWritableReal<Field>())
      evaluateChecked(space, charges, potential, field);
  }

  /// Rebuilds the solver for the particles at new `positions` (N_local x 3, the caller's
  /// order): a simulation's time step. N_local may differ from the last build's: a rank that
  /// took over the particles it owned (toOwners) passes those, and particles may come or go.
  /// Starts from the previous build: the partition keeps its key splitters while every rank's
  /// count stays within `imbalance` (a fraction, 10 % by default) of the mean, and samples new
  /// ones otherwise (MortonPartition::repartition; stats().splitters_reused says which); the
  /// communicator, the exchanges' buffers and the solver's workspace are the previous ones.
  /// The trees, the local essential tree and the lists are built afresh on the new positions,
  /// so the results are those of a new DistributedFmm of them (to rounding). Options stay as
  /// constructed. A build balanced by weights is rebalanced by counts when its splitters no
  /// longer balance counts; construct anew with weights to balance work. Collective.
  /// \throws kfmm::Exception on every rank, with one message, when any rank's positions are
  /// not N_local x 3, hold more than 2^31 - 1 points, a NaN or an infinity; the solver is then
  /// left as it was
  template <class ExecutionSpace, class Positions>
  void rebuild(ExecutionSpace const &space, Positions const &positions, double imbalance = 0.1)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm::rebuild", "positions", Positions,
                             2, "N x 3", ExecutionSpace);
    if constexpr (kfmm::detail::viewFits<ExecutionSpace, Positions, 2>())
    {
      std::string const where = "kfmm::distributed::DistributedFmm::rebuild";
      kfmm::detail::ScopedRegion region(where);
      Kokkos::Timer timer;
      detail::requireOnAllRanks(_comm.get(), where,
                                [&] { requireIndexable(where, positions.extent(0)); });
      _stats.splitters_reused = _partition->repartition(space, positions, imbalance);
      space.fence();
      _stats.partition_seconds = timer.seconds();
      buildSolver(space, where, timer);
    }
  }

  /// The flops each of this rank's particles costs per evaluation, from the solver's
  /// interaction lists (near-field pairs, its share of the far field's translations), into
  /// `work` (N_local, this rank's order). As the weights of the next DistributedFmm of these
  /// particles, it balances the ranks' work rather than their particle counts. Collective.
  template <class ExecutionSpace, class Work>
  void particleWork(ExecutionSpace const &space, Work const &work) const
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::DistributedFmm::particleWork", "work", Work, 1,
                             "N", ExecutionSpace);
    static_assert(std::is_same<typename Work::value_type, double>::value,
                  "kfmm::distributed::DistributedFmm::particleWork: argument 'work' must hold "
                  "non-const double");
    std::string const where = "kfmm::distributed::DistributedFmm::particleWork";
    kfmm::detail::ScopedRegion region(where);
    detail::requireOnAllRanks(_comm.get(), where, [&] {
      kfmm::detail::requireExtent(where, "work", work.extent(0), size());
    });
    Kokkos::View<double *, MemorySpace> owned(
        Kokkos::view_alloc(space, std::string("kfmm::distributed::owned_work")),
        _partition->ownedCount());
    if (!_trivial && _trees.plan.own > 0)
      solver::targetWork(space, *_solver, owned);
    _partition->toCallers(space, owned, work);
  }

  /// Per-particle values of this rank's particles (`in`: size() rows, one or more columns, the
  /// caller's order) to the particles this rank owns (`out`: ownedCount() rows, as many
  /// columns, in the order the solver holds them). A simulation that moves its positions,
  /// charges and any other per-particle arrays this way, and passes the owned ones to
  /// rebuild() and evaluate() from then on, keeps its particles' values on their rank: only
  /// particles that cross a range boundary travel at the next rebuild. Collective.
  /// \throws kfmm::Exception on every rank when any rank's extents mismatch, or the ranks'
  /// values differ in columns or type
  template <class ExecutionSpace, class In, class Out>
  void toOwners(ExecutionSpace const &space, In const &in, Out const &out) const
  {
    checkSpace<ExecutionSpace>();
    std::string const where = "kfmm::distributed::DistributedFmm::toOwners";
    kfmm::detail::ScopedRegion region(where);
    _partition->toOwners(space, in, out);
  }

  /// Number of particles this rank owns after the last build: the rows of toOwners' `out`.
  std::size_t ownedCount() const { return _partition->ownedCount(); }

  /// This rank's statistics of the build and of the last evaluation.
  RankStats const &stats() const { return _stats; }
  /// The options every rank runs with (the order, theta and leaf size filled in).
  Options const &options() const { return _options; }
  /// Number of this rank's particles (its callers').
  std::size_t size() const { return _partition->callerCount(); }

private:
  using Coefficients = kfmm::kernels::detail::CoefficientArray<Real, MemorySpace>;

  template <class ExecutionSpace>
  static void checkSpace()
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "kfmm::distributed::DistributedFmm: the second argument must be a Kokkos "
                  "execution space");
    static_assert(std::is_same<typename ExecutionSpace::memory_space, MemorySpace>::value,
                  "kfmm::distributed::DistributedFmm: MemorySpace must be the execution "
                  "space's memory_space");
  }

  /// Throws unless a rank's tree of `points` can be indexed with ints, as the solver does.
  static void requireIndexable(std::string const &where, std::size_t points)
  {
    kfmm::detail::require(points <= std::size_t(INT_MAX), where,
                          "argument 'positions' holds more than 2^31 - 1 points");
  }

  /// The build; `weights` null: ranges balanced by particle counts.
  template <class ExecutionSpace, class Positions, class Weights>
  void build(ExecutionSpace const &space, Positions const &positions, Weights const *weights,
             Options const &options)
  {
    std::string const where = "kfmm::distributed::DistributedFmm";
    kfmm::detail::ScopedRegion region(where);
    Kokkos::Timer timer;
    MPI_Comm const comm = _comm.get();
    detail::requireOnAllRanks(comm, where, [&] {
      kfmm::detail::validate(options, where);
      kfmm::detail::require(!options.periodic.enabled, where,
                            "option 'periodic' is not supported by the distributed solver yet");
      kfmm::detail::require(options.acceptance == Acceptance::theta, where,
                            "option 'acceptance' must be Acceptance::theta: the distributed "
                            "solver does not support the classic rule");
      // A rank's sources are its own particles and the other ranks' its lists reach, not all
      // of them: the sampled check's reference needs all.
      kfmm::detail::require(options.check_samples == 0, where,
                            "option 'check_samples' must be 0: the distributed solver does not "
                            "support the sampled check (kfmm::distributed::directSum is the "
                            "reference there)");
      requireIndexable(where, positions.extent(0));
    });
    detail::requireOnAllRanks(comm, where,
                              [&] { detail::requireSameOptions(comm, where, options); });
    _options = kfmm::detail::withTunedParameters<kfmm::tuning::Tuning<ExecutionSpace>, Real>(
        options, where);
    PartitionOptions partition_options;
    partition_options.leaf_size = _options.leaf_size;
    _partition =
        weights ? std::make_unique<Partition>(comm, space, positions, *weights, partition_options)
                : std::make_unique<Partition>(comm, space, positions, partition_options);
    space.fence();
    _stats.partition_seconds = timer.seconds();
    buildSolver(space, where, timer);
  }

  /// The build after the partition: the trees (LocalEssentialTree.hpp) and the solver's build
  /// stages on them, into a new solver::State. The previous state and trees, if any, are
  /// destroyed first, and their workspaces serve the new ones, whatever their size
  /// (detail/Workspace.hpp): returned to the process's pool, those above
  /// Tuning::workspace_cache_bytes would be freed, and a time step of tens of millions of
  /// particles per rank would free and allocate gigabytes of blocks, each call waiting for the
  /// device. The blocks no take() used since the last build (its evaluations included) are
  /// released.
  template <class ExecutionSpace>
  void buildSolver(ExecutionSpace const &space, std::string const &where, Kokkos::Timer &timer)
  {
    MPI_Comm const comm = _comm.get();
    std::int64_t owned = static_cast<std::int64_t>(_partition->ownedCount());
    std::int64_t total = 0;
    MPI_Allreduce(&owned, &total, 1, MPI_INT64_T, MPI_SUM, comm);
    RankStats const previous = _stats;
    _stats = RankStats{};
    _stats.splitters_reused = previous.splitters_reused;
    _stats.partition_seconds = previous.partition_seconds;
    _stats.particles = static_cast<std::size_t>(owned);
    _stats.sent_particles = _partition->sentCount();
    auto const solver_memory = _solver ? _solver->memory : nullptr;
    auto const trees_memory = std::move(_trees.memory);
    _solver.reset();
    _trees = detail::EssentialTrees<MemorySpace>{};
    if (solver_memory || trees_memory)
    {
      Kokkos::fence(); // kernels of any instance may still read the blocks
      for (auto *memory : {solver_memory.get(), trees_memory.get()})
        if (memory != nullptr)
        {
          memory->releaseUntaken();
          memory->reclaim();
        }
    }
    // No particles, or all at one point (every pair at distance zero): nothing to compute.
    _trivial = total == 0 || _partition->cube().extent == 0;
    if (!_trivial)
    {
      Kokkos::Timer trees_timer;
      _trees = detail::buildEssentialTrees(
          comm, space, _partition->positions(), _partition->ownedRuns(), _partition->cube(),
          _options.leaf_size, _options.theta,
          kfmm::detail::softeningSeparation<kfmm::tuning::Tuning<ExecutionSpace>, Real>(_options),
          farfield::sparseLeaves(_options.order, _options.leaf_size),
          detail::region_leaves * _options.leaf_size, _options.time_stages, trees_memory);
      space.fence();
      _stats.essential_trees_seconds = trees_timer.seconds();
      _stats.essential_tree_steps = _trees.steps;
      // The order and theta the tolerance chose, given as such (Options' rule: a tolerance
      // comes with the default order and theta).
      Options chosen = _options;
      chosen.tolerance = 0;
      {
        kfmm::detail::ScopedRegion build_region("kfmm::Fmm::build");
        _solver = std::make_unique<solver::State<Real, MemorySpace>>();
        if (solver_memory)
          _solver->memory = solver_memory;
        solver::adoptTrees(space, *_solver, where, _trees.essential, _trees.own, chosen);
        // The far field runs on the caller's instance (evaluateChecked): the M2L matrices are
        // made there too.
        solver::buildOnTrees(space, kfmm::detail::SideInstance<ExecutionSpace>(space, false),
                             *_solver, where, _trees.entries, &_partition->positions(), false);
      }
      _stats.solver = solver::currentStats(*_solver);
      _stats.ghosts = static_cast<std::size_t>(_trees.plan.ghosts);
      _stats.pruned_cells = _trees.plan.pruned_targets.extent(0);
      _stats.build_communication_seconds = _trees.exchange_seconds;
    }
    space.fence();
    _stats.build_seconds = timer.seconds();
  }

  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void evaluateChecked(ExecutionSpace const &space, Charges const &charges,
                       Potential const &potential, Field const &field)
  {
    using Policy = Kokkos::RangePolicy<ExecutionSpace>;
    std::string const where = "kfmm::distributed::DistributedFmm::evaluate";
    kfmm::detail::ScopedRegion region(where);
    Kokkos::Timer timer;
    MPI_Comm const comm = _comm.get();
    std::size_t const n = size();
    detail::requireOnAllRanks(comm, where, [&] {
      kfmm::detail::requireExtent(where, "charges", charges.extent(0), n);
      kfmm::detail::requireExtent(where, "potential", potential.extent(0), n);
      kfmm::detail::requireExtent(where, "field", field.extent(0), n);
      kfmm::detail::requireExtent(where, "field (columns)", field.extent(1), 3);
      kfmm::detail::requireFinite(space, where, "charges", charges);
    });
    _stats.evaluate_communication_seconds = 0;
    auto const communicate = [&](auto &&call) {
      space.fence();
      Kokkos::Timer mpi;
      call();
      _stats.evaluate_communication_seconds += mpi.seconds();
    };
    if (_trivial)
    {
      Kokkos::deep_copy(space, potential, 0);
      Kokkos::deep_copy(space, field, 0);
      return;
    }
    detail::ExchangePlan<MemorySpace> const &plan = _trees.plan;
    auto &state = *_solver;
    // The evaluation's own arrays come from the solver's workspace and go back to it at the
    // end, so that a time step's evaluation allocates and frees nothing (a cudaFree waits for
    // the whole device); the next rebuild keeps their blocks (detail/Workspace.hpp).
    kfmm::detail::Workspace<MemorySpace> &memory = *state.memory;
    auto &stages = state.stats.stage_seconds;
    stages = state.build_stages;
    state.stats.results_checked = false;
    auto const stage = [&](std::string const &name, auto &&work) {
      solver::runStage(space, state.options, name, stages, work);
    };

    // The essential tree's charges: the rank's, the ghosts', and zero for the pruned cells.
    std::int64_t const entries = static_cast<std::int64_t>(_trees.entries.extent(0));
    auto q = memory.template take<Kokkos::View<double *, MemorySpace>>(
        space, "kfmm::distributed::entry_charges", entries);
    Kokkos::View<double *, MemorySpace> sent_ghosts;
    int charge_exponent = 0;
    stage("exchange charges", [&] {
      Kokkos::deep_copy(space, q, 0.0);
      auto const own_q = Kokkos::subview(q, Kokkos::make_pair(std::int64_t(0), plan.own));
      communicate([&] { _partition->toOwners(space, charges, own_q); });
      double largest = 0;
      Kokkos::parallel_reduce("kfmm::distributed::largest_charge", Policy(space, 0, plan.own),
                              detail::LargestMagnitude<decltype(own_q)>{own_q},
                              Kokkos::Max<double>(largest));
      communicate([&] { MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, comm); });
      charge_exponent = kfmm::detail::chargeExponentOf(largest);
      sent_ghosts = memory.template take<Kokkos::View<double *, MemorySpace>>(
          space, "kfmm::distributed::ghost_charges", plan.ghost_sources.extent(0));
      Kokkos::parallel_for(
          "kfmm::distributed::gather_ghost_charges", Policy(space, 0, sent_ghosts.extent(0)),
          detail::Gather<decltype(sent_ghosts), decltype(own_q), decltype(plan.ghost_sources)>{
              sent_ghosts, own_q, plan.ghost_sources});
      communicate([&] {
        _exchange.start(comm, space, sent_ghosts.data(), plan.ghost_send, q.data() + plan.own,
                        plan.ghost_recv);
        _exchange.finish(space);
      });
    });

    if (state.size() > 0)
    {
      stage("charge unit", [&] { solver::setChargeUnit(space, state, charge_exponent); });
      solver::sortChargesStage(space, state, q, stages);
      solver::upwardStages(space, state, stages);
    }
    // The pruned cells' multipoles travel while the near field, which needs none of them, runs
    // (seed 002: communication overlapped with local work).
    int const width = 2 * static_cast<int>(state.multipoles.extent(1));
    int const sent_cells = static_cast<int>(plan.pruned_sources.extent(0));
    int const received_cells = static_cast<int>(plan.pruned_targets.extent(0));
    using Rows = Kokkos::View<Real **, Kokkos::LayoutRight, MemorySpace>;
    auto rows =
        memory.template take<Rows>(space, "kfmm::distributed::sent_multipoles", sent_cells, width);
    auto received = memory.template take<Rows>(space, "kfmm::distributed::received_multipoles",
                                               received_cells, width);
    stage("send multipoles", [&] {
      Kokkos::parallel_for("kfmm::distributed::pack_multipoles", Policy(space, 0, sent_cells),
                           detail::MoveMultipoles<Real, MemorySpace>{state.multipoles, rows,
                                                                     plan.pruned_sources, false});
      std::vector<std::int64_t> send(plan.pruned_send), recv(plan.pruned_recv);
      for (auto *counts : {&send, &recv})
        for (auto &c : *counts)
          c *= width;
      communicate([&] { _exchange.start(comm, space, rows.data(), send, received.data(), recv); });
    });
    if (plan.own > 0)
      solver::nearFieldStage(space, state);
    stage("receive multipoles", [&] {
      // No fence before the wait: the host waits in MPI, and so moves the messages along,
      // while the device computes the near field.
      _stats.evaluate_communication_seconds += _exchange.finish(space);
      Kokkos::parallel_for("kfmm::distributed::unpack_multipoles", Policy(space, 0, received_cells),
                           detail::MoveMultipoles<Real, MemorySpace>{state.multipoles, received,
                                                                     plan.pruned_targets, true});
    });
    // Every leaf of the essential tree now has its multipole: the inner cells' again.
    if (state.size() > 0)
      stage("M2M of all ranks", [&] {
        Kokkos::parallel_for("kfmm::distributed::clear_inner_multipoles",
                             Policy(space, 0, state.source_tree.numCells()),
                             detail::ClearInnerMultipoles<Real, MemorySpace>{
                                 state.multipoles, state.source_tree.child_count});
        solver::m2m(space, state);
      });

    auto own_phi = memory.template take<Kokkos::View<Real *, MemorySpace>>(
        space, "kfmm::distributed::own_potential", plan.own);
    auto own_field = memory.template take<Kokkos::View<Real *[3], MemorySpace>>(
        space, "kfmm::distributed::own_field", plan.own);
    if (plan.own > 0)
    {
      solver::farFieldTranslations(space, state);
      solver::farFieldToTargets(space, state);
      solver::returnResults(space, state, own_phi, own_field);
    }
    stage("return results", [&] {
      communicate([&] {
        _partition->toCallers(space, own_phi, potential);
        _partition->toCallers(space, own_field, field);
      });
    });
    // toCallers waited for the device: every kernel that read these arrays has finished.
    memory.give(q);
    memory.give(sent_ghosts);
    memory.give(rows);
    memory.give(received);
    memory.give(own_phi);
    memory.give(own_field);
    if (_options.check_results)
    {
      detail::requireOnAllRanks(comm, where, [&] {
        auto const bad = kfmm::detail::firstNonFinite(space, potential, field);
        kfmm::detail::require(
            bad < 0, where,
            "the potential or field of particle " + std::to_string(bad) +
                " is NaN or infinite: a result, or a pair's share of it, is beyond the range of " +
                (std::is_same<Real, float>::value ? "float; compute in double, or choose"
                                                  : "double; choose") +
                " units or charges that bring the results into range");
      });
      state.stats.results_checked = true;
    }
    _stats.solver = solver::currentStats(state);
    requireResolved(comm, where);
    space.fence();
    _stats.evaluate_seconds = timer.seconds();
  }

  /// Whether the precision resolves the particles, decided once for all ranks from the sum of
  /// their counts (each rank counts its own particles' pairs, Fmm in prebuilt mode): every
  /// rank's Stats::precision_limited is that decision, and unless Options::allow_unresolved
  /// every rank throws kfmm::PrecisionError when it is (collective).
  void requireResolved(MPI_Comm comm, std::string const &where)
  {
    std::uint64_t counts[2] = {_stats.solver.unresolved_pairs, _stats.particles};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UINT64_T, MPI_SUM, comm);
    _stats.solver.precision_limited = kfmm::detail::precisionLimited(counts[0], counts[1]);
    if (!_stats.solver.precision_limited || _options.allow_unresolved)
      return;
    throw kfmm::detail::unresolvedError<Real>(where, counts[0], counts[1]);
  }

  using Partition = MortonPartition<double, MemorySpace>;

  detail::Communicator _comm;
  Options _options;
  std::unique_ptr<Partition> _partition;
  bool _trivial = true;
  detail::EssentialTrees<MemorySpace> _trees;
  /// The solver's state on this rank's trees (null when there is nothing to compute).
  std::unique_ptr<solver::State<Real, MemorySpace>> _solver;
  /// The evaluations' exchanges (ghost charges, multipoles).
  detail::StagedExchange<MemorySpace> _exchange;
  RankStats _stats;
};

/// One-shot form: builds a DistributedFmm<Real, ExecutionSpace::memory_space> of `positions`
/// and evaluates `charges` (Real: the precision of `potential`). Collective.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
RankStats evaluate(MPI_Comm comm, ExecutionSpace const &space, Positions const &positions,
                   Charges const &charges, Potential const &potential, Field const &field,
                   Options const &options = {})
{
  using Real = std::remove_const_t<typename Potential::value_type>;
  DistributedFmm<Real, typename ExecutionSpace::memory_space> solver(comm, space, positions,
                                                                     options);
  solver.evaluate(space, charges, potential, field);
  return solver.stats();
}

} // namespace kfmm::distributed

#else
#error                                                                                             \
    "kfmm/distributed needs a kfmm built with KFMM_ENABLE_MPI=ON, used through the kfmm::mpi target"
#endif
#endif
