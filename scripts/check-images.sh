#!/usr/bin/env bash
# Checks the Docker images and docker-compose.yml on a machine without a Docker engine:
#
# 1. docker-compose.yml: `docker compose config` (or docker-compose v1) when a compose CLI is
#    installed (neither needs an engine), then read as JSON (python3-yaml) for step 4;
# 2. the build context: this checkout less .dockerignore, copied to a temporary folder;
# 3. each Dockerfile's build stage, step by step: `pnpm fetch` from pnpm-lock.yaml and
#    pnpm-workspace.yaml alone into an empty store (as `COPY pnpm-lock.yaml …` + `RUN pnpm fetch`),
#    then the rest of the context and `bash scripts/image-build.sh api|worker|local` (offline);
# 4. scripts/check-images.ts runs those layouts as the compose services (the four anvil nodes, simulator, setup,
#    api, two workers) against a throwaway Postgres and Redis, runs every health check, checks
#    GET /health is ok and both workers start, then stops everything with SIGTERM.
#
#   bash scripts/check-images.sh              # all of it; everything it starts is stopped
#   KEEP=1 bash scripts/check-images.sh       # keep the temporary folder (the image layouts)
#   CHECK_IMAGES_VERBOSE=1 …                  # the services' output too
#   CHECK_IMAGES_STORE=DIR …                  # reuse a pnpm store (default: an empty one, ~500 MB)
# What it cannot check: the base image, the non-root `node` user and file ownership (approximated
# by running as `nobody` when root), Docker's networking and the order compose starts things in.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

WORK=$(mktemp -d /tmp/check-images.XXXXXX)
chmod 755 "$WORK"
cleanup() {
  if [[ ${KEEP:-0} == 1 ]]; then echo "check-images: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
say() { echo "check-images: $*"; }

# 1. the compose file
if docker compose version >/dev/null 2>&1; then
  if [[ -f .env.local ]]; then docker compose config -q && say "docker compose config: valid"; else say "no .env.local: docker compose config skipped"; fi
elif command -v docker-compose >/dev/null 2>&1; then
  if [[ -f .env.local ]]; then docker-compose config -q && say "docker-compose config: valid"; else say "no .env.local: docker-compose config skipped"; fi
else
  say "no compose CLI (docker compose, docker-compose): the compose file is only parsed as YAML"
fi
python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open("docker-compose.yml")), sys.stdout)' >"$WORK/compose.json" ||
  { say "reading docker-compose.yml needs python3 with PyYAML (apt-get install python3-yaml)"; exit 1; }

# 2. the build context
mkdir "$WORK/src"
excludes=()
while IFS= read -r line; do
  line=${line%%#*}
  line=${line//[[:space:]]/}
  [[ -z $line ]] && continue
  [[ $line == !* ]] && { say ".dockerignore exceptions (!) are not reproduced: $line"; exit 1; }
  excludes+=("--exclude=${line#\*\*/}")
done <.dockerignore
tar "${excludes[@]}" -cf - . | tar -xf - -C "$WORK/src"
say "build context: $(du -sh "$WORK/src" | cut -f1) (node_modules present: $(find "$WORK/src" -name node_modules | wc -l))"

# 3. the build stages (the same steps for the three Dockerfiles)
export PNPM_CONFIG_STORE_DIR=${CHECK_IMAGES_STORE:-$WORK/store}
export XDG_CACHE_HOME=$WORK/cache XDG_DATA_HOME=$WORK/data XDG_STATE_HOME=$WORK/state
for target in api worker local; do
  build=$WORK/build-$target
  mkdir "$build"
  cp "$WORK/src/pnpm-lock.yaml" "$WORK/src/pnpm-workspace.yaml" "$build/"
  (cd "$build" && pnpm fetch --reporter append-only --loglevel warn) >"$WORK/build-$target.log" 2>&1 ||
    { cat "$WORK/build-$target.log"; exit 1; }
  cp -a "$WORK/src/." "$build/"
  (cd "$build" && bash scripts/image-build.sh "$target" "$WORK/img-$target") >>"$WORK/build-$target.log" 2>&1 ||
    { cat "$WORK/build-$target.log"; exit 1; }
  tail -n 1 "$WORK/build-$target.log"
  rm -rf "$build"
done
# nothing of the workspace may be reached from an image: no links out of it
for img in "$WORK"/img-*; do
  if out=$(find "$img" -type l -lname '/*' | head -n 3) && [[ -n $out ]]; then
    say "absolute links in $img:"$'\n'"$out"
    exit 1
  fi
done
unset PNPM_CONFIG_STORE_DIR XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME

# 4. run them as docker-compose.yml does (Postgres and Redis from this machine, via @wh/testkit)
CHECK_IMAGES_DIR=$WORK node --import tsx "$ROOT/scripts/check-images.ts"
