#!/bin/sh
# The Compose stack's one-shot setup (what scripts/dev.ts does before it starts the apps):
# migrations, then packages/wallet/scripts/local-stack.ts (TestUSDC on the local chain, the
# exchange wallet registered with the simulator, Derive v3's manager and outbox stand-ins and the
# platform's funding subaccount) and packages/swap/scripts/local-venue.ts (TestWETH,
# the pool, the swap wallet's and the exchange wallet's inventory). Reads the services' environment.
set -eu
cd "$(dirname "$0")/wallet"
node --import tsx node_modules/@wh/db/src/migrate-cli.ts
out=$(node --import tsx scripts/local-stack.ts)
echo "$out"
# The apps take USDC_ADDRESS_LOCAL from their environment (docker-compose.yml): TestUSDC must be
# there. On a fresh chain it is, as the first deployment of dev account 0 (its address follows from
# the account and nonce 0); a chain that already saw other transactions puts it elsewhere.
got=$(printf '%s\n' "$out" | tail -n 1 | sed -n 's/.*"usdcAddress":"\(0x[0-9a-fA-F]*\)".*/\1/p' | tr 'A-F' 'a-f')
want=$(printf '%s' "${USDC_ADDRESS_LOCAL:-}" | tr 'A-F' 'a-f')
if [ "$got" != "$want" ]; then
  echo "setup: TestUSDC is at $got, the apps expect USDC_ADDRESS_LOCAL=$want (restart the chain: docker compose up -d --force-recreate anvil)" >&2
  exit 1
fi
# Derive v3 (docs/exchange-v3.md "Money in", "Money out"): on a fresh chain and a fresh simulator the
# manager and the outbox stand-ins are dev account 0's next deployments and the funding subaccount's id
# is the simulator's first after the fallback one; the apps take all three from their environment
for pair in "depositManager:EXCHANGE_DEPOSIT_MANAGER_ADDRESS" "withdrawalOutbox:EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS" "fundingSubaccountId:EXCHANGE_FUNDING_SUBACCOUNT_ID"; do
  field=${pair%%:*}
  name=${pair#*:}
  got=$(printf '%s\n' "$out" | tail -n 1 | sed -n "s/.*\"$field\":\"\{0,1\}\(0x[0-9a-fA-F]*\|[0-9]*\)\"\{0,1\}.*/\1/p" | tr 'A-F' 'a-f')
  want=$(eval "printf '%s' \"\${$name:-}\"" | tr 'A-F' 'a-f')
  if [ -z "$got" ] || [ "$got" != "$want" ]; then
    echo "setup: $field is ${got:-missing}, the apps expect $name=$want (restart the chain and the simulator: docker compose up -d --force-recreate anvil simulator)" >&2
    exit 1
  fi
done
# the swap venue: on a fresh chain TestWETH and the pool are dev account 0's next deployments
venue=$(cd ../swap && node --import tsx scripts/local-venue.ts)
echo "$venue"
for pair in "poolAddress:SWAP_POOL_ADDRESS_LOCAL" "wethAddress:WETH_ADDRESS_LOCAL"; do
  field=${pair%%:*}
  name=${pair#*:}
  got=$(printf '%s\n' "$venue" | tail -n 1 | sed -n "s/.*\"$field\":\"\(0x[0-9a-fA-F]*\)\".*/\1/p" | tr 'A-F' 'a-f')
  want=$(eval "printf '%s' \"\${$name:-}\"" | tr 'A-F' 'a-f')
  if [ "$got" != "$want" ]; then
    echo "setup: $field is $got, the apps expect $name=$want (restart the chain: docker compose up -d --force-recreate anvil)" >&2
    exit 1
  fi
done
echo "setup: done"
