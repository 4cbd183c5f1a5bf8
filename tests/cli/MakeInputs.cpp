// SPDX-License-Identifier: BSD-3-Clause
// Writes the particle sets of tests/Adversarial.hpp as CSV files NAME.csv into a folder, at
// the sizes a user met them, for the program's tests:
//   kfmm_test_inputs FOLDER
#include "Adversarial.hpp"

#include <kfmm/io/ParticleFile.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

int main(int argc, char *argv[])
{
  if (argc != 2)
  {
    std::fprintf(stderr, "usage: kfmm_test_inputs FOLDER\n");
    return 2;
  }
  Kokkos::ScopeGuard guard;
  std::string const folder = argv[1];
  std::filesystem::create_directories(folder);
  for (auto const set : kfmm::test::allAdversarial())
  {
    std::size_t const n = set == kfmm::test::Adversarial::identical        ? 5000
                          : set == kfmm::test::Adversarial::huge_potential ? 2000
                                                                           : 20000;
    auto const p = kfmm::test::adversarial(set, n);
    kfmm::io::WriteOptions options;
    options.progress = false;
    kfmm::io::writeParticles(folder + "/" + kfmm::test::adversarialName(set) + ".csv", p.x, p.q,
                             options);
  }
  return 0;
}
