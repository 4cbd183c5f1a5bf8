#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Writes the committed portability report, perf/portability/ (report.md and its PNGs), from two
# sweeps (perf/sweep.py) and, when given, the same two builds' leaf-size tunings
# (perf/tune_leaf_size.py):
#
#   perf/make_portability_report.sh SWEEP-A.json SWEEP-B.json [TUNE-A.json TUNE-B.json]
#   perf/make_portability_report.sh     # the committed report, from the archives below
#
# Without arguments it takes the sweeps and tunings that perf/RESULTS.md cites, from
# perf/results/2026-11-28-portability-sweeps.tar.gz and
# perf/results/2026-11-22-leaf-size-tunings.tar.gz (read into a temporary folder).
# A is the GPU build's (CUDA on the H200), B the CPU build's (OpenMP on the 2-core machine).
# The report is written into a new folder first and replaces the old report.md and PNGs only
# when it is complete, so that a bad input file leaves the committed report as it was and no
# plot of an earlier report stays beside the new one. The Python is $KFMM_PYTHON, else the
# first python3 on PATH that imports matplotlib (a pyenv or virtual environment's python3 may
# come before the system's one that has it).
set -euo pipefail

usage="usage: $0 [SWEEP-A.json SWEEP-B.json [TUNE-A.json TUNE-B.json]]"
if [[ $# -ne 0 && $# -ne 2 && $# -ne 4 ]]; then
  echo "$usage" >&2
  exit 2
fi

perf=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out="$perf/portability"

if [[ $# -eq 0 ]]; then
  inputs=$(mktemp -d)
  trap 'rm -rf "$inputs"' EXIT
  tar xzf "$perf/results/2026-11-28-portability-sweeps.tar.gz" -C "$inputs"
  tar xzf "$perf/results/2026-11-22-leaf-size-tunings.tar.gz" -C "$inputs"
  set -- "$inputs/2026-11-28-portability/h200-sweep-cuda.json" \
    "$inputs/2026-11-28-portability/2core-sweep-openmp.json" \
    "$inputs/2026-11-22-leaf-size-tunings/2026-11-22-h200-tune-leaf-size-cuda.json" \
    "$inputs/2026-11-22-leaf-size-tunings/2026-11-22-2core-tune-leaf-size-openmp.json"
fi

python=${KFMM_PYTHON:-}
if [[ -z $python ]]; then
  IFS=: read -r -a folders <<< "$PATH"
  for folder in "${folders[@]}"; do
    if [[ -x $folder/python3 ]] && "$folder/python3" -c "import matplotlib" 2> /dev/null; then
      python=$folder/python3
      break
    fi
  done
fi
if [[ -z $python ]]; then
  echo "$0: no python3 on PATH imports matplotlib (Debian: apt-get install" \
       "python3-matplotlib; or set KFMM_PYTHON)" >&2
  exit 2
fi

tunings=()
if [[ $# -eq 4 ]]; then
  tunings=(--leaf-tuning "$3" "$4")
fi

new=$(mktemp -d "$perf/portability.new.XXXXXX")
trap 'rm -rf "$new" ${inputs:+"$inputs"}' EXIT
"$python" "$perf/portability_report.py" "$1" "$2" --out "$new" ${tunings[@]+"${tunings[@]}"}
mkdir -p "$out"
rm -f "$out"/report.md "$out"/*.png
mv "$new"/report.md "$new"/*.png "$out"/
echo "wrote $out/report.md"
