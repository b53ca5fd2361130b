/**
 * The one owner of `outbound_txs` and `outbound_tx_versions`: every read and write of the outbox's
 * rows goes through here (outbox.ts sends, outbox-confirm.ts confirms, replaces and holds).
 */
import type { Queryable, Sql } from '@wh/db'
import type { Hex } from 'viem'

export type OutboundState = 'signed' | 'broadcast' | 'confirmed' | 'failed' | 'held'

export interface OutboundRecord {
  id: string
  /** the mined version's hash once one is mined, else the newest version's */
  txHash: Hex
  nonce: number
  /**
   * signed → broadcast → confirmed | failed; `held` when the chain's answers contradict each other
   * and an operator must decide (docs/hostile-world.md "Never pay twice")
   */
  state: OutboundState
  /** set once the transaction is mined (final or not) */
  gasUsed?: bigint
  effectiveGasPrice?: bigint
  blockNumber?: bigint
  /**
   * present (true) on a `failed` row whose nonce a no-op filled: the node refused its bytes for good
   * and the fill is what was mined, so nothing of the row's transaction ever ran (its gas is the fill's)
   */
  filled?: true
}

/** How a `failed` row whose nonce a mined no-op filled starts its error (the record's `filled`). */
export const NONCE_FILLED_ERROR = 'nonce filled'

export interface OutboundRow {
  id: string
  chain: string
  purpose: string
  ref_id: string
  step: number
  from_address: string
  to_address: string
  token: string
  amount: string
  nonce: string | number
  raw_tx: string
  tx_hash: string
  state: OutboundState
  gas_used: string | null
  effective_gas_price: string | null
  block_number: string | null
  error: string | null
  contradictions: number
  hold_reason: string | null
  /** broadcasts refused with an unknown error while the chain answered (outbox-fill.ts) */
  refusals: number
}

export interface OutboundVersion {
  version: number
  raw_tx: Hex
  tx_hash: Hex
  /** milliseconds since this version was signed (Postgres time) */
  age_ms: number
  /** a no-op at the row's nonce (outbox-fill.ts), not the row's own transaction */
  fills_nonce: boolean
}

const COLUMNS =
  'id, chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx, tx_hash, state, gas_used, effective_gas_price, block_number, error, contradictions, hold_reason, refusals'

export function toRecord(row: OutboundRow): OutboundRecord {
  const r: OutboundRecord = { id: row.id, txHash: row.tx_hash as Hex, nonce: Number(row.nonce), state: row.state }
  if (row.gas_used !== null) r.gasUsed = BigInt(row.gas_used)
  if (row.effective_gas_price !== null) r.effectiveGasPrice = BigInt(row.effective_gas_price)
  if (row.block_number !== null) r.blockNumber = BigInt(row.block_number)
  if (row.state === 'failed' && row.error?.startsWith(NONCE_FILLED_ERROR)) r.filled = true
  return r
}

export async function findByRef(
  sql: Queryable,
  purpose: string,
  refId: string,
  step: number,
): Promise<OutboundRow | undefined> {
  const rows = await sql.unsafe<OutboundRow[]>(
    `select ${COLUMNS} from outbound_txs where purpose = $1 and ref_id = $2 and step = $3`,
    [purpose, refId, step],
  )
  return rows[0]
}

export async function findById(sql: Sql, id: string): Promise<OutboundRow | undefined> {
  const rows = await sql.unsafe<OutboundRow[]>(`select ${COLUMNS} from outbound_txs where id = $1`, [id])
  return rows[0]
}

/** The largest nonce the outbox holds for a sender (null for none); call under the sender's lock. */
export async function maxNonce(tx: Queryable, chain: string, from: string): Promise<number | null> {
  const [{ max }] = (await tx`
    select max(nonce)::text as max from outbound_txs where chain = ${chain} and from_address = ${from}
  `) as unknown as [{ max: string | null }]
  return max === null ? null : Number(max)
}

/** A new row in state `signed` with its version 0, in the caller's transaction. */
export async function insertSigned(
  tx: Queryable,
  r: {
    chain: string
    purpose: string
    refId: string
    step: number
    from: string
    to: string
    token: string
    amount: bigint
    nonce: number
    rawTx: Hex
    txHash: Hex
  },
): Promise<OutboundRow> {
  const [row] = await tx.unsafe<OutboundRow[]>(
    `insert into outbound_txs (chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx, tx_hash, state)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'signed')
     returning ${COLUMNS}`,
    [r.chain, r.purpose, r.refId, r.step, r.from, r.to, r.token, r.amount.toString(), r.nonce, r.rawTx, r.txHash],
  )
  const inserted = row as OutboundRow
  await tx`
    insert into outbound_tx_versions (outbound_id, version, raw_tx, tx_hash)
    values (${inserted.id}, 0, ${r.rawTx}, ${r.txHash})`
  return inserted
}

export async function markBroadcast(sql: Sql, id: string): Promise<void> {
  await sql`update outbound_txs set state = 'broadcast', updated_at = now() where id = ${id} and state = 'signed'`
}

/** Every signed version of row `id`, oldest first. */
export async function versionsOf(sql: Sql, id: string): Promise<OutboundVersion[]> {
  const rows = await sql<{ version: number; raw_tx: string; tx_hash: string; age_ms: string; fills_nonce: boolean }[]>`
    select version, raw_tx, tx_hash, (extract(epoch from now() - created_at) * 1000)::bigint::text as age_ms, fills_nonce
    from outbound_tx_versions where outbound_id = ${id} order by version`
  return rows.map((r) => ({
    version: Number(r.version),
    raw_tx: r.raw_tx as Hex,
    tx_hash: r.tx_hash as Hex,
    age_ms: Number(r.age_ms),
    fills_nonce: r.fills_nonce,
  }))
}

/** The first signed version's bytes: what the row's business sent (a fill keeps none of it). */
export async function originalRawTx(sql: Queryable, id: string): Promise<Hex | undefined> {
  const [row] = await sql<{ raw_tx: string }[]>`
    select raw_tx from outbound_tx_versions where outbound_id = ${id} and version = 0`
  return row?.raw_tx as Hex | undefined
}

/**
 * One more broadcast of the row's bytes refused with an unknown error (the chain answered its
 * probe); returns the count so far. A broadcast that goes through clears it (`clearRefusals`): only
 * refusals in a row count.
 */
export async function countRefusal(sql: Sql, id: string): Promise<number> {
  const [row] = await sql<{ refusals: number }[]>`
    update outbound_txs set refusals = refusals + 1, updated_at = now()
    where id = ${id} and state in ('signed', 'broadcast') returning refusals`
  return row?.refusals ?? 0
}

/**
 * Stores a replacement (same nonce, higher fees) as the row's newest version, BEFORE it is
 * broadcast. Only when the row still names `previousHash` as its current version and is still
 * open: a concurrent replacer or a confirmation that got there first wins, and the caller must not
 * broadcast bytes it did not record. Returns whether the version was stored. A no-op that fills the
 * nonce is stored the same way (`fillsNonce`), with why the row's bytes were refused in `error`.
 */
export async function recordReplacement(
  sql: Sql,
  id: string,
  v: { version: number; rawTx: Hex; txHash: Hex; previousHash: Hex; fillsNonce?: boolean; reason?: string },
): Promise<boolean> {
  return sql.begin(async (tx) => {
    const moved = await tx`
      update outbound_txs set raw_tx = ${v.rawTx}, tx_hash = ${v.txHash}, updated_at = now(),
        error = ${v.reason === undefined ? tx`error` : v.reason.slice(0, 500)}
      where id = ${id} and tx_hash = ${v.previousHash} and state in ('signed', 'broadcast')
      returning id`
    if (moved.length === 0) return false
    const inserted = await tx`
      insert into outbound_tx_versions (outbound_id, version, raw_tx, tx_hash, fills_nonce)
      values (${id}, ${v.version}, ${v.rawTx}, ${v.txHash}, ${v.fillsNonce ?? false})
      on conflict do nothing returning version`
    if (inserted.length === 0) throw new Error(`outbound ${id}: version ${v.version} exists already`)
    return true
  })
}

/**
 * The mined version's receipt: the row names that version (its hash and bytes), carries the gas it
 * paid, and moves to `state` (broadcast while not deep enough, else confirmed or failed). Open rows
 * only; returns the row as it is afterwards.
 */
export async function recordMined(
  sql: Sql,
  id: string,
  m: {
    state: 'broadcast' | 'confirmed' | 'failed'
    rawTx: Hex
    txHash: Hex
    gasUsed: bigint
    effectiveGasPrice: bigint
    blockNumber: bigint
    error: string | null
  },
): Promise<OutboundRow> {
  const [updated] = await sql.unsafe<OutboundRow[]>(
    `update outbound_txs set state = $2, raw_tx = $3, tx_hash = $4, gas_used = $5, effective_gas_price = $6,
       block_number = $7, error = $8, contradictions = 0, first_contradiction_at = null, updated_at = now()
     where id = $1 and state in ('signed', 'broadcast') returning ${COLUMNS}`,
    [
      id,
      m.state,
      m.rawTx,
      m.txHash,
      m.gasUsed.toString(),
      m.effectiveGasPrice.toString(),
      m.blockNumber.toString(),
      m.error,
    ],
  )
  return updated ?? ((await findById(sql, id)) as OutboundRow)
}

/** A receipt seen once is gone (a reorg): forget it, the transaction is pending again. */
export async function forgetMined(sql: Sql, id: string): Promise<void> {
  await sql`
    update outbound_txs set gas_used = null, effective_gas_price = null, block_number = null, updated_at = now()
    where id = ${id} and state in ('signed', 'broadcast')`
}

/** A broadcast went through: the refusals before it were passing trouble. */
export async function clearRefusals(sql: Sql, id: string): Promise<void> {
  await sql`update outbound_txs set refusals = 0 where id = ${id} and refusals > 0`
}

/** The evidence is consistent again (the nonce is not used, or a receipt was found). */
export async function clearContradictions(sql: Sql, id: string): Promise<void> {
  await sql`
    update outbound_txs set contradictions = 0, first_contradiction_at = null
    where id = ${id} and contradictions > 0 and state in ('signed', 'broadcast')`
}

/**
 * One more contradictory reading. The row moves to `held` once `holdAfterReadings` readings span
 * at least `holdAfterMs`; returns the row and whether this call is the one that held it (so the
 * hold alerts once).
 */
export async function recordContradiction(
  sql: Sql,
  id: string,
  opts: { holdAfterReadings: number; holdAfterMs: number; reason: string },
): Promise<{ row: OutboundRow; heldNow: boolean }> {
  const [row] = await sql.unsafe<(OutboundRow & { held_now: boolean })[]>(
    `with cur as (
       select contradictions + 1 as n, coalesce(first_contradiction_at, now()) as first from outbound_txs
       where id = $1 and state in ('signed', 'broadcast') for update
     )
     update outbound_txs o set contradictions = cur.n, first_contradiction_at = cur.first,
       state = case when cur.n >= $2 and now() - cur.first >= make_interval(secs => $3::double precision / 1000)
                    then 'held' else o.state end,
       hold_reason = case when cur.n >= $2 and now() - cur.first >= make_interval(secs => $3::double precision / 1000)
                          then $4 else o.hold_reason end,
       updated_at = now()
     from cur where o.id = $1
     returning ${COLUMNS.split(', ')
       .map((c) => `o.${c}`)
       .join(', ')}, o.state = 'held' as held_now`,
    [id, opts.holdAfterReadings, opts.holdAfterMs, opts.reason],
  )
  if (!row) return { row: (await findById(sql, id)) as OutboundRow, heldNow: false }
  return { row, heldNow: row.held_now }
}

/**
 * An operator's decision on a `held` row: `recheck` returns it to `broadcast` with the evidence
 * counter cleared (the next confirmation reads the chain afresh); `failed` ends it as never mined,
 * with the operator's note as its error. Returns the row, or undefined when it was not held.
 */
export async function resolveHeldRow(
  sql: Sql,
  id: string,
  verdict: 'recheck' | 'failed',
  note: string,
): Promise<OutboundRow | undefined> {
  const [row] = await sql.unsafe<OutboundRow[]>(
    `update outbound_txs set
       state = case when $2 = 'failed' then 'failed' else 'broadcast' end,
       error = $3,
       gas_used = case when $2 = 'failed' then null else gas_used end,
       effective_gas_price = case when $2 = 'failed' then null else effective_gas_price end,
       block_number = case when $2 = 'failed' then null else block_number end,
       contradictions = 0, first_contradiction_at = null, hold_reason = null, updated_at = now()
     where id = $1 and state = 'held' returning ${COLUMNS}`,
    [id, verdict, `operator ${verdict}: ${note}`.slice(0, 500)],
  )
  return row
}
