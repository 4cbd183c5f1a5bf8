#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run a built kfmm program over a sweep of problems and write one JSON file.

For each (distribution, precision, N), and each tolerance where --tolerances gives some, the
program runs once with --json; its report is kept as it is. The all-pairs direct sum is
measured with kfmm_bench_direct when it sits beside the program's build
(build/<preset>/perf/), for N up to --direct-max-n. The file starts with a
header describing the machine (no host name), the date, the Kokkos configuration and the
commands, so that two sweeps from two builds can be compared by portability_report.py.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile

SWEEP_FORMAT = "kfmm-sweep"
SWEEP_FORMAT_VERSION = 1
# The environment variables that change how a Kokkos program uses the machine.
RECORDED_ENVIRONMENT = ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "CUDA_VISIBLE_DEVICES")
DISTRIBUTIONS = ("uniform", "plummer", "sphere", "ellipsoid", "cylinder")
PRECISIONS = ("float", "double")
# kfmm_bench_direct names precisions by their width.
BENCH_PRECISIONS = {"fp32": "float", "fp64": "double"}
# A timing line of kfmm_bench_direct, e.g.
# "OpenMP   fp32   N=4000      median 6.3992e-02 s  2.500e+08 interactions/s".
BENCH_TIMING = re.compile(
    r"^(?P<space>\S+)\s+(?P<precision>fp32|fp64)\s+N=(?P<n>\d+)\s+median\s+"
    r"(?P<seconds>\S+)\s+s\s+(?P<rate>\S+)\s+interactions/s\s*$")
# The reference-loop line that follows a host space's timing line.
BENCH_REFERENCE = re.compile(
    r"^(?P<space>\S+)\s+(?P<precision>fp32|fp64)\s+N=(?P<n>\d+)\s+reference loop\s+"
    r"(?P<rate>\S+)\s+interactions/s")


def parse_count(text):
    """'1e5' -> 100000; counts must be positive integers, possibly in scientific notation."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number")
    if value < 1 or value != int(value) or value > 2**31 - 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count from 1 to 2^31-1")
    return int(value)


def count_list(text):
    return [parse_count(item) for item in text.split(",") if item]


def tolerance_list(text):
    """'1e-4,2e-6' -> [0.0001, 2e-06]: positive field errors below 1."""
    values = []
    for item in (item for item in text.split(",") if item):
        try:
            value = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{item}' is not a number")
        if not 0 < value < 1:
            raise argparse.ArgumentTypeError(f"tolerance '{item}' is not in (0, 1)")
        values.append(value)
    return values


def choice_list(choices):
    def parse(text):
        items = [item for item in text.split(",") if item]
        for item in items:
            if item not in choices:
                raise argparse.ArgumentTypeError(
                    f"unknown value '{item}' (expected {', '.join(choices)})")
        return items
    return parse


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="Run a built kfmm program over a sweep of problem sizes, distributions and "
                    "precisions, and the direct-sum benchmark beside it, and write all the "
                    "reports to one JSON file (the input of perf/portability_report.py).",
        epilog="Example: python3 perf/sweep.py --program build/openmp/apps/kfmm "
               "--out sweep-openmp.json. Exit status: 0 when every run succeeded, 1 when "
               "some failed (they are recorded in the file), 2 on a bad command line.")
    parser.add_argument("--program", required=True,
                        help="the kfmm program to run, e.g. build/openmp/apps/kfmm")
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--n", type=count_list, default=count_list("1e3,1e4,1e5,1e6"),
                        help="comma-separated particle counts (default 1e3,1e4,1e5,1e6)")
    parser.add_argument("--distributions", type=choice_list(DISTRIBUTIONS),
                        default=["uniform", "plummer"],
                        help="comma-separated distributions (default uniform,plummer)")
    parser.add_argument("--precisions", type=choice_list(PRECISIONS),
                        default=["float", "double"],
                        help="comma-separated precisions (default float,double)")
    parser.add_argument("--tolerances", type=tolerance_list, default=[None],
                        help="comma-separated field errors to ask for (kfmm --tolerance): "
                             "each case runs once per tolerance; by default the program's "
                             "defaults run once")
    parser.add_argument("--repeat", type=int, default=3,
                        help="warm runs after the first, whose medians the reports give "
                             "(kfmm --repeat; default 3)")
    parser.add_argument("--direct-max-n", type=parse_count, default=parse_count("1e5"),
                        help="largest N of the direct-sum benchmark (default 1e5; its time "
                             "grows as N^2)")
    parser.add_argument("--quiet", action="store_true",
                        help="print no progress (failures are still reported on stderr)")
    args = parser.parse_args(argv)
    if not 0 <= args.repeat <= 1000:
        parser.error("--repeat must be from 0 to 1000")
    if not (args.n and args.distributions and args.precisions and args.tolerances):
        parser.error("--n, --distributions, --precisions and --tolerances need at least one "
                     "value each")
    if not os.access(args.program, os.X_OK):
        parser.error(f"--program '{args.program}' is not an executable file")
    return args


def cpu_description():
    """The CPU model and the number of logical CPUs, from /proc/cpuinfo where there is one."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count()}


def gpu_names():
    """The names of the NVIDIA GPUs, or None where nvidia-smi is missing or fails."""
    try:
        result = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return [line.strip() for line in result.stdout.splitlines() if line.strip()] or None


def machine_description():
    machine = cpu_description()
    machine["gpus"] = gpu_names()
    return machine


class Progress:
    """One line updated in place on a terminal, a line per step elsewhere, nothing if quiet."""

    def __init__(self, quiet, name="sweep"):
        self.quiet = quiet
        self.name = name
        self.in_place = sys.stderr.isatty()
        self.width = 0

    def show(self, text):
        if self.quiet:
            return
        if self.in_place:
            # Pad over the previous, possibly longer, line.
            sys.stderr.write("\r" + text.ljust(self.width))
            self.width = len(text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def report_failure(self, text):
        """Failures are printed even when quiet, on a line of their own."""
        self.end_line()
        sys.stderr.write(f"{self.name}: {text}\n")
        sys.stderr.flush()

    def end_line(self):
        if not self.quiet and self.in_place and self.width:
            sys.stderr.write("\n")
            self.width = 0


def short_count(n):
    """1000 -> '1e3', 16000 -> '1.6e4', 1234 -> '1234': the way sweeps are usually written."""
    mantissa, exponent = f"{n:e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    text = f"{mantissa}e{int(exponent)}"
    return text if float(text) == n and len(text) <= len(str(n)) else str(n)


def last_lines(text, count=3):
    return " | ".join(line for line in text.strip().splitlines()[-count:])


def run_kfmm(program, distribution, precision, n, repeat, scratch, check=1000, options=(),
             tolerance=None):
    """One kfmm run, its error checked at min(check, n) particles, with further program
    options and the field error asked for (None: none asked); returns the run's record: its
    command and its report or its failure."""
    asked = ["--tolerance", repr(tolerance)] if tolerance is not None else []
    arguments = ["--n", str(n), "--distribution", distribution, "--precision", precision,
                 *asked, "--repeat", str(repeat), "--check", str(min(check, n)), *options,
                 "--quiet"]
    report_path = os.path.join(scratch, "report.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    record = {"distribution": distribution, "precision": precision, "n": n,
              "tolerance": tolerance,
              # The report's temporary path is not part of the experiment.
              "command": shlex.join([program] + arguments + ["--json", "FILE"])}
    result = subprocess.run([program] + arguments + ["--json", report_path],
                            capture_output=True, text=True)
    record["exit_status"] = result.returncode
    if result.stderr.strip():
        record["stderr"] = result.stderr.strip()
    if result.returncode != 0:
        record["ok"] = False
        record["error"] = last_lines(result.stderr) or f"exit status {result.returncode}"
        return record
    try:
        with open(report_path, encoding="utf-8") as report:
            record["report"] = json.load(report)
        record["ok"] = True
    except (OSError, ValueError) as error:
        record["ok"] = False
        record["error"] = f"no readable JSON report: {error}"
    return record


def parse_bench_output(text):
    """kfmm_bench_direct's lines -> one entry per (space, precision, N), reference rate added."""
    results = {}
    for line in text.splitlines():
        timing = BENCH_TIMING.match(line)
        reference = BENCH_REFERENCE.match(line)
        if timing:
            key = (timing["space"], timing["precision"], int(timing["n"]))
            n = key[2]
            results[key] = {"space": key[0], "precision": BENCH_PRECISIONS[key[1]], "n": n,
                            "interactions": n * n, "seconds": float(timing["seconds"]),
                            "interactions_per_second": float(timing["rate"]),
                            "reference_interactions_per_second": None}
        elif reference:
            key = (reference["space"], reference["precision"], int(reference["n"]))
            if key in results:
                results[key]["reference_interactions_per_second"] = float(reference["rate"])
    return list(results.values())


def bench_direct_paths(program):
    """kfmm_bench_direct of the same build (build/<preset>/perf/ beside build/<preset>/apps/):
    the path to run, and the path as the program was given, to record."""
    def beside(folder):
        return os.path.join(os.path.dirname(folder), "perf", "kfmm_bench_direct")
    return (beside(os.path.dirname(os.path.abspath(program))),
            beside(os.path.dirname(program)))


def run_direct_sum(program, sizes, repeat, default_is_gpu):
    """The direct sum's rates for the sizes up to --direct-max-n, or why they are missing."""
    path, shown = bench_direct_paths(program)
    if not os.access(path, os.X_OK):
        return {"measured": False,
                "reason": f"no kfmm_bench_direct beside the program (looked for {shown})"}
    if not sizes:
        return {"measured": False, "reason": "no N of the sweep is within --direct-max-n"}
    listed = ",".join(str(n) for n in sizes)
    # On a GPU build the benchmark also times the host spaces: the smallest size keeps that
    # short, since the report compares each backend with its own default space only.
    host_sizes = str(min(sizes)) if default_is_gpu else listed
    arguments = ["--n", listed, "--host-n", host_sizes, "--repeat", str(max(1, repeat))]
    command = shlex.join([shown] + arguments)
    result = subprocess.run([path] + arguments, capture_output=True, text=True)
    if result.returncode != 0:
        return {"measured": False, "command": command,
                "reason": f"kfmm_bench_direct failed (exit status {result.returncode}): "
                          f"{last_lines(result.stderr)}"}
    results = parse_bench_output(result.stdout)
    if not results:
        return {"measured": False, "command": command,
                "reason": "kfmm_bench_direct printed no timing line this script understands"}
    return {"measured": True, "command": command, "results": results}


def run_header(file_format, version, program):
    """What every file of measurements starts with: its format, when and where it was made
    (the machine without its host name, the environment that changes how Kokkos runs) and
    the program measured."""
    return {
        "format": file_format,
        "format_version": version,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_description(),
        "environment": {name: os.environ[name] for name in RECORDED_ENVIRONMENT
                        if name in os.environ},
        "program": program,
    }


def sweep_header(args):
    return {
        **run_header(SWEEP_FORMAT, SWEEP_FORMAT_VERSION, args.program),
        "sweep": {"n": args.n, "distributions": args.distributions,
                  "precisions": args.precisions, "tolerances": args.tolerances,
                  "repeat": args.repeat,
                  "direct_max_n": args.direct_max_n},
        # Filled from the first report that the program wrote.
        "kfmm_version": None,
        "kokkos": None,
    }


def write_text(path, text):
    """Written under a temporary name and renamed, so that a failed write leaves no half file."""
    folder = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile("w", dir=folder, prefix=os.path.basename(path) + ".",
                                     suffix=".tmp", delete=False, encoding="utf-8") as out:
        out.write(text)
    # A temporary file is private to its owner; the result gets the usual permissions.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(out.name, 0o666 & ~umask)
    os.replace(out.name, path)


def write_json(path, data):
    write_text(path, json.dumps(data, indent=1) + "\n")


def run_sweep(args):
    sweep = sweep_header(args)
    runs = []
    progress = Progress(args.quiet)
    cases = [(d, p, n, t) for d in args.distributions for p in args.precisions for n in args.n
             for t in args.tolerances]
    steps = len(cases) + 1
    with tempfile.TemporaryDirectory(prefix="kfmm-sweep-") as scratch:
        for step, (distribution, precision, n, tolerance) in enumerate(cases, start=1):
            asked = f" tolerance {tolerance:g}" if tolerance is not None else ""
            progress.show(f"sweep {step}/{steps}: {distribution} {precision} "
                          f"N={short_count(n)}{asked}")
            record = run_kfmm(args.program, distribution, precision, n, args.repeat, scratch,
                              tolerance=tolerance)
            if record["ok"] and sweep["kokkos"] is None:
                sweep["kokkos"] = record["report"].get("kokkos")
                sweep["kfmm_version"] = record["report"].get("version")
            if not record["ok"]:
                progress.report_failure(f"{distribution} {precision} N={n}{asked} failed: "
                                        f"{record['error']}")
            runs.append(record)
    progress.show(f"sweep {steps}/{steps}: direct sum")
    default_is_gpu = bool(sweep["kokkos"] and sweep["kokkos"].get("default_space_is_gpu"))
    direct = run_direct_sum(args.program, [n for n in args.n if n <= args.direct_max_n],
                            args.repeat, default_is_gpu)
    if not direct["measured"]:
        progress.report_failure(f"direct sum not measured: {direct['reason']}")
    progress.end_line()
    sweep["commands"] = [run["command"] for run in runs] + (
        [direct["command"]] if "command" in direct else [])
    sweep["runs"] = runs
    sweep["direct_sum"] = direct
    return sweep


def main(argv):
    args = parse_arguments(argv)
    sweep = run_sweep(args)
    write_json(args.out, sweep)
    failed = sum(1 for run in sweep["runs"] if not run["ok"])
    if failed:
        sys.stderr.write(f"sweep: {failed} of {len(sweep['runs'])} runs failed; "
                         f"{args.out} records them\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
