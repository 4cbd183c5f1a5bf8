#!/usr/bin/env bash
# On the GPU machine, in one command: set up the CUDA dependencies from a bundle folder made
# on a CPU machine (backends/setup-deps.sh bundle DIR), build the `cuda` preset, run the whole
# test suite on the GPU, then the benchmarks. Logs go to LOG_DIR.
#
#   backends/cuda/build-test-bench.sh BUNDLE_DIR LOG_DIR [--sanitize]
#
# --sanitize also runs compute-sanitizer (memcheck, racecheck) over the kernel tests.
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
bundle=$1 logs=$2 sanitize=${3:-}
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
step configure cmake --preset cuda -DCMAKE_PREFIX_PATH="$HOME/.cache/kfmm/catch2/usr" || exit 1
step build cmake --build --preset cuda || exit 1
step test ctest --preset cuda -j 4
step bench build/cuda/perf/kfmm_bench_direct --repeat 5
if [ "$sanitize" = --sanitize ]; then
  for tool in memcheck racecheck; do
    step "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 1 \
      build/cuda/tests/kfmm_test_kernels
  done
fi
exit $status
