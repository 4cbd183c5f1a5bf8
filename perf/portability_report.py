#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare two kfmm sweeps (perf/sweep.py) in one Markdown report with PNG plots.

    python3 perf/portability_report.py A.json B.json --out DIR

writes DIR/report.md and beside it time_vs_n.png (total time against N, with the direct sum),
stages.png (each stage's time, the backends side by side), ceilings.png (the P2P rate as a
fraction of the backend's best measured pairwise rate, at most 1) and speedup.png; with
--leaf-tuning A-TUNE.json B-TUNE.json (perf/tune_leaf_size.py of the same builds) also
leaf_size.png, the time against the leaf size per order. An axis is logarithmic where its
values span more than a decade. Typically A is a CUDA build on a GPU machine and B an OpenMP
build on a CPU; perf/make_portability_report.sh writes the committed report, perf/portability/.
What a sweep did not measure is written "not measured", never estimated; a rate of a stage
that had no work in a run is written "none", not 0.
"""

import argparse
import json
import os
import sys

from sweep import short_count
from tune_leaf_size import TUNE_FORMAT, leaf_times

SWEEP_FORMAT = "kfmm-sweep"
NOT_MEASURED = "not measured"
# What a rate is when its stage had no work in the run (e.g. every pair near at a small N).
NO_M2L = "none: no M2L translation"
NO_P2P = "none: no near pair"
# The stages drawn as bars of their own, in pipeline order; the rest of the solver's stages
# (setup, sorting, checks, M2P of the treecode) are summed as "others".
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

    @property
    def label(self):
        return backend_label(self.name, self.kokkos, self.machine.get("gpus"))

    def direct_at_largest_n(self, precision):
        """The direct sum's rate at its largest measured N: (N, interactions/s), or None."""
        measured = sorted((n, rate) for (p, n), (_, rate) in self.direct.items()
                          if p == precision)
        return measured[-1] if measured else None

    def pairwise_peak(self, precision):
        """The best pairwise rate measured on this backend in a precision, over the direct sum
        at every N and the FMM's P2P stage in every run: (interactions/s, what reached it), or
        None. Each of those rates is at most this one, so its fraction of it is at most 1."""
        rates = [(rate, f"direct sum, N={short_count(n)}")
                 for (p, n), (_, rate) in self.direct.items() if p == precision]
        rates += [(p2p_rate(run), f"FMM P2P, {d}, N={short_count(n)}")
                  for (d, p, n), run in self.runs.items()
                  if p == precision and is_number(p2p_rate(run))]
        return max(rates, default=None)


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
        self.file = os.path.basename(path)
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
    """Seconds per bar stage (None: not timed in this run), then 'others' for every other
    stage."""
    stages = report["timing"]["stage_seconds"]
    parts = {stage: stages.get(stage) for stage in BAR_STAGES}
    parts["others"] = sum(s for stage, s in stages.items() if stage not in BAR_STAGES)
    return parts


def kernel_rate(work, seconds, no_work):
    """work / seconds of one stage. A run without such work says so (`no_work`): its stage then
    times only a launch, and 0 / that time is no rate. A stage not timed is "not measured"."""
    if not work:
        return no_work
    return work / seconds if seconds else NOT_MEASURED


def p2p_rate(report):
    """Near-field interactions per second of the P2P stage."""
    return kernel_rate(report["interactions"]["p2p"],
                       report["timing"]["stage_seconds"].get("P2P"), NO_P2P)


def m2l_flop_rate(report):
    """The M2L stage's dense-equivalent rate, counted as perf/benchM2L.cpp counts it: 2 n^2
    flops per translation, n = (p+1)(p+2) reals per expansion, whatever the variant."""
    order = report["configuration"]["order"]
    n = (order + 1) * (order + 2)
    return kernel_rate(2.0 * n * n * report["interactions"]["m2l"],
                       report["timing"]["stage_seconds"].get("M2L"), NO_M2L)


# Formatting: 3 significant digits; what is missing or has no work, said in words.

def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def fmt(value, spec=".3g", unit=""):
    if value is None:
        return NOT_MEASURED
    return f"{value:{spec}}{unit}" if is_number(value) else value


def ratio(numerator, denominator):
    return numerator / denominator if is_number(numerator) and is_number(denominator) \
        and denominator else None


def panels(backends):
    """The (distribution, precision) pairs that either sweep ran, in a stable order."""
    return sorted({key[:2] for backend in backends for key in backend.runs})


def sizes(backends, panel, common=False):
    sets = [{key[2] for key in b.runs if key[:2] == panel} for b in backends]
    return sorted(set.intersection(*sets) if common else set.union(*sets))


def run_of(backend, panel, n):
    return backend.runs.get(panel + (n,))


# The plots. Each function returns a figure (None where there is nothing to draw), which main
# saves; the test inspects them. Reference lines that are no data (the ceiling at 1, equal
# time) have gid "reference".

REFERENCE = "reference"
# One colour per backend wherever both are drawn; one per (distribution, precision) panel in
# the plots that draw panels as lines, none of them a backend's or the red of a ceiling.
BACKEND_COLOURS = ("C0", "C1")
PANEL_COLOURS = ("C2", "C4", "C8", "C9", "C5", "C6", "C7")


def axis_scale(values):
    """'log' where the positive values span more than a decade, so that the small ones keep a
    readable size (on a linear axis 0.03 beside 6 is a flat line), else 'linear'."""
    positive = [v for v in values if is_number(v) and v > 0]
    return "log" if positive and max(positive) > 10 * min(positive) else "linear"


def panel_colour(number):
    return PANEL_COLOURS[number % len(PANEL_COLOURS)]


def figure_grid(pyplot, count, columns=2, width=4.8, height=3.6, **options):
    columns = min(count, columns)
    rows = (count + columns - 1) // columns
    figure, axes = pyplot.subplots(rows, columns, figsize=(width * columns, height * rows),
                                   squeeze=False, **options)
    for extra in axes.flat[count:]:
        extra.set_visible(False)
    return figure, list(axes.flat)


def legend_beside(figure, handles, labels, title=None):
    """One legend for the whole figure, right of all its axes, where it hides no data."""
    figure.tight_layout()
    figure.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  fontsize="small", title=title, title_fontsize="small", frameon=False)


def unique_legend_entries(axes):
    """The labelled artists of all axes, each label once, in drawing order."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    return list(entries.values()), list(entries)


def save(figure, out, name):
    # "tight" widens the image to the legends placed outside the axes.
    figure.savefig(os.path.join(out, name), dpi=110, bbox_inches="tight")
    return name


def time_vs_n_figure(pyplot, backends):
    figure, axes = figure_grid(pyplot, len(panels(backends)))
    for ax, panel in zip(axes, panels(backends)):
        drawn = []
        # One colour per backend: its FMM solid, its direct sum dashed.
        for backend, marker, colour in zip(backends, "os", BACKEND_COLOURS):
            points = [(n, total_seconds(run_of(backend, panel, n)))
                      for n in sizes([backend], panel)]
            if points:
                ax.plot(*zip(*points), marker=marker, color=colour,
                        label=f"{backend.label}: FMM")
            direct = sorted((n, s) for (p, n), (s, _) in backend.direct.items()
                            if p == panel[1])
            if direct:
                ax.plot(*zip(*direct), marker=marker, color=colour, linestyle="--",
                        label=f"{backend.label}: all-pairs direct sum")
            drawn += [seconds for _, seconds in points + direct]
        ax.set(xscale="log", yscale=axis_scale(drawn), xlabel="N (particles)",
               ylabel="seconds (median)", title=f"{panel[0]}, {panel[1]}")
        ax.grid(True, which="both", alpha=0.3)
    figure.suptitle("Total time against N (lower is faster)")
    legend_beside(figure, *unique_legend_entries(axes))
    return figure


def stages_figure(pyplot, backends):
    """Per panel, at the largest N both backends ran: each stage's seconds, the backends' bars
    side by side, on a log axis where they span decades (a GPU's milliseconds beside a CPU's
    seconds); the total first."""
    shown = [(panel, sizes(backends, panel, common=True)) for panel in panels(backends)]
    shown = [(panel, ns[-1]) for panel, ns in shown if ns]
    if not shown:
        return None
    figure, axes = figure_grid(pyplot, len(shown), width=6.4, height=3.8)
    width = 0.8 / len(backends)
    for ax, (panel, n) in zip(axes, shown):
        runs = [run_of(b, panel, n) for b in backends]
        parts = [stage_parts(run) for run in runs]
        # The stages that either backend ran; a stage that one did not run shows no bar there.
        stages = [stage for stage in BAR_STAGES + ("others",)
                  if any(is_number(p[stage]) and p[stage] > 0 for p in parts)]
        groups = ["total"] + stages
        heights = [[total_seconds(run)] + [p[stage] or 0.0 for stage in stages]
                   for run, p in zip(runs, parts)]
        ax.set_yscale(axis_scale([h for row in heights for h in row]))
        for index, (backend, row) in enumerate(zip(backends, heights)):
            offset = (index - (len(backends) - 1) / 2) * width
            ax.bar([g + offset for g in range(len(groups))], row, width,
                   color=BACKEND_COLOURS[index], label=backend.label)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, rotation=45, ha="right")
        ax.set(ylabel="seconds (median)", title=f"{panel[0]}, {panel[1]}, N={short_count(n)}")
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.set_axisbelow(True)
    figure.suptitle("Time per stage at the largest N that both ran (lower is faster)")
    legend_beside(figure, *unique_legend_entries(axes))
    return figure


def ceilings_figure(pyplot, backends):
    """Per backend, the P2P stage's rate against N as a fraction of the backend's own best
    measured pairwise rate (pairwise_peak), with the direct sum's rates dashed: every point is
    at most 1 by construction, and the one that set the peak lies on the line at 1."""
    series = []  # (backend index, label, style, points)
    for index, backend in enumerate(backends):
        for number, panel in enumerate(panels(backends)):
            points = [(n, fraction) for n, _, fraction, _, _ in ceiling_rows(backend, panel)
                      if is_number(fraction)]
            if points:
                series.append((index, f"FMM P2P: {panel[0]}, {panel[1]}",
                               {"color": panel_colour(number), "marker": "o"}, points))
        for precision, marker in (("float", "^"), ("double", "v")):
            peak = backend.pairwise_peak(precision)
            points = sorted((n, rate / peak[0]) for (p, n), (_, rate) in backend.direct.items()
                            if p == precision and peak)
            if points:
                series.append((index, f"all-pairs direct sum: {precision}",
                               {"color": "black" if precision == "double" else "darkgrey",
                                "marker": marker, "linestyle": "--"}, points))
    if not series:
        return None
    figure, axes = figure_grid(pyplot, len(backends), width=5.2, height=4.0, sharey=True)
    # One scale for both backends, so that their fractions compare by eye.
    scale = axis_scale([y for *_, points in series for _, y in points])
    for index, label, style, points in series:
        axes[index].plot(*zip(*points), label=label, **style)
    for ax, backend in zip(axes, backends):
        ax.axhline(1.0, color="red", linewidth=1.0, gid=REFERENCE,
                   label="1 = the backend's best measured rate")
        ax.set(xscale="log", yscale=scale, xlabel="N (particles)", title=backend.label)
        ax.grid(True, which="both", alpha=0.3)
    top = 1.4 if scale == "log" else 1.1
    axes[0].set_ylim(top=top, **({} if scale == "log" else {"bottom": 0.0}))
    axes[0].set_ylabel("rate / the best measured rate")
    figure.suptitle("P2P interactions/s against each backend's best measured pairwise rate "
                    "(higher is better, 1 at most)")
    legend_beside(figure, *unique_legend_entries(axes))
    return figure


def speedup_figure(pyplot, backends):
    figure, axes = pyplot.subplots(figsize=(6.4, 4.2))
    values = []
    for number, panel in enumerate(panels(backends)):
        points = [(n, speedup(backends, panel, n)) for n in sizes(backends, panel, common=True)
                  if speedup(backends, panel, n) is not None]
        if points:
            axes.plot(*zip(*points), marker="o", color=panel_colour(number),
                      label=f"{panel[0]}, {panel[1]}")
            values += [s for _, s in points]
    a, b = (backend.name for backend in backends)
    axes.axhline(1.0, color="grey", linewidth=1.0, gid=REFERENCE,
                 label=f"1: equal time; above: {a} faster")
    axes.set(xscale="log", yscale=axis_scale(values + [1.0]), xlabel="N (particles)",
             ylabel=f"total time {b} / total time {a}",
             title=f"How many times faster {a} is than {b}\n"
                   f"{a}: {backends[0].label.split(': ', 1)[1]}; "
                   f"{b}: {backends[1].label.split(': ', 1)[1]}")
    axes.grid(True, which="both", alpha=0.3)
    legend_beside(figure, *axes.get_legend_handles_labels())
    return figure


FASTEST = "the order's fastest"


def leaf_sizes_figure(pyplot, tunings):
    """A row per tuning, a column per precision: each order's time against the leaf size,
    relative to that order's fastest (ringed), so that all orders share one axis; under each
    column the legend of its orders, coloured alike in both rows."""
    precisions = [p for p in ("float", "double")
                  if any(key[0] == p for t in tunings for key in t.curves)]
    figure, grid = pyplot.subplots(len(tunings), len(precisions), squeeze=False,
                                   figsize=(5.6 * len(precisions), 3.6 * len(tunings)))
    colours = pyplot.get_cmap("viridis")
    for column, precision in enumerate(precisions):
        orders = sorted({o for t in tunings for p, o in t.curves if p == precision})
        for row, tuning in enumerate(tunings):
            ax = grid[row][column]
            curves = {o: c for (p, o), c in tuning.curves.items() if p == precision}
            if not curves:
                ax.set_visible(False)
                continue
            values = []
            for order, curve in sorted(curves.items()):
                fastest = min(curve, key=curve.get)
                relative = [t / curve[fastest] for t in curve.values()]
                colour = colours(orders.index(order) / max(1, len(orders) - 1))
                ax.plot(list(curve), relative, marker="o", markersize=3, color=colour,
                        label=f"order {order}")
                ax.plot([fastest], [1.0], marker="o", markersize=8, markerfacecolor="none",
                        color="black", linestyle="none", label=FASTEST)
                values += relative
            leaf_sizes = sorted({leaf for curve in curves.values() for leaf in curve})
            ax.set(xscale="log", yscale=axis_scale(values), xlabel="leaf size",
                   ylabel="time / the order's fastest",
                   title=f"{tuning.label}, {precision}, N={short_count(tuning.n)}")
            ax.set_xticks(leaf_sizes)
            ax.set_xticklabels([str(leaf) for leaf in leaf_sizes])
            ax.minorticks_off()
            ax.grid(True, which="both", alpha=0.3)
    figure.suptitle("Time against the leaf size, per order (1 = the order's fastest, ringed)")
    figure.tight_layout()
    for column in range(len(precisions)):
        visible = [row[column] for row in grid if row[column].get_visible()]
        # Below the column's lowest axes and its axis labels, where it hides no curve.
        handles, labels = unique_legend_entries(visible)
        # The ring's entry last, after the orders.
        ring = labels.index(FASTEST)
        handles.append(handles.pop(ring))
        labels.append(labels.pop(ring))
        visible[-1].legend(handles, labels, loc="upper center",
                           bbox_to_anchor=(0.5, -0.22), ncol=4, fontsize="x-small",
                           frameon=False)
    return figure


def speedup(backends, panel, n):
    """How many times faster A is than B: B's total time over A's."""
    a, b = (run_of(backend, panel, n) for backend in backends)
    return ratio(total_seconds(b), total_seconds(a)) if a and b else None


def ceiling_rows(backend, panel):
    """Per N: (N, P2P rate, its fraction of the backend's best measured pairwise rate, its
    ratio to the direct sum at its largest N, M2L dense-equivalent flop rate)."""
    peak = backend.pairwise_peak(panel[1])
    direct = backend.direct_at_largest_n(panel[1])
    rows = []
    for n in sizes([backend], panel):
        run = run_of(backend, panel, n)
        rate = p2p_rate(run)
        rows.append((n, rate, ratio(rate, peak and peak[0]), ratio(rate, direct and direct[1]),
                     m2l_flop_rate(run)))
    return rows


def figures(pyplot, backends, tunings):
    """{file name: figure or None} of every plot."""
    made = {"time_vs_n.png": time_vs_n_figure(pyplot, backends),
            "stages.png": stages_figure(pyplot, backends),
            "ceilings.png": ceilings_figure(pyplot, backends),
            "speedup.png": speedup_figure(pyplot, backends)}
    if tunings:
        made["leaf_size.png"] = leaf_sizes_figure(pyplot, tunings)
    return made


# The Markdown.

LOG_AXES = ("An axis is logarithmic where its values span more than a decade (each labelled "
            "step then is 10x), linear otherwise.")

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
    lines = ["## P2P and M2L rates", "",
             "P2P: interactions.p2p / the P2P stage's seconds. Its ceiling is the backend's "
             "best measured pairwise rate in the same precision: the highest of the all-pairs "
             "direct sum's rates (kfmm_bench_direct, the backend's default space, every N it "
             "ran) and the P2P rates of this sweep, so that no fraction exceeds 100 % and the "
             "point that set the peak reads 100 %. The direct sum alone is no ceiling: the near "
             "field can run faster than it (\"x the direct sum\" above 1, against its rate at "
             "its largest N).", "",
             "M2L: dense-equivalent flop/s, 2 n^2 flops per translation with n = (p+1)(p+2) "
             "reals per expansion, over the M2L stage's seconds (as perf/benchM2L.cpp counts "
             "them). It is shown without a ceiling: kfmm has no GEMM benchmark, and "
             "kfmm_bench_m2l times the M2L itself, so it cannot be the M2L's ceiling. "
             f"\"{NO_M2L}\": every cell pair of the run was near (a small N with large "
             "leaves), so its M2L stage timed only a launch and has no rate; \"-\": no rate "
             "to compare.", ""]
    for backend in backends:
        lines.append(f"- {backend.label}: " + ceiling_summary(backend))
    lines += ["", "| backend | distribution | precision | N | P2P interactions/s "
              "| of the best measured | x the direct sum | M2L flop/s (dense-equivalent) |",
              "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for backend in backends:
        for panel in panels([backend]):
            for n, rate, fraction, of_direct, m2l in ceiling_rows(backend, panel):
                derived = (fmt(ratio(fraction, 0.01), ".0f", " %"), fmt(of_direct, ".2f")) \
                    if is_number(rate) else ("-", "-")
                lines.append(f"| {backend.name} | {panel[0]} | {panel[1]} | {n} | {fmt(rate)} "
                             f"| {derived[0]} | {derived[1]} | {fmt(m2l)} |")
    return lines + [""]


def ceiling_summary(backend):
    parts = []
    for precision in sorted({panel[1] for panel in panels([backend])}):
        peak = backend.pairwise_peak(precision)
        direct = backend.direct_at_largest_n(precision)
        text = f"{precision}: best measured {fmt(peak and peak[0])} interactions/s"
        text += f" ({peak[1]})" if peak else ""
        if not direct:
            text += f", direct sum {NOT_MEASURED} ({backend.direct_reason})"
        elif peak[0] != direct[1]:
            text += f", direct sum {fmt(direct[1])} interactions/s at N={short_count(direct[0])}"
        parts.append(text)
    return "; ".join(parts)


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
                  f"({', '.join(tuning.distributions)})", "", f"Tuning file: `{tuning.file}`.", "",
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
    lines += image("time against N, with the direct sum", images["time_vs_n.png"])
    lines += ["One panel per distribution and precision; colour: the backend; solid: the FMM, "
              "dashed: the all-pairs direct sum. " + LOG_AXES, ""]
    lines += ["## Stages at the largest common N", ""]
    lines += image("time per stage", images["stages.png"])
    lines += ["At the largest N that both sweeps ran: the total, then each stage's median "
              "seconds, the two backends' bars side by side (others: setup, sorting, checks). "
              + LOG_AXES + " A GPU's milliseconds stay visible beside a CPU's seconds.", ""]
    lines += ceiling_section(backends)
    lines += image("P2P against the best measured rate", images["ceilings.png"])
    lines += ["A panel per backend: each P2P rate and each direct-sum rate as a fraction of "
              "that backend's best measured pairwise rate in its precision; the red line at 1 is "
              "that rate, which no point exceeds. " + LOG_AXES, ""]
    lines += ["## Speedup", ""] + image("speedup against N", images["speedup.png"])
    lines += [f"{b.name}'s total time over {a.name}'s at each N both ran; above the grey line "
              f"at 1 {a.name} is faster. " + LOG_AXES, ""]
    lines += leaf_size_section(tunings, images.get("leaf_size.png"))
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
    images = {name: figure and save(figure, args.out, name)
              for name, figure in figures(pyplot, backends, tunings).items()}
    with open(os.path.join(args.out, "report.md"), "w", encoding="utf-8") as report:
        report.write(report_markdown(backends, images, tunings) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
