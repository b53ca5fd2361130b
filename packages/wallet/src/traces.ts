/**
 * ETH that reaches an address by an internal call (a Safe's execTransaction, an ERC-4337 account,
 * an exchange's batch payout) is no top-level transaction and leaves no log: the scanner cannot
 * see it. Parity-style trace APIs can (`trace_filter`, `trace_transaction`, served by Erigon, Reth,
 * Nethermind and anvil; public providers do not all offer them). docs/chains.md "Every deposit is
 * accounted for".
 *
 * The idempotency key of such a transfer is `tx:{chain}:{txHash}:{2^32 + traceIndex}`, where
 * traceIndex is the trace's position in `trace_transaction`'s list (depth first, the order Parity's
 * `trace_get` indexes). Log indexes stay below 2^32 − 1 (docs/chains.md "The native transfer's
 * logIndex"), and 2^32 − 1 is the top-level transfer's slot, so the three kinds never share a key.
 */
import { type Hex, numberToHex, type PublicClient } from 'viem'

/** The logIndex of internal transfers starts here: above every real log index and the top-level slot. */
export const INTERNAL_TRANSFER_LOG_INDEX_BASE = 2 ** 32
/** Blocks per `trace_filter` call (providers that serve it bound the range; 10,000 is common). */
export const TRACE_FILTER_MAX_BLOCKS = 10_000
/** Addresses per `trace_filter` call (its `toAddress` list). */
export const TRACE_FILTER_MAX_ADDRESSES = 100

/** The logIndex of an internal transfer's deposit: 2^32 + traceIndex, a safe integer. */
export function internalTransferLogIndex(traceIndex: number): number {
  const logIndex = INTERNAL_TRANSFER_LOG_INDEX_BASE + traceIndex
  if (!Number.isSafeInteger(traceIndex) || traceIndex < 0 || !Number.isSafeInteger(logIndex)) {
    throw new RangeError(`invalid trace index ${traceIndex}`)
  }
  return logIndex
}

/** One trace in Parity's format, as `trace_filter` and `trace_transaction` return it. */
export interface ParityTrace {
  readonly type: string
  readonly action: {
    readonly callType?: string
    readonly from?: string
    readonly to?: string
    readonly value?: string
    /** suicide: the contract destroyed, who receives its balance, and that balance */
    readonly address?: string
    readonly refundAddress?: string
    readonly balance?: string
  }
  readonly error?: string
  readonly traceAddress: readonly number[]
  readonly transactionHash?: string | null
  readonly transactionPosition?: number | null
  readonly blockNumber: number
  readonly blockHash?: string
}

/** A successful internal value transfer into a watched address. */
export interface InternalTransfer {
  /** lowercase */
  readonly txHash: Hex
  readonly blockNumber: bigint
  readonly transactionIndex: number
  /** the trace's position in trace_transaction's list */
  readonly traceIndex: number
  /** 2^32 + traceIndex: the deposit's logIndex and the last part of its key */
  readonly logIndex: number
  /** lowercase */
  readonly from: string
  /** lowercase, one of the addresses asked about */
  readonly to: string
  readonly valueWei: bigint
}

const sameAddress = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => x === b[i])
const isPrefix = (p: readonly number[], of: readonly number[]) => p.length < of.length && p.every((x, i) => x === of[i])

/**
 * The internal transfers into `to` in one transaction's full trace list (trace_transaction's
 * answer, in its order). Pure: what counts is decided here.
 *
 * - the top-level call (traceAddress []) is not one: it is the scanner's, credited under the
 *   top-level slot;
 * - a call moves value only as `callType: 'call'` (delegatecall and staticcall move none, and
 *   callcode's value stays with the caller); a `suicide` moves the destroyed contract's balance to
 *   its refund address without a call;
 * - a trace that failed, or whose ancestor failed (the whole transaction included), moved nothing.
 */
export function internalTransfersInTransaction(
  traces: readonly ParityTrace[],
  to: ReadonlySet<string>,
): Array<{ traceIndex: number; from: string; to: string; valueWei: bigint }> {
  const failed = traces.filter((t) => t.error !== undefined && t.error !== null).map((t) => t.traceAddress)
  const out: Array<{ traceIndex: number; from: string; to: string; valueWei: bigint }> = []
  traces.forEach((t, traceIndex) => {
    if (t.traceAddress.length === 0) return
    let recipient: string | undefined
    let from: string | undefined
    let value: string | undefined
    if (t.type === 'call' && t.action.callType === 'call') {
      recipient = t.action.to
      from = t.action.from
      value = t.action.value
    } else if (t.type === 'suicide' || t.type === 'selfdestruct') {
      recipient = t.action.refundAddress
      from = t.action.address
      value = t.action.balance
    } else {
      return
    }
    if (!recipient || !to.has(recipient.toLowerCase())) return
    const valueWei = value ? BigInt(value) : 0n
    if (valueWei <= 0n) return
    if (failed.some((f) => sameAddress(f, t.traceAddress) || isPrefix(f, t.traceAddress))) return
    out.push({ traceIndex, from: (from ?? '').toLowerCase(), to: recipient.toLowerCase(), valueWei })
  })
  return out
}

/** A node's answer meaning "this RPC method does not exist here" (not a transient failure). */
export function isMethodUnavailable(e: unknown): boolean {
  const seen = new Set<unknown>()
  let cur: unknown = e
  while (cur && typeof cur === 'object' && !seen.has(cur)) {
    seen.add(cur)
    const c = cur as { code?: unknown; details?: string; message?: string }
    if (c.code === -32601 || c.code === -32004) return true
    const msg = `${c.details ?? ''} ${c.message ?? ''}`
    if (/method not found|does not exist|not available|not supported|unsupported method|not whitelisted/i.test(msg))
      return true
    cur = (cur as { cause?: unknown }).cause
  }
  return false
}

type RequestClient = Pick<PublicClient, 'request'>

/** Per client (one per chain and process): whether its node serves the trace API. */
const traceSupport = new WeakMap<object, boolean>()

/**
 * Whether the chain's node serves `trace_filter`: asked once per client (one per chain and
 * process), then remembered. A "method not found" is a no for good; any other failure (a timeout)
 * is thrown and asked again next time.
 *
 * @example
 *   if (await traceFilterAvailable(client, 19_000_000n)) await internalTransfersTo(client, { … })
 */
export async function traceFilterAvailable(client: RequestClient, atBlock: bigint): Promise<boolean> {
  const known = traceSupport.get(client)
  if (known !== undefined) return known
  try {
    const block = numberToHex(atBlock)
    await client.request({
      method: 'trace_filter',
      params: [{ fromBlock: block, toBlock: block, toAddress: ['0x0000000000000000000000000000000000000000'] }],
    } as never)
    traceSupport.set(client, true)
    return true
  } catch (e) {
    if (!isMethodUnavailable(e)) throw e
    traceSupport.set(client, false)
    return false
  }
}

/** What the probe found for this client (undefined: not asked yet). */
export function knownTraceSupport(client: RequestClient): boolean | undefined {
  return traceSupport.get(client)
}

/** Marks the client's node as without a trace API (a trace method answered "method not found"). */
export function markTracesUnavailable(client: RequestClient): void {
  traceSupport.set(client, false)
}

export interface InternalTransferQuery {
  /** lowercase */
  readonly addresses: ReadonlySet<string>
  readonly fromBlock: bigint
  readonly toBlock: bigint
  readonly maxBlocksPerCall?: number
  readonly maxAddressesPerCall?: number
}

export interface InternalTransferResult {
  readonly transfers: InternalTransfer[]
  /** trace_filter and trace_transaction calls made */
  readonly rpcCalls: number
}

/**
 * The successful internal value transfers into `addresses` in [fromBlock, toBlock], ordered by
 * block, transaction and trace: `trace_filter` (hex block numbers, `toAddress`) finds the
 * transactions that touch them, then `trace_transaction` gives each one's full trace list, which
 * the trace index and the failure of an ancestor call need (a filtered list has neither).
 * A transaction's top-level transfer is left out: the scanner credits it.
 */
export async function internalTransfersTo(
  client: RequestClient,
  q: InternalTransferQuery,
): Promise<InternalTransferResult> {
  const maxBlocks = BigInt(q.maxBlocksPerCall ?? TRACE_FILTER_MAX_BLOCKS)
  const maxAddresses = q.maxAddressesPerCall ?? TRACE_FILTER_MAX_ADDRESSES
  const addresses = [...q.addresses]
  if (addresses.length === 0 || q.toBlock < q.fromBlock) return { transfers: [], rpcCalls: 0 }
  const calls: Array<Promise<ParityTrace[]>> = []
  for (let from = q.fromBlock; from <= q.toBlock; from += maxBlocks) {
    const to = from + maxBlocks - 1n < q.toBlock ? from + maxBlocks - 1n : q.toBlock
    for (let i = 0; i < addresses.length; i += maxAddresses) {
      calls.push(
        client.request({
          method: 'trace_filter',
          params: [
            { fromBlock: numberToHex(from), toBlock: numberToHex(to), toAddress: addresses.slice(i, i + maxAddresses) },
          ],
        } as never) as Promise<ParityTrace[]>,
      )
    }
  }
  const found = (await Promise.all(calls)).flat()
  // transactions with a candidate: an internal trace into one of the addresses, carrying value
  const txs = new Map<string, { blockNumber: number; position: number }>()
  for (const t of found) {
    if (!t.transactionHash || t.traceAddress.length === 0) continue
    const recipient = (t.type === 'call' ? t.action.to : t.action.refundAddress)?.toLowerCase()
    if (!recipient || !q.addresses.has(recipient)) continue
    txs.set(t.transactionHash.toLowerCase(), { blockNumber: t.blockNumber, position: t.transactionPosition ?? 0 })
  }
  const hashes = [...txs.keys()]
  const lists = await Promise.all(
    hashes.map(
      (hash) => client.request({ method: 'trace_transaction', params: [hash] } as never) as Promise<ParityTrace[]>,
    ),
  )
  const transfers: InternalTransfer[] = []
  hashes.forEach((hash, i) => {
    const where = txs.get(hash) as { blockNumber: number; position: number }
    for (const t of internalTransfersInTransaction(lists[i] ?? [], q.addresses)) {
      transfers.push({
        txHash: hash as Hex,
        blockNumber: BigInt(where.blockNumber),
        transactionIndex: where.position,
        traceIndex: t.traceIndex,
        logIndex: internalTransferLogIndex(t.traceIndex),
        from: t.from,
        to: t.to,
        valueWei: t.valueWei,
      })
    }
  })
  transfers.sort((a, b) =>
    a.blockNumber !== b.blockNumber
      ? a.blockNumber < b.blockNumber
        ? -1
        : 1
      : a.transactionIndex - b.transactionIndex || a.traceIndex - b.traceIndex,
  )
  return { transfers, rpcCalls: calls.length + hashes.length }
}
