#!/usr/bin/env bash
# Adds the Debian archive entries kfmm's dependency set-up needs (deb-src for the trilinos
# source package, bookworm-backports for Catch2 v3), derived from the machine's own apt
# sources so that no host name is written anywhere. Idempotent; needs root.
set -euo pipefail

target=/etc/apt/sources.list.d/kfmm-derived.sources
[ -f "$target" ] && exit 0

main=/etc/apt/sources.list.d/debian.sources
if [ ! -f "$main" ]; then
  echo "kfmm: no $main to derive deb-src/backports entries from;" \
       "add a deb-src entry for trilinos and a bookworm-backports entry by hand" >&2
  exit 1
fi

# The first stanza whose Suites name the release itself (not -security/-updates) is the
# archive mirror; reuse its URIs, Components and Signed-By.
awk -v RS= '/Suites:[^\n]*bookworm( |\n|$)/ && !/security/ {print; exit}' "$main" > /tmp/kfmm-main.stanza
if [ ! -s /tmp/kfmm-main.stanza ]; then
  echo "kfmm: no bookworm stanza found in $main" >&2
  exit 1
fi
field() { sed -n "s/^$1:[[:space:]]*//p" /tmp/kfmm-main.stanza | head -n 1; }
uris=$(field URIs); comps=$(field Components); signed=$(field Signed-By)

{
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: %s\n' "$uris" "$comps"
  [ -n "$signed" ] && printf 'Signed-By: %s\n' "$signed"
  printf '\nTypes: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: %s\n' "$uris" "$comps"
  [ -n "$signed" ] && printf 'Signed-By: %s\n' "$signed"
} > "$target"
rm -f /tmp/kfmm-main.stanza
apt-get update -qq
