/**
 * Fee collection (the worker's `exchange-fees` tick, queue `treasury`, every 10 min; under the exchange
 * cycle lock, which `runFeeCollection` takes; docs/exchange.md "Fee collection"). The platform's fee of each fill (`position_fills.platform_fee`) is journaled as
 * revenue (`PLATFORM_FEE_REVENUE` of @wh/ledger) by `option_sold` at once, but the money stays in the user's subaccount at
 * the exchange until this tick withdraws it to the platform's exchange wallet. Reconciliation
 * counts the uncollected fees (fee_collected_at null) on the journal side meanwhile.
 *
 * Per subaccount whose unclaimed fees reach FEE_MIN_COLLECT (1 USDC), while it is not stopped and
 * no release, conversion round or other fee collection of it is open:
 *   1. sign a withdraw of exactly their sum; in ONE transaction insert the `subaccount_transfers`
 *      row (kind 'fee', submitted, the signed params stored BEFORE any send) and claim the fills
 *      (`fee_transfer_id` = the row, only those still unclaimed and uncollected);
 *   2. send the stored action, take the transaction id (movements.ts `advanceMovement`: the crash and
 *      error rules of funding and release legs: a re-send or a history match, never a second action);
 *   3. settled → ONE transaction: the row `done` and `fee_collected_at` on its fills;
 *      failed or expired unlanded → the row `failed` and its fills released (`fee_transfer_id`
 *      null) for a later run, after FEE_RETRY_AFTER_MS.
 * No journal event: the journal already moved the fee to `PLATFORM_FEE_REVENUE` when the fill was
 * recorded; the withdraw only moves the platform's money physically, from the user's subaccount to
 * the platform's exchange wallet.
 *
 * The claims on the fills (`position_fills.fee_transfer_id`, `fee_collected_at`) are the trading
 * package's writes: it owns `position_fills` and sits above this package, so the worker hands fee
 * collection its functions (`FeeClaims`, @wh/trading's fill-store.ts).
 */
import { mapLimit } from '@wh/core'
import type { Sql } from '@wh/db'
import { withCycleLock } from '../cycle-lock'
import { advanceMovement, exchangeAmount, insertSignedMovement, signMovement, type TransferDeps } from '../movements'
import { markFeeTransferDone, TRANSFER_COLUMNS, type TransferRow } from '../transfers'

/** Below this (USDC base units: 1 USDC) a subaccount's fees wait for more, not worth a withdrawal. */
export const FEE_MIN_COLLECT = 1_000_000n
/** The only currency fees are charged in (premiums are USDC). */
export const FEE_CURRENCY = 'USDC'
/** Subaccounts started per run, and open collections advanced per run. */
export const FEE_BATCH = 200
/** Fills one collection claims at most; the rest go with the next one. */
export const FEE_MAX_FILLS = 5_000
export const FEE_CONCURRENCY = 8
/** A subaccount whose last collection failed is tried again after this. */
export const FEE_RETRY_AFTER_MS = 60 * 60_000

export interface FeeSummary {
  /** collections settled this run: their fills are marked collected */
  collected: number
  /** new collections stored (and sent) this run */
  started: number
  /** collections that failed this run: their fills were released */
  failed: number
  /** sent or accepted, waiting for the exchange; or a retryable error */
  pending: number
  /** another run holds the cycle lock */
  locked: boolean
}

/**
 * The fills' fee claims, written by their owner (@wh/trading's fill-store.ts) and handed over by the worker:
 * the trading package depends on this one, so it cannot be imported here.
 */
export interface FeeClaims {
  /** the fills of a collection that failed in a run that died before releasing them, unclaimed again */
  readonly releaseFailedFeeClaims: (sql: Sql) => Promise<void>
  /** those of `tradeIds` still unclaimed and uncollected, claimed by the collection `transferId`; their fees */
  readonly claimFeeFills: (
    tx: Sql,
    c: { subaccountId: string; tradeIds: readonly string[]; transferId: string },
  ) => Promise<{ platform_fee: string }[]>
  /** the collection `transferId` settled: its fills collected at `at` (a step of the caller's transaction) */
  readonly markFeesCollected: (tx: Sql, transferId: string, at: Date) => Promise<void>
  /** the collection `transferId` failed, nothing moved: its fills unclaimed for a later one */
  readonly releaseFeeClaim: (sql: Sql, transferId: string) => Promise<void>
}

/** Test seam, as in funding/fund.ts: a crash test stops the run at this point. */
export interface FeeHooks {
  /** the row and the claimed fills are committed, nothing sent yet */
  afterStored?: (row: TransferRow) => Promise<void>
}

type Outcome = 'collected' | 'failed' | 'pending'

/** One run of the fee collection; takes the cycle lock. */
export async function runFeeCollection(
  deps: TransferDeps & { redis: import('ioredis').Redis },
  claims: FeeClaims,
  hooks: FeeHooks = {},
): Promise<FeeSummary> {
  const r = await withCycleLock(deps.redis, () => collectFees(deps, claims, hooks))
  return r.ran ? r.value : { collected: 0, started: 0, failed: 0, pending: 0, locked: true }
}

/** Advances the open collections, then starts new ones; the caller holds the cycle lock. */
export async function collectFees(deps: TransferDeps, claims: FeeClaims, hooks: FeeHooks = {}): Promise<FeeSummary> {
  const summary: FeeSummary = { collected: 0, started: 0, failed: 0, pending: 0, locked: false }
  const count = (o: Outcome) => {
    summary[o]++
  }
  // fills of a row that failed in a run that died before releasing them
  await claims.releaseFailedFeeClaims(deps.sql)

  const open = await deps.sql.unsafe<TransferRow[]>(
    `select ${TRANSFER_COLUMNS} from subaccount_transfers
     where kind = 'fee' and state in ('submitted', 'accepted')
     order by created_at, id limit ${FEE_BATCH}`,
  )
  await mapLimit(open, FEE_CONCURRENCY, async (row) =>
    count(await safely(deps, row, () => advance(deps, claims, row, false))),
  )

  const due = await dueSubaccounts(deps.sql, deps.clock.now())
  await mapLimit(due, FEE_CONCURRENCY, async (sub) => {
    let row: TransferRow | null
    try {
      row = await start(deps, claims, sub)
    } catch (err) {
      deps.log.warn({ subaccountId: sub.exchange_id, err: (err as Error).message }, 'fee collection: not started')
      return
    }
    if (!row) return
    summary.started++
    const stored = row
    await hooks.afterStored?.(stored)
    count(await safely(deps, stored, () => advance(deps, claims, stored, true)))
  })
  return summary
}

async function safely(deps: TransferDeps, row: TransferRow, fn: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await fn()
  } catch (err) {
    deps.log.warn({ transferId: row.id, err: (err as Error).message }, 'fee collection: error, retried next run')
    return 'pending'
  }
}

interface DueSubaccount {
  id: string
  user_id: string
  exchange_id: string
}

/** Subaccounts with enough unclaimed fees and nothing that holds their money in place. */
async function dueSubaccounts(sql: Sql, now: Date): Promise<DueSubaccount[]> {
  const retryAfter = new Date(now.getTime() - FEE_RETRY_AFTER_MS)
  return sql<DueSubaccount[]>`
    select s.id, s.user_id, s.exchange_id::text as exchange_id
    from subaccounts s
    join position_fills f on f.subaccount_id = s.id and f.fee_collected_at is null and f.fee_transfer_id is null
    where s.exchange_id is not null and s.stopped_at is null
      and not exists (select 1 from subaccount_releases r
        where r.subaccount_id = s.id and r.state in ('requested', 'waiting', 'withdrawing'))
      and not exists (select 1 from conversions c
        where c.subaccount_id = s.id and c.state in ('planned', 'withdrawing', 'swapping', 'depositing'))
      and not exists (select 1 from subaccount_transfers t
        where t.subaccount_id = s.id and t.kind = 'fee'
          and (t.state in ('reserved', 'submitted', 'accepted') or (t.state = 'failed' and t.completed_at > ${retryAfter})))
    group by s.id, s.user_id, s.exchange_id
    having sum(f.platform_fee) >= ${FEE_MIN_COLLECT.toString()}
    order by s.id
    limit ${FEE_BATCH}`
}

class FillsMovedError extends Error {}

/**
 * Signs a withdraw of the subaccount's unclaimed fees and stores it with the claim of exactly those
 * fills, in one transaction. Null when the fills moved meanwhile (the next run starts again).
 */
async function start(deps: TransferDeps, claims: FeeClaims, sub: DueSubaccount): Promise<TransferRow | null> {
  const fills = await deps.sql<{ trade_id: string; platform_fee: string }[]>`
    select trade_id, platform_fee::text from position_fills
    where subaccount_id = ${sub.id} and fee_collected_at is null and fee_transfer_id is null
    order by traded_at, trade_id limit ${FEE_MAX_FILLS}`
  const units = fills.reduce((a, f) => a + BigInt(f.platform_fee), 0n)
  if (units < FEE_MIN_COLLECT) return null
  const exchangeSubaccountId = Number(sub.exchange_id)
  const signed = await signMovement(deps, {
    method: 'withdraw',
    subaccountId: exchangeSubaccountId,
    currency: FEE_CURRENCY,
    amount: await exchangeAmount(deps.exchange, FEE_CURRENCY, units),
  })
  try {
    return await deps.sql.begin(async (t) => {
      const tx = t as unknown as Sql
      const row = await insertSignedMovement(
        deps,
        tx,
        {
          kind: 'fee',
          method: 'withdraw',
          userId: sub.user_id,
          subaccountId: sub.id,
          exchangeSubaccountId,
          currency: FEE_CURRENCY,
          units,
        },
        signed,
      )
      const claimed = await claims.claimFeeFills(tx, {
        subaccountId: sub.id,
        tradeIds: fills.map((f) => f.trade_id),
        transferId: row.id,
      })
      const sum = claimed.reduce((a, f) => a + BigInt(f.platform_fee), 0n)
      // the withdraw is signed for `units`: it must carry exactly the fills it claims
      if (claimed.length !== fills.length || sum !== units) throw new FillsMovedError()
      return row
    })
  } catch (e) {
    if (e instanceof FillsMovedError) return null
    throw e
  }
}

/** One pass over a stored collection: send / accept / settle, by movements.ts `advanceMovement`. */
async function advance(deps: TransferDeps, claims: FeeClaims, row: TransferRow, firstSend: boolean): Promise<Outcome> {
  const [sub] = await deps.sql<{ exchange_id: string }[]>`
    select exchange_id::text as exchange_id from subaccounts where id = ${row.subaccount_id}`
  if (!sub?.exchange_id) throw new Error(`fee collection ${row.id}: subaccount without an exchange id`)
  const now = deps.clock.now()
  const outcome = await advanceMovement(
    deps,
    row,
    { exchangeSubaccountId: Number(sub.exchange_id), firstSend },
    async (t, transactionId, from) => {
      if (!(await markFeeTransferDone(t, row.id, { transactionId, from, now }))) return false
      await claims.markFeesCollected(t, row.id, now)
      return true
    },
  )
  if (outcome.kind === 'settled') {
    deps.log.info({ transferId: row.id, subaccountId: sub.exchange_id, amount: row.amount }, 'platform fees collected')
    return 'collected'
  }
  if (outcome.kind === 'pending') return 'pending'
  // nothing moved: the fills go back to the pool of the next collection (after FEE_RETRY_AFTER_MS)
  await claims.releaseFeeClaim(deps.sql, row.id)
  // a margin or funds refusal, or an expiry, is expected to pass; anything else needs a look
  if (!outcome.retryable)
    await deps.alerter.alert('platform fee collection failed; fees stay in the subaccount', {
      transferId: row.id,
      userId: row.user_id,
      currency: row.currency,
      amount: row.amount,
      reason: outcome.reason,
    })
  return 'failed'
}
