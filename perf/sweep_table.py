#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the runs of kfmm sweeps (perf/sweep.py) as one Markdown table, a row per run.

Each row gives the case (distribution, precision, N, the field error asked for), the settings
the program ran with (order, theta, leaf size, M2L variant), the field error reached and the
time of the whole evaluation, of M2L and of P2P, and the rate. A failed run keeps its row with
the program's message, so that a case the program refuses (a tolerance below what a
precision serves) stays visible. This is how perf/RESULTS.md's benchmark tables are written.
"""

import argparse
import json
import sys


def number(value, fmt):
    return format(value, fmt) if isinstance(value, (int, float)) else "-"


def row(run):
    tolerance = run.get("tolerance")
    case = [run["distribution"], run["precision"], f"{run['n']:.0e}".replace("e+0", "e"),
            number(tolerance, ".0e") if tolerance is not None else "defaults"]
    if not run.get("ok"):
        message = run.get("error", "failed").replace("|", "/")
        return case + [f"not run: {message}"] + [""] * 6
    report = run["report"]
    configuration = report["configuration"]
    stages = report["timing"]["stage_seconds"]
    settings = (f"{configuration['order']}, {configuration['theta']:g}, "
                f"{configuration['leaf_size']}, {report['m2l']['variant']}")
    return case + [settings,
                   number(report["errors"].get("field"), ".1e"),
                   number(report["timing"]["total_seconds"], ".3g"),
                   number(stages.get("M2L"), ".3g"),
                   number(stages.get("P2P"), ".3g"),
                   number(report["timing"].get("particles_per_second"), ".2e")]


def main(argv):
    parser = argparse.ArgumentParser(
        description="Print the runs of one or more kfmm sweep files as a Markdown table.",
        epilog="Example: python3 perf/sweep_table.py sweep-openmp.json")
    parser.add_argument("sweeps", nargs="+", help="JSON files written by perf/sweep.py")
    args = parser.parse_args(argv)
    header = ["distribution", "precision", "N", "field error asked",
              "order, theta, leaf, M2L", "field error", "total s", "M2L s", "P2P s",
              "particles/s"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for path in args.sweeps:
        try:
            with open(path, encoding="utf-8") as file:
                sweep = json.load(file)
            runs = sweep["runs"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            sys.stderr.write(f"sweep_table: {path} is not a readable sweep file: {error}\n")
            return 1
        for run in runs:
            print("| " + " | ".join(row(run)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
