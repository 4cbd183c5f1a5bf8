#!/usr/bin/env bash
# Sets up everything kfmm builds against, for one backend, under one cache folder:
#   Kokkos + Kokkos Kernels 3.4.1 (from Debian's trilinos source package), Catch2, OpenMPI,
#   matplotlib (for perf/portability_report.py).
#
#   backends/setup-deps.sh openmp            CPU machine: OpenMP + Serial
#   backends/setup-deps.sh cuda              CUDA (sm_90) + OpenMP + Serial, with the CUDA 13
#                                            fixes of backends/cuda/kokkos-3.4.1-cuda13.patch
#   (every backend gets the GCC 13+ fix of backends/kokkos-3.4.1-gcc13.patch)
#   backends/setup-deps.sh bundle DIR        write the sources and the Catch2 package into DIR,
#                                            for a machine that reaches no package archive
#   backends/setup-deps.sh cuda --from DIR   build from such a DIR instead of the archive
#
# Idempotent: each step leaves a stamp and is skipped when done. The cache folder is
# $KFMM_DEPS_DIR (default ~/.cache/kfmm); the Kokkos install for backend B ends up in
# $KFMM_DEPS_DIR/B, which is what CMakePresets.json points Kokkos_ROOT at.
# Users with their own Kokkos 3.4+ skip this script and pass -DKokkos_ROOT=... instead.
set -euo pipefail

readonly KOKKOS_VERSION=3.4.1
readonly TRILINOS_VERSION=13.2.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
deps=${KFMM_DEPS_DIR:-$HOME/.cache/kfmm}
jobs=${KFMM_BUILD_JOBS:-$(nproc)}
sources_tarball="$deps/src/kokkos-sources-$KOKKOS_VERSION.tar.gz"

say() { echo "kfmm-deps: $*" >&2; }
die() { say "error: $*"; exit 1; }

usage() {
  sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

have_apt() { command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; }

# System packages: compilers' companions from Debian, and matplotlib for the portability
# report (perf/portability_report.py and its test). Only what is missing is installed.
install_system_packages() {
  local wanted=(libopenmpi-dev openmpi-bin libcatch2-dev ninja-build cmake python3-matplotlib)
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  have_apt || die "missing packages ${missing[*]} and no apt-get as root to install them"
  bash "$here/apt-sources.sh"
  say "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# Kokkos and Kokkos Kernels sources, cut out of Debian's checksum-verified trilinos source
# package into one small tarball (also what a bundle carries).
fetch_sources() {
  [ -f "$sources_tarball" ] && return 0
  have_apt || die "no Kokkos sources at $sources_tarball and no apt-get to fetch them"
  bash "$here/apt-sources.sh"
  local work="$deps/src/trilinos"
  mkdir -p "$work"
  say "fetching Debian's trilinos $TRILINOS_VERSION source package (~166 MB, once)"
  (cd "$work" && apt-get source --download-only -qq -o APT::Sandbox::User=root trilinos)
  local orig
  orig=$(ls "$work"/trilinos_"$TRILINOS_VERSION".orig.tar.* 2>/dev/null | head -n 1)
  [ -n "$orig" ] || die "trilinos $TRILINOS_VERSION source package not found in the archive"
  local top
  top=$( (tar tf "$orig" || true) | sed -n '1s#/.*##p')
  local cut="$deps/src/cut"
  rm -rf "$cut" && mkdir -p "$cut"
  tar xf "$orig" -C "$cut" "$top/packages/kokkos" "$top/packages/kokkos-kernels"
  tar czf "$sources_tarball.tmp" -C "$cut/$top/packages" kokkos kokkos-kernels
  mv "$sources_tarball.tmp" "$sources_tarball"
  rm -rf "$cut" "$work"
}

catch2_deb() {
  ls "$deps"/src/libcatch2-dev_*.deb 2>/dev/null | head -n 1
}

make_bundle() {
  local out=$1
  install_system_packages
  fetch_sources
  if [ -z "$(catch2_deb)" ]; then
    (cd "$deps/src" && apt-get download -qq libcatch2-dev)
  fi
  mkdir -p "$out"
  cp "$sources_tarball" "$(catch2_deb)" "$out/"
  say "bundle written to $out ($(du -sh "$out" | cut -f1))"
}

# On a machine without apt: take sources and Catch2 from a bundle folder.
use_bundle() {
  local from=$1
  [ -d "$from" ] || die "bundle folder '$from' does not exist"
  mkdir -p "$deps/src"
  [ -f "$sources_tarball" ] || cp "$from/$(basename "$sources_tarball")" "$sources_tarball"
  local deb
  deb=$(ls "$from"/libcatch2-dev_*.deb 2>/dev/null | head -n 1)
  [ -n "$deb" ] || die "no libcatch2-dev .deb in '$from'"
  if [ ! -f "$deps/catch2/.done" ]; then
    rm -rf "$deps/catch2" && mkdir -p "$deps/catch2"
    dpkg-deb -x "$deb" "$deps/catch2"
    touch "$deps/catch2/.done"
  fi
  say "Catch2 unpacked under $deps/catch2/usr (add it to CMAKE_PREFIX_PATH)"
}

# apply_patch DIR PATCH STRIP: PATCH applied in DIR, with patch(1) or else git.
apply_patch() {
  if command -v patch >/dev/null; then
    patch -s -p"$3" --batch -d "$1" < "$2"
  else
    (cd "$1" && git apply -p"$3" "$2")
  fi
}

# The sources, patched: the host-compiler fixes (GCC 13 and later) for every backend, and the
# CUDA 13 fixes for cuda. The stamp records the patches' checksums, so that sources unpacked
# before a patch was added are unpacked again (a set-up that failed on a newer compiler then
# succeeds once rerun); a Kokkos already built and installed is not rebuilt for that.
unpack_sources() {
  local backend=$1 dir="$deps/build/$1/src"
  local -a patches=("$here/kokkos-3.4.1-gcc13.patch")
  [ "$backend" = cuda ] && patches+=("$here/cuda/kokkos-3.4.1-cuda13.patch")
  local stamp
  stamp=$(cd "$here" && sha256sum "${patches[@]#"$here"/}")
  [ -f "$dir/.done" ] && [ "$(cat "$dir/.done")" = "$stamp" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  tar xzf "$sources_tarball" -C "$dir"
  # Paths a/kokkos/..., a/kokkos-kernels/... from the folder holding both.
  apply_patch "$dir" "$here/kokkos-3.4.1-gcc13.patch" 1
  if [ "$backend" = cuda ]; then
    # Paths a/kokkos/... from inside kokkos/ (-p2), as the patch was first written.
    apply_patch "$dir/kokkos" "$here/cuda/kokkos-3.4.1-cuda13.patch" 2
  fi
  printf '%s\n' "$stamp" > "$dir/.done"
}

build_kokkos() {
  local backend=$1 prefix="$deps/$1" src="$deps/build/$1/src"
  [ -f "$prefix/.kokkos-done" ] && return 0
  local -a flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17
                  -DCMAKE_INSTALL_PREFIX="$prefix" -DKokkos_ENABLE_SERIAL=ON
                  -DKokkos_ENABLE_OPENMP=ON
                  -DKokkos_ENABLE_TESTS=OFF -DKokkos_ENABLE_EXAMPLES=OFF)
  if [ "$backend" = cuda ]; then
    command -v nvcc >/dev/null || die "the cuda backend needs nvcc on PATH"
    flags+=(-DCMAKE_CXX_COMPILER="$src/kokkos/bin/nvcc_wrapper" -DKokkos_ENABLE_CUDA=ON
            -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_HOPPER90=ON)
  fi
  say "building Kokkos $KOKKOS_VERSION for $backend into $prefix"
  cmake -S "$src/kokkos" -B "$deps/build/$backend/kokkos" -G Ninja "${flags[@]}" >/dev/null
  cmake --build "$deps/build/$backend/kokkos" -j "$jobs" >/dev/null
  cmake --install "$deps/build/$backend/kokkos" >/dev/null
  if [ "$backend" = cuda ]; then
    # Consumers compile with the patched wrapper (its default arch is sm_90).
    install -m 755 "$src/kokkos/bin/nvcc_wrapper" "$prefix/bin/nvcc_wrapper"
  fi
  touch "$prefix/.kokkos-done"
}

build_kokkos_kernels() {
  local backend=$1 prefix="$deps/$1" src="$deps/build/$1/src"
  [ -f "$prefix/.kokkoskernels-done" ] && return 0
  local -a flags=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix"
                  -DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF
                  -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF)
  if [ "$backend" = cuda ]; then
    # CUDA 12 removed the legacy cuSPARSE API that Kokkos Kernels 3.4 calls.
    flags+=(-DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper"
            -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF -DKokkosKernels_ENABLE_TPL_CUBLAS=OFF)
  fi
  say "building Kokkos Kernels $KOKKOS_VERSION for $backend into $prefix"
  cmake -S "$src/kokkos-kernels" -B "$deps/build/$backend/kokkos-kernels" -G Ninja \
        "${flags[@]}" >/dev/null
  cmake --build "$deps/build/$backend/kokkos-kernels" -j "$jobs" >/dev/null
  cmake --install "$deps/build/$backend/kokkos-kernels" >/dev/null
  touch "$prefix/.kokkoskernels-done"
}

main() {
  [ $# -ge 1 ] || usage
  local what=$1; shift
  case "$what" in
    bundle)
      [ $# -eq 1 ] || usage
      make_bundle "$1" ;;
    openmp|cuda)
      mkdir -p "$deps/src"
      if [ "${1:-}" = --from ]; then
        [ $# -eq 2 ] || usage
        use_bundle "$2"
      elif [ $# -eq 0 ]; then
        install_system_packages
        fetch_sources
      else
        usage
      fi
      unpack_sources "$what"
      build_kokkos "$what"
      build_kokkos_kernels "$what"
      say "ready: Kokkos_ROOT=$deps/$what" ;;
    -h|--help) usage ;;
    *) usage ;;
  esac
}

main "$@"
