#!/bin/sh
# The Compose stack's one-shot setup (what scripts/dev.ts does before it starts the apps):
# migrations, then packages/wallet/scripts/local-stack.ts (each chain's TestUSDC on its own node, CCTP's
# stand-ins on every node and the attester told where they are, the exchange wallet registered with the simulator, Derive v3's manager and outbox stand-ins and the
# platform's funding subaccount on the Ethereum node) and packages/swap/scripts/local-venue.ts (TestWETH,
# the pool, the swap wallet's and the exchange wallet's inventory, on SWAP_CHAIN's node). Reads the
# services' environment.
set -eu
cd "$(dirname "$0")/wallet"
node --import tsx node_modules/@wh/db/src/migrate-cli.ts

# Every address and id the apps take from their environment (docker-compose.yml) must be what the setup
# made: on fresh nodes and a fresh simulator they follow from dev account 0's nonces and the simulator's
# first ids. `expect OUTPUT field=VAR ...` compares a field of the setup's JSON line (a dotted path) with
# the variable, case-insensitively.
expect() {
  out=$1
  shift
  OUT=$out node -e '
    const got = JSON.parse(process.env.OUT.trim().split("\n").at(-1))
    let bad = 0
    for (const pair of process.argv.slice(1)) {
      const [field, name] = pair.split("=")
      const value = field.split(".").reduce((o, k) => (o == null ? undefined : o[k]), got)
      const want = process.env[name] ?? ""
      if (String(value ?? "").toLowerCase() !== want.toLowerCase()) {
        console.error(`setup: ${field} is ${value ?? "missing"}, the apps expect ${name}=${want} ` +
          "(recreate the nodes and the simulator: docker compose up -d --force-recreate anvil-ethereum anvil-optimism anvil-base anvil-arbitrum simulator attester)")
        bad++
      }
    }
    process.exit(bad ? 1 : 0)
  ' "$@"
}

out=$(node --import tsx scripts/local-stack.ts)
echo "$out"
expect "$out" \
  usdc.ethereum=USDC_ADDRESS_LOCAL_ETHEREUM usdc.optimism=USDC_ADDRESS_LOCAL_OPTIMISM \
  usdc.base=USDC_ADDRESS_LOCAL_BASE usdc.arbitrum=USDC_ADDRESS_LOCAL_ARBITRUM \
  chainIds.ethereum=EXCHANGE_CHAIN_ID chainIds.optimism=CHAIN_ID_LOCAL_OPTIMISM \
  chainIds.base=CHAIN_ID_LOCAL_BASE chainIds.arbitrum=CHAIN_ID_LOCAL_ARBITRUM \
  cctp.tokenMessenger=CCTP_TOKEN_MESSENGER_LOCAL cctp.messageTransmitter=CCTP_MESSAGE_TRANSMITTER_LOCAL \
  v3.depositManager=EXCHANGE_DEPOSIT_MANAGER_ADDRESS v3.withdrawalOutbox=EXCHANGE_WITHDRAWAL_OUTBOX_ADDRESS \
  v3.fundingSubaccountId=EXCHANGE_FUNDING_SUBACCOUNT_ID

venue=$(cd ../swap && node --import tsx scripts/local-venue.ts)
echo "$venue"
expect "$venue" poolAddress=SWAP_POOL_ADDRESS_LOCAL wethAddress=WETH_ADDRESS_LOCAL
echo "setup: done"
