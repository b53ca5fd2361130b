/**
 * The local run's Derive v3 money in and out (`bash scripts/dev.sh`; docs/exchange-v3.md "Money in",
 * "Money out"): on the local node, the OnchainActionManager stand-in mapping USDC's protocol asset to
 * TestUSDC; the simulator told to watch it (POST /_sim/watch_l1); the platform's funding subaccount
 * opened by a first `depositToNewSubaccount` of 1 USDC from dev account 0 for EXCHANGE_WALLET_ADDRESS;
 * the WithdrawalOutbox stand-in paying out of the manager, with a fresh operator key (funded with
 * ETH by dev account 0) handed to the simulator alone, which pays withdrawals through it
 * (POST /_sim/pay_l1); and the hot wallet on the owner's recipient list (POST /_sim/whitelist_recipient),
 * so the treasury tick may withdraw to it. The simulator keeps no state across restarts, so this runs
 * on every start, with fresh contracts.
 */
import {
  type Account,
  type Address,
  type Chain,
  getAddress,
  type Hex,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { deployTestOnchainActionManager, deployTestWithdrawalOutbox } from '../src/contracts/deploy'
import { testOnchainActionManagerAbi } from '../src/contracts/test-onchain-action-manager.gen'
import { testUsdcAbi } from '../src/contracts/test-usdc.gen'

/** USDC (6 decimals) the first deposit moves: what opens the funding subaccount. */
const OPENING_DEPOSIT = 1_000_000n
/** ETH the simulator's operator key gets for the payout calls' gas. */
const OPERATOR_GAS_WEI = 10n ** 18n
/** The withdrawal fee the local simulator takes (Derive's standard, derive-ts: 1 USD). */
const LOCAL_WITHDRAWAL_FEE_USD = '1'
/** The manager on Ethereum USDC's protocol asset id 1: the simulator's standard manager (SIM_SM_MANAGER_ID). */
const MANAGER_ID = 1

export interface LocalV3 {
  readonly depositManager: Address
  readonly withdrawalOutbox: Address
  readonly fundingSubaccountId: number
  /** the first deposit that opened the funding subaccount: the platform's own capital, journaled as such */
  readonly openingDeposit: { readonly txHash: Hex; readonly amount: string }
}

async function control<T>(simulatorUrl: string, op: string, body: unknown): Promise<T> {
  const res = await fetch(new URL(`/_sim/${op}`, simulatorUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  })
  if (!res.ok) throw new Error(`the simulator refused ${op} (${res.status}: ${await res.text()})`)
  return (await res.json()) as T
}

export async function setUpLocalV3(p: {
  readonly walletClient: WalletClient<Transport, Chain | undefined, Account>
  readonly publicClient: PublicClient
  readonly rpcUrl: string
  readonly simulatorUrl: string
  readonly usdc: Address
  readonly owner: Address
  /** the Ethereum hot wallet, which the treasury tick withdraws to */
  readonly hotWallet: Address
}): Promise<LocalV3> {
  const { walletClient, publicClient } = p
  const res = await fetch(new URL('/v3/public/get_currency', p.simulatorUrl), {
    method: 'POST',
    body: '{"currency":"USDC"}',
    signal: AbortSignal.timeout(10_000),
  })
  const spot = ((await res.json()) as { result?: { spot?: { address: string }[] } }).result?.spot?.[0]?.address
  if (!spot) throw new Error('the simulator names no USDC spot asset on v3')
  const asset = getAddress(spot)
  const fromBlock = await publicClient.getBlockNumber()
  const manager = await deployTestOnchainActionManager(walletClient, publicClient, [{ asset, token: p.usdc }])
  await control(p.simulatorUrl, 'watch_l1', {
    rpc_url: p.rpcUrl,
    manager,
    confirmations: 0,
    poll_ms: 1_000,
    from_block: fromBlock.toString(),
  })
  let opening: Hex | undefined
  for (const [address, abi, functionName, args] of [
    [p.usdc, testUsdcAbi, 'approve', [manager, OPENING_DEPOSIT]],
    [manager, testOnchainActionManagerAbi, 'depositToNewSubaccount', [asset, OPENING_DEPOSIT, MANAGER_ID, p.owner]],
  ] as const) {
    const hash = await walletClient.writeContract({ address, abi, functionName, args, chain: null } as never)
    const r = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    if (r.status !== 'success') throw new Error(`${functionName} reverted (${hash})`)
    opening = hash
  }
  // the watcher polls every second: the funding subaccount appears within a few
  for (let i = 0; i < 100; i++) {
    const s = await control<{ subaccounts: { id: number }[]; fallbackSubaccountId: number | null }>(
      p.simulatorUrl,
      'subaccounts',
      { owner: p.owner },
    )
    const funding = s.subaccounts.find((x) => x.id !== s.fallbackSubaccountId)
    if (funding) {
      const withdrawalOutbox = await setUpPayouts(p, { manager, asset })
      return {
        depositManager: manager,
        withdrawalOutbox,
        fundingSubaccountId: funding.id,
        openingDeposit: { txHash: opening as Hex, amount: OPENING_DEPOSIT.toString() },
      }
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the simulator did not credit the opening deposit within 10 s')
}

/** Money out: the outbox stand-in, the simulator paying through it with its own key, the hot wallet whitelisted. */
async function setUpPayouts(
  p: Parameters<typeof setUpLocalV3>[0],
  o: { manager: Address; asset: Address },
): Promise<Address> {
  const operatorKey = generatePrivateKey()
  const operator = privateKeyToAccount(operatorKey).address
  const gas = await p.walletClient.sendTransaction({ to: operator, value: OPERATOR_GAS_WEI, chain: null } as never)
  await p.publicClient.waitForTransactionReceipt({ hash: gas, pollingInterval: 50 })
  const outbox = await deployTestWithdrawalOutbox(p.walletClient, p.publicClient, {
    verifiableApp: operator,
    manager: o.manager,
    assets: [{ asset: o.asset, token: p.usdc, decimals: 6 }],
  })
  await control(p.simulatorUrl, 'pay_l1', {
    rpc_url: p.rpcUrl,
    outbox,
    operator_key: operatorKey,
    confirmations: 0,
    poll_ms: 1_000,
    fee_usd: LOCAL_WITHDRAWAL_FEE_USD,
  })
  await control(p.simulatorUrl, 'whitelist_recipient', { owner: p.owner, recipient: p.hotWallet })
  return outbox
}
