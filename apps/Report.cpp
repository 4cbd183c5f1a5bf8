// SPDX-License-Identifier: BSD-3-Clause
#include "Report.hpp"

#include "Problem.hpp"
#include "Run.hpp"
#include "Solve.hpp"

#include <kfmm/Config.hpp>
#include <kfmm/detail/Resolution.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/resource.h>
#endif

namespace kfmm::app
{

double median(std::vector<double> values)
{
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// The statistics of the last run with each stage's time replaced by its median over `runs`.
Stats medianStats(std::vector<Stats> const &runs)
{
  Stats stats = runs.back();
  for (auto &[name, seconds] : stats.stage_seconds)
  {
    std::vector<double> times;
    for (auto const &run : runs)
      times.push_back(run.seconds(name));
    seconds = median(times);
  }
  return stats;
}
namespace
{

std::string versionString()
{
  return std::to_string(KFMM_VERSION_MAJOR) + "." + std::to_string(KFMM_VERSION_MINOR) + "." +
         std::to_string(KFMM_VERSION_PATCH);
}

std::string kokkosVersion()
{
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
         "." + std::to_string(KOKKOS_VERSION % 100);
}

std::string algorithmName(Configuration const &c) { return methodName(c.options.method); }

std::string problemText(Report const &r)
{
  Configuration const &c = r.configuration;
  std::string const at =
      c.targets.empty() ? "" : "; at " + std::to_string(r.targets) + " targets from " + c.targets;
  if (!c.input.empty())
    return std::to_string(r.n) + " from " + c.input + at;
  return std::to_string(r.n) + ", " + distributionName(c.distribution) + ", seed " +
         std::to_string(c.seed) + at;
}

/// A streaming JSON writer: two-space indentation, members in the order written.
class JsonWriter
{
public:
  std::string const &text() const { return text_; }

  void beginObject(char const *key = nullptr) { open(key, '{'); }
  void endObject() { close('}'); }
  void beginArray(char const *key = nullptr) { open(key, '['); }
  void endArray() { close(']'); }

  void string(char const *key, std::string const &value)
  {
    member(key);
    text_ += quote(value);
  }
  void number(char const *key, double value)
  {
    member(key);
    if (!std::isfinite(value))
    {
      text_ += "null";
      return;
    }
    // The shortest of 15 or 17 digits that reads back as the same double.
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.15g", value);
    if (std::strtod(buffer, nullptr) != value)
      std::snprintf(buffer, sizeof buffer, "%.17g", value);
    text_ += buffer;
  }
  void integer(char const *key, std::uint64_t value)
  {
    member(key);
    text_ += std::to_string(value);
  }
  void boolean(char const *key, bool value)
  {
    member(key);
    text_ += value ? "true" : "false";
  }
  void null(char const *key)
  {
    member(key);
    text_ += "null";
  }

private:
  static std::string quote(std::string const &s)
  {
    std::string q = "\"";
    for (unsigned char ch : s)
    {
      if (ch == '"' || ch == '\\')
      {
        q += '\\';
        q += static_cast<char>(ch);
      }
      else if (ch < 0x20)
      {
        char buffer[8];
        std::snprintf(buffer, sizeof buffer, "\\u%04x", ch);
        q += buffer;
      }
      else
        q += static_cast<char>(ch);
    }
    return q + "\"";
  }

  void member(char const *key)
  {
    if (!first_.empty())
    {
      if (!first_.back())
        text_ += ',';
      first_.back() = false;
      text_ += '\n';
      text_.append(2 * first_.size(), ' ');
    }
    if (key)
      text_ += quote(key) + ": ";
  }

  void open(char const *key, char bracket)
  {
    member(key);
    text_ += bracket;
    first_.push_back(true);
  }

  void close(char bracket)
  {
    bool const empty = first_.back();
    first_.pop_back();
    if (!empty)
    {
      text_ += '\n';
      text_.append(2 * first_.size(), ' ');
    }
    text_ += bracket;
    if (first_.empty())
      text_ += '\n';
  }

  std::string text_;
  std::vector<bool> first_;
};

double megabytes(std::size_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

/// The near field's pair interactions per second over its stage time; 0 where the stages
/// were not timed, no pair was computed, or the run had several ranks (whose stage times
/// are rank 0's and whose interactions are all ranks').
double nearFieldRate(Report const &r)
{
  if (r.ranks > 1)
    return 0;
  for (auto const &[name, seconds] : r.stats.stage_seconds)
    if (name == "P2P" && seconds > 0)
      return static_cast<double>(r.stats.p2p_interactions) / seconds;
  return 0;
}

using TreeSteps = double[essential_tree_step_count];

/// One line of the local essential trees' steps, `prefix` first; nothing where they were not
/// timed (all 0).
void printTreeSteps(std::FILE *out, char const *prefix, TreeSteps const &steps)
{
  if (std::all_of(steps, steps + essential_tree_step_count, [](double t) { return t == 0; }))
    return;
  std::fprintf(out, "%s", prefix);
  for (int k = 0; k < essential_tree_step_count; ++k)
    std::fprintf(out, "%s%s %.6f s", k > 0 ? ", " : "", essential_tree_step_names[k], steps[k]);
  std::fprintf(out, "\n");
}

/// The local essential trees' steps as the JSON object "essential_tree_steps".
void treeStepsObject(JsonWriter &j, TreeSteps const &steps)
{
  j.beginObject("essential_tree_steps");
  for (int k = 0; k < essential_tree_step_count; ++k)
    j.number(essential_tree_step_names[k], steps[k]);
  j.endObject();
}

} // namespace

std::string versionText()
{
  return "kfmm " + versionString() + " (Kokkos " + kokkosVersion() + ", default execution space " +
         Kokkos::DefaultExecutionSpace::name() + ")\n";
}

KokkosInfo kokkosInfo()
{
  KokkosInfo k;
  k.version = kokkosVersion();
  // Names as the spaces' name() gives them, written out because some of these classes moved
  // between namespaces across Kokkos versions.
#if defined(KOKKOS_ENABLE_SERIAL)
  k.enabled_spaces.push_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  k.enabled_spaces.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  k.enabled_spaces.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  k.enabled_spaces.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  k.enabled_spaces.push_back("HIP");
#endif
#if defined(KOKKOS_ENABLE_SYCL)
  k.enabled_spaces.push_back("SYCL");
#endif
  k.default_space = Space::name();
  k.concurrency = Space().concurrency();
  k.gpu = default_space_is_gpu;
  return k;
}

std::size_t hostPeakBytes()
{
#if defined(__unix__) || defined(__APPLE__)
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
#if defined(__APPLE__)
  return static_cast<std::size_t>(usage.ru_maxrss); // bytes on macOS
#else
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024; // KiB elsewhere
#endif
#else
  return 0;
#endif
}

void printReport(std::FILE *out, Report const &r)
{
  Configuration const &c = r.configuration;
  KokkosInfo const &k = r.kokkos;
  std::string spaces;
  for (auto const &s : k.enabled_spaces)
    spaces += (spaces.empty() ? "" : " ") + s;
  std::fprintf(out, "kfmm %s: %s\n", versionString().c_str(), algorithmName(c).c_str());
  std::fprintf(out, "  backend       %s, concurrency %d (Kokkos %s; enabled: %s)\n",
               k.default_space.c_str(), k.concurrency, k.version.c_str(), spaces.c_str());
  std::fprintf(out, "  precision     %s\n", precisionName(c.precision));
  std::fprintf(out, "  particles     %s\n", problemText(r).c_str());
  // The order and theta the solver used: with --tolerance, those it chose.
  // The classic rule has no theta.
  std::string const acceptance = c.options.acceptance == Acceptance::classic
                                     ? std::string("classic")
                                     : "theta, theta " + detail::formatNumber(r.stats.theta);
  std::fprintf(out,
               "  options       method %s, order %d, acceptance %s, leaf size %d, softening %g\n",
               methodName(c.options.method), r.stats.order, acceptance.c_str(), r.stats.leaf_size,
               c.options.softening);
  if (c.options.periodic.enabled)
    std::fprintf(
        out, "  periodic      box [%g, %g)^3; tin-foil Ewald result, neutralising background\n",
        c.options.periodic.lower[0], c.options.periodic.lower[0] + c.options.periodic.side[0]);
  if (r.calibration && r.calibration->direct_sum)
    std::fprintf(out, "  leaf size     %d: one leaf, the direct sum (--tolerance)\n",
                 r.stats.leaf_size);
  else if (c.options.leaf_size == 0)
    std::fprintf(out, "  leaf size     %d: the backend's tuned one for order %d in %s\n",
                 r.stats.leaf_size, r.stats.order, precisionName(c.precision));
  if (r.calibration)
  {
    kfmm::Calibration const &m = *r.calibration;
    bool const direct_tried =
        std::any_of(m.trials.begin(), m.trials.end(),
                    [](kfmm::CalibrationTrial const &t) { return t.direct_sum; });
    int const rows = m.evaluations - (direct_tried ? 1 : 0);
    std::string const chosen = m.direct_sum
                                   ? std::string("the direct sum")
                                   : "order " + std::to_string(m.options.order) + " and theta " +
                                         detail::formatNumber(m.options.theta);
    std::fprintf(out,
                 "  tolerance     %g: %s measured on the problem, field error %.3g on %zu sampled "
                 "%s%s; %d row%s%s evaluated%s in %.3f s",
                 c.options.tolerance, chosen.c_str(), m.field_error, m.samples,
                 r.targets > 0 ? "targets" : "particles",
                 m.tolerance_missed ? " (nothing evaluated met the tolerance)" : "", rows,
                 rows == 1 ? "" : "s", direct_tried ? " and the direct sum" : "",
                 !m.trials.empty() && m.trials.front().in_double ? ", the reference in double" : "",
                 m.seconds);
    if (m.table_order > 0)
      std::fprintf(out, " (the table alone: order %d, theta %g)\n", m.table_order, m.table_theta);
    else
      std::fprintf(out, " (below every row of the table)\n");
  }
  else if (c.options.tolerance > 0)
    std::fprintf(out,
                 "  tolerance     %g: order %d and theta %g from the backend's accuracy table\n",
                 c.options.tolerance, r.stats.order, r.stats.theta);
  // On several ranks: rank 0's tree, its particles' and the cells it received from others.
  std::fprintf(out, "  tree          %sdepth %d, %zu leaves, %zu cells\n",
               r.per_rank.empty() ? "" : "rank 0: ", r.stats.depth, r.stats.leaves, r.stats.cells);
  std::fprintf(out, "  interactions  p2p %.3e, m2l %.3e, m2p %.3e\n",
               static_cast<double>(r.stats.p2p_interactions),
               static_cast<double>(r.stats.m2l_interactions),
               static_cast<double>(r.stats.m2p_interactions));
  if (!r.stats.m2l_variant.empty())
    std::fprintf(out,
                 "  m2l           %s, %zu classes, matrices %.1f MiB, %zu pairs outside them\n",
                 r.stats.m2l_variant.c_str(), r.stats.m2l_classes,
                 megabytes(r.stats.m2l_matrix_bytes), r.stats.m2l_per_pair_interactions);

  double const staged = r.stats.totalSeconds();
  if (c.options.time_stages)
    std::fprintf(out, "  %-22s %12s %7s\n", "stage", "seconds", "share");
  else
    std::fprintf(out, "  stages        not timed (--no-stage-times)%s\n",
                 r.stats.far_field_concurrent ? "; far field beside the near field" : "");
  for (auto const &[name, seconds] : r.stats.stage_seconds)
    std::fprintf(out, "    %-20s %12.6f %6.1f%%\n", name.c_str(), seconds,
                 staged > 0 ? 100 * seconds / staged : 0.0);
  std::fprintf(out, "    %-20s %12.6f\n", "total (wall)", r.seconds);
  if (!r.per_rank.empty())
  {
    // Communication: the MPI calls within the stage, after the device's work before them.
    std::fprintf(out, "  ranks         %d; the total is the slowest rank's wall time\n", r.ranks);
    std::fprintf(out, "    %4s %12s %10s %8s %10s %10s %10s %10s %10s %10s %10s\n", "rank",
                 "particles", "ghosts", "pruned", "build s", "(part)", "(trees)", "(comm)",
                 "eval s", "(comm)", "wall s");
    for (std::size_t rank = 0; rank < r.per_rank.size(); ++rank)
    {
      RankReport const &p = r.per_rank[rank];
      std::fprintf(out,
                   "    %4zu %12zu %10zu %8zu %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f\n",
                   rank, p.particles, p.ghosts, p.pruned_cells, p.build_seconds,
                   p.partition_seconds, p.essential_trees_seconds, p.build_communication_seconds,
                   p.evaluate_seconds, p.evaluate_communication_seconds, p.wall_seconds);
    }
    TreeSteps slowest = {};
    for (RankReport const &p : r.per_rank)
      for (int k = 0; k < essential_tree_step_count; ++k)
        slowest[k] = std::max(slowest[k], p.essential_tree_steps[k]);
    printTreeSteps(out, "    (trees), the slowest rank's: ", slowest);
  }
  if (r.runs > 1 || c.repeat > 0)
    std::fprintf(out, "  runs          first %.6f s; median of the %d after it %.6f s\n",
                 r.first_seconds, r.runs, r.seconds);
  if (StepsReport const &s = r.steps; s.steps > 0)
    std::fprintf(out,
                 "  steps         %d, each particle moved %g: median %.6f s per step (rebuild "
                 "%.6f s, of it partition %.6f s and essential trees %.6f s, MPI %.6f s; "
                 "evaluate %.6f s, MPI %.6f s); splitters kept in %d; particles sent to other "
                 "ranks per step %.0f\n",
                 s.steps, s.move, s.seconds, s.rebuild_seconds, s.partition_seconds,
                 s.essential_trees_seconds, s.rebuild_communication_seconds, s.evaluate_seconds,
                 s.evaluate_communication_seconds, s.splitters_kept, s.sent_particles);
  if (StepsReport const &s = r.steps; s.steps > 0)
    printTreeSteps(out, "                of the essential trees: ", s.essential_tree_steps);
  std::fprintf(out, "  rate          %.4g particles/s",
               r.seconds > 0 ? static_cast<double>(r.n) / r.seconds : 0.0);
  if (double const near_rate = nearFieldRate(r); near_rate > 0)
    std::fprintf(out, "; near field %.4g pairs/s", near_rate);
  std::fprintf(out, "\n");
  if (r.check)
    std::fprintf(out,
                 "  error         potential %.3e, field %.3e (relative L2 against %s in "
                 "double on %zu %s; %.3f s)\n",
                 r.check->potential_error, r.check->field_error,
                 c.options.periodic.enabled ? "Ewald's sum" : "the direct sum", r.check->targets,
                 c.targets.empty() ? "particles" : "targets", r.check->seconds);
  else
    std::fprintf(out, "  error         not checked (--check 0)\n");
  if (r.stats.sampled_targets > 0)
    std::fprintf(out,
                 "  sampled check potential %.3e, field %.3e (the library's, on %zu strided "
                 "%s; --check-samples)\n",
                 r.stats.sampled_potential_error, r.stats.sampled_field_error,
                 r.stats.sampled_targets, c.targets.empty() ? "particles" : "targets");
  char line[160];
  std::snprintf(line, sizeof line, "particles and results %.1f MiB, solver %.1f MiB",
                megabytes(r.particle_bytes), megabytes(r.stats.bytes));
  std::string memory = line;
  if (r.host_peak_bytes > 0)
  {
    std::snprintf(line, sizeof line, ", host peak %.1f MiB", megabytes(r.host_peak_bytes));
    memory += line;
  }
  std::fprintf(out, "  memory        %s\n", memory.c_str());
  std::fflush(out);
}

std::string precisionMessage(Configuration const &c, std::size_t n, Stats const &stats)
{
  return detail::unresolvedText(precisionName(c.precision), stats.unresolved_pairs, n) +
         (c.precision == Precision::single ? "; use --precision double" : "") +
         " (--allow-unresolved writes such results anyway); nothing was written";
}

std::string precisionWarning(Configuration const &c, std::size_t n, Stats const &stats)
{
  return "kfmm: warning: " +
         detail::unresolvedText(precisionName(c.precision), stats.unresolved_pairs, n) +
         " (--allow-unresolved)\n";
}

int checkedStatus(Report const &r)
{
  Configuration const &c = r.configuration;
  double const tolerance = c.options.tolerance;
  if (tolerance <= 0)
    return exit_success;
  bool missed = false;
  // The field error of --check, and that of the library's check (--check-samples).
  auto const judge = [&](std::size_t targets, char const *sampled, double error) {
    // NaN compares false: a field error that could not be measured misses too.
    if (error <= tolerance)
      return;
    missed = true;
    std::fprintf(stderr,
                 "kfmm: warning: the field error measured on %zu %s %s, %.3g, is above "
                 "--tolerance %g: %s\n",
                 targets, sampled, r.targets > 0 ? "targets" : "particles", error, tolerance,
                 c.allow_missed_tolerance
                     ? "the results are written (--allow-missed-tolerance)"
                     : "the results are written; exit status 5 (--allow-missed-tolerance: 0)");
  };
  if (r.calibration && r.calibration->tolerance_missed)
    judge(r.calibration->samples, "strided (choosing order and theta)", r.calibration->field_error);
  if (r.check)
    judge(r.check->targets, "sampled", r.check->field_error);
  if (r.stats.sampled_targets > 0)
    judge(r.stats.sampled_targets, "strided (--check-samples)", r.stats.sampled_field_error);
  if (!missed)
    return exit_success;
  return c.allow_missed_tolerance ? exit_success : exit_tolerance_missed;
}

std::string runLabel(int run, int repeat)
{
  if (repeat == 0)
    return "solving";
  return "solving (run " + std::to_string(run + 1) + " of " + std::to_string(repeat + 1) + ")";
}

std::string jsonReport(Report const &r)
{
  Configuration const &c = r.configuration;
  KokkosInfo const &k = r.kokkos;
  JsonWriter j;
  j.beginObject();
  j.string("program", "kfmm");
  j.string("version", versionString());
  j.string("solver", algorithmName(c));

  j.beginObject("configuration");
  j.integer("n", r.n);
  if (c.input.empty())
  {
    j.string("source", "generated");
    j.string("distribution", distributionName(c.distribution));
    j.integer("seed", c.seed);
    j.null("input");
  }
  else
  {
    j.string("source", "input");
    j.null("distribution");
    j.null("seed");
    j.string("input", c.input);
  }
  if (c.targets.empty())
  {
    j.null("targets");
    j.null("n_targets");
  }
  else
  {
    j.string("targets", c.targets);
    j.integer("n_targets", r.targets);
  }
  j.string("method", methodName(c.options.method));
  if (c.options.tolerance > 0)
    j.number("tolerance", c.options.tolerance);
  else
    j.null("tolerance");
  j.integer("order", static_cast<std::uint64_t>(r.stats.order));
  // The classic rule has no theta.
  if (c.options.acceptance == Acceptance::classic)
    j.null("theta");
  else
    j.number("theta", r.stats.theta);
  j.string("acceptance", acceptanceName(c.options.acceptance));
  j.integer("leaf_size", static_cast<std::uint64_t>(r.stats.leaf_size));
  j.boolean("leaf_size_tuned",
            c.options.leaf_size == 0 && !(r.calibration && r.calibration->direct_sum));
  j.string("m2l", m2lVariantName(c.options.m2l_variant));
  j.string("precision", precisionName(c.precision));
  j.number("softening", c.options.softening);
  if (c.options.periodic.enabled)
    j.number("periodic", c.options.periodic.side[0]);
  else
    j.null("periodic");
  j.integer("check", c.check);
  j.integer("check_samples", static_cast<std::uint64_t>(c.options.check_samples));
  j.integer("repeat", static_cast<std::uint64_t>(c.repeat));
  j.boolean("stage_times", c.options.time_stages);
  j.boolean("concurrent_far_field", c.options.concurrent_far_field);
  if (c.output.empty())
    j.null("output");
  else
    j.string("output", c.output);
  j.endObject();

  j.beginObject("kokkos");
  j.string("version", k.version);
  j.beginArray("enabled_spaces");
  for (auto const &s : k.enabled_spaces)
    j.string(nullptr, s);
  j.endArray();
  j.string("default_space", k.default_space);
  j.boolean("default_space_is_gpu", k.gpu);
  j.integer("concurrency", static_cast<std::uint64_t>(k.concurrency > 0 ? k.concurrency : 0));
  j.endObject();

  j.beginObject("tree");
  j.integer("depth", static_cast<std::uint64_t>(r.stats.depth > 0 ? r.stats.depth : 0));
  j.integer("cells", r.stats.cells);
  j.integer("leaves", r.stats.leaves);
  j.endObject();
  j.beginObject("resolution");
  j.integer("unresolved_pairs", r.stats.unresolved_pairs);
  j.boolean("precision_limited", r.stats.precision_limited);
  j.endObject();
  j.boolean("results_checked", r.stats.results_checked);
  j.beginObject("interactions");
  j.integer("p2p", r.stats.p2p_interactions);
  j.integer("m2l", r.stats.m2l_interactions);
  j.integer("m2p", r.stats.m2p_interactions);
  j.number("flops", r.stats.flops);
  j.endObject();
  j.beginObject("m2l");
  j.string("variant", r.stats.m2l_variant);
  j.integer("classes", r.stats.m2l_classes);
  j.integer("matrix_bytes", r.stats.m2l_matrix_bytes);
  j.integer("per_pair_interactions", r.stats.m2l_per_pair_interactions);
  j.endObject();

  j.beginObject("timing");
  j.integer("runs", static_cast<std::uint64_t>(r.runs));
  j.boolean("far_field_concurrent", r.stats.far_field_concurrent);
  j.beginObject("stage_seconds");
  for (auto const &[name, seconds] : r.stats.stage_seconds)
    j.number(name.c_str(), seconds);
  j.endObject();
  j.number("total_seconds", r.seconds);
  j.number("first_run_seconds", r.first_seconds);
  j.number("particles_per_second", r.seconds > 0 ? static_cast<double>(r.n) / r.seconds : NAN);
  double const near_rate = nearFieldRate(r);
  j.number("p2p_pairs_per_second", near_rate > 0 ? near_rate : NAN);
  j.endObject();

  if (r.check)
  {
    j.beginObject("errors");
    j.string("measure", c.options.periodic.enabled
                            ? "relative L2 against Ewald's sum in double"
                            : "relative L2 against the direct sum in double");
    j.integer("targets", r.check->targets);
    j.number("potential", r.check->potential_error);
    j.number("field", r.check->field_error);
    j.number("seconds", r.check->seconds);
    j.endObject();
  }
  else
    j.null("errors");
  if (r.stats.sampled_targets > 0)
  {
    j.beginObject("sampled_check");
    j.integer("targets", r.stats.sampled_targets);
    j.number("potential", r.stats.sampled_potential_error);
    j.number("field", r.stats.sampled_field_error);
    j.boolean("tolerance_missed", r.stats.tolerance_missed);
    j.endObject();
  }
  else
    j.null("sampled_check");

  if (r.calibration)
  {
    kfmm::Calibration const &m = *r.calibration;
    j.beginObject("calibration");
    j.integer("order", static_cast<std::uint64_t>(m.options.order));
    j.number("theta", m.options.theta);
    j.number("field_error", m.field_error);
    j.integer("samples", m.samples);
    j.integer("evaluations", static_cast<std::uint64_t>(m.evaluations));
    j.number("seconds", m.seconds);
    if (m.table_order > 0)
    {
      j.integer("table_order", static_cast<std::uint64_t>(m.table_order));
      j.number("table_theta", m.table_theta);
    }
    else
    {
      j.null("table_order");
      j.null("table_theta");
    }
    j.boolean("direct_sum", m.direct_sum);
    j.boolean("tolerance_missed", m.tolerance_missed);
    j.beginArray("trials");
    for (kfmm::CalibrationTrial const &t : m.trials)
    {
      j.beginObject();
      j.integer("order", static_cast<std::uint64_t>(t.order));
      j.number("theta", t.theta);
      j.string("precision", t.in_double ? "double" : precisionName(c.precision));
      j.boolean("direct_sum", t.direct_sum);
      j.number("field_error", t.field_error);
      j.boolean("meets", t.meets);
      j.number("seconds", t.seconds);
      j.endObject();
    }
    j.endArray();
    j.endObject();
  }
  else
    j.null("calibration");

  j.beginObject("memory");
  j.integer("particle_bytes", r.particle_bytes);
  j.integer("solver_bytes", r.stats.bytes);
  if (r.host_peak_bytes > 0)
    j.integer("host_peak_bytes", r.host_peak_bytes);
  else
    j.null("host_peak_bytes");
  j.endObject();

  j.integer("ranks", static_cast<std::uint64_t>(r.ranks));
  if (!r.per_rank.empty())
  {
    j.beginArray("per_rank");
    for (std::size_t rank = 0; rank < r.per_rank.size(); ++rank)
    {
      RankReport const &p = r.per_rank[rank];
      j.beginObject();
      j.integer("rank", rank);
      j.integer("particles", p.particles);
      j.integer("ghosts", p.ghosts);
      j.integer("pruned_cells", p.pruned_cells);
      j.number("build_seconds", p.build_seconds);
      j.number("build_communication_seconds", p.build_communication_seconds);
      j.number("partition_seconds", p.partition_seconds);
      j.number("essential_trees_seconds", p.essential_trees_seconds);
      treeStepsObject(j, p.essential_tree_steps);
      j.number("evaluate_seconds", p.evaluate_seconds);
      j.number("evaluate_communication_seconds", p.evaluate_communication_seconds);
      j.number("wall_seconds", p.wall_seconds);
      j.endObject();
    }
    j.endArray();
  }
  if (StepsReport const &s = r.steps; s.steps > 0)
  {
    j.beginObject("steps");
    j.integer("count", static_cast<std::uint64_t>(s.steps));
    j.number("move", s.move);
    j.number("seconds", s.seconds);
    j.number("rebuild_seconds", s.rebuild_seconds);
    j.number("partition_seconds", s.partition_seconds);
    j.number("essential_trees_seconds", s.essential_trees_seconds);
    treeStepsObject(j, s.essential_tree_steps);
    j.number("rebuild_communication_seconds", s.rebuild_communication_seconds);
    j.number("evaluate_seconds", s.evaluate_seconds);
    j.number("evaluate_communication_seconds", s.evaluate_communication_seconds);
    j.integer("splitters_kept", static_cast<std::uint64_t>(s.splitters_kept));
    j.number("sent_particles", s.sent_particles);
    j.endObject();
  }
  j.endObject();
  return j.text();
}

} // namespace kfmm::app
