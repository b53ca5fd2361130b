#!/usr/bin/env bash
# README Quick start, line 1: install what is missing, then start the whole service locally.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec pnpm exec tsx scripts/dev.ts "$@"
