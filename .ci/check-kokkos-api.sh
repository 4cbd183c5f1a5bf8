#!/usr/bin/env bash
# Fails when kfmm's code uses a Kokkos name that a newer Kokkos no longer has, so that users
# with Kokkos 4 or 5 (deprecated code off) can build what we build and test against 3.4.
#
#   .ci/check-kokkos-api.sh [DIR|FILE...]  check these (default: src apps perf tests examples
#                                          backends), paths relative to the repository root
#   .ci/check-kokkos-api.sh --self-test    check that every rule catches what it is for
#
# Only names whose removal is confirmed are listed, each with where it went. Comments (from //
# to the end of the line) are not checked, so code may name what it avoids.
set -euo pipefail
cd "$(dirname "$0")/.."

regexes=() instead=() removed=() allowed=() samples=()
# rule REGEX INSTEAD REMOVED ALLOWED SAMPLE: a use of REGEX (grep -E) is an error outside the
# files in ALLOWED (space-separated); SAMPLE is a line the rule must catch (--self-test).
rule() {
  regexes+=("$1") instead+=("$2") removed+=("$3") allowed+=("$4") samples+=("$5")
}

# Kokkos 4.0 made ExecutionSpace::concurrency() a non-static member function (kokkos#5655,
# listed under "Incompatibilities" in the 4.0 change log); the static form is kept only with
# deprecated code on. An instance call works with 3.4 too (a static member called through an
# object).
rule '[A-Za-z_][A-Za-z0-9_]*(<[^<>]*>)?::concurrency[[:space:]]*\(' \
     'an instance call, Space().concurrency() or space.concurrency()' \
     'Kokkos 4.0 (static ExecutionSpace::concurrency(), kokkos#5655)' '' \
     'int n = Kokkos::DefaultExecutionSpace::concurrency();'
# The math functions moved from Kokkos::Experimental to Kokkos in 3.7; the Experimental names
# went with the DEPRECATED_CODE_3 purge in 4.3 (kokkos#6523), as did Experimental::min, max,
# clamp and minmax. Kokkos 3.4 has only the Experimental ones, so src/kfmm/detail/Math.hpp
# picks by KOKKOS_VERSION: the one file allowed to name them.
rule 'Kokkos::Experimental::(abs|fabs|fmod|remainder|fmin|fmax|fdim|exp|exp2|expm1|log|log10|log2|log1p|pow|sqrt|cbrt|hypot|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|erf|erfc|tgamma|lgamma|ceil|floor|trunc|nearbyint|isfinite|isinf|isnan|min|max|clamp|minmax)\b' \
     'the kfmm::detail:: names of src/kfmm/detail/Math.hpp' \
     'Kokkos 4.3 (the Kokkos::Experimental math functions, kokkos#6523)' \
     'src/kfmm/detail/Math.hpp' \
     'return Kokkos::Experimental::sqrt(x);'
# Initialisation through the InitArguments struct: deprecated in 3.7, removed in 4.3
# (kokkos#6523).
rule '\bInitArguments\b' \
     'Kokkos::initialize(argc, argv) or Kokkos::ScopeGuard' \
     'Kokkos 4.3 (Kokkos::InitArguments, kokkos#6523)' '' \
     'Kokkos::InitArguments arguments;'
# Partitioning the OpenMP/HPX thread pool from the host, and its lock: removed in 4.3
# (kokkos#6523).
rule '\b(partition_master|MasterLock)\b' \
     'Kokkos::Experimental::partition_space' \
     'Kokkos 4.3 (partition_master, MasterLock, kokkos#6523)' '' \
     'Kokkos::OpenMP::partition_master(work, 2, 1);'
# The ACTIVE_EXECUTION_MEMORY_SPACE macros: removed in 4.3 (kokkos#6523).
rule 'KOKKOS_ACTIVE_EXECUTION_MEMORY_SPACE_' \
     'KOKKOS_IF_ON_HOST / KOKKOS_IF_ON_DEVICE (4.x) or __CUDA_ARCH__' \
     'Kokkos 4.3 (KOKKOS_ACTIVE_EXECUTION_MEMORY_SPACE_*, kokkos#6523)' '' \
     '#if defined(KOKKOS_ACTIVE_EXECUTION_MEMORY_SPACE_HOST)'
# The atomics atomic_increment, atomic_decrement, atomic_assign, atomic_compare_exchange_strong
# and atomic_query_version: deprecated in 4.5 (kokkos#7458), so absent with deprecated code 4
# off, which is Kokkos 5.0's default (kokkos#8378). Their 4.x replacements atomic_inc,
# atomic_dec (since 4.0) and atomic_store are not in 3.4 (whose atomic_store is in
# Kokkos::Impl), so kfmm uses atomics that both have. std::'s free functions of the same names
# are not caught.
rule '(^|[^:A-Za-z0-9_]|Kokkos::)atomic_(increment|decrement|assign|compare_exchange_strong|query_version)\b' \
     'Kokkos::atomic_add(p, T(1)), atomic_sub(p, T(1)), atomic_exchange(p, v) or atomic_compare_exchange(p, e, d) == e, which 3.4 has too' \
     'Kokkos 4.5 with deprecated code off, the default from 5.0 (atomic_increment, atomic_decrement, atomic_assign, atomic_compare_exchange_strong, atomic_query_version, kokkos#7458)' '' \
     'Kokkos::atomic_increment(&count(0));'
# Kokkos::Impl is Kokkos' internal namespace and changes without deprecation from one release
# to the next (Kokkos::Impl::is_view, for one, gave way to Kokkos::is_view).
rule 'Kokkos::Impl::' \
     'the public API' \
     'any release (Kokkos::Impl is internal and not kept stable)' '' \
     'using Kokkos::Impl::is_view;'

# check PATH...: reports every use of a rule's name outside its allowed files; fails if any.
check() {
  local failed=0 i file hits hit
  local -a files
  mapfile -d '' files < <(find "$@" -type f \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \
                                              -o -name '*.cu' -o -name '*.in' \) -print0 | sort -z)
  for i in "${!regexes[@]}"; do
    for file in "${files[@]}"; do
      [[ " ${allowed[$i]} " == *" $file "* ]] && continue
      # Comments are cut line by line, so the line numbers stay right.
      hits=$(sed 's://.*$::' "$file" | grep -nE "${regexes[$i]}" || true)
      [ -z "$hits" ] && continue
      while IFS= read -r hit; do
        echo "check-kokkos-api: $file:${hit%%:*}: removed in ${removed[$i]}; use ${instead[$i]}:" >&2
        echo "    ${hit#*:}" >&2
      done <<<"$hits"
      failed=1
    done
  done
  return $failed
}

# Every rule catches its sample, in code and not in a comment, and nothing else is caught.
self_test() {
  local work i status=0
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  mkdir -p "$work/src"
  for i in "${!regexes[@]}"; do
    printf '%s\n' "${samples[$i]}" >"$work/src/sample.cpp"
    if check "$work/src" 2>/dev/null; then
      echo "check-kokkos-api: self-test: rule $i does not catch: ${samples[$i]}" >&2
      status=1
    fi
    printf '// %s\n' "${samples[$i]}" >"$work/src/sample.cpp"
    if ! check "$work/src" 2>/dev/null; then
      echo "check-kokkos-api: self-test: rule $i catches a comment: ${samples[$i]}" >&2
      status=1
    fi
  done
  printf '%s\n' 'int n = Kokkos::OpenMP().concurrency() + space.concurrency();' \
                'double r = Kokkos::sqrt(x) + kfmm::detail::sqrt(y);' \
                'Kokkos::atomic_add(&count(0), 1);' \
                'bool swapped = std::atomic_compare_exchange_strong(&flag, &expected, true);' \
                >"$work/src/sample.cpp"
  if ! check "$work/src"; then
    echo "check-kokkos-api: self-test: code that is fine was refused" >&2
    status=1
  fi
  [ $status -eq 0 ] && echo "check-kokkos-api: self-test passed (${#regexes[@]} rules)"
  return $status
}

if [ "${1:-}" = --self-test ]; then
  self_test
  exit
fi
[ $# -gt 0 ] || set -- src apps perf tests examples backends
if check "$@"; then
  echo "check-kokkos-api: no Kokkos API removed in Kokkos 4 or 5 is used (${#regexes[@]} rules)"
else
  echo "check-kokkos-api: the uses above do not build against newer Kokkos releases" >&2
  exit 1
fi
