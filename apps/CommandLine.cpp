// SPDX-License-Identifier: BSD-3-Clause
#include "CommandLine.hpp"

#include "Problem.hpp"
#include "Solve.hpp"

#include <kfmm/Config.hpp>
#include <kfmm/io/ParticleFile.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <system_error>
#include <utility>
#include <vector>

namespace kfmm::app
{
namespace
{

/// The largest --n and --check: kfmm indexes particles with 32-bit integers on the device.
constexpr std::uint64_t max_particles = std::numeric_limits<int>::max();
constexpr std::uint64_t max_repeat = 1000;

[[noreturn]] void badValue(std::string const &option, std::string const &value,
                           std::string const &expected)
{
  throw UsageError("bad value '" + value + "' for option '" + option + "' (expected " + expected +
                   ")");
}

[[noreturn]] void outOfRange(std::string const &option, std::string const &value,
                             std::string const &range)
{
  throw UsageError("value '" + value + "' for option '" + option + "' is out of range (" + range +
                   ")");
}

/// A non-negative integer in [min, max]: plain digits, or a number like 1e6 or 2.5e5 that is
/// an integer (particle counts are easier to type that way).
std::uint64_t parseInteger(std::string const &option, std::string const &value, std::uint64_t min,
                           std::uint64_t max)
{
  std::string const range = "expected " + std::to_string(min) + " to " + std::to_string(max);
  char const *const end = value.data() + value.size();
  std::uint64_t result = 0;
  auto const [ptr, ec] = std::from_chars(value.data(), end, result);
  if (ptr == end && !value.empty())
  {
    if (ec == std::errc::result_out_of_range || result < min || result > max)
      outOfRange(option, value, range);
    return result;
  }
  char *stop = nullptr;
  double const d = std::strtod(value.c_str(), &stop);
  if (value.empty() || *stop != '\0' || std::isspace(static_cast<unsigned char>(value[0])) ||
      !std::isfinite(d) || d != std::floor(d))
    badValue(option, value, "an integer, " + range.substr(9));
  // 2^64 as a double: anything from there on does not fit in the result type.
  if (d < static_cast<double>(min) || d > static_cast<double>(max) || d >= 18446744073709551616.0)
    outOfRange(option, value, range);
  return static_cast<std::uint64_t>(d);
}

double parseReal(std::string const &option, std::string const &value)
{
  char *stop = nullptr;
  double const d = std::strtod(value.c_str(), &stop);
  if (value.empty() || *stop != '\0' || std::isspace(static_cast<unsigned char>(value[0])) ||
      std::isnan(d))
    badValue(option, value, "a number");
  return d;
}

/// The value named `value` among `choices` (name, value), in order; an unknown name is a
/// usage error that lists them ("expected a, b or c").
template <class T>
T parseChoice(std::string const &option, std::string const &value,
              std::vector<std::pair<std::string, T>> const &choices)
{
  std::string expected;
  for (std::size_t i = 0; i < choices.size(); ++i)
  {
    if (choices[i].first == value)
      return choices[i].second;
    expected += (i == 0 ? "" : (i + 1 == choices.size() ? " or " : ", ")) + choices[i].first;
  }
  throw UsageError("unknown value '" + value + "' for option '" + option + "' (expected " +
                   expected + ")");
}

/// A file the program will write: its folder must exist and it must not be a folder itself.
void requireWritablePath(std::string const &option, std::string const &path)
{
  if (path.empty())
    badValue(option, path, "a file name");
  std::filesystem::path const p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec))
    throw UsageError("option '" + option + "': '" + path + "' is a folder");
  auto const folder = p.parent_path();
  if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
    throw UsageError("option '" + option + "': folder '" + folder.string() + "' does not exist");
  // An existing file (or the file a symbolic link names) is replaced by a complete new one:
  // one that nobody may write is refused instead, for root too, who could replace it.
  auto const status = std::filesystem::status(p, ec);
  using std::filesystem::perms;
  if (!ec && std::filesystem::is_regular_file(status) &&
      (status.permissions() & (perms::owner_write | perms::group_write | perms::others_write)) ==
          perms::none)
    throw UsageError("option '" + option + "': '" + path + "' is read-only");
}

/// Whether `a` and `b` name one file: the same file where both exist (through links and
/// different spellings of a path), else the same path once made absolute and normal.
bool sameFile(std::string const &a, std::string const &b)
{
  std::error_code ec;
  if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec))
    return std::filesystem::equivalent(a, b, ec);
  auto const normal = [](std::string const &path) {
    std::error_code error;
    auto const absolute = std::filesystem::absolute(path, error).lexically_normal();
    auto const canonical = std::filesystem::weakly_canonical(absolute, error);
    return error ? absolute : canonical;
  };
  return normal(a) == normal(b);
}

/// The files a run reads (--input, --targets) and writes (--output, --json): no file written
/// may be one that is read, nor both written files one.
void requireSeparateFiles(Configuration const &c)
{
  for (auto const &[written, written_path] :
       {std::pair{"--output", c.output}, std::pair{"--json", c.json}})
  {
    if (written_path.empty())
      continue;
    for (auto const &[read, read_path] :
         {std::pair{"--input", c.input}, std::pair{"--targets", c.targets}})
      if (!read_path.empty() && sameFile(read_path, written_path))
        throw UsageError("options '" + std::string(read) + "' and '" + written +
                         "' name the same file ('" + read_path + "', '" + written_path +
                         "'): the run would overwrite what it reads");
  }
  if (!c.output.empty() && !c.json.empty() && sameFile(c.output, c.json))
    throw UsageError("options '--output' and '--json' name the same file ('" + c.output + "', '" +
                     c.json + "')");
}

/// A --kokkos-NAME=VALUE argument's value, or nothing when `argument` is not one for `name`.
std::optional<std::string> kokkosValue(std::string const &argument, std::string const &name)
{
  std::string const prefix = "--kokkos-" + name;
  if (argument.rfind(prefix, 0) != 0)
    return std::nullopt;
  if (argument.size() == prefix.size())
    throw UsageError("option '" + prefix + "' needs a value: " + prefix + "=N");
  if (argument[prefix.size()] != '=')
    return std::nullopt; // a longer name
  return argument.substr(prefix.size() + 1);
}

/// Digits only, at least `min`, within int.
void requireKokkosInteger(std::string const &option, std::string const &value, int min)
{
  bool const digits = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
  if (!digits)
    badValue(option, value, "an integer, " + std::to_string(min) + " or more");
  if (value.size() > 9 || std::stoi(value) < min)
    outOfRange(option, value, "expected " + std::to_string(min) + " to 999999999");
}

void requireKnownExtension(std::string const &option, std::string const &path)
{
  try
  {
    io::formatOf(path, io::Format::automatic, "option '" + option + "'");
  }
  catch (io::FileError const &e)
  {
    throw UsageError(e.what());
  }
}

/// The --help paragraph on MPI runs, in a build with MPI.
std::string mpiText()
{
#if defined(KFMM_ENABLE_MPI)
  return "Under mpiexec -n R (R > 1), the ranks share the particles in input order and\n"
         "solve them together; rank 0 prints, checks and writes; --targets is not\n"
         "supported. One rank runs as without MPI (docs/CLI.md).\n"
         "\n";
#else
  return "";
#endif
}

} // namespace

std::size_t defaultParticleCount()
{
  return default_space_is_gpu ? default_particles_gpu : default_particles_cpu;
}

Configuration parseCommandLine(std::vector<std::string> const &arguments)
{
  Configuration c;
  // --help and --version answer whatever else the command line holds, mistakes included.
  for (auto const &argument : arguments)
    if (argument == "--help" || argument == "--version")
    {
      (argument == "--help" ? c.help : c.version) = true;
      return c;
    }
  // The report's stage table; --no-stage-times runs the stages unfenced.
  c.options.time_stages = true;
  std::map<std::string, bool> given;
  // Options with a value, each with what it does with it.
  std::map<std::string, std::function<void(std::string const &, std::string const &)>> const
      valued = {
          {"--n",
           [&](auto const &o, auto const &v) { c.n = parseInteger(o, v, 1, max_particles); }},
          {"--distribution",
           [&](auto const &o, auto const &v) {
             try
             {
               c.distribution = distributionFromName(v);
             }
             catch (Exception const &)
             {
               throw UsageError("unknown value '" + v + "' for option '" + o +
                                "' (expected uniform, plummer, sphere, ellipsoid or cylinder)");
             }
           }},
          {"--seed",
           [&](auto const &o, auto const &v) {
             c.seed = parseInteger(o, v, 0, std::numeric_limits<std::uint64_t>::max());
           }},
          {"--order",
           [&](auto const &o, auto const &v) {
             c.options.order = static_cast<int>(parseInteger(o, v, 1, max_order));
           }},
          {"--theta",
           [&](auto const &o, auto const &v) {
             double const t = parseReal(o, v);
             if (!(t > 0 && t <= 1))
               outOfRange(o, v, "expected 0 < theta <= 1");
             c.options.theta = t;
           }},
          {"--tolerance",
           [&](auto const &o, auto const &v) {
             double const t = parseReal(o, v);
             if (!(t > 0 && std::isfinite(t)))
               outOfRange(o, v, "expected a finite number > 0");
             c.options.tolerance = t;
           }},
          {"--tolerance-choice",
           [&](auto const &o, auto const &v) {
             c.measure_tolerance = parseChoice<bool>(o, v, {{"measured", true}, {"table", false}});
           }},
          {"--acceptance",
           [&](auto const &o, auto const &v) {
             c.options.acceptance = parseChoice<Acceptance>(
                 o, v, {{"theta", Acceptance::theta}, {"classic", Acceptance::classic}});
           }},
          {"--leaf-size",
           [&](auto const &o, auto const &v) {
             c.options.leaf_size =
                 static_cast<int>(parseInteger(o, v, 1, std::numeric_limits<int>::max()));
           }},
          {"--method",
           [&](auto const &o, auto const &v) {
             c.options.method =
                 parseChoice<Method>(o, v, {{"fmm", Method::fmm}, {"treecode", Method::treecode}});
           }},
          {"--m2l",
           [&](auto const &o, auto const &v) {
             c.options.m2l_variant = parseChoice<M2LVariant>(
                 o, v, {{"auto", M2LVariant::automatic}, {"per-pair", M2LVariant::per_pair},
                        {"grouped", M2LVariant::grouped}, {"rotation", M2LVariant::rotation}});
           }},
          {"--precision",
           [&](auto const &o, auto const &v) {
             c.precision = parseChoice<Precision>(
                 o, v, {{"float", Precision::single}, {"double", Precision::double_}});
           }},
          {"--softening",
           [&](auto const &o, auto const &v) {
             double const s = parseReal(o, v);
             if (!(s >= 0 && std::isfinite(s)))
               outOfRange(o, v, "expected a finite number >= 0");
             c.options.softening = s;
           }},
          {"--periodic",
           [&](auto const &o, auto const &v) {
             // L, or LX,LY,LZ (equal: the library takes cubes).
             std::vector<double> sides;
             std::size_t begin = 0;
             for (;;)
             {
               auto const comma = v.find(',', begin);
               sides.push_back(parseReal(o, v.substr(begin, comma - begin)));
               if (comma == std::string::npos)
                 break;
               begin = comma + 1;
             }
             if (sides.size() == 1)
               sides.assign(3, sides[0]);
             if (sides.size() != 3)
               badValue(o, v, "a side L, or three sides LX,LY,LZ");
             for (double const side : sides)
               if (!(side > 0 && std::isfinite(side)))
                 outOfRange(o, v, "expected finite sides > 0");
             auto &box = c.options.periodic;
             box.enabled = true;
             for (int d = 0; d < 3; ++d)
             {
               box.side[d] = sides[d];
               box.lower[d] = -0.5 * sides[d];
             }
           }},
          {"--check",
           [&](auto const &o, auto const &v) { c.check = parseInteger(o, v, 0, max_particles); }},
          {"--check-samples",
           [&](auto const &o, auto const &v) {
             c.options.check_samples = static_cast<int>(parseInteger(o, v, 0, max_particles));
           }},
          {"--repeat",
           [&](auto const &o, auto const &v) {
             c.repeat = static_cast<int>(parseInteger(o, v, 0, max_repeat));
           }},
          {"--steps",
           [&](auto const &o, auto const &v) {
             c.steps = static_cast<int>(parseInteger(o, v, 0, max_repeat));
           }},
          {"--step-move",
           [&](auto const &o, auto const &v) {
             double const d = parseReal(o, v);
             if (!(d > 0 && std::isfinite(d)))
               outOfRange(o, v, "expected a finite number > 0");
             c.step_move = d;
           }},
          {"--input",
           [&](auto const &o, auto const &v) {
             if (v.empty())
               badValue(o, v, "a file name");
             requireKnownExtension(o, v);
             c.input = v;
           }},
          {"--targets",
           [&](auto const &o, auto const &v) {
             if (v.empty())
               badValue(o, v, "a file name");
             requireKnownExtension(o, v);
             c.targets = v;
           }},
          {"--output",
           [&](auto const &o, auto const &v) {
             requireWritablePath(o, v);
             requireKnownExtension(o, v);
             c.output = v;
           }},
          {"--json",
           [&](auto const &o, auto const &v) {
             requireWritablePath(o, v);
             c.json = v;
           }},
      };

  for (std::size_t i = 0; i < arguments.size(); ++i)
  {
    std::string option = arguments[i];
    std::string value;
    bool has_value = false;
    // --option=value as well as --option value.
    auto const equals = option.find('=');
    if (option.rfind("--", 0) == 0 && equals != std::string::npos)
    {
      value = option.substr(equals + 1);
      option.resize(equals);
      has_value = true;
    }
    if (option == "--help" || option == "--version" || option == "--quiet" ||
        option == "--no-stage-times" || option == "--no-concurrent-far-field" ||
        option == "--allow-unresolved" || option == "--allow-missed-tolerance")
    {
      if (has_value)
        throw UsageError("option '" + option + "' takes no value");
      if (option == "--no-stage-times")
        c.options.time_stages = false;
      else if (option == "--no-concurrent-far-field")
        c.options.concurrent_far_field = false;
      else if (option == "--allow-unresolved")
        c.allow_unresolved = true;
      else if (option == "--allow-missed-tolerance")
        c.allow_missed_tolerance = true;
      else if (option == "--version")
        c.version = true;
      else
        (option == "--help" ? c.help : c.quiet) = true;
      continue;
    }
    auto const handler = valued.find(option);
    if (handler == valued.end())
    {
      if (option.rfind("-", 0) == 0)
        throw UsageError("unknown option '" + option + "' (see kfmm --help)");
      throw UsageError("unexpected argument '" + option + "' (see kfmm --help)");
    }
    if (!has_value)
    {
      // A following option is not taken for the value: "--n --check 5" lacks the value of --n.
      if (i + 1 >= arguments.size() || arguments[i + 1].rfind("--", 0) == 0)
        throw UsageError("option '" + option + "' needs a value (see kfmm --help)");
      value = arguments[++i];
    }
    handler->second(option, value);
    given[option] = true;
  }
  if (c.help || c.version)
    return c;

  if (!c.input.empty())
    for (char const *option : {"--n", "--distribution", "--seed"})
      if (given.count(option))
        throw UsageError("option '" + std::string(option) +
                         "' cannot be used with --input (the file gives the particles)");
  if (given.count("--tolerance"))
    for (char const *option : {"--order", "--theta", "--acceptance"})
      if (given.count(option))
        throw UsageError("option '" + std::string(option) +
                         "' cannot be used with --tolerance (it chooses order and theta)");
  if (given.count("--tolerance-choice") && !given.count("--tolerance"))
    throw UsageError("option '--tolerance-choice' needs --tolerance");
  if (given.count("--periodic") && given.count("--targets"))
    throw UsageError("option '--periodic' cannot be used with --targets (periodic boundaries "
                     "take the particles as their own targets)");
  if (given.count("--periodic") && c.options.softening > 0 && c.check > 0)
    throw UsageError("option '--softening' cannot be used with --periodic and --check: Ewald's "
                     "sum, the check's reference, is unsoftened (add --check 0)");
  requireSeparateFiles(c);
  if (c.input.empty() && c.n == 0)
    c.n = defaultParticleCount();
  try
  {
    detail::validate(c.options, "kfmm");
  }
  catch (Exception const &e)
  {
    throw UsageError(e.what());
  }
  return c;
}

std::string helpText()
{
  Options const o;
  std::string const n_default = std::to_string(defaultParticleCount()) + " in this " +
                                (default_space_is_gpu ? "GPU" : "CPU") + " build";
  return "usage: kfmm [options] [--kokkos-...]\n"
         "\n"
         "Computes the potential and field of N charged particles (or masses) on each other\n"
         "with the fast multipole method, and reports the time of each stage, the rate and\n"
         "the error against the direct sum.\n"
         "\n"
         "Problem:\n"
         "  --n N                number of generated particles, 1 to 2^31-1; 1e6 notation is\n"
         "                       accepted (default " +
         n_default +
         ")\n"
         "  --distribution D     uniform | plummer | sphere | ellipsoid | cylinder (plummer)\n"
         "  --seed S             random seed of the generated particles, 0 to 2^64-1 (1)\n"
         "  --input FILE         read the particles from FILE instead: .csv (header x,y,z,q)\n"
         "                       or .kfmm (binary); see docs/CLI.md\n"
         "  --targets FILE       compute at the positions of FILE (.csv or .kfmm; its\n"
         "                       charges are not used) instead of at the particles\n"
         "Solver:\n"
         "  --method M           fmm | treecode (" +
         methodName(o.method) +
         ")\n"
         "  --tolerance T        the relative L2 field error to reach: the first run\n"
         "                       measures order and theta on the problem (the fastest row\n"
         "                       of the backends' accuracy tables whose error, estimated\n"
         "                       against a more accurate row and the direct sum on sampled\n"
         "                       particles, meets T) and the runs after it use them\n"
         "                       (docs/ACCURACY.md);\n"
         "                       not with --order, --theta or --acceptance; the samples:\n"
         "                       the --check-samples count, else 512; a field error\n"
         "                       measured by --check (or --check-samples) above T is a\n"
         "                       warning and exit status 5\n"
         "  --tolerance-choice C measured | table: the table's choice alone, unmeasured (the\n"
         "                       only one on several ranks and with --periodic and\n"
         "                       --softening together) (measured)\n"
         "  --allow-missed-tolerance\n"
         "                       exit status 0 all the same in that case\n"
         "  --order P            expansion order, 1 to " +
         std::to_string(max_order) + " (" + std::to_string(o.order) +
         ")\n"
         "  --theta T            multipole acceptance parameter, 0 < T <= 1; smaller is more\n"
         "                       accurate and slower (" +
         detail::formatNumber(o.theta) +
         ")\n"
         "  --acceptance A       theta: cells far when (R_t + R_s) < theta * distance (with\n"
         "                       --targets, unequal cells farther: docs/ACCURACY.md) |\n"
         "                       classic: far when not neighbours (theta unused) (" +
         std::string(acceptanceName(o.acceptance)) +
         ")\n"
         "  --leaf-size L        a cell with more than L particles is split, L >= 1 (the\n"
         "                       backend's tuned size for the order and precision)\n"
         "  --m2l V              FMM translations: auto (the backend's tuned choice) |\n"
         "                       per-pair | grouped | rotation (auto)\n"
         "  --precision P        float | double: of the charges, results and computation;\n"
         "                       positions are held in double (float)\n"
         "  --softening EPS      Plummer softening length, finite and >= 0 (0); the far\n"
         "                       field expands 1/r, for pairs far enough apart that it is\n"
         "                       within the error of order and theta (docs/ACCURACY.md)\n"
         "  --periodic L         periodic boundaries: the box [-L/2, L/2)^3 about the\n"
         "                       origin (L or LX,LY,LZ, equal sides), the particles wrapped\n"
         "                       into it; tin-foil Ewald result, with a uniform neutralising\n"
         "                       background for a net charge; --check and --check-samples\n"
         "                       compare with Ewald's sum (docs/PERIODIC.md)\n"
         "  --allow-unresolved   write the results even where the precision does not resolve\n"
         "                       the particles (exit status 4 otherwise; docs/CLI.md)\n"
         "Measurement:\n"
         "  --check K            compare with the direct sum (in double) on K sampled\n"
         "                       particles (or targets); 0 turns the comparison off (1000)\n"
         "  --check-samples K    the library's check (Options::check_samples) in every run:\n"
         "                       the error on K evenly strided particles (or targets)\n"
         "                       against the direct sum (Ewald's sum with --periodic), on\n"
         "                       the device; with --tolerance a\n"
         "                       miss is exit status 5 as with --check; not on several\n"
         "                       ranks (0)\n"
         "  --repeat R           R more runs after the first; the report gives their median\n"
         "                       times (0)\n"
         "  --steps S            on several ranks: S time steps after the runs, each the\n"
         "                       particles moved, the solver rebuilt from the previous\n"
         "                       step (DistributedFmm::rebuild) and evaluated; the report\n"
         "                       gives their median times (0)\n"
         "  --step-move D        how far each particle moves per step, in a pseudo-random\n"
         "                       direction (1e-3)\n"
         "  --no-stage-times     run the solver's stages back to back, unfenced: the report\n"
         "                       gives the total time only; on a GPU the far field's\n"
         "                       translations then run beside the near field\n"
         "  --no-concurrent-far-field\n"
         "                       run every stage on one instance, one after another, also\n"
         "                       with --no-stage-times\n"
         "Output:\n"
         "  --output FILE        write x,y,z,q,phi,gx,gy,gz of every particle (or target) to\n"
         "                       FILE: .csv text or .kfmm binary\n"
         "  --json FILE          write the report as JSON to FILE\n"
         "  --quiet              print nothing but errors and warnings\n"
         "  --help               print this text and exit\n"
         "  --version            print kfmm's and Kokkos' versions and exit\n"
         "\n"
         "Values follow their option as the next argument or after '=' (--n=1e6). Arguments\n"
         "that start with --kokkos- go to Kokkos (--kokkos-help lists them). Files are\n"
         "written under a temporary name and renamed when complete (also through a symbolic\n"
         "link, which stays); a read-only file is not replaced; an interrupt removes the\n"
         "temporary file.\n"
         "\n" +
         mpiText() +
         "Exit status: 0 success, 1 failure while running, 2 bad command line, 3 unusable\n"
         "input file, 4 the precision does not resolve the particles (nothing written), 5\n"
         "the field error measured by --check is above --tolerance (all written).\n";
}

void checkKokkosArguments(std::vector<std::string> const &arguments)
{
  for (auto const &argument : arguments)
  {
    for (char const *name : {"threads", "num-threads", "numa"})
      if (auto const value = kokkosValue(argument, name))
        requireKokkosInteger("--kokkos-" + std::string(name), *value, 1);
    for (char const *name : {"device-id", "device"})
      if (auto const value = kokkosValue(argument, name))
        requireKokkosInteger("--kokkos-" + std::string(name), *value, 0);
    for (char const *name : {"num-devices", "ndevices"})
      if (auto const value = kokkosValue(argument, name))
      {
        // G, or G,S: G devices per node, the GPU S skipped.
        std::string const option = "--kokkos-" + std::string(name);
        auto const comma = value->find(',');
        requireKokkosInteger(option, value->substr(0, comma), 1);
        if (comma != std::string::npos)
          requireKokkosInteger(option, value->substr(comma + 1), 0);
      }
  }
}

} // namespace kfmm::app
