#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What `--tolerance` chooses on one problem, beside the fastest setting that meets it.

For each precision and tolerance it runs the program with `--tolerance` (the setting it
measures on the problem, or with `--choice table` the one the backend's accuracy table alone
chooses; its field error on sampled targets and its time); then it
runs every (order, theta) of a grid at the program's tuned leaf size for that order, once,
and the direct sum (order 1, one leaf of every particle) where N is at most `--direct-max-n`,
and for each tolerance names the fastest grid setting whose error is at most the tolerance.
Errors are the program's `--check` (relative L2 field error against the direct sum in double
on sampled targets); times its `--repeat` median, the build included. It prints one markdown
table per precision and writes every report as JSON (`--out`).

    python3 perf/tolerance_benchmark.py --program build/openmp/apps/kfmm --n 1e6 --out FILE
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

DEFAULT_TOLERANCES = {"float": "1e-3,1e-4,1e-5,1e-6",
                      "double": "1e-4,1e-5,1e-6,1e-7,1e-8,1e-9,1e-10,1e-11,1e-12"}
DEFAULT_ORDERS = {"float": "3,4,5,6,7,8,9,10", "double": "4,6,8,10,12,14,16,18,20,22"}


def numbers(text, kind):
    return [kind(float(v)) for v in text.split(",") if v]


def run(program, arguments):
    """The program's report (None and the reason when it refused the problem)."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        command = [program, *arguments, "--quiet", "--json", report]
        result = subprocess.run(command, capture_output=True, text=True)
        # Exit status 5: a tolerance missed on the sampled targets; the report is written.
        if result.returncode not in (0, 5):
            return None, result.stderr.strip().splitlines()[-1] if result.stderr else "failed"
        with open(report) as f:
            return json.load(f), None


def summary(report):
    c = report["configuration"]
    return {"order": c["order"], "theta": c["theta"], "leaf_size": c["leaf_size"],
            "direct": c["leaf_size"] >= max(c["n"], c.get("n_targets") or 0),
            "error": report["errors"]["field"], "seconds": report["timing"]["total_seconds"]}


def setting(row):
    if row["direct"]:
        return f"direct sum (leaf {row['leaf_size']})"
    return f"order {row['order']}, theta {row['theta']:g}, leaf {row['leaf_size']}"


def progress(args, text):
    if not args.quiet:
        print(text, file=sys.stderr, flush=True)


def benchmark(args, precision):
    problem = ["--n", str(args.n), "--distribution", args.distribution, "--precision", precision,
               "--check", str(args.check), "--repeat", str(args.repeat)]
    chosen = []
    for tolerance in numbers(getattr(args, f"{precision}_tolerances"), float):
        report, refused = run(args.program, [*problem, "--tolerance", f"{tolerance:g}",
                                             "--tolerance-choice", args.choice])
        progress(args, f"{precision} tolerance {tolerance:g}: "
                 + (refused or f"{summary(report)}"))
        chosen.append({"tolerance": tolerance, "report": report, "refused": refused})
    grid = []
    for order in numbers(getattr(args, f"{precision}_orders"), int):
        for theta in numbers(args.thetas, float):
            report, refused = run(args.program, [*problem, "--order", str(order), "--theta",
                                                 f"{theta:g}"])
            progress(args, f"{precision} order {order} theta {theta:g}: "
                     + (refused or f"{summary(report)}"))
            if report is not None:
                grid.append(report)
    if float(args.n) <= float(args.direct_max_n):
        report, refused = run(args.program, [*problem, "--order", "1", "--leaf-size",
                                             str(int(float(args.n)))])
        progress(args, f"{precision} direct sum: " + (refused or f"{summary(report)}"))
        if report is not None:
            grid.append(report)
    return {"precision": precision, "chosen": chosen, "grid": grid}


def duration(seconds):
    """A time as the tables print it: milliseconds below a second."""
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.3f} s"


def measurement(report):
    """The first run's measurement of the setting (`--tolerance-choice measured`): the rows
    evaluated and its time; None where the program chose from the table alone."""
    m = report.get("calibration") if report else None
    if not m:
        return None
    direct = any(t.get("direct_sum") for t in m["trials"])
    rows = m["evaluations"] - direct
    return (f"{rows} row{'' if rows == 1 else 's'}" + (" and the direct sum" if direct else "")
            + f", {duration(m['seconds'])}")


def table(result):
    """The markdown table of one precision's benchmark; with a column for the measurement of
    the setting where the program measured it."""
    grid = [summary(r) for r in result["grid"]]
    measured = any(measurement(e["report"]) for e in result["chosen"])
    lines = ["| tolerance | chosen | its error | its time | fastest of the grid that meets it "
             "| its error | its time | chosen's time over it | tolerance over chosen's error |"
             + (" measurement of the chosen |" if measured else ""),
             "|" + " --- |" * (10 if measured else 9)]
    for entry in result["chosen"]:
        tolerance = entry["tolerance"]
        meeting = [g for g in grid if g["error"] <= tolerance]
        best = min(meeting, key=lambda g: g["seconds"]) if meeting else None
        if entry["report"] is None:
            cells = ["refused: " + entry["refused"].replace("kfmm: error: ", "").replace("|", "/"),
                     "-", "-"]
            ratio, margin = "-", "-"
        else:
            c = summary(entry["report"])
            cells = [setting(c), f"{c['error']:.2e}", duration(c["seconds"])]
            ratio = f"{c['seconds'] / best['seconds']:.2f}" if best else "-"
            margin = f"{tolerance / c['error']:.0f}" if c["error"] > 0 else "-"
        best_cells = ([setting(best), f"{best['error']:.2e}", duration(best["seconds"])]
                      if best else ["none of the grid", "-", "-"])
        extra = [measurement(entry["report"]) or "-"] if measured else []
        lines.append("| " + " | ".join([f"{tolerance:g}", *cells, *best_cells, ratio, margin,
                                        *extra]) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--program", help="the kfmm program of a build")
    parser.add_argument("--n", default="1000000")
    parser.add_argument("--distribution", default="uniform")
    parser.add_argument("--precisions", default="float,double")
    parser.add_argument("--float-tolerances", default=DEFAULT_TOLERANCES["float"])
    parser.add_argument("--double-tolerances", default=DEFAULT_TOLERANCES["double"])
    parser.add_argument("--float-orders", default=DEFAULT_ORDERS["float"])
    parser.add_argument("--double-orders", default=DEFAULT_ORDERS["double"])
    parser.add_argument("--thetas", default="0.5,0.6,0.7,0.8")
    parser.add_argument("--direct-max-n", default="1e5",
                        help="the largest N whose grid holds the direct sum")
    parser.add_argument("--check", type=int, default=1000, help="sampled targets (--check)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs after the first")
    parser.add_argument("--out", help="JSON file of every report")
    parser.add_argument("--tables-from", metavar="JSON",
                        help="print the tables of an earlier --out, running nothing")
    parser.add_argument("--choice", default="measured", choices=["measured", "table"],
                        help="the program's --tolerance-choice")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args()
    if args.tables_from:
        with open(args.tables_from) as f:
            results = json.load(f)["results"]
    else:
        if not args.program:
            parser.error("--program is needed (or --tables-from)")
        results = [benchmark(args, p) for p in args.precisions.split(",") if p]
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"date": datetime.date.today().isoformat(),
                           "command": " ".join(sys.argv), "results": results}, f)
    for result in results:
        print(f"{result['precision']}:\n{table(result)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
