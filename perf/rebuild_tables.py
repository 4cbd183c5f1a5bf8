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
    ("16-core host", "16-core CPU"),
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


def efficiency(value):
    return f"{value:.0%}".replace("%", " %")


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


def setting_and_error(report):
    """A report's order, theta, leaf size and field error, as one cell."""
    c = report["configuration"]
    return (f"{c['order']}, {c['theta']:g}, {c['leaf_size']}; "
            f"{error((report['errors'] or {}).get('field'))}")


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


def measured_tolerance_tables():
    """perf/tolerance_benchmark.py's tables of the measured choice (kfmm::calibrate): the H200's
    at 1e6 uniform, Plummer and sphere, 1e8 uniform, 1e4 uniform, Plummer and sphere and 1e5
    uniform, then the 2-core CPU's at 1e6 uniform and Plummer and at 1e4 uniform and
    Plummer."""
    a = Archive("2026-11-30-tolerance-calibrated")
    tables = []
    for name in ("h200-tolerance-calibrated-uniform-1e6", "h200-tolerance-calibrated-plummer-1e6",
                 "h200-tolerance-calibrated-sphere-1e6", "h200-tolerance-calibrated-uniform-1e8",
                 "h200-tolerance-calibrated-uniform-1e4", "h200-tolerance-calibrated-plummer-1e4",
                 "h200-tolerance-calibrated-sphere-1e4", "h200-tolerance-calibrated-uniform-1e5",
                 "2core-tolerance-calibrated-uniform-1e6", "2core-tolerance-calibrated-plummer-1e6",
                 "2core-tolerance-calibrated-uniform-1e4", "2core-tolerance-calibrated-plummer-1e4"):
        results = a.json(a.names(f"*-{name}.json")[0])["results"]
        tables += [tolerance_benchmark.table(r) for r in results]
    return tables


def calibrate_fronts_tables():
    """perf/tolerance_benchmark.py's tables with the other backends' fronts tried and the
    reference beyond the tables (kfmm::calibrate, step 3 and step 1): the H200's at 1e6
    uniform, Plummer and sphere, then the 2-core CPU's at 1e6 Plummer (float, double at
    1e-8) and uniform (float)."""
    a = Archive("2026-12-01-calibrate-fronts")
    tables = []
    for name in ("h200-calibrate-fronts-uniform-1e6", "h200-calibrate-fronts-plummer-1e6",
                 "h200-calibrate-fronts-sphere-1e6", "2core-calibrate-fronts-plummer-float-1e6",
                 "2core-calibrate-fronts-plummer-double-1e6",
                 "2core-calibrate-fronts-uniform-float-1e6"):
        results = a.json(a.names(f"*-{name}.json")[0])["results"]
        tables += [tolerance_benchmark.table(r) for r in results]
    return tables


def tolerance_1e4_cpu_tables():
    """perf/tolerance_benchmark.py's tables on the 2-core CPU at 1e4 uniform and Plummer (float
    then double each), with the measured choice at 6c81709."""
    a = Archive("2026-12-02-tolerance-1e4-2core")
    tables = []
    for name in ("2core-tolerance-uniform-1e4", "2core-tolerance-plummer-1e4"):
        results = a.json(a.names(f"{name}.json")[0])["results"]
        tables += [tolerance_benchmark.table(r) for r in results]
    return tables


def bulk_cap_tables():
    """The tables perf/tolerance_benchmark.py printed with the bulk of the fields at the samples'
    largest field (1e56427, not kept): the H200 at 1e6 on a sphere, float then double."""
    text = Archive("2026-12-02-bulk-cap").text("h200-sphere-1e6.md")
    return ["\n".join(line for line in block.splitlines() if line.startswith("|"))
            for block in text.split("\n\n") if "| tolerance |" in block]


def distributed_calibrated():
    """The measured choice on two ranks (kfmm::distributed::calibrate) against the table's
    choice, and one rank's measured choice of the same problem, on the H200."""
    a = Archive("2026-12-02-distributed-calibrate")

    rows = []
    for problem, precision, asked, one_rank in [("uniform", "float", "1e-4", True),
                                                ("plummer", "float", "1e-4", True),
                                                ("uniform", "double", "1e-8", False)]:
        stem = f"{problem}-{precision}-{asked}"
        measured, table_choice = (a.json(f"h200-2ranks-{stem}-{kind}.json")
                                  for kind in ("measured", "table"))
        t_measured, t_table = (r["timing"]["total_seconds"] for r in (measured, table_choice))
        calibration = measured["calibration"]
        single = a.json(f"h200-1rank-{stem}-measured.json") if one_rank else None
        n = f"{measured['configuration']['n']:.0e}".replace("e+0", "e")
        rows.append([f"{n} {problem}, {precision}, tolerance {asked}",
                     setting_and_error(table_choice), seconds(t_table),
                     setting_and_error(measured), seconds(t_measured),
                     f"{t_table / t_measured:.2f}",
                     f"{calibration['evaluations']}, {seconds(calibration['seconds'])}",
                     f"{setting_and_error(single)}; {seconds(single['timing']['total_seconds'])}"
                     if single else "-"] + provenance(measured, 1))
    header = ["problem", "the table's choice: order, theta, leaf; field error", "its time",
              "measured on 2 ranks: order, theta, leaf; field error", "its time",
              "table's time over measured", "evaluations, calibration",
              "measured on 1 rank; its time"
              ] + PROVENANCE
    return [table(header, rows)]


def several_gpus():
    """Two H200s (one host): weak and strong scaling, cold runs and time steps, the per-rank
    breakdown, the sparse-leaf rule's change in two leases; two CPU ranks on the 2-core
    machine."""
    a = Archive("2026-11-30-two-h200-merged")
    pooled_runs = Archive("2026-11-30-two-h200-pooled")
    routes = Archive("2026-11-30-two-h200-device-peers")
    earlier = Archive("2026-11-29-two-h200")
    now, before_merges = "49a9d5d", "887ea2b"
    host_staged, device_peers, pooled = "7bfea67", "b466d56", "4377f1f"

    def report(case, commit=now, archive=a):
        return archive.json(f"2xh200-{commit}-{case}.json")

    def slowest(r, key):
        return max(p[key] for p in r["per_rank"])

    def per_own(r, key):
        return sum(p[key] for p in r["per_rank"]) / sum(p["particles"] for p in r["per_rank"])

    def one_gpu_build(r):
        stages = r["timing"]["stage_seconds"]
        return sum(stages[k] for k in ("tree", "lists", "M2L matrices", "setup"))

    # The steps that the A/B campaigns alternated, each with its row's name.
    alternated_steps = (("steps-u25-r1", "weak, 2.5e7 uniform per GPU, first round"),
                        ("steps-u25-r2", "weak, 2.5e7 uniform per GPU, second round"),
                        ("steps-p25-r1", "weak, 2.5e7 Plummer per GPU, first round"),
                        ("steps-p25-r2", "weak, 2.5e7 Plummer per GPU, second round"),
                        ("steps-u100", "weak, 1e8 uniform per GPU"),
                        ("steps-p100", "weak, 1e8 Plummer per GPU"),
                        ("strong-steps-u100", "strong, 1e8 uniform"))

    def alternated(commits, archive, headers, cells):
        """The table of alternated_steps, each step of each of `commits` (in `archive`), with
        the columns `headers` that cells(its steps report) gives."""
        rows = [[name, commit] + cells(report(case, commit, archive)["steps"])
                for case, name in alternated_steps for commit in commits]
        return table(["steps, 2 GPUs", "commit"] + headers, rows)

    cases = [  # name, one GPU, cold run on two, time steps on two, strong
        ("weak, 2.5e7 uniform per GPU, order 7, theta 0.84, leaf 248", "one-u25", "two-u25",
         "steps-u25-r1", False),
        ("weak, 2.5e7 Plummer per GPU, order 8, theta 0.85", "one-p25", "two-p25",
         "steps-p25-r1", False),
        ("weak, 1e8 uniform per GPU, order 7, theta 0.85", "one-u100", "two-u100", "steps-u100",
         False),
        ("weak, 1e8 Plummer per GPU, order 8, theta 0.85", "one-p100", "two-p100", "steps-p100",
         False),
        ("strong, 1e8 uniform, order 7, theta 0.85", "one-u100", "strong-u100",
         "strong-steps-u100", True)]
    scaling, breakdown = [], []
    for name, one, cold, steps, strong in cases:
        r1, rs = report(one), report(steps)
        t1 = r1["timing"]["total_seconds"]
        step = rs["steps"]
        share = 2 if strong else 1
        rc = report(cold) if cold else None
        tc = rc["timing"]["total_seconds"] if rc else None
        scaling.append([name, seconds(t1), seconds(step["seconds"]),
                        efficiency(t1 / step["seconds"] / share),
                        seconds(tc) if rc else "-", efficiency(t1 / tc / share) if rc else "-",
                        error(rs["errors"]["field"])] + provenance(rs, 1))
        one_build = one_gpu_build(r1)
        breakdown.append([
            name.split(",")[0] + "," + name.split(",")[1],
            f"{per_own(rs, 'ghosts'):.3f}", f"{per_own(rs, 'pruned_cells'):.1e}",
            seconds(one_build),
            f"{seconds(step['rebuild_seconds'])} ({seconds(step['partition_seconds'])}, "
            f"{seconds(step['essential_trees_seconds'])})",
            f"{step['rebuild_seconds'] / one_build:.1f}x",
            seconds(step["evaluate_seconds"]),
            f"{seconds(slowest(rc, 'build_seconds'))} ({seconds(slowest(rc, 'partition_seconds'))}"
            f", {seconds(slowest(rc, 'essential_trees_seconds'))}; MPI "
            f"{seconds(slowest(rc, 'build_communication_seconds'))})" if rc else "-",
            f"{seconds(slowest(rc, 'evaluate_seconds'))} (MPI "
            f"{seconds(slowest(rc, 'evaluate_communication_seconds'))})" if rc else "-"])
    out = [table(["fp32, field error <= 1e-4", "1 GPU: run", "2 GPUs: step", "efficiency",
                  "2 GPUs: cold run", "efficiency", "field error"] + PROVENANCE, scaling),
           table(["case", "ghosts per own particle", "remote cells per own particle",
                  "1 GPU: build", "2 GPUs: step's rebuild (partition, essential trees)",
                  "rebuild / 1 GPU's build", "step's evaluate",
                  "cold build (partition, essential trees; MPI)", "cold evaluate (MPI)"],
                 breakdown)]
    rows = []
    for case, name in (("u25", "2.5e7 uniform per GPU"), ("p25", "2.5e7 Plummer per GPU")):
        for commit, route in ((host_staged, "through host buffers"),
                              (device_peers, "device to device")):
            cold = report(f"two-{case}", commit, routes)
            steps = report(f"steps-{case}", commit, routes)
            first = steps["timing"]["stage_seconds"]
            rows.append([f"{name}, {route}", commit, seconds(cold["timing"]["total_seconds"]),
                         seconds(slowest(steps, "partition_seconds")),
                         seconds(first["exchange charges"]), seconds(first["return results"]),
                         seconds(steps["steps"]["seconds"]),
                         seconds(steps["steps"]["rebuild_seconds"]),
                         seconds(steps["steps"]["evaluate_seconds"])])
    out.append(table(["weak, 2 GPUs", "commit", "cold run", "first run's partition",
                      "first run's charges to owners", "first run's results back", "step",
                      "step's rebuild", "step's evaluate"], rows))
    rows = []
    for case, name in (("u25", "2.5e7 uniform per GPU"), ("p25", "2.5e7 Plummer per GPU"),
                       ("u100", "1e8 uniform per GPU")):
        for commit, arrays in ((device_peers, "allocated per call"), (pooled, "pooled")):
            runs = [f"steps-{case}"] if case == "u100" else [f"steps-{case}-r1", f"steps-{case}-r2"]
            steps = [report(run, commit, pooled_runs)["steps"] for run in runs]
            rows.append([f"{name}, the partition's arrays {arrays}", commit,
                         " and ".join(seconds(x["seconds"]) for x in steps),
                         " and ".join(seconds(x["partition_seconds"]) for x in steps),
                         " and ".join(seconds(x["seconds"] - x["rebuild_seconds"]
                                              - x["evaluate_seconds"]) for x in steps)])
    out.append(table(["weak, 2 GPUs, steps", "commit", "step", "step's partition",
                      "step's take-over (step less rebuild and evaluate)"], rows))
    rows = []
    for name, _, _, steps_case, _ in cases:
        st = report(steps_case)["steps"]
        parts = st["essential_tree_steps"]
        rows.append([name.split(",")[0] + "," + name.split(",")[1],
                     seconds(st["essential_trees_seconds"])]
                    + [seconds(parts[k]) for k in ("own_tree", "shared_cells", "regions",
                                                   "select_sent", "exchange_sent",
                                                   "essential_tree")])
    out.append(table(["step, slowest rank", "essential trees", "own tree",
                      "shared cells", "regions", "selection", "exchange", "essential tree"],
                     rows))
    out.append(alternated(
        (before_merges, now), a,
        ["step", "step's rebuild", "essential trees", "own tree", "regions", "essential tree"],
        lambda st: [seconds(st["seconds"]), seconds(st["rebuild_seconds"]),
                    seconds(st["essential_trees_seconds"])]
        + [seconds(st["essential_tree_steps"][k]) for k in ("own_tree", "regions",
                                                             "essential_tree")]))
    reuse, kept = Archive("2026-11-30-two-h200-reuse"), "1470b2e"
    step_arrays, pooled_steps = Archive("2026-11-30-two-h200-step-arrays"), "55b5c53"
    rows = []
    for name, one, steps, strong in (
            ("weak, 2.5e7 uniform per GPU", "one-u25", "steps-u25-r1", False),
            ("weak, 2.5e7 Plummer per GPU", "one-p25", "steps-p25-r1", False),
            ("weak, 1e8 uniform per GPU", "one-u100", "steps-u100", False),
            ("weak, 1e8 Plummer per GPU", "one-p100", "steps-p100", False),
            ("strong, 1e8 uniform", "one-u100", "strong-steps-u100", True),
            ("strong, 5e7 uniform (leaf 248)", "one-u50", "steps-u25-r1", True)):
        r1 = report(one, pooled_steps, step_arrays)
        rs = report(steps, pooled_steps, step_arrays)
        t1, st = r1["timing"]["total_seconds"], rs["steps"]
        one_build = one_gpu_build(r1)
        rows.append([name, seconds(t1), seconds(st["seconds"]),
                     efficiency(t1 / st["seconds"] / (2 if strong else 1)),
                     f"{st['seconds'] / t1:.2f}x" if not strong else "-", seconds(one_build),
                     seconds(st["rebuild_seconds"]), f"{st['rebuild_seconds'] / one_build:.1f}x",
                     error(rs["errors"]["field"])] + provenance(rs, 1))
    one_start = table(["fp32, field error <= 1e-4, one start", "1 GPU: run", "2 GPUs: step",
                       "efficiency", "step / 1 GPU's run", "1 GPU: build", "step's rebuild",
                       "rebuild / 1 GPU's build", "field error"] + PROVENANCE, rows)
    out.append(alternated(
        (now, kept), reuse,
        ["step", "step's rebuild", "essential trees", "solver's build and the rest"],
        lambda st: [seconds(st["seconds"]), seconds(st["rebuild_seconds"]),
                    seconds(st["essential_trees_seconds"]),
                    seconds(st["rebuild_seconds"] - st["partition_seconds"]
                            - st["essential_trees_seconds"])]))
    out.append(alternated(
        (kept, pooled_steps), step_arrays,
        ["step", "step's rebuild", "step's evaluate",
         "step's take-over (step less rebuild and evaluate)"],
        lambda st: [seconds(st["seconds"]), seconds(st["rebuild_seconds"]),
                    seconds(st["evaluate_seconds"]),
                    seconds(st["seconds"] - st["rebuild_seconds"] - st["evaluate_seconds"])]))
    out.append(one_start)
    rows = []
    for dist, name, settings in (
            ("u", "uniform, leaf 248", ("o7-t0.84", "o7-t0.88", "o7-t0.92", "o6-t0.8", "o6-t0.85",
                                        "o8-t0.92", "o8-t0.96", "o9-t1.0")),
            ("p", "Plummer", ("o8-t0.85", "o8-t0.9", "o7-t0.85", "o7-t0.8", "o9-t0.92",
                              "o9-t0.96"))):
        for setting in settings:
            one = report(f"sweep-one-{dist}-{setting}")
            two = report(f"sweep-two-{dist}-{setting}")
            order, theta = setting[1:].split("-t")
            t1, t2 = one["timing"]["total_seconds"], two["steps"]["seconds"]
            rows.append([f"{name}, order {order}, theta {theta}", seconds(t1),
                         error(one["errors"]["field"]), seconds(t2),
                         error(two["errors"]["field"]), efficiency(t1 / t2)])
    out.append(table(["2.5e7 per GPU, fp32", "1 GPU: run", "its field error", "2 GPUs: step",
                      "its field error", "efficiency"], rows))
    rows = []
    for setting in ["o7-t0.84-l248"] + [f"o{o}-t{t}-l128" for o, thetas in (
            (4, "56"), (5, "56789"), (6, "6789"), (7, "6789")) for t in (f"0.{d}" for d in thetas)]:
        r = report(f"sweep50-{setting}", pooled_steps, step_arrays)
        c = r["configuration"]
        rows.append([f"order {c['order']}, theta {c['theta']}, leaf {c['leaf_size']}",
                     f"{50000000 / r['tree']['leaves']:.0f}", seconds(r["timing"]["total_seconds"]),
                     error(r["errors"]["field"])] + provenance(r, 2))
    out.append(table(["one GPU, 5e7 uniform, fp32", "particles per leaf", "run", "field error"]
                     + PROVENANCE, rows))
    rows = []
    for commit in ("fc2e07e", "54964cd"):
        cold = report("two-p25", commit, earlier)
        steps = report("steps-p25", commit, earlier)
        rows.append([commit, f"{per_own(cold, 'ghosts'):.3f}",
                     seconds(slowest(cold, "essential_trees_seconds")),
                     seconds(cold["timing"]["total_seconds"]),
                     seconds(steps["steps"]["seconds"]), cold["date"]])
    out.append(table(["commit", "ghosts per own particle", "cold build's essential trees",
                      "cold run", "step", "date"], rows))
    rows = []
    cpu_ranks = Archive("2026-11-30-two-cpu-ranks")
    for d in ("uniform", "plummer"):
        one = cpu_ranks.json(f"2core-{now}-one-rank-threads2-{d}.json")
        two = cpu_ranks.json(f"2core-{now}-two-ranks-threads1-{d}.json")
        t1, t2 = one["timing"]["total_seconds"], two["timing"]["total_seconds"]
        steps = two["steps"]
        rows.append([f"strong, 1e6 {d} double: 1 rank x 2 threads, 2 ranks x 1 thread",
                     seconds(t1), seconds(t2), efficiency(t1 / t2),
                     f"{per_own(two, 'ghosts'):.3f}",
                     f"{seconds(slowest(two, 'build_seconds'))} "
                     f"({seconds(slowest(two, 'partition_seconds'))}, "
                     f"{seconds(slowest(two, 'essential_trees_seconds'))})",
                     f"{seconds(steps['seconds'])} ({seconds(steps['rebuild_seconds'])}, "
                     f"{seconds(steps['evaluate_seconds'])})"] + provenance(two, 1))
    out.append(table(["case", "1 rank", "2 ranks", "efficiency", "ghosts per own particle",
                      "build (partition, essential trees)", "step (rebuild, evaluate)"]
                     + PROVENANCE, rows))
    return out


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
    out = [table(["1e6 uniform, field error", "order, theta, leaf", "time", "M2L", "P2P",
                  "field error"] + PROVENANCE, rows)]
    # float against double at 1e-4: the host's row tiles, before and after, alternated.
    a = Archive("2026-11-29-host-row-tiles")
    rows = []
    for build in ("aa8e2eb", "6a1b48b"):
        medians = {}
        for precision in ("float", "double"):
            reports = a.reports(f"2core-{build}-1e-4-{precision}-round*.json")
            medians[precision] = median_total(reports)
            stage = {s: statistics.median(r["timing"]["stage_seconds"][s] for r in reports)
                     for s in ("M2L", "M2M", "L2L", "P2P")}
            rows.append([f"{precision}, order 6, theta 0.7, leaf 64", seconds(medians[precision]),
                         ", ".join(seconds(stage[s]) for s in ("M2L", "M2M", "L2L", "P2P")),
                         error(reports[0]["errors"]["field"]),
                         f"{medians['double'] / medians['float']:.2f}x" if precision == "double"
                         else "-"] + provenance(reports[0], len(reports)))
    out.append(table(["1e6 uniform, <= 1e-4", "time", "M2L, M2M, L2L, P2P", "field error",
                      "double over float"] + PROVENANCE, rows))
    # thread scaling on the GPU machine's 16 host cores, two starts of the machine (a, b)
    a = Archive("2026-12-01-threads-16core")
    rows = []
    for start, precision, order, theta, leaf in [("a", "double", 6, 0.7, 64),
                                                 ("b", "double", 6, 0.7, 64),
                                                 ("b", "float", 6, 0.7, 64),
                                                 ("b", "double", 10, 0.7, 128)]:
        reports = {t: a.json(f"{start}-cpu16-{precision}-o{order}-threads{t}.json")
                   for t in (1, 2, 4, 8, 16)}
        times = {t: r["timing"]["total_seconds"] for t, r in reports.items()}
        one, all16 = reports[1], reports[16]
        stages = ", ".join(
            f"{s} {efficiency(one['timing']['stage_seconds'][s] / all16['timing']['stage_seconds'][s] / 16)}"
            for s in ("M2L", "P2P", "lists", "M2L matrices"))
        rows.append([start, f"1e6 uniform {precision}, order {order}, theta {theta:g}, leaf {leaf}"]
                    + [seconds(times[t]) for t in (1, 2, 4, 8, 16)]
                    + [efficiency(times[1] / times[16] / 16), stages,
                       error(all16["errors"]["field"])] + provenance(all16, 1))
    out.append(table(["start", "case", "1 thread", "2", "4", "8", "16", "efficiency at 16",
                      "stages' efficiency at 16", "field error"] + PROVENANCE, rows))
    # the host's own ceiling in the same starts: per-thread rates with every thread busy
    rows = []
    for start, prefix in [("a", "a-host-threads"), ("a", "a-host-again-threads"),
                          ("b", "b-host-threads")]:
        reports = {t: a.json(f"{prefix}{t}.json") for t in (1, 2, 4, 8, 16)}
        for loop, unit in [("fma", "Gflop/s"), ("triad", "GB/s")]:
            rates = {t: r[loop]["per_thread"] for t, r in reports.items()}
            rows.append([start, f"{loop}, {unit} per thread"]
                        + [f"{rates[t]:.1f}" for t in (1, 2, 4, 8, 16)]
                        + [f"{rates[16] / rates[1]:.2f}"] + provenance(reports[16], 1))
    out.append(table(["start", "loop", "1 thread", "2", "4", "8", "16", "16 over 1"]
                     + PROVENANCE, rows))
    # the benchmark at three sizes, two distributions and four accuracies, 16 host cores
    a = Archive("2026-11-29-cpu-benchmark-16core")
    rows = []
    for accuracy, precision in [("1e-4", "double"), ("1e-4", "float"), ("2e-6", "double"),
                                ("2e-6", "float"), ("5e-8", "double"), ("2e-10", "double")]:
        cells = []
        for n in ("1e5", "1e6", "1e7"):
            for distribution in ("uniform", "plummer"):
                r = a.json(f"cpu16-{n}-{distribution}-{accuracy}-{precision}.json")
                cells.append(f"{seconds(r['timing']['total_seconds'])} "
                             f"({error(r['errors']['field'])})")
        c = r["configuration"]
        rows.append([f"<= {accuracy}, {precision}",
                     f"{c['order']}, {c['theta']:g}, {c['leaf_size']}"] + cells
                    + [machine(r), r["date"], commit(r)])
    out.append(table(["field error asked", "order, theta, leaf", "1e5 uniform", "1e5 Plummer",
                      "1e6 uniform", "1e6 Plummer", "1e7 uniform", "1e7 Plummer", "machine",
                      "date", "commit"], rows))
    return out


def grouping_sort():
    """The M2L grouping's sort on the host, the whole list's radix sort (5a61c8d) against each
    block's counting sort (2a3ad98): on the 2-core CPU (medians of 3 reports, alternated) and
    on the 16 host cores of the GPU machine (one report of 3 warm runs each, alternated)."""
    a = Archive("2026-12-01-grouping-sort")
    rows = []

    def row(label, old, new):
        t0, t1 = median_total(old), median_total(new)
        m0 = statistics.median(r["timing"]["stage_seconds"]["M2L matrices"] for r in old)
        m1 = statistics.median(r["timing"]["stage_seconds"]["M2L matrices"] for r in new)
        rows.append([label, seconds(t0), seconds(t1), f"{t1 / t0:.2f}", seconds(m0), seconds(m1),
                     error(new[0]["errors"]["field"])] + provenance(new[0], len(new)))

    row("1e6 uniform double, order 6, theta 0.7, leaf 64, 2 threads",
        a.reports("2core-d6-old-r*.json"), a.reports("2core-d6-new-r*.json"))
    for precision in ("double", "float"):
        for threads in (1, 16):
            row(f"1e6 uniform {precision}, order 6, theta 0.7, leaf 64, {threads} "
                f"thread{'s' if threads > 1 else ''}",
                [a.json(f"16core-old-{precision}-o6-threads{threads}.json")],
                [a.json(f"16core-new-{precision}-o6-threads{threads}.json")])
    return [table(["case", "radix sort", "per block", "per block over radix", "M2L matrices, radix",
                   "M2L matrices, per block", "field error"] + PROVENANCE, rows)]


def gpu_ab():
    """The GPU's speed across the CPU issue's work: the code before it (9f04aaa) against the
    current one, alternated in one start of the H200 (medians of the rounds' reports, each
    the median of 5 warm runs); then, from an earlier start, the near field's time before
    free space's P2P kernel lost the periodic translation (5a61c8d)."""
    a = Archive("2026-12-01-gpu-ab")

    def case(r):
        c = r["configuration"]
        n = f"{c['n']:.0e}".replace("e+0", "e")
        return (f"{n} {c['distribution']} {c['precision']}, order {c['order']}, "
                f"theta {c['theta']:g}, leaf {c['leaf_size']}")

    def stage(reports, name):
        return statistics.median(r["timing"]["stage_seconds"][name] for r in reports)

    rows = []
    for key in ("u6f", "p6f", "u7f", "u24d", "e8u", "e8p"):
        before, now = a.reports(f"{key}-base-r*.json"), a.reports(f"{key}-head-r*.json")
        t0, t1 = median_total(before), median_total(now)
        rows.append([case(now[0]), seconds(t0), seconds(t1), f"{t1 / t0:.3f}",
                     f"{seconds(stage(before, 'P2P'))}, {seconds(stage(now, 'P2P'))}",
                     f"{seconds(stage(before, 'lists'))}, {seconds(stage(now, 'lists'))}",
                     error(now[0]["errors"]["field"])] + provenance(now[0], len(now)))
    out = [table(["case", "9f04aaa", "now", "now over 9f04aaa", "P2P, 9f04aaa and now",
                  "lists, 9f04aaa and now", "field error"] + PROVENANCE, rows)]
    rows = []
    for key in ("u6f", "p6f", "u24d", "e8u", "e8p"):
        before = a.reports(f"earlier-{key}-base-r*.json")
        prev = a.reports(f"earlier-{key}-prev-r*.json")
        rows.append([case(prev[0]), seconds(stage(before, "P2P")), seconds(stage(prev, "P2P")),
                     f"{stage(prev, 'P2P') / stage(before, 'P2P'):.3f}"]
                    + provenance(prev[0], len(prev)))
    out.append(table(["case", "P2P, 9f04aaa", "P2P, 5a61c8d", "5a61c8d over 9f04aaa"]
                     + PROVENANCE, rows))
    return out


def cpu_amd():
    """The CPU issue's accuracies on the 2-core CPU of the peer's kind (AMD EPYC), 1e6 uniform
    particles in double: the Intel Xeon's fastest settings, and the fastest candidate measured
    here that meets each error, against the peer's times of the issue."""
    a = Archive("2026-12-01-2core-amd-cpu")
    candidates = a.reports("[adgsh]-*.json")

    def setting(r):
        c = r["configuration"]
        return f"{c['order']}, {c['theta']:g}, {c['leaf_size']}, {r['m2l']['variant']}"

    rows = []
    for asked, peer, intel in [("1e-4", 5.38, "d-6.json"), ("2e-6", 5.87, "d-10.json"),
                               ("5e-8", 7.47, "d-14.json"), ("2e-10", 10.6, "d-15.json")]:
        tuned = a.json(intel)
        meeting = [r for r in candidates if r["errors"]["field"] <= float(asked)]
        best = min(meeting, key=lambda r: r["timing"]["total_seconds"])
        t_best = best["timing"]["total_seconds"]
        rows.append([f"<= {asked}", f"{peer:.2f} s", setting(tuned),
                     seconds(tuned["timing"]["total_seconds"]), error(tuned["errors"]["field"]),
                     setting(best), seconds(t_best), error(best["errors"]["field"]),
                     f"{t_best / peer:.2f}"] + provenance(best, 1))
    header = ["field error", "peer", "the Intel Xeon's setting", "time", "field error",
              "fastest here", "time", "field error", "over the peer"] + PROVENANCE
    return [table(header, rows)]


def periodic():
    def row(problem, free, boxed):
        """A periodic solve against the free-space one; errors '-' where unchecked."""
        t_free = free["timing"]["total_seconds"]
        t_boxed = boxed["timing"]["total_seconds"]
        m2l = boxed["interactions"]["m2l"] / free["interactions"]["m2l"]
        p2p = boxed["interactions"]["p2p"] / free["interactions"]["p2p"]
        c = boxed["configuration"]
        errors = [(r["errors"] or {}).get(kind) for r, kind in
                  [(free, "field"), (boxed, "field"), (boxed, "potential")]]
        return ([problem, f"{c['order']}, {c['theta']:g}, {c['leaf_size']}", seconds(t_free),
                 seconds(t_boxed), f"{t_boxed / t_free:.2f}", f"{m2l:.2f}, {p2p:.2f}"]
                + [error(e) for e in errors] + provenance(boxed, 1))

    a = Archive("2026-11-29-periodic")
    rows = []
    for host, problem, precision, asked in [("h200", "plummer", "float", "1e-4"),
                                            ("h200", "neutral", "float", "1e-4"),
                                            ("h200", "plummer", "double", "1e-10"),
                                            ("h200", "neutral", "double", "1e-10"),
                                            ("2core", "uniform", "float", "1e-4"),
                                            ("2core", "uniform", "double", "1e-10")]:
        rows.append(row(f"1e6 {problem}, {precision}, tolerance {asked}",
                        a.json(f"{host}-1e6-{problem}-{precision}-free.json"),
                        a.json(f"{host}-1e6-{problem}-{precision}-periodic.json")))
    a = Archive("2026-11-29-periodic-1e8")
    rows.append(row("1e8 uniform, float, tolerance 1e-4",
                    a.json("h200-1e8-uniform-float-free.json"),
                    a.json("h200-1e8-uniform-float-periodic.json")))
    header = ["problem", "order, theta, leaf", "free space", "periodic", "ratio",
              "M2L, P2P pairs ratio", "field error free", "field error periodic",
              "potential error periodic"] + PROVENANCE
    return [table(header, rows)]


def periodic_calibrated():
    a = Archive("2026-11-30-periodic-calibrated")

    rows = []
    for host, problem, name, precision, asked in [
            ("h200", "uniform", "uniform, net charge", "float", "1e-4"),
            ("h200", "neutral", "neutral", "float", "1e-4"),
            ("h200", "plummer", "Plummer", "float", "1e-4"),
            ("h200", "uniform", "uniform, net charge", "double", "1e-10"),
            ("h200", "neutral", "neutral", "double", "1e-10"),
            ("h200", "plummer", "Plummer", "double", "1e-10"),
            ("2core", "uniform", "uniform, net charge", "float", "1e-4")]:
        free, boxed, table_choice = (a.json(f"{host}-1e6-{problem}-{precision}-{kind}.json")
                                     for kind in ("free", "periodic", "periodic-table"))
        t_free, t_boxed, t_table = (r["timing"]["total_seconds"]
                                    for r in (free, boxed, table_choice))
        rows.append([f"1e6 {name}, {precision}, tolerance {asked}", seconds(t_free),
                     setting_and_error(free), seconds(t_boxed), setting_and_error(boxed),
                     f"{t_boxed / t_free:.2f}",
                     seconds(t_table), setting_and_error(table_choice), f"{t_table / t_free:.2f}",
                     seconds(boxed["calibration"]["seconds"])] + provenance(boxed, 1))
    header = ["problem", "free space, measured", "order, theta, leaf; field error",
              "periodic, measured", "order, theta, leaf; field error", "ratio",
              "periodic, the table's choice", "order, theta, leaf; field error", "ratio",
              "periodic calibration"] + PROVENANCE
    return [table(header, rows)]


def periodic_check():
    """The sampled check of a periodic box (Ewald's sum at 1000 strided particles) on the
    table's choice of a tolerance, 1e6 particles with a net charge on the H200."""
    a = Archive("2026-12-01-periodic-check")
    rows = []
    for name in ("u-float-1e-4", "u-float-1e-5", "p-float-1e-4", "u-double-1e-10"):
        r = a.json(f"{name}.json")
        c, t, check = r["configuration"], r["timing"], r["sampled_check"]
        checked = t["stage_seconds"]["sampled check"]
        rows.append([f"1e6 {c['distribution']} {c['precision']}", f"{c['tolerance']:g}",
                     f"{c['order']}, {c['theta']:g}, {c['leaf_size']}", error(check["field"]),
                     "missed: exit status 5" if check["tolerance_missed"] else "met",
                     seconds(t["total_seconds"] - checked), seconds(checked)]
                    + provenance(r, 1))
    return [table(["particles, with a net charge", "tolerance", "the table's order, theta, leaf",
                   "field error on 1000 samples", "outcome", "solve", "sampled check"]
                  + PROVENANCE, rows)]


def periodic_mutual():
    """The traversal of mutual pairs with images against the directed one (same settings)."""
    a = Archive("2026-11-30-periodic-mutual")

    def median(reports, value):
        return statistics.median(value(r) for r in reports)

    def lists(r):
        return r["timing"]["stage_seconds"]["lists"]

    def total(r):
        return r["timing"]["total_seconds"]

    def row(problem, free, directed, mutual):
        t_free, t_directed, t_mutual = (median(rs, total) for rs in (free, directed, mutual))
        c = mutual[0]["configuration"]
        return ([problem, f"{c['order']}, {c['theta']:g}, {c['leaf_size']}", seconds(t_free),
                 seconds(t_directed), seconds(t_mutual), f"{t_directed / t_free:.2f}",
                 f"{t_mutual / t_free:.2f}",
                 f"{seconds(median(directed, lists))} to {seconds(median(mutual, lists))}",
                 error((mutual[0]["errors"] or {}).get("field"))]
                + provenance(mutual[0], len(mutual)))

    rows = []
    for case, problem in [("u-f-table", "1e6 uniform, net charge, float"),
                          ("u-f-meas", "1e6 uniform, net charge, float, measured settings"),
                          ("n-f-table", "1e6 neutral, float"),
                          ("n-f-meas", "1e6 neutral, float, measured settings"),
                          ("p-f-table", "1e6 Plummer, float"),
                          ("n-d-table", "1e6 neutral, double"),
                          ("n-d-meas", "1e6 neutral, double, measured settings")]:
        rows.append(row(problem, a.reports(f"{case}-free-*.json"),
                        a.reports(f"{case}-per-head-*.json"), a.reports(f"{case}-per-new-*.json")))
    rows.append(row("1e8 uniform, net charge, float", a.reports("u1e8-free.json"),
                    a.reports("u1e8-per-head.json"), a.reports("u1e8-per-new.json")))
    for precision, problem in [("f", "1e6 uniform, net charge, float"),
                               ("d", "1e6 uniform, net charge, double")]:
        rows.append(row(problem, a.reports(f"{precision}-free*.json"),
                        a.reports(f"{precision}-head*.json"), a.reports(f"{precision}-new*.json")))
    header = ["problem", "order, theta, leaf", "free space", "periodic, directed",
              "periodic, mutual", "ratio, directed", "ratio, mutual", "lists", "field error"
              ] + PROVENANCE
    return [table(header, rows)]


def error_by_size():
    a = Archive("2026-11-29-error-by-size")
    rows = []
    for order, theta in [("5", "0.8"), ("7", "0.7"), ("10", "0.75")]:
        for d in ("uniform", "plummer", "ellipsoid"):
            small = a.json(f"2core-float-o{order}-t{theta}-{d}-20000.json")
            large = a.json(f"2core-float-o{order}-t{theta}-{d}-1000000.json")
            e_small, e_large = small["errors"]["field"], large["errors"]["field"]
            rows.append([f"float, order {order}, theta {theta}, leaf "
                         f"{large['configuration']['leaf_size']}", d, error(e_small),
                         error(e_large), f"{e_large / e_small:.2f}"] + provenance(large, 1))
    out = [table(["setting", "particles", "2e4 (every particle)", "1e6 (3000 sampled)",
                  "1e6 over 2e4"] + PROVENANCE, rows)]
    rows = []
    for d in ("uniform", "plummer", "ellipsoid"):
        errors = [a.json(f"2core-double-o23-t0.5-leaf64-{d}-20000-seed{s}.json")["errors"]["field"]
                  for s in (1, 2)]
        r = a.json(f"2core-double-o23-t0.5-leaf64-{d}-20000-seed1.json")
        rows.append(["double, order 23, theta 0.5, leaf 64, 2e4 (every particle)", d,
                     f"{error(errors[0])}, {error(errors[1])}"] + provenance(r, 1))
    out.append(table(["setting", "particles", "field error, seeds 1 and 2"] + PROVENANCE, rows))
    return out


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
            ("Accuracy", tolerance_benchmark_tables), ("Accuracy", measured_tolerance_tables),
            ("Accuracy", calibrate_fronts_tables), ("Accuracy", bulk_cap_tables),
            ("Accuracy", tolerance_1e4_cpu_tables),
            ("Accuracy", error_by_size), ("Accuracy", distributed_calibrated),
            ("Several GPUs", several_gpus), ("CPU", cpu), ("CPU", grouping_sort), ("CPU", cpu_amd), ("CPU", gpu_ab), ("Periodic boundaries", periodic),
            ("Periodic boundaries", periodic_calibrated), ("Periodic boundaries", periodic_mutual),
            ("Periodic boundaries", periodic_check),
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
