/**
 * The local run's Derive v3 money in (`bash scripts/dev.sh`, the default protocol; docs/exchange-v3.md "Money in"): on the
 * local node, the OnchainActionManager stand-in mapping USDC's protocol asset to TestUSDC; the
 * simulator told to watch it (POST /_sim/watch_l1); and the platform's funding subaccount opened by
 * a first `depositToNewSubaccount` of 1 USDC from dev account 0 for EXCHANGE_WALLET_ADDRESS. The
 * simulator keeps no state across restarts, so this runs on every start, with a fresh manager.
 */
import {
  type Account,
  type Address,
  type Chain,
  getAddress,
  type PublicClient,
  type Transport,
  type WalletClient,
} from 'viem'
import { deployTestOnchainActionManager } from '../src/contracts/deploy'
import { testOnchainActionManagerAbi } from '../src/contracts/test-onchain-action-manager'
import { testUsdcAbi } from '../src/contracts/test-usdc'

/** USDC (6 decimals) the first deposit moves: what opens the funding subaccount. */
const OPENING_DEPOSIT = 1_000_000n
/** The manager on Ethereum USDC's protocol asset id 1: the simulator's standard manager (SIM_SM_MANAGER_ID). */
const MANAGER_ID = 1

export interface LocalV3 {
  readonly depositManager: Address
  readonly fundingSubaccountId: number
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
  for (const [address, abi, functionName, args] of [
    [p.usdc, testUsdcAbi, 'approve', [manager, OPENING_DEPOSIT]],
    [manager, testOnchainActionManagerAbi, 'depositToNewSubaccount', [asset, OPENING_DEPOSIT, MANAGER_ID, p.owner]],
  ] as const) {
    const hash = await walletClient.writeContract({ address, abi, functionName, args, chain: null } as never)
    const r = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    if (r.status !== 'success') throw new Error(`${functionName} reverted (${hash})`)
  }
  // the watcher polls every second: the funding subaccount appears within a few
  for (let i = 0; i < 100; i++) {
    const s = await control<{ subaccounts: { id: number }[]; fallbackSubaccountId: number | null }>(
      p.simulatorUrl,
      'subaccounts',
      { owner: p.owner },
    )
    const funding = s.subaccounts.find((x) => x.id !== s.fallbackSubaccountId)
    if (funding) return { depositManager: manager, fundingSubaccountId: funding.id }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the simulator did not credit the opening deposit within 10 s')
}
