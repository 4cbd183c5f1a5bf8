#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Test of perf/tune_leaf_size.py: a small tuning of this build's program, quietly, writes the
documented file, whose table holds the fastest leaf size of every order as recomputed here from
its runs, found by a walk that timed both neighbours of the fastest; the C++ header holds that
table; --exhaustive times every leaf size; a failing program is recorded, reported and leaves
the header alone; a header needs both precisions; the header's include guard comes from its
path inside the checkout, whatever the folders above the checkout are called."""

import argparse
import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

LEAF_SIZES = [8, 16, 32, 64, 128]


def fail(message):
    sys.exit(f"CheckTune: FAILED: {message}")


def run_tune(scripts, program, out, *options):
    return subprocess.run([sys.executable, os.path.join(scripts, "tune_leaf_size.py"),
                           "--program", program, "--out", out, "--n", "3000",
                           "--float-orders", "2,3", "--double-orders", "4",
                           "--leaf-sizes", ",".join(map(str, LEAF_SIZES)), "--repeat", "0",
                           "--check", "0", "--quiet", *options],
                          capture_output=True, text=True)


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def times_by_order(tuning):
    """(precision, order) -> {leaf size: geometric mean over the distributions}."""
    seconds = {}
    for run in tuning["runs"]:
        if not run["ok"]:
            fail("a run of the real program failed: " + json.dumps(run)[:500])
        key = (run["precision"], run["order"])
        seconds.setdefault(key, {}).setdefault(run["leaf_size"], []).append(
            run["report"]["timing"]["total_seconds"])
    return {key: {leaf: math.exp(sum(map(math.log, ts)) / len(ts)) for leaf, ts in by.items()}
            for key, by in seconds.items()}


def check_table(tuning, exhaustive):
    times = times_by_order(tuning)
    if set(times) != {("float", 2), ("float", 3), ("double", 4)}:
        fail(f"orders timed: {sorted(times)}")
    for (precision, order), curve in times.items():
        fastest = min(curve, key=curve.get)
        (row,) = [r for r in tuning["table"][precision] if r["order"] == order]
        if row["leaf_size"] != fastest:
            fail(f"{precision} order {order}: table {row['leaf_size']}, fastest {fastest} "
                 f"of {curve}")
        if exhaustive and sorted(curve) != LEAF_SIZES:
            fail(f"--exhaustive timed {sorted(curve)}")
        i = LEAF_SIZES.index(fastest)
        for j in (i - 1, i + 1):
            if 0 <= j < len(LEAF_SIZES) and LEAF_SIZES[j] not in curve:
                fail(f"{precision} order {order}: the walk stopped at {fastest} without "
                     f"timing its neighbour {LEAF_SIZES[j]} ({sorted(curve)})")
        for run in tuning["runs"]:
            configuration = run["report"]["configuration"]
            if configuration["leaf_size"] != run["leaf_size"] \
                    or configuration["leaf_size_tuned"] or configuration["n"] != 3000:
                fail("a run's report differs from its request: " + json.dumps(configuration))


def check_header(path, tuning):
    with open(path, encoding="utf-8") as file:
        text = file.read()
    for expected in ("struct TestLeafSizes", "#ifndef KFMM_TEST_LEAF_SIZES_HPP",
                     "#include <kfmm/tuning/LeafSizeTable.hpp>", "perf/tune_leaf_size.py"):
        if expected not in text:
            fail(f"the header lacks '{expected}':\n{text}")
    for precision in ("float", "double"):
        match = re.search(rf"leaf_sizes_{precision}\[\] = \{{(.*?)\}};", text, re.S)
        rows = [(int(o), int(s)) for o, s in re.findall(r"\{(\d+), (\d+)\}",
                                                        match.group(1) if match else "")]
        expected = [(r["order"], r["leaf_size"]) for r in tuning["table"][precision]]
        if rows != expected:
            fail(f"header rows of {precision} {rows}, table {expected}")


def copy_checkout(scripts, work):
    """The scripts copied into WORK/kfmm/perf: a checkout folder named kfmm, as git clone names
    it, whose build tree (WORK/kfmm/build) gets the header of the real tuning."""
    copied = os.path.join(work, "kfmm", "perf")
    os.makedirs(copied)
    for name in ("sweep.py", "tune_leaf_size.py"):
        shutil.copy(os.path.join(scripts, name), copied)
    return copied


def guard_of(scripts, header):
    """The include guard that the tune_leaf_size.py in SCRIPTS gives a header at HEADER."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import tune_leaf_size; "
            "print(tune_leaf_size.include_guard(sys.argv[2]))")
    result = subprocess.run([sys.executable, "-c", code, scripts, header],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"include_guard({header}): {result.stderr}")
    return result.stdout.strip()


def check_include_guards(scripts, copied, outside):
    """The project's tuned headers keep their guards; in a checkout folder named kfmm a header
    of its build tree is guarded by its file name and one of src/kfmm by its path below
    src/kfmm; a header outside the checkout, under src/kfmm (a clone in ~/src), by its file
    name."""
    checkout = os.path.dirname(os.path.abspath(scripts))
    for header in ("backends/cuda/include/kfmm/backend/CudaLeafSizes.hpp",
                   "src/kfmm/tuning/HostLeafSizes.hpp"):
        path = os.path.join(checkout, header)
        with open(path, encoding="utf-8") as file:
            written = re.search(r"^#ifndef (\w+)$", file.read(), re.M)
        guard = guard_of(scripts, path)
        if not written or guard != written.group(1):
            fail(f"{header}: include guard {guard}, the file has "
                 f"{written.group(1) if written else 'none'}")
    clone = os.path.dirname(copied)
    cases = ((copied, os.path.join(clone, "build", "cuda", "TestLeafSizes.hpp"),
              "KFMM_TEST_LEAF_SIZES_HPP"),
             (copied, os.path.join(clone, "src", "kfmm", "tuning", "HostLeafSizes.hpp"),
              "KFMM_TUNING_HOST_LEAF_SIZES_HPP"),
             (scripts, os.path.join(outside, "src", "kfmm", "build", "TestLeafSizes.hpp"),
              "KFMM_TEST_LEAF_SIZES_HPP"))
    for where, header, expected in cases:
        guard = guard_of(where, header)
        if guard != expected:
            fail(f"a header at {header}, scripts in {where}: include guard {guard}, "
                 f"expected {expected}")


def check_real_tuning(scripts, program, work):
    """Run from a checkout folder named kfmm (copy_checkout), the header in its build tree."""
    out = os.path.join(work, "tune.json")
    header = os.path.join(os.path.dirname(scripts), "build", "TestLeafSizes.hpp")
    os.makedirs(os.path.dirname(header))
    result = run_tune(scripts, program, out, "--header", header)
    if result.returncode != 0 or result.stdout or result.stderr:
        fail(f"tune_leaf_size.py --quiet: exit status {result.returncode}, printed "
             f"{result.stdout!r} {result.stderr!r}")
    tuning = load(out)
    for key in ("date", "machine", "kokkos", "kfmm_version", "command", "tune", "table"):
        if tuning.get(key) is None:
            fail(f"the tuning file lacks '{key}'")
    if tuning["format"] != "kfmm-leaf-size-tuning" or not tuning["machine"].get("cores"):
        fail("bad header: " + json.dumps({k: tuning[k] for k in ("format", "machine")}))
    check_table(tuning, exhaustive=False)
    check_header(header, tuning)
    with open(header, encoding="utf-8") as file:
        if os.path.abspath(work) in file.read():
            fail(f"the header's command names the folder it ran in, {work}")
    umask = os.umask(0)
    os.umask(umask)
    for path in (out, header):
        if stat.S_IMODE(os.stat(path).st_mode) != 0o666 & ~umask:
            fail(f"{path} has mode {oct(stat.S_IMODE(os.stat(path).st_mode))}, not the "
                 f"umask's {oct(0o666 & ~umask)}")

    out = os.path.join(work, "exhaustive.json")
    result = run_tune(scripts, program, out, "--exhaustive", "--precisions", "float")
    if result.returncode != 0:
        fail(f"--exhaustive: exit status {result.returncode}: {result.stderr}")
    tuning = load(out)
    times = times_by_order(tuning)
    if any(sorted(curve) != LEAF_SIZES for curve in times.values()) or len(times) != 2:
        fail(f"--exhaustive timed {({k: sorted(c) for k, c in times.items()})}")


def check_failing_program(scripts, work):
    """A stand-in program that fails: recorded, reported on stderr, exit status 1, and the
    header it was to write is left as it was."""
    program = os.path.join(work, "failing-kfmm")
    with open(program, "w", encoding="utf-8") as file:
        file.write("#!/bin/sh\necho 'kfmm: error: out of memory' >&2\nexit 1\n")
    os.chmod(program, os.stat(program).st_mode | stat.S_IXUSR)
    header = os.path.join(work, "KeptLeafSizes.hpp")
    with open(header, "w", encoding="utf-8") as file:
        file.write("// kept\n")
    out = os.path.join(work, "failed.json")
    result = run_tune(scripts, program, out, "--header", header)
    if result.returncode != 1 or "failed: kfmm: error: out of memory" not in result.stderr \
            or "left as it was" not in result.stderr:
        fail(f"a failing program: exit status {result.returncode}, stderr {result.stderr!r}")
    with open(header, encoding="utf-8") as file:
        if file.read() != "// kept\n":
            fail("the header was overwritten although no run succeeded")
    tuning = load(out)
    if any(run["ok"] for run in tuning["runs"]) or not tuning["runs"]:
        fail("the failed runs are not recorded as failed")

    result = run_tune(scripts, program, out, "--header", header, "--precisions", "float")
    if result.returncode != 2 or "--header writes both precisions" not in result.stderr:
        fail(f"--header with one precision: exit status {result.returncode}: {result.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scripts", required=True, help="the folder of tune_leaf_size.py")
    parser.add_argument("--program", required=True, help="the kfmm program of this build")
    parser.add_argument("--work", required=True, help="scratch folder (emptied first)")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    copied = copy_checkout(args.scripts, args.work)
    # A folder outside every checkout: the scratch folder may lie in this one's build tree.
    with tempfile.TemporaryDirectory(prefix="kfmm-guard-") as outside:
        check_include_guards(args.scripts, copied, outside)
    check_real_tuning(copied, args.program, args.work)
    check_failing_program(args.scripts, args.work)
    print("CheckTune: the tuning file, its table and header as documented; failures recorded")


if __name__ == "__main__":
    main()
