/**
 * The deposit watch's cursor per chain (the one owner of `chain_cursors`): the next block to scan,
 * the hash of the block below it as it was scanned, and whether crediting on the chain is halted
 * (docs/hostile-world.md "Chains are who they say they are"). The hash is how a reorg deeper than
 * the chain was trusted with is seen: the block the cursor stands on changed after its deposits
 * were credited.
 */
import type { Queryable, Sql } from '@wh/db'
import type { Hex } from 'viem'
import type { ChainName } from './chains'

export interface Cursor {
  readonly chain: ChainName
  /** the next block to scan */
  readonly nextBlock: bigint
  /** the hash of block nextBlock − 1 when it was scanned (null: a cursor from before hashes were kept) */
  readonly blockHash: Hex | null
  readonly haltedAt: Date | null
  readonly haltReason: string | null
}

interface CursorRow {
  chain: ChainName
  next_block: string
  block_hash: string | null
  halted_at: Date | null
  halt_reason: string | null
}

const toCursor = (r: CursorRow): Cursor => ({
  chain: r.chain,
  nextBlock: BigInt(r.next_block),
  blockHash: r.block_hash as Hex | null,
  haltedAt: r.halted_at,
  haltReason: r.halt_reason,
})

/** The chain's cursor, created at `initial` when it has none. */
export async function loadCursor(sql: Sql, chain: ChainName, initial: bigint): Promise<Cursor> {
  await sql`insert into chain_cursors (chain, next_block) values (${chain}, ${initial.toString()}) on conflict do nothing`
  const [row] = await sql<CursorRow[]>`
    select chain, next_block::text, block_hash, halted_at, halt_reason from chain_cursors where chain = ${chain}`
  return toCursor(row as CursorRow)
}

/** Every chain's cursor. */
export async function listCursors(sql: Sql): Promise<Cursor[]> {
  const rows = await sql<CursorRow[]>`
    select chain, next_block::text, block_hash, halted_at, halt_reason from chain_cursors order by chain`
  return rows.map(toCursor)
}

/**
 * The cursor, read under a row lock inside the caller's transaction (the one that records the
 * scanned deposits), or undefined when there is none.
 */
export async function lockCursor(tx: Queryable, chain: ChainName): Promise<Cursor | undefined> {
  const [cur] = await tx<CursorRow[]>`
    select chain, next_block::text, block_hash, halted_at, halt_reason from chain_cursors where chain = ${chain}
    for update`
  return cur ? toCursor(cur) : undefined
}

/** Moves the cursor past `toBlock`, whose hash it keeps, in the caller's transaction. */
export async function advanceCursor(tx: Queryable, chain: ChainName, toBlock: bigint, toBlockHash: Hex): Promise<void> {
  await tx`
    update chain_cursors set next_block = ${(toBlock + 1n).toString()}, block_hash = ${toBlockHash.toLowerCase()},
      updated_at = now()
    where chain = ${chain}`
}

/** Halts crediting on `chain`; true when this call halted it (so the alert goes out once). */
export async function haltCursor(sql: Sql, chain: ChainName, reason: string): Promise<boolean> {
  const rows = await sql`
    update chain_cursors set halted_at = now(), halt_reason = ${reason.slice(0, 500)}, updated_at = now()
    where chain = ${chain} and halted_at is null returning chain`
  return rows.length > 0
}

/**
 * An operator resumes a halted chain from `fromBlock` (the blocks from there are scanned again: the
 * journal's keys make deposits already credited a no-op), the block below it being `belowHash`.
 */
export async function resumeCursor(
  sql: Queryable,
  chain: ChainName,
  fromBlock: bigint,
  belowHash: Hex | null,
): Promise<boolean> {
  const rows = await sql`
    update chain_cursors set next_block = ${fromBlock.toString()}, block_hash = ${belowHash?.toLowerCase() ?? null},
      halted_at = null, halt_reason = null, updated_at = now()
    where chain = ${chain} and halted_at is not null returning chain`
  return rows.length > 0
}
