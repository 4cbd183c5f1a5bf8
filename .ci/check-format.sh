#!/usr/bin/env bash
# Fails when a tracked C++ source is not formatted as .clang-format says (docs/BUILDING.md,
# "Code format").
#
#   .ci/check-format.sh [PATH...]        check the tracked C++ sources (under PATHs, relative to
#                                        the repository root; default: all), list those that
#                                        differ, exit 1 if any does
#   .ci/check-format.sh --fix [PATH...]  format them in place
#
# clang-format 14 only: other major versions format the same style differently, so a check
# that passes with one fails with another. CLANG_FORMAT names the program (default:
# clang-format-14 where there is one, else clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
if [ "${1:-}" = --fix ]; then
  fix=1
  shift
fi
case "${1:-}" in
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) echo "check-format: unknown option '$1' (usage: $0 [--fix] [PATH...])" >&2; exit 2 ;;
esac

required_major=14
# C++ sources by name; cmake/*.in (templates CMake fills in) are not among them.
sources_regex='\.(hpp|cpp|h|cc|cxx|hxx|cu|cuh|inl|ipp)$'
# Tracked files that are not ours to format (generated or third-party code), as extended
# regular expressions on paths relative to the repository root; none at present. Example:
#   excluded=('^third_party/' '^src/kfmm/detail/Generated\.hpp$')
excluded=()

if [ -z "${CLANG_FORMAT:-}" ]; then
  if command -v "clang-format-$required_major" >/dev/null 2>&1; then
    CLANG_FORMAT=clang-format-$required_major
  else
    CLANG_FORMAT=clang-format
  fi
fi
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "check-format: '$CLANG_FORMAT' not found: install clang-format $required_major" \
       "(Debian and Ubuntu: apt-get install clang-format-$required_major) or set CLANG_FORMAT" >&2
  exit 2
fi
version_line=$("$CLANG_FORMAT" --version 2>/dev/null || true)
major=$(sed -n 's/.*clang-format version \([0-9][0-9]*\)\..*/\1/p' <<<"$version_line" | head -n 1)
if [ "$major" != "$required_major" ]; then
  echo "check-format: $CLANG_FORMAT is '${version_line:-unknown}', not version $required_major;" \
       "other versions format differently: install clang-format $required_major or set" \
       "CLANG_FORMAT to it" >&2
  exit 2
fi

files=()
while IFS= read -r -d '' file; do
  [[ $file =~ $sources_regex ]] || continue
  skip=0
  for pattern in ${excluded[@]+"${excluded[@]}"}; do
    if [[ $file =~ $pattern ]]; then
      skip=1
      break
    fi
  done
  [ "$skip" = 1 ] || files+=("$file")
done < <(git ls-files -z -- "${@:-.}")
if [ ${#files[@]} -eq 0 ]; then
  echo "check-format: no tracked C++ sources under: ${*:-.}" >&2
  exit 2
fi

if [ "$fix" = 1 ]; then
  "$CLANG_FORMAT" --style=file -i -- "${files[@]}"
  echo "check-format: formatted ${#files[@]} files with $CLANG_FORMAT, version $major"
  exit 0
fi

unformatted=()
for file in "${files[@]}"; do
  if ! "$CLANG_FORMAT" --style=file -- "$file" | cmp -s - "$file"; then
    unformatted+=("$file")
  fi
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check-format: ${#unformatted[@]} of ${#files[@]} C++ sources are not formatted as" \
       ".clang-format says:" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "check-format: to fix: .ci/check-format.sh --fix${*:+ $*}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} C++ sources formatted ($CLANG_FORMAT, version $major)"
