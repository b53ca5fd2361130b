#!/usr/bin/env bash
# What the local run costs to start (docs/chains.md "Local run: four chains"): starts `scripts/dev.ts`
# with this checkout's .env.local, prints the seconds until it says "Wheelhouse is running" (its banner
# also lists each phase's time), then stops it with Ctrl-C as a developer would. Run it where nothing
# else holds the ports .env.local names (the database is the local run's own: a fresh set of nodes
# drops and recreates it).
#
#   bash scripts/time-dev-start.sh [runs]     # default 1 run; its log in $TMPDIR/wheelhouse-time-dev-N.log
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
for n in $(seq 1 "$runs"); do
  log=${TMPDIR:-/tmp}/wheelhouse-time-dev-$n.log
  start=$(date +%s%N)
  bash scripts/node24.sh node --import tsx scripts/dev.ts >"$log" 2>&1 &
  pid=$!
  until grep -q "Wheelhouse is running" "$log"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "run $n: the local run stopped before it was up (see $log)" >&2
      exit 1
    fi
    sleep 0.1
  done
  end=$(date +%s%N)
  echo "run $n: up in $(((end - start) / 1000000)) ms; $(grep -o 'started in .*' "$log")"
  # node24.sh execs node: $pid is the local run itself, which stops everything it started on SIGINT
  kill -INT "$pid"
  wait "$pid" || true
done
