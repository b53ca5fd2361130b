#!/usr/bin/env bash
# README Quick start, line 1: install what is missing, then start the whole service locally.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# on Node 24, the machine's or the one bootstrap installed (scripts/node24.sh)
exec bash scripts/node24.sh pnpm exec tsx scripts/dev.ts "$@"
