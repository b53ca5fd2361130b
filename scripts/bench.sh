#!/usr/bin/env bash
# `pnpm bench`: every capability's benchmark, one after the other (they share the machine's cores).
set -euo pipefail
cd "$(dirname "$0")/.."
for pkg in @wh/api @wh/ledger @wh/wallet; do
  echo "=== $pkg ==="
  pnpm --filter "$pkg" run bench
done
