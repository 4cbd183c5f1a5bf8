#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test of perf/tolerance_benchmark.py: a small benchmark of this build's program writes every
report, the grid's with the direct sum (N is below --direct-max-n); each tolerance's row names
the setting the program chose and, as recomputed here from the grid's reports, the fastest grid
setting whose error is at most the tolerance (or none); a
tolerance the precision does not reach is a row saying the program refused it; --tables-from
prints the same tables from the file, running nothing."""

import argparse
import json
import os
import subprocess
import sys
import tempfile


def fail(message):
    sys.exit(f"CheckToleranceBenchmark: FAILED: {message}")


def setting(configuration):
    """A setting as the benchmark's tables name it: one leaf of every particle is the direct
    sum."""
    if configuration["leaf_size"] >= configuration["n"]:
        return f"direct sum (leaf {configuration['leaf_size']})"
    return (f"order {configuration['order']}, theta {configuration['theta']:g}, "
            f"leaf {configuration['leaf_size']}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scripts", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    out = os.path.join(args.work, "tolerance.json")
    script = os.path.join(args.scripts, "tolerance_benchmark.py")
    tolerances = [1e-2, 1e-4, 1e-9]  # 1e-9: below what float reaches
    run = subprocess.run([sys.executable, script, "--program", args.program, "--n", "2000",
                          "--precisions", "float", "--float-tolerances",
                          ",".join(f"{t:g}" for t in tolerances), "--float-orders", "2,5",
                          "--thetas", "0.5,0.8", "--check", "200", "--repeat", "0", "--quiet",
                          "--out", out], capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"the benchmark exited {run.returncode}: {run.stderr}")
    if run.stderr:
        fail(f"--quiet printed progress: {run.stderr!r}")
    with open(out, encoding="utf-8") as f:
        results = json.load(f)["results"]
    if len(results) != 1 or results[0]["precision"] != "float":
        fail(f"expected one float result, got {[r['precision'] for r in results]}")
    result = results[0]
    if len(result["grid"]) != 5:
        fail("expected 5 grid reports (orders 2, 5 x thetas 0.5, 0.8, and the direct sum), got "
             f"{len(result['grid'])}")
    settings = {(r["configuration"]["order"], r["configuration"]["theta"],
                 r["configuration"]["leaf_size"] >= 2000) for r in result["grid"]}
    if settings != {(2, 0.5, False), (2, 0.8, False), (5, 0.5, False), (5, 0.8, False),
                    (1, 0.7, True)}:
        fail(f"the grid ran {sorted(settings)}")

    rows = [line for line in run.stdout.splitlines() if line.startswith("| ")][2:]
    if len(rows) != len(tolerances):
        fail(f"expected {len(tolerances)} rows, got:\n{run.stdout}")
    for tolerance, row, entry in zip(tolerances, rows, result["chosen"]):
        cells = [c.strip() for c in row.strip("|").split("|")]
        if float(cells[0]) != tolerance or entry["tolerance"] != tolerance:
            fail(f"row for {tolerance} reads {cells[0]}")
        if tolerance == 1e-9:
            if entry["report"] is not None or not cells[1].startswith("refused: "):
                fail(f"tolerance 1e-9 in float was not a refused row: {row}")
            if "below what float reaches" not in cells[1]:
                fail(f"the refused row does not give the program's reason: {row}")
            continue
        chosen = entry["report"]["configuration"]
        if cells[1] != setting(chosen):
            fail(f"row {tolerance} names {cells[1]}, the program chose {chosen}")
        meeting = [r for r in result["grid"] if r["errors"]["field"] <= tolerance]
        if not meeting:
            if cells[4] != "none of the grid":
                fail(f"row {tolerance} names {cells[4]}, but no grid setting meets it")
            continue
        best = min(meeting, key=lambda r: r["timing"]["total_seconds"])["configuration"]
        expected = setting(best)
        if cells[4] != expected:
            fail(f"row {tolerance} names {cells[4]} as the fastest meeting it, expected {expected}")

    again = subprocess.run([sys.executable, script, "--tables-from", out], capture_output=True,
                           text=True)
    if again.returncode != 0 or again.stdout != run.stdout:
        fail(f"--tables-from printed other tables:\n{again.stdout}\n{again.stderr}")
    print("CheckToleranceBenchmark: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
