#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Measures the table behind Options::tolerance with a built `kfmm` program.

For every candidate (precision, order, theta) it runs the program on uniform, Plummer and
ellipsoid-surface particles and records the worst relative L2 field error against the direct
sum in double over every particle (the error is a property of the expansions, the acceptance
rule and, more weakly, the leaf size, so one backend's measurement at every backend's tuned
leaf sizes serves all), and times the candidate on 1e6 uniform particles on this backend. It
writes everything as JSON and prints the candidates that are on the time-versus-error front,
as the C++ rows of the backend's accuracy table (tuning/AccuracyTable.hpp reads them);
docs/ACCURACY.md says how they were made.

    python3 perf/accuracy_table.py --program build/cuda/apps/kfmm --out accuracy-cuda.json
    python3 perf/accuracy_table.py --front accuracy-a.json accuracy-b.json   # rows of both
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from tune_leaf_size import table_leaf_size

DISTRIBUTIONS = ("uniform", "plummer", "ellipsoid")


def parse_range(text):
    """'2-6' or '2,4,8' -> list of ints."""
    if "-" in text:
        first, last = text.split("-")
        return list(range(int(first), int(last) + 1))
    return [int(v) for v in text.split(",")]


def run(program, arguments):
    """Runs the program with --json into a temporary file; returns the report."""
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        command = [program, *arguments, "--quiet", "--json", report]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(" ".join(command) + ": " + result.stderr.strip())
        with open(report) as f:
            return json.load(f)


def error_leaf_sizes(leaf_tables, precision, order):
    """The leaf sizes the backends' tables (of perf/tune_leaf_size.py outputs) give at this
    order, at which the errors are measured; [None] (the program's own) without tables."""
    if not leaf_tables:
        return [None]
    return sorted({table_leaf_size(table[precision], order) for table in leaf_tables})


def measure(args, known_errors, leaf_tables, precision, order, theta):
    """The candidate's worst field error per distribution over the leaf sizes the backends
    use at its order (measured, or taken from `known_errors`) and its time."""
    options = ["--precision", precision, "--order", str(order), "--theta", str(theta)]
    errors = known_errors.get((precision, order, theta))
    by_leaf_size = {}
    if errors is None:
        errors = {}
        for leaf in error_leaf_sizes(leaf_tables, precision, order):
            leaf_option = [] if leaf is None else ["--leaf-size", str(leaf)]
            for distribution in DISTRIBUTIONS:
                report = run(args.program, ["--n", str(args.n_error), "--distribution",
                                            distribution, "--seed", str(args.seed),
                                            "--check", str(args.check), *options, *leaf_option])
                error = report["errors"]["field"]
                used = report["configuration"]["leaf_size"]
                by_leaf_size.setdefault(str(used), {})[distribution] = error
                errors[distribution] = max(errors.get(distribution, 0.0), error)
    row = {"precision": precision, "order": order, "theta": theta, "errors": errors,
           "errors_by_leaf_size": by_leaf_size, "worst_error": max(errors.values())}
    if args.n_time > 0:
        timed = run(args.program, ["--n", str(args.n_time), "--distribution", "uniform",
                                   "--check", "0", "--repeat", str(args.repeat), *options])
        row.update(seconds=timed["timing"]["total_seconds"],
                   backend=timed["kokkos"]["default_space"])
    return row


def read_errors(names):
    """(precision, order, theta) -> the worst error of each distribution over the outputs
    `names` (measured at different N, say)."""
    errors = {}
    for name in names:
        with open(name) as f:
            for row in json.load(f)["rows"]:
                key = (row["precision"], row["order"], row["theta"])
                known = errors.setdefault(key, {})
                for distribution, error in row["errors"].items():
                    known[distribution] = max(known.get(distribution, 0.0), error)
    return errors


def front(rows):
    """The rows no other row beats in both time and worst error, fastest first."""
    kept = []
    for row in sorted(rows, key=lambda r: (r["seconds"], r["worst_error"])):
        if not kept or row["worst_error"] < kept[-1]["worst_error"]:
            kept.append(row)
    return kept


def print_front(rows, precisions, n_time):
    """The C++ rows of the front of each precision."""
    for precision in precisions:
        print(f"// {precision}: order, theta, worst field error, seconds at {n_time}")
        for row in front([r for r in rows if r["precision"] == precision]):
            print(f"  {{{row['order']}, {row['theta']}, {row['worst_error']:.3e}, "
                  f"{row['seconds']:.4g}}},")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--front", nargs="+", metavar="JSON",
                        help="measure nothing: print the front of the rows of these outputs "
                        "(of one backend and one --n-time), with the worst errors of them "
                        "and of --errors-from")
    parser.add_argument("--program", help="the kfmm program of a build")
    parser.add_argument("--out", help="JSON file of every measurement")
    parser.add_argument("--n-error", type=int, default=50000,
                        help="particles of the error runs (default 50000)")
    parser.add_argument("--n-time", type=int, default=1000000,
                        help="particles of the timed run (default 1e6; 0: errors only)")
    parser.add_argument("--check", type=int, default=0,
                        help="targets of the direct-sum comparison (default 0: all of "
                        "--n-error)")
    parser.add_argument("--seed", type=int, default=1,
                        help="random seed of the error runs' particles (default 1)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs after the first")
    parser.add_argument("--thetas", default="0.4,0.5,0.6,0.7")
    parser.add_argument("--float-orders", default="2-10")
    parser.add_argument("--double-orders", default="4-20")
    parser.add_argument("--precisions", default="float,double")
    parser.add_argument("--errors-from", nargs="+", default=[], metavar="JSON",
                        help="take the errors from these earlier outputs, the worst of them "
                        "(they do not depend on the backend), and measure only the times")
    parser.add_argument("--leaf-sizes-from", nargs="+", default=[], metavar="TUNE.json",
                        help="measure each error at the leaf size that each of these "
                        "backends' leaf-size tunings (perf/tune_leaf_size.py) gives for the "
                        "order, and keep the worst (default: the program's own leaf size)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args()
    # 0: every particle. A sample can miss the few targets where the error concentrates (on
    # Plummer particles 1000 sampled targets gave a third of the error of all 2e4).
    args.check = args.check or args.n_error
    if args.front:
        rows, n_time = [], set()
        for name in args.front:
            with open(name) as f:
                data = json.load(f)
            rows += data["rows"]
            n_time.add(data["n_time"])
        if len(n_time) != 1:
            parser.error("--front: the outputs were timed at different --n-time")
        worst = read_errors(args.front + args.errors_from)
        for row in rows:
            row["worst_error"] = max(worst[(row["precision"], row["order"], row["theta"])].values())
        print_front(rows, ("float", "double"), n_time.pop())
        return
    if not args.program or not args.out:
        parser.error("--program and --out are required to measure")

    known_errors = read_errors(args.errors_from)
    leaf_tables = []
    for name in args.leaf_sizes_from:
        with open(name) as f:
            leaf_tables.append(json.load(f)["table"])

    thetas = [float(t) for t in args.thetas.split(",")]
    orders = {"float": parse_range(args.float_orders), "double": parse_range(args.double_orders)}
    work = [(p, o, t) for p in args.precisions.split(",") for o in orders[p] for t in thetas]
    rows = []
    for i, (precision, order, theta) in enumerate(work):
        if not args.quiet and sys.stderr.isatty():
            print(f"\raccuracy table {i + 1}/{len(work)}: {precision} order {order} "
                  f"theta {theta}   ", end="", file=sys.stderr, flush=True)
        rows.append(measure(args, known_errors, leaf_tables, precision, order, theta))
        # Written after every row, so that an interrupted run keeps what it measured.
        with open(args.out, "w") as f:
            json.dump({"command": sys.argv, "n_error": args.n_error, "seed": args.seed,
                       "check": args.check,
                       "n_time": args.n_time,
                       "leaf_sizes_from": args.leaf_sizes_from, "rows": rows}, f, indent=1)
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    if args.n_time > 0:
        print_front(rows, args.precisions.split(","), args.n_time)


if __name__ == "__main__":
    main()
