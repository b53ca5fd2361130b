/**
 * Funding (the worker's `exchange-fund` tick, queue `treasury`, every 5 s; under the exchange cycle lock,
 * which `runFunding` takes): moves reserved free balance
 * into the user's subaccount at the exchange and records `subaccount_funded` (key
 * `subaccount_funded:{transactionId}`, spec 6.1) once the exchange reports the deposit settled.
 *
 * A row (subaccount_transfers, kind 'fund') walks:
 *   reserved   → sign create_subaccount (no exchange id yet) or deposit; store method, params,
 *                nonce and submitted_at; COMMIT → submitted
 *   submitted  → send the stored params as they are → accepted with the transaction id
 *   accepted   → get_transaction settled → ONE transaction: row funded (out of the in-flight
 *                states first, so the authorizing check does not count it twice), the subaccount's
 *                exchange id for a create, and the append (with a charged creation's fee, read back
 *                from the exchange first: docs/exchange-v3.md "Movements on v3")
 *   failed     ← refused (a bad action; the wallet short of funds for longer than
 *                FUNDING_WALLET_WAIT_MS: before that the row goes back to reserved), reverted, or
 *                the signature expired
 *                with nothing landed: the reservation is released, an alert goes out.
 * Crash rules (a submitted row found by a later run) live in movements.ts `sendStored`; the doc
 * section "Subaccounts: funding and release" in docs/exchange.md states them.
 */
import { mapLimit } from '@wh/core'
import type { Sql } from '@wh/db'
import { withCycleLock } from '../cycle-lock'
import {
  createdSubaccountId,
  creationFeeOf,
  errorCodeOf,
  exchangeAmount,
  type Landed,
  sendStored,
  settlementOf,
  signMovement,
  type TransferDeps,
} from '../movements'
import { recordExchangeId } from '../subaccounts'
import {
  deferTransfer,
  failFunding,
  holdFunding,
  markTransferAccepted,
  returnFundingToReserved,
  settleFunding,
  storeSignedFunding,
  TRANSFER_COLUMNS,
  type TransferRow,
} from '../transfers'
import { advanceTopUps, signTopUp } from './top-up'

/** Open funding rows taken per run (TIGER_STYLE: a bound on everything). */
export const FUND_BATCH = 500
/** Subaccounts worked on at once; rows of one subaccount go one after another. */
export const FUND_CONCURRENCY = 16

export interface FundSummary {
  funded: number
  failed: number
  /** reserved rows not sent: subaccount stopped, a release open, or a create still in flight */
  held: number
  /** sent or accepted, waiting for the exchange; or a retryable error */
  pending: number
  /** creation top-ups settled (top-up.ts) */
  toppedUp: number
  /** another run holds the cycle lock */
  locked: boolean
}

/** Test seam: a crash test stops the process at one of these points. */
export interface FundHooks {
  /** the signed params are committed ('submitted'), nothing sent yet */
  afterStored?: (row: TransferRow) => Promise<void>
  /** the exchange accepted the action, its answer not yet stored */
  afterSent?: (row: TransferRow, transactionId: string) => Promise<void>
}

interface SubaccountState {
  id: string
  asset: string
  exchange_id: string | null
  stopped_at: Date | null
  stop_reason: string | null
  open_release: boolean
}

/** Where one run left a funding row (`FundSummary` counts them). */
export type FundOutcome = 'funded' | 'failed' | 'held' | 'pending'
type Outcome = FundOutcome

/**
 * How long a funding waits while the exchange refuses it for the wallet's funds (the deposit that
 * pays for it is still being swept and bridged, docs/chains.md "Bridge"): the row is re-signed each
 * run until it lands, or fails with an alert once it is older than this (Postgres time).
 */
export const FUNDING_WALLET_WAIT_MS = 30 * 60_000

/** One run of the funding tick; takes the exchange cycle lock (a run already holding it passes `locked`). */
export async function runFunding(
  deps: TransferDeps & { redis: import('ioredis').Redis },
  hooks: FundHooks = {},
): Promise<FundSummary> {
  const r = await withCycleLock(deps.redis, () => fundOpenTransfers(deps, hooks))
  return r.ran ? r.value : { funded: 0, failed: 0, held: 0, pending: 0, toppedUp: 0, locked: true }
}

/**
 * Works through the open funding rows, oldest first; the caller holds the cycle lock.
 *
 * Rows stored signed by an earlier run (`submitted`: a crash or a lost answer between storing and
 * sending) go out first, one at a time in nonce order, before this run signs anything new. On v3
 * every funding is signed by the one funding subaccount, whose transfer nonces must increase
 * (docs/exchange-v3.md "Movements on v3"): a stored signature sent after a newer one would be
 * refused for its nonce and its row would wait out its signature and grace before failing.
 */
export async function fundOpenTransfers(deps: TransferDeps, hooks: FundHooks = {}): Promise<FundSummary> {
  const rows = await deps.sql.unsafe<TransferRow[]>(
    `select ${TRANSFER_COLUMNS} from subaccount_transfers
     where kind = 'fund' and state in ('reserved', 'submitted', 'accepted') and next_attempt_at <= now()
     order by next_attempt_at, created_at, id limit ${FUND_BATCH}`,
  )
  const summary: FundSummary = { funded: 0, failed: 0, held: 0, pending: 0, toppedUp: 0, locked: false }
  const stored = rows.filter((r) => r.state === 'submitted').sort(byNonce)
  for (const row of stored) summary[await fundRow(deps, row, hooks)]++
  const bySubaccount = new Map<string, TransferRow[]>()
  // oldest first within a subaccount, whatever order the queue gave: its first row creates it
  const byAge = rows
    .filter((r) => r.state !== 'submitted')
    .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1))
  for (const row of byAge) bySubaccount.set(row.subaccount_id, [...(bySubaccount.get(row.subaccount_id) ?? []), row])
  await mapLimit([...bySubaccount.values()], FUND_CONCURRENCY, async (group) => {
    for (const row of group) {
      const outcome = await fundRow(deps, row, hooks)
      summary[outcome]++
      // a subaccount without an exchange id is created by its first row; the others wait for it
      if (outcome !== 'funded' && outcome !== 'failed') {
        const sub = await subaccountOf(deps.sql, row.subaccount_id)
        if (!sub?.exchange_id) {
          summary.held += group.length - group.indexOf(row) - 1
          break
        }
      }
    }
  })
  // after the fundings: a top-up stored by a creation settled in this run goes out now
  summary.toppedUp = await advanceTopUps(deps)
  return summary
}

/**
 * One funding row by its id, taken as far as it can go now: the work of the `position.advance` job
 * (docs/architecture.md "Accepted work"); `fundOpenTransfers` does the same for every due row. The
 * caller holds the exchange cycle lock. Rows stored signed by an earlier run go out first, in nonce
 * order, as in `fundOpenTransfers`: a newer signature sent before them would make the exchange refuse
 * theirs. A creation's stored top-up goes out after it. Null when the row is not an open funding due
 * now (settled, failed, or backing off): nothing is done for it.
 */
export async function fundTransferById(
  deps: TransferDeps,
  transferId: string,
  hooks: FundHooks = {},
): Promise<FundOutcome | null> {
  const rows = await deps.sql.unsafe<TransferRow[]>(
    `select ${TRANSFER_COLUMNS} from subaccount_transfers
     where kind = 'fund' and state in ('reserved', 'submitted', 'accepted') and next_attempt_at <= now()
       and (state = 'submitted' or id = $1) limit ${FUND_BATCH}`,
    [transferId],
  )
  let outcome: FundOutcome | null = null
  for (const row of rows.filter((r) => r.state === 'submitted').sort(byNonce)) {
    const done = await fundRow(deps, row, hooks)
    if (row.id === transferId) outcome = done
  }
  const row = rows.find((r) => r.id === transferId && r.state !== 'submitted')
  if (row) outcome = await fundRow(deps, row, hooks)
  if (outcome === 'funded') await advanceTopUps(deps)
  return outcome
}

/** Stored rows in the order they were signed: by the nonce of their params, then by when they were stored. */
function byNonce(a: TransferRow, b: TransferRow): number {
  const nonce = (r: TransferRow) => BigInt(String(r.params?.nonce ?? 0))
  const d = nonce(a) - nonce(b)
  return d !== 0n ? (d < 0n ? -1 : 1) : (a.submitted_at?.getTime() ?? 0) - (b.submitted_at?.getTime() ?? 0)
}

/** One row taken as far as it can go now; a row that stays open is deferred (after an error, with a backoff). */
async function fundRow(deps: TransferDeps, row: TransferRow, hooks: FundHooks): Promise<Outcome> {
  try {
    const outcome = await fundOne(deps, row, hooks)
    if (outcome === 'pending' || outcome === 'held') await deferTransfer(deps.sql, row)
    return outcome
  } catch (err) {
    deps.log.warn({ transferId: row.id, err: (err as Error).message }, 'funding: error, retried after a backoff')
    await deferTransfer(deps.sql, row, errorCodeOf(err))
    return 'pending'
  }
}

async function subaccountOf(sql: Sql, id: string): Promise<SubaccountState | undefined> {
  const [s] = await sql<SubaccountState[]>`
    select s.id, s.asset, s.exchange_id::text as exchange_id, s.stopped_at, s.stop_reason,
      exists (select 1 from subaccount_releases r
        where r.subaccount_id = s.id and r.state in ('requested', 'waiting', 'withdrawing')) as open_release
    from subaccounts s where s.id = ${id}`
  return s
}

/**
 * A funding row is a state machine (docs/exchange.md "Funding"; its states and transitions are the
 * owner's, @wh/subaccounts `FundingState`), one function per state here, for the exchange's side:
 * reserved → `submit` (signed and stored) → submitted → `sendSubmitted` (the exchange accepted it)
 * → accepted → `settle` → funded; a refusal or an expired signature ends it `failed`. A run takes
 * the row as far as it can go now.
 */
async function fundOne(deps: TransferDeps, loaded: TransferRow, hooks: FundHooks): Promise<Outcome> {
  const sub = await subaccountOf(deps.sql, loaded.subaccount_id)
  if (!sub) throw new Error(`transfer ${loaded.id}: subaccount ${loaded.subaccount_id} missing`)
  let row = loaded
  let firstSend = false
  if (row.state === 'reserved') {
    const submitted = await submit(deps, sub, row, hooks)
    if (typeof submitted === 'string') return submitted
    row = submitted
    firstSend = true
  }
  if (row.state === 'submitted') {
    const accepted = await sendSubmitted(deps, sub, row, firstSend, hooks)
    if (typeof accepted === 'string') return accepted
    row = accepted
  }
  return row.state === 'accepted' ? settle(deps, row) : 'pending'
}

/** Why a reserved row may not leave now (a stop, an open release), or null. */
function holdOf(sub: SubaccountState): string | null {
  if (sub.stopped_at) return `subaccount stopped: ${sub.stop_reason ?? 'no reason given'}`
  return sub.open_release ? 'a release of this subaccount is open' : null
}

/** reserved → submitted: the movement signed and stored before anything is sent. */
async function submit(
  deps: TransferDeps,
  sub: SubaccountState,
  row: TransferRow,
  hooks: FundHooks,
): Promise<TransferRow | Outcome> {
  // nothing has left yet: a stop or an open release holds the row (still reserved), see docs
  const hold = holdOf(sub)
  if (hold) {
    if (row.reason !== hold) await holdFunding(deps.sql, row.id, hold)
    return 'held'
  }
  const exchangeId = sub.exchange_id === null ? null : Number(sub.exchange_id)
  // only the subaccount's oldest open funding creates it: the others wait for its id, however
  // the queue orders them (a creator backed off after a failure must not let a second one create)
  if (exchangeId === null && (await hasOlderOpenFunding(deps.sql, row))) return 'held'
  const amount = await exchangeAmount(deps.exchange, row.currency, BigInt(row.amount))
  const action =
    exchangeId === null
      ? await signMovement(deps, { method: 'create_subaccount', currency: row.currency, amount })
      : await signMovement(deps, { method: 'deposit', subaccountId: exchangeId, currency: row.currency, amount })
  const submittedAt = deps.clock.now()
  const stored = await storeSignedFunding(deps.sql, row.id, action, submittedAt)
  if (!stored) return 'pending' // another run moved it
  await hooks.afterStored?.(stored)
  return stored
}

/**
 * submitted → accepted: the stored movement sent (again, after a crash: the exchange answers the
 * same transaction), or back to reserved while the exchange wallet waits for the bridge, or failed.
 */
async function sendSubmitted(
  deps: TransferDeps,
  sub: SubaccountState,
  row: TransferRow,
  firstSend: boolean,
  hooks: FundHooks,
): Promise<TransferRow | Outcome> {
  const exchangeId = sub.exchange_id === null ? null : Number(sub.exchange_id)
  const sent = await sendStored(deps, row, { exchangeSubaccountId: exchangeId, firstSend })
  if (sent.kind === 'retry') {
    deps.log.warn({ transferId: row.id, reason: sent.reason }, 'funding: send not confirmed, retried next run')
    return 'pending'
  }
  if (sent.kind === 'refused' && sent.margin && (await waitForBridge(deps.sql, row, sent.reason))) return 'held'
  if (sent.kind === 'refused' || sent.kind === 'expired') {
    const reason =
      sent.kind === 'expired' ? 'signature expired and the deposit never reached the exchange' : sent.reason
    return fail(deps, row, reason)
  }
  if (sent.kind === 'accepted') await hooks.afterSent?.(row, sent.result.transaction_id)
  const landed: Landed =
    sent.kind === 'accepted' ? { transactionId: sent.result.transaction_id, settled: false } : sent.landed
  const accepted = await markTransferAccepted(deps.sql, row.id, landed.transactionId)
  if (!accepted) return 'pending'
  if (landed.exchangeSubaccountId !== undefined && sub.exchange_id === null)
    await recordExchangeId(deps.sql, sub.id, landed.exchangeSubaccountId)
  return accepted
}

/**
 * The exchange wallet is short (the bridge has not brought the deposit over yet): nothing landed,
 * so the row goes back to reserved and is signed afresh next run, for FUNDING_WALLET_WAIT_MS.
 */
function waitForBridge(sql: Sql, row: TransferRow, reason: string): Promise<boolean> {
  const why = `the exchange wallet is short, waiting for the bridge: ${reason}`.slice(0, 500)
  return returnFundingToReserved(sql, row.id, why, FUNDING_WALLET_WAIT_MS)
}

async function hasOlderOpenFunding(sql: Sql, row: TransferRow): Promise<boolean> {
  const [older] = await sql`
    select 1 from subaccount_transfers
    where subaccount_id = ${row.subaccount_id} and kind = 'fund' and state in ('reserved', 'submitted', 'accepted')
      and (created_at, id) < (${row.created_at}, ${row.id}::uuid)
    limit 1`
  return older !== undefined
}

/** accepted → funded once the exchange settled it: one transaction, row first, then the event. */
async function settle(deps: TransferDeps, row: TransferRow): Promise<Outcome> {
  const txId = row.transaction_id as string
  const tx = await deps.exchange.getTransaction(txId)
  const status = settlementOf(tx.status)
  if (status === 'pending') return 'pending'
  if (status === 'failed') return fail(deps, row, `exchange transaction ${txId} ${tx.status}`)

  const sub = await subaccountOf(deps.sql, row.subaccount_id)
  let exchangeId = sub?.exchange_id === null || sub === undefined ? null : Number(sub.exchange_id)
  if (exchangeId === null) {
    if (row.method !== 'create_subaccount') throw new Error(`transfer ${row.id}: deposit without an exchange id`)
    exchangeId = await createdSubaccountId(deps, txId, tx.data)
  }
  // a charged creation (v3): the fee the exchange took is the platform's, booked in the same event; a fee above
  // what was sent for it is made good by a top-up stored with the settlement (top-up.ts)
  const charged = await creationFeeOf(deps, row, txId)
  const topUp = charged && charged.shortfall > 0n ? await signTopUp(deps, row.currency, exchangeId, charged) : undefined
  const fee = charged && { feeAmount: charged.feeAmount, feeExcess: charged.feeExcess + (topUp?.excess ?? 0n) }
  const settled = {
    exchangeId,
    transactionId: txId,
    now: deps.clock.now(),
    ...(fee && { fee }),
    ...(topUp && { topUp }),
  }
  const done = await settleFunding(deps.sql, row, settled)
  if (!done) return 'pending'
  deps.log.info({ transferId: row.id, subaccountId: exchangeId, transactionId: txId }, 'subaccount funded')
  return 'funded'
}

/** The row fails and its reservation is released (it leaves the in-flight states); an alert follows. */
async function fail(deps: TransferDeps, row: TransferRow, reason: string): Promise<Outcome> {
  if (!(await failFunding(deps.sql, row.id, reason, deps.clock.now()))) return 'pending'
  await deps.alerter.alert('subaccount funding failed; reservation released', {
    transferId: row.id,
    userId: row.user_id,
    currency: row.currency,
    amount: row.amount,
    reason,
  })
  return 'failed'
}
