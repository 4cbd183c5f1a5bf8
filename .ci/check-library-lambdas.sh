#!/usr/bin/env bash
# The library's kernels are named functors, never KOKKOS_LAMBDA (docs/ARCHITECTURE.md,
# "Conventions"): nvcc implements an extended __host__ __device__ lambda with helper state
# private to each translation unit, and a function template holding one that is instantiated
# in two units (kfmm::precompiled and the caller's file) can call through the other unit's
# null pointer on a host execution space. Tests, benchmarks and the program may use lambdas.
set -euo pipefail
cd "$(dirname "$0")/.."
if found=$(grep -rn -E 'KOKKOS_(CLASS_)?LAMBDA' src/); then
  echo "ci: KOKKOS_LAMBDA in the library (write a named functor instead):" >&2
  echo "$found" >&2
  exit 1
fi
echo "ci: no KOKKOS_LAMBDA in src/"
