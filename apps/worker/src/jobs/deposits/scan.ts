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
 */
import { LOCK_TTL_MS } from '@wh/config'
import type { Sql } from '@wh/db'
import { withLock } from '@wh/jobs'
import { appendBatch, type EventInput, MAX_BATCH_EVENTS } from '@wh/ledger'
import { CHAIN_NAMES, type ChainName, type ScanStats, scanDeposits } from '@wh/wallet'
import type { Hex } from 'viem'
import type { TickDefinition, WorkerDeps } from '../../ticks'
import { ADDRESS_SYNC_BATCH, DepositAddressBook, syncDepositAddresses } from './address-book'

export const DEPOSIT_SCAN_EVERY_MS = 5_000
/** Blocks one tick scans at most; a chain that is behind catches up over several ticks. */
export const MAX_BLOCKS_PER_SCAN_TICK = 1_000
/** Where a chain's first scan starts, below its confirmed head (no cursor yet). */
export const INITIAL_LOOKBACK_BLOCKS = 10_000n
/** Address-book batches per tick; a larger backlog postpones the scan to the next tick. */
export const ADDRESS_SYNC_MAX_BATCHES = 4

export const depositScanTickName = (chain: ChainName) => `deposits-scan-${chain}`

export type DepositScanDeps = Pick<WorkerDeps, 'sql' | 'keyring' | 'registry' | 'clients' | 'gasWallet'> & {
  readonly addressBook: DepositAddressBook
}

export interface DepositScanOptions {
  maxBlocks?: number
  /** runs inside the transaction just before the cursor moves (the crash test throws here) */
  beforeCommit?: () => Promise<void> | void
}

export interface DepositScanResult {
  chain: ChainName
  /** 'behind-on-addresses': users without a stored address remain; nothing was scanned */
  status: 'scanned' | 'up-to-date' | 'behind-on-addresses'
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

async function loadCursor(sql: Sql, chain: ChainName, initial: bigint): Promise<bigint> {
  await sql`insert into chain_cursors (chain, next_block) values (${chain}, ${initial.toString()}) on conflict do nothing`
  const [row] = await sql<{ next_block: string }[]>`select next_block from chain_cursors where chain = ${chain}`
  return BigInt((row as { next_block: string }).next_block)
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
  const confirmedHead = head - BigInt(info.confirmations)

  let complete = false
  for (let i = 0; i < ADDRESS_SYNC_MAX_BATCHES && !complete; i++) {
    complete = (await syncDepositAddresses(deps.sql, deps.keyring, ADDRESS_SYNC_BATCH)).complete
  }
  if (!complete) return { chain, status: 'behind-on-addresses', detected: 0, duplicates: 0 }
  await deps.addressBook.refresh(deps.sql)

  const initial = confirmedHead - INITIAL_LOOKBACK_BLOCKS > 0n ? confirmedHead - INITIAL_LOOKBACK_BLOCKS : 0n
  const fromBlock = await loadCursor(deps.sql, chain, initial)
  const maxBlocks = BigInt(opts.maxBlocks ?? MAX_BLOCKS_PER_SCAN_TICK)
  const toBlock = confirmedHead < fromBlock + maxBlocks - 1n ? confirmedHead : fromBlock + maxBlocks - 1n
  if (toBlock < fromBlock) return { chain, status: 'up-to-date', nextBlock: fromBlock, detected: 0, duplicates: 0 }

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

  let detected = 0
  let duplicates = 0
  await deps.sql.begin(async (tx) => {
    const [cur] = await tx<{ next_block: string }[]>`
      select next_block from chain_cursors where chain = ${chain} for update
    `
    if (!cur || BigInt(cur.next_block) !== fromBlock) throw new CursorMovedError(chain)
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
      await tx`
        insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
        select chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, 'detected'
        from jsonb_to_recordset(${tx.json(rows)}::jsonb) as x(chain text, tx_hash text, log_index bigint,
          block_number bigint, user_id uuid, hd_index integer, address text, token text, amount numeric)
        on conflict (chain, tx_hash, log_index) do nothing
      `
      const occurredAt = new Date()
      const events: EventInput[] = rows.map((r, i) => ({
        type: 'deposit_detected',
        payload: {
          userId: r.user_id,
          chain,
          txHash: r.tx_hash,
          logIndex: r.log_index,
          currency: r.token,
          amount: (deposits[i] as (typeof deposits)[number]).amountBaseUnits,
        },
        occurredAt,
      }))
      for (let i = 0; i < events.length; i += MAX_BATCH_EVENTS) {
        for (const r of await appendBatch(tx, events.slice(i, i + MAX_BATCH_EVENTS))) {
          if (r.duplicate) duplicates++
          else detected++
        }
      }
    }
    await opts.beforeCommit?.()
    await tx`update chain_cursors set next_block = ${(toBlock + 1n).toString()}, updated_at = now() where chain = ${chain}`
  })
  return { chain, status: 'scanned', fromBlock, toBlock, nextBlock: toBlock + 1n, detected, duplicates, stats }
}

/**
 * Whether `chain` is watched: not when an earlier chain of the registry has the same RPC URL (the
 * same node). In production the four chains have four endpoints; in the local run one node stands
 * in for all four, and watching it four times would record every transfer as four deposits.
 */
export function isWatchedChain(registry: DepositScanDeps['registry'], chain: ChainName): boolean {
  const info = registry.get(chain)
  if (!info) return false
  for (const name of CHAIN_NAMES) {
    if (name === chain) return true
    const other = registry.get(name)
    if (other && other.rpcUrl === info.rpcUrl) return false
  }
  return true
}

/** One scan tick per chain; each under a Redis lock so a slow run never overlaps the next. */
export const depositScanTicks: readonly TickDefinition[] = CHAIN_NAMES.map((chain) => ({
  name: depositScanTickName(chain),
  queue: 'deposits',
  everyMs: DEPOSIT_SCAN_EVERY_MS,
  process: async (_job, ctx) => {
    if (!isWatchedChain(ctx.deps.registry, chain)) return { chain, status: 'same-node-as-another-chain' }
    const deps = { ...ctx.deps, addressBook: addressBookFor(ctx.deps) }
    const result = await withLock(ctx.deps.redis, `lock:${depositScanTickName(chain)}`, LOCK_TTL_MS, () =>
      scanChainDeposits(deps, chain),
    )
    if (!result) return { chain, status: 'locked' }
    if (result.detected > 0 || result.status === 'behind-on-addresses') {
      ctx.log.info(
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
  },
}))
