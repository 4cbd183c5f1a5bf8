#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Rebuild the tables of perf/RESULTS.md from the compressed reports in perf/results/.

Each campaign's reports are kept as one archive, perf/results/CAMPAIGN.tar.gz, holding a folder
CAMPAIGN/ of the program's JSON reports (`kfmm --json`), sweeps (perf/sweep.py) and text
outputs. This script reads them in place (no extraction) and prints, as Markdown, the tables
of RESULTS.md's sections "One GPU", "Memory", "Accuracy", "Several GPUs", "CPU", "Periodic
boundaries", "Portability" and "Kernels": every time, error and rate of those tables, with the
command, machine, date and commit that the reports record. Python 3, standard library only.

  python3 perf/rebuild_tables.py              # print every table
  python3 perf/rebuild_tables.py --check      # exit 1 unless RESULTS.md holds each table as printed

A row's time is the median over the reports it names (each report's time is itself the
median of its warm runs). The portability sweeps do not record their commit; the campaign
list below gives it, from the record of that day.
"""

import argparse
import fnmatch
import json
import re
import statistics
import sys
import tarfile
from pathlib import Path

import tolerance_benchmark

PERF = Path(__file__).resolve().parent
RESULTS = PERF / "results"

H200 = "H200"
MACHINES = [  # substring of a report's machine -> the short name the tables use
    ("2 x NVIDIA H200", "2 x H200"),
    ("H100", "H100, 2 ranks on one GPU"),
    ("H200", H200),
    ("2-core", "2-core CPU"),
]


class Archive:
    def __init__(self, name):
        self.name = name
        self.tar = tarfile.open(RESULTS / f"{name}.tar.gz")
        self.members = {Path(m.name).name: m for m in self.tar.getmembers() if m.isfile()}

    def names(self, pattern):
        found = sorted(n for n in self.members if fnmatch.fnmatch(n, pattern))
        if not found:
            sys.exit(f"rebuild_tables: no {pattern} in {self.name}.tar.gz")
        return found

    def text(self, name):
        return self.tar.extractfile(self.members[name]).read().decode()

    def json(self, name):
        return json.loads(self.text(name))

    def reports(self, pattern):
        return [self.json(n) for n in self.names(pattern)]


def machine(report):
    text = report.get("machine", "")
    for key, short in MACHINES:
        if key in text:
            return short
    return text


def commit(report):
    build = str(report.get("build", ""))
    return build.split()[0] + ("+" if " " in build else "")


def command(report):
    text = report["command"].replace("--json REPORT", "--json FILE")
    return f"`{text}`"


def seconds(value):
    """A time as the tables print it: ms below a second, s above."""
    if value < 1:
        return f"{value * 1e3:.3f} ms" if value < 0.1 else f"{value * 1e3:.1f} ms"
    return f"{value:.2f} s" if value < 100 else f"{value:.0f} s"


def error(value):
    return "-" if value is None else f"{value:.2e}"


def median_total(reports):
    return statistics.median(r["timing"]["total_seconds"] for r in reports)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def provenance(report, runs):
    return [command(report) + (f", {runs} runs" if runs > 1 else ""), machine(report),
            report["date"], commit(report)]


PROVENANCE = ["command", "machine", "date", "commit"]


def one_gpu():
    a = Archive("2026-11-28-h200-one-gpu")
    cases = [
        ("1e6 uniform float, order 7, theta 0.84, leaf 248", "*-targets-c54d99f-u248-*.json"),
        ("the same, measured again on another start of the machine",
         "*-u248-ten-lease1-c54d99f-*.json"),
        ("1e6 uniform float, defaults", "*-p2p-staging-v-u1-*.json"),
        ("1e6 Plummer float, defaults", "*-targets-c54d99f-plummer-*.json"),
        ("1e6 uniform double, order 24, theta 0.7, leaf 512", "*-targets-c54d99f-fp64-o24.json"),
        ("1e6 uniform double, `--tolerance 1e-10` (order 23, theta 0.5, leaf 512)",
         "*-p2p-team-size-d-t128-*.json"),
        ("1e8 uniform float, order 7, theta 0.85", "*-targets-c54d99f-u1e8.json"),
        ("1e8 Plummer float, order 8, theta 0.85", "*-targets-c54d99f-p1e8.json"),
    ]
    rows = []
    for case, pattern in cases:
        reports = a.reports(pattern)
        first = reports[0]
        rows.append([case, seconds(median_total(reports)), error(first["errors"]["field"])]
                    + provenance(first, len(reports)))
    out = [table(["case", "time", "field error"] + PROVENANCE, rows)]

    rows = []
    for case, name in [("1e6 uniform float, order 7, theta 0.84, leaf 248",
                        "2026-11-28-h200-targets-c54d99f-staged-u248.json"),
                       ("1e6 Plummer float, defaults",
                        "2026-11-28-h200-targets-c54d99f-staged-plummer.json")]:
        r = a.json(name)
        rows.append([case, f"{r['timing']['p2p_pairs_per_second']:.3e}",
                     seconds(r["timing"]["stage_seconds"]["P2P"])] + provenance(r, 1))
    out.append(table(["near field, stage-timed", "P2P pairs/s", "P2P time"] + PROVENANCE, rows))
    return out


def memory():
    a = Archive("2026-11-28-h200-one-gpu")
    rows = []
    for case, name in [("1e8 uniform float, order 7, theta 0.85", "*-targets-c54d99f-u1e8.json"),
                       ("1e8 Plummer float, order 8, theta 0.85", "*-targets-c54d99f-p1e8.json"),
                       ("1e6 uniform float, order 7, theta 0.84, leaf 248",
                        "*-targets-c54d99f-u248-1.json"),
                       ("1e6 uniform double, order 24, theta 0.7, leaf 512",
                        "*-targets-c54d99f-fp64-o24.json")]:
        r = a.reports(name)[0]
        n = r["configuration"]["n"]
        rows.append([case, f"{r['memory']['solver_bytes'] / n:.1f}",
                     f"{r['memory']['particle_bytes'] / n:.0f}"] + provenance(r, 1))
    return [table(["case", "solver bytes per particle", "particle bytes per particle"]
                  + PROVENANCE, rows)]


def accuracy():
    a = Archive("2026-11-27-accuracy-tables")
    rows = []
    order = {"float": 0, "double": 1}
    reports = a.reports("2026-11-27-h200-tolerance-u1e6-*.json")
    reports.sort(key=lambda r: (order[r["configuration"]["precision"]],
                                -r["configuration"]["tolerance"]))
    for r in reports:
        c = r["configuration"]
        tolerance = f"{c['tolerance']:.0e}".replace("e-0", "e-")
        rows.append([f"{c['precision']} {tolerance}",
                     f"order {c['order']}, theta {c['theta']:g}, leaf {c['leaf_size']}",
                     seconds(r["timing"]["total_seconds"]), error(r["errors"]["field"])]
                    + provenance(r, 1))
    return [table(["1e6 uniform, tolerance", "chosen", "time", "field error"] + PROVENANCE, rows)]


def tolerance_benchmark_tables():
    """perf/tolerance_benchmark.py's tables of the archived runs: the 2-core CPU's, then the
    H200's."""
    a = Archive("2026-11-29-tolerance-benchmark")
    tables = []
    for machine in ("2core", "h200"):
        results = a.json(a.names(f"*-{machine}-tolerance-u1e6.json")[0])["results"]
        tables += [tolerance_benchmark.table(r) for r in results]
    return tables


def several_gpus():
    a = Archive("2026-11-23-several-gpus")
    out = []
    rows = []
    for case, one, two, strong in [
            ("weak, 2.5e7 uniform per GPU", "*-weak-np1-uniform-*", "*-weak-np2-uniform-*", False),
            ("weak, 2.5e7 Plummer per GPU", "*-weak-np1-plummer-*", "*-weak-np2-plummer-*", False),
            ("strong, 1e8 uniform", "*-strong-np1-*", "*-strong-np2-*", True)]:
        r1, r2 = a.reports(one)[0], a.reports(two)[0]
        t1, t2 = r1["timing"]["total_seconds"], r2["timing"]["total_seconds"]
        efficiency = t1 / t2 / (2 if strong else 1)
        rows.append([case, seconds(t1), seconds(t2), f"{efficiency:.0%}".replace("%", " %")]
                    + provenance(r2, 1))
    out.append(table(["fp32, `--tolerance 1e-4`", "1 GPU", "2 GPUs", "efficiency"]
                     + PROVENANCE, rows))
    rows = []
    for case, pattern in [("2.5e6 uniform float on 2 H200s", "*-acc-np2-uniform-2.5e6.json"),
                          ("2e7 uniform float, 2 ranks on one H100", "*-np2-pooled-uniform.json"),
                          ("2e7 Plummer float, 2 ranks on one H100", "*-np2-pooled-plummer.json"),
                          ("1e6 uniform double, 1 rank x 1 thread",
                           "*-2core-distributed-np1-threads1-*"),
                          ("1e6 uniform double, 2 ranks x 1 thread",
                           "*-2core-distributed-np2-threads1-*"),
                          ("1e6 uniform double, 1 rank x 2 threads",
                           "*-2core-distributed-np1-threads2-*")]:
        r = a.reports(pattern)[0]
        rows.append([case, seconds(r["timing"]["total_seconds"]),
                     error((r.get("errors") or {}).get("field"))] + provenance(r, 1))
    out.append(table(["ranks", "time (slowest rank)", "field error"] + PROVENANCE, rows))
    out += distributed_build()
    out += distributed_steps()
    return out


RANK_LINE = re.compile(r"^ +(\d+) +(\d+) +(\d+) +(\d+)" + r" +([0-9.]+)" * 7 + r"$", re.M)


def rank_lines(text):
    """The per-rank table of a distributed report: particles, ghosts, build, partition,
    essential trees, each rank's."""
    return [dict(particles=int(m[2]), ghosts=int(m[3]), build=float(m[5]),
                 partition=float(m[6]), trees=float(m[7])) for m in RANK_LINE.finditer(text)]


def one_rank_build(text):
    """tree + lists + M2L matrices + setup of a one-rank report's stage table."""
    return sum(float(m[2]) for m in re.finditer(
        r"^    (tree|lists|M2L matrices|setup) +([0-9.]+)", text, re.M))


def ghosts_and_build(ranks, build, partition, trees):
    """The ghosts per own particle over the ranks, and the slowest rank's build with its
    partition and essential trees, as the table prints them (keys of each rank's entry)."""
    ghosts = sum(r["ghosts"] for r in ranks) / sum(r["particles"] for r in ranks)
    slowest = [seconds(max(r[key] for r in ranks)) for key in (build, partition, trees)]
    return [f"{ghosts:.3f}", f"{slowest[0]} ({slowest[1]}, {slowest[2]})"]


def distributed_build():
    a = Archive("2026-11-29-distributed-build")
    rows = []
    for d in ("uniform", "plummer"):
        one = a.json(a.names(f"*-2core-strong-np1-threads2-{d}-*")[0])
        two = a.json(a.names(f"*-2core-strong-np2-threads1-{d}-*")[0])
        t1, t2 = one["timing"]["total_seconds"], two["timing"]["total_seconds"]
        rows.append([f"strong, 1e6 {d} double: 1 rank x 2 threads, 2 ranks x 1 thread",
                     seconds(t1), seconds(t2), f"{t1 / t2:.0%}".replace("%", " %"),
                     *ghosts_and_build(two["per_rank"], "build_seconds", "partition_seconds",
                                       "essential_trees_seconds")] + provenance(two, 1))
    return [table(["case", "1 rank", "2 ranks", "efficiency", "ghosts per own particle",
                   "build (partition, essential trees)"] + PROVENANCE, rows)]


RUN_MEDIAN = re.compile(r"median of the \d+ after it ([0-9.]+) s")
STEP_LINE = re.compile(r"steps +\d+, .*?median ([0-9.]+) s per step \(rebuild ([0-9.]+) s, .*?"
                       r"evaluate ([0-9.]+) s\); .*?per step (\d+)")
FIELD_ERROR = re.compile(r"field ([0-9.e+-]+) \(relative")


def sections(text):
    """The parts of a text after each '== HEADER' line, by header."""
    parts = re.split(r"^== (.*)$", text, flags=re.M)
    return {parts[k].strip(): parts[k + 1] for k in range(1, len(parts), 2)}


def distributed_steps():
    """Time steps of the distributed solver (each rank taking over its particles, rebuild,
    evaluate) beside one rank's run of the same N per rank; the build with its partition and
    local essential trees."""
    a = Archive("2026-11-29-distributed-steps")
    two = sections(a.text("h200-ac4d3d0-device-exchange-measure.txt"))
    fast_one = a.text("h200-dff0c3f-taken-over-fast.txt")
    rows = []
    for spec in ("uniform", "plummer", "uniform --order 7 --theta 0.84 --leaf-size 248",
                 "plummer --order 8 --theta 0.85"):
        d, settings = (spec.split(" ", 1) + [""])[:2]
        if settings:
            one = re.search(rf"^== {re.escape(spec)} one rank 1e7: .*", fast_one, re.M)[0]
        else:
            one = a.text(f"h200-dff0c3f-taken-over-one-{d}.log")
        body = two[spec]
        step, rebuild, evaluate, sent = STEP_LINE.search(body).groups()
        rows.append([f"1e7 {d} float per rank, {settings or 'defaults'}",
                     seconds(float(RUN_MEDIAN.search(one)[1])),
                     "-" if settings else seconds(one_rank_build(one)),
                     seconds(float(RUN_MEDIAN.search(body)[1])),
                     *ghosts_and_build(rank_lines(body), "build", "partition", "trees"),
                     f"{seconds(float(step))} ({seconds(float(rebuild))}, "
                     f"{seconds(float(evaluate))})", sent,
                     error(float(FIELD_ERROR.search(body)[1])),
                     f"`mpiexec -n 2 build/cuda/apps/kfmm --n 2e7 --distribution {spec} "
                     "--precision float --repeat 2 --steps 5 --check 200`",
                     "H200, 2 ranks on one GPU", "2026-11-29", "ac4d3d0"])
    for d in ("uniform", "plummer"):
        one = a.json(f"2core-ac4d3d0-run-one-rank-threads2-1e6-{d}.json")
        two_ranks = a.json(f"2core-dff0c3f-steps-{d}.json")
        steps = two_ranks["steps"]
        stages = one["timing"]["stage_seconds"]
        rows.append([f"1e6 {d} double: 1 rank x 2 threads, 2 ranks x 1 thread",
                     seconds(one["timing"]["total_seconds"]),
                     seconds(sum(stages[k] for k in ("tree", "lists", "M2L matrices", "setup"))),
                     seconds(two_ranks["timing"]["total_seconds"]),
                     *ghosts_and_build(two_ranks["per_rank"], "build_seconds",
                                       "partition_seconds", "essential_trees_seconds"),
                     f"{seconds(steps['seconds'])} ({seconds(steps['rebuild_seconds'])}, "
                     f"{seconds(steps['evaluate_seconds'])})", f"{steps['sent_particles']:.0f}",
                     "-",
                     f"`OMP_NUM_THREADS=1 mpiexec --oversubscribe -n 2 build/openmp/apps/kfmm "
                     f"--n 1000000 --distribution {d} --precision double --repeat 2 --steps 3 "
                     "--check 0 --json FILE`", "2-core CPU", "2026-11-29", "dff0c3f"])
    return [table(["case", "1 rank: run", "1 rank: build", "2 ranks: run", "ghosts per own particle",
                   "build (partition, essential trees)", "step (rebuild, evaluate)",
                   "particles sent per step", "field error"] + PROVENANCE, rows)]


def cpu():
    a = Archive("2026-11-29-2core-cpu")
    rows = []
    for asked, pattern in [("<= 1e-4, double", "*-1e-4-double.json"),
                           ("<= 1e-4, float", "*-1e-4-float-leaf64.json"),
                           ("<= 2e-6, double", "*-2e-6-e.json"),
                           ("<= 5e-8, double", "*-5e-8-e.json"),
                           ("<= 2e-10, double", "*-2e-10-c.json")]:
        r = a.reports(pattern)[0]
        c = r["configuration"]
        stages = r["timing"]["stage_seconds"]
        rows.append([asked, f"{c['order']}, {c['theta']:g}, {c['leaf_size']}",
                     seconds(r["timing"]["total_seconds"]), seconds(stages["M2L"]),
                     seconds(stages["P2P"]), error(r["errors"]["field"])] + provenance(r, 1))
    return [table(["1e6 uniform, field error", "order, theta, leaf", "time", "M2L", "P2P",
                   "field error"] + PROVENANCE, rows)]


def periodic():
    a = Archive("2026-11-29-periodic")
    rows = []
    for host, problem, precision, asked in [("h200", "plummer", "float", "1e-4"),
                                            ("h200", "neutral", "float", "1e-4"),
                                            ("h200", "plummer", "double", "1e-10"),
                                            ("h200", "neutral", "double", "1e-10"),
                                            ("2core", "uniform", "float", "1e-4"),
                                            ("2core", "uniform", "double", "1e-10")]:
        free = a.json(f"{host}-1e6-{problem}-{precision}-free.json")
        boxed = a.json(f"{host}-1e6-{problem}-{precision}-periodic.json")
        t_free = free["timing"]["total_seconds"]
        t_boxed = boxed["timing"]["total_seconds"]
        m2l = boxed["interactions"]["m2l"] / free["interactions"]["m2l"]
        p2p = boxed["interactions"]["p2p"] / free["interactions"]["p2p"]
        c = boxed["configuration"]
        rows.append([f"1e6 {problem}, {precision}, tolerance {asked}",
                     f"{c['order']}, {c['theta']:g}, {c['leaf_size']}", seconds(t_free),
                     seconds(t_boxed), f"{t_boxed / t_free:.2f}", f"{m2l:.2f}, {p2p:.2f}",
                     error(free["errors"]["field"]), error(boxed["errors"]["field"]),
                     error(boxed["errors"]["potential"])] + provenance(boxed, 1))
    header = ["problem", "order, theta, leaf", "free space", "periodic", "ratio",
              "M2L, P2P pairs ratio", "field error free", "field error periodic",
              "potential error periodic"] + PROVENANCE
    return [table(header, rows)]


def portability():
    a = Archive("2026-11-28-portability-sweeps")
    sweeps = {key: a.json(name) for key, name in [("A", "h200-sweep-cuda.json"),
                                                  ("B", "2core-sweep-openmp.json")]}
    rows = []
    for distribution, precision in [("uniform", "float"), ("uniform", "double"),
                                    ("plummer", "float"), ("plummer", "double")]:
        times, errors = {}, {}
        for key, sweep in sweeps.items():
            run = next(r for r in sweep["runs"] if r["n"] == 1000000
                       and r["distribution"] == distribution and r["precision"] == precision)
            times[key] = run["report"]["timing"]["total_seconds"]
            errors[key] = run["report"]["errors"]["field"]
        rows.append([f"1e6 {distribution.capitalize() if distribution == 'plummer' else distribution}"
                     f", {precision}, defaults", seconds(times["A"]), seconds(times["B"]),
                     f"{times['B'] / times['A']:.0f}x", error(errors["A"]), error(errors["B"])])
    header = ["case", "H200 (CUDA)", "2-core CPU (OpenMP)", "H200 over CPU", "field error H200",
              "field error CPU"]
    return [table(header, rows)]


def kernels():
    a = Archive("2026-11-28-h200-one-gpu")
    text = a.text("2026-11-28-h200-targets-c54d99f-bench-direct.txt")
    rows = []
    for line in text.splitlines():
        m = re.match(r"Cuda\s+(fp\d+)\s+N=(\d+)\s+median (\S+) s\s+(\S+) interactions/s", line)
        if m:
            rows.append([f"all-pairs direct sum, {m[1]}, N = {m[2]}", f"{float(m[4]):.3e}",
                         seconds(float(m[3])),
                         "`kfmm_bench_direct --n 1048576 --host-n 1024 --repeat 3`", H200,
                         "2026-11-28", "c54d99f"])
    return [table(["kernel", "pairs/s", "time"] + PROVENANCE, rows)]


SECTIONS = [("One GPU", one_gpu), ("Memory", memory), ("Accuracy", accuracy),
            ("Accuracy", tolerance_benchmark_tables),
            ("Several GPUs", several_gpus), ("CPU", cpu), ("Periodic boundaries", periodic),
            ("Portability", portability),
            ("Kernels", kernels)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 unless perf/RESULTS.md holds every table as printed")
    parser.add_argument("--results-md", default=str(PERF / "RESULTS.md"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    tables = [(title, t) for title, make in SECTIONS for t in make()]
    if not args.check:
        for title, t in tables:
            print(f"<!-- {title} -->\n{t}\n")
        return 0
    held = Path(args.results_md).read_text()
    missing = [title for title, t in tables if t not in held]
    for title in missing:
        print(f"rebuild_tables: a table of section '{title}' differs from perf/RESULTS.md",
              file=sys.stderr)
    if not missing:
        print(f"rebuild_tables: {len(tables)} tables of perf/RESULTS.md match their reports")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
