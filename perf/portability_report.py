#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare two kfmm sweeps (perf/sweep.py) in one Markdown report with PNG plots.

    python3 perf/portability_report.py A.json B.json --out DIR

writes DIR/report.md and beside it time_vs_n.png, stages.png, ceilings.png and speedup.png;
with --leaf-tuning A-TUNE.json B-TUNE.json (perf/tune_leaf_size.py of the same builds) also
leaf_size.png, the time against the leaf size per order. Typically A is a CUDA build on a GPU
machine and B an OpenMP build on a CPU. What a sweep did not measure is written "not
measured", never estimated.
"""

import argparse
import json
import os
import sys

from sweep import short_count
from tune_leaf_size import TUNE_FORMAT, leaf_times

SWEEP_FORMAT = "kfmm-sweep"
NOT_MEASURED = "not measured"
# The stages drawn as their own part of a stacked bar, in pipeline order; the rest of the
# solver's stages (setup, sorting, checks, M2P of the treecode) are summed as "others".
BAR_STAGES = ("tree", "lists", "M2L matrices", "M2L rotations", "P2M", "M2M", "M2L", "L2L", "L2P",
              "P2P")


class SweepFileError(Exception):
    """An input file that is not a usable sweep; the message names the file and the problem."""


def require(data, path, where):
    """data[path[0]][path[1]]...; a missing key or a wrong type is a SweepFileError."""
    value = data
    for depth, key in enumerate(path):
        if not isinstance(value, dict) or key not in value:
            shown = ".".join(path[:depth + 1])
            raise SweepFileError(f"{where}: missing key '{shown}'")
        value = value[key]
    return value


def require_number(data, path, where):
    value = require(data, path, where)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise SweepFileError(f"{where}: '{'.'.join(path)}' is not a number")
    return value


def backend_label(name, kokkos, gpus):
    """'A: Cuda (NVIDIA H200)' or 'B: OpenMP (concurrency 2)': a build's name in legends and
    headings, from its Kokkos configuration and the machine's GPUs."""
    space = kokkos.get("default_space")
    if kokkos.get("default_space_is_gpu") and gpus:
        return f"{name}: {space} ({gpus[0]})"
    return f"{name}: {space} (concurrency {kokkos.get('concurrency')})"


class Backend:
    """One sweep: where and how it ran, its successful runs, its failures, its ceilings."""

    def __init__(self, name, path, sweep):
        self.name = name
        self.file = os.path.basename(path)
        self.date = require(sweep, ["date"], path)
        self.machine = require(sweep, ["machine"], path)
        self.environment = sweep.get("environment") or {}
        self.kokkos = require(sweep, ["kokkos"], path)
        self.version = require(sweep, ["kfmm_version"], path)
        self.repeat = require(sweep, ["sweep", "repeat"], path)
        self.commands = require(sweep, ["commands"], path)
        self.runs, self.failures = read_runs(require(sweep, ["runs"], path), path)
        if not self.runs:
            raise SweepFileError(f"{path}: no successful run to report on")
        if self.kokkos is None:
            raise SweepFileError(f"{path}: 'kokkos' is null although runs succeeded")
        self.space = require(self.kokkos, ["default_space"], f"{path}: kokkos")
        self.direct = read_direct_sum(require(sweep, ["direct_sum"], path), self.space, path)
        self.direct_reason = sweep["direct_sum"].get("reason", "")
        gemm = sweep.get("gemm") or {}
        self.gemm_rate = gemm.get("flops_per_second") if gemm.get("measured") else None
        self.gemm_reason = gemm.get("reason", "no GEMM rate in the sweep file")

    @property
    def label(self):
        return backend_label(self.name, self.kokkos, self.machine.get("gpus"))

    def direct_ceiling(self, precision):
        """The direct sum's rate at its largest measured N: (N, interactions/s), or None."""
        measured = sorted((n, rate) for (p, n), (_, rate) in self.direct.items()
                          if p == precision)
        return measured[-1] if measured else None


def read_runs(runs, path):
    """The successful runs keyed by (distribution, precision, N), and the failed ones."""
    if not isinstance(runs, list):
        raise SweepFileError(f"{path}: 'runs' is not a list")
    reports, failures = {}, []
    for index, run in enumerate(runs):
        where = f"{path}: run {index}"
        key = (require(run, ["distribution"], where), require(run, ["precision"], where),
               require_number(run, ["n"], where))
        if run.get("tolerance") is not None:
            raise SweepFileError(f"{where}: a sweep over tolerances (sweep.py --tolerances) "
                                 "has several runs per case; perf/sweep_table.py tabulates it")
        if not require(run, ["ok"], where):
            failures.append((key, run.get("error", "no error recorded")))
            continue
        report = require(run, ["report"], where)
        for field in (["timing", "total_seconds"], ["interactions", "p2p"],
                      ["interactions", "m2l"], ["configuration", "order"]):
            require_number(report, field, where + ": report")
        require(report, ["timing", "stage_seconds"], where + ": report")
        require(report, ["errors"], where + ": report")
        reports[key] = report
    return reports, failures


def read_direct_sum(direct, space, path):
    """{(precision, N): (seconds, interactions/s)} of the backend's default space."""
    if not require(direct, ["measured"], f"{path}: direct_sum"):
        return {}
    rates = {}
    for index, result in enumerate(require(direct, ["results"], f"{path}: direct_sum")):
        where = f"{path}: direct_sum result {index}"
        if require(result, ["space"], where) != space:
            continue
        key = (require(result, ["precision"], where), require_number(result, ["n"], where))
        rates[key] = (require_number(result, ["seconds"], where),
                      require_number(result, ["interactions_per_second"], where))
    return rates


class LeafTuning:
    """One leaf-size tuning: per (precision, order) the time of each leaf size timed (the
    geometric mean over the distributions, as the tuning chose by) and the fastest."""

    def __init__(self, name, path, data):
        self.name = name
        self.n = require_number(data, ["tune", "n"], path)
        self.distributions = require(data, ["tune", "distributions"], path)
        self.kokkos = require(data, ["kokkos"], path)
        require(self.kokkos, ["default_space"], f"{path}: kokkos")  # the label's
        self.gpus = require(data, ["machine"], path).get("gpus")
        runs = require(data, ["runs"], path)
        if not isinstance(runs, list):
            raise SweepFileError(f"{path}: 'runs' is not a list")
        for index, run in enumerate(runs):
            where = f"{path}: run {index}"
            for key in ("precision", "distribution", "ok"):
                require(run, [key], where)
            for key in ("order", "leaf_size"):
                require_number(run, [key], where)
            if run["ok"]:
                require_number(run, ["report", "timing", "total_seconds"], where)
        self.curves = {}
        for precision, order in sorted({(r["precision"], r["order"]) for r in runs},
                                       key=lambda key: (key[0] != "float", key[1])):
            times = leaf_times(runs, precision, order, self.distributions)
            if times:
                self.curves[(precision, order)] = dict(sorted(times.items()))
        if not self.curves:
            raise SweepFileError(f"{path}: no leaf size with every distribution timed")

    @property
    def label(self):
        return backend_label(self.name, self.kokkos, self.gpus)


def read_json(path, what, format_name, writer):
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except OSError as error:
        raise SweepFileError(f"{path}: cannot be read: {error.strerror}")
    except ValueError as error:
        raise SweepFileError(f"{path}: not JSON: {error}")
    if not isinstance(data, dict) or data.get("format") != format_name:
        raise SweepFileError(f"{path}: not a kfmm {what} file (no \"format\": "
                             f"\"{format_name}\"; {writer} writes them)")
    return data


def load_leaf_tuning(name, path):
    return LeafTuning(name, path, read_json(path, "leaf-size tuning", TUNE_FORMAT,
                                            "perf/tune_leaf_size.py"))


def load_backend(name, path):
    return Backend(name, path, read_json(path, "sweep", SWEEP_FORMAT, "perf/sweep.py"))


# Quantities of one run.

def total_seconds(report):
    return report["timing"]["total_seconds"]


def field_error(report):
    errors = report["errors"]
    return errors.get("field") if isinstance(errors, dict) else None


def stage_parts(report):
    """Seconds per bar stage, then 'others' for every other stage."""
    stages = report["timing"]["stage_seconds"]
    parts = {stage: stages.get(stage, 0.0) for stage in BAR_STAGES}
    parts["others"] = sum(s for stage, s in stages.items() if stage not in BAR_STAGES)
    return parts


def p2p_rate(report):
    seconds = report["timing"]["stage_seconds"].get("P2P")
    return report["interactions"]["p2p"] / seconds if seconds else None


def grouped_m2l_flop_rate(report):
    """The dense-equivalent rate of the grouped M2L, counted as perf/benchM2L.cpp counts it:
    2 n^2 flops per translation, n = (p+1)(p+2) reals per expansion. None for other variants."""
    if (report.get("m2l") or {}).get("variant") != "grouped":
        return None
    seconds = report["timing"]["stage_seconds"].get("M2L")
    order = report["configuration"]["order"]
    n = (order + 1) * (order + 2)
    return 2.0 * n * n * report["interactions"]["m2l"] / seconds if seconds else None


# Formatting: 3 significant digits, and "not measured" for what is missing.

def fmt(value, spec=".3g", unit=""):
    return NOT_MEASURED if value is None else f"{value:{spec}}{unit}"


def ratio(numerator, denominator):
    return numerator / denominator if numerator is not None and denominator else None


def panels(backends):
    """The (distribution, precision) pairs that either sweep ran, in a stable order."""
    return sorted({key[:2] for backend in backends for key in backend.runs})


def sizes(backends, panel, common=False):
    sets = [{key[2] for key in b.runs if key[:2] == panel} for b in backends]
    return sorted(set.intersection(*sets) if common else set.union(*sets))


def run_of(backend, panel, n):
    return backend.runs.get(panel + (n,))


# The plots.

def figure_grid(pyplot, count, width=4.8, height=3.6):
    columns = min(count, 2)
    rows = (count + columns - 1) // columns
    figure, axes = pyplot.subplots(rows, columns, figsize=(width * columns, height * rows),
                                   squeeze=False)
    for extra in axes.flat[count:]:
        extra.set_visible(False)
    return figure, list(axes.flat)


def save(figure, out, name):
    figure.tight_layout()
    # "tight" keeps legends placed outside the axes inside the image.
    figure.savefig(os.path.join(out, name), dpi=110, bbox_inches="tight")
    return name


def plot_time_vs_n(pyplot, backends, out):
    figure, axes = figure_grid(pyplot, len(panels(backends)))
    for ax, panel in zip(axes, panels(backends)):
        # One colour per backend: its FMM solid, its direct sum dashed.
        for backend, marker, colour in zip(backends, "os", ("C0", "C1")):
            points = [(n, total_seconds(run_of(backend, panel, n)))
                      for n in sizes([backend], panel)]
            if points:
                ax.plot(*zip(*points), marker=marker, color=colour,
                        label=f"{backend.label} FMM")
            direct = sorted((n, s) for (p, n), (s, _) in backend.direct.items()
                            if p == panel[1])
            if direct:
                ax.plot(*zip(*direct), marker=marker, color=colour, linestyle="--",
                        label=f"{backend.name}: direct sum")
        ax.set(xscale="log", yscale="log", xlabel="N", ylabel="seconds",
               title=f"{panel[0]}, {panel[1]}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    return save(figure, out, "time_vs_n.png")


def plot_stages(pyplot, backends, out):
    """Stacked stage bars of both backends side by side at the largest common N per panel."""
    shown = [(panel, sizes(backends, panel, common=True)) for panel in panels(backends)]
    shown = [(panel, ns[-1]) for panel, ns in shown if ns]
    if not shown:
        return None
    figure, axes = figure_grid(pyplot, len(shown))
    colours = pyplot.get_cmap("tab10").colors
    for ax, (panel, n) in zip(axes, shown):
        bottoms = [0.0] * len(backends)
        for index, stage in enumerate(BAR_STAGES + ("others",)):
            heights = [stage_parts(run_of(b, panel, n))[stage] for b in backends]
            ax.bar([b.name for b in backends], heights, bottom=bottoms, label=stage,
                   color=colours[index % len(colours)])
            bottoms = [bottom + height for bottom, height in zip(bottoms, heights)]
        ax.set(ylabel="seconds", title=f"{panel[0]}, {panel[1]}, N={n}")
    # Beside the bars, which it would hide.
    axes[0].legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return save(figure, out, "stages.png")


def plot_ceilings(pyplot, backends, out):
    """P2P (and, where a GEMM rate exists, grouped M2L) as a fraction of the ceiling, vs N."""
    figure, axes = pyplot.subplots(figsize=(6.4, 4.2))
    drawn = False
    for backend, marker in zip(backends, "os"):
        for panel in panels(backends):
            rows = ceiling_rows(backend, panel)
            for column, kernel in ((2, "P2P"), (4, "M2L")):
                points = [(row[0], row[column]) for row in rows if row[column] is not None]
                if points:
                    label = f"{backend.name} {kernel}: {panel[0]}, {panel[1]}"
                    axes.plot(*zip(*points), marker=marker, label=label)
                    drawn = True
    if not drawn:
        pyplot.close(figure)
        return None
    axes.set(xscale="log", xlabel="N", ylabel="fraction of the ceiling",
             title="hot kernels against their backend's measured ceiling")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    return save(figure, out, "ceilings.png")


def plot_speedup(pyplot, backends, out):
    figure, axes = pyplot.subplots(figsize=(6.4, 4.2))
    for panel in panels(backends):
        points = [(n, speedup(backends, panel, n)) for n in sizes(backends, panel, common=True)]
        if points:
            axes.plot(*zip(*points), marker="o", label=f"{panel[0]}, {panel[1]}")
    axes.axhline(1.0, color="grey", linewidth=0.8)
    axes.set(xscale="log", yscale="log", xlabel="N",
             ylabel=f"total time {backends[1].name} / total time {backends[0].name}",
             title=f"speedup of {backends[0].label} over {backends[1].label}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize="small")
    return save(figure, out, "speedup.png")


def plot_leaf_sizes(pyplot, tunings, out):
    """Per tuning and precision, each order's time against the leaf size, relative to that
    order's fastest (ringed), so that all orders share one axis."""
    shown = [(t, p) for t in tunings for p in ("float", "double")
             if any(key[0] == p for key in t.curves)]
    figure, axes = figure_grid(pyplot, len(shown))
    for ax, (tuning, precision) in zip(axes, shown):
        orders = sorted(o for p, o in tuning.curves if p == precision)
        colours = pyplot.get_cmap("viridis")
        for index, order in enumerate(orders):
            curve = tuning.curves[(precision, order)]
            fastest = min(curve, key=curve.get)
            colour = colours(index / max(1, len(orders) - 1))
            ax.plot(list(curve), [t / curve[fastest] for t in curve.values()], marker="o",
                    markersize=3, color=colour, label=f"order {order}")
            ax.plot([fastest], [1.0], marker="o", markersize=8, markerfacecolor="none",
                    color="black")
        leaf_sizes = sorted({leaf for (p, _), curve in tuning.curves.items() if p == precision
                             for leaf in curve})
        ax.set(xscale="log", xlabel="leaf size", ylabel="time / the order's fastest",
               title=f"{tuning.label}, {precision}, N={short_count(tuning.n)}")
        ax.set_xticks(leaf_sizes)
        ax.set_xticklabels([str(leaf) for leaf in leaf_sizes])
        ax.minorticks_off()
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small", ncol=2)
    return save(figure, out, "leaf_size.png")


def speedup(backends, panel, n):
    """How many times faster A is than B: B's total time over A's."""
    a, b = (run_of(backend, panel, n) for backend in backends)
    return ratio(total_seconds(b), total_seconds(a)) if a and b else None


def ceiling_rows(backend, panel):
    """Per N: (N, P2P rate, fraction of the direct sum, grouped M2L flop rate, of GEMM)."""
    ceiling = backend.direct_ceiling(panel[1])
    rows = []
    for n in sizes([backend], panel):
        run = run_of(backend, panel, n)
        rate, m2l = p2p_rate(run), grouped_m2l_flop_rate(run)
        rows.append((n, rate, ratio(rate, ceiling[1] if ceiling else None),
                     m2l, ratio(m2l, backend.gemm_rate)))
    return rows


# The Markdown.

def header_table(backends):
    def gpus(b):
        return ", ".join(b.machine.get("gpus") or []) or "none found"

    def kokkos(b):
        k = b.kokkos
        return (f"{k.get('version')}, default space {k.get('default_space')}, enabled "
                f"{' '.join(k.get('enabled_spaces') or [])}, concurrency {k.get('concurrency')}")

    def environment(b):
        return ", ".join(f"{k}={v}" for k, v in sorted(b.environment.items())) or "not recorded"

    rows = [("sweep file", lambda b: f"`{b.file}`"), ("date (UTC)", lambda b: b.date),
            ("CPU", lambda b: f"{b.machine.get('cpu')}, {b.machine.get('cores')} logical CPUs"),
            ("GPU", gpus), ("Kokkos", kokkos), ("kfmm", lambda b: b.version),
            ("environment", environment), ("warm runs per point (median)", lambda b: b.repeat)]
    lines = ["| | " + " | ".join(b.label for b in backends) + " |",
             "| --- |" + " --- |" * len(backends)]
    lines += [f"| {name} | " + " | ".join(str(value(b)) for b in backends) + " |"
              for name, value in rows]
    return lines


def time_table(backends, panel):
    a, b = backends
    lines = [f"### {panel[0]}, {panel[1]}", "",
             f"| N | total {a.name} (s) | total {b.name} (s) | speedup {a.name} over {b.name} "
             f"| field error {a.name} | field error {b.name} |",
             "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    for n in sizes(backends, panel):
        ra, rb = run_of(a, panel, n), run_of(b, panel, n)
        lines.append(f"| {n} | {fmt(ra and total_seconds(ra))} | {fmt(rb and total_seconds(rb))} "
                     f"| {fmt(speedup(backends, panel, n), '.2f')} "
                     f"| {fmt(ra and field_error(ra), '.2e')} "
                     f"| {fmt(rb and field_error(rb), '.2e')} |")
    return lines + [""]


def ceiling_section(backends):
    lines = ["## Hot kernels against their ceilings", "",
             "P2P: interactions.p2p / P2P stage seconds, against the all-pairs direct sum's "
             "rate (kfmm_bench_direct, the backend's default space, the same precision, its "
             "largest measured N). Grouped M2L: 2 n^2 flops per translation, n = (p+1)(p+2), "
             "over the M2L stage seconds, against a GEMM rate.", ""]
    for backend in backends:
        lines.append(f"- {backend.label}: " + ceiling_summary(backend))
    lines += ["", "| backend | distribution | precision | N | P2P interactions/s "
              "| of the direct sum | grouped M2L flop/s | of GEMM |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for backend in backends:
        for panel in panels([backend]):
            for n, rate, fraction, m2l, of_gemm in ceiling_rows(backend, panel):
                lines.append(f"| {backend.name} | {panel[0]} | {panel[1]} | {n} | {fmt(rate)} "
                             f"| {fmt(fraction and 100 * fraction, '.0f', ' %')} | {fmt(m2l)} "
                             f"| {fmt(of_gemm and 100 * of_gemm, '.0f', ' %')} |")
    return lines + [""]


def ceiling_summary(backend):
    parts = []
    for precision in sorted({panel[1] for panel in panels([backend])}):
        ceiling = backend.direct_ceiling(precision)
        parts.append(f"direct sum in {precision} {fmt(ceiling and ceiling[1])} interactions/s"
                     + (f" (N={ceiling[0]})" if ceiling else f" ({backend.direct_reason})"))
    gemm = (f"GEMM {fmt(backend.gemm_rate)} flop/s" if backend.gemm_rate is not None
            else f"GEMM rate {NOT_MEASURED} ({backend.gemm_reason})")
    return "; ".join(parts + [gemm])


def image(title, name):
    return [f"![{title}]({name})", ""] if name else [f"{title}: {NOT_MEASURED}.", ""]


def commands_section(backends):
    lines = ["## Commands", ""]
    for backend in backends:
        lines += [f"{backend.label} (FILE: a temporary file):", "", "```"]
        lines += [str(command) for command in backend.commands] + ["```", ""]
        lines += [f"- failed: {key[0]} {key[1]} N={key[2]}: {error}"
                  for key, error in backend.failures]
        if backend.failures:
            lines.append("")
    return lines


def leaf_size_section(tunings, image_name):
    lines = ["## Leaf size", ""]
    if not tunings:
        return lines + [f"Time against the leaf size: {NOT_MEASURED} (perf/tune_leaf_size.py "
                        "on each build, then --leaf-tuning).", ""]
    lines += ["The fastest leaf size per order, the backend's table for `Options::leaf_size` "
              "= 0 (perf/tune_leaf_size.py): the time is the geometric mean over the "
              "distributions, tree build included; beside it every leaf size timed, relative "
              "to the fastest.", ""]
    for tuning in tunings:
        lines += [f"### {tuning.label}, N={short_count(tuning.n)} "
                  f"({', '.join(tuning.distributions)})", "",
                  "| precision | order | fastest leaf size | seconds | leaf size: relative time |",
                  "| --- | --- | --- | --- | --- |"]
        for (precision, order), curve in tuning.curves.items():
            fastest = min(curve, key=curve.get)
            relative = ", ".join(f"{leaf}: {t / curve[fastest]:.2f}" for leaf, t in curve.items())
            lines.append(f"| {precision} | {order} | {fastest} | {curve[fastest]:.3g} "
                         f"| {relative} |")
        lines.append("")
    return lines + image("time against leaf size", image_name)


def report_markdown(backends, images, tunings):
    a, b = backends
    lines = [f"# kfmm portability report: {a.label} vs {b.label}", ""] + header_table(backends)
    lines += ["", "## Total time", "",
              f"Median over the warm runs of each point. Speedup {a.name} over {b.name} = total "
              f"time of {b.name} / total time of {a.name} (above 1: {a.name} is faster). Field "
              f"error: relative L2 against the direct sum in double on min(1000, N) particles.",
              ""]
    for panel in panels(backends):
        lines += time_table(backends, panel)
    lines += image("time against N, with the direct sum", images["time"])
    lines += ["## Stages at the largest common N", ""]
    lines += image("stage breakdown", images["stages"])
    lines += ceiling_section(backends)
    lines += image("fraction of the ceiling", images["ceilings"])
    lines += ["## Speedup", ""] + image("speedup against N", images["speedup"])
    lines += leaf_size_section(tunings, images.get("leaf_size"))
    lines += commands_section(backends)
    return "\n".join(lines)


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(f"portability_report.py: error: matplotlib is not installed for "
                         f"{sys.executable} (Debian: apt-get install python3-matplotlib; "
                         f"elsewhere: python3 -m pip install matplotlib)")
    # No display is needed: the plots only go to PNG files.
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    return pyplot


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="Compare two kfmm sweeps (written by perf/sweep.py, e.g. a CUDA build and "
                    "an OpenMP build) in DIR/report.md with PNG plots beside it: time against "
                    "N with the direct sum, stage breakdowns, the hot kernels against their "
                    "measured ceilings, and the speedup of A over B.",
        epilog="Exit status: 0 on success, 2 on a bad command line or an unusable sweep file.")
    parser.add_argument("a", metavar="A.json", help="the first sweep (A)")
    parser.add_argument("b", metavar="B.json", help="the second sweep (B)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="folder for report.md and the PNGs (created if missing)")
    parser.add_argument("--leaf-tuning", nargs=2, metavar=("A-TUNE.json", "B-TUNE.json"),
                        help="the leaf-size tunings (perf/tune_leaf_size.py) of the builds of "
                             "A and B, plotted as time against leaf size")
    return parser.parse_args(argv)


def main(argv):
    args = parse_arguments(argv)
    try:
        backends = (load_backend("A", args.a), load_backend("B", args.b))
        tunings = [load_leaf_tuning(name, path)
                   for name, path in zip("AB", args.leaf_tuning or [])]
    except SweepFileError as error:
        sys.stderr.write(f"portability_report.py: error: {error}\n")
        return 2
    pyplot = import_pyplot()
    os.makedirs(args.out, exist_ok=True)
    images = {"time": plot_time_vs_n(pyplot, backends, args.out),
              "stages": plot_stages(pyplot, backends, args.out),
              "ceilings": plot_ceilings(pyplot, backends, args.out),
              "speedup": plot_speedup(pyplot, backends, args.out)}
    if tunings:
        images["leaf_size"] = plot_leaf_sizes(pyplot, tunings, args.out)
    with open(os.path.join(args.out, "report.md"), "w", encoding="utf-8") as report:
        report.write(report_markdown(backends, images, tunings) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
