#!/usr/bin/env bash
# The library's kernels are named functors, never KOKKOS_LAMBDA (docs/ARCHITECTURE.md,
# "Conventions"): nvcc implements an extended __host__ __device__ lambda with helper state
# private to each translation unit, and a function template holding one that is instantiated
# in two units (kfmm::precompiled and the caller's file) can call through the other unit's
# null pointer (seen on host execution spaces, and on CUDA when a test header's function
# template was instantiated in two test files). The tests' shared headers follow the library;
# test files, benchmarks and the program may use lambdas.
set -euo pipefail
cd "$(dirname "$0")/.."
if found=$(grep -rn -E 'KOKKOS_(CLASS_)?LAMBDA' src/ tests/*.hpp); then
  echo "ci: KOKKOS_LAMBDA in the library or a test header (write a named functor instead):" >&2
  echo "$found" >&2
  exit 1
fi
echo "ci: no KOKKOS_LAMBDA in src/ and tests/*.hpp"
