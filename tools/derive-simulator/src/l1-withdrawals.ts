/**
 * Derive v3's money out, simulated (docs/exchange-v3.md "Money out"): a `private/withdraw` is
 * debited from its subaccount when accepted and queued for the next batch; the payer, holding a
 * local operator key (the verifiable app of the outbox stand-in), submits the queued withdrawals
 * in one `executeWithdrawals` call to an outbox on the L1 node (contracts/TestWithdrawalOutbox.sol
 * of @wh/wallet on anvil), which pushes each payout in the token's own decimals to its recipient
 * out of the deposits the manager stand-in holds and emits `WithdrawalPaid`. The withdrawals'
 * batch becomes `Settled` (transaction_hash: that L1 transaction, as on Derive) once the call is
 * `confirmations` deep; a reverted call fails them (`ExecutingError`) and returns the amounts to
 * their subaccounts. The outbox may throttle a recipient (its per-recipient bucket) and queue what
 * it could not pay; on Derive a keeper pays the queues as the buckets refill, here the payer does:
 * each poll first calls `processQueue(recipient, asset, …)` for every (recipient, asset) it has paid
 * whose queue is not empty and whose bucket holds something. A batch is settled as submitted, queued
 * or not, as Derive settles it (the queue is L1's business).
 *
 * Without a payer attached, withdrawals keep the simulator's older shortcut (settled at once, the
 * owner's on-chain balance credited). A withdrawal fee (`feeUsd`, 0 by default) is taken in kind
 * from the amount: the recipient is paid `amount − fee`; a `max_fee_usd` below it fails the
 * withdrawal in its batch with nothing debited. Deterministic in tests: nothing happens between
 * `poll()` calls when `pollMs` is 0.
 */

import { divE18, toE18 } from '@wh/exchange'
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  parseAbi,
  type Transport,
  toHex,
  type WalletClient,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { COLLATERALS, type CollateralName } from './assets'
import type { SimEngine } from './engine'
import type { SimSubaccount } from './sim-types'

/** The outbox's payout entry and event, as the published Sepolia WithdrawalOutbox names them. */
export const WITHDRAWAL_OUTBOX_ABI = parseAbi([
  'function executeWithdrawals((bytes32 id, uint64 accountId, address asset, address recipient, uint128 amount)[] withdrawals)',
  'event WithdrawalPaid(bytes32 indexed id, address indexed asset, address indexed recipient, uint128 paid, uint128 remaining)',
  'function processQueue(address recipient, address asset, uint256 maxItems)',
  'function queueLength(address recipient, address asset) view returns (uint256)',
  'function pendingBucket(address recipient, address asset) view returns (uint64)',
])

/** How many queued entries one processQueue call may pay. */
const QUEUE_ITEMS_PER_CALL = 20n

/** The outbox id of an operation: Derive's derivation is not published; the stand-in hashes the operation uuid. */
export const outboxIdOf = (opUuid: string): Hex => keccak256(toHex(opUuid))

export interface QueuedPayout {
  readonly opUuid: string
  readonly subaccountId: number
  readonly asset: CollateralName
  readonly recipient: Address
  /** debited from the subaccount (e18) */
  readonly amountE18: bigint
  /** taken in kind (e18 of the asset) */
  readonly feeE18: bigint
  readonly timestampMs: number
}

interface PayerState {
  readonly feeUsdE18: bigint
  queue: QueuedPayout[]
}

const payers = new WeakMap<SimEngine, PayerState>()
/** The withdrawal fee, in USD and in units of `asset` (e18), when a payer is attached; undefined otherwise (the old shortcut). */
export function l1WithdrawalFee(engine: SimEngine, asset: CollateralName): { usdE18: bigint; e18: bigint } | undefined {
  const p = payers.get(engine)
  if (!p) return undefined
  const usdE18 = p.feeUsdE18
  return { usdE18, e18: usdE18 === 0n || asset === 'USDC' ? usdE18 : divE18(usdE18, engine.market.indexE18(asset)) }
}

/** Queues an accepted withdrawal for the next batch (its subaccount already debited). */
export function queueL1Payout(engine: SimEngine, p: QueuedPayout): void {
  const state = payers.get(engine)
  if (!state) throw new Error('no L1 payer attached')
  state.queue.push(p)
}

export interface L1PayerOptions {
  readonly rpcUrl: string
  /** the WithdrawalOutbox-shaped contract */
  readonly outbox: Address
  /** the outbox's VERIFIABLE_APP: the simulator's local operator key */
  readonly operatorKey: Hex
  /** how deep the payout call must be before the batch is Settled (0: once mined) */
  readonly confirmations: number
  /** how often to run a batch; 0 runs one only when `poll()` is called (tests) */
  readonly pollMs: number
  /** the withdrawal fee in USD, taken in kind (default 0) */
  readonly feeUsd?: string
}

export interface L1Payer {
  /** submits the queued withdrawals, or settles the submitted batch once deep enough; how many settled */
  poll(): Promise<number>
  /** withdrawals accepted and not yet settled or failed */
  pending(): number
  stop(): Promise<void>
}

interface Submitted {
  readonly hash: Hex
  readonly batch: QueuedPayout[]
}

/** The payers a running simulator started through its control API (`POST /_sim/pay_l1`), stopped with it. */
const owned = new WeakMap<SimEngine, L1Payer>()

/** Attaches a payer the simulator owns (replacing an earlier one); `stopOwnedL1Payer` (the server's close) stops it. */
export async function startOwnedL1Payer(engine: SimEngine, o: L1PayerOptions): Promise<L1Payer> {
  await stopOwnedL1Payer(engine)
  const payer = attachL1Payer(engine, o)
  owned.set(engine, payer)
  return payer
}

export async function stopOwnedL1Payer(engine: SimEngine): Promise<void> {
  const payer = owned.get(engine)
  owned.delete(engine)
  await payer?.stop()
}

export function attachL1Payer(engine: SimEngine, o: L1PayerOptions): L1Payer {
  const state: PayerState = { feeUsdE18: toE18(o.feeUsd ?? '0'), queue: [] }
  payers.set(engine, state)
  const transport = http(o.rpcUrl, { retryCount: 0 })
  const publicClient = createPublicClient({ transport })
  const account = privateKeyToAccount(o.operatorKey)
  const walletClient = createWalletClient({ account, transport })
  const outbox = getAddress(o.outbox)
  /** (recipient, asset) pairs this payer has paid: the queues it keeps an eye on */
  const paidTo = new Map<string, { recipient: Address; asset: Address }>()
  let submitted: Submitted | undefined
  let running: Promise<number> | undefined
  let stopped = false

  const submit = async (): Promise<void> => {
    if (state.queue.length === 0) return
    const batch = state.queue
    state.queue = []
    // a call that never left (the node down, a timeout) puts its batch back: the next poll pays it
    const hash = await walletClient
      .writeContract({
        address: outbox,
        abi: WITHDRAWAL_OUTBOX_ABI,
        functionName: 'executeWithdrawals',
        args: [batch.map((w) => payoutArgs(w))],
        chain: null,
        // a fixed gas (a call the vault cannot cover is mined and reverts); a throttled payout that queues writes ~5 slots more
        gas: 100_000n + 250_000n * BigInt(batch.length),
      })
      .catch((err: unknown) => {
        state.queue = [...batch, ...state.queue]
        throw err
      })
    submitted = { hash, batch }
    for (const w of batch) {
      const { recipient, asset } = payoutArgs(w)
      paidTo.set(`${recipient}:${asset}`.toLowerCase(), { recipient, asset })
    }
  }
  const settleSubmitted = async (): Promise<number> => {
    if (!submitted) return 0
    const receipt = await publicClient.getTransactionReceipt({ hash: submitted.hash }).catch(() => undefined)
    if (!receipt) return 0
    const head = await publicClient.getBlockNumber({ cacheTime: 0 })
    if (head - receipt.blockNumber < BigInt(o.confirmations)) return 0
    const { batch, hash } = submitted
    submitted = undefined
    for (const w of batch)
      receipt.status === 'success' ? settle(engine, w, hash) : fail(engine, w, 'the payout call reverted on L1')
    return receipt.status === 'success' ? batch.length : 0
  }
  const once = async (): Promise<number> => {
    await processQueues(publicClient, walletClient, outbox, paidTo.values())
    if (submitted) return settleSubmitted()
    await submit()
    return settleSubmitted()
  }
  const poll = (): Promise<number> => {
    running ??= once().finally(() => {
      running = undefined
    })
    return running
  }
  const timer =
    o.pollMs > 0
      ? setInterval(() => {
          if (!stopped) poll().catch(() => {}) // a node hiccup: the next tick tries again
        }, o.pollMs)
      : undefined
  return {
    poll,
    pending: () => state.queue.length + (submitted?.batch.length ?? 0),
    async stop() {
      stopped = true
      if (timer) clearInterval(timer)
      await running?.catch(() => {})
      if (payers.get(engine) === state) payers.delete(engine)
    },
  }
}

/** The keeper's part: each queue with something to pay now is processed (one call each). */
async function processQueues(
  publicClient: PublicClient,
  walletClient: WalletClient<Transport, Chain | undefined, Account>,
  outbox: Address,
  pairs: Iterable<{ recipient: Address; asset: Address }>,
): Promise<void> {
  for (const { recipient, asset } of pairs) {
    const read = (functionName: 'queueLength' | 'pendingBucket') =>
      publicClient.readContract({ address: outbox, abi: WITHDRAWAL_OUTBOX_ABI, functionName, args: [recipient, asset] })
    if ((await read('queueLength')) === 0n || (await read('pendingBucket')) === 0n) continue
    // not waited for (a call still pending when the next poll reads the queue is sent again and pays
    // what is left, if anything); a call refused (the vault short) is tried again next poll and does
    // not hold up the batches
    await walletClient
      .writeContract({
        address: outbox,
        abi: WITHDRAWAL_OUTBOX_ABI,
        functionName: 'processQueue',
        args: [recipient, asset, QUEUE_ITEMS_PER_CALL],
        chain: null,
      })
      .catch(() => undefined)
  }
}

/** The outbox's Withdrawal struct of a queued payout: the net amount in the token's own decimals. */
function payoutArgs(w: QueuedPayout) {
  const c = COLLATERALS[w.asset]
  const net = (w.amountE18 - w.feeE18) / 10n ** BigInt(18 - c.decimals)
  return {
    id: outboxIdOf(w.opUuid),
    accountId: BigInt(w.subaccountId),
    asset: c.address,
    recipient: w.recipient,
    amount: net,
  }
}

function settle(engine: SimEngine, w: QueuedPayout, l1TxHash: Hex): void {
  const tx = engine.transactions.get(w.opUuid)
  if (tx) {
    tx.status = 'settled'
    tx.data = { ...tx.data, l1TxHash }
  }
  engine.history.withdrawals.push({
    subaccountId: w.subaccountId,
    timestampMs: w.timestampMs,
    asset: w.asset,
    amountE18: w.amountE18,
    feeE18: w.feeE18,
    txHash: l1TxHash,
    transactionId: w.opUuid,
    recipient: w.recipient,
  })
}

function fail(engine: SimEngine, w: QueuedPayout, error: string): void {
  const tx = engine.transactions.get(w.opUuid)
  if (tx) {
    tx.status = 'reverted'
    tx.data = { ...tx.data, error }
  }
  const sub: SimSubaccount | undefined = engine.subaccounts.get(w.subaccountId)
  if (sub) sub.balances.set(w.asset, (sub.balances.get(w.asset) ?? 0n) + w.amountE18)
}
