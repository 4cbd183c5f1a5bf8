#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test of perf/sweep.py: a one-point sweep of this build's program writes the documented file
(with the direct sum where kfmm_bench_direct is built), quietly; a sweep over tolerances runs
each case once per tolerance, records a tolerance float does not reach as a failed run, and
perf/sweep_table.py tabulates every run; a program that fails is recorded as failed, the
sweep goes on, and the exit status says so."""

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys


def fail(message):
    sys.exit(f"CheckSweep: FAILED: {message}")


def run_sweep(scripts, program, out, extra=()):
    return subprocess.run([sys.executable, os.path.join(scripts, "sweep.py"), "--program",
                           program, "--out", out, "--n", "1e3", "--distributions", "uniform",
                           "--precisions", "float", "--repeat", "0", "--direct-max-n", "1e3",
                           "--quiet", *extra], capture_output=True, text=True)


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def check_real_sweep(scripts, program, direct, work):
    out = os.path.join(work, "sweep.json")
    result = run_sweep(scripts, program, out)
    if result.returncode != 0 or result.stdout or result.stderr:
        fail(f"sweep.py --quiet: exit status {result.returncode}, printed "
             f"{result.stdout!r} {result.stderr!r}")
    sweep = load(out)
    for key in ("date", "machine", "kokkos", "kfmm_version", "commands", "direct_sum"):
        if sweep.get(key) is None:
            fail(f"the sweep file lacks '{key}'")
    if sweep["format"] != "kfmm-sweep" or not sweep["machine"].get("cores"):
        fail("bad header: " + json.dumps(sweep["machine"]))
    (run,) = sweep["runs"]
    configuration = run["report"]["configuration"]
    if not run["ok"] or configuration["n"] != 1000 or configuration["check"] != 1000 \
            or configuration["distribution"] != "uniform" or run["report"]["errors"] is None:
        fail("the run's report differs from the sweep's request: " + json.dumps(run))
    if sweep["direct_sum"]["measured"] != (direct == "measured"):
        fail(f"direct sum expected {direct}: " + json.dumps(sweep["direct_sum"]))
    if direct == "measured":
        sizes = {(r["precision"], r["n"]) for r in sweep["direct_sum"]["results"]}
        if sizes != {("float", 1000), ("double", 1000)}:
            fail(f"direct sum results {sorted(sizes)}")


def check_tolerance_sweep(scripts, program, work):
    """--tolerances: one run per tolerance with its report's tolerance, the one below what
    float reaches recorded as failed (exit status 1), and a table row for each run."""
    out = os.path.join(work, "tolerances.json")
    result = run_sweep(scripts, program, out, ["--tolerances", "1e-3,1e-9"])
    if result.returncode != 1 or "below what float reaches" not in result.stderr:
        fail(f"a tolerance float does not reach: exit status {result.returncode}, stderr "
             f"{result.stderr!r}")
    sweep = load(out)
    reached, refused = sweep["runs"]
    if sweep["sweep"]["tolerances"] != [1e-3, 1e-9] or reached["tolerance"] != 1e-3 \
            or not reached["ok"] or reached["report"]["configuration"]["tolerance"] != 1e-3 \
            or reached["report"]["errors"]["field"] > 1e-3:
        fail("the run at tolerance 1e-3 differs from the request: " + json.dumps(reached))
    if refused["ok"] or refused["tolerance"] != 1e-9:
        fail("the run at tolerance 1e-9 in float is not recorded as failed: " + json.dumps(refused))
    table = subprocess.run([sys.executable, os.path.join(scripts, "sweep_table.py"), out],
                           capture_output=True, text=True)
    rows = [line for line in table.stdout.splitlines() if line.startswith("| uniform")]
    if table.returncode != 0 or len(rows) != 2 or "1e-03" not in rows[0] \
            or "not run" not in rows[1]:
        fail(f"sweep_table.py: exit status {table.returncode}, printed {table.stdout!r}")


def check_failing_program(scripts, work):
    """A stand-in program that fails: recorded, reported on stderr, exit status 1."""
    program = os.path.join(work, "failing-kfmm")
    with open(program, "w", encoding="utf-8") as file:
        file.write("#!/bin/sh\necho 'kfmm: error: out of memory' >&2\nexit 1\n")
    os.chmod(program, os.stat(program).st_mode | stat.S_IXUSR)
    out = os.path.join(work, "failed.json")
    result = run_sweep(scripts, program, out)
    if result.returncode != 1 or "failed: kfmm: error: out of memory" not in result.stderr:
        fail(f"a failing program: exit status {result.returncode}, stderr {result.stderr!r}")
    sweep = load(out)
    (run,) = sweep["runs"]
    if run["ok"] or run["exit_status"] != 1 or sweep["direct_sum"]["measured"]:
        fail("the failed run is not recorded as failed: " + json.dumps(sweep))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scripts", required=True, help="the folder of sweep.py")
    parser.add_argument("--program", required=True, help="the kfmm program of this build")
    parser.add_argument("--direct", required=True, choices=("measured", "missing"),
                        help="whether kfmm_bench_direct is built beside the program")
    parser.add_argument("--work", required=True, help="scratch folder (emptied first)")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    check_real_sweep(args.scripts, args.program, args.direct, args.work)
    check_tolerance_sweep(args.scripts, args.program, args.work)
    check_failing_program(args.scripts, args.work)
    print("CheckSweep: the sweep file as documented; a sweep over tolerances and its table; "
          "a failed run recorded")


if __name__ == "__main__":
    main()
