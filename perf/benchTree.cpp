// SPDX-License-Identifier: BSD-3-Clause
// Tree construction and interaction lists: time per stage (Morton keys, radix sort, octree
// cells, interaction lists) and the memory the tree and the lists hold per particle, against
// N, for a uniform cube and a Plummer sphere, on every execution space this Kokkos has.
// One line per (space, distribution, N): the median of `repeat` timed runs after one
// warm-up, each stage fenced, and the longest rows of the lists (the near field's in source
// particles, the far field's in entries).
//
//   kfmm_bench_tree [--n N[,N...]] [--repeat R] [--theta T] [--leaf-size L]
//                   [--method fmm|treecode] [--dist uniform,plummer] [--precision float|double]
//                   [--backends cuda,host]
// Defaults: N = 1e4 .. 1e8 on CUDA, 1e4 .. 1e7 on the host space (OpenMP, else Serial);
// theta 0.5, leaf size 64, fmm, float positions, 5 runs.
#include <kfmm/Options.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/Octree.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include "BenchmarkSupport.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace
{

struct Settings
{
  int repeat = 5;
  double theta = 0.5;
  int leaf_size = 64;
  kfmm::Method method = kfmm::Method::fmm;
  std::vector<kfmm::Distribution> distributions{kfmm::Distribution::uniform,
                                                kfmm::Distribution::plummer};
  bool single = true;
  bool device = true; ///< run on CUDA when Kokkos has it
  bool host = true;   ///< run on the host space
};

using kfmm::bench::median;

template <class View>
double bytes(View const &v)
{
  return static_cast<double>(v.span()) * sizeof(typename View::value_type);
}

template <class ExecutionSpace, class Real>
void run(kfmm::Distribution distribution, std::size_t n, Settings const &settings)
{
  using Memory = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  Kokkos::View<Real *[3], Memory> x("kfmm::bench::x", n);
  {
    Kokkos::View<Real *, Memory> q("kfmm::bench::q", n);
    kfmm::generate(space, distribution, 1, x, q);
  }
  bool const fmm = settings.method == kfmm::Method::fmm;
  std::vector<double> t_keys, t_sort, t_cells, t_lists;
  kfmm::tree::Octree<Memory> tree;
  kfmm::tree::InteractionLists<Memory> lists;
  for (int r = 0; r <= settings.repeat; ++r)
  {
    tree = {};
    lists = {};
    space.fence();
    Kokkos::Timer timer;
    auto const cube = kfmm::tree::boundingCube(space, x);
    Kokkos::View<kfmm::tree::MortonKey *, Memory> keys(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::bench::keys"), n);
    Kokkos::View<std::uint32_t *, Memory> permutation(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::bench::permutation"), n);
    kfmm::tree::computeMortonKeys(space, cube, x, keys);
    Kokkos::parallel_for(
        "kfmm::bench::identity", Kokkos::RangePolicy<ExecutionSpace>(space, 0, n),
        KOKKOS_LAMBDA(std::size_t i) { permutation(i) = static_cast<std::uint32_t>(i); });
    space.fence();
    double const keys_s = timer.seconds();
    timer.reset();
    kfmm::tree::sortPairs(space, keys, permutation, 3 * kfmm::tree::max_level);
    space.fence();
    double const sort_s = timer.seconds();
    timer.reset();
    tree = kfmm::tree::buildOctreeFromSortedKeys(space, x, cube, keys, permutation,
                                                 settings.leaf_size);
    space.fence();
    double const cells_s = timer.seconds();
    timer.reset();
    lists = kfmm::tree::buildInteractionLists(space, tree, settings.theta, settings.method);
    space.fence();
    double const lists_s = timer.seconds();
    if (r > 0) // the first run is a warm-up
    {
      t_keys.push_back(keys_s);
      t_sort.push_back(sort_s);
      t_cells.push_back(cells_s);
      t_lists.push_back(lists_s);
    }
  }
  double const tree_bytes = bytes(tree.keys) + bytes(tree.permutation) + bytes(tree.cell_keys) +
                            bytes(tree.level) + bytes(tree.centre) + bytes(tree.radius) +
                            bytes(tree.particle_begin) + bytes(tree.particle_end) +
                            bytes(tree.first_child) + bytes(tree.child_count) + bytes(tree.parent) +
                            bytes(tree.leaves);
  double const list_bytes = bytes(lists.m2l.offsets) + bytes(lists.m2l.sources) +
                            bytes(lists.m2p.offsets) + bytes(lists.m2p.sources) +
                            bytes(lists.p2p.offsets) + bytes(lists.p2p.sources);
  // The longest near-field row in source particles, and the longest far-field row: a few
  // such rows decide a list kernel's time when its teams take one row each.
  long long longest_near = 0;
  auto const p2p_offsets = lists.p2p.offsets;
  auto const p2p_sources = lists.p2p.sources;
  auto const begin = tree.particle_begin;
  auto const end = tree.particle_end;
  Kokkos::parallel_reduce(
      "kfmm::bench::longest_p2p_row",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, lists.p2p.numRows()),
      KOKKOS_LAMBDA(int row, long long &longest) {
        long long sources = 0;
        for (auto e = p2p_offsets(row); e < p2p_offsets(row + 1); ++e)
          sources += end(p2p_sources(e)) - begin(p2p_sources(e));
        longest = sources > longest ? sources : longest;
      },
      Kokkos::Max<long long>(longest_near));
  long long longest_far = 0;
  auto const far_offsets = fmm ? lists.m2l.offsets : lists.m2p.offsets;
  Kokkos::parallel_reduce(
      "kfmm::bench::longest_far_row",
      Kokkos::RangePolicy<ExecutionSpace>(space, 0, static_cast<int>(far_offsets.extent(0)) - 1),
      KOKKOS_LAMBDA(int row, long long &longest) {
        long long const entries = far_offsets(row + 1) - far_offsets(row);
        longest = entries > longest ? entries : longest;
      },
      Kokkos::Max<long long>(longest_far));
  double const keys_s = median(t_keys), sort_s = median(t_sort), cells_s = median(t_cells),
               lists_s = median(t_lists);
  double const per = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  std::printf("%-7s %-4s %-8s N=%-10zu keys %.3e sort %.3e octree %.3e lists %.3e total "
              "%.3e s | depth %2d cells %zu leaves %d %s %lld p2p %lld rounds %d | longest rows: "
              "p2p %lld sources, %s %lld | B/particle tree %.1f lists %.1f\n",
              ExecutionSpace::name(), sizeof(Real) == 4 ? "fp32" : "fp64",
              kfmm::distributionName(distribution), n, keys_s, sort_s, cells_s, lists_s,
              keys_s + sort_s + cells_s + lists_s, tree.depth(),
              static_cast<std::size_t>(tree.numCells()), tree.numLeaves(), fmm ? "m2l" : "m2p",
              static_cast<long long>(fmm ? lists.m2l.size : lists.m2p.size),
              static_cast<long long>(lists.p2p.size), lists.rounds, longest_near,
              fmm ? "m2l" : "m2p", longest_far, tree_bytes * per, list_bytes * per);
  std::fflush(stdout);
}

template <class ExecutionSpace>
void runSpace(std::vector<std::size_t> const &sizes, Settings const &settings)
{
  for (auto d : settings.distributions)
    for (auto n : sizes)
    {
      if (settings.single)
        run<ExecutionSpace, float>(d, n, settings);
      else
        run<ExecutionSpace, double>(d, n, settings);
    }
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  std::string device_sizes = "1e4,1e5,1e6,1e7,1e8", host_sizes = "1e4,1e5,1e6,1e7";
  Settings settings;
  try
  {
    for (int i = 1; i < argc; ++i)
    {
      std::string const arg = argv[i];
      bool const has_value = i + 1 < argc;
      if (arg == "--n" && has_value)
        device_sizes = host_sizes = argv[++i];
      else if (arg == "--repeat" && has_value)
        settings.repeat = std::max(1, std::atoi(argv[++i]));
      else if (arg == "--theta" && has_value)
        settings.theta = std::stod(argv[++i]);
      else if (arg == "--leaf-size" && has_value)
        settings.leaf_size = std::atoi(argv[++i]);
      else if (arg == "--method" && has_value)
      {
        std::string const m = argv[++i];
        if (m != "fmm" && m != "treecode")
          throw kfmm::Exception("--method must be fmm or treecode");
        settings.method = m == "fmm" ? kfmm::Method::fmm : kfmm::Method::treecode;
      }
      else if (arg == "--dist" && has_value)
        settings.distributions =
            kfmm::bench::parseList<kfmm::Distribution>(argv[++i], kfmm::distributionFromName);
      else if (arg == "--backends" && has_value)
      {
        auto const names = kfmm::bench::parseList<std::string>(argv[++i], [](std::string const &b) {
          if (b != "cuda" && b != "host")
            throw kfmm::Exception("--backends takes cuda and/or host, got '" + b + "'");
          return b;
        });
        settings.device = std::find(names.begin(), names.end(), "cuda") != names.end();
        settings.host = std::find(names.begin(), names.end(), "host") != names.end();
      }
      else if (arg == "--precision" && has_value)
      {
        std::string const p = argv[++i];
        if (p != "float" && p != "double")
          throw kfmm::Exception("--precision must be float or double");
        settings.single = p == "float";
      }
      else
        throw kfmm::Exception("unknown argument '" + arg + "'");
    }
    std::printf("# theta %.3g, leaf size %d, %s, positions in %s; median of %d runs\n",
                settings.theta, settings.leaf_size,
                settings.method == kfmm::Method::fmm ? "fmm" : "treecode",
                settings.single ? "float" : "double", settings.repeat);
#if defined(KOKKOS_ENABLE_CUDA)
    if (settings.device)
      runSpace<Kokkos::Cuda>(kfmm::bench::parseSizes(device_sizes), settings);
#endif
    if (settings.host)
    {
#if defined(KOKKOS_ENABLE_OPENMP)
      std::printf("# OpenMP threads: %d\n", Kokkos::OpenMP().concurrency());
      runSpace<Kokkos::OpenMP>(kfmm::bench::parseSizes(host_sizes), settings);
#elif defined(KOKKOS_ENABLE_SERIAL)
      runSpace<Kokkos::Serial>(kfmm::bench::parseSizes(host_sizes), settings);
#endif
    }
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr,
                 "%s\nusage: %s [--n N[,N...]] [--repeat R] [--theta T] [--leaf-size L] "
                 "[--method fmm|treecode] [--dist uniform,plummer,...] "
                 "[--precision float|double] [--backends cuda,host]\n",
                 e.what(), argv[0]);
    return 2;
  }
  return 0;
}
