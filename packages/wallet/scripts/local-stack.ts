/**
 * The local run's chain and exchange setup (scripts/dev.ts runs it once the four local nodes and the
 * Derive simulator listen; reads the same environment as the services, through @wh/config):
 *
 * 1. TestUSDC on each chain's node (docs/chains.md "Local run: four chains"): reused when
 *    USDC_ADDRESS_LOCAL_<CHAIN> already names a contract there (the node kept running), else deployed from
 *    the standard dev account 0, which then holds LOCAL_MINT_USDC on that chain to play deposits with;
 * 2. CCTP's stand-ins on every node (src/contracts/local-cctp.ts: one TokenMessengerV2 and MessageTransmitterV2
 *    address on all four, linked to each other and to each chain's TestUSDC, trusting the local attester's key), and
 *    the local attester (packages/attester, at CCTP_ATTESTATION_URL) told which transmitter to watch on each node;
 * 3. the simulator learns EXCHANGE_WALLET_ADDRESS with the service's session keys, each with exactly
 *    its duty (SESSION_KEY_DUTIES: SESSION_PRIVATE_KEY trades and moves collateral on every subaccount,
 *    EXCHANGE_PAYOUT_SESSION_KEY withdraws from the funding subaccount only, once it is open), so the
 *    worker's start check passes (the simulator keeps no state across restarts, so this runs on every
 *    start; the owner's signed registration is what production does, docs/operations.md);
 * 4. Derive v3's money in and out (local-v3.ts), on the Ethereum node (the exchange's L1): the
 *    OnchainActionManager and WithdrawalOutbox stand-ins, the simulator watching them, and the platform's
 *    funding subaccount opened by a first deposit.
 * 5. that opening deposit journaled as the platform's own capital (`capital_contributed` into
 *    platformHot(EXCHANGE_CHAIN), docs/ledger.md "Platform capital"), so reconciliation finds in the funding
 *    subaccount what the journal explains and a fresh local run raises no divergence;
 * 6. on a fresh Ethereum node, LOCAL_HOT_CAPITAL_USDC sent from dev account 0 to the Ethereum hot wallet and
 *    journaled the same way (platformHot('ethereum')): the L2 hot wallets' refills leave from L1 (docs/chains.md
 *    "The L2 route"), so without it a fresh local run's refills and treasury wait on an empty L1 forever.
 *
 * The platform's wallets (the hot, gas and swap keys of the local environment) are dev accounts of the
 * nodes' mnemonic: every node funds them with ETH from its first block.
 *
 * Prints one JSON line: { usdc: { <chain>: address }, chainIds: { <chain>: id as the node answers },
 * deployed, cctp: { tokenMessenger, messageTransmitter }, exchangeWallet, sessionKey, v3 } (addresses and ids only,
 * never a key).
 */
import { LOCAL_ATTESTER_ADDRESS } from '@wh/attester'
import { CHAIN_NAMES, type ChainName, loadConfig, loadDotEnvLocal, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { SESSION_KEY_DUTIES, scopeWire } from '@wh/exchange'
import { append, capitalReference, EXCHANGE_CHAIN } from '@wh/ledger'
import { TEST_PRIVATE_KEYS } from '@wh/testkit'
import type { Address } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { CCTP_DOMAINS } from '../src/cctp/constants'
import { setUpLocalCctp } from '../src/contracts/local-cctp'
import { deployTestUsdcs, localClients } from '../src/contracts/local-chains'
import { testUsdcAbi } from '../src/contracts/test-usdc.gen'
import { setUpLocalV3 } from './local-v3'

/** Test USDC minted to dev account 0 on each chain on a fresh deployment (6 decimals: one million). */
const LOCAL_MINT_USDC = 1_000_000n * 1_000_000n
/**
 * The platform's opening capital in its Ethereum hot wallet (1,000 USDC): its own BRIDGE_RETAIN_USDC and the
 * three L2 hot wallets' refills to theirs (100 each in the local run) with room for CCTP's fees.
 */
const LOCAL_HOT_CAPITAL_USDC = 1_000n * 1_000_000n

loadDotEnvLocal()
const config = loadConfig(processEnv(), { setup: true })
if (config.nodeEnv === 'production') throw new Error('local-stack.ts sets up local nodes only')

const nodes = Object.fromEntries(CHAIN_NAMES.map((c) => [c, { rpcUrl: config.rpcUrls[c] }])) as Record<
  ChainName,
  { rpcUrl: string }
>
const clientsOf = (c: ChainName) => localClients(config.rpcUrls[c], TEST_PRIVATE_KEYS[0])
// each node as it answers: scripts/dev.ts checks the ids against the ones it started the nodes with
const chainIds = Object.fromEntries(
  await Promise.all(CHAIN_NAMES.map(async (c) => [c, await clientsOf(c).publicClient.getChainId()] as const)),
) as Record<ChainName, number>
if (new Set(Object.values(chainIds)).size !== CHAIN_NAMES.length)
  throw new Error(`two chains answer one chain id (${JSON.stringify(chainIds)}): each needs a node of its own`)

// the TestUSDCs already there (the nodes kept running) are kept; the others are deployed and minted
const kept: Partial<Record<ChainName, Address>> = {}
for (const c of CHAIN_NAMES) {
  const configured = config.localChains?.[c].usdc
  const code = configured ? await clientsOf(c).publicClient.getCode({ address: configured }) : undefined
  if (configured && code && code !== '0x') kept[c] = configured
}
const deployed = CHAIN_NAMES.filter((c) => kept[c] === undefined)
const fresh =
  deployed.length === 0
    ? {}
    : await deployTestUsdcs(nodes, TEST_PRIVATE_KEYS[0], { mint: LOCAL_MINT_USDC, only: deployed })
const usdc = { ...fresh, ...kept } as Record<ChainName, Address>

// CCTP: the stand-ins on every node, and the attester told where they are (it keeps nothing across restarts)
const cctp = await setUpLocalCctp(nodes, usdc, { funderKey: TEST_PRIVATE_KEYS[0], attester: LOCAL_ATTESTER_ADDRESS })
const watch = await fetch(new URL('/_attester/watch', config.cctp.attestationUrl), {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    chains: CHAIN_NAMES.map((c) => ({
      domain: CCTP_DOMAINS[c],
      rpc_url: config.rpcUrls[c],
      transmitter: cctp.messageTransmitter,
    })),
  }),
  signal: AbortSignal.timeout(5_000),
})
if (!watch.ok) throw new Error(`the local attester refused watch (${watch.status})`)

const sessionKey = privateKeyToAccount(config.keys.sessionPrivateKey).address
/** Registers keys of the account at the simulator through its control API (scope wire strings). */
async function registerKeys(keys: { address: string; scopes: readonly string[]; subaccount_ids?: number[] }[]) {
  const res = await fetch(new URL('/_sim/register_wallet', config.exchange.httpUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: config.exchange.walletAddress, session_keys: keys }),
    signal: AbortSignal.timeout(5_000),
  })
  if (!res.ok) throw new Error(`the simulator refused register_wallet (${res.status}): ${await res.text()}`)
}
const wire = (duty: keyof typeof SESSION_KEY_DUTIES) => SESSION_KEY_DUTIES[duty].map(scopeWire)
await registerKeys([{ address: sessionKey, scopes: wire('trading') }])

// the hot wallet is MASTER_PRIVATE_KEY's account (docs/chains.md "Hot wallet")
const hotWallet = privateKeyToAccount(config.keys.masterPrivateKey).address
const v3 = await setUpLocalV3({
  ...clientsOf('ethereum'),
  rpcUrl: config.rpcUrls.ethereum,
  simulatorUrl: config.exchange.httpUrl,
  usdc: usdc.ethereum,
  owner: config.exchange.walletAddress,
  hotWallet,
})

// the payout key reaches the funding subaccount only: registered once the opening deposit made it
if (config.keys.payoutSessionKey) {
  const payout = privateKeyToAccount(config.keys.payoutSessionKey).address
  await registerKeys([{ address: payout, scopes: wire('payout'), subaccount_ids: [v3.fundingSubaccountId] }])
}

// the Ethereum hot wallet's opening capital, sent on a fresh node only (a kept node still holds it or spent it)
let hotCapitalTx: `0x${string}` | undefined
if (deployed.includes('ethereum')) {
  const { walletClient, publicClient } = clientsOf('ethereum')
  hotCapitalTx = await walletClient.writeContract({
    address: usdc.ethereum,
    abi: testUsdcAbi,
    functionName: 'transfer',
    args: [hotWallet, LOCAL_HOT_CAPITAL_USDC],
    chain: null,
  } as never)
  const r = await publicClient.waitForTransactionReceipt({ hash: hotCapitalTx, pollingInterval: 50 })
  if (r.status !== 'success') throw new Error(`the hot wallet's opening capital reverted (${hotCapitalTx})`)
}

// the opening deposit and the hot wallet's capital are the platform's: journaled once (keyed by their transactions)
const database = createDatabase(config.databaseUrl, { max: 1, appName: 'wheelhouse-local-stack' })
try {
  if (hotCapitalTx)
    await append(database.sql, {
      type: 'capital_contributed',
      payload: {
        holding: 'hot',
        chain: 'ethereum',
        currency: 'USDC',
        amount: LOCAL_HOT_CAPITAL_USDC,
        reference: capitalReference({ chainId: chainIds.ethereum, txHash: hotCapitalTx }),
        reason: "the Ethereum hot wallet's opening capital in the local run",
      },
      occurredAt: new Date(),
    })
  await append(database.sql, {
    type: 'capital_contributed',
    payload: {
      holding: 'hot',
      chain: EXCHANGE_CHAIN,
      currency: 'USDC',
      amount: BigInt(v3.openingDeposit.amount),
      reference: capitalReference({ chainId: config.exchange.chainId, txHash: v3.openingDeposit.txHash }),
      reason: `the funding subaccount ${v3.fundingSubaccountId} opened by the local run's first deposit`,
    },
    occurredAt: new Date(),
  })
} finally {
  await database.close()
}

process.stdout.write(
  `${JSON.stringify({
    usdc,
    chainIds,
    deployed,
    cctp: { tokenMessenger: cctp.tokenMessenger, messageTransmitter: cctp.messageTransmitter },
    exchangeWallet: config.exchange.walletAddress,
    sessionKey,
    v3,
  })}\n`,
)
