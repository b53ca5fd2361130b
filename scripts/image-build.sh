#!/usr/bin/env bash
# Lays out one image's /app from the workspace: run by the Dockerfiles' build stage (in /src, the
# build context, after `pnpm fetch`) and by scripts/check-images.sh (in a copy of the context), so
# what is checked on a machine without a Docker engine is what the images hold.
#
#   bash scripts/image-build.sh api|worker|local OUT_DIR
#
# api, worker: `pnpm deploy --prod` of the app: a self-contained folder with its production
#   dependencies in its own node_modules, the workspace packages it uses copied in (injected),
#   not linked to the workspace.
# local: the local-run tools: OUT/simulator (the Derive simulator, tools/derive-simulator, prod), OUT/attester
#   (the local CCTP attester, prod), OUT/wallet and OUT/swap (with
#   their dev dependencies: @wh/testkit holds the development keys local-stack.ts and
#   local-venue.ts deploy from), drizzle/
#   where @wh/db looks for it, OUT/bin/anvil (the binary of @foundry-rs/anvil's platform package),
#   and docker/local/setup.sh.
#
# Each app folder also gets tsx (the TypeScript loader; a root devDependency, at the lockfile's
# version) in its top-level node_modules, so `node --import tsx src/main.ts` runs as in development.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${1:?usage: image-build.sh api|worker|local OUT_DIR}
out=${2:?usage: image-build.sh api|worker|local OUT_DIR}
[[ -e $out ]] && { echo "image-build: $out exists" >&2; exit 1; }

locked() { # the version pnpm-lock.yaml pins for a package
  local v
  v=$(grep -m1 -oE "^  $1@[0-9][^:(]*:" pnpm-lock.yaml | sed -E "s/^  $1@//; s/:$//")
  [[ -n $v ]] || { echo "image-build: $1 is not in pnpm-lock.yaml" >&2; exit 1; }
  echo "$v"
}

deploy() { # deploy PACKAGE DIR [--prod]
  pnpm --filter "$1" deploy --offline --frozen-lockfile "${@:3}" "$2"
  # what the image does not run: tests, benchmarks, build caches (the app's and the injected packages')
  rm -rf "$2"/{test,bench,.turbo}
  local pkg
  for pkg in "$2"/node_modules/.pnpm/@wh+*/node_modules/@wh/*; do rm -rf "$pkg"/{test,bench,.turbo}; done
}

add_tsx() { # add_tsx APP_DIR: tsx and esbuild, flat, next to the app's own dependencies
  local tmp
  tmp=$(mktemp -d)
  local tsx esbuild
  tsx=$(locked tsx)
  # the esbuild the lockfile resolves for that tsx (its snapshot's dependencies)
  esbuild=$(awk -v k="  tsx@$tsx:" '$0 == k { on = 1; next } on && /^  [^ ]/ { on = 0 } on && $1 == "esbuild:" { print $2 }' pnpm-lock.yaml | tail -n1)
  [[ -n $esbuild ]] || { echo "image-build: no esbuild for tsx@$tsx in pnpm-lock.yaml" >&2; exit 1; }
  printf '{"name":"tsx-runtime","private":true,"dependencies":{"tsx":"%s","esbuild":"%s"}}\n' "$tsx" "$esbuild" >"$tmp/package.json"
  (cd "$tmp" && pnpm install --ignore-workspace --node-linker hoisted --prefer-offline \
    --allow-build esbuild --reporter append-only --loglevel warn)
  local name
  for name in tsx esbuild @esbuild; do
    [[ -e $1/node_modules/$name ]] && { echo "image-build: $1/node_modules/$name exists" >&2; exit 1; }
    cp -a "$tmp/node_modules/$name" "$1/node_modules/"
  done
  rm -rf "$tmp"
}

case $target in
  api | worker)
    deploy "@wh/$target" "$out" --prod
    add_tsx "$out"
    ;;
  local)
    mkdir -p "$out/bin"
    deploy @wh/derive-simulator "$out/simulator" --prod
    deploy @wh/attester "$out/attester" --prod
    deploy @wh/wallet "$out/wallet"
    deploy @wh/swap "$out/swap"
    add_tsx "$out/simulator"
    add_tsx "$out/attester"
    add_tsx "$out/wallet"
    # @wh/swap has tsx among its dev dependencies already
    # @wh/db applies ../../../drizzle from its src/ (the repository root in the workspace);
    # in the deployed copy that is the node_modules folder holding @wh/db
    db=$(readlink -f "$out/wallet/node_modules/@wh/db")
    cp -a drizzle "$db/../../drizzle"
    anvil=$(cd "$out" && find wallet/node_modules/.pnpm -path '*/@foundry-rs/anvil-linux-*/bin/anvil' -type f | head -n1)
    [[ -n $anvil ]] || { echo "image-build: no anvil binary in the deployed @foundry-rs/anvil" >&2; exit 1; }
    ln -s "../$anvil" "$out/bin/anvil"
    # the one-shot setup (docker/local/); the simulator runs from the deployed @wh/derive-simulator's
    # src/main.ts, given host 0.0.0.0 by the Dockerfile and compose
    cp docker/local/setup.sh "$out/setup.sh"
    ;;
  *)
    echo "image-build: unknown target $target" >&2
    exit 1
    ;;
esac
echo "image-build: $target laid out in $out ($(du -sh "$out" | cut -f1))"
