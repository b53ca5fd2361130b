/**
 * The local run's chain and exchange setup (scripts/dev.ts runs it once the local node and the
 * Derive simulator listen; reads the same environment as the services, through @wh/config):
 *
 * 1. TestUSDC on the local node: reused when USDC_ADDRESS_LOCAL already names a contract there
 *    (the node kept running), else deployed from the standard dev account 0, which then holds
 *    LOCAL_MINT_USDC to play deposits with;
 * 2. the simulator learns EXCHANGE_WALLET_ADDRESS with the service's session keys, each with exactly
 *    its duty (SESSION_KEY_DUTIES: SESSION_PRIVATE_KEY trades and moves collateral on every subaccount,
 *    EXCHANGE_PAYOUT_SESSION_KEY withdraws from the funding subaccount only, once it is open), so the
 *    worker's start check passes (the simulator keeps no state across restarts, so this runs on every
 *    start; the owner's signed registration is what production does, docs/operations.md);
 * 3. Derive v3's money in and out (local-v3.ts): the OnchainActionManager and WithdrawalOutbox stand-ins,
 *    the simulator watching them, and the platform's funding subaccount opened by a first deposit;
 * 4. that opening deposit journaled as the platform's own capital (`capital_contributed` into
 *    platformHot(EXCHANGE_CHAIN), docs/ledger.md "Platform capital"), so reconciliation finds in the funding
 *    subaccount what the journal explains and a fresh local run raises no divergence.
 *
 * Prints one JSON line: { usdcAddress, deployed, exchangeWallet, sessionKey, v3 } (addresses and
 * ids only, never a key).
 */
import { loadConfig, loadDotEnvLocal, processEnv } from '@wh/config'
import { createDatabase } from '@wh/db'
import { SESSION_KEY_DUTIES, scopeWire } from '@wh/exchange'
import { append, EXCHANGE_CHAIN } from '@wh/ledger'
import { TEST_PRIVATE_KEYS } from '@wh/testkit'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { deployTestUsdc } from '../src/contracts/deploy'
import { testUsdcAbi } from '../src/contracts/test-usdc.gen'
import { setUpLocalV3 } from './local-v3'

/** Test USDC minted to dev account 0 on a fresh deployment (6 decimals: one million). */
const LOCAL_MINT_USDC = 1_000_000n * 1_000_000n

loadDotEnvLocal()
const config = loadConfig(processEnv(), { setup: true })
if (config.nodeEnv === 'production') throw new Error('local-stack.ts sets up a local node only')

const transport = http(config.rpcUrls.ethereum)
const publicClient = createPublicClient({ transport })
const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const walletClient = createWalletClient({ account: deployer, transport })

let usdcAddress = config.usdcAddressLocal
let deployed = false
const code = usdcAddress ? await publicClient.getCode({ address: usdcAddress }) : undefined
if (!usdcAddress || !code || code === '0x') {
  usdcAddress = await deployTestUsdc(walletClient, publicClient)
  const hash = await walletClient.writeContract({
    address: usdcAddress,
    abi: testUsdcAbi,
    functionName: 'mint',
    args: [deployer.address, LOCAL_MINT_USDC],
    chain: null,
  })
  await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  deployed = true
}

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

const v3 = await setUpLocalV3({
  walletClient,
  publicClient,
  rpcUrl: config.rpcUrls.ethereum,
  simulatorUrl: config.exchange.httpUrl,
  usdc: usdcAddress,
  owner: config.exchange.walletAddress,
  // the hot wallet is MASTER_PRIVATE_KEY's account (docs/chains.md "Hot wallet")
  hotWallet: privateKeyToAccount(config.keys.masterPrivateKey).address,
})

// the payout key reaches the funding subaccount only: registered once the opening deposit made it
if (config.keys.payoutSessionKey) {
  const payout = privateKeyToAccount(config.keys.payoutSessionKey).address
  await registerKeys([{ address: payout, scopes: wire('payout'), subaccount_ids: [v3.fundingSubaccountId] }])
}

// the opening deposit is the platform's capital: journaled once (its key is the deposit's transaction)
const database = createDatabase(config.databaseUrl, { max: 1, appName: 'wheelhouse-local-stack' })
try {
  await append(database.sql, {
    type: 'capital_contributed',
    payload: {
      holding: 'hot',
      chain: EXCHANGE_CHAIN,
      currency: 'USDC',
      amount: BigInt(v3.openingDeposit.amount),
      reference: `tx:${config.exchange.chainId}:${v3.openingDeposit.txHash.toLowerCase()}`,
      reason: `the funding subaccount ${v3.fundingSubaccountId} opened by the local run's first deposit`,
    },
    occurredAt: new Date(),
  })
} finally {
  await database.close()
}

process.stdout.write(
  `${JSON.stringify({ usdcAddress, deployed, exchangeWallet: config.exchange.walletAddress, sessionKey, v3 })}\n`,
)
