/**
 * The one writer of `cctp_transfers` (migration 0032; docs/architecture.md "Table owners"): the L2 route's
 * transfers over Circle's CCTP. Every write is a named step of the transfer's life (docs/chains.md "The L2 route").
 */
import type { Sql } from '@wh/db'
import type { Queryable } from '@wh/ledger'
import type { ChainName } from '@wh/wallet'
import type { Hex } from 'viem'

export type CctpState = 'burning' | 'attesting' | 'minting' | 'done' | 'failed'
export type CctpReason = 'sweep' | 'refill'

export interface CctpRow {
  id: string
  source_chain: ChainName
  dest_chain: ChainName
  reason: CctpReason
  amount: string
  max_fee: string
  min_finality: number
  state: CctpState
  burn_tx_hash: Hex | null
  burned_at: Date | null
  nonce: Hex | null
  message: Hex | null
  attestation: Hex | null
  fee_executed: string | null
  mint_tx_hash: Hex | null
  attempts: number
  next_attempt_at: Date
  last_error: string | null
  late_alerted_at: Date | null
  problem: string | null
  created_at: Date
}

const COLUMNS = `id, source_chain, dest_chain, reason, amount::text, max_fee::text, min_finality, state, burn_tx_hash,
  burned_at, nonce, message, attestation, fee_executed::text, mint_tx_hash, attempts, next_attempt_at, last_error,
  late_alerted_at, problem, created_at`

/** The route's open transfer (at most one: a unique index). */
export async function openTransfer(sql: Sql, source: ChainName, dest: ChainName): Promise<CctpRow | undefined> {
  const [row] = await sql.unsafe<CctpRow[]>(
    `select ${COLUMNS} from cctp_transfers
     where source_chain = $1 and dest_chain = $2 and state in ('burning', 'attesting', 'minting')`,
    [source, dest],
  )
  return row
}

/** Every open transfer (the refill tick's and the bench's view). */
export async function openTransfers(sql: Sql): Promise<CctpRow[]> {
  return sql.unsafe<CctpRow[]>(
    `select ${COLUMNS} from cctp_transfers where state in ('burning', 'attesting', 'minting') order by created_at`,
  )
}

export async function transferById(sql: Sql, id: string): Promise<CctpRow | undefined> {
  const [row] = await sql.unsafe<CctpRow[]>(`select ${COLUMNS} from cctp_transfers where id = $1`, [id])
  return row
}

/** A new transfer, before anything is signed for it; a concurrent one on the route wins (undefined here). */
export async function insertTransfer(
  sql: Sql,
  t: {
    id: string
    source: ChainName
    dest: ChainName
    reason: CctpReason
    amount: bigint
    maxFee: bigint
    minFinality: number
    now: Date
  },
): Promise<CctpRow | undefined> {
  const [row] = await sql.unsafe<CctpRow[]>(
    `insert into cctp_transfers (id, source_chain, dest_chain, reason, amount, max_fee, min_finality, state,
       next_attempt_at, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'burning', $8, $8, $8)
     on conflict do nothing
     returning ${COLUMNS}`,
    [t.id, t.source, t.dest, t.reason, t.amount.toString(), t.maxFee.toString(), t.minFinality, t.now],
  )
  return row
}

/** The burn is final on the source chain: from now on the attestation is asked for. */
export async function markBurned(sql: Sql, id: string, b: { txHash: Hex; at: Date }): Promise<void> {
  await sql`update cctp_transfers set state = 'attesting', burn_tx_hash = ${b.txHash}, burned_at = ${b.at},
    next_attempt_at = ${b.at}, updated_at = now() where id = ${id} and state = 'burning'`
}

/** Circle signed it: the attested message is kept, so a restart mints exactly it. */
export async function markAttested(
  sql: Sql,
  id: string,
  a: { nonce: Hex; message: Hex; attestation: Hex; feeExecuted: bigint },
): Promise<void> {
  await sql`update cctp_transfers set state = 'minting', nonce = ${a.nonce}, message = ${a.message},
    attestation = ${a.attestation}, fee_executed = ${a.feeExecuted.toString()}, last_error = null, updated_at = now()
    where id = ${id} and state = 'attesting'`
}

/** One attestation read that did not complete it, and when the next may be made. */
export async function recordAttempt(sql: Sql, id: string, a: { error: string; nextAt: Date }): Promise<void> {
  await sql`update cctp_transfers set attempts = attempts + 1, last_error = ${a.error}, next_attempt_at = ${a.nextAt},
    updated_at = now() where id = ${id}`
}

/** Notes that ops were told the transfer is late; true only the first time. */
export async function noteLate(sql: Sql, id: string, at: Date): Promise<boolean> {
  const rows = await sql`update cctp_transfers set late_alerted_at = ${at}, updated_at = now()
    where id = ${id} and late_alerted_at is null returning id`
  return rows.length > 0
}

/** Notes a problem a person must look at; true when it is a new one (ops told once per problem). */
export async function noteProblem(sql: Sql, id: string, problem: string): Promise<boolean> {
  const rows = await sql`update cctp_transfers set problem = ${problem}, updated_at = now()
    where id = ${id} and problem is distinct from ${problem} returning id`
  return rows.length > 0
}

/** Minted and journaled: in the transaction that appends `bridged`. */
export async function markDone(tx: Queryable, id: string, d: { mintTxHash: Hex; at: Date }): Promise<void> {
  await tx`update cctp_transfers set state = 'done', mint_tx_hash = ${d.mintTxHash}, done_at = ${d.at},
    problem = null, updated_at = now() where id = ${id} and state = 'minting'`
}

/** The burn failed on chain (nothing left the source): in the transaction that journals its gas. */
export async function markFailed(tx: Queryable, id: string, reason: string): Promise<void> {
  await tx`update cctp_transfers set state = 'failed', problem = ${reason}, updated_at = now()
    where id = ${id} and state = 'burning'`
}
