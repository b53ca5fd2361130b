/**
 * The deposit watch (one repeatable tick per chain, queue `deposits`): finds confirmed transfers
 * into deposit addresses and records each as a `deposits` row and a `deposit_detected` event.
 * docs/chains.md "The watch tick".
 *
 * Exactly once, crash or not: the rows, the events and the cursor move in ONE Postgres
 * transaction. A crash before the commit leaves the cursor where it was and the next run scans the
 * same blocks again; after the commit the cursor is past them, and a replay anyway meets the
 * unique (chain, tx_hash, log_index) of deposits and the journal's key `tx:{chain}:{txHash}:{logIndex}`
 * (spec 6.1, 6 rule 3). The cursor only reaches `head − confirmations` (the registry's depth).
 * The rows and events are written by @wh/deposits' `recordDetected`, in this transaction.
 */
import { LOCK_TTL_MS } from '@wh/config'
import type { Sql } from '@wh/db'
import { recordScanLag, withLock } from '@wh/jobs'
import {
  type Alerter,
  advanceCursor,
  type ChainClients,
  type ChainGuard,
  type ChainInfo,
  type ChainName,
  ChainReorgError,
  type Deposit,
  type DepositKeyring,
  haltCursor,
  loadCursor,
  lockCursor,
  ScanRangeError,
  type ScanStats,
  scanDeposits,
} from '@wh/wallet'
import type { Redis } from 'ioredis'
import { type Address, type Hex, numberToHex } from 'viem'
import type { RunLog } from '../log'
import { recordDetected } from '../transitions'
import { ADDRESS_SYNC_BATCH, DepositAddressBook, syncDepositAddresses } from './address-book'

export const DEPOSIT_SCAN_EVERY_MS = 5_000
/** Blocks one tick scans at most; a chain that is behind catches up over several ticks. */
export const MAX_BLOCKS_PER_SCAN_TICK = 1_000
/** Where a chain's first scan starts, below its confirmed head (no cursor yet). */
export const INITIAL_LOOKBACK_BLOCKS = 10_000n
/** Address-book batches per tick; a larger backlog postpones the scan to the next tick. */
export const ADDRESS_SYNC_MAX_BATCHES = 4

export const depositScanTickName = (chain: ChainName) => `deposits-scan-${chain}`

/** What the scan reads (the worker's deps and the process's address book satisfy it). */
export interface DepositScanDeps {
  readonly sql: Sql
  /** the scan-lag metric and the halt alert's claim */
  readonly redis: Redis
  /** derives the addresses of users who have none stored yet */
  readonly keyring: DepositKeyring
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  /** its top-ups of deposit addresses are the service's own transfers, not deposits */
  readonly gasWallet: { readonly address: Address }
  readonly alerter: Pick<Alerter, 'alert'>
  readonly addressBook: DepositAddressBook
}

/** What the scan tick reads: the scan's deps without the book (one per process), and the chain guard. */
export type DepositScanTickDeps = Omit<DepositScanDeps, 'addressBook'> & {
  readonly chainGuard: Pick<ChainGuard, 'ready'>
}

export interface DepositScanOptions {
  maxBlocks?: number
  /** runs inside the transaction just before the cursor moves (the crash test throws here) */
  beforeCommit?: () => Promise<void> | void
}

export interface DepositScanResult {
  chain: ChainName
  /**
   * 'behind-on-addresses': users without a stored address remain; nothing was scanned.
   * 'halted': a reorg went past the cursor; nothing is credited until an operator resumes.
   */
  status: 'scanned' | 'up-to-date' | 'behind-on-addresses' | 'halted'
  fromBlock?: bigint
  toBlock?: bigint
  /** the cursor after the tick: the next block to scan */
  nextBlock?: bigint
  detected: number
  /** deposits whose events were already in the journal (a replay) */
  duplicates: number
  stats?: ScanStats
}

/** A deposit's recipient is in the lookup but not in deposit_addresses as read now: a bug, stop. */
export class DepositOwnerMismatchError extends Error {
  readonly code = 'DEPOSIT_OWNER_MISMATCH'
  constructor(readonly hdIndex: number) {
    super(`deposit address of hd_index ${hdIndex} disagrees with deposit_addresses`)
    this.name = 'DepositOwnerMismatchError'
  }
}

/** The cursor moved while this tick scanned (another replica, past the Redis lock): discard. */
export class CursorMovedError extends Error {
  readonly code = 'CURSOR_MOVED'
  readonly retryable = true
  constructor(readonly chain: ChainName) {
    super(`the ${chain} cursor moved during the scan`)
    this.name = 'CursorMovedError'
  }
}

/** One process's address books, by deps object (built once in main.ts, so one book per process). */
const books = new WeakMap<object, DepositAddressBook>()
export function addressBookFor(deps: object): DepositAddressBook {
  let book = books.get(deps)
  if (!book) {
    book = new DepositAddressBook()
    books.set(deps, book)
  }
  return book
}

/** The hash of block `n` as the node answers now, undefined when it has no such block. */
async function blockHashAt(client: DepositScanClient, n: bigint): Promise<Hex | undefined> {
  const block = (await client.request({ method: 'eth_getBlockByNumber', params: [numberToHex(n), false] })) as {
    hash?: Hex
  } | null
  return block?.hash ?? undefined
}

type DepositScanClient = NonNullable<ReturnType<DepositScanDeps['clients']['get']>>['publicClient']

/**
 * The highest block the watch may read: the chain's `finalized` block where the registry says it
 * has one, never above `head − confirmations` (docs/chains.md "The watch tick").
 */
export async function scanTarget(
  client: DepositScanClient,
  info: { finality: 'finalized' | 'depth'; confirmations: number },
  head: bigint,
): Promise<bigint> {
  const byDepth = head - BigInt(info.confirmations)
  if (info.finality === 'depth') return byDepth
  const finalized = (await client.request({ method: 'eth_getBlockByNumber', params: ['finalized', false] })) as {
    number?: Hex
  } | null
  if (!finalized?.number) return -1n // nothing final yet: nothing to read
  const n = BigInt(finalized.number)
  return n < byDepth ? n : byDepth
}

/**
 * One run of the watch for `chain`: sync the address book, scan [cursor, min(cursor + maxBlocks,
 * head − confirmations)], and record deposits, events and the new cursor in one transaction.
 *
 * @example
 *   const r = await scanChainDeposits({ ...deps, addressBook: addressBookFor(deps) }, 'base')
 *   r.detected // deposits recorded by this run
 */
export async function scanChainDeposits(
  deps: DepositScanDeps,
  chain: ChainName,
  opts: DepositScanOptions = {},
): Promise<DepositScanResult> {
  const info = deps.registry.get(chain)
  const clients = deps.clients.get(chain)
  if (!info || !clients) throw new Error(`chain ${chain} is not configured`)
  // the head first, addresses second: every user who could have been shown an address before a
  // block at or below this head is in the book before that block is read
  const head = BigInt(await clients.publicClient.request({ method: 'eth_blockNumber' }))
  const confirmedHead = await scanTarget(clients.publicClient, info, head)

  let complete = false
  for (let i = 0; i < ADDRESS_SYNC_MAX_BATCHES && !complete; i++) {
    complete = (await syncDepositAddresses(deps.sql, deps.keyring, ADDRESS_SYNC_BATCH)).complete
  }
  if (!complete) return { chain, status: 'behind-on-addresses', detected: 0, duplicates: 0 }
  await deps.addressBook.refresh(deps.sql)

  const initial = confirmedHead - INITIAL_LOOKBACK_BLOCKS > 0n ? confirmedHead - INITIAL_LOOKBACK_BLOCKS : 0n
  const cursor = await loadCursor(deps.sql, chain, initial < 0n ? 0n : initial)
  const fromBlock = cursor.nextBlock
  if (await haltedOrReorged(deps, chain, clients.publicClient, cursor))
    return { chain, status: 'halted', nextBlock: fromBlock, detected: 0, duplicates: 0 }
  const maxBlocks = BigInt(opts.maxBlocks ?? MAX_BLOCKS_PER_SCAN_TICK)
  const toBlock = confirmedHead < fromBlock + maxBlocks - 1n ? confirmedHead : fromBlock + maxBlocks - 1n
  if (toBlock < fromBlock) return { chain, status: 'up-to-date', nextBlock: fromBlock, detected: 0, duplicates: 0 }
  // the range's last block before and after the read: a reorg while reading changes its hash
  const toBlockHash = await blockHashAt(clients.publicClient, toBlock)
  if (toBlockHash === undefined) throw new ScanRangeError(`block ${toBlock} not served`, fromBlock, toBlock)

  const gasWallet = deps.gasWallet.address.toLowerCase()
  const { deposits, stats } = await scanDeposits({
    chain,
    client: clients.publicClient,
    fromBlock,
    toBlock,
    tokens: info.tokens,
    isDepositAddress: deps.addressBook.lookup,
    // the gas wallet's top-ups are the service's own transactions (own events, spec 6.1 slots)
    ignoreFrom: (from: Hex) => from === gasWallet,
    limits: { maxBlocksPerScan: Number(maxBlocks) },
  })
  const after = await blockHashAt(clients.publicClient, toBlock)
  if (after !== toBlockHash) throw new ChainReorgError(toBlock, toBlockHash, after ?? '0x')

  const { detected, duplicates } = await creditRange(
    deps,
    chain,
    { fromBlock, toBlock, toBlockHash },
    cursor,
    deposits,
    opts,
  )
  // GET /metrics: how far behind the head the watch stands (a failed write never fails the scan)
  await recordScanLag(deps.redis, chain, head - toBlock).catch(() => {})
  return { chain, status: 'scanned', fromBlock, toBlock, nextBlock: toBlock + 1n, detected, duplicates, stats }
}

/**
 * Whether the watch may not read on: halted for an operator (announced again), or the block the
 * cursor stands on is not the one it scanned (a reorg deeper than the chain was trusted with:
 * deposits credited from the old blocks may not exist), which halts it now.
 */
async function haltedOrReorged(
  deps: DepositScanDeps,
  chain: ChainName,
  client: DepositScanClient,
  cursor: Awaited<ReturnType<typeof loadCursor>>,
): Promise<boolean> {
  const fromBlock = cursor.nextBlock
  if (cursor.haltedAt) {
    await alertHalted(deps, chain, cursor.haltReason ?? 'halted')
    return true
  }
  if (cursor.blockHash === null || fromBlock <= 0n) return false
  const now = await blockHashAt(client, fromBlock - 1n)
  if (now === undefined) throw new ScanRangeError(`block ${fromBlock - 1n} not served`, fromBlock - 1n, fromBlock - 1n)
  if (now.toLowerCase() === cursor.blockHash.toLowerCase()) return false
  await haltOnReorg(deps, chain, fromBlock - 1n, cursor.blockHash, now)
  return true
}

/**
 * The scanned range's deposits, their `deposit_detected` events and the cursor's move past the
 * range, in one transaction, and only while the cursor is as this run found it.
 */
async function creditRange(
  deps: DepositScanDeps,
  chain: ChainName,
  range: { fromBlock: bigint; toBlock: bigint; toBlockHash: Hex },
  cursor: Awaited<ReturnType<typeof loadCursor>>,
  deposits: readonly Deposit[],
  opts: DepositScanOptions,
): Promise<{ detected: number; duplicates: number }> {
  const { fromBlock, toBlock, toBlockHash } = range
  let detected = 0
  let duplicates = 0
  await deps.sql.begin(async (tx) => {
    // the cursor as this run found it: not moved, not halted meanwhile (another replica that lost
    // the lock to its TTL), still standing on the block this run checked
    const locked = await lockCursor(tx, chain)
    if (!locked || locked.nextBlock !== fromBlock || locked.haltedAt || locked.blockHash !== cursor.blockHash)
      throw new CursorMovedError(chain)
    if (deposits.length > 0) {
      const indexes = [...new Set(deposits.map((d) => d.hdIndex))]
      const owners = await tx<{ hd_index: number; user_id: string; address: string }[]>`
        select hd_index, user_id, address from deposit_addresses where hd_index = any(${indexes}::int[])
      `
      const byIndex = new Map(owners.map((o) => [o.hd_index, o]))
      const rows = deposits.map((d) => {
        const owner = byIndex.get(d.hdIndex)
        if (!owner || owner.address.toLowerCase() !== d.to.toLowerCase()) throw new DepositOwnerMismatchError(d.hdIndex)
        return {
          chain,
          tx_hash: d.txHash.toLowerCase(),
          log_index: d.logIndex,
          block_number: d.blockNumber.toString(),
          user_id: owner.user_id,
          hd_index: d.hdIndex,
          address: owner.address,
          token: d.token,
          amount: d.amountBaseUnits.toString(),
        }
      })
      const recorded = await recordDetected(tx, rows)
      detected = recorded.detected
      duplicates = recorded.duplicates
    }
    await opts.beforeCommit?.()
    await advanceCursor(tx, chain, toBlock, toBlockHash)
  })
  return { detected, duplicates }
}

/** A halted chain is announced again this often while it stays halted (and at least once, crash or not). */
export const HALT_ALERT_EVERY_MS = 60 * 60_000

/** A reorg past the cursor: crediting on the chain stops until an operator resumes it. */
async function haltOnReorg(deps: DepositScanDeps, chain: ChainName, block: bigint, scanned: Hex, now: Hex) {
  const reason = `reorg past the cursor: block ${block} was ${scanned} when scanned, is ${now} now`
  await haltCursor(deps.sql, chain, reason)
  await alertHalted(deps, chain, reason)
}

/**
 * The alert of a halted chain: on the run that halts it and, while it stays halted, once per
 * HALT_ALERT_EVERY_MS (a Redis claim), so one lost between the halt's commit and its send (a
 * crash) goes out on the next run.
 */
async function alertHalted(deps: DepositScanDeps, chain: ChainName, reason: string): Promise<void> {
  const claimed = (await deps.redis.set(`alert:chain-halted:${chain}`, '1', 'PX', HALT_ALERT_EVERY_MS, 'NX')) === 'OK'
  if (claimed)
    await deps.alerter.alert('deposit watch halted: a reorg went past the cursor; an operator resumes it', {
      chain,
      reason,
    })
}

/**
 * One scan tick of `chain` (the worker's `deposits-scan-<chain>`): never on an RPC that has not
 * answered its chain id, under a Redis lock so a slow run never overlaps the next, the process's
 * address book. A JSON-safe result (BullMQ stores it).
 */
export async function runDepositScanTick(deps: DepositScanTickDeps, log: RunLog, chain: ChainName) {
  // never credit from an RPC that is not this chain (docs/hostile-world.md)
  if (!(await deps.chainGuard.ready(chain))) {
    log.warn({ chain }, 'deposit scan waits: the chain RPC has not answered its chain id yet')
    return { chain, status: 'unverified' }
  }
  const scanDeps = { ...deps, addressBook: addressBookFor(deps) }
  const result = await withLock(deps.redis, `lock:${depositScanTickName(chain)}`, LOCK_TTL_MS, () =>
    scanChainDeposits(scanDeps, chain),
  )
  if (!result) return { chain, status: 'locked' }
  if (result.detected > 0 || result.status === 'behind-on-addresses' || result.status === 'halted') {
    log.info(
      { chain, status: result.status, detected: result.detected, toBlock: result.toBlock?.toString() },
      'deposit scan',
    )
  }
  // BullMQ stores the return value as JSON: no bigints
  return {
    ...result,
    fromBlock: result.fromBlock?.toString(),
    toBlock: result.toBlock?.toString(),
    nextBlock: result.nextBlock?.toString(),
    stats: undefined,
  }
}
