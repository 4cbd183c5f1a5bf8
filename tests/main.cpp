// SPDX-License-Identifier: BSD-3-Clause
// Test main: Kokkos is initialised first (it removes its --kokkos-* arguments), then Catch2
// runs with what is left.
#include <Kokkos_Core.hpp>

#include <catch2/catch_session.hpp>

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  return Catch::Session().run(argc, argv);
}
