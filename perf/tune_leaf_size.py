#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Measure the fastest leaf size per order and precision with a built kfmm program, and write
the backend's leaf-size table.

For every (precision, order) the program solves the same problem at leaf sizes from a list,
on each distribution (uniform and Plummer by default), with --json; a leaf size's time is
the geometric mean of the distributions' median times, tree build included, so that each
distribution counts alike. The leaf sizes timed walk down the time-versus-leaf-size curve
from the previous order's fastest until both neighbours of the fastest are slower
(--exhaustive: all of them). The fastest per (precision, order) makes the table that the solver
uses when Options::leaf_size is 0 (src/kfmm/tuning/LeafSizeTable.hpp). Everything measured is
written to one JSON file, with the same header as perf/sweep.py's (machine, date, Kokkos,
commands), which perf/portability_report.py plots as time against leaf size; with --header
the table is also written as the C++ header the backend's tuning includes (docs/TUNING.md):

    python3 perf/tune_leaf_size.py --program build/cuda/apps/kfmm --out tune-cuda.json \\
        --header backends/cuda/include/kfmm/backend/CudaLeafSizes.hpp
"""

import argparse
import math
import os
import re
import shlex
import sys
import tempfile

from sweep import (DISTRIBUTIONS, PRECISIONS, Progress, choice_list, parse_count, run_header,
                   run_kfmm, short_count, write_json, write_text)

TUNE_FORMAT = "kfmm-leaf-size-tuning"
TUNE_FORMAT_VERSION = 1
# The checkout this script belongs to (it sits in its perf/ folder): --header's include guard
# is spelt from the header's path inside it.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def int_list(text):
    """'2-6' -> [2, 3, 4, 5, 6]; '16,32,64' -> [16, 32, 64]; positive integers."""
    try:
        if "-" in text:
            first, last = (int(part) for part in text.split("-"))
            values = list(range(first, last + 1))
        else:
            values = [int(item) for item in text.split(",") if item]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list (2,4,8) or range (2-10) "
                                         "of integers")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' needs integers >= 1")
    return sorted(set(values))


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="Time a built kfmm program at a range of leaf sizes for each order and "
                    "precision, write every measurement to one JSON file and, with --header, "
                    "the backend's table of the fastest leaf size per order (docs/TUNING.md).",
        epilog="Example: python3 perf/tune_leaf_size.py --program build/openmp/apps/kfmm "
               "--out tune-openmp.json --header src/kfmm/tuning/HostLeafSizes.hpp. Exit "
               "status: 0 when every run succeeded, 1 when some failed (they are recorded in "
               "the file; the table then comes from the rest), 2 on a bad command line.")
    parser.add_argument("--program", required=True,
                        help="the kfmm program to run, e.g. build/cuda/apps/kfmm")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--header", help="also write the table as this C++ header; its name "
                        "names the struct (e.g. .../CudaLeafSizes.hpp: struct CudaLeafSizes)")
    parser.add_argument("--n", type=parse_count, default=parse_count("1e6"),
                        help="particles of every run (default 1e6)")
    parser.add_argument("--distributions", type=choice_list(DISTRIBUTIONS),
                        default=["uniform", "plummer"],
                        help="comma-separated distributions (default uniform,plummer)")
    parser.add_argument("--precisions", type=choice_list(PRECISIONS),
                        default=["float", "double"],
                        help="comma-separated precisions (default float,double; --header "
                             "needs both)")
    parser.add_argument("--float-orders", type=int_list, default=int_list("2-10"),
                        help="orders timed in float (default 2-10)")
    parser.add_argument("--double-orders", type=int_list,
                        default=int_list("4,6,8,10,12,14,16,18,20"),
                        help="orders timed in double (default 4,6,...,20)")
    parser.add_argument("--leaf-sizes", type=int_list, default=int_list("16,32,64,128,256,512"),
                        help="leaf sizes timed (default 16,32,64,128,256,512)")
    parser.add_argument("--exhaustive", action="store_true",
                        help="time every leaf size at every order (default: from the previous "
                             "order's fastest, only as far as the time falls)")
    parser.add_argument("--theta", type=float, default=0.7,
                        help="acceptance parameter of every run (default 0.7, the default)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="warm runs after the first, whose median is the time (default 2)")
    parser.add_argument("--check", type=int, default=1000,
                        help="particles whose error is checked against the direct sum "
                             "(default 1000; 0: none)")
    parser.add_argument("--quiet", action="store_true",
                        help="print no progress (failures are still reported on stderr)")
    args = parser.parse_args(argv)
    if args.check < 0:
        parser.error("--check must be >= 0")
    if not 0 <= args.repeat <= 1000:
        parser.error("--repeat must be from 0 to 1000")
    if not 0 < args.theta <= 1:
        parser.error("--theta must be in (0, 1]")
    if args.header and set(args.precisions) != set(PRECISIONS):
        parser.error("--header writes both precisions' tables: leave --precisions out")
    if args.header and not header_struct(args.header):
        parser.error(f"--header '{args.header}': the file name must be a C++ identifier "
                     "ending in .hpp, e.g. CudaLeafSizes.hpp")
    if not os.access(args.program, os.X_OK):
        parser.error(f"--program '{args.program}' is not an executable file")
    return args


def header_struct(path):
    """CudaLeafSizes.hpp -> 'CudaLeafSizes'; None when the name is no C++ identifier."""
    stem, extension = os.path.splitext(os.path.basename(path))
    return stem if extension == ".hpp" and re.fullmatch(r"[A-Za-z_]\w*", stem) else None


def include_guard(path, checkout=CHECKOUT):
    """The header's include guard as the project's headers spell theirs: KFMM_ and the path
    after the kfmm folder of an include root (src/kfmm, .../include/kfmm) inside the checkout:
    src/kfmm/tuning/HostLeafSizes.hpp -> KFMM_TUNING_HOST_LEAF_SIZES_HPP,
    backends/cuda/include/kfmm/backend/CudaLeafSizes.hpp -> KFMM_BACKEND_CUDA_LEAF_SIZES_HPP.
    The folders above the checkout are never read, so that a checkout named kfmm (what git
    clone gives) or one under a src folder does not change the guard; a header elsewhere (a
    build tree, outside the checkout) is guarded by its file name alone:
    TestLeafSizes.hpp -> KFMM_TEST_LEAF_SIZES_HPP."""
    inside = os.path.relpath(os.path.realpath(path), os.path.realpath(checkout))
    parts = os.path.normpath(inside).split(os.sep)
    roots = [] if parts[0] == os.pardir else [
        i for i in range(1, len(parts) - 1)
        if parts[i] == "kfmm" and parts[i - 1] in ("src", "include")]
    after = parts[roots[-1] + 1:] if roots else parts[-1:]
    words = [re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", os.path.splitext(p)[0]) for p in after]
    return "KFMM_" + "_".join(words).upper() + "_HPP"


def orders_of(args, precision):
    return args.float_orders if precision == "float" else args.double_orders


def next_leaf_size(leaf_sizes, times, tried, start, exhaustive):
    """The next leaf size to time for one (precision, order), or None when done. Exhaustive:
    every one in turn. Otherwise a walk down the time-versus-leaf-size curve, which has one
    minimum (the cost model N (A + B / s + C s)): from `start` (the previous order's fastest,
    since the fastest grows with the order) towards the faster neighbour, until the fastest
    one's neighbours in the list are timed and slower. This skips the far ends, where a
    high order with small leaves takes minutes."""
    untried = [s for s in leaf_sizes if s not in tried]
    if exhaustive or not untried:
        return untried[0] if untried else None
    if start not in tried:
        return start
    if not times:
        return None
    i = leaf_sizes.index(min(times, key=times.get))
    for j in (i - 1, i + 1):
        if 0 <= j < len(leaf_sizes) and leaf_sizes[j] not in tried:
            return leaf_sizes[j]
    return None


def tune_header(args, argv):
    return {
        **run_header(TUNE_FORMAT, TUNE_FORMAT_VERSION, args.program),
        "command": shlex.join(["python3", "perf/tune_leaf_size.py"] + argv),
        "tune": {"n": args.n, "distributions": args.distributions,
                 "precisions": args.precisions,
                 "orders": {p: orders_of(args, p) for p in args.precisions},
                 "leaf_sizes": args.leaf_sizes, "exhaustive": args.exhaustive,
                 "theta": args.theta, "repeat": args.repeat,
                 "check": args.check},
        "kfmm_version": None,
        "kokkos": None,
    }


def leaf_times(runs, precision, order, distributions):
    """{leaf size: geometric mean of the distributions' times} over the leaf sizes whose runs
    all succeeded."""
    times = {}
    for run in runs:
        if run["precision"] == precision and run["order"] == order:
            times.setdefault(run["leaf_size"], {})[run["distribution"]] = (
                run["report"]["timing"]["total_seconds"] if run["ok"] else None)
    return {leaf: math.exp(sum(math.log(t) for t in by.values()) / len(by))
            for leaf, by in times.items()
            if set(by) == set(distributions) and all(t for t in by.values())}


def fastest_table(tune, runs):
    """Per precision, the rows {order, leaf_size, seconds} of the fastest leaf size of every
    order with at least one complete leaf size."""
    table = {}
    for precision in tune["precisions"]:
        rows = []
        for order in tune["orders"][precision]:
            times = leaf_times(runs, precision, order, tune["distributions"])
            if times:
                leaf = min(times, key=times.get)
                rows.append({"order": order, "leaf_size": leaf, "seconds": times[leaf]})
        table[precision] = rows
    return table


def wrap_command(command, width=92):
    """The command split at spaces into lines of at most `width` characters, each but the
    last ending in a backslash (a long argument keeps its own line)."""
    lines, line = [], ""
    for word in command.split(" "):
        if line and len(line) + 1 + len(word) > width - 2:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line]


# The options whose values are paths: the header's command names them without the folders of
# the machine it ran on.
PATH_OPTIONS = ("--program", "--out", "--header")


def portable_path(option, path, checkout=CHECKOUT):
    """How the header's command names PATH, the value of OPTION: a path inside the checkout
    relative to it (build/openmp/apps/kfmm, src/kfmm/tuning/HostLeafSizes.hpp), any other by
    its file name; --out, the measurements' JSON file, which the caller keeps where they like,
    always by its file name."""
    inside = os.path.relpath(os.path.realpath(path), os.path.realpath(checkout))
    if option == "--out" or inside == os.pardir or inside.startswith(os.pardir + os.sep):
        return os.path.basename(path)
    return inside


def portable_command(argv, checkout=CHECKOUT):
    """The tuning's command as the header writes it: argv's path options through
    portable_path, so that no folder of the machine it ran on is written into the checkout."""
    words, after = [], None
    for word in argv:
        option, equals, value = word.partition("=")
        if after:
            words.append(portable_path(after, word, checkout))
        elif equals and option in PATH_OPTIONS:
            words.append(f"{option}={portable_path(option, value, checkout)}")
        else:
            words.append(word)
        after = word if word in PATH_OPTIONS else None
    return shlex.join(["python3", "perf/tune_leaf_size.py"] + words)


def table_leaf_size(rows, order):
    """The leaf size of the table row (dicts with order and leaf_size, sorted by order) nearest
    `order`, the lower one on a tie: what kfmm::tuning::tunedLeafSize gives in C++."""
    return min(rows, key=lambda row: abs(row["order"] - order))["leaf_size"]


def header_text(path, tuning):
    """The C++ header of the table (tuning/LeafSizeTable.hpp's rows) with how it was made."""
    guard = include_guard(path)
    machine = tuning["machine"]
    kokkos = tuning["kokkos"] or {}
    tune = tuning["tune"]
    hardware = machine["cpu"] + f" ({machine['cores']} logical CPUs)"
    if machine.get("gpus"):
        hardware = ", ".join(machine["gpus"]) + "; host " + hardware
    environment = " ".join(f"{k}={v}" for k, v in tuning["environment"].items())
    lines = [
        "// SPDX-License-Identifier: BSD-3-Clause",
        "// Written by perf/tune_leaf_size.py; remake it with the command below, do not edit it.",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "// The fastest leaf size per order (tuning/LeafSizeTable.hpp), measured on",
        f"//   {hardware},",
        f"//   Kokkos {kokkos.get('version', '?')}, default space "
        f"{kokkos.get('default_space', '?')}{', ' + environment if environment else ''},",
        f"//   {tuning['date'][:10]}, with",
        *[f"//   {line}" for line in wrap_command(
            portable_command(shlex.split(tuning["command"])[2:]))],
        f"// at {short_count(tune['n'])} particles ({', '.join(tune['distributions'])}; the "
        "geometric mean of their times),",
        f"// theta {tune['theta']:g}, leaf sizes {', '.join(str(s) for s in tune['leaf_sizes'])}.",
        "",
        "#include <kfmm/tuning/LeafSizeTable.hpp>",
        "",
        "namespace kfmm::tuning",
        "{",
        "",
        f"struct {header_struct(path)}",
        "{",
    ]
    for precision in PRECISIONS:
        # Six rows to a line keeps the lines within the project's 100 columns.
        rows = [f"{{{row['order']}, {row['leaf_size']}}}," for row in tuning["table"][precision]]
        lines.append(f"  static constexpr LeafSizeRow leaf_sizes_{precision}[] = {{")
        lines += ["      " + " ".join(rows[i:i + 6]) for i in range(0, len(rows), 6)]
        lines.append("  };")
    lines += ["};", "", "} // namespace kfmm::tuning", "", "#endif", ""]
    return "\n".join(lines)


def run_tuning(args, argv):
    tuning = tune_header(args, argv)
    runs = []
    progress = Progress(args.quiet, "tune")

    def run(precision, order, leaf, distribution, scratch):
        record = run_kfmm(args.program, distribution, precision, args.n, args.repeat, scratch,
                          args.check, ["--order", str(order), "--theta", f"{args.theta:g}",
                                       "--leaf-size", str(leaf)])
        record.update(order=order, leaf_size=leaf)
        if record["ok"] and tuning["kokkos"] is None:
            tuning["kokkos"] = record["report"].get("kokkos")
            tuning["kfmm_version"] = record["report"].get("version")
        if not record["ok"]:
            progress.report_failure(f"{precision} order {order} leaf {leaf} {distribution} "
                                    f"failed: {record['error']}")
        runs.append(record)
        tuning["runs"] = runs
        tuning["table"] = fastest_table(tuning["tune"], runs)
        # Written after every run, so that an interrupted tuning keeps what it measured.
        write_json(args.out, tuning)

    with tempfile.TemporaryDirectory(prefix="kfmm-tune-") as scratch:
        for precision in args.precisions:
            orders = orders_of(args, precision)
            # The first order starts at the list's size nearest the library's old default.
            start = min(args.leaf_sizes, key=lambda s: abs(math.log(s / 64)))
            for step, order in enumerate(orders, start=1):
                tried = set()
                while True:
                    times = leaf_times(runs, precision, order, args.distributions)
                    leaf = next_leaf_size(args.leaf_sizes, times, tried, start,
                                          args.exhaustive)
                    if leaf is None:
                        break
                    tried.add(leaf)
                    for distribution in args.distributions:
                        progress.show(f"tune {precision} order {order} ({step}/{len(orders)})"
                                      f": leaf {leaf}, {distribution}, "
                                      f"N={short_count(args.n)}")
                        run(precision, order, leaf, distribution, scratch)
                if times:
                    start = min(times, key=times.get)
    progress.end_line()
    return tuning


def main(argv):
    args = parse_arguments(argv)
    tuning = run_tuning(args, argv)
    failed = sum(1 for run in tuning["runs"] if not run["ok"])
    if args.header:
        missing = [f"{p} order {o}" for p in PRECISIONS for o in orders_of(args, p)
                   if o not in {row["order"] for row in tuning["table"][p]}]
        if missing or not all(tuning["table"][p] for p in PRECISIONS):
            sys.stderr.write(f"tune: no leaf size measured for {', '.join(missing)}; "
                             f"{args.header} left as it was\n")
            return 1
        write_text(args.header, header_text(args.header, tuning))
    if failed:
        sys.stderr.write(f"tune: {failed} of {len(tuning['runs'])} runs failed; {args.out} "
                         "records them\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
