/**
 * The deposit scanner: which transfers into deposit addresses a confirmed block range holds.
 *
 * Its cost grows with the blocks scanned and the deposits found, never with the number of
 * deposit addresses: ERC-20 deposits come from eth_getLogs over the token contracts (filtered by
 * recipient here, against an in-memory lookup), native ETH from the blocks' transactions, and
 * only a candidate native deposit costs one more call (its receipt). No per-address polling.
 *
 * The caller owns the cursor and the depth: it passes a range that is already `confirmations`
 * deep (chains.ts), records what comes back, then advances. Scanning a range twice returns the
 * same deposits with the same (txHash, logIndex), so the ledger's keys deduplicate a replay.
 */
import { type Address, getAddress, type Hex, numberToHex, type PublicClient } from 'viem'
import type { ChainName, TokenInfo } from './chains'
import {
  type BlockRange,
  chunkRange,
  halveRange,
  isLogsLimitError,
  NATIVE_TRANSFER_LOG_INDEX,
  type NativeCandidate,
  nativeCandidates,
  parseTransferLog,
  type RpcBlock,
  type RpcLog,
  type RpcReceipt,
  TRANSFER_TOPIC,
} from './scan-parse'

export interface ScanLimits {
  /** the widest range one scan accepts; the tick scans a bounded batch and comes back */
  maxBlocksPerScan: number
  /** blocks per eth_getLogs call; halved (for the rest of the scan) when a provider refuses */
  maxBlocksPerLogsCall: number
  /** a larger eth_getLogs answer is dropped and its range halved */
  maxLogsPerCall: number
  /** eth_getLogs calls in flight together */
  maxLogsCallsInFlight: number
  /** eth_getBlockByNumber(n, true) calls in flight together (one batched HTTP request) */
  maxBlocksInFlight: number
  /** eth_getTransactionReceipt calls in flight together */
  maxReceiptsInFlight: number
}

export const DEFAULT_SCAN_LIMITS: Readonly<ScanLimits> = Object.freeze({
  maxBlocksPerScan: 10_000,
  maxBlocksPerLogsCall: 1_000,
  maxLogsPerCall: 10_000,
  maxLogsCallsInFlight: 4,
  maxBlocksInFlight: 50,
  maxReceiptsInFlight: 100,
})

/** One transfer into a deposit address. */
export interface Deposit {
  readonly chain: ChainName
  readonly txHash: Hex
  /**
   * The log's index in its block for ERC-20; NATIVE_TRANSFER_LOG_INDEX for native ETH.
   * With chain and txHash it forms the key `tx:{chain}:{txHash}:{logIndex}` (spec 6.1).
   */
  readonly logIndex: number
  readonly transactionIndex: number
  readonly blockNumber: bigint
  readonly blockHash: Hex
  readonly token: TokenInfo['symbol']
  /** EIP-55 */
  readonly to: Address
  /** EIP-55; the zero address for a mint */
  readonly from: Address
  readonly amountBaseUnits: bigint
  /** the deposit address's hd_index, from the caller's lookup */
  readonly hdIndex: number
}

export interface ScanStats {
  /** JSON-RPC calls made (several may share one HTTP request when the transport batches) */
  rpcCalls: number
  callsByMethod: Record<string, number>
  blocks: number
  logsRead: number
  transactionsRead: number
  /** transfers into deposit addresses below the token's minDepositBaseUnits */
  dustIgnored: number
}

export interface ScanDepositsParams {
  chain: ChainName
  client: Pick<PublicClient, 'request'>
  /** inclusive; already at confirmed depth */
  fromBlock: bigint
  /** inclusive; already at confirmed depth */
  toBlock: bigint
  /** the chain's accepted tokens (registry): `contract: null` is the native asset */
  tokens: readonly TokenInfo[]
  /** hd_index of a deposit address, or undefined; receives lowercase addresses (depositAddressLookup) */
  isDepositAddress: (lowercaseAddress: Hex) => number | undefined
  /**
   * Senders whose transfers are not deposits, lowercase: the gas wallet's top-ups of deposit
   * addresses (the service's own transactions, keyed by their own slots) must not credit a user.
   */
  ignoreFrom?: (lowercaseAddress: Hex) => boolean
  limits?: Partial<ScanLimits>
}

export interface ScanResult {
  /** ordered by block, transaction, log */
  deposits: Deposit[]
  stats: ScanStats
}

/** The range asked for is empty, too wide, or beyond the chain's head. */
export class ScanRangeError extends RangeError {
  readonly code = 'SCAN_RANGE_INVALID'
  constructor(
    message: string,
    readonly fromBlock: bigint,
    readonly toBlock: bigint,
  ) {
    super(message)
    this.name = 'ScanRangeError'
  }
}

/** The chain answered with two different blocks at one height during a scan: scan again later. */
export class ChainReorgError extends Error {
  readonly code = 'CHAIN_REORG'
  readonly retryable = true
  constructor(
    readonly blockNumber: bigint,
    readonly expectedHash: Hex,
    readonly seenHash: Hex,
  ) {
    super(`block ${blockNumber} changed during the scan (${expectedHash} then ${seenHash})`)
    this.name = 'ChainReorgError'
  }
}

/** A single block holds more logs than the provider (or maxLogsPerCall) allows in one answer. */
export class LogsLimitError extends Error {
  readonly code = 'LOGS_LIMIT'
  constructor(
    readonly blockNumber: bigint,
    override readonly cause?: unknown,
  ) {
    super(`eth_getLogs refuses even the single block ${blockNumber}`)
    this.name = 'LogsLimitError'
  }
}

/**
 * Finds the deposits in [fromBlock, toBlock].
 *
 * @example
 *   const { deposits } = await scanDeposits({
 *     chain: 'base', client: clients.get('base')!.publicClient,
 *     fromBlock: cursor + 1n, toBlock: head - BigInt(info.confirmations),
 *     tokens: info.tokens, isDepositAddress: depositAddressLookup(entries),
 *   })
 */
export async function scanDeposits(params: ScanDepositsParams): Promise<ScanResult> {
  const limits = { ...DEFAULT_SCAN_LIMITS, ...params.limits }
  const { fromBlock, toBlock } = params
  if (fromBlock < 0n || toBlock < fromBlock) {
    throw new ScanRangeError(`empty block range [${fromBlock}, ${toBlock}]`, fromBlock, toBlock)
  }
  const blocks = toBlock - fromBlock + 1n
  if (blocks > BigInt(limits.maxBlocksPerScan)) {
    throw new ScanRangeError(
      `${blocks} blocks exceed maxBlocksPerScan (${limits.maxBlocksPerScan})`,
      fromBlock,
      toBlock,
    )
  }
  const stats: ScanStats = {
    rpcCalls: 0,
    callsByMethod: {},
    blocks: Number(blocks),
    logsRead: 0,
    transactionsRead: 0,
    dustIgnored: 0,
  }
  // Raw requests: the scan reads hex fields itself and converts only what it keeps.
  const request = params.client.request as unknown as (args: { method: string; params: unknown[] }) => Promise<unknown>
  function rpc<T>(method: string, args: unknown[]): Promise<T> {
    stats.rpcCalls++
    stats.callsByMethod[method] = (stats.callsByMethod[method] ?? 0) + 1
    return request({ method, params: args }) as Promise<T>
  }

  // eth_getLogs quietly stops at the head; a range past it would advance the cursor over
  // blocks never read. One call guards that.
  const head = BigInt(await rpc<Hex>('eth_blockNumber', []))
  if (toBlock > head) {
    throw new ScanRangeError(`toBlock ${toBlock} is beyond the chain head ${head}`, fromBlock, toBlock)
  }

  const erc20 = params.tokens.filter((t) => t.contract !== null)
  const native = params.tokens.find((t) => t.contract === null)
  const ignoreFrom = params.ignoreFrom ?? (() => false)
  const range = { from: fromBlock, to: toBlock }

  const [logDeposits, nativeScan] = await Promise.all([
    erc20.length > 0 ? scanErc20(rpc, range, erc20, params, ignoreFrom, limits, stats) : [],
    native ? scanNative(rpc, range, native, params, ignoreFrom, limits, stats) : undefined,
  ])

  // Both halves read the same heights; a block hash that differs between them means the range
  // was not final after all. Refuse rather than record a mix of two chains.
  if (nativeScan) {
    for (const d of logDeposits) {
      const seen = nativeScan.blockHashes.get(d.blockNumber)
      if (seen !== undefined && seen !== d.blockHash) throw new ChainReorgError(d.blockNumber, seen, d.blockHash)
    }
  }
  const deposits = [...logDeposits, ...(nativeScan?.deposits ?? [])].sort(
    (a, b) =>
      (a.blockNumber < b.blockNumber ? -1 : a.blockNumber > b.blockNumber ? 1 : 0) ||
      a.transactionIndex - b.transactionIndex ||
      a.logIndex - b.logIndex,
  )
  return { deposits, stats }
}

type Rpc = <T>(method: string, params: unknown[]) => Promise<T>

async function scanErc20(
  rpc: Rpc,
  range: BlockRange,
  tokens: readonly TokenInfo[],
  params: ScanDepositsParams,
  ignoreFrom: (a: Hex) => boolean,
  limits: ScanLimits,
  stats: ScanStats,
): Promise<Deposit[]> {
  const byContract = new Map(tokens.map((t) => [(t.contract as Address).toLowerCase(), t]))
  const addresses = [...byContract.keys()]
  let chunkBlocks = limits.maxBlocksPerLogsCall
  const queue = chunkRange(range, chunkBlocks)
  const deposits: Deposit[] = []
  const tooMany = Symbol('too many logs')

  while (queue.length > 0) {
    const wave = queue.splice(0, limits.maxLogsCallsInFlight)
    const answers = await Promise.allSettled(
      wave.map((r) =>
        rpc<RpcLog[]>('eth_getLogs', [
          {
            address: addresses,
            topics: [TRANSFER_TOPIC],
            fromBlock: numberToHex(r.from),
            toBlock: numberToHex(r.to),
          },
        ]).then((logs) => (logs.length > limits.maxLogsPerCall ? Promise.reject(tooMany) : logs)),
      ),
    )
    const retry: BlockRange[] = []
    answers.forEach((answer, i) => {
      const r = wave[i] as BlockRange
      if (answer.status === 'fulfilled') {
        stats.logsRead += answer.value.length
        for (const log of answer.value) {
          const d = depositOfLog(log, byContract, params, ignoreFrom, stats)
          if (d) deposits.push(d)
        }
        return
      }
      if (answer.reason !== tooMany && !isLogsLimitError(answer.reason)) throw answer.reason
      if (r.from === r.to) throw new LogsLimitError(r.from, answer.reason)
      // the provider's limit is in blocks or in results: halve this range, and the chunks after it
      chunkBlocks = Math.max(1, Math.min(chunkBlocks, Math.ceil(Number(r.to - r.from + 1n) / 2)))
      retry.push(...halveRange(r))
    })
    // re-cut what is left with the smaller chunk size; the halves go first so order is kept
    const rest = queue.splice(0)
    queue.push(...retry.flatMap((r) => chunkRange(r, chunkBlocks)))
    for (const r of rest) queue.push(...chunkRange(r, chunkBlocks))
  }
  return deposits
}

function depositOfLog(
  log: RpcLog,
  byContract: Map<string, TokenInfo>,
  params: ScanDepositsParams,
  ignoreFrom: (a: Hex) => boolean,
  stats: ScanStats,
): Deposit | undefined {
  if (log.removed) throw new ChainReorgError(BigInt(log.blockNumber), log.blockHash, log.blockHash)
  const t = parseTransferLog(log)
  if (!t) return undefined
  const hdIndex = params.isDepositAddress(t.to)
  if (hdIndex === undefined || ignoreFrom(t.from)) return undefined
  const token = byContract.get(t.contract)
  if (!token) return undefined
  if (t.amountBaseUnits < token.minDepositBaseUnits) {
    stats.dustIgnored++
    return undefined
  }
  return {
    chain: params.chain,
    txHash: t.txHash,
    logIndex: t.logIndex,
    transactionIndex: t.transactionIndex,
    blockNumber: t.blockNumber,
    blockHash: t.blockHash,
    token: token.symbol,
    to: getAddress(t.to),
    from: getAddress(t.from),
    amountBaseUnits: t.amountBaseUnits,
    hdIndex,
  }
}

async function scanNative(
  rpc: Rpc,
  range: BlockRange,
  token: TokenInfo,
  params: ScanDepositsParams,
  ignoreFrom: (a: Hex) => boolean,
  limits: ScanLimits,
  stats: ScanStats,
): Promise<{ deposits: Deposit[]; blockHashes: Map<bigint, Hex> }> {
  const blockHashes = new Map<bigint, Hex>()
  const candidates: (NativeCandidate & { blockNumber: bigint; blockHash: Hex })[] = []
  const isDeposit = (a: Hex) => params.isDepositAddress(a)
  // candidates from 1 wei up, so that dust is counted before it is dropped
  for (const wave of chunkRange(range, limits.maxBlocksInFlight)) {
    const heights: bigint[] = []
    for (let n = wave.from; n <= wave.to; n++) heights.push(n)
    const fetched = await Promise.all(
      heights.map((n) => rpc<RpcBlock | null>('eth_getBlockByNumber', [numberToHex(n), true])),
    )
    fetched.forEach((block, i) => {
      const n = heights[i] as bigint
      if (!block) throw new ScanRangeError(`block ${n} not found`, range.from, range.to)
      if (BigInt(block.number) !== n) throw new ChainReorgError(n, block.hash, block.hash)
      blockHashes.set(n, block.hash)
      stats.transactionsRead += block.transactions.length
      for (const c of nativeCandidates(block, isDeposit, 1n, ignoreFrom)) {
        if (c.amountBaseUnits < token.minDepositBaseUnits) stats.dustIgnored++
        else candidates.push({ ...c, blockNumber: n, blockHash: block.hash })
      }
    })
  }

  // A call into an EOA cannot fail, but a deposit address may carry code (EIP-7702), and a
  // failed transaction moves no value: only a successful receipt makes a deposit.
  const deposits: Deposit[] = []
  for (let i = 0; i < candidates.length; i += limits.maxReceiptsInFlight) {
    const wave = candidates.slice(i, i + limits.maxReceiptsInFlight)
    const receipts = await Promise.all(wave.map((c) => rpc<RpcReceipt | null>('eth_getTransactionReceipt', [c.txHash])))
    receipts.forEach((receipt, j) => {
      const c = wave[j] as (typeof candidates)[number]
      if (!receipt) throw new ChainReorgError(c.blockNumber, c.blockHash, '0x')
      if (receipt.blockHash !== c.blockHash) throw new ChainReorgError(c.blockNumber, c.blockHash, receipt.blockHash)
      if (receipt.status !== '0x1') return
      deposits.push({
        chain: params.chain,
        txHash: c.txHash,
        logIndex: NATIVE_TRANSFER_LOG_INDEX,
        transactionIndex: c.transactionIndex,
        blockNumber: c.blockNumber,
        blockHash: c.blockHash,
        token: token.symbol,
        to: getAddress(c.to),
        from: getAddress(c.from),
        amountBaseUnits: c.amountBaseUnits,
        hdIndex: c.hdIndex,
      })
    })
  }
  return { deposits, blockHashes }
}
