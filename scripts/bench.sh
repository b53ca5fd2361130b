#!/usr/bin/env bash
# `pnpm bench`: every capability's benchmark, one after the other (they share the machine's cores).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# wrk (a C load generator) leaves more of the two cores to the server under test; optional
if ! command -v wrk >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y -qq wrk >/dev/null 2>&1 || true
  else sudo -n apt-get install -y -qq wrk >/dev/null 2>&1 || true; fi
fi
for pkg in @wh/api @wh/ledger @wh/wallet @wh/worker @wh/swap @wh/proof @wh/web @wh/derive-simulator; do
  echo "=== $pkg ==="
  pnpm --filter "$pkg" run bench
done
