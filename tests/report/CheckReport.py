#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test of perf/portability_report.py: the report of two sweeps holds their numbers, its plots
exist, a point one sweep lacks shows as "not measured", and unusable files fail clearly; with
two leaf-size tunings it holds each one's fastest leaf size per order and their plot, and
without them says that they were not measured."""

import argparse
import copy
import json
import os
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
    for text in ("### uniform, float", "GEMM rate not measured", "concurrency 1",
                 "concurrency 2", "AMD EPYC" if "EPYC" in sweep_a["machine"]["cpu"] else ""):
        if text not in report:
            fail(f"report.md lacks '{text}'")
    return report


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


def drop_total(sweep):
    del sweep["runs"][0]["report"]["timing"]["total_seconds"]
    return sweep


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
    check_bad_input(args.scripts, args.work, sweep_a, "not_a_sweep.json",
                    lambda s: s["runs"][0]["report"], "not a kfmm sweep file")
    check_bad_input(args.scripts, args.work, sweep_a, "no_total.json", drop_total,
                    "run 0: report: missing key 'timing.total_seconds'")
    print("CheckReport: report.md, its tables and plots as expected; bad files refused")


if __name__ == "__main__":
    main()
