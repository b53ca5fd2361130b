#!/usr/bin/env bash
# The project runs on Node 24 LTS. `scripts/node24.sh <command…>` runs a command with a Node 24
# first on PATH: the machine's own `node` when it is 24 or newer, else the one installed into
# .tools/node24 from the npm registry's `node` package (a real Node binary, no download from
# nodejs.org). `scripts/node24.sh --ensure` installs it when needed and prints the version used.
# Every script of package.json goes through here, so tests, the local run and benchmarks, and
# every process they spawn (process.execPath), run on Node 24 whatever the machine has.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
want=24
tools="$root/.tools/node24/node_modules/.bin"

major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "$(major node)" -lt "$want" ]; then
  if [ "$(major "$tools/node")" -lt "$want" ]; then
    echo "node24: the machine has Node $(node --version 2>/dev/null || echo none); installing Node $want into .tools/node24" >&2
    mkdir -p "$root/.tools/node24"
    npm install --prefix "$root/.tools/node24" --no-save --no-audit --no-fund --loglevel=error "node@$want" >&2
    if [ "$(major "$tools/node")" -lt "$want" ]; then
      echo "node24: the npm registry's node@$want did not give a working Node $want" >&2
      exit 1
    fi
  fi
  export PATH="$tools:$PATH"
fi

if [ "${1:-}" = "--ensure" ]; then
  echo "node24: $(command -v node) $(node --version)"
  exit 0
fi
exec "$@"
