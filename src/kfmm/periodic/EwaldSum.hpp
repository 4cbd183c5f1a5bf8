// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_PERIODIC_EWALD_SUM_HPP
#define KFMM_PERIODIC_EWALD_SUM_HPP

// Ewald's sum in double: the reference of periodic boundaries, as the direct sum is of free
// space (Ewald 1921; Deserno & Holm 1998). With period L, V = L^3 and a splitting parameter
// a, the potential at a target x of sources q_j at x_j and all their periodic images is
//
//   phi(x) = sum_j sum_n' q_j erfc(a r_jn) / r_jn                      r_jn = |x - x_j + nL|
//          + sum_{k != 0} (4 pi / V) e^{-k^2 / 4a^2} / k^2 Re(e^{i k.x} S(k))   k = 2 pi m / L
//          - 2 a / sqrt(pi) sum_{x_j = x} q_j  -  pi / (a^2 V) sum_j q_j,
//
// S(k) = sum_j q_j e^{-i k.x_j}, where n' leaves out the pairs at distance zero (a target
// does not act on itself, nor does a source at its very position: the solver's convention),
// whose images stay. This is the tin-foil result, with a uniform neutralising background
// where the charges do not sum to zero, and zero mean over the box (the last term); the field
// is its gradient. Linear in the sources: sums over parts of them add up. Every term above
// 1e-16 of its sum's scale is kept: real-space images while erfc(a r) > e^-38, wave vectors
// while e^{-k^2 / 4a^2} > e^-38. There are about 1000 (a L)^-3 real-space images per pair
// (an erfc and an exp each) and 16 (a L)^3 wave vectors per particle: a sine and a cosine
// each at a target, a complex product each at a source (its row's recurrence,
// StructureFactors), about a fifth of that. `alpha_period` = a L balances the two,
// (a L)^6 = 155 N_t N_s / (N_t + N_s / 5) with the functions' costs measured on a CPU.

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Validation.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

namespace kfmm::periodic
{

using kfmm::detail::pi;

namespace detail
{

/// -ln of the terms' cut: erfc(a r) and e^{-k^2/4a^2} below e^-38 (about 3e-17) are dropped.
constexpr double ewald_cut = 38;
/// The work items the sums over the sources are split into (chunks of the sources per target
/// or wave vector): enough to occupy a GPU when few targets are asked for.
constexpr std::size_t ewald_work_items = std::size_t(1) << 18;
/// The fewest sources in a chunk, so that partial sums stay few against the work.
constexpr std::size_t ewald_least_chunk = 256;
/// The most wave vectors of a row (StructureFactors), whose sums a work item keeps at once.
constexpr int ewald_row_length = 32;

/// Sources [begin, end) of chunk `chunk` of `chunks` over n.
KOKKOS_INLINE_FUNCTION void chunkBounds(std::size_t n, int chunk, int chunks, std::size_t &begin,
                                        std::size_t &end)
{
  begin = n * static_cast<std::size_t>(chunk) / static_cast<std::size_t>(chunks);
  end = n * (static_cast<std::size_t>(chunk) + 1) / static_cast<std::size_t>(chunks);
}

/// Work item i = chunk x items + item: one target's (or one wave vector's) sum over one
/// chunk of the sources, so that the device has items x chunks of them (a few targets over
/// many sources keep every core busy), consecutive items reading the same source at once.
/// Each item's partial sums go to partials(i, :); sumChunks adds them up.
struct ChunkedItem
{
  int item;
  int chunk;

  KOKKOS_INLINE_FUNCTION ChunkedItem(int i, int items) : item(i % items), chunk(i / items) {}
};

/// One target's real-space sum and self term over one chunk of the sources: partials(i, :)
/// = (potential, field).
template <class Targets, class Sources, class Charges, class Partials>
struct EwaldRealSpace
{
  Targets targets;
  Sources sources;
  Charges charges;
  Partials partials;
  int chunks;
  double period;
  double alpha;
  double cutoff; ///< real-space terms within this distance
  int reach;     ///< images |n_d| <= reach of the nearest one

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    ChunkedItem const at(i, static_cast<int>(targets.extent(0)));
    int const t = at.item;
    std::size_t begin, end;
    chunkBounds(sources.extent(0), at.chunk, chunks, begin, end);
    double const two_over_root_pi = 2 / kfmm::detail::sqrt(pi);
    double phi = 0, g[3] = {0, 0, 0};
    double const cutoff2 = cutoff * cutoff;
    for (std::size_t j = begin; j < end; ++j)
    {
      double const q = static_cast<double>(charges(j));
      double d[3];
      for (int c = 0; c < 3; ++c)
      {
        d[c] = static_cast<double>(targets(t, c)) - static_cast<double>(sources(j, c));
        d[c] -= period * kfmm::detail::floor(d[c] / period + 0.5);
      }
      for (int nx = -reach; nx <= reach; ++nx)
      {
        double const dx = d[0] + nx * period;
        if (dx * dx >= cutoff2)
          continue;
        for (int ny = -reach; ny <= reach; ++ny)
        {
          double const dy = d[1] + ny * period;
          if (dx * dx + dy * dy >= cutoff2)
            continue;
          for (int nz = -reach; nz <= reach; ++nz)
          {
            double const dz = d[2] + nz * period;
            double const r2 = dx * dx + dy * dy + dz * dz;
            if (r2 >= cutoff2)
              continue;
            if (r2 == 0)
            {
              // A source at the target itself: its images act, it does not.
              phi -= q * alpha * two_over_root_pi;
              continue;
            }
            double const r = kfmm::detail::sqrt(r2);
            double const e = kfmm::detail::erfc(alpha * r) / r;
            phi += q * e;
            // d/dr (erfc(a r) / r) / r, times the offset: the gradient at the target.
            double const radial =
                -(e + alpha * two_over_root_pi * kfmm::detail::exp(-alpha * alpha * r2)) / r2;
            g[0] += q * radial * dx;
            g[1] += q * radial * dy;
            g[2] += q * radial * dz;
          }
        }
      }
    }
    partials(i, 0) = phi;
    for (int c = 0; c < 3; ++c)
      partials(i, 1 + c) = g[c];
  }
};

/// S(k) = sum_j q_j e^{-i k . x_j} of one row of wave vectors over one chunk of the sources:
/// a row's wave vectors share k_x and k_y and take consecutive k_z, so that each source's
/// phases follow from one sine and cosine and one step, e^{-i k_z x_z} advancing by
/// e^{-i 2 pi z / L}, instead of a sine and cosine each. partials(chunk x (waves + 1) + w, :) =
/// (Re, Im) of each wave vector w of the row; the item past the last row sums the charges
/// (Re) into w = waves.
template <class Sources, class Charges, class MemorySpace, class Partials>
struct StructureFactors
{
  Kokkos::View<double *[4], Kokkos::LayoutRight, MemorySpace> waves; ///< (k_x, k_y, k_z, weight)
  Kokkos::View<int *[2], Kokkos::LayoutRight, MemorySpace> rows;     ///< (first wave, count)
  Sources sources;
  Charges charges;
  Partials partials;
  int chunks;
  double step; ///< 2 pi / L: k_z from one wave vector of a row to the next

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    int const num_rows = static_cast<int>(rows.extent(0));
    int const num_waves = static_cast<int>(waves.extent(0));
    ChunkedItem const at(i, num_rows + 1);
    std::size_t begin, end;
    chunkBounds(sources.extent(0), at.chunk, chunks, begin, end);
    std::size_t const out = static_cast<std::size_t>(at.chunk) * (num_waves + 1);
    if (at.item == num_rows)
    {
      double sum = 0;
      for (std::size_t j = begin; j < end; ++j)
        sum += static_cast<double>(charges(j));
      partials(out + num_waves, 0) = sum;
      partials(out + num_waves, 1) = 0;
      return;
    }
    int const first = rows(at.item, 0), count = rows(at.item, 1);
    double re[ewald_row_length], im[ewald_row_length];
    for (int l = 0; l < count; ++l)
      re[l] = im[l] = 0;
    for (std::size_t j = begin; j < end; ++j)
    {
      double phase = 0;
      for (int c = 0; c < 3; ++c)
        phase += waves(first, c) * static_cast<double>(sources(j, c));
      double const q = static_cast<double>(charges(j));
      double const z_step = step * static_cast<double>(sources(j, 2));
      double const cz = kfmm::detail::cos(z_step), sz = kfmm::detail::sin(z_step);
      double cs = q * kfmm::detail::cos(phase), sn = q * kfmm::detail::sin(phase);
      for (int l = 0; l < count; ++l)
      {
        re[l] += cs;
        im[l] -= sn;
        double const next = cs * cz - sn * sz;
        sn = sn * cz + cs * sz;
        cs = next;
      }
    }
    for (int l = 0; l < count; ++l)
    {
      partials(out + first + l, 0) = re[l];
      partials(out + first + l, 1) = im[l];
    }
  }
};

/// sums(item, c) = the sum over the chunks of partials(chunk x items + item, c).
template <class Partials, class Sums>
struct SumChunks
{
  Partials partials;
  Sums sums;
  int chunks;

  KOKKOS_INLINE_FUNCTION void operator()(int item) const
  {
    int const items = static_cast<int>(sums.extent(0));
    for (std::size_t c = 0; c < sums.extent(1); ++c)
    {
      double sum = 0;
      for (int chunk = 0; chunk < chunks; ++chunk)
        sum += partials(chunk * items + item, c);
      sums(item, c) = sum;
    }
  }
};

/// potential(t) += the sum over the chunks of partials(chunk x targets + t, 0), and field(t, :)
/// of partials(..., 1..3): the real-space sums of EwaldRealSpace.
template <class Partials, class Potential, class Field>
struct AddChunkSums
{
  Partials partials;
  Potential potential;
  Field field;
  int targets;
  int chunks;

  KOKKOS_INLINE_FUNCTION void operator()(int t) const
  {
    for (int chunk = 0; chunk < chunks; ++chunk)
    {
      int const i = chunk * targets + t;
      potential(t) += partials(i, 0);
      for (int c = 0; c < 3; ++c)
        field(t, c) += partials(i, 1 + c);
    }
  }
};

/// One target's wave-vector sum and the background's constant.
template <class Targets, class Potential, class Field, class MemorySpace>
struct EwaldWaveSpace
{
  Kokkos::View<double *[4], Kokkos::LayoutRight, MemorySpace> waves;
  /// S(k) per wave vector (StructureFactors' sums), and past the last the charges' sum.
  Kokkos::View<double **, MemorySpace> factors;
  Targets targets;
  Potential potential;
  Field field;
  double background; ///< pi / (a^2 V)

  KOKKOS_INLINE_FUNCTION void operator()(int t) const
  {
    double phi = 0, g[3] = {0, 0, 0};
    for (std::size_t w = 0; w < waves.extent(0); ++w)
    {
      double phase = 0;
      for (int c = 0; c < 3; ++c)
        phase += waves(w, c) * static_cast<double>(targets(t, c));
      double const cs = kfmm::detail::cos(phase), sn = kfmm::detail::sin(phase);
      // e^{i k.x} S(k): its real part is the potential's term, its imaginary part times -k
      // the gradient's.
      double const re = cs * factors(w, 0) - sn * factors(w, 1);
      double const im = cs * factors(w, 1) + sn * factors(w, 0);
      phi += waves(w, 3) * re;
      for (int c = 0; c < 3; ++c)
        g[c] -= waves(w, 3) * waves(w, c) * im;
    }
    potential(t) += phi - background * factors(waves.extent(0), 0);
    for (int c = 0; c < 3; ++c)
      field(t, c) += g[c];
  }
};

/// A host table of `Width` values per row on the device, labelled `label`: both in the
/// vector's layout, which a copy between memory spaces needs.
template <int Width, class T, class ExecutionSpace>
Kokkos::View<T *[Width], Kokkos::LayoutRight, typename ExecutionSpace::memory_space>
tableOnDevice(ExecutionSpace const &space, std::vector<T> const &host, std::string const &label) {
  std::size_t const rows = host.size() / Width;
  Kokkos::View<T *[Width], Kokkos::LayoutRight, typename ExecutionSpace::memory_space> table(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label), rows);
  Kokkos::deep_copy(space, table,
                    Kokkos::View<T const *[Width], Kokkos::LayoutRight, Kokkos::HostSpace,
                                 Kokkos::MemoryUnmanaged>(host.data(), rows));
  return table;
}

} // namespace detail

/// a L for `targets` and `sources` counts: the balance of the file comment's two costs, within
/// [3, 12].
inline double ewaldSplitting(std::size_t targets, std::size_t sources)
{
  double const ratio = 155.0 * static_cast<double>(targets) * static_cast<double>(sources) /
                       (static_cast<double>(targets) + static_cast<double>(sources) / 5 + 1);
  return kfmm::detail::min(12.0, kfmm::detail::max(3.0, std::pow(ratio, 1.0 / 6)));
}

/// Adds to `potential` and `field` (double, at `targets`) the potential and field of the
/// charges at `sources` and of all their images under the period `period` (the file
/// comment): positions anywhere (only their differences modulo the period count), in double.
/// `alpha_period` = a L, the splitting (0: ewaldSplitting's).
template <class ExecutionSpace, class Targets, class Sources, class Charges, class Potential,
          class Field>
void ewaldSum(ExecutionSpace const &space, double period, Targets const &targets,
              Sources const &sources, Charges const &charges, Potential const &potential,
              Field const &field, double alpha_period = 0)
{
  using Memory = typename ExecutionSpace::memory_space;
  kfmm::detail::require(period > 0 && std::isfinite(period), "kfmm::periodic::ewaldSum",
                        "the period must be finite and > 0, got " +
                            kfmm::detail::formatNumber(period));
  double const a_l = alpha_period > 0 ? alpha_period
                                      : ewaldSplitting(targets.extent(0), sources.extent(0));
  double const alpha = a_l / period;
  double const volume = period * period * period;
  // erfc(x) < e^-x^2 for x > 0: the cut's distance. Wave vectors: pi^2 m^2 / (a L)^2 < cut.
  double const cutoff = std::sqrt(detail::ewald_cut) / alpha;
  int const reach = static_cast<int>(std::ceil(cutoff / period + 0.5));
  int const m_max = static_cast<int>(std::ceil(std::sqrt(detail::ewald_cut) * a_l / pi));
  // Half the wave vectors (m > 0 in lexicographic order), each weighted twice for -m, in
  // rows of consecutive m_z at one (m_x, m_y) (those within the cut are an interval), each
  // row cut into pieces of at most ewald_row_length.
  std::vector<double> host_waves;
  std::vector<int> host_rows;
  for (int mx = 0; mx <= m_max; ++mx)
    for (int my = -m_max; my <= m_max; ++my)
      for (int mz = -m_max, in_row = 0; mz <= m_max; ++mz)
      {
        bool const positive = mx > 0 || (mx == 0 && (my > 0 || (my == 0 && mz > 0)));
        double const m2 = double(mx * mx + my * my + mz * mz);
        if (!positive || pi * pi * m2 / (a_l * a_l) > detail::ewald_cut)
          continue;
        if (in_row == 0 || in_row == detail::ewald_row_length)
        {
          host_rows.insert(host_rows.end(), {static_cast<int>(host_waves.size() / 4), 0});
          in_row = 0;
        }
        ++in_row;
        ++host_rows.back();
        double const k = 2 * pi / period;
        double const k2 = k * k * m2;
        host_waves.insert(host_waves.end(),
                          {k * mx, k * my, k * mz,
                           2 * 4 * pi / volume * std::exp(-k2 / (4 * alpha * alpha)) / k2});
      }
  auto const waves = detail::tableOnDevice<4>(space, host_waves, "kfmm::periodic::ewald_waves");
  auto const rows = detail::tableOnDevice<2>(space, host_rows, "kfmm::periodic::ewald_rows");
  std::size_t const num_waves = waves.extent(0), num_rows = rows.extent(0);
  using Policy = Kokkos::RangePolicy<ExecutionSpace>;
  using Partials = Kokkos::View<double **, Memory>;
  std::size_t const ns = sources.extent(0);
  int const nt = static_cast<int>(targets.extent(0));
  // Each of `items` sums over one of `chunksFor(items)` chunks of the sources: about
  // ewald_work_items in all, no chunk below ewald_least_chunk sources.
  auto const chunksFor = [&](std::size_t items) {
    std::size_t const by_items = detail::ewald_work_items / (items > 0 ? items : 1);
    std::size_t const by_size = (ns + detail::ewald_least_chunk - 1) / detail::ewald_least_chunk;
    return static_cast<int>(std::max<std::size_t>(1, std::min(by_items, by_size)));
  };
  int const wave_chunks = chunksFor(num_rows + 1);
  Partials wave_partials(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                            "kfmm::periodic::ewald_factor_partials"),
                         (num_waves + 1) * static_cast<std::size_t>(wave_chunks), 2);
  Kokkos::parallel_for(
      "kfmm::periodic::ewald_structure_factors",
      Policy(space, 0, (num_rows + 1) * static_cast<std::size_t>(wave_chunks)),
      detail::StructureFactors<Sources, Charges, Memory, Partials>{
          waves, rows, sources, charges, wave_partials, wave_chunks, 2 * pi / period});
  Partials factors(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::periodic::ewald_factors"),
      num_waves + 1, 2);
  Kokkos::parallel_for("kfmm::periodic::ewald_sum_factors", Policy(space, 0, factors.extent(0)),
                       detail::SumChunks<Partials, Partials>{wave_partials, factors, wave_chunks});
  Kokkos::parallel_for(
      "kfmm::periodic::ewald_wave_space", Policy(space, 0, nt),
      detail::EwaldWaveSpace<Targets, Potential, Field, Memory>{
          waves, factors, targets, potential, field, pi / (alpha * alpha * volume)});

  int const real_chunks = chunksFor(static_cast<std::size_t>(nt));
  Partials real_partials(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::periodic::ewald_real_partials"),
      static_cast<std::size_t>(nt) * static_cast<std::size_t>(real_chunks), 4);
  Kokkos::parallel_for(
      "kfmm::periodic::ewald_real_space", Policy(space, 0, real_partials.extent(0)),
      detail::EwaldRealSpace<Targets, Sources, Charges, Partials>{
          targets, sources, charges, real_partials, real_chunks, period, alpha, cutoff, reach});
  Kokkos::parallel_for("kfmm::periodic::ewald_add_real_space", Policy(space, 0, nt),
                       detail::AddChunkSums<Partials, Potential, Field>{real_partials, potential,
                                                                        field, nt, real_chunks});
  space.fence(); // the wave vectors' host copy goes out of scope
}

} // namespace kfmm::periodic

#endif
