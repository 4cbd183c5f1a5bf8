// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DISTRIBUTED_MORTON_PARTITION_HPP
#define KFMM_DISTRIBUTED_MORTON_PARTITION_HPP

// The particles of all ranks divided into contiguous ranges of Morton keys, one range per
// rank in rank order, each holding about the same number of particles or the same weight
// (seed 002: Morton-order
// partition, the domain decomposition of its distributed kernel-independent FMM). Ranks own
// whole octree cells but for the few cells a range boundary cuts, so a rank's tree and lists
// are mostly its own.
//
// Steps, all collective over kfmm's duplicate of the caller's communicator:
// 1. the global bounding cube: every rank's box, united by MPI_Allreduce (min, max);
// 2. each rank's keys in that cube (tree::computeMortonKeys), sorted with the particles'
//    indices by kfmm's radix sort;
// 3. splitters by sampling: each rank offers `samples` keys evenly spaced in its sorted keys,
//    each standing for its share of the rank's particles and weighing their work (their
//    count, or the sum of the caller's per-particle weights, e.g. the interactions each
//    particle had in the previous evaluation); all ranks gather them (allGatherv), order
//    them, and cut the cumulative weight into equal parts. Every rank computes the same
//    splitters from the same samples;
// 3b. optionally (PartitionOptions::leaf_size), splitters moved to boundaries between the
//    leaves of the octree of all ranks' particles, so that every leaf has one owner: the
//    distributed solver's ranks then hold whole leaves (distributed/LocalEssentialTree.hpp);
// 4. each rank's sorted particles, cut at the splitters, go to their owners
//    (detail/StagedExchange.hpp: those that stay are copied on the device, the others travel
//    device to device between the GPUs of a node, through host buffers the process keeps, or
//    in place with a GPU-aware MPI).
// Values per particle then travel the same way (toOwners), and results back, in reverse
// (toCallers), into the caller's order.
//
// Time steps (repartition): the particles, moved, are partitioned again from the previous
// splitters. A rank may pass other particles than before (a simulation that took over the
// particles it was given, toOwners, passes those; particles may also have come or gone). Steps 1, 2
// and 3b run again on the new positions (a new cube, keys and sort, the splitters moved to the new
// tree's leaf boundaries); step 3's sampling is skipped when the previous splitters still balance
// the counts (every rank's within a fraction, 10 % by default, of the mean: one MPI_Allreduce of
// the per-rank counts), as a simulation's slowly moving particles keep most ranges balanced for
// many steps (Lashuk et al. 2009, seed 002, repartition only when the load has drifted). The
// splitters kept are the sampled ones, before step 3b, so that the leaf alignment does not walk
// them down step after step. The communicator, the exchange's buffers and the partition's
// workspace (the order, the owned positions, the keys, the sort's and the transfers' arrays:
// blocks of device memory it keeps, detail/Workspace.hpp) are the previous ones. When each rank
// passes the particles it owned (in the order toOwners gave), only those that crossed a range
// boundary since travel through MPI: sentCount() counts them.
//
// Particles with equal keys (coincident particles, or closer than the key grid resolves) are
// never split between ranks, so one rank can own more than its share when many particles share
// a key. Balance is as good as the samples resolve the weight: a sample stands for about
// N_local / samples particles.

#include <kfmm/Config.hpp>

#if defined(KFMM_ENABLE_MPI)

#include <kfmm/Exception.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/distributed/detail/Collectives.hpp>
#include <kfmm/distributed/detail/StagedExchange.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace kfmm::distributed
{
namespace detail
{

/// One sampled key, the number of particles it stands for, and their weight.
struct KeySample
{
  tree::MortonKey key;
  double particles;
  double weight;
};

/// weights(j) = the sum of `particle_weights` over the j-th of `count` equal parts of the
/// sorted particles (the part sample j stands for): one team per part.
template <class ExecutionSpace, class Weights, class Order, class Sums>
struct SampleWeights
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Weights particle_weights;
  Order order;
  Sums weights;
  std::int64_t n;
  std::int64_t count;

  KOKKOS_INLINE_FUNCTION void operator()(TeamMember const &team) const
  {
    std::int64_t const j = team.league_rank();
    std::int64_t const begin = j * n / count;
    std::int64_t const end = (j + 1) * n / count;
    double sum = 0;
    Kokkos::parallel_reduce(
        Kokkos::TeamThreadRange(team, begin, end),
        [&](std::int64_t i, double &partial) {
          partial += static_cast<double>(particle_weights(order(i)));
        },
        sum);
    Kokkos::single(Kokkos::PerTeam(team), [&] { weights(j) = sum; });
  }
};

/// Whether weights(i) is negative (NaN and infinities are found by requireFinite).
template <class Weights>
struct NegativeWeight
{
  Weights weights;

  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t i) const { return weights(i) < 0; }
};

/// samples(j) = sorted_keys at the middle of the j-th of `count` equal parts.
template <class Keys, class Samples>
struct SampleKeys
{
  Keys sorted_keys;
  Samples samples;
  std::int64_t n;
  std::int64_t count;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t j) const
  {
    samples(j) = sorted_keys((2 * j + 1) * n / (2 * count));
  }
};

/// The first index of sorted_keys whose key is at least `key`.
template <class Keys>
KOKKOS_INLINE_FUNCTION std::int64_t lowerBound(Keys const &sorted_keys, tree::MortonKey key)
{
  std::int64_t lo = 0, hi = static_cast<std::int64_t>(sorted_keys.extent(0));
  while (lo < hi)
  {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (sorted_keys(mid) < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// bounds(r) = the first index of sorted_keys whose key is at least splitters(r).
template <class Keys, class Splitters, class Bounds>
struct LowerBounds
{
  Keys sorted_keys;
  Splitters splitters;
  Bounds bounds;

  KOKKOS_INLINE_FUNCTION void operator()(int r) const
  {
    bounds(r) = lowerBound(sorted_keys, splitters(r));
  }
};

/// Levels whose cells a splitter can cut: 0 to max_level - 1 (a cell of the deepest level
/// holds one key).
constexpr int cut_levels = tree::max_level;

/// For query q = (r - 1) cut_levels + l: how many of this rank's sorted keys lie in the cell
/// of level l that holds splitters(r), before the splitter (counts(2 q)) and from it on
/// (counts(2 q + 1)).
template <class Keys, class Splitters, class Counts>
struct CutCounts
{
  Keys sorted_keys;
  Splitters splitters;
  Counts counts;

  KOKKOS_INLINE_FUNCTION void operator()(int q) const
  {
    tree::MortonKey const s = splitters(q / cut_levels + 1);
    int const shift = 3 * (tree::max_level - q % cut_levels);
    std::int64_t below = 0, above = 0;
    if (s < (tree::MortonKey(1) << (3 * tree::max_level))) // not the end marker
    {
      tree::MortonKey const first = (s >> shift) << shift;
      std::int64_t const at = lowerBound(sorted_keys, s);
      below = at - lowerBound(sorted_keys, first);
      above = lowerBound(sorted_keys, first + (tree::MortonKey(1) << shift)) - at;
    }
    counts(2 * q) = below;
    counts(2 * q + 1) = above;
  }
};

/// Element (i, c) of a View of rank 1 (c is 0) or 2.
template <class View>
KOKKOS_INLINE_FUNCTION decltype(auto) element(View const &values, std::int64_t i, std::size_t c)
{
  if constexpr (View::rank == 1)
    return values(i);
  else
    return values(i, c);
}

/// Row j moved: to(t, c) = from(f, c) for every column, where f and t are order(j) or j as
/// `from_by_order` and `to_by_order` say. Views of rank 1 (one column) or 2.
template <class From, class To, class Order>
struct MoveRows
{
  From from;
  To to;
  Order order;
  bool from_by_order;
  bool to_by_order;
  std::size_t columns;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t j) const
  {
    std::int64_t const f = from_by_order ? static_cast<std::int64_t>(order(j)) : j;
    std::int64_t const t = to_by_order ? static_cast<std::int64_t>(order(j)) : j;
    for (std::size_t c = 0; c < columns; ++c)
      element(to, t, c) = element(from, f, c);
  }
};

/// Columns of a View of per-particle values: 1 for rank 1, extent(1) for rank 2.
template <class View>
std::size_t columnsOf(View const &values)
{
  static_assert(View::rank == 1 || View::rank == 2,
                "kfmm::distributed::MortonPartition: per-particle values must be a View of "
                "rank 1 (N) or 2 (N x C)");
  return View::rank == 1 ? 1 : values.extent(1);
}

} // namespace detail

/// How MortonPartition chooses its ranges.
struct PartitionOptions
{
  /// Keys each rank offers to choose the splitters (more: better balance, a larger gather);
  /// 1 to 2^20.
  int samples = 1024;
  /// 0, or the leaf size of an octree (tree::buildOctree's split rule) of every rank's
  /// particles in the partition's cube: then no range boundary cuts one of its leaves, each
  /// splitter moved down to the start of the leaf it cut (step 3b of the file comment).
  int leaf_size = 0;
};

/// The particles of all ranks in `comm`, divided into contiguous Morton-key ranges, one per
/// rank (see the top of this file). Construction and the transfers are collective.
template <class Real, class MemorySpace>
class MortonPartition
{
public:
  using Positions = Kokkos::View<Real *[3], MemorySpace>;

  /// Partitions every rank's `positions` (N_local x 3, any N_local including 0) into ranges
  /// of about equal particle counts. Collective; when any rank's positions hold a NaN or an
  /// infinity, every rank throws kfmm::Exception.
  template <class ExecutionSpace, class CallerPositions>
  MortonPartition(MPI_Comm comm, ExecutionSpace const &space, CallerPositions const &positions,
                  PartitionOptions const &options = {})
      : _comm(comm)
  {
    partition(space, positions, static_cast<Kokkos::View<double *, MemorySpace> *>(nullptr),
              options);
  }

  /// As above, into ranges of about equal total weight: `weights` (N_local, non-negative and
  /// finite, any arithmetic type) is each particle's expected work. Where every rank's
  /// weights are all zero, the ranges balance counts. Bad weights on any rank (a negative,
  /// NaN or infinite one, or N_local entries not matching) make every rank throw.
  template <class ExecutionSpace, class CallerPositions, class Weights,
            std::enable_if_t<Kokkos::is_view<Weights>::value, int> = 0>
  MortonPartition(MPI_Comm comm, ExecutionSpace const &space, CallerPositions const &positions,
                  Weights const &weights, PartitionOptions const &options = {})
      : _comm(comm)
  {
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::MortonPartition", "weights", Weights, 1, "N",
                             ExecutionSpace);
    partition(space, positions, &weights, options);
  }

  /// Partitions the particles again after they moved: `positions` (N_local x 3, the caller's
  /// order; N_local may differ from the last partition's, as when the caller took over the
  /// particles it owned, toOwners, or particles came or went). Keeps the previous
  /// splitters when they still give every rank a count within `imbalance` (a fraction) of the
  /// mean count; otherwise samples new splitters, balancing counts (a partition built with
  /// weights is then balanced by counts). Returns whether the previous splitters were kept
  /// (the same on every rank). Collective; when any rank's positions are not N_local x 3 or
  /// hold a NaN or an infinity, every rank throws kfmm::Exception with one message and the
  /// partition stays as it was.
  template <class ExecutionSpace, class CallerPositions>
  bool repartition(ExecutionSpace const &space, CallerPositions const &positions,
                   double imbalance = 0.1)
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "kfmm::distributed::MortonPartition::repartition: the first argument must be "
                  "a Kokkos execution space");
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::MortonPartition::repartition", "positions",
                             CallerPositions, 2, "N x 3", ExecutionSpace);
    std::string const where = "kfmm::distributed::MortonPartition::repartition";
    kfmm::detail::ScopedRegion region(where);
    MPI_Comm const own = _comm.get();
    detail::requireOnAllRanks(own, where, [&] {
      kfmm::detail::require(imbalance >= 0, where, "argument 'imbalance' must be >= 0");
      requireShape(where, positions);
      kfmm::detail::requireFinite(space, where, "positions", positions);
    });
    auto keys = sortedKeys(space, positions);
    // The previous (sampled) splitters on the new keys: every rank's count, summed over the
    // senders.
    _splitters = _sampled_splitters;
    if (_leaf_size > 0)
      alignSplitters(space, keys, _leaf_size);
    _send_counts = sendCounts(space, keys);
    std::vector<std::int64_t> owned = _send_counts;
    MPI_Allreduce(MPI_IN_PLACE, owned.data(), _ranks, MPI_INT64_T, MPI_SUM, own);
    std::int64_t total = 0;
    for (auto const c : owned)
      total += c;
    double const mean = static_cast<double>(total) / _ranks;
    bool balanced = true;
    for (auto const c : owned)
      balanced = balanced && std::abs(static_cast<double>(c) - mean) <= imbalance * mean;
    if (!balanced)
    {
      chooseSplitters(space, keys, static_cast<Kokkos::View<double *, MemorySpace> *>(nullptr),
                      _samples);
      if (_leaf_size > 0)
        alignSplitters(space, keys, _leaf_size);
      _send_counts = sendCounts(space, keys);
    }
    _memory->give(keys);
    std::size_t const previous_owned = ownedCount();
    _recv_counts = detail::receiveCounts(own, _send_counts);
    if (ownedCount() != previous_owned)
    {
      _memory->give(_owned); // first: its block may serve the new count
      _memory->take(space, _owned, "kfmm::distributed::owned_positions", ownedCount());
    }
    toOwners(space, positions, _owned);
    return balanced;
  }

  /// The cube around every rank's particles: the same on every rank.
  tree::Cube const &cube() const { return _cube; }
  /// The particles this rank owns, in the order of the ranks they came from (each rank's in
  /// its key order).
  Positions const &positions() const { return _owned; }
  /// The owned particles' runs: how many came from each rank. positions() holds them in
  /// rank order, each run in key order (in cube()).
  std::vector<std::int64_t> const &ownedRuns() const { return _recv_counts; }
  /// Number of particles this rank owns.
  std::size_t ownedCount() const
  {
    std::int64_t total = 0;
    for (auto c : _recv_counts)
      total += c;
    return static_cast<std::size_t>(total);
  }
  /// Number of the caller's particles on this rank.
  std::size_t callerCount() const { return _order.extent(0); }
  /// Number of the caller's particles on this rank that other ranks own: those that travel
  /// through MPI.
  std::size_t sentCount() const
  {
    int rank = 0;
    MPI_Comm_rank(_comm.get(), &rank);
    std::int64_t sent = 0;
    for (std::size_t r = 0; r < _send_counts.size(); ++r)
      if (static_cast<int>(r) != rank)
        sent += _send_counts[r];
    return static_cast<std::size_t>(sent);
  }
  /// Rank r owns the keys in [splitters()[r], splitters()[r + 1]); ranks + 1 entries, the last
  /// past every key.
  std::vector<tree::MortonKey> const &splitters() const { return _splitters; }

  /// Per-particle values given in the caller's order (`in`: callerCount() rows) to the rows
  /// of the owned particles (`out`: ownedCount() rows, as many columns). Collective.
  template <class ExecutionSpace, class In, class Out>
  void toOwners(ExecutionSpace const &space, In const &in, Out const &out) const
  {
    transfer(space, in, out, _send_counts, _recv_counts, true);
  }

  /// Per-particle values of the owned particles (`in`: ownedCount() rows) back to the
  /// caller's particles, in the caller's order (`out`: callerCount() rows). Collective.
  template <class ExecutionSpace, class In, class Out>
  void toCallers(ExecutionSpace const &space, In const &in, Out const &out) const
  {
    transfer(space, in, out, _recv_counts, _send_counts, false);
  }

private:
  /// Steps 1 to 4 of the file comment; `weights` null: balance counts.
  template <class ExecutionSpace, class CallerPositions, class Weights>
  void partition(ExecutionSpace const &space, CallerPositions const &positions,
                 Weights const *weights, PartitionOptions const &options)
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "kfmm::distributed::MortonPartition: the second argument must be a Kokkos "
                  "execution space");
    KFMM_STATIC_REQUIRE_VIEW("kfmm::distributed::MortonPartition", "positions", CallerPositions, 2,
                             "N x 3", ExecutionSpace);
    std::string const where = "kfmm::distributed::MortonPartition";
    kfmm::detail::ScopedRegion region(where);
    MPI_Comm const own = _comm.get();
    MPI_Comm_size(own, &_ranks);
    detail::requireOnAllRanks(own, where, [&] {
      requireShape(where, positions);
      // At most 2^20, so that the sample positions j n / samples fit 64 bits.
      kfmm::detail::require(options.samples > 0 && options.samples <= (1 << 20), where,
                            "option 'samples' must be in [1, 2^20], got " +
                                std::to_string(options.samples));
      kfmm::detail::require(options.leaf_size >= 0, where,
                            "option 'leaf_size' must be >= 0, got " +
                                std::to_string(options.leaf_size));
      kfmm::detail::requireFinite(space, where, "positions", positions);
      detail::requireMpiReadsMemory<MemorySpace>(where);
      if (weights == nullptr)
        return;
      kfmm::detail::require(weights->extent(0) == positions.extent(0), where,
                            "argument 'weights' must have one entry per particle (" +
                                std::to_string(positions.extent(0)) + "), got " +
                                std::to_string(weights->extent(0)));
      kfmm::detail::requireFinite(space, where, "weights", *weights);
      std::int64_t const negative =
          kfmm::detail::firstIndexWhere(space, static_cast<std::int64_t>(weights->extent(0)),
                                        detail::NegativeWeight<Weights>{*weights});
      kfmm::detail::require(negative < 0, where,
                            "argument 'weights' holds a negative value at index " +
                                std::to_string(negative));
    });
    auto keys = sortedKeys(space, positions);
    _samples = options.samples;
    _leaf_size = options.leaf_size;
    chooseSplitters(space, keys, weights, options.samples);
    if (options.leaf_size > 0)
      alignSplitters(space, keys, options.leaf_size);
    _send_counts = sendCounts(space, keys);
    _memory->give(keys);
    _recv_counts = detail::receiveCounts(own, _send_counts);
    _memory->take(space, _owned, "kfmm::distributed::owned_positions", ownedCount());
    toOwners(space, positions, _owned);
  }

  /// Throws unless `positions` is N x 3 with N within the radix sort's range.
  template <class CallerPositions>
  static void requireShape(std::string const &where, CallerPositions const &positions)
  {
    kfmm::detail::require(positions.extent(1) == 3, where,
                          "argument 'positions' must be N x 3, got N x " +
                              std::to_string(positions.extent(1)));
    // The radix sort orders at most 2^32 - 1 particles per call.
    kfmm::detail::require(positions.extent(0) < (std::uint64_t(1) << 32), where,
                          "at most 2^32 - 1 particles per rank, got " +
                              std::to_string(positions.extent(0)));
  }

  /// Steps 1 and 2: the global cube, and the caller's keys in it, sorted, with _order the
  /// caller's index of each (its block kept while the count stays). The keys come from the
  /// partition's workspace: the caller gives them back.
  template <class ExecutionSpace, class CallerPositions>
  Kokkos::View<tree::MortonKey *, MemorySpace> sortedKeys(ExecutionSpace const &space,
                                                          CallerPositions const &positions)
  {
    _cube = globalCube(space, positions);
    std::size_t const n = positions.extent(0);
    Kokkos::View<tree::MortonKey *, MemorySpace> keys;
    _memory->take(space, keys, "kfmm::distributed::keys", n);
    if (_order.data() == nullptr || _order.extent(0) != n)
    {
      _memory->give(_order);
      _memory->take(space, _order, "kfmm::distributed::order", n);
    }
    tree::computeMortonKeys(space, _cube, positions, keys);
    kfmm::detail::streamFor("kfmm::distributed::identity", space, static_cast<std::int64_t>(n),
                            tree::detail::IdentityPermutation<MemorySpace>{_order});
    tree::detail::sortPairs(space, keys, _order, 3 * tree::max_level, *_memory);
    return keys;
  }

  /// Step 1: the union of every rank's bounding box (MPI_Allreduce), as a cube.
  template <class ExecutionSpace, class CallerPositions>
  tree::Cube globalCube(ExecutionSpace const &space, CallerPositions const &positions) const
  {
    tree::Box const box = tree::boundingBox(space, positions);
    // One reduction: the minimum of lo and of -hi; an empty rank offers +inf for both.
    double bounds[6];
    for (int d = 0; d < 3; ++d)
    {
      bounds[d] = box.empty ? std::numeric_limits<double>::infinity() : box.lo[d];
      bounds[3 + d] = box.empty ? std::numeric_limits<double>::infinity() : -box.hi[d];
    }
    MPI_Allreduce(MPI_IN_PLACE, bounds, 6, MPI_DOUBLE, MPI_MIN, _comm.get());
    tree::Box global{};
    global.empty = bounds[0] > -bounds[3];
    for (int d = 0; d < 3; ++d)
    {
      global.lo[d] = bounds[d];
      global.hi[d] = -bounds[3 + d];
    }
    return tree::cubeAround(global);
  }

  /// Step 3: splitters from every rank's samples of its sorted keys, weighted by `weights`
  /// (null: by particle counts).
  template <class ExecutionSpace, class Keys, class Weights>
  void chooseSplitters(ExecutionSpace const &space, Keys const &sorted_keys, Weights const *weights,
                       int samples)
  {
    std::int64_t const n = static_cast<std::int64_t>(sorted_keys.extent(0));
    std::int64_t const count = n < samples ? n : samples;
    Kokkos::View<tree::MortonKey *, MemorySpace> picked(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::samples"),
        count);
    Kokkos::parallel_for("kfmm::distributed::sample_keys",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
                         detail::SampleKeys<Keys, decltype(picked)>{sorted_keys, picked, n, count});
    Kokkos::View<double *, MemorySpace> sums(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::sample_weights"),
        weights ? count : 0);
    if (weights)
      Kokkos::parallel_for("kfmm::distributed::sample_weights",
                           Kokkos::TeamPolicy<ExecutionSpace>(space, count, Kokkos::AUTO),
                           detail::SampleWeights<ExecutionSpace, Weights, Order, decltype(sums)>{
                               *weights, _order, sums, n, count});
    auto const picked_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, picked);
    auto const sums_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sums);
    std::vector<detail::KeySample> mine(static_cast<std::size_t>(count));
    for (std::int64_t j = 0; j < count; ++j)
    {
      // Part j holds (j + 1) n / count - j n / count particles.
      double const particles = static_cast<double>((j + 1) * n / count - j * n / count);
      mine[j] = {picked_host(j), particles, weights ? sums_host(j) : particles};
    }
    std::vector<detail::KeySample> all = detail::allGatherv(_comm.get(), mine);
    std::stable_sort(all.begin(), all.end(),
                     [](auto const &a, auto const &b) { return a.key < b.key; });
    double total = 0;
    for (auto const &s : all)
      total += s.weight;
    if (total == 0) // no work anywhere: balance counts
      for (auto &s : all)
      {
        s.weight = s.particles;
        total += s.weight;
      }
    // Rank r starts at the first sample by which r / ranks of the weight lies before it.
    _splitters.assign(static_cast<std::size_t>(_ranks) + 1, 0);
    _splitters[_ranks] = std::numeric_limits<tree::MortonKey>::max();
    double before = 0;
    std::size_t s = 0;
    for (int r = 1; r < _ranks; ++r)
    {
      double const share = total * r / _ranks;
      while (s < all.size() && before + 0.5 * all[s].weight < share)
        before += all[s++].weight;
      _splitters[r] = s < all.size() ? all[s].key : _splitters[_ranks];
    }
    _sampled_splitters = _splitters;
  }

  /// Step 3b: each splitter that cuts a leaf of the octree of all ranks' particles moves down
  /// to the start of that leaf. A splitter s cuts the cell of level l that holds it when the
  /// cell has particles on both sides of s; the tree splits it when it holds more than
  /// leaf_size particles. The shallowest cut cell that does not split is the leaf s cuts (its
  /// ancestors, which s also cuts, hold more particles and split), and from its first key no
  /// cell with particles on both sides remains cut. Counts on both sides of every splitter in
  /// every level's cell: one MPI_Allreduce. Splitters stay in order (a running maximum: a
  /// splitter moved below the one before it takes that one's place, and its range is empty).
  template <class ExecutionSpace, class Keys>
  void alignSplitters(ExecutionSpace const &space, Keys const &sorted_keys, int leaf_size)
  {
    int const queries = (_ranks - 1) * detail::cut_levels;
    if (queries == 0)
      return;
    Kokkos::View<tree::MortonKey *, MemorySpace> splitters(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::splitters"),
        _ranks + 1);
    Kokkos::View<tree::MortonKey const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> const
        splitters_host(_splitters.data(), _splitters.size());
    Kokkos::deep_copy(space, splitters, splitters_host);
    Kokkos::View<std::int64_t *, MemorySpace> counts(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::cut_counts"),
        2 * queries);
    Kokkos::parallel_for("kfmm::distributed::cut_counts",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, queries),
                         detail::CutCounts<Keys, decltype(splitters), decltype(counts)>{
                             sorted_keys, splitters, counts});
    auto const counts_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
    MPI_Allreduce(MPI_IN_PLACE, counts_host.data(), 2 * queries, MPI_INT64_T, MPI_SUM, _comm.get());
    for (int r = 1; r < _ranks; ++r)
    {
      for (int l = 0; l < detail::cut_levels; ++l)
      {
        int const q = (r - 1) * detail::cut_levels + l;
        std::int64_t const below = counts_host(2 * q);
        std::int64_t const above = counts_host(2 * q + 1);
        if (below > 0 && above > 0 && below + above <= leaf_size)
        {
          int const shift = 3 * (tree::max_level - l);
          _splitters[r] = (_splitters[r] >> shift) << shift;
          break;
        }
      }
      _splitters[r] = std::max(_splitters[r], _splitters[r - 1]);
    }
  }

  /// Step 4's counts: how many of this rank's sorted particles each rank owns.
  template <class ExecutionSpace, class Keys>
  std::vector<std::int64_t> sendCounts(ExecutionSpace const &space, Keys const &sorted_keys) const
  {
    Kokkos::View<tree::MortonKey *, MemorySpace> splitters(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::splitters"),
        _ranks + 1);
    Kokkos::View<tree::MortonKey const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> const
        splitters_host(_splitters.data(), _splitters.size());
    Kokkos::deep_copy(space, splitters, splitters_host);
    Kokkos::View<std::int64_t *, MemorySpace> bounds(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::distributed::bounds"),
        _ranks);
    Kokkos::parallel_for("kfmm::distributed::lower_bounds",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, _ranks),
                         detail::LowerBounds<Keys, decltype(splitters), decltype(bounds)>{
                             sorted_keys, splitters, bounds});
    auto const bounds_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, bounds);
    std::vector<std::int64_t> counts(static_cast<std::size_t>(_ranks));
    std::int64_t const n = static_cast<std::int64_t>(sorted_keys.extent(0));
    for (int r = 0; r < _ranks; ++r)
      counts[r] = (r + 1 < _ranks ? bounds_host(r + 1) : n) - bounds_host(r);
    return counts;
  }

  /// Moves rows from `in` to `out` (detail/StagedExchange.hpp): `send` and `recv` count them per
  /// rank. From the callers, rows are packed in key order (_order) and arrive in the owned
  /// order; to the callers, they leave in the owned order and are put back by _order.
  template <class ExecutionSpace, class In, class Out>
  void transfer(ExecutionSpace const &space, In const &in, Out const &out,
                std::vector<std::int64_t> const &send, std::vector<std::int64_t> const &recv,
                bool from_callers) const
  {
    static_assert(kfmm::detail::isAccessibleFrom<ExecutionSpace, In>() &&
                      kfmm::detail::isAccessibleFrom<ExecutionSpace, Out>() &&
                      !std::is_const<typename Out::value_type>::value,
                  "kfmm::distributed::MortonPartition::toOwners and toCallers: 'in' and 'out' "
                  "must be Views the execution space can access, 'out' of non-const values");
    std::string const where = from_callers ? "kfmm::distributed::MortonPartition::toOwners"
                                           : "kfmm::distributed::MortonPartition::toCallers";
    kfmm::detail::ScopedRegion region(where);
    std::size_t const columns = detail::columnsOf(in);
    std::size_t const in_rows = from_callers ? callerCount() : ownedCount();
    std::size_t const out_rows = from_callers ? ownedCount() : callerCount();
    // Shapes are each rank's own business, but a rank that threw alone would leave the others
    // waiting in the exchange: all ranks learn of it.
    detail::requireOnAllRanks(_comm.get(), where, [&] {
      kfmm::detail::require(
          in.extent(0) == in_rows && out.extent(0) == out_rows && detail::columnsOf(out) == columns,
          where,
          "expected " + std::to_string(in_rows) + " rows in and " + std::to_string(out_rows) +
              " out, with as many columns; got " + std::to_string(in.extent(0)) + " x " +
              std::to_string(columns) + " and " + std::to_string(out.extent(0)) + " x " +
              std::to_string(detail::columnsOf(out)));
    });
    using Value = typename Out::non_const_value_type;
    // Each rank sizes its messages by its own rows: all ranks must move rows of one size.
    long long const row_bytes = static_cast<long long>(columns * sizeof(Value));
    long long extremes[2] = {row_bytes, -row_bytes};
    MPI_Allreduce(MPI_IN_PLACE, extremes, 2, MPI_LONG_LONG, MPI_MIN, _comm.get());
    if (extremes[0] != -extremes[1])
      throw kfmm::Exception(where + ": the ranks' values differ in columns or type (rows of " +
                            std::to_string(extremes[0]) + " to " + std::to_string(-extremes[1]) +
                            " bytes)");
    using Rows = Kokkos::View<Value **, Kokkos::LayoutRight, MemorySpace>;
    Rows sent, received;
    _memory->take(space, sent, "kfmm::distributed::sent", in_rows, columns);
    _memory->take(space, received, "kfmm::distributed::received", out_rows, columns);
    Kokkos::parallel_for(
        "kfmm::distributed::pack", Kokkos::RangePolicy<ExecutionSpace>(space, 0, in_rows),
        detail::MoveRows<In, Rows, Order>{in, sent, _order, from_callers, false, columns});
    std::vector<std::int64_t> send_values(send.size()), recv_values(recv.size());
    for (std::size_t r = 0; r < send.size(); ++r)
    {
      send_values[r] = send[r] * static_cast<std::int64_t>(columns);
      recv_values[r] = recv[r] * static_cast<std::int64_t>(columns);
    }
    _exchange.start(_comm.get(), space, sent.data(), send_values, received.data(), recv_values);
    _exchange.finish(space);
    Kokkos::parallel_for(
        "kfmm::distributed::unpack", Kokkos::RangePolicy<ExecutionSpace>(space, 0, out_rows),
        detail::MoveRows<Rows, Out, Order>{received, out, _order, false, !from_callers, columns});
    // The buffers' blocks serve the next transfer, which may run on another instance.
    space.fence();
    _memory->give(sent);
    _memory->give(received);
  }

  detail::Communicator _comm;
  int _ranks = 1;
  tree::Cube _cube{};
  std::vector<tree::MortonKey> _splitters;
  /// The splitters step 3 chose, before step 3b: what repartition starts from.
  std::vector<tree::MortonKey> _sampled_splitters;
  int _samples = 1024; ///< PartitionOptions::samples of the construction
  int _leaf_size = 0;  ///< PartitionOptions::leaf_size of the construction
  using Order = Kokkos::View<std::uint32_t *, MemorySpace>;
  Order _order;                           ///< caller index of each sorted particle
  std::vector<std::int64_t> _send_counts; ///< of the caller's particles, per rank
  std::vector<std::int64_t> _recv_counts; ///< of the owned particles, per rank
  Positions _owned;
  /// The arrays above (the order, the owned positions) and each call's transient ones (keys,
  /// the sort's buffers, the transfers' rows), from blocks the partition keeps between calls:
  /// an allocation and its release on CUDA each wait for the device, and a time step makes
  /// a dozen of them (detail/Workspace.hpp).
  std::shared_ptr<kfmm::detail::Workspace<MemorySpace>> _memory =
      kfmm::detail::WorkspacePool<MemorySpace>::shared().lease();
  /// The transfers' exchange.
  mutable detail::StagedExchange<MemorySpace> _exchange;
};

} // namespace kfmm::distributed

#else
#error                                                                                             \
    "kfmm/distributed needs a kfmm built with KFMM_ENABLE_MPI=ON, used through the kfmm::mpi target"
#endif
#endif
