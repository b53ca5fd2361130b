#!/usr/bin/env bash
# The accelerated demo: a new user through deposit → wheel → withdrawal on the local run, the
# exchange's clock moved ahead (scripts/demo.ts). Starts the local run in demo mode when it is not
# up, and stops it afterwards unless --keep.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec bash scripts/node24.sh pnpm exec tsx scripts/demo.ts "$@"
