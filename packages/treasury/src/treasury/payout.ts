/**
 * The L1 side of a treasury withdrawal (docs/exchange-v3.md "Money out"): Derive pushes the payout in
 * the transaction that settles the withdrawal's batch (the batch's `transaction_hash`), through its
 * WithdrawalOutbox, which emits `WithdrawalPaid(id, asset, recipient, paid, remaining)`. The outbox's
 * id derivation is not published, so the payout is recognised by what is published and ours alone:
 * the configured outbox, the recipient (the platform's hot wallet, which nobody else withdraws to),
 * the asset, in that transaction, once it is the chain's confirmations deep.
 *
 * The outbox throttles each recipient: what its bucket cannot pay is queued (`WithdrawalEnqueued`,
 * possibly the whole amount) and paid later by `processQueue`, as more `WithdrawalPaid` logs of the
 * same id, the last with `remaining` 0. So the ids the settling transaction paid or queued to the hot
 * wallet are followed: their `WithdrawalPaid` logs from the settling block up to the head less the
 * confirmations (never a log that is not final) are read and summed on every call, nothing
 * accumulated, so a reorg that drops a partial payment drops it from the sum too. A guardian's
 * `WithdrawalDiverted` or a `WithdrawalSkipped` of one of those ids, a log of them paying someone
 * else, or a settling transaction that paid and queued nothing to the hot wallet, is a problem for a
 * person, not something to follow. The logs are read in ranges of at most PAYOUT_LOG_RANGE blocks,
 * halved while a provider refuses a range as too wide (`logsOver`), so a queue that lasts days is
 * still read from providers that cap eth_getLogs.
 */
import {
  type ChainName,
  isLogsLimitError,
  WITHDRAWAL_DIVERTED_EVENT,
  WITHDRAWAL_ENQUEUED_EVENT,
  WITHDRAWAL_PAID_EVENT,
  WITHDRAWAL_SKIPPED_EVENT,
} from '@wh/wallet'
import {
  type Address,
  getAddress,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseEventLogs,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { TreasuryDeps } from '../deps'

export type L1Payout =
  | { readonly state: 'pending'; readonly reason: string }
  /** the payout went wrong or cannot be told apart: a person looks */
  | { readonly state: 'problem'; readonly reason: string }
  /** `paid` (final) arrived at the recipient so far; `remaining` is what the outbox's queue still owes */
  | { readonly state: 'queued'; readonly ids: readonly Hex[]; readonly paid: bigint; readonly remaining: bigint }
  /** paid whole: every id's last `WithdrawalPaid` (final) left nothing queued */
  | { readonly state: 'paid'; readonly ids: readonly Hex[]; readonly paid: bigint }

const OUTBOX_EVENTS = [
  WITHDRAWAL_PAID_EVENT,
  WITHDRAWAL_ENQUEUED_EVENT,
  WITHDRAWAL_DIVERTED_EVENT,
  WITHDRAWAL_SKIPPED_EVENT,
] as const

export async function l1PayoutOf(
  deps: Pick<TreasuryDeps, 'clients' | 'registry'>,
  chain: ChainName,
  p: {
    readonly txHash: Hex
    readonly outbox: Address
    readonly recipient: Address
    readonly asset: Address
    /** the ids an earlier call found in the settling transaction (the row's outbox_ids), if any */
    readonly knownIds?: readonly string[] | null
  },
): Promise<L1Payout> {
  const c = deps.clients.get(chain)
  if (!c) throw new Error(`no client for ${chain}`)
  let receipt: Awaited<ReturnType<typeof c.publicClient.getTransactionReceipt>>
  try {
    receipt = await c.publicClient.getTransactionReceipt({ hash: p.txHash })
  } catch (err) {
    if (err instanceof TransactionReceiptNotFoundError) return { state: 'pending', reason: 'the payout is not mined' }
    throw err
  }
  const confirmations = BigInt((deps.registry.get(chain) ?? c.info).confirmations)
  const head = await c.publicClient.getBlockNumber({ cacheTime: 0 })
  if (head < receipt.blockNumber + confirmations) return { state: 'pending', reason: 'the payout is not final yet' }
  if (receipt.status !== 'success') return { state: 'problem', reason: 'the settling L1 transaction reverted' }
  const outbox = getAddress(p.outbox)
  const toUs = (a: { asset: Address; recipient: Address }) =>
    isAddressEqual(a.recipient, p.recipient) && isAddressEqual(a.asset, p.asset)
  const settling = parseEventLogs({
    abi: OUTBOX_EVENTS,
    logs: receipt.logs.filter((l) => isAddressEqual(l.address, outbox)),
  })
  if (settling.some((l) => l.eventName === 'WithdrawalDiverted' && toUs(l.args)))
    return { state: 'problem', reason: 'the outbox guardian diverted it (WithdrawalDiverted)' }
  const ids = [
    ...new Set(
      settling.flatMap((l) =>
        (l.eventName === 'WithdrawalPaid' || l.eventName === 'WithdrawalEnqueued') && toUs(l.args) ? [l.args.id] : [],
      ),
    ),
  ]
  if (ids.length === 0) {
    const skipped = settling.filter((l) => l.eventName === 'WithdrawalSkipped').length
    return {
      state: 'problem',
      reason: `the settling transaction neither paid nor queued anything to the hot wallet${skipped > 0 ? ` (it skipped ${skipped} id(s) already consumed)` : ''}`,
    }
  }
  if (p.knownIds && [...p.knownIds].sort().join() !== [...ids].sort().join())
    return {
      state: 'problem',
      reason: `the settling transaction's outbox ids are not the ones stored (${p.knownIds.join()})`,
    }

  // every later word on those ids, final only: from the settling block to the head less the confirmations
  const [paidLogs, diverted, skipped] = await laterWords(c.publicClient, outbox, ids, {
    from: receipt.blockNumber,
    to: head - confirmations,
  })
  if (diverted.length > 0) return { state: 'problem', reason: 'the outbox guardian diverted it (WithdrawalDiverted)' }
  if (skipped.length > 0) return { state: 'problem', reason: `the outbox skipped its id (WithdrawalSkipped)` }
  if (paidLogs.some((l) => !toUs(l.args)))
    return { state: 'problem', reason: 'a WithdrawalPaid of its id paid another recipient or asset' }
  const order = (l: { blockNumber: bigint; logIndex: number }) => l.blockNumber * 1_000_000n + BigInt(l.logIndex)
  const sorted = [...paidLogs].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0))
  const paid = sorted.reduce((sum, l) => sum + l.args.paid, 0n)
  let remaining = 0n
  for (const id of ids) {
    const last = sorted.filter((l) => l.args.id === id).at(-1)
    // queued whole and not paid yet: what the settling transaction queued
    const queued = settling.find((l) => l.eventName === 'WithdrawalEnqueued' && l.args.id === id)
    remaining +=
      last !== undefined ? last.args.remaining : queued?.eventName === 'WithdrawalEnqueued' ? queued.args.amount : 0n
  }
  return remaining > 0n ? { state: 'queued', ids, paid, remaining } : { state: 'paid', ids, paid }
}

/** The outbox's WithdrawalPaid, WithdrawalDiverted and WithdrawalSkipped logs of `ids` over blocks `from`..`to`. */
function laterWords(
  client: PublicClient,
  outbox: Address,
  ids: readonly Hex[],
  blocks: { readonly from: bigint; readonly to: bigint },
) {
  const filter = { address: outbox, args: { id: [...ids] }, strict: true } as const
  return Promise.all([
    logsOver(blocks.from, blocks.to, (fromBlock, toBlock) =>
      client.getLogs({ ...filter, fromBlock, toBlock, event: WITHDRAWAL_PAID_EVENT }),
    ),
    logsOver(blocks.from, blocks.to, (fromBlock, toBlock) =>
      client.getLogs({ ...filter, fromBlock, toBlock, event: WITHDRAWAL_DIVERTED_EVENT }),
    ),
    logsOver(blocks.from, blocks.to, (fromBlock, toBlock) =>
      client.getLogs({ ...filter, fromBlock, toBlock, event: WITHDRAWAL_SKIPPED_EVENT }),
    ),
  ])
}

/** Blocks per eth_getLogs call when following a queued payout (hosted providers cap ranges; 2,000 passes most). */
export const PAYOUT_LOG_RANGE = 2_000n

/**
 * The logs of blocks `from`..`to` (inclusive), read in consecutive ranges of at most `step` blocks: no
 * block read twice or skipped. A range the provider refuses as too wide (`isLogsLimitError`) is halved
 * and read again, down to one block; any other error, or a single block refused, is thrown.
 */
export async function logsOver<T>(
  from: bigint,
  to: bigint,
  read: (fromBlock: bigint, toBlock: bigint) => Promise<T[]>,
  step: bigint = PAYOUT_LOG_RANGE,
): Promise<T[]> {
  const out: T[] = []
  let size = step
  for (let start = from; start <= to; ) {
    const end = start + size - 1n < to ? start + size - 1n : to
    try {
      out.push(...(await read(start, end)))
      start = end + 1n
    } catch (err) {
      if (!isLogsLimitError(err) || end === start) throw err
      size = (end - start + 1n) / 2n
    }
  }
  return out
}
