// SPDX-License-Identifier: BSD-3-Clause
// Two unit charges one unit apart: each sees potential 1 and a field (the gradient of the
// potential, so for gravity the attraction) of magnitude 1 pointing at the other. Exit code 0 when
// the installed kfmm says so.
#include <kfmm/kfmm.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultExecutionSpace;
  Kokkos::View<double *[3], Space::memory_space> x("x", 2);
  Kokkos::View<double *, Space::memory_space> q("q", 2);
  Kokkos::View<double *, Space::memory_space> phi("phi", 2);
  Kokkos::View<double *[3], Space::memory_space> field("field", 2);
  Kokkos::parallel_for(
      "consumer::init", Kokkos::RangePolicy<Space>(0, 2), KOKKOS_LAMBDA(int i) {
        x(i, 0) = i;
        q(i) = 1;
      });
  kfmm::directSum(Space{}, x, q, phi, field);
  auto phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, phi);
  auto field_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, field);
  bool const ok = std::abs(phi_h(0) - 1) < 1e-14 && std::abs(phi_h(1) - 1) < 1e-14 &&
                  std::abs(field_h(0, 0) - 1) < 1e-14 && std::abs(field_h(1, 0) + 1) < 1e-14;
  std::printf("kfmm consumer: phi = (%g, %g), field_x = (%g, %g): %s\n", phi_h(0), phi_h(1),
              field_h(0, 0), field_h(1, 0), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
