/**
 * Reconciliation (spec 2.4, 6, 6.1, 8.3 RECONCILE_MODE / RECONCILE_EPSILON): per
 * subaccount and collateral currency, the journal's userSub(u, id, currency) against the
 * exchange's collateral balance.
 *
 * Per subaccount, under the exchange cycle lock (so no funding or release is between the exchange
 * and the journal while balances are compared):
 *   1. skip it while one of its transfers is in flight (reserved, submitted, accepted) or a
 *      conversion round of it is open: the lock covers live fundings and releases, a row left in
 *      flight by a crash is not settled yet, a round's money is between the exchange wallet and
 *      the subaccount;
 *   2. ingest its positions' fills and settlements (trading/fills.ts), then its accruals
 *      (accruals.ts): complete hours are recorded; the incomplete hours' sums, already in the
 *      exchange's balance, are added to the journal side (`pending`), and so are the platform's
 *      fees not yet collected (journaled as revenue, still held in the user's subaccount);
 *   3. read the subaccount at the exchange (`get_subaccount`): collateral amounts, decimal
 *      strings, to base units rounded half to even;
 *   4. delta = exchange − (journal + pending); |delta| above RECONCILE_EPSILON (a decimal in the
 *      currency's own units) is a divergence.
 * Divergences, by RECONCILE_MODE:
 *   - `observe`: an alert (once an hour per subaccount and diverging currencies), nothing recorded;
 *   - `enforce`: ONE transaction appends a `reconciliation_adjustment` per diverging account (key
 *     `reconcile:{sub}:{account}:{minute}:{delta}`) and one `stop_raised` (key
 *     `reconcile:{sub}:stop:{minute}:{run signature over every divergence of the run}`) and sets
 *     `stopped_at`; then an alert. Identical divergences re-found in the same minute deduplicate
 *     (the money is recorded once); different ones leave their own pair.
 *
 * On Derive v3 every run also reconciles the platform's funding subaccount with the platform's
 * exchange funds (reconcile-funding.ts).
 *
 * Collateral only (USDC, ETH, BTC). Option and perp positions are the trading issue's to reconcile
 * against its own events; their premiums, fees, settlements and funding reach the collateral
 * balance and are compared there.
 */
import { RECONCILE_MODES, type ReconcileMode } from '@wh/config'
import { fromBaseUnits, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { recordReconcileDrift } from '@wh/jobs'
import {
  type AccountName,
  appendBatch,
  type EventInput,
  minuteBucket,
  parseAccount,
  userBalances,
  userSub,
} from '@wh/ledger'
import {
  ACCOUNTING_LOCK_WAIT_MS,
  currencyDecimals,
  EXCHANGE_CYCLE_LOCK,
  type ExchangeSubaccount,
  runBounded,
  type SubaccountDbRow,
  stopSubaccount,
  toExchangeSubaccount,
  withCycleLock,
} from '@wh/subaccounts'
import { ingestFills, ingestSettlements, uncollectedPlatformFees } from '@wh/trading'
import type { AlertFields } from '@wh/wallet'
import type { TickDefinition } from '../../ticks'
import { type AccountingDeps, type AccountingLog, fundingSubaccountOf, ingestAccruals } from './accruals'
import { type FundingReconcileResult, reconcileFundingSubaccount } from './reconcile-funding'

export const RECONCILE_TICK = 'exchange-reconcile'
export const RECONCILE_EVERY_MS = 5 * 60_000
/** Subaccounts per tick; the rest (and what the time budget leaves) follow from a Redis cursor. */
export const RECONCILE_BATCH = 2_000
/** subaccount_transfers states that mean money is between the exchange and the journal. */
export const IN_FLIGHT_STATES = ['reserved', 'submitted', 'accepted'] as const
/** In observe mode a subaccount's divergence in the same currencies alerts once per this period. */
export const OBSERVE_ALERT_EVERY_MS = 60 * 60_000
/** Where the next tick resumes (the last subaccount row id reached). */
export const RECONCILE_CURSOR_KEY = 'reconcile:cursor'
const ALERT_KEY_PREFIX = 'alert:reconcile:'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export interface Divergence {
  readonly currency: string
  readonly account: AccountName
  readonly decimals: number
  /** the journal's balance of the account */
  readonly journal: bigint
  /** accruals of incomplete hours, in the exchange's balance but not in the journal yet */
  readonly pending: bigint
  /** the exchange's collateral balance, base units */
  readonly exchange: bigint
  /** exchange − (journal + pending): what an adjustment posts to the subaccount */
  readonly delta: bigint
}

export type ReconcileOutcome =
  /** a transfer of the subaccount is in flight: not compared */
  | 'in_flight'
  /** every currency within epsilon */
  | 'clean'
  /** observe mode: divergences alerted, nothing recorded */
  | 'observed'
  /** enforce mode: adjustments and a stop recorded, subaccount stopped */
  | 'stopped'
  /** enforce mode: the same divergences were recorded earlier in this minute (deduplicated) */
  | 'already_recorded'

export interface ReconcileResult {
  readonly outcome: ReconcileOutcome
  readonly divergences: readonly Divergence[]
}

export interface ReconcileOptions {
  readonly mode: ReconcileMode
  /** RECONCILE_EPSILON: a decimal in each currency's own units */
  readonly epsilon: string
  /** the exchange's "now" (ms), for the accrual buckets */
  readonly nowMs: number
  /** the run's time: the minute bucket of its keys and the occurredAt of its events */
  readonly at: Date
}

/** RECONCILE_EPSILON in base units: |delta| > epsilon ⇔ |delta| > floor(epsilon) for a whole delta. */
export function epsilonBaseUnits(epsilon: string, decimals: number): bigint {
  return toBaseUnits(epsilon, decimals, 'down')
}

const abs = (x: bigint) => (x < 0n ? -x : x)
const signed = (x: bigint, decimals: number) => (x > 0n ? '+' : '') + fromBaseUnits(x, decimals)

/**
 * A transfer of the subaccount is in flight (a creation's top-up counts until it is done: the journal already holds
 * the amount it brings, top-up.ts), or a conversion round of it is open: between its
 * withdraw and its deposit the round's money is in the exchange wallet while the journal (after
 * `swap_executed`) already holds the bought currency in the subaccount (docs/trading.md).
 */
async function transferInFlight(sql: Sql, subaccountRowId: string): Promise<boolean> {
  const rows = await sql`
    select 1 from subaccount_transfers
    where subaccount_id = ${subaccountRowId}
      and (state in ${sql([...IN_FLIGHT_STATES])} or (kind = 'top_up' and state <> 'done'))
    union all
    select 1 from conversions
    where subaccount_id = ${subaccountRowId} and state in ('planned', 'withdrawing', 'swapping', 'depositing')
    limit 1`
  return rows.length > 0
}

/** Compares one subaccount's collateral with the journal; does not record anything. */
export async function findDivergences(
  deps: Pick<AccountingDeps, 'sql' | 'exchange'>,
  sub: ExchangeSubaccount,
  pending: ReadonlyMap<string, bigint>,
  epsilon: string,
): Promise<Divergence[]> {
  // the exchange first, the journal second: under the cycle lock neither moves in between,
  // except for accruals, which `pending` covers
  const exchange = await deps.exchange.getSubaccount(sub.exchangeId)
  const journal = new Map<string, bigint>()
  for (const b of await userBalances(deps.sql, sub.userId)) {
    const a = parseAccount(b.account)
    if (a?.bearer === 'user' && a.family === 'sub' && a.subaccountId === sub.ledgerId)
      journal.set(b.currency, (journal.get(b.currency) ?? 0n) + b.balance)
  }
  const exchangeAmounts = new Map<string, string>()
  for (const c of exchange.collaterals) exchangeAmounts.set(c.asset_name, c.amount)
  const currencies = [...new Set([...journal.keys(), ...exchangeAmounts.keys(), ...pending.keys()])].sort()

  const divergences: Divergence[] = []
  for (const currency of currencies) {
    const decimals = await currencyDecimals(deps.exchange, currency)
    const exchangeUnits = toBaseUnits(exchangeAmounts.get(currency) ?? '0', decimals, 'half-even')
    const journalUnits = journal.get(currency) ?? 0n
    const pendingUnits = pending.get(currency) ?? 0n
    const delta = exchangeUnits - journalUnits - pendingUnits
    if (abs(delta) <= epsilonBaseUnits(epsilon, decimals)) continue
    divergences.push({
      currency,
      account: userSub(sub.userId, sub.ledgerId, currency),
      decimals,
      journal: journalUnits,
      pending: pendingUnits,
      exchange: exchangeUnits,
      delta,
    })
  }
  return divergences
}

function alertFields(sub: ExchangeSubaccount, mode: ReconcileMode, divergences: readonly Divergence[]): AlertFields {
  const fields: Record<string, string> = {
    mode,
    subaccount: sub.ledgerId,
    subaccountRowId: sub.id,
    userId: sub.userId,
  }
  for (const d of divergences)
    fields[d.currency] =
      `journal ${fromBaseUnits(d.journal, d.decimals)}` +
      (d.pending !== 0n ? ` (+${fromBaseUnits(d.pending, d.decimals)} accruing)` : '') +
      `, exchange ${fromBaseUnits(d.exchange, d.decimals)}, delta ${signed(d.delta, d.decimals)}`
  return fields
}

/** The stop's reason as stored on the subaccount row (bounded: the column is read by humans). */
function stopReason(divergences: readonly Divergence[], at: Date): string {
  const parts = divergences.map((d) => `${d.currency} ${signed(d.delta, d.decimals)}`)
  return `reconciliation at ${at.toISOString()}: ${parts.join(', ')}`.slice(0, 500)
}

/** Enforce mode: the adjustments, the stop and `stopped_at`, in one transaction. True if anything new was recorded. */
async function recordDivergences(
  sql: Sql,
  sub: ExchangeSubaccount,
  divergences: readonly Divergence[],
  at: Date,
): Promise<boolean> {
  const bucket = minuteBucket(at)
  const events: EventInput[] = divergences.map((d) => ({
    type: 'reconciliation_adjustment',
    payload: { userId: sub.userId, subaccountId: sub.ledgerId, currency: d.currency, bucket, delta: d.delta },
    occurredAt: at,
  }))
  events.push({
    type: 'stop_raised',
    payload: {
      source: 'reconciliation',
      subaccountId: sub.ledgerId,
      bucket,
      divergences: divergences.map((d) => ({ account: d.account, delta: d.delta })),
      userId: sub.userId,
    },
    occurredAt: at,
  })
  return sql.begin(async (tx) => {
    // the row first: a clearStop running now waits, or has committed and is overridden here
    await tx`select id from subaccounts where id = ${sub.id} for update`
    const results = await appendBatch(tx, events)
    // stopped even when every event deduplicated: the divergence is there, so no trading on it
    await stopSubaccount(tx, sub.id, at, stopReason(divergences, at))
    return results.some((r) => !r.duplicate)
  })
}

/**
 * Reconciles one subaccount (see the file comment). Run under the cycle lock.
 *
 * @example
 *   const r = await reconcileSubaccount(deps, sub, { mode: 'enforce', epsilon: '0.01', nowMs, at: new Date(nowMs) }, log)
 */
export async function reconcileSubaccount(
  deps: AccountingDeps,
  sub: ExchangeSubaccount,
  opts: ReconcileOptions,
  log: AccountingLog,
): Promise<ReconcileResult> {
  if (!RECONCILE_MODES.includes(opts.mode)) throw new Error(`unknown reconcile mode ${String(opts.mode)}`)
  if (await transferInFlight(deps.sql, sub.id)) return { outcome: 'in_flight', divergences: [] }
  // the fills and settlements of our positions first (docs/trading.md): they move the exchange's
  // balance as surely as accruals do
  const fillDeps = { sql: deps.sql, exchange: deps.exchange, platformFeeRate: deps.config.platformFeeRate }
  const trading = { id: sub.id, userId: sub.userId, exchangeId: sub.exchangeId }
  await ingestFills(fillDeps, trading)
  await ingestSettlements(fillDeps, trading, opts.nowMs)
  const accruals = await ingestAccruals(deps, sub, { nowMs: opts.nowMs, needPending: true }, log)
  // the platform's fees are journaled as revenue but stay in the user's subaccount until collected
  const expected = new Map(accruals.pending)
  for (const [currency, fees] of await uncollectedPlatformFees(deps.sql, sub.id))
    expected.set(currency, (expected.get(currency) ?? 0n) + fees)
  const divergences = await findDivergences(deps, sub, expected, opts.epsilon)
  if (divergences.length === 0) return { outcome: 'clean', divergences }

  log.warn(
    {
      subaccountId: sub.ledgerId,
      mode: opts.mode,
      divergences: divergences.map((d) => ({ currency: d.currency, delta: d.delta.toString() })),
    },
    'reconciliation divergence',
  )
  if (opts.mode === 'observe') {
    // throttled per subaccount and diverging currencies, not per delta: a persisting gap moves by
    // a base unit as hours are recorded and would otherwise alert on every tick
    const currencies = divergences.map((d) => d.currency).join(',')
    const claimed = await deps.redis.set(
      `${ALERT_KEY_PREFIX}${sub.ledgerId}:${currencies}`,
      '1',
      'PX',
      OBSERVE_ALERT_EVERY_MS,
      'NX',
    )
    if (claimed === 'OK')
      await deps.alerter.alert(
        'reconciliation divergence (observe mode: nothing recorded)',
        alertFields(sub, opts.mode, divergences),
      )
    return { outcome: 'observed', divergences }
  }
  const recorded = await recordDivergences(deps.sql, sub, divergences, opts.at)
  if (!recorded) return { outcome: 'already_recorded', divergences }
  // after the commit: no chat round trip while the row and the balances are locked
  await deps.alerter.alert(
    'reconciliation: subaccount stopped, adjustment recorded (enforce mode)',
    alertFields(sub, opts.mode, divergences),
  )
  return { outcome: 'stopped', divergences }
}

export interface ReconcileSummary {
  /** false: another exchange tick held the cycle lock; nothing was done */
  ran: boolean
  subaccounts: number
  clean: number
  inFlight: number
  observed: number
  stopped: number
  alreadyRecorded: number
  errors: number
  /** left for the next tick (the time budget ran out) */
  deferred: number
  /** the platform's funding subaccount (null: none configured): reconcile-funding.ts */
  fundingSubaccount: FundingReconcileResult['outcome'] | 'error' | null
}

/** The funding subaccount's step of a run: its outcome, its divergences added to the run's drift. */
async function reconcileFunding(
  deps: AccountingDeps,
  opts: { mode: ReconcileMode; epsilon: string; at: Date },
  drift: Map<string, { delta: bigint; decimals: number }>,
  log: AccountingLog,
): Promise<ReconcileSummary['fundingSubaccount']> {
  const fundingId = fundingSubaccountOf(deps.config)
  if (fundingId === undefined) return null
  try {
    const r = await reconcileFundingSubaccount(deps, fundingId, { ...opts, nowMs: opts.at.getTime() }, log)
    for (const d of r.divergences) {
      const top = drift.get(d.currency)
      if (!top || abs(d.delta) > abs(top.delta)) drift.set(d.currency, d)
    }
    return r.outcome
  } catch (err) {
    log.warn({ subaccountId: String(fundingId), err }, 'reconciliation failed for the funding subaccount')
    return 'error'
  }
}

async function subaccountsAfter(sql: Sql, afterId: string | null, limit: number): Promise<ExchangeSubaccount[]> {
  const rows = await sql<SubaccountDbRow[]>`
    select id, user_id, asset, exchange_id, accrued_to_ms, stopped_at from subaccounts
    where exchange_id is not null and (${afterId}::uuid is null or id > ${afterId}::uuid)
    order by id
    limit ${limit}`
  return rows.map(toExchangeSubaccount)
}

/**
 * The reconciliation tick: a bounded batch of subaccounts from where the last tick stopped,
 * within the time budget, under the cycle lock. A subaccount that fails (exchange down, …) is
 * logged and counted; the others go on.
 */
export async function runReconcile(
  deps: AccountingDeps,
  log: AccountingLog,
  over: { mode?: ReconcileMode; epsilon?: string; lockWaitMs?: number } = {},
): Promise<ReconcileSummary> {
  const summary: ReconcileSummary = {
    ran: false,
    subaccounts: 0,
    clean: 0,
    inFlight: 0,
    observed: 0,
    stopped: 0,
    alreadyRecorded: 0,
    errors: 0,
    deferred: 0,
    fundingSubaccount: null,
  }
  const mode = over.mode ?? deps.config.reconcileMode
  const epsilon = over.epsilon ?? deps.config.reconcileEpsilon
  const outcome = await withCycleLock(
    deps.redis,
    async () => {
      summary.ran = true
      const stored = await deps.redis.get(RECONCILE_CURSOR_KEY)
      const after = stored !== null && UUID.test(stored) ? stored : null
      const subs = await subaccountsAfter(deps.sql, after, RECONCILE_BATCH)
      summary.subaccounts = subs.length
      const at = deps.clock.now()
      // GET /metrics: the largest |delta| per currency of this run (docs/architecture.md "Operating it")
      const drift = new Map<string, { delta: bigint; decimals: number }>()
      const started = await runBounded(subs, async (sub) => {
        try {
          const r = await reconcileSubaccount(deps, sub, { mode, epsilon, nowMs: at.getTime(), at }, log)
          for (const d of r.divergences) {
            const top = drift.get(d.currency)
            if (!top || abs(d.delta) > abs(top.delta)) drift.set(d.currency, d)
          }
          if (r.outcome === 'clean') summary.clean++
          else if (r.outcome === 'in_flight') summary.inFlight++
          else if (r.outcome === 'observed') summary.observed++
          else if (r.outcome === 'stopped') summary.stopped++
          else summary.alreadyRecorded++
        } catch (err) {
          summary.errors++
          log.warn({ subaccountId: sub.ledgerId, err }, 'reconciliation failed for a subaccount')
        }
      })
      summary.deferred = subs.length - started
      summary.fundingSubaccount = await reconcileFunding(deps, { mode, epsilon, at }, drift, log)
      const figures = new Map([...drift].map(([c, d]) => [c, fromBaseUnits(abs(d.delta), d.decimals)]))
      await recordReconcileDrift(deps.redis, figures).catch((err: unknown) =>
        log.warn({ err }, 'reconciliation drift not recorded'),
      )
      // resume after the last one started; from the start once the whole table was covered
      const last = subs[started - 1]
      if (started < subs.length || subs.length === RECONCILE_BATCH) {
        if (last) await deps.redis.set(RECONCILE_CURSOR_KEY, last.id)
      } else await deps.redis.del(RECONCILE_CURSOR_KEY)
    },
    EXCHANGE_CYCLE_LOCK,
    { waitMs: over.lockWaitMs ?? ACCOUNTING_LOCK_WAIT_MS },
  )
  if (!outcome.ran) log.info({}, 'reconciliation skipped: the exchange cycle lock is held')
  return summary
}

export const reconcileTick: TickDefinition = {
  name: RECONCILE_TICK,
  queue: 'accounting',
  everyMs: RECONCILE_EVERY_MS,
  process: async (_job, ctx): Promise<ReconcileSummary> => {
    const summary = await runReconcile(ctx.deps, ctx.log)
    const funding = summary.fundingSubaccount
    if (summary.observed + summary.stopped + summary.errors > 0 || (funding !== null && funding !== 'clean'))
      ctx.log.info({ ...summary }, 'reconciliation tick')
    return summary
  },
}
