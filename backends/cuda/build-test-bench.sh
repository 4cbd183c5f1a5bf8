#!/usr/bin/env bash
# On the GPU machine, in one command: set up the CUDA dependencies from a bundle folder made
# on a CPU machine (backends/setup-deps.sh bundle DIR), build the `cuda` preset, then run the
# chosen phases. One log per step goes to LOG_DIR.
#
#   backends/cuda/build-test-bench.sh BUNDLE_DIR LOG_DIR [PHASE...]
#
# Phases (default: test bench):
#   test      the whole test suite (ctest), every execution space including CUDA
#   sanitize  compute-sanitizer memcheck and racecheck over the kernel tests, the onesweep
#             sort tests, the adversarial edge cases and range errors, and the program on a
#             small problem (tree, sort, lists and every FMM/treecode kernel, unfenced: the
#             far field on its own stream)
#   bench     the benchmarks (all-pairs, sort, tree, M2L variants) and the 1e6-particle runs
#             recorded in perf/RESULTS.md
#   targets   the GPU pipeline's target cases (1e6 and 1e8, uniform and Plummer, fp32 and
#             fp64) at the settings perf/RESULTS.md found, unfenced, each run with the far
#             field beside the near field and then on one instance; the all-pairs rate
#   stress    the stress test's long mode: random particle sets against the direct sum
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
bundle=$1 logs=$2
shift 2
phases=${*:-test bench}
has() { [[ " $phases " == *" $1 "* ]]; }
cd "$(dirname "$0")/../.."
mkdir -p "$logs"
status=0
step() { # step NAME COMMAND...: run, log to LOG_DIR/NAME.log, remember a failure
  local name=$1; shift
  echo "=== $name: $*"
  local start=$SECONDS
  "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - start)) s"
  tail -n 25 "$logs/$name.log"
  [ $rc -eq 0 ] || status=1
  return $rc
}

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv > "$logs/gpu.txt" 2>&1
cat "$logs/gpu.txt"
step deps backends/setup-deps.sh cuda --from "$bundle" || exit 1
# The files apart (KFMM_UNITY_BUILD off): on this machine's many cores they compile side by side,
# sooner than one translation unit per executable (docs/BUILDING.md, "The tests' build").
step configure cmake --preset cuda -DCMAKE_PREFIX_PATH="$HOME/.cache/kfmm/catch2/usr" \
  -DKFMM_UNITY_BUILD=OFF || exit 1
step build cmake --build --preset cuda || exit 1
has test && step test ctest --preset cuda -j 4
if has bench; then
  # Benchmarks: all-pairs, sort, tree + lists, then the whole solver on 1e6 particles at the
  # accuracies perf/RESULTS.md records (float ~1e-4 field error, double ~1e-8).
  step bench-direct build/cuda/perf/kfmm_bench_direct --repeat 5
  step bench-sort build/cuda/perf/kfmm_bench_sort --repeat 5 --host-max 10000000
  step bench-tree build/cuda/perf/kfmm_bench_tree --repeat 3 --backends cuda
  step bench-m2l build/cuda/perf/kfmm_bench_m2l --repeat 3
  for distribution in uniform plummer; do
    step "fmm-float-$distribution" build/cuda/apps/kfmm --n 1000000 --distribution "$distribution" \
      --precision float --order 4 --repeat 5 --check 2000 --json "$logs/fmm-float-$distribution.json"
    step "fmm-double-$distribution" build/cuda/apps/kfmm --n 1000000 --distribution "$distribution" \
      --precision double --order 10 --theta 0.4 --repeat 3 --check 2000 \
      --json "$logs/fmm-double-$distribution.json"
  done
fi
if has targets; then
  kfmm=build/cuda/apps/kfmm
  target() { # target NAME ARGS...: the case with the side instance, then on one instance
    local name=$1; shift
    step "target-$name" "$kfmm" "$@" --no-stage-times --quiet --json "$logs/target-$name.json"
    step "target-$name-one-instance" "$kfmm" "$@" --no-stage-times --no-concurrent-far-field \
      --quiet --json "$logs/target-$name-one-instance.json"
  }
  target u1e6 --n 1000000 --precision float --distribution uniform --order 7 --theta 0.84 \
    --leaf-size 248 --repeat 20 --check 2000
  target p1e6 --n 1000000 --precision float --distribution plummer --repeat 20 --check 2000
  target d1e6 --n 1000000 --precision double --distribution uniform --order 24 --theta 0.7 \
    --leaf-size 512 --repeat 5 --check 2000
  target u1e8 --n 100000000 --precision float --distribution uniform --order 7 --theta 0.85 \
    --repeat 3 --check 200
  target p1e8 --n 100000000 --precision float --distribution plummer --order 8 --theta 0.85 \
    --repeat 3 --check 200
  step target-direct build/cuda/perf/kfmm_bench_direct --repeat 5
fi
# compute-sanitizer exits non-zero on racecheck warnings too; Kokkos 3.4's own CUDA
# reductions and scans produce such warnings (warp-synchronous shared memory), so a run
# passes when the tool's summary reports 0 errors, and the log keeps every warning.
sanitize() { # sanitize TOOL COMMAND...
  local tool=$1; shift
  compute-sanitizer --tool "$tool" "$@" > /tmp/kfmm-sanitize.log 2>&1
  cat /tmp/kfmm-sanitize.log
  grep -Eq "RACECHECK SUMMARY: .*\(0 errors|ERROR SUMMARY: 0 errors" /tmp/kfmm-sanitize.log
}
if has sanitize; then
  for tool in memcheck racecheck; do
    step "sanitize-$tool-kernels" sanitize "$tool" build/cuda/tests/kfmm_test_kernels
    step "sanitize-$tool-sort" sanitize "$tool" build/cuda/tests/kfmm_test_sort "[onesweep]"
    step "sanitize-$tool-adversarial" sanitize "$tool" \
      build/cuda/tests/kfmm_test_solver --filenames-as-tags \
        "[#tstAdversarial][edge],[#tstAdversarial][validation]"
    for method in fmm treecode; do
      step "sanitize-$tool-$method" sanitize "$tool" \
        build/cuda/apps/kfmm --n 20000 --method "$method" --check 100 --no-stage-times
    done
  done
fi
has stress && step stress build/cuda/tests/kfmm_test_solver "[stress-long]"
exit $status
