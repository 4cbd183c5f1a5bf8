#!/usr/bin/env bash
# CI job: kfmm built and smoke-tested against a modern Kokkos, so that a use of an API that
# Kokkos 4 removed, or deprecated and so left out with deprecated code off, fails CI even where
# .ci/check-kokkos-api.sh has no rule for it. The rest of CI builds against Kokkos 3.4.1, the
# oldest Kokkos kfmm supports; users are on 4.x and 5.x.
#
#   .ci/modern-kokkos.sh
#
# Kokkos and Kokkos Kernels 4.6.01 come from ../shared/deps/kokkos-and-kernels-4.6.01.tar.gz
# (relative to the repository root; see the README beside it), which developers' machines and
# CI have and users' machines do not: without it the job says it is skipped and succeeds.
#
# 1. Kokkos 4.6.01 (Serial + OpenMP, C++20, Release, deprecated code 4 off, which is Kokkos
#    5's default) and Kokkos Kernels 4.6.01 (no explicit instantiation: kfmm uses only its
#    header-only batched GEMM) are built into $KFMM_DEPS_DIR/kokkos-4.6.01 (default
#    ~/.cache/kfmm/kokkos-4.6.01). Each build leaves a stamp recording the tarball's checksum
#    and its flags, and is skipped while both are unchanged.
# 2. kfmm is configured in build/kokkos-4.6 with C++20 (benchmarks off; MPI on, as in the main
#    build, so that the program compiles the distributed solver and with it kfmm::Fmm), with a
#    use of anything deprecated an error (what Kokkos deprecates, its next major release
#    removes), and only what the tests below need is built, compiler output shown: the
#    precompiled library (kfmm::evaluate for Serial and OpenMP in float and double), the kfmm
#    program and the test executable `tree` (octree, interaction lists, M2L grouping, target
#    groups).
# 3. The tests: the installed package used by a separate project (header-only and through
#    kfmm::precompiled), `tree`, and the program's JSON report, its target points checked
#    against the direct sum, and its run on several MPI ranks against one rank's. The solver's
#    test executable `kfmm_test_solver` (about 6 minutes of compiling) is left to the Kokkos
#    3.4 build; the program's runs cover the solver end to end here.
#
# Each step prints its time. KFMM_BUILD_JOBS limits parallel jobs (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."

readonly KOKKOS_VERSION=4.6.01
readonly tarball=../shared/deps/kokkos-and-kernels-$KOKKOS_VERSION.tar.gz
say() { echo "modern-kokkos: $*"; }

if [ ! -f "$tarball" ]; then
  say "skipped: no $tarball (only developers' and CI machines have it)"
  exit 0
fi

deps=${KFMM_DEPS_DIR:-$HOME/.cache/kfmm}
prefix=$deps/kokkos-$KOKKOS_VERSION
work=$deps/build/kokkos-$KOKKOS_VERSION
build=build/kokkos-4.6
jobs=${KFMM_BUILD_JOBS:-$(nproc)}
checksum=$(sha256sum "$tarball" | cut -d' ' -f1)

kokkos_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20
              -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ENABLE_SERIAL=ON
              -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_DEPRECATED_CODE_4=OFF
              -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF
              -DKokkos_ENABLE_BENCHMARKS=OFF)
kernels_flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix"
               -DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF
               -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF
               -DKokkosKernels_ENABLE_PERFTESTS=OFF)

# logged LOG COMMAND...: COMMAND's output goes to LOG, and its end to the terminal if it fails.
logged() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    say "failed: $* (whole output in $log)" >&2
    return 1
  fi
}

# build_package NAME SOURCE STAMP BASIS FLAGS...: configures, builds and installs SOURCE (a
# folder of the unpacked tarball) into $prefix with FLAGS, unless the file STAMP there records
# this BASIS (what the build depends on besides its flags) and these FLAGS.
build_package() {
  local name=$1 source=$2 stamp=$prefix/$3 basis=$4; shift 4
  local recipe
  recipe=$(printf '%s\n' "$basis" "$@")
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
    say "$name $KOKKOS_VERSION already in $prefix"
    return 0
  fi
  local start=$SECONDS
  # A Kokkos built anew starts from an empty prefix (and Kokkos Kernels is rebuilt after it).
  if [ "$source" = kokkos ]; then
    rm -rf "$prefix" && mkdir -p "$prefix"
  fi
  rm -f "$stamp"
  rm -rf "$work/$source-build"
  logged "$work/$source.log" cmake -S "$work/src/$source" -B "$work/$source-build" -G Ninja "$@"
  logged "$work/$source-build.log" cmake --build "$work/$source-build" -j "$jobs"
  logged "$work/$source-install.log" cmake --install "$work/$source-build"
  printf '%s\n' "$recipe" >"$stamp"
  say "$name $KOKKOS_VERSION built into $prefix in $((SECONDS - start)) s"
}

# The sources, unpacked again when the tarball changes; a new tarball also rebuilds both
# packages (their stamps record its checksum).
if [ ! -f "$work/src/.done" ] || [ "$(cat "$work/src/.done")" != "$checksum" ]; then
  rm -rf "$work/src" && mkdir -p "$work/src"
  tar xzf "$tarball" -C "$work/src"
  printf '%s\n' "$checksum" >"$work/src/.done"
fi
build_package Kokkos kokkos .kokkos-done "$checksum" "${kokkos_flags[@]}"
# Kokkos Kernels is built against that Kokkos: a Kokkos built otherwise rebuilds it too.
build_package "Kokkos Kernels" kokkos-kernels .kokkoskernels-done \
              "$(cat "$prefix/.kokkos-done")" "${kernels_flags[@]}"

start=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 \
      -DCMAKE_CXX_FLAGS=-Werror=deprecated-declarations -DKokkos_ROOT="$prefix" \
      -DKFMM_ENABLE_BENCHMARKS=OFF >/dev/null
say "kfmm configured in $build in $((SECONDS - start)) s"

# The library and the program first: the installed-package tests install them.
targets=(kfmm_app)
if grep -q '^KFMM_ENABLE_PRECOMPILED:BOOL=ON' "$build/CMakeCache.txt"; then
  targets=(kfmm_precompiled kfmm_app)
fi
start=$SECONDS
cmake --build "$build" -j "$jobs" --target "${targets[@]}"
say "kfmm's ${targets[*]} built in $((SECONDS - start)) s"
start=$SECONDS
cmake --build "$build" -j "$jobs" --target kfmm_test_tree
say "kfmm's test tree built in $((SECONDS - start)) s"

start=$SECONDS
ctest --test-dir "$build" --output-on-failure --no-tests=error \
      -R '^(install_consumer|install_consumer_precompiled|tree|cli_json|cli_targets|cli_mpi_compare)$'
say "tests passed in $((SECONDS - start)) s"
