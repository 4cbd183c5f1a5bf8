// SPDX-License-Identifier: BSD-3-Clause
// The kfmm command-line program. Until the FMM lands it evaluates a generated problem by
// the all-pairs direct sum on the default execution space and reports the time and rate.
//
//   kfmm [--n N] [--distribution NAME] [--seed S] [--precision float|double]
//        [--softening EPS] [--help]
#include <kfmm/kfmm.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace
{

struct Arguments
{
  std::size_t n = 0; // 0: the default size of the backend
  kfmm::Distribution distribution = kfmm::Distribution::plummer;
  std::uint64_t seed = 1;
  bool single = true;
  double softening = 0;
};

constexpr char const *usage =
    "usage: kfmm [options]\n"
    "  --n N                 number of particles (default 2^17 on a GPU, 2^14 on a CPU)\n"
    "  --distribution NAME   uniform | plummer | sphere | ellipsoid | cylinder (plummer)\n"
    "  --seed S              random seed (1)\n"
    "  --precision P         float | double (float)\n"
    "  --softening EPS       Plummer softening length, >= 0 (0)\n"
    "  --help                this text\n"
    "Kokkos options (--kokkos-num-threads=T, ...) are accepted as well.\n";

Arguments parse(int argc, char *argv[])
{
  Arguments a;
  for (int i = 1; i < argc; ++i)
  {
    std::string const option = argv[i];
    if (option == "--help")
    {
      std::fputs(usage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc)
      throw std::invalid_argument("option '" + option + "' needs a value (see --help)");
    std::string const value = argv[++i];
    try
    {
      if (option == "--n")
      {
        double const n = std::stod(value);
        if (!(n >= 0) || n != static_cast<double>(static_cast<std::size_t>(n)))
          throw std::invalid_argument("");
        a.n = static_cast<std::size_t>(n);
      }
      else if (option == "--distribution")
        a.distribution = kfmm::distributionFromName(value);
      else if (option == "--seed")
        a.seed = std::stoull(value);
      else if (option == "--precision")
      {
        if (value != "float" && value != "double")
          throw std::invalid_argument("");
        a.single = value == "float";
      }
      else if (option == "--softening")
        a.softening = std::stod(value);
      else
        throw std::invalid_argument("unknown option '" + option + "' (see --help)");
    }
    catch (kfmm::Exception const &e)
    {
      throw std::invalid_argument(e.what());
    }
    catch (std::invalid_argument const &e)
    {
      if (std::string(e.what()).rfind("unknown option", 0) == 0)
        throw;
      throw std::invalid_argument("bad value '" + value + "' for option '" + option + "'");
    }
    catch (std::out_of_range const &)
    {
      throw std::invalid_argument("value '" + value + "' for option '" + option +
                                  "' is out of range");
    }
  }
  return a;
}

template <class Real>
void run(Arguments const &a)
{
  using Space = Kokkos::DefaultExecutionSpace;
  using Memory = Space::memory_space;
  Space space;
  std::size_t const n =
      a.n > 0 ? a.n
              : (Kokkos::SpaceAccessibility<Kokkos::HostSpace, Memory>::accessible ? 1 << 14
                                                                                   : 1 << 17);
  Kokkos::View<Real *[3], Memory> x("kfmm::app::positions", n);
  Kokkos::View<Real *, Memory> q("kfmm::app::charges", n);
  Kokkos::View<Real *, Memory> phi("kfmm::app::potential", n);
  Kokkos::View<Real *[3], Memory> g("kfmm::app::field", n);
  kfmm::generate(space, a.distribution, a.seed, x, q);
  space.fence();
  Kokkos::Timer timer;
  kfmm::directSum(space, x, q, phi, g, a.softening);
  space.fence();
  double const seconds = timer.seconds();
  std::printf("kfmm: all-pairs direct sum (the FMM is not built yet)\n");
  std::printf("  backend      %s (%d-way concurrency)\n", Space::name(), Space::concurrency());
  std::printf("  precision    %s\n", sizeof(Real) == 4 ? "float" : "double");
  std::printf("  problem      %zu particles, %s, seed %llu\n", n,
              kfmm::distributionName(a.distribution),
              static_cast<unsigned long long>(a.seed));
  std::printf("  time         %.4f s\n", seconds);
  std::printf("  rate         %.3e interactions/s\n",
              static_cast<double>(n) * static_cast<double>(n) / seconds);
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  try
  {
    auto const arguments = parse(argc, argv);
    if (arguments.single)
      run<float>(arguments);
    else
      run<double>(arguments);
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "kfmm: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
