// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_RANK_PARTICLES_HPP
#define KFMM_TESTS_RANK_PARTICLES_HPP

// A rank's share of a whole problem that every rank of an MPI test holds on the host.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <utility>
#include <vector>

namespace kfmm::test
{

template <class Memory>
using RankParticles = std::pair<Kokkos::View<double *[3], Memory>, Kokkos::View<double *, Memory>>;

/// The particles `rows` of the whole problem (host `all_x`, `all_q`), in that order, as this
/// rank's positions and charges in Memory.
template <class Memory, class AllX, class AllQ>
RankParticles<Memory> rankParticles(AllX const &all_x, AllQ const &all_q,
                                    std::vector<std::size_t> const &rows)
{
  std::size_t const m = rows.size();
  Kokkos::View<double *[3], Memory> x("kfmm::test::x", m);
  Kokkos::View<double *, Memory> q("kfmm::test::q", m);
  auto x_h = Kokkos::create_mirror_view(x);
  auto q_h = Kokkos::create_mirror_view(q);
  for (std::size_t k = 0; k < m; ++k)
  {
    for (int c = 0; c < 3; ++c)
      x_h(k, c) = all_x(rows[k], c);
    q_h(k) = all_q(rows[k]);
  }
  Kokkos::deep_copy(x, x_h);
  Kokkos::deep_copy(q, q_h);
  return {x, q};
}

} // namespace kfmm::test

#endif
