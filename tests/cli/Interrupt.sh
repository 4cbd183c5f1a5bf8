#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# An interrupt while the program writes its output leaves no temporary file behind (ctest):
# the program is started, SIGTERM is sent as soon as its temporary file appears, and then the
# folder must hold nothing. (SIGTERM, not SIGINT: a shell without job control starts its
# background commands with SIGINT ignored, and the program leaves an ignored signal ignored.
# The program handles SIGINT, SIGTERM and SIGHUP alike.) Usage: Interrupt.sh PROGRAM WORK_DIR
set -euo pipefail
program=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"
# Enough particles that writing them as text takes a good part of a second.
"$program" --n 400000 --check 0 --quiet --output out.csv &
pid=$!
seen=
for _ in $(seq 1 6000); do # 60 s at most
  if compgen -G 'out.csv.tmp*' >/dev/null; then
    seen=yes
    kill -TERM "$pid"
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.01
done
status=0
wait "$pid" || status=$?
if [ -z "$seen" ]; then
  echo "Interrupt.sh: never saw the temporary file (exit status $status); the write was too quick" >&2
  exit 1
fi
left=$(ls -A)
if [ -n "$left" ]; then
  echo "Interrupt.sh: the interrupted run left: $left" >&2
  exit 1
fi
# 128 + SIGTERM (15): ended by the signal, as without the handler.
if [ "$status" -ne 143 ]; then
  echo "Interrupt.sh: exit status $status, expected 143 (ended by SIGTERM)" >&2
  exit 1
fi
echo "Interrupt.sh: interrupted while writing; nothing left behind"
