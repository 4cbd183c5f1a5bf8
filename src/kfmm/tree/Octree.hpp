// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TREE_OCTREE_HPP
#define KFMM_TREE_OCTREE_HPP

// Adaptive octree built level by level on the device from sorted Morton keys.
//
// Build (every stage a Kokkos kernel; only a few scalars come back to the host: the cube,
// the first bad index of the input check, and the levels' sizes, each level's cells and the
// number of them that split, which give the leaf count: read per level, per batch of levels,
// or all at once after a count from the sorted keys; buildCells):
//   1. cube and keys: tree::boundingCube, tree::computeMortonKeys (Morton.hpp convention);
//   2. sort (key, particle index) pairs with tree::sortPairs, our stable LSD radix sort
//      (the solver's build sorts only the bits of the levels its tree can reach:
//      KeyOrder::cell_levels, below);
//   3. cells level by level from the root: a cell of level l with more than `leaf_size`
//      particles and l < 21 splits; its children's particle ranges are found by binary search
//      on the octant digit (key >> 3 (20 - l)) & 7 inside the parent's sorted range, empty
//      octants make no cell, and an exclusive scan over the level places each parent's
//      children contiguously in the next level (the level-by-level construction of Gumerov
//      & Duraiswami 2008 and of the hashed octree of Warren & Salmon 1993 that Lashuk et al.
//      2009 build on; done with sort + search + scan).
//   4. the list of leaves in particle order (each cell's leaf count bottom up, then each
//      leaf placed after the subtrees before it), and radii bottom up (leaves from their
//      particles, then one launch per level).
//
// Layout (structure of arrays, one entry per cell; everything in the tree's memory space
// except the host copies noted):
//   - Cells are numbered level by level: the root is cell 0, level l holds the cells
//     [level_offsets[l], level_offsets[l + 1]) (host vector). Inside a level, cells are in
//     Morton order, so their particle ranges increase and the children of one parent are
//     contiguous: [first_child, first_child + child_count). Hence each step of the FMM's
//     upward pass (P2M at the leaves, then M2M for level l from its children at l + 1, deepest
//     level first) and of the downward pass (L2L top down) is one parallel launch over one
//     contiguous range of cells, and a team per cell reads its children contiguously.
//   - A cell owns the particles [particle_begin, particle_end) of the sorted order; the sorted
//     position i is original particle permutation(i), and keys(i) is its Morton key. Particles
//     are permuted once into this order so that P2P and P2M read each cell contiguously.
//   - `leaves` lists the leaf cells (child_count == 0) in particle order: leaf j's range
//     starts where leaf j - 1's ends. The near-field lists (InteractionLists.hpp) are rows
//     over this list, one team per target leaf.
//   - cell_keys holds each cell's Morton prefix (key >> 3 (21 - level)): with the cube, it is
//     the cell's global name, what a rank exchanges when it builds a local essential tree
//     (Lashuk et al. 2009, section III) and what locates a cell's neighbours.
//
// Expansion centre and radius: the centre is the cell's geometric centre (Morton.hpp's
// cellCentre), so that every M2M/L2L shift between a level and the next is one of eight
// fixed vectors and M2L pairs can be grouped by relative offset (Fortin & Lamotte 2013).
// The radius is an upper bound on the distance from that centre to the cell's particles:
// exact (the largest particle distance) for leaves, and max over children of
// (|c - c_child| + R_child) for inner cells. It is never more than the geometric
// half-diagonal, and on surface distributions (sphere, ellipsoid, cylinder; Lashuk et al.
// 2009, Fortin & Lamotte 2013) it is much smaller for the many cells the surface only
// clips. The truncation error of a multipole or local expansion is bounded by powers of
// (R_s / d) and (R_t / d), with R the radius of a ball about the expansion centre that holds
// the particles (Greengard & Rokhlin 1987; Salmon & Warren 1994 for the same data-dependent
// b_max in treecodes), so the acceptance test (R_t + R_s) < theta |c_t - c_s| bounds the
// error uniformly while accepting far more pairs on surfaces than the half-diagonal would.

#include <kfmm/detail/CoherentLoad.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kfmm::tree
{

/// An adaptive octree over N particles, cells stored level by level (see the file comment
/// for the layout). Copies are shallow (Views). The cell arrays are unmanaged views of
/// cell_storage: a copy of one of them alone does not keep the cells alive, a copy of the
/// Octree does.
template <class MemorySpace>
struct Octree
{
  using memory_space = MemorySpace;
  template <class T>
  using View = Kokkos::View<T, MemorySpace>;

  Cube cube{};       ///< the cube the keys are computed in
  int leaf_size = 0; ///< the split threshold the tree was built with

  /// Host: cells of level l are [level_offsets[l], level_offsets[l + 1]); size levels + 1.
  std::vector<int> level_offsets{0};

  // Particles in sorted order (N entries).
  View<MortonKey *> keys;            ///< sorted Morton keys
  View<std::uint32_t *> permutation; ///< sorted position -> original particle index

  // Cells (numCells() entries), all nine arrays views of one allocation (cell_storage).
  View<double *> cell_storage;
  View<MortonKey *> cell_keys; ///< Morton prefix of the cell at its level
  View<int *> level;           ///< 0 = root
  View<double *[3]> centre;    ///< geometric centre of the cell
  View<double *> radius;       ///< bound on the distance from centre to the cell's particles
  View<int *> particle_begin;  ///< first particle (sorted order)
  View<int *> particle_end;    ///< one past the last particle
  View<int *> first_child;     ///< first child cell, -1 for a leaf
  View<int *> child_count;     ///< 0 for a leaf, else 1..8
  View<int *> parent;          ///< parent cell, -1 for the root

  View<int *> leaves; ///< leaf cells in particle order

  /// The particles each cell stands for, where its range does not tell: the distributed
  /// solver's local essential tree, one of whose entries stands for a pruned cell's
  /// particles (distributed/LocalEssentialTree.hpp). Empty for any other tree, whose cells
  /// stand for the particles of their ranges.
  View<std::int64_t *> stands_for;

  /// Number of levels holding cells (depth + 1); 0 for an empty tree.
  int numLevels() const { return static_cast<int>(level_offsets.size()) - 1; }
  /// Deepest level, -1 for an empty tree.
  int depth() const { return numLevels() - 1; }
  int numCells() const { return level_offsets.back(); }
  int numLeaves() const { return static_cast<int>(leaves.extent(0)); }
  /// Number of particles (the solver may release `keys` once the tree is built).
  std::size_t numParticles() const { return permutation.extent(0); }
};

namespace detail
{

/// First index in [lo, hi) whose octant digit (key >> shift) & 7 is >= octant; the digits of
/// a cell's sorted keys are non-decreasing.
template <class Keys>
KOKKOS_INLINE_FUNCTION int firstOfOctant(Keys const &keys, int lo, int hi, int shift,
                                         unsigned octant)
{
  while (lo < hi)
  {
    int const mid = lo + (hi - lo) / 2;
    if (static_cast<unsigned>((keys(mid) >> shift) & 7u) < octant)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/// The split rule of an ordinary tree: a cell of `level` splits while it holds more than
/// `leaf_size` particles (its sorted range [begin, end)) and the level is below max_level.
/// A rule is any type with this call operator and a leaf_size; the distributed solver's rules
/// (distributed/LocalEssentialTree.hpp) reproduce on one rank the cells of the tree of all
/// ranks' particles.
struct SplitByCount
{
  int leaf_size;

  KOKKOS_INLINE_FUNCTION bool operator()(int begin, int end, MortonKey /*prefix*/, int level) const
  {
    return end - begin > leaf_size && level < max_level;
  }
};

/// The cells of one level while the tree is being built.
template <class MemorySpace>
struct LevelCells
{
  /// All seven arrays below in one block of the build's workspace, which they view (declared
  /// first: it is initialised first). A device allocation and its release are slow and the
  /// release synchronises, so that six per level took a large part of the tree's time
  /// (docs/TUNING.md, "Round trips to the host").
  Kokkos::View<MortonKey *, MemorySpace> storage;
  Kokkos::View<MortonKey *, MemorySpace> prefix;
  Kokkos::View<int *, MemorySpace> begin;
  Kokkos::View<int *, MemorySpace> end;
  Kokkos::View<int *, MemorySpace> parent;      // global cell index
  Kokkos::View<int *, MemorySpace> first_child; // global cell index or -1
  Kokkos::View<int *, MemorySpace> child_count;
  /// octant_bounds(i, k - 1): the first particle of octant k of cell i, for k = 1..7 (octant
  /// 0 starts at begin(i), and octant k ends where k + 1 starts, octant 7 at end(i)); set for
  /// the cells that split (OctantBounds).
  Kokkos::View<int *[7], MemorySpace> octant_bounds;

  template <class ExecutionSpace>
  LevelCells(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory, int n)
      : storage(memory.template take<Kokkos::View<MortonKey *, MemorySpace>>(
            space, "kfmm::tree::level_cells", std::size_t(n) + (12 * std::size_t(n) + 1) / 2)),
        prefix(storage.data(), n), begin(intArray(0, n), n), end(intArray(1, n), n),
        parent(intArray(2, n), n), first_child(intArray(3, n), n), child_count(intArray(4, n), n),
        octant_bounds(intArray(5, n), n)
  {
  }

  /// bounds[k] .. bounds[k + 1] is the sorted range of octant k of cell i (a cell that
  /// splits).
  KOKKOS_INLINE_FUNCTION void octantBounds(int i, int bounds[9]) const
  {
    bounds[0] = begin(i);
    for (int k = 1; k < 8; ++k)
      bounds[k] = octant_bounds(i, k - 1);
    bounds[8] = end(i);
  }

private:
  /// The k-th int array: after the n keys, each n ints long.
  int *intArray(int k, int n) const
  {
    return reinterpret_cast<int *>(storage.data() + n) + std::size_t(k) * n;
  }

public:
  int size() const { return static_cast<int>(prefix.extent(0)); }
};

/// Per level l of a build: sizes(l, 0) is its number of cells, sizes(l, 1) the number of
/// them that split. The scan over level l writes sizes(l + 1, 0) and sizes(l, 1) on the
/// device, or CountLevels writes every row first; the host reads them per level, per batch of
/// levels, or once (buildCells).
template <class MemorySpace>
using LevelSizes = Kokkos::View<int *[2], MemorySpace>;

/// Item i = 7 c + k - 1: where octant k (1..7) of cell c starts, if the cell splits, by a
/// binary search over the cell's whole range. The seven searches of a cell are independent
/// items: one thread searching them in turn, each from the last one's result, made a chain
/// of dependent loads that bounded each kernel at the top levels of a tree, where a level
/// has a handful of cells, and the scan and the emission each did it again (docs/TUNING.md,
/// "The octree's build").
template <class MemorySpace, class Keys, class SplitRule>
struct OctantBounds
{
  Keys keys;
  LevelCells<MemorySpace> cells;
  LevelSizes<MemorySpace> sizes;
  int level;
  SplitRule rule;
  int shift;

  KOKKOS_INLINE_FUNCTION void operator()(int item) const
  {
    int const i = item / 7;
    int const k = item - 7 * i + 1;
    if (i >= sizes(level, 0))
      return;
    int const b = cells.begin(i);
    int const e = cells.end(i);
    if (rule(b, e, cells.prefix(i), level))
      cells.octant_bounds(i, k - 1) = firstOfOctant(keys, b, e, shift, static_cast<unsigned>(k));
  }
};

/// What the scan of a level counts: its cells' children in the low 32 bits, the cells that
/// have children (the level's inner cells) above them, so that one scan total gives both.
using ChildCount = std::int64_t;
constexpr ChildCount inner_cell = ChildCount(1) << 32;

/// Cell i's child count into the scan; the final pass stores it and the index of its first
/// child in the next level, and the pass's last item the level's totals into `sizes`. The
/// scan covers the level's capacity: items past its cells count nothing.
template <class MemorySpace, class SplitRule>
struct CountChildren
{
  LevelCells<MemorySpace> cells;
  LevelSizes<MemorySpace> sizes;
  int level;
  SplitRule rule;
  int last; ///< the last item of the scan

  KOKKOS_INLINE_FUNCTION void operator()(int i, ChildCount &update, bool final) const
  {
    bool const cell = i < sizes(level, 0);
    int count = 0;
    if (cell && rule(cells.begin(i), cells.end(i), cells.prefix(i), level))
    {
      int bounds[9];
      cells.octantBounds(i, bounds);
      for (int k = 0; k < 8; ++k)
        count += bounds[k + 1] > bounds[k] ? 1 : 0;
    }
    ChildCount const counted = count + (count > 0 ? inner_cell : 0);
    if (final && cell)
    {
      cells.child_count(i) = count;
      cells.first_child(i) = count > 0 ? static_cast<int>(update & (inner_cell - 1)) : -1;
    }
    if (final && i == last)
    {
      ChildCount const total = update + counted;
      sizes(level + 1, 0) = static_cast<int>(total & (inner_cell - 1));
      sizes(level, 1) = static_cast<int>(total / inner_cell);
    }
    update += counted;
  }
};

/// Finds the octants of every cell of level `level` that splits (`cells.octant_bounds`),
/// counts the children of every cell (stored in `cells.child_count`) and places them by an
/// exclusive scan (`cells.first_child`, indices in the next level); the level's totals go to
/// `sizes` (LevelSizes), on the device. Launched over the level's capacity: its size may be
/// known on the device only.
template <class ExecutionSpace, class MemorySpace, class Keys, class SplitRule>
void countChildren(ExecutionSpace const &space, Keys const &keys,
                   LevelCells<MemorySpace> const &cells, LevelSizes<MemorySpace> const &sizes,
                   int level, SplitRule const &rule)
{
  int const shift = 3 * (max_level - level - 1);
  Kokkos::parallel_for(
      "kfmm::tree::octant_bounds", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 7 * cells.size()),
      OctantBounds<MemorySpace, Keys, SplitRule>{keys, cells, sizes, level, rule, shift});
  Kokkos::parallel_scan(
      "kfmm::tree::count_children", Kokkos::RangePolicy<ExecutionSpace>(space, 0, cells.size()),
      CountChildren<MemorySpace, SplitRule>{cells, sizes, level, rule, cells.size() - 1});
}

/// Writes the children of cell i (one per non-empty octant) into their slots of the next
/// level; a child's parent is its index in this level.
template <class MemorySpace>
struct EmitChildren
{
  LevelCells<MemorySpace> cells;
  LevelSizes<MemorySpace> sizes;
  int level;
  LevelCells<MemorySpace> next;

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    if (i >= sizes(level, 0) || cells.child_count(i) == 0)
      return;
    int bounds[9];
    cells.octantBounds(i, bounds);
    int slot = cells.first_child(i);
    for (int k = 0; k < 8; ++k)
    {
      if (bounds[k + 1] == bounds[k])
        continue;
      next.prefix(slot) = cells.prefix(i) << 3 | static_cast<MortonKey>(k);
      next.begin(slot) = bounds[k];
      next.end(slot) = bounds[k + 1];
      next.parent(slot) = i;
      ++slot;
    }
  }
};

/// Writes the children of the cells of `cells` (level `level`, their octants found by
/// countChildren) into `next`, whose capacity holds them.
template <class ExecutionSpace, class MemorySpace>
void emitChildren(ExecutionSpace const &space, LevelCells<MemorySpace> const &cells,
                  LevelSizes<MemorySpace> const &sizes, int level,
                  LevelCells<MemorySpace> const &next)
{
  Kokkos::parallel_for("kfmm::tree::emit_children",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, cells.size()),
                       EmitChildren<MemorySpace>{cells, sizes, level, next});
}

/// The particles of a tree as LeafRadii reads them: the caller's positions through the
/// tree's permutation, in the caller's units.
template <class MemorySpace, class Positions>
struct PermutedPoints
{
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  Positions positions;

  /// Coordinate d of sorted particle i.
  KOKKOS_INLINE_FUNCTION double operator()(int i, int d) const
  {
    return static_cast<double>(positions(permutation(i), d));
  }
  /// A coordinate (a centre's) and a length in the caller's units, in the points' and back.
  KOKKOS_INLINE_FUNCTION double coordinate(double x, int) const { return x; }
  KOKKOS_INLINE_FUNCTION double callerLength(double l) const { return l; }
};

/// The particles of a tree already sorted and in the solver's frame (kfmm::Fmm's sorted
/// positions): read in order, where the permutation's gather was the leaves' radii's whole
/// cost.
template <class Sorted>
struct SortedPoints
{
  Sorted sorted;
  kfmm::detail::UnitFrame frame;

  KOKKOS_INLINE_FUNCTION double operator()(int i, int d) const
  {
    return static_cast<double>(sorted(i, d));
  }
  KOKKOS_INLINE_FUNCTION double coordinate(double x, int d) const { return frame.position(x, d); }
  KOKKOS_INLINE_FUNCTION double callerLength(double l) const { return frame.callerLength(l); }
};

/// The radius of leaves: the largest distance from a leaf's centre to its particles (`points`:
/// PermutedPoints or SortedPoints). Thread k of team r takes leaf leaves(r * leaves_per_team +
/// k), its vector lanes the leaf's particles.
template <class ExecutionSpace, class MemorySpace, class Points>
struct LeafRadii
{
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;

  Kokkos::View<int *, MemorySpace> leaves;
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<int *, MemorySpace> begin;
  Kokkos::View<int *, MemorySpace> end;
  Points points;
  int leaves_per_team;

  KOKKOS_INLINE_FUNCTION void operator()(Member const &team) const
  {
    int const first = team.league_rank() * leaves_per_team;
    int const count =
        kfmm::detail::min(leaves_per_team, static_cast<int>(leaves.extent(0)) - first);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int k) {
      int const cell = leaves(first + k);
      double const cx = points.coordinate(centre(cell, 0), 0);
      double const cy = points.coordinate(centre(cell, 1), 1);
      double const cz = points.coordinate(centre(cell, 2), 2);
      double r2 = 0;
      Kokkos::parallel_reduce(
          Kokkos::ThreadVectorRange(team, begin(cell), end(cell)),
          [&](int i, double &m) {
            double const dx = points(i, 0) - cx;
            double const dy = points(i, 1) - cy;
            double const dz = points(i, 2) - cz;
            m = kfmm::detail::max(m, dx * dx + dy * dy + dz * dz);
          },
          Kokkos::Max<double>(r2));
      Kokkos::single(Kokkos::PerThread(team),
                     [&]() { radius(cell) = points.callerLength(kfmm::detail::sqrt(r2)); });
    });
  }
};

/// Exact radius of every leaf of `tree` from its particles `points`: the largest distance from
/// its centre to its particles. A leaf per thread, its particles across the thread's vector
/// lanes (a warp's lanes on GPUs: leaves hold tens of particles), reduced by shuffles.
template <class ExecutionSpace, class MemorySpace, class Points>
void leafRadiiOf(ExecutionSpace const &space, Octree<MemorySpace> const &tree, Points const &points)
{
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  int const num_leaves = tree.numLeaves();
  if (num_leaves == 0)
    return;
  int const per_team = Tune::leaf_radii_leaves_per_team;
  LeafRadii<ExecutionSpace, MemorySpace, Points> const kernel{
      tree.leaves,       tree.centre, tree.radius, tree.particle_begin,
      tree.particle_end, points,      per_team};
  int const teams = (num_leaves + per_team - 1) / per_team;
  Kokkos::parallel_for("kfmm::tree::leaf_radii",
                       Kokkos::TeamPolicy<ExecutionSpace>(space, teams, Tune::leaf_radii_team_size,
                                                          Tune::leaf_radii_lanes),
                       kernel);
}

/// The leaves' radii from the caller's positions, gathered through the tree's permutation:
/// buildCells' way unless its caller has the particles sorted (kfmm::Fmm), which reads them
/// in order, an order of magnitude faster than through the permutation (docs/TUNING.md,
/// "The octree's build").
struct GatheredLeafRadii
{
  template <class ExecutionSpace, class MemorySpace, class Positions>
  void operator()(ExecutionSpace const &space, Octree<MemorySpace> const &tree,
                  Positions const &positions) const
  {
    leafRadiiOf(space, tree, PermutedPoints<MemorySpace, Positions>{tree.permutation, positions});
  }
};

/// The radius of cell c from its children's centres and radii (a leaf's is left alone).
template <class MemorySpace>
struct InnerRadii
{
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    int const count = child_count(c);
    if (count == 0)
      return;
    double r = 0;
    for (int k = first_child(c); k < first_child(c) + count; ++k)
    {
      double const dx = centre(k, 0) - centre(c, 0);
      double const dy = centre(k, 1) - centre(c, 1);
      double const dz = centre(k, 2) - centre(c, 2);
      r = kfmm::detail::max(r, kfmm::detail::sqrt(dx * dx + dy * dy + dz * dz) + radius(k));
    }
    radius(c) = r;
  }
};

/// Radius of every inner cell from its children, level by level from the deepest: the
/// bottom-up order of the FMM upward pass, one launch per level.
template <class ExecutionSpace, class MemorySpace>
void innerRadii(ExecutionSpace const &space, Octree<MemorySpace> const &tree)
{
  InnerRadii<MemorySpace> const kernel{tree.centre, tree.radius, tree.first_child,
                                       tree.child_count};
  for (int l = tree.numLevels() - 2; l >= 0; --l)
  {
    Kokkos::parallel_for("kfmm::tree::inner_radii",
                         Kokkos::RangePolicy<ExecutionSpace>(space, tree.level_offsets[l],
                                                             tree.level_offsets[l + 1]),
                         kernel);
  }
}

/// below(c): the leaves of cell c's subtree, 1 for a leaf, from its children's (counted
/// first: the deeper level's launch came before).
template <class MemorySpace>
struct LeavesBelow
{
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> below;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    int const count = child_count(c);
    int sum = count == 0 ? 1 : 0;
    for (int k = first_child(c); k < first_child(c) + count; ++k)
      sum += below(k);
    below(c) = sum;
  }
};

/// Leaf c into `leaves` at its rank in particle order: the leaves of every subtree that
/// comes before c's branch at some level, i.e. of the earlier siblings of c and of each of
/// its ancestors (a cell's children are in Morton order, which is particle order).
template <class MemorySpace>
struct PlaceLeaves
{
  Kokkos::View<int *, MemorySpace> parent;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> below;
  Kokkos::View<int *, MemorySpace> leaves;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    if (child_count(c) != 0)
      return;
    int rank = 0;
    for (int x = c; parent(x) >= 0; x = parent(x))
      for (int s = first_child(parent(x)); s < x; ++s)
        rank += below(s);
    leaves(rank) = c;
  }
};

/// The `num_leaves` leaf cells of `tree` in particle order: each cell's leaf count bottom up,
/// one launch per level, then each leaf placed by the counts of the subtrees before it. On
/// the cells rather than the particles, and without a count for the host: a mark per leaf
/// compacted by a scan over the particles cost a pass over the particles, and the leaf
/// count returned to the host (docs/TUNING.md, "The octree's build").
template <class ExecutionSpace, class MemorySpace>
void collectLeaves(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                   Octree<MemorySpace> &tree, int num_leaves)
{
  using Ints = Kokkos::View<int *, MemorySpace>;
  auto below = memory.template take<Ints>(space, "kfmm::tree::leaves_below", tree.numCells());
  LeavesBelow<MemorySpace> const count{tree.first_child, tree.child_count, below};
  for (int l = tree.numLevels() - 1; l >= 0; --l)
    Kokkos::parallel_for("kfmm::tree::leaves_below",
                         Kokkos::RangePolicy<ExecutionSpace>(space, tree.level_offsets[l],
                                                             tree.level_offsets[l + 1]),
                         count);
  auto const leaves = memory.template take<Ints>(space, "kfmm::tree::leaves", num_leaves);
  Kokkos::parallel_for(
      "kfmm::tree::place_leaves", Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.numCells()),
      PlaceLeaves<MemorySpace>{tree.parent, tree.first_child, tree.child_count, below, leaves});
  memory.give(below);
  tree.leaves = leaves;
}

/// The checks of checkPositions but the one that reads the values.
template <class ExecutionSpace, class Positions>
void checkPositionsShape(std::string const &where, Positions const &positions, char const *name)
{
  static_assert(Positions::rank == 2, "kfmm::tree: positions must be a rank-2 View (N x 3)");
  static_assert(
      Kokkos::SpaceAccessibility<ExecutionSpace, typename Positions::memory_space>::accessible,
      "kfmm::tree: positions must be accessible from the execution space");
  std::string const argument = name;
  kfmm::detail::requireExtent(where, argument + " (columns)", positions.extent(1), 3);
  kfmm::detail::require(positions.extent(0) <= static_cast<std::size_t>(INT_MAX), where,
                        "argument '" + argument + "' holds " +
                            kfmm::detail::formatNumber(positions.extent(0)) +
                            " points, more than the 2^31 - 1 a tree indexes");
}

/// Throws kfmm::Exception, naming `where` and the argument `name`, unless `positions` is an
/// N x 3 View the execution space can read, of at most 2^31 - 1 rows, all finite.
template <class ExecutionSpace, class Positions>
void checkPositions(ExecutionSpace const &space, std::string const &where,
                    Positions const &positions, char const *name = "positions")
{
  checkPositionsShape<ExecutionSpace>(where, positions, name);
  kfmm::detail::requireFinite(space, where, name, positions);
}

/// checkPositions and boundingBox in one pass over the positions: the box's extents are
/// infinite exactly when a coordinate is not finite, and only then is the first such row
/// looked for, for the message.
template <class ExecutionSpace, class Positions>
Box checkedBoundingBox(ExecutionSpace const &space, std::string const &where,
                       Positions const &positions, char const *name)
{
  checkPositionsShape<ExecutionSpace>(where, positions, name);
  Box const box = boundingBox(space, positions);
  if (!isFinite(box))
  {
    kfmm::detail::requireFinite(space, where, name, positions);
    throw Exception("kfmm internal error: " + where + ": the box of argument '" + name +
                    "' is not finite, its values are");
  }
  return box;
}

inline void checkLeafSize(std::string const &where, int leaf_size)
{
  kfmm::detail::require(leaf_size >= 1, where,
                        "argument 'leaf_size' must be >= 1, got " +
                            kfmm::detail::formatNumber(leaf_size));
}

/// The root cell: all n particles, no parent; the levels' sizes cleared, and the root's
/// level holding one cell.
template <class MemorySpace>
struct RootCell
{
  Kokkos::View<MortonKey *, MemorySpace> prefix;
  Kokkos::View<int *, MemorySpace> begin;
  Kokkos::View<int *, MemorySpace> end;
  Kokkos::View<int *, MemorySpace> parent;
  LevelSizes<MemorySpace> sizes;
  int n;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    prefix(0) = 0;
    begin(0) = 0;
    end(0) = n;
    parent(0) = -1;
    for (std::size_t l = 0; l < sizes.extent(0); ++l)
      sizes(l, 0) = sizes(l, 1) = 0;
    sizes(0, 0) = 1;
  }
};

/// Whether sorted keys a and b lie in one cell of `level` (share its Morton prefix).
KOKKOS_INLINE_FUNCTION bool sameCell(MortonKey a, MortonKey b, int level)
{
  return ((a ^ b) >> (3 * (max_level - level))) == 0;
}

/// Whether the cell of `level` that holds sorted particle i holds more than leaf_size
/// particles. Its first particle a is found by binary search in [i - leaf_size, i] (where
/// the cell starts before i - leaf_size, the search stops there, and the cell holds those
/// leaf_size + 1 particles); the cell holds more than leaf_size exactly when particle
/// a + leaf_size is in it. The search's upper end is always a particle of the cell (it
/// starts at i), so the answer is true only if particles a and a + leaf_size share the cell,
/// whatever the keys' order. CountLevels relies on this where the keys are sorted only to a
/// level L (KeyOrder::cell_levels) and the cell lies at L or below: the particles from a to
/// a + leaf_size would then all share one cell of level L, which holds at most leaf_size.
template <class Keys>
KOKKOS_INLINE_FUNCTION bool holdsMoreThan(Keys const &keys, int i, int level, int leaf_size)
{
  MortonKey const key = keys(i);
  std::int64_t lo = kfmm::detail::max(std::int64_t(0), std::int64_t(i) - leaf_size);
  std::int64_t hi = i;
  while (lo < hi)
  {
    std::int64_t const mid = lo + (hi - lo) / 2;
    if (sameCell(keys(mid), key, level))
      hi = mid;
    else
      lo = mid + 1;
  }
  std::int64_t const last = lo + leaf_size;
  return last < std::int64_t(keys.extent(0)) && sameCell(keys(last), key, level);
}

/// LevelReads::counted's count of every level's cells and inner cells of an ordinary tree
/// (SplitByCount) from its sorted keys alone, into `sizes` (cleared by RootCell, whose row
/// of cells is the root's). Item i counts the cells whose first particle is sorted particle
/// i: i starts a cell at every level below the deepest one it shares with particle i - 1.
/// Such a cell is in the tree when its parent holds more than leaf_size particles (then
/// every ancestor does, and none is at max_level: SplitByCount), and it splits in turn when
/// particle i + leaf_size shares it; the first of these cells that is not in the tree ends
/// the item's count. The keys may be sorted only down to a probe level whose cells hold at
/// most leaf_size particles (KeyOrder::cell_levels): no cell at or below that level holds
/// more, and the tests find none there, since they need leaf_size + 1 consecutive sorted
/// particles that share such a cell.
template <class MemorySpace>
struct CountLevels
{
  Kokkos::View<MortonKey *, MemorySpace> keys;
  LevelSizes<MemorySpace> sizes;
  int leaf_size;

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    MortonKey const key = keys(i);
    int level = 0; // the first level of which particle i starts a cell
    if (i > 0)
    {
      MortonKey const previous = keys(i - 1);
      while (level <= max_level && sameCell(previous, key, level))
        ++level;
      if (level > max_level || !holdsMoreThan(keys, i, level - 1, leaf_size))
        return;
    }
    std::int64_t const last = std::int64_t(i) + leaf_size;
    for (;; ++level)
    {
      if (level > 0)
        Kokkos::atomic_add(&sizes(level, 0), 1);
      bool const splits = level < max_level && last < std::int64_t(keys.extent(0)) &&
                          sameCell(keys(last), key, level);
      if (!splits)
        return;
      Kokkos::atomic_add(&sizes(level, 1), 1);
    }
  }
};

/// Cell offset + i of the tree, with its centre, from cell i of level l (`cells`), its
/// parent's and first child's indices in their levels made the tree's: the levels above and
/// below start at parent_offset and child_offset. The cells of the deepest level are leaves:
/// a counted build does not scan that level for children (buildCells).
template <class MemorySpace>
struct AssembleLevel
{
  LevelCells<MemorySpace> cells;
  int offset;
  int parent_offset;
  int child_offset;
  Cube cube;
  int l;
  bool deepest;
  Kokkos::View<MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<int *, MemorySpace> particle_begin;
  Kokkos::View<int *, MemorySpace> particle_end;
  Kokkos::View<int *, MemorySpace> first_child;
  Kokkos::View<int *, MemorySpace> child_count;
  Kokkos::View<int *, MemorySpace> parent;

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    int const c = offset + i;
    MortonKey const key = cells.prefix(i);
    double x[3];
    cellCentre(cube, key, l, x);
    cell_keys(c) = key;
    level(c) = l;
    centre(c, 0) = x[0];
    centre(c, 1) = x[1];
    centre(c, 2) = x[2];
    particle_begin(c) = cells.begin(i);
    particle_end(c) = cells.end(i);
    parent(c) = l == 0 ? -1 : parent_offset + cells.parent(i);
    int const children = deepest ? 0 : cells.child_count(i);
    first_child(c) = children > 0 ? child_offset + cells.first_child(i) : -1;
    child_count(c) = children;
  }
};

/// A cube the build was given, as kernels read it and as the host does (tree/DeviceCube.hpp
/// has the same for a cube the device finds).
inline CubeValue cubeForKernels(Cube const &cube) { return CubeValue{cube}; }
inline Cube const &cubeOnHost(Cube const &cube) { return cube; }

/// How buildCells learns the sizes of the levels: as the backend's Tuning says, by a read
/// after every level, by a read per batch of levels, or counted from the sorted keys before
/// the levels are built, in one read (SplitByCount only; other rules read in batches then).
/// See buildCells. Every way gives the same tree.
enum class LevelReads
{
  tuned,
  per_level,
  batched,
  counted
};

/// buildCells' levels below the root (`levels`, `offsets`, `inner_cells`) where the host
/// reads their sizes as they are built: once per level, or once per batch of levels whose
/// capacities together stay within `batch_cells` (0: per level).
template <class ExecutionSpace, class MemorySpace, class SplitRule>
void readLevelsAsBuilt(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                       Kokkos::View<MortonKey *, MemorySpace> const &keys, SplitRule const &rule,
                       LevelSizes<MemorySpace> const &sizes, std::size_t batch_cells,
                       std::vector<LevelCells<MemorySpace>> &levels, std::vector<int> &offsets,
                       int &inner_cells)
{
  std::size_t const n = keys.extent(0);
  while (!levels.empty())
  {
    // Levels offsets.size() - 1 .. l: the first's size is known, the others' are bounds.
    int const first = static_cast<int>(offsets.size()) - 2;
    int l = first;
    std::size_t capacity = static_cast<std::size_t>(levels[l].size());
    std::size_t speculated = 0;
    for (;;)
    {
      countChildren(space, keys, levels[l], sizes, l, rule);
      std::size_t const bound = std::min(8 * capacity, n);
      if (l == max_level || speculated + bound > batch_cells)
        break;
      LevelCells<MemorySpace> next(space, memory, static_cast<int>(bound));
      emitChildren(space, levels[l], sizes, l, next);
      levels.push_back(next);
      speculated += bound;
      capacity = bound;
      ++l;
    }
    // The batch's one round trip: the sizes of its levels and of the next one (the whole
    // array, 46 ints: contiguous, where a range of its rows is not in every layout).
    auto const read = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, sizes);
    // A bound may have been taken for a level that turned out empty: the tree ends there.
    int last = first;
    while (last < l && read(last + 1, 0) > 0)
    {
      ++last;
      offsets.push_back(offsets.back() + read(last, 0));
    }
    for (int k = first; k <= last; ++k)
      inner_cells += read(k, 1);
    for (int k = last + 1; k <= l; ++k)
      memory.give(levels[k].storage);
    levels.erase(levels.begin() + last + 1, levels.end());
    int const children = last < l ? 0 : read(l + 1, 0);
    if (children == 0)
      return;
    LevelCells<MemorySpace> next(space, memory, children);
    emitChildren(space, levels[l], sizes, l, next);
    levels.push_back(next);
    offsets.push_back(offsets.back() + children);
  }
}

/// One tree's build between its sorted keys and its arrays (buildCells): the tree so far
/// (leaf size, keys, permutation), its levels' cells, their offsets and its inner cells.
template <class MemorySpace>
struct CellsInBuild
{
  Octree<MemorySpace> tree;
  std::vector<LevelCells<MemorySpace>> levels;
  std::vector<int> offsets{0};
  int inner_cells = 0;

  CellsInBuild(Kokkos::View<MortonKey *, MemorySpace> const &keys,
               Kokkos::View<std::uint32_t *, MemorySpace> const &permutation, int leaf_size)
  {
    tree.leaf_size = leaf_size;
    tree.keys = keys;
    tree.permutation = permutation;
  }
};

/// The build's root cell, of all n > 0 particles, as its level 0, with the levels' `sizes`
/// cleared.
template <class ExecutionSpace, class MemorySpace>
void queueRoot(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
               LevelSizes<MemorySpace> const &sizes, int n, CellsInBuild<MemorySpace> &build)
{
  LevelCells<MemorySpace> root(space, memory, 1);
  Kokkos::parallel_for(
      "kfmm::tree::root", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
      RootCell<MemorySpace>{root.prefix, root.begin, root.end, root.parent, sizes, n});
  build.levels.push_back(root);
  build.offsets.push_back(1);
}

/// The levels of `count` builds (`builds`) whose levels are counted (LevelReads::counted):
/// each non-empty tree's root and CountLevels queued, then one read of every tree's sizes,
/// then each level's children counted and emitted into the next, of its known size; an
/// empty tree has no cells. A solver of two sets builds its two trees this way
/// (buildTwoOctreesOfValidInput), so that they wait for the device once together.
template <class ExecutionSpace, class MemorySpace, class SplitRule>
void buildCountedLevels(ExecutionSpace const &space, kfmm::detail::Workspace<MemorySpace> &memory,
                        SplitRule const &rule, CellsInBuild<MemorySpace> *builds, int count)
{
  int const rows = max_level + 2;
  // Every tree's sizes in one block, each tree's rows contiguous in any layout.
  auto all =
      memory.template take<LevelSizes<MemorySpace>>(space, "kfmm::tree::level_sizes", count * rows);
  auto const sizes_of = [&](int k) {
    return LevelSizes<MemorySpace>(all.data() + 2 * rows * k, rows);
  };
  for (int k = 0; k < count; ++k)
  {
    CellsInBuild<MemorySpace> &build = builds[k];
    int const n = static_cast<int>(build.tree.keys.extent(0));
    if (n == 0)
      continue;
    queueRoot(space, memory, sizes_of(k), n, build);
    Kokkos::parallel_for("kfmm::tree::count_levels",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, build.tree.keys.extent(0)),
                         CountLevels<MemorySpace>{build.tree.keys, sizes_of(k), rule.leaf_size});
  }
  // The builds' one round trip (the whole block: see readLevelsAsBuilt), into a copy: the
  // scans below write the sizes again, and the host backends would see their rows there.
  auto const read = Kokkos::create_mirror(Kokkos::HostSpace{}, all);
  Kokkos::deep_copy(read, all);
  using ReadSizes = std::decay_t<decltype(read)>;
  for (int k = 0; k < count; ++k)
  {
    CellsInBuild<MemorySpace> &build = builds[k];
    ReadSizes const read_of_tree(read.data() + 2 * rows * k, rows);
    for (int l = 0; !build.levels.empty() && read_of_tree(l, 1) > 0; ++l)
    {
      LevelCells<MemorySpace> next(space, memory, read_of_tree(l + 1, 0));
      countChildren(space, build.tree.keys, build.levels[l], sizes_of(k), l, rule);
      emitChildren(space, build.levels[l], sizes_of(k), l, next);
      build.levels.push_back(next);
      build.offsets.push_back(build.offsets.back() + read_of_tree(l + 1, 0));
      build.inner_cells += read_of_tree(l, 1);
    }
  }
  memory.give(all);
}

/// The tree's arrays from the levels of its `build` (whose blocks go back to `memory`), once
/// the host has read their sizes: assembly, leaves and radii (buildCells).
template <class ExecutionSpace, class Positions, class CubeSource, class MemorySpace,
          class MeasureLeafRadii>
Octree<MemorySpace> assembleCells(ExecutionSpace const &space,
                                  kfmm::detail::Workspace<MemorySpace> &memory,
                                  Positions const &positions, CubeSource const &cube_source,
                                  MeasureLeafRadii const &leaf_radii,
                                  CellsInBuild<MemorySpace> &build)
{
  Octree<MemorySpace> tree = build.tree;
  std::vector<int> const &offsets = build.offsets;
  std::vector<LevelCells<MemorySpace>> &levels = build.levels;
  tree.level_offsets = offsets;
  // The host has waited for the device in the reads of the levels' sizes, unless there were
  // none.
  if (positions.extent(0) == 0)
    space.fence();
  Cube const cube = cubeOnHost(cube_source);
  tree.cube = cube;

  // Assembly into the final arrays, one launch per level. The nine arrays share one
  // allocation, as LevelCells' do (each allocation and release synchronises): 8-byte
  // entries first (centre, radius, keys: 5 doubles' worth per cell), then the six int
  // arrays (3 doubles' worth per cell, rounded up).
  std::size_t const cells = static_cast<std::size_t>(offsets.back());
  tree.cell_storage = memory.template take<Kokkos::View<double *, MemorySpace>>(
      space, "kfmm::tree::cells", 5 * cells + (6 * cells + 1) / 2);
  double *const doubles = tree.cell_storage.data();
  int *const ints = reinterpret_cast<int *>(doubles + 5 * cells);
  tree.centre = Kokkos::View<double *[3], MemorySpace>(doubles, cells);
  tree.radius = Kokkos::View<double *, MemorySpace>(doubles + 3 * cells, cells);
  tree.cell_keys = Kokkos::View<MortonKey *, MemorySpace>(
      reinterpret_cast<MortonKey *>(doubles + 4 * cells), cells);
  tree.level = Kokkos::View<int *, MemorySpace>(ints, cells);
  tree.particle_begin = Kokkos::View<int *, MemorySpace>(ints + cells, cells);
  tree.particle_end = Kokkos::View<int *, MemorySpace>(ints + 2 * cells, cells);
  tree.first_child = Kokkos::View<int *, MemorySpace>(ints + 3 * cells, cells);
  tree.child_count = Kokkos::View<int *, MemorySpace>(ints + 4 * cells, cells);
  tree.parent = Kokkos::View<int *, MemorySpace>(ints + 5 * cells, cells);
  int const num_levels = static_cast<int>(levels.size());
  for (int l = 0; l < num_levels; ++l)
  {
    Kokkos::parallel_for(
        "kfmm::tree::assemble_level",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, offsets[l + 1] - offsets[l]),
        AssembleLevel<MemorySpace>{levels[l], offsets[l], l > 0 ? offsets[l - 1] : 0,
                                   offsets[l + 1], cube, l, l == num_levels - 1, tree.cell_keys,
                                   tree.level, tree.centre, tree.particle_begin, tree.particle_end,
                                   tree.first_child, tree.child_count, tree.parent});
  }
  for (auto &cells_of_level : levels)
    memory.give(cells_of_level.storage);
  levels.clear();

  collectLeaves(space, memory, tree, tree.numCells() - build.inner_cells);
  leaf_radii(space, tree, positions);
  innerRadii(space, tree);
  return tree;
}

/// Whether buildCells finds the levels' sizes on the device before the host reads them:
/// counted (countsLevels) or in batches.
template <class ExecutionSpace>
bool levelsSizedOnDevice(LevelReads reads)
{
  return reads == LevelReads::batched || reads == LevelReads::counted ||
         (reads == LevelReads::tuned &&
          kfmm::tuning::Tuning<ExecutionSpace>::tree_levels_sized_on_device);
}

/// Whether buildCells counts the levels' sizes from the sorted keys (see there).
template <class ExecutionSpace, class SplitRule>
bool countsLevels(LevelReads reads)
{
  return std::is_same<SplitRule, SplitByCount>::value && reads != LevelReads::batched &&
         levelsSizedOnDevice<ExecutionSpace>(reads);
}

/// Steps 3 and 4 of the file comment on validated input, cells split by `rule` (a
/// SplitByCount for an ordinary tree), the tree's arrays taken from `memory`. The host reads
/// `cube` (a Cube, or the cube the device finds: tree/DeviceCube.hpp) only after its first
/// read of the levels' sizes.
/// `leaf_radii(space, tree, positions)` measures the leaves' radii before the inner cells'
/// are derived from them: GatheredLeafRadii, or a caller's own way (the solver's from its
/// sorted particles; the distributed solver's, which also fixes the leaves that stand for
/// particles its local essential tree does not hold).
template <class ExecutionSpace, class Positions, class CubeSource, class MemorySpace,
          class SplitRule, class MeasureLeafRadii = GatheredLeafRadii>
Octree<MemorySpace> buildCells(ExecutionSpace const &space,
                               kfmm::detail::Workspace<MemorySpace> &memory,
                               Positions const &positions, CubeSource const &cube_source,
                               Kokkos::View<MortonKey *, MemorySpace> const &keys,
                               Kokkos::View<std::uint32_t *, MemorySpace> const &permutation,
                               SplitRule const &rule, MeasureLeafRadii const &leaf_radii = {},
                               LevelReads reads = LevelReads::tuned)
{
  kfmm::detail::ScopedRegion region("kfmm::tree::build_cells");
  int const n = static_cast<int>(positions.extent(0));
  CellsInBuild<MemorySpace> build(keys, permutation, rule.leaf_size);

  // Cells level by level: each level's cells are placed by the scan over their parents.
  // The levels' sizes stay on the device until the host reads them:
  //   - counted (an ordinary tree's where the backend's reads wait for a device:
  //     Tuning::tree_levels_sized_on_device): CountLevels finds every level's size from the
  //     sorted keys in one pass, and the host reads them all at once, so that the build waits
  //     for the device once however deep its tree (in batches a Plummer tree's deep levels
  //     took a read each; docs/TUNING.md, "Round trips to the host"); a solver's two trees
  //     read theirs together (buildTwoOctreesOfValidInput);
  //   - batched (the other split rules there): a level whose size the host does not know yet
  //     takes the bound min(8 x its parent level's capacity, n), and its kernels cover that
  //     capacity. A batch ends before its levels' capacities would pass n / 8 + 64 cells
  //     (about 8 bytes per particle of scratch), so that a uniform tree of 1e6 or 1e8
  //     particles needs one batch, not a round trip to the host per level (docs/TUNING.md,
  //     "Round trips to the host"), and a small tree does not launch the kernels of
  //     levels it will never have;
  //   - per level (the host backends): a read costs nothing there, and neither the count's
  //     pass nor the bounds' idle items are paid.
  if (countsLevels<ExecutionSpace, SplitRule>(reads) && n > 0)
    buildCountedLevels(space, memory, rule, &build, 1);
  else
  {
    auto sizes = memory.template take<LevelSizes<MemorySpace>>(space, "kfmm::tree::level_sizes",
                                                               max_level + 2);
    if (n > 0)
      queueRoot(space, memory, sizes, n, build);
    bool const batched = levelsSizedOnDevice<ExecutionSpace>(reads);
    readLevelsAsBuilt(space, memory, keys, rule, sizes, batched ? n / 8 + 64 : 0, build.levels,
                      build.offsets, build.inner_cells);
    memory.give(sizes);
  }
  return assembleCells(space, memory, positions, cube_source, leaf_radii, build);
}

} // namespace detail

/// The octree of particles whose Morton keys are already sorted: the cells, radii and
/// leaves (steps 3 and 4 of the file comment). buildOctree computes and sorts the keys
/// first; this entry point is for callers that time or distribute those steps themselves.
/// Its levels are sized by the scans over them, never counted from the caller's keys first
/// (buildCells' LevelReads::counted): keys out of order then give a wrong tree, but no write
/// past its arrays.
///
/// \param [in] space        execution space instance the kernels run on
/// \param [in] positions    N x 3 particle positions (original order)
/// \param [in] cube         the cube `keys` were computed in
/// \param [in] keys         N Morton keys in ascending order (kept by the tree, not copied)
/// \param [in] permutation  N indices: sorted position -> original particle (kept)
/// \param [in] leaf_size    a cell with more particles splits (unless at level 21); >= 1
/// \throws kfmm::Exception on leaf_size < 1, mismatched extents, or NaN/Inf in positions
/// (the message names the argument and, for positions, the first bad index).
template <class ExecutionSpace, class Positions, class MemorySpace>
Octree<MemorySpace> buildOctreeFromSortedKeys(
    ExecutionSpace const &space, Positions const &positions, Cube const &cube,
    Kokkos::View<MortonKey *, MemorySpace> const &keys,
    Kokkos::View<std::uint32_t *, MemorySpace> const &permutation, int leaf_size)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::tree::buildOctreeFromSortedKeys: the first argument must be a Kokkos "
                "execution space");
  static_assert(Kokkos::SpaceAccessibility<ExecutionSpace, MemorySpace>::accessible,
                "kfmm::tree::buildOctreeFromSortedKeys: keys must be accessible from the "
                "execution space");
  kfmm::detail::ScopedRegion region("kfmm::tree::build");
  std::string const where = "kfmm::tree::buildOctreeFromSortedKeys";
  detail::checkLeafSize(where, leaf_size);
  detail::checkPositions(space, where, positions);
  kfmm::detail::requireExtent(where, "keys", keys.extent(0), positions.extent(0));
  kfmm::detail::requireExtent(where, "permutation", permutation.extent(0), positions.extent(0));
  auto const reads = kfmm::tuning::Tuning<ExecutionSpace>::tree_levels_sized_on_device
                         ? detail::LevelReads::batched
                         : detail::LevelReads::per_level;
  return detail::buildCells(space, kfmm::detail::Workspace<MemorySpace>::direct(), positions, cube,
                            keys, permutation, detail::SplitByCount{leaf_size},
                            detail::GatheredLeafRadii{}, reads);
}

namespace detail
{

/// permutation(i) = first + i.
template <class MemorySpace>
struct IdentityPermutation
{
  Kokkos::View<std::uint32_t *, MemorySpace> permutation;
  std::size_t first = 0;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    permutation(i) = static_cast<std::uint32_t>(first + i);
  }
};

/// How buildOctreeOfValidInput sorts the particles' keys:
/// - all_bits: by all 63 bits, so that the tree's `keys` are sorted (buildOctree's contract);
/// - cell_levels: only by the bits of levels down to a probe level L when every cell of
///   level L holds at most leaf_size particles (found on the device: probeBeginBit): no
///   cell of level L or below splits, so the cells need no finer order, and the particles
///   of a cell at level L keep their input order. A uniform tree of 1e6 particles in
///   leaves of 256 then needs 2 of the sort's 8 passes (L = 5). Elsewhere, or for other
///   split rules, all bits are sorted.
enum class KeyOrder
{
  all_bits,
  cell_levels
};

/// Step 2's probe for KeyOrder::cell_levels: counts(c) += the particles keys(i), i = first,
/// first + stride, ... (`chunk` of them per item), of cell c of the probe level, and
/// *begin_bit (set to the level's first bit before) becomes 0 once a count passes `limit`.
/// Run twice (probeBeginBit): first on a 1-in-64 sample whose limit is an estimated 8 leaf
/// sizes, then exactly. A dense core (a Plummer sphere's) fills its cells so far past
/// leaf_size that the sample finds them at a 64th of the cost: the exact count's atomics on
/// those few cells serialise (docs/TUNING.md, "The octree's build"). Once begin_bit is 0 the
/// answer is known and the items only
/// read it. An item sends all its atomics before it looks at any result, so that they are
/// in flight together.
template <class MemorySpace>
struct CountProbeCells
{
  Kokkos::View<MortonKey *, MemorySpace> keys;
  Kokkos::View<int *, MemorySpace> counts;
  BeginBit<MemorySpace> begin_bit;
  int shift;
  int limit;
  std::size_t stride;
  std::size_t chunk;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t item) const
  {
    if (kfmm::detail::coherentLoad(&begin_bit()) == 0)
      return;
    std::size_t const first = item * chunk * stride;
    std::size_t const count =
        kfmm::detail::min(chunk, (keys.extent(0) - first + stride - 1) / stride);
    bool overflow = false;
    for (std::size_t k = 0; k < count; ++k)
      overflow =
          (Kokkos::atomic_fetch_add(
               &counts(static_cast<std::size_t>(keys(first + k * stride) >> shift)), 1) == limit) ||
          overflow;
    if (overflow)
      Kokkos::atomic_fetch_min(&begin_bit(), 0);
  }
};

/// probe(i) = 0 for the exact counts and the sample (2 x cells entries), and the begin bit
/// (probe(2 cells)) = shift.
template <class MemorySpace>
struct ClearProbeCells
{
  Kokkos::View<int *, MemorySpace> probe;
  std::size_t cells;
  int shift;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    probe(i) = i == 2 * cells ? shift : 0;
  }
};

/// The probe level of KeyOrder::cell_levels for n particles: the first whose cells hold a
/// quarter of leaf_size on average (a uniform set's fullest cell is then well below
/// leaf_size), at most 8 (2^24 cells, 64 MiB of counts).
inline int probeLevel(std::size_t n, int leaf_size)
{
  int level = 0;
  while (level < 8 && (std::size_t(1) << (3 * level)) * static_cast<std::size_t>(leaf_size) < 4 * n)
    ++level;
  return level;
}

/// KeyOrder::cell_levels' probe of the particles' Morton `keys`, for trees that split cells
/// of more than leaf_size particles: the bit below which the keys need no order, on the device, in
/// `probe` (taken from `memory`; the caller gives it back once the sort is queued).
template <class ExecutionSpace, class MemorySpace>
BeginBit<MemorySpace> probeBeginBit(ExecutionSpace const &space,
                                    kfmm::detail::Workspace<MemorySpace> &memory,
                                    Kokkos::View<MortonKey *, MemorySpace> const &keys,
                                    int leaf_size, Kokkos::View<int *, MemorySpace> &probe)
{
  std::size_t const n = keys.extent(0);
  int const level = probeLevel(n, leaf_size);
  int const shift = 3 * (max_level - level);
  std::size_t const cells = std::size_t(1) << (3 * level);
  memory.take(space, probe, "kfmm::tree::probe_cells", 2 * cells + 1);
  Kokkos::View<int *, MemorySpace> const counts(probe.data(), cells);
  Kokkos::View<int *, MemorySpace> const sample(probe.data() + cells, cells);
  BeginBit<MemorySpace> const begin_bit(probe.data() + 2 * cells);
  kfmm::detail::streamFor("kfmm::tree::clear_probe", space, 2 * cells + 1,
                          ClearProbeCells<MemorySpace>{probe, cells, shift});
  auto const count = [&](char const *label, Kokkos::View<int *, MemorySpace> const &into, int limit,
                         std::size_t stride, std::size_t chunk) {
    Kokkos::parallel_for(
        label,
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, (n + chunk * stride - 1) / (chunk * stride)),
        CountProbeCells<MemorySpace>{keys, into, begin_bit, shift, limit, stride, chunk});
  };
  constexpr std::size_t sample_stride = 64;
  count("kfmm::tree::sample_probe_cells", sample, 8 * leaf_size / int(sample_stride), sample_stride,
        1);
  count("kfmm::tree::probe_cells", counts, leaf_size, 1, 8);
  return begin_bit;
}

/// Steps 1 and 2 of the file comment: the Morton keys of `positions` in `cube` and their
/// permutation (taken from `memory`), sorted as `order` says (see buildOctreeOfValidInput).
template <class ExecutionSpace, class Positions, class CubeSource, class SplitRule>
std::pair<Kokkos::View<MortonKey *, typename ExecutionSpace::memory_space>,
          Kokkos::View<std::uint32_t *, typename ExecutionSpace::memory_space>>
sortedKeysOf(ExecutionSpace const &space,
             kfmm::detail::Workspace<typename ExecutionSpace::memory_space> &memory,
             Positions const &positions, CubeSource const &cube, SplitRule const &rule,
             KeyOrder order)
{
  using MemorySpace = typename ExecutionSpace::memory_space;
  auto const n = positions.extent(0);

  Kokkos::Profiling::pushRegion("kfmm::tree::build_keys");
  auto const keys =
      memory.template take<Kokkos::View<MortonKey *, MemorySpace>>(space, "kfmm::tree::keys", n);
  auto const permutation = memory.template take<Kokkos::View<std::uint32_t *, MemorySpace>>(
      space, "kfmm::tree::permutation", n);
  mortonKeysIn(space, cubeForKernels(cube), positions, keys);
  kfmm::detail::streamFor("kfmm::tree::identity", space, n,
                          IdentityPermutation<MemorySpace>{permutation});
  Kokkos::Profiling::popRegion();

  Kokkos::Profiling::pushRegion("kfmm::tree::build_sort");
  Kokkos::View<int *, MemorySpace> probe;
  BeginBit<MemorySpace> begin_bit;
  if constexpr (std::is_same<SplitRule, SplitByCount>::value)
    if (order == KeyOrder::cell_levels && n > 0)
      begin_bit = probeBeginBit(space, memory, keys, rule.leaf_size, probe);
  sortPairs(space, keys, permutation, 3 * max_level, memory, begin_bit);
  memory.give(probe);
  Kokkos::Profiling::popRegion();
  return {keys, permutation};
}

/// Steps 1 to 4 of the file comment on positions that checkPositions accepted, in a given
/// `cube` that holds them all (the common cube of a target and a source tree: a Cube, or one
/// the device finds, tree/DeviceCube.hpp, which checks the positions too), cells split by
/// `rule` (SplitByCount{leaf_size} for an ordinary tree), the tree's arrays taken from
/// `memory`, the leaves' radii measured by `leaf_radii`, the levels' sizes read as `reads`
/// says (buildCells) and the keys sorted as `order` says: the whole build, for an entry
/// point that checked its arguments in its own name (kfmm::Fmm).
template <class ExecutionSpace, class Positions, class CubeSource, class SplitRule,
          class MeasureLeafRadii = GatheredLeafRadii>
Octree<typename ExecutionSpace::memory_space>
buildOctreeOfValidInput(ExecutionSpace const &space,
                        kfmm::detail::Workspace<typename ExecutionSpace::memory_space> &memory,
                        Positions const &positions, CubeSource const &cube, SplitRule const &rule,
                        MeasureLeafRadii const &leaf_radii = {},
                        LevelReads reads = LevelReads::tuned, KeyOrder order = KeyOrder::all_bits)
{
  kfmm::detail::ScopedRegion region("kfmm::tree::build");
  auto const sorted = sortedKeysOf(space, memory, positions, cube, rule, order);
  return buildCells(space, memory, positions, cube, sorted.first, sorted.second, rule, leaf_radii,
                    reads);
}

/// buildOctreeOfValidInput for the two trees of a solver of sources and targets, on one
/// cube, with the same rule, reads and key order: where the levels are counted
/// (countsLevels), both trees' keys are sorted and counted before the host reads the sizes
/// of both at once, so that the two builds wait for the device once, not once each.
template <class ExecutionSpace, class Sources, class Targets, class CubeSource,
          class SourceLeafRadii, class TargetLeafRadii>
std::pair<Octree<typename ExecutionSpace::memory_space>,
          Octree<typename ExecutionSpace::memory_space>>
buildTwoOctreesOfValidInput(ExecutionSpace const &space,
                            kfmm::detail::Workspace<typename ExecutionSpace::memory_space> &memory,
                            Sources const &sources, Targets const &targets, CubeSource const &cube,
                            SplitByCount const &rule, SourceLeafRadii const &source_radii,
                            TargetLeafRadii const &target_radii, LevelReads reads, KeyOrder order)
{
  using MemorySpace = typename ExecutionSpace::memory_space;
  if (!countsLevels<ExecutionSpace, SplitByCount>(reads))
  {
    auto source_tree =
        buildOctreeOfValidInput(space, memory, sources, cube, rule, source_radii, reads, order);
    return {source_tree, buildOctreeOfValidInput(space, memory, targets, cube, rule, target_radii,
                                                 reads, order)};
  }
  kfmm::detail::ScopedRegion region("kfmm::tree::build_two");
  auto const sorted = [&](auto const &positions) {
    auto const keys = sortedKeysOf(space, memory, positions, cube, rule, order);
    return CellsInBuild<MemorySpace>(keys.first, keys.second, rule.leaf_size);
  };
  CellsInBuild<MemorySpace> builds[2] = {sorted(sources), sorted(targets)};
  buildCountedLevels(space, memory, rule, builds, 2);
  return {assembleCells(space, memory, sources, cube, source_radii, builds[0]),
          assembleCells(space, memory, targets, cube, target_radii, builds[1])};
}

} // namespace detail

/// Builds the adaptive octree of `positions`: bounding cube, Morton keys, radix sort of
/// (key, particle index), then cells level by level. A cell splits while it holds more than
/// `leaf_size` particles and its level is below tree::max_level (21); empty octants make no
/// cell. The tree lives in the execution space's memory space.
///
/// \param [in] space      execution space instance the kernels run on
/// \param [in] positions  N x 3 particle positions (float or double)
/// \param [in] leaf_size  the most particles a leaf holds above level 21; >= 1
/// \return the tree; N = 0 gives a tree with no cells
/// \throws kfmm::Exception on leaf_size < 1, positions not N x 3, or NaN/Inf coordinates
/// (the message names the argument and, for positions, the first bad index).
template <class ExecutionSpace, class Positions>
Octree<typename ExecutionSpace::memory_space> buildOctree(ExecutionSpace const &space,
                                                          Positions const &positions, int leaf_size)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::tree::buildOctree: the first argument must be a Kokkos execution space");
  std::string const where = "kfmm::tree::buildOctree";
  detail::checkLeafSize(where, leaf_size);
  Cube const cube = cubeAround(detail::checkedBoundingBox(space, where, positions, "positions"));
  return detail::buildOctreeOfValidInput(
      space, kfmm::detail::Workspace<typename ExecutionSpace::memory_space>::direct(), positions,
      cube, detail::SplitByCount{leaf_size});
}

namespace detail
{

/// Cell c's centre recomputed from its key in `cube`, and its radius in the frame's units.
template <class MemorySpace>
struct MoveToFrame
{
  Cube cube;
  kfmm::detail::UnitFrame frame;
  Kokkos::View<MortonKey *, MemorySpace> cell_keys;
  Kokkos::View<int *, MemorySpace> level;
  Kokkos::View<double *[3], MemorySpace> centre;
  Kokkos::View<double *, MemorySpace> radius;

  KOKKOS_INLINE_FUNCTION void operator()(int c) const
  {
    double x[3];
    cellCentre(cube, cell_keys(c), level(c), x);
    for (int d = 0; d < 3; ++d)
      centre(c, d) = x[d];
    radius(c) = frame.length(radius(c));
  }
};

} // namespace detail

/// The tree in the coordinates x' = frame.position(x) (detail/UnitFrame.hpp): its cube, every
/// cell's centre (recomputed from the cell's key in the new cube, so that the Morton
/// convention holds exactly) and radius. Keys, particle ranges and structure are unchanged.
template <class ExecutionSpace, class MemorySpace>
void moveToFrame(ExecutionSpace const &space, Octree<MemorySpace> &tree,
                 kfmm::detail::UnitFrame const &frame)
{
  Cube cube = tree.cube;
  for (int d = 0; d < 3; ++d)
    cube.origin[d] = frame.position(cube.origin[d], d);
  cube.side = frame.length(cube.side);
  cube.extent = frame.length(cube.extent);
  tree.cube = cube;
  Kokkos::parallel_for("kfmm::tree::move_to_frame",
                       Kokkos::RangePolicy<ExecutionSpace>(space, 0, tree.numCells()),
                       detail::MoveToFrame<MemorySpace>{cube, frame, tree.cell_keys, tree.level,
                                                        tree.centre, tree.radius});
}

} // namespace kfmm::tree

#endif
