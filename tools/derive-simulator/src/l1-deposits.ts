/**
 * Derive v3's money in, simulated: the simulator watches an OnchainActionManager-shaped contract on
 * an L1 node (contracts/TestOnchainActionManager.sol of @wh/wallet on anvil) and credits each
 * deposit it queues, as Derive's sequencer does (docs/exchange-v3.md "Money in").
 *
 * - `deposit(asset, amount, subaccountId, fallbackRecipient)` credits the subaccount; a deposit to
 *   one that does not exist lands in the fallback recipient's fallback subaccount instead (created
 *   with its account on first need), as Derive's depositing docs describe.
 * - `depositToNewSubaccount(asset, amount, managerId, owner)` creates a subaccount for the owner
 *   (its account and fallback subaccount first, when this is the owner's first deposit) and credits it.
 *
 * Finality: a queued action is applied once its block is `confirmations` deep. The watcher reads
 * logs only up to that depth, so a reorg above it is never followed, and it applies each action id
 * once, in order (a log served twice, or again after a reorg under the depth, changes nothing).
 * Amounts arrive in the token's decimals and become the engine's e18 exactly (no rounding: every
 * collateral has at most 18 decimals).
 */
import { type Address, createPublicClient, decodeAbiParameters, getAddress, type Hex, http, parseAbiItem } from 'viem'
import { creditDeposit, fallbackSubaccount, newSubaccount } from './accounts'
import { type CollateralAsset, collateralByAddress } from './assets'
import type { SimEngine } from './engine'
import { applyL1SessionKey } from './session-keys'
import type { SimSubaccount, SimWallet } from './sim-types'
import { accountOfOwner } from './v3/verify'

export const PUBLIC_ACTION_QUEUED = parseAbiItem(
  'event PublicActionQueued(uint256 indexed actionId, address indexed sender, uint256 indexed actionType, bytes data, bytes32 acc)',
)
/** The stand-in contract's action type codes (its DEPOSIT_TYPE and DEPOSIT_TO_NEW_SUBACCOUNT_TYPE). */
/**
 * The action types the simulator applies: the stand-in's deposits, and Derive's public L1 action 51, a
 * session key set by the owner itself (a multisig's path: derive-ts ONCHAIN_ACTION_TYPE.SetSessionKey).
 */
export const L1_ACTION = { deposit: 1n, depositToNewSubaccount: 2n, setSessionKey: 51n } as const

/** Per engine, the last action id applied: a second watcher (a restart) never applies one twice. */
const appliedThrough = new WeakMap<SimEngine, bigint>()

export interface L1DepositWatchOptions {
  /** the L1 node's JSON-RPC URL */
  readonly rpcUrl: string
  /** the OnchainActionManager-shaped contract */
  readonly manager: Address
  /** how deep a deposit's block must be before it is credited (0: at once) */
  readonly confirmations: number
  /** how often to read the chain; 0 polls only when `poll()` is called (tests) */
  readonly pollMs: number
  /** the first block to read (the manager's deployment) */
  readonly fromBlock?: bigint
}

export interface L1DepositWatcher {
  /** reads the chain once and applies what is final; resolves to how many actions were applied */
  poll(): Promise<number>
  /** the last action id applied (0 before the first) */
  lastActionId(): bigint
  stop(): Promise<void>
}

/** The watchers a running simulator started through its control API (`POST /_sim/watch_l1`), stopped with it. */
const started = new WeakMap<SimEngine, L1DepositWatcher[]>()

/** Starts a watcher the simulator owns: `stopL1Watchers` (the server's close) stops it. */
export function startOwnedL1Watcher(engine: SimEngine, o: L1DepositWatchOptions): L1DepositWatcher {
  const w = watchL1Deposits(engine, o)
  started.set(engine, [...(started.get(engine) ?? []), w])
  return w
}

export async function stopL1Watchers(engine: SimEngine): Promise<void> {
  const ws = started.get(engine) ?? []
  started.delete(engine)
  await Promise.all(ws.map((w) => w.stop()))
}

export function watchL1Deposits(engine: SimEngine, o: L1DepositWatchOptions): L1DepositWatcher {
  const client = createPublicClient({ transport: http(o.rpcUrl, { retryCount: 0 }) })
  const manager = getAddress(o.manager)
  let nextBlock = o.fromBlock ?? 0n
  let running: Promise<number> | undefined
  let stopped = false

  const readOnce = async (): Promise<number> => {
    const head = await client.getBlockNumber({ cacheTime: 0 })
    const safe = head - BigInt(o.confirmations)
    if (safe < nextBlock) return 0
    const logs = await client.getLogs({
      address: manager,
      event: PUBLIC_ACTION_QUEUED,
      fromBlock: nextBlock,
      toBlock: safe,
    })
    let count = 0
    for (const log of logs) {
      const { actionId, actionType, data, sender } = log.args
      const applied = appliedThrough.get(engine) ?? 0n
      if (actionId === undefined || actionType === undefined || data === undefined || actionId <= applied) continue
      if (applyAction(engine, actionType, data, `l1:${actionId}`, log.transactionHash ?? '0x', sender)) count++
      appliedThrough.set(engine, actionId)
    }
    nextBlock = safe + 1n
    return count
  }
  // one read at a time: a timer tick and a test's poll() never interleave
  const poll = (): Promise<number> => {
    running ??= readOnce().finally(() => {
      running = undefined
    })
    return running
  }

  const timer =
    o.pollMs > 0
      ? setInterval(() => {
          if (!stopped) poll().catch(() => {}) // a node hiccup: the next tick reads the same range again
        }, o.pollMs)
      : undefined
  return {
    poll,
    lastActionId: () => appliedThrough.get(engine) ?? 0n,
    async stop() {
      stopped = true
      if (timer) clearInterval(timer)
      await running?.catch(() => {})
    },
  }
}

/**
 * One queued action, decoded by its type and applied to the engine; false when it changes nothing
 * here (an unknown type, an asset the simulator does not list: the real manager accepts only the
 * protocol's assets, the stand-in only those its owner mapped; a session key Derive would ignore).
 */
export function applyAction(
  engine: SimEngine,
  actionType: bigint,
  data: Hex,
  txId: string,
  txHash: Hex,
  sender?: Address,
): boolean {
  if (actionType === L1_ACTION.setSessionKey) return sender !== undefined && applyL1SessionKey(engine, sender, data)
  if (actionType === L1_ACTION.deposit) {
    const [asset, amount, subaccountId, fallback] = decodeAbiParameters(
      [{ type: 'address' }, { type: 'uint256' }, { type: 'uint64' }, { type: 'address' }],
      data,
    )
    const c = collateralByAddress(asset)
    if (!c) return false
    const target =
      engine.subaccounts.get(Number(subaccountId)) ?? fallbackSubaccount(engine, accountOf(engine, fallback))
    credit(engine, target, c, amount, { id: txId, txHash, created: false })
    return true
  }
  if (actionType === L1_ACTION.depositToNewSubaccount) {
    const [asset, amount, , owner] = decodeAbiParameters(
      [{ type: 'address' }, { type: 'uint256' }, { type: 'uint32' }, { type: 'address' }],
      data,
    )
    const c = collateralByAddress(asset)
    if (!c) return false
    const wallet = accountOf(engine, owner)
    fallbackSubaccount(engine, wallet) // the account's first deposit opens its fallback too
    credit(engine, newSubaccount(engine, wallet.wallet, 'SM'), c, amount, { id: txId, txHash, created: true })
    return true
  }
  return false
}

/** The owner's account, opened by its first deposit (v3 has no separate Derive wallet: the owner is the account). */
function accountOf(engine: SimEngine, owner: Address): SimWallet {
  return accountOfOwner(engine, owner) ?? engine.registerWallet(getAddress(owner))
}

function credit(
  engine: SimEngine,
  sub: SimSubaccount,
  c: CollateralAsset,
  units: bigint,
  tx: { id: string; txHash: Hex; created: boolean },
) {
  creditDeposit(engine, sub, c.name, units * 10n ** BigInt(18 - c.decimals), tx)
}
