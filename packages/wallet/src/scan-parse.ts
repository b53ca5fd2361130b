/**
 * Pure pieces of the deposit scanner: raw JSON-RPC shapes in, plain values out. Raw shapes
 * (not viem's formatted ones) because a scan reads every transaction of every block, and only
 * the few that pay a deposit address are worth converting.
 */
import type { Address, Hex } from 'viem'

/** keccak256('Transfer(address,address,uint256)'): the ERC-20 (and ERC-721) Transfer topic. */
export const TRANSFER_TOPIC: Hex = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

/**
 * The logIndex a native ETH transfer takes in its idempotency key `tx:{chain}:{txHash}:{logIndex}`
 * (spec 6.1). A native transfer has no log, so it needs a slot that no log can ever hold:
 * - ERC-20 log indexes are positions of logs in their block, from 0; a block would need more than
 *   2^32 − 1 logs (at ≥ 375 gas a log, over 1.6e12 gas) to reach this one, and no chain allows that.
 * - Slots 0 and 1 are what spec 6.1 gives events about transactions the service sent itself.
 * - A transaction carries exactly one top-level value, so one slot per transaction is enough.
 * The key keeps its shape: a non-negative decimal integer, the largest uint32.
 */
export const NATIVE_TRANSFER_LOG_INDEX = 4_294_967_295

/** A log as eth_getLogs returns it (hex quantities). */
export interface RpcLog {
  address: Hex
  topics: Hex[]
  data: Hex
  blockNumber: Hex
  blockHash: Hex
  transactionHash: Hex
  transactionIndex: Hex
  logIndex: Hex
  removed?: boolean
}

/** A transaction object inside eth_getBlockByNumber(n, true). */
export interface RpcTransaction {
  hash: Hex
  from: Hex
  to: Hex | null
  value: Hex
  transactionIndex: Hex
}

export interface RpcBlock {
  number: Hex
  hash: Hex
  transactions: RpcTransaction[] | Hex[]
}

export interface RpcReceipt {
  transactionHash: Hex
  blockHash: Hex
  status: Hex
}

export interface ParsedTransfer {
  /** lowercase contract address */
  contract: Hex
  /** lowercase */
  from: Hex
  /** lowercase */
  to: Hex
  amountBaseUnits: bigint
  blockNumber: bigint
  blockHash: Hex
  txHash: Hex
  transactionIndex: number
  logIndex: number
}

const ZERO_PREFIX = '0x000000000000000000000000'

function topicToAddress(topic: Hex): Hex | undefined {
  if (topic.length !== 66 || !topic.toLowerCase().startsWith(ZERO_PREFIX)) return undefined
  return `0x${topic.slice(26).toLowerCase()}`
}

/**
 * Reads an ERC-20 Transfer log; undefined for anything else that shares the topic (an ERC-721
 * Transfer has the amount as a third indexed topic and empty data).
 */
export function parseTransferLog(log: RpcLog): ParsedTransfer | undefined {
  if (log.topics.length !== 3 || log.topics[0]?.toLowerCase() !== TRANSFER_TOPIC) return undefined
  if (log.data.length !== 66) return undefined
  const from = topicToAddress(log.topics[1] as Hex)
  const to = topicToAddress(log.topics[2] as Hex)
  if (!from || !to) return undefined
  return {
    contract: log.address.toLowerCase() as Hex,
    from,
    to,
    amountBaseUnits: BigInt(log.data),
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash,
    txHash: log.transactionHash,
    transactionIndex: Number(log.transactionIndex),
    logIndex: Number(log.logIndex),
  }
}

/** An inclusive block range. */
export interface BlockRange {
  from: bigint
  to: bigint
}

/** Cuts [from, to] into consecutive inclusive chunks of at most `size` blocks. */
export function chunkRange(range: BlockRange, size: number): BlockRange[] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('chunk size must be a positive integer')
  const chunks: BlockRange[] = []
  const step = BigInt(size)
  for (let from = range.from; from <= range.to; from += step) {
    const to = from + step - 1n
    chunks.push({ from, to: to < range.to ? to : range.to })
  }
  return chunks
}

/** Splits a range of two or more blocks into two halves. */
export function halveRange(range: BlockRange): [BlockRange, BlockRange] {
  if (range.to <= range.from) throw new RangeError('a single block cannot be split')
  const mid = range.from + (range.to - range.from) / 2n
  return [
    { from: range.from, to: mid },
    { from: mid + 1n, to: range.to },
  ]
}

/** Providers' ways of saying "this eth_getLogs asks for too much": the range must shrink. */
const LIMIT_MESSAGE =
  /(too many|more than \d+|exceed|limit|response size|too large|too big|block range|query timeout|max results)/i

export function isLogsLimitError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const parts: string[] = []
  let e: unknown = error
  // viem wraps the RPC error; read the whole chain of causes
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const o = e as { message?: unknown; details?: unknown; code?: unknown; cause?: unknown }
    if (o.code === -32005) return true
    parts.push(String(o.message ?? ''), String(o.details ?? ''))
    e = o.cause
  }
  return LIMIT_MESSAGE.test(parts.join(' '))
}

/** A top-level value transfer in a block, before its receipt is checked. */
export interface NativeCandidate {
  from: Hex
  to: Hex
  amountBaseUnits: bigint
  txHash: Hex
  transactionIndex: number
  hdIndex: number
}

/**
 * The transactions of a block whose recipient is a deposit address and that carry at least
 * `minBaseUnits` of value. `isDepositAddress` receives lowercase addresses.
 */
export function nativeCandidates(
  block: RpcBlock,
  isDepositAddress: (lowercaseAddress: Hex) => number | undefined,
  minBaseUnits: bigint,
  ignoreFrom: (lowercaseAddress: Hex) => boolean,
): NativeCandidate[] {
  const out: NativeCandidate[] = []
  for (const tx of block.transactions) {
    if (typeof tx === 'string') throw new TypeError('block fetched without full transactions')
    if (tx.to === null || tx.value === '0x0') continue
    const to = tx.to.toLowerCase() as Hex
    const hdIndex = isDepositAddress(to)
    if (hdIndex === undefined) continue
    const amountBaseUnits = BigInt(tx.value)
    if (amountBaseUnits < minBaseUnits) continue
    const from = tx.from.toLowerCase() as Hex
    if (ignoreFrom(from)) continue
    out.push({ from, to, amountBaseUnits, txHash: tx.hash, transactionIndex: Number(tx.transactionIndex), hdIndex })
  }
  return out
}

/**
 * A lookup from the caller's deposit addresses (any case) to their hd_index, case-insensitive.
 * A Map: 100,000 entries take a few MB and answer in constant time.
 *
 * @example
 *   const lookup = depositAddressLookup(users.map((u) => [keyring.address(u.hdIndex), u.hdIndex]))
 *   lookup('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266') // 0
 */
export function depositAddressLookup(
  entries: Iterable<readonly [Address | string, number]>,
): (address: string) => number | undefined {
  const map = new Map<string, number>()
  for (const [address, hdIndex] of entries) map.set(address.toLowerCase(), hdIndex)
  return (address) => map.get(address.toLowerCase())
}
