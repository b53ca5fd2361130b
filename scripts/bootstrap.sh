#!/usr/bin/env bash
# Installs what the service and its tests need, on a fresh Debian machine that has Node (20 or newer) and npm:
# Node 24 into .tools/ when the machine's is older (scripts/node24.sh),
# pnpm, the workspace's packages, and (when missing) Postgres, Redis and Chromium from the OS packages
# (Chromium drives the web console's browser tests through playwright-core: no browser download).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
# the browser tests (apps/web/test) drive Debian's Chromium at /usr/bin/chromium
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]} from the OS packages"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v pnpm >/dev/null 2>&1; then
  echo "bootstrap: installing pnpm"
  npm install -g pnpm@12 --loglevel=error >/dev/null 2>&1 || as_root npm install -g pnpm@12 --loglevel=error
fi

pnpm install --frozen-lockfile --reporter=append-only 2>&1 | tail -n 3

# the service runs on Node 24 LTS: every package.json script goes through scripts/node24.sh
bash scripts/node24.sh --ensure
