#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test of perf/portability_report.py: the report of two sweeps holds their numbers, its plots
exist, a point one sweep lacks shows as "not measured", and unusable files fail clearly; with
two leaf-size tunings it holds each one's fastest leaf size per order and their plot, and
without them says that they were not measured. Its plots: an axis spanning more than a decade
is logarithmic and one within a decade linear (a backend 200 times faster keeps visible stage
bars), no legend lies on an axes, and the P2P fractions of the ceiling are at most 1 even where
the near field outruns the direct sum. A stage without work has no rate, not 0; the M2L has no
GEMM column. perf/make_portability_report.sh replaces the report's files only when the new
report is complete."""

import argparse
import copy
import json
import os
import re
import shutil
import subprocess
import sys

PLOTS = ("time_vs_n.png", "stages.png", "ceilings.png", "speedup.png")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def fail(message):
    sys.exit(f"CheckReport: FAILED: {message}")


def require_matplotlib():
    try:
        import matplotlib  # noqa: F401  (only whether it imports matters)
    except ImportError:
        fail(f"matplotlib is not installed for {sys.executable}; the portability report needs "
             f"it (Debian: apt-get install python3-matplotlib, which backends/setup-deps.sh "
             f"does; or configure with -DKFMM_PYTHON=<a python3 that has it>)")


def run_report(scripts, a, b, out, tunings=()):
    leaf_tuning = ["--leaf-tuning", *tunings] if tunings else []
    return subprocess.run([sys.executable, os.path.join(scripts, "portability_report.py"),
                           a, b, "--out", out, *leaf_tuning], capture_output=True, text=True)


def expected_row(n, a, b):
    """The time table's row for N, from the two sweeps' runs (None: not in that sweep)."""
    def total(run):
        return run["report"]["timing"]["total_seconds"]

    def cell(run, get, spec):
        return "not measured" if run is None else format(get(run), spec)

    speedup = (format(total(b) / total(a), ".2f") if a and b else "not measured")
    return (f"| {n} | {cell(a, total, '.3g')} | {cell(b, total, '.3g')} | {speedup} "
            f"| {cell(a, lambda r: r['report']['errors']['field'], '.2e')} "
            f"| {cell(b, lambda r: r['report']['errors']['field'], '.2e')} |")


def runs_by_n(sweep):
    return {run["n"]: run for run in sweep["runs"]}


def check_report(out, sweep_a, sweep_b):
    with open(os.path.join(out, "report.md"), encoding="utf-8") as file:
        report = file.read()
    for plot in PLOTS:
        with open(os.path.join(out, plot), "rb") as file:
            if file.read(8) != PNG_SIGNATURE:
                fail(f"{plot} is not a PNG file")
        if f"]({plot})" not in report:
            fail(f"report.md does not link {plot} relatively")
    a, b = runs_by_n(sweep_a), runs_by_n(sweep_b)
    for n in sorted(set(a) | set(b)):
        row = expected_row(n, a.get(n), b.get(n))
        if row not in report:
            fail(f"report.md lacks the row\n{row}\n--- report.md:\n{report}")
    for text in ("### uniform, float", "kfmm has no GEMM benchmark", "concurrency 1",
                 "concurrency 2", "AMD EPYC" if "EPYC" in sweep_a["machine"]["cpu"] else ""):
        if text not in report:
            fail(f"report.md lacks '{text}'")
    if "of GEMM" in report:
        fail("report.md still has a column against GEMM, which nothing measures")
    for row, fraction in ceiling_fractions(report):
        if fraction > 100:
            fail(f"a P2P fraction of the best measured rate above 100 %: {row}")
    return report


def ceiling_fractions(report):
    """(row, percent) of each P2P row of the rates table that has a fraction."""
    rows = re.findall(r"^\| [AB] \| .*$", report, re.M)
    if not rows:
        fail("report.md has no rows of P2P and M2L rates")
    cells = [(row, [cell.strip() for cell in row.split("|")[1:-1]]) for row in rows]
    return [(row, float(c[5][:-2])) for row, c in cells if c[5].endswith(" %")]


def check_missing_point(scripts, work, sweep_a, sweep_b):
    """B without its largest N: that row shows B's time and the speedup as not measured."""
    partial = copy.deepcopy(sweep_b)
    partial["runs"] = partial["runs"][:-1]
    path = write_json(work, "partial.json", partial)
    out = os.path.join(work, "partial")
    result = run_report(scripts, write_json(work, "a.json", sweep_a), path, out)
    if result.returncode != 0:
        fail(f"report with a missing point failed: {result.stderr}")
    check_report(out, sweep_a, partial)


def check_bad_input(scripts, work, sweep, name, edit, message):
    """An unusable file: exit status 2 and one line naming the file and the problem."""
    path = write_json(work, name, edit(copy.deepcopy(sweep)))
    result = run_report(scripts, path, path, os.path.join(work, "bad"))
    if result.returncode != 2 or message not in result.stderr or path not in result.stderr:
        fail(f"{name}: expected exit status 2 and '{message}', got {result.returncode}: "
             f"{result.stderr}")


def check_leaf_tuning(scripts, work, a, b, tune_a, tune_b):
    """The report with both tunings: the plot, and per tuning a row per (precision, order)
    whose fastest leaf size is the tuning's table's; a tuning file that is not one fails."""
    out = os.path.join(work, "tuned")
    result = run_report(scripts, a, b, out, (tune_a, tune_b))
    if result.returncode != 0 or result.stderr:
        fail(f"report with --leaf-tuning: exit status {result.returncode}: {result.stderr}")
    with open(os.path.join(out, "report.md"), encoding="utf-8") as file:
        report = file.read()
    with open(os.path.join(out, "leaf_size.png"), "rb") as file:
        if file.read(8) != PNG_SIGNATURE or "](leaf_size.png)" not in report:
            fail("leaf_size.png is missing, not a PNG, or not linked")
    for name, path in (("A", tune_a), ("B", tune_b)):
        with open(path, encoding="utf-8") as file:
            tuning = json.load(file)
        if f"### {name}: OpenMP (concurrency " not in report:
            fail(f"report.md lacks the section of tuning {name}")
        for precision, rows in tuning["table"].items():
            for row in rows:
                start = f"| {precision} | {row['order']} | {row['leaf_size']} | "
                if start not in report:
                    fail(f"report.md lacks the row starting '{start}' of tuning {name}")
    bad = write_json(work, "not_a_tuning.json", {"format": "kfmm-sweep"})
    result = run_report(scripts, a, b, os.path.join(work, "bad"), (bad, tune_b))
    if result.returncode != 2 or "not a kfmm leaf-size tuning file" not in result.stderr:
        fail(f"a sweep given as a tuning: exit status {result.returncode}: {result.stderr}")


def import_report_module(scripts):
    sys.path.insert(0, scripts)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    import portability_report
    return portability_report, pyplot


def plotted_values(ax):
    """The y values that an axes draws: its lines' (the reference lines' too, which the axis
    has to show) and its bars' heights."""
    values = [y for line in ax.get_lines() for y in line.get_ydata()]
    return values + [bar.get_height() for bar in ax.patches]


def check_figures(module, pyplot, name, backends, tunings=()):
    """Every plot of two backends: each axes' y scale fits the span of its data, no legend lies
    on an axes, and the ceilings' data are at most 1. Returns {file name: figure}."""
    made = module.figures(pyplot, backends, list(tunings))
    for file, figure in made.items():
        if figure is None:
            fail(f"{name}: {file} was not drawn")
        figure.canvas.draw()
        renderer = figure.canvas.get_renderer()
        shown = [ax for ax in figure.axes if ax.get_visible()]
        for ax in shown:
            # Axes that share their y axis share its scale: the span is that of all their data.
            positive = [v for sibling in ax.get_shared_y_axes().get_siblings(ax)
                        for v in plotted_values(sibling) if v > 0]
            if not positive:
                fail(f"{name}: {file}: an axes draws no data")
            expected = "log" if max(positive) > 10 * min(positive) else "linear"
            if ax.get_yscale() != expected:
                fail(f"{name}: {file}: data from {min(positive):.3g} to {max(positive):.3g} "
                     f"on a {ax.get_yscale()} axis, expected {expected}")
        legends = list(figure.legends) + [ax.get_legend() for ax in shown if ax.get_legend()]
        if not legends:
            fail(f"{name}: {file} has no legend")
        for legend in legends:
            box = legend.get_window_extent(renderer)
            for ax in shown:
                if box.overlaps(ax.get_window_extent(renderer)):
                    fail(f"{name}: {file}: a legend lies on the axes '{ax.get_title()}'")
    for ax in made["ceilings.png"].axes:
        values = plotted_values(ax)
        if max(values) > 1.0 + 1e-12:
            fail(f"{name}: ceilings.png: a fraction of the ceiling above 1: {max(values)}")
        if not any(line.get_gid() == module.REFERENCE and list(line.get_ydata()) == [1, 1]
                   for line in ax.get_lines()):
            fail(f"{name}: ceilings.png: no line at the ceiling, 1")
    return made


def scaled_times(sweep, factor):
    """The sweep with every run's times multiplied by factor (a faster or slower backend)."""
    for run in sweep["runs"]:
        timing = run["report"]["timing"]
        timing["total_seconds"] *= factor
        timing["stage_seconds"] = {k: v * factor for k, v in timing["stage_seconds"].items()}
    return sweep


def slow_direct_sum(sweep):
    """The sweep with a direct sum 4 times slower than measured: its P2P outruns it."""
    for result in sweep["direct_sum"]["results"]:
        result["seconds"] *= 4
        result["interactions_per_second"] /= 4
    return sweep


def check_plots(scripts, work, a, b, tune_a, tune_b, sweep_a, sweep_b):
    """The figures of the checked-in pair, of a backend 200 times faster beside B (a GPU
    beside a CPU: its stage bars must stay visible on a log axis),
    and of sweeps whose P2P outruns their direct sum (the fraction must stay at most 1, which
    against the direct sum it would not be)."""
    module, pyplot = import_report_module(scripts)
    tunings = [module.load_leaf_tuning(n, p) for n, p in (("A", tune_a), ("B", tune_b))]
    made = check_figures(module, pyplot, "checked-in sweeps",
                         (module.load_backend("A", a), module.load_backend("B", b)), tunings)
    scales = {ax.get_yscale() for figure in made.values() for ax in figure.axes}
    if scales != {"log", "linear"}:
        fail(f"the checked-in sweeps' plots use only {scales}: the test does not tell the "
             "two scales apart")
    fast = write_json(work, "fast.json", scaled_times(copy.deepcopy(sweep_a), 1 / 200))
    made = check_figures(module, pyplot, "a backend 200 times faster",
                         (module.load_backend("A", fast), module.load_backend("B", b)))
    for ax in made["stages.png"].axes:
        if ax.get_visible() and ax.get_yscale() != "log":
            fail("stages.png of a backend 200 times faster: a linear axis hides its bars")
    slow = [write_json(work, f"slow-direct-{name}.json", slow_direct_sum(copy.deepcopy(sweep)))
            for name, sweep in (("a", sweep_a), ("b", sweep_b))]
    backends = [module.load_backend(name, path) for name, path in zip("AB", slow)]
    if not any(is_over(module, backend, 1.0) for backend in backends):
        fail("the slowed direct sum does not put the P2P above it: the test checks nothing")
    check_figures(module, pyplot, "a direct sum slower than the P2P", backends)
    out = os.path.join(work, "slow-direct")
    result = run_report(scripts, *slow, out)
    if result.returncode != 0:
        fail(f"report with a slow direct sum: {result.stderr}")
    check_report(out, *(read_json(path) for path in slow))
    pyplot.close("all")


def is_over(module, backend, bound):
    """Whether some P2P rate of the backend exceeds `bound` times its direct sum's."""
    return any(module.is_number(of_direct) and of_direct > bound
               for panel in module.panels([backend])
               for *_, of_direct, _ in module.ceiling_rows(backend, panel))


def check_no_m2l_work(scripts, work, sweep_a, sweep_b):
    """A run without M2L translations (every pair near): its M2L rate reads as none, not 0."""
    edited = copy.deepcopy(sweep_b)
    edited["runs"][0]["report"]["interactions"]["m2l"] = 0
    out = os.path.join(work, "no-m2l")
    result = run_report(scripts, write_json(work, "a.json", sweep_a),
                        write_json(work, "no-m2l.json", edited), out)
    if result.returncode != 0:
        fail(f"report with a run without M2L: {result.stderr}")
    with open(os.path.join(out, "report.md"), encoding="utf-8") as file:
        report = file.read()
    run = edited["runs"][0]
    start = f"| B | {run['distribution']} | {run['precision']} | {run['n']} | "
    rows = [line for line in report.splitlines() if line.startswith(start)]
    if len(rows) != 1 or not rows[0].endswith("| none: no M2L translation |"):
        fail(f"the run without M2L translations: rows {rows}")
    if re.search(r"\| 0 \|", report):
        fail("a cell of the report reads 0")


def check_script(scripts, work, a, b, tune_a, tune_b):
    """perf/make_portability_report.sh, run from a copy of the scripts: it writes report.md
    and the five plots into perf/portability, removes a plot of an earlier report, and leaves
    the report as it was when an input file is unusable."""
    perf = os.path.join(work, "checkout", "perf")
    os.makedirs(os.path.join(perf, "portability"))
    for name in ("make_portability_report.sh", "portability_report.py", "sweep.py",
                 "tune_leaf_size.py"):
        shutil.copy(os.path.join(scripts, name), perf)
    out = os.path.join(perf, "portability")
    stale = os.path.join(out, "stale.png")
    write_json(out, "stale.png", {})
    environment = dict(os.environ, KFMM_PYTHON=sys.executable)
    command = ["bash", os.path.join(perf, "make_portability_report.sh")]
    result = subprocess.run(command + [a, b, tune_a, tune_b], capture_output=True, text=True,
                            env=environment)
    if result.returncode != 0:
        fail(f"make_portability_report.sh: exit status {result.returncode}: {result.stderr}")
    written = sorted(os.listdir(out))
    if written != sorted(PLOTS + ("leaf_size.png", "report.md")) or os.path.exists(stale):
        fail(f"make_portability_report.sh wrote {written}")
    with open(os.path.join(out, "report.md"), encoding="utf-8") as file:
        before = file.read()
    result = subprocess.run(command + [a, os.path.join(work, "missing.json")],
                            capture_output=True, text=True, env=environment)
    with open(os.path.join(out, "report.md"), encoding="utf-8") as file:
        after = file.read()
    if result.returncode != 2 or after != before or sorted(os.listdir(out)) != written:
        fail(f"make_portability_report.sh with a missing file: exit status "
             f"{result.returncode}, the report {'kept' if after == before else 'changed'}")
    if [name for name in os.listdir(perf) if name.startswith("portability.new")]:
        fail("make_portability_report.sh left its scratch folder behind")


def drop_total(sweep):
    del sweep["runs"][0]["report"]["timing"]["total_seconds"]
    return sweep


def read_json(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def write_json(folder, name, data):
    path = os.path.join(folder, name)
    with open(path, "w", encoding="utf-8") as file:
        json.dump(data, file)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scripts", required=True, help="the folder of portability_report.py")
    parser.add_argument("--a", required=True, help="sweep A")
    parser.add_argument("--b", required=True, help="sweep B")
    parser.add_argument("--tune-a", required=True, help="leaf-size tuning of A's build")
    parser.add_argument("--tune-b", required=True, help="leaf-size tuning of B's build")
    parser.add_argument("--work", required=True, help="scratch folder (emptied first)")
    args = parser.parse_args()
    require_matplotlib()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    with open(args.a, encoding="utf-8") as file:
        sweep_a = json.load(file)
    with open(args.b, encoding="utf-8") as file:
        sweep_b = json.load(file)
    out = os.path.join(args.work, "report")
    result = run_report(args.scripts, args.a, args.b, out)
    if result.returncode != 0 or result.stderr:
        fail(f"portability_report.py: exit status {result.returncode}: {result.stderr}")
    report = check_report(out, sweep_a, sweep_b)
    if "Time against the leaf size: not measured" not in report:
        fail("without --leaf-tuning the report does not say the leaf size was not measured")
    check_leaf_tuning(args.scripts, args.work, args.a, args.b, args.tune_a, args.tune_b)
    check_missing_point(args.scripts, args.work, sweep_a, sweep_b)
    check_plots(args.scripts, args.work, args.a, args.b, args.tune_a, args.tune_b, sweep_a,
                sweep_b)
    check_no_m2l_work(args.scripts, args.work, sweep_a, sweep_b)
    check_script(args.scripts, args.work, args.a, args.b, args.tune_a, args.tune_b)
    check_bad_input(args.scripts, args.work, sweep_a, "not_a_sweep.json",
                    lambda s: s["runs"][0]["report"], "not a kfmm sweep file")
    check_bad_input(args.scripts, args.work, sweep_a, "no_total.json", drop_total,
                    "run 0: report: missing key 'timing.total_seconds'")
    print("CheckReport: report.md, its tables and plots as expected; bad files refused; "
          "make_portability_report.sh replaces the report")


if __name__ == "__main__":
    main()
