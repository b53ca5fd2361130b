/**
 * Reconciliation of the platform's funding subaccount on Derive v3 (docs/exchange-v3.md "Accruals
 * and reconciliation on v3"), a step of every reconciliation run, under the exchange cycle lock.
 *
 * The funding subaccount holds the platform's exchange funds (`platformHot(EXCHANGE_CHAIN)`: what was
 * bridged in, its interest, less the creation fees it paid and the treasury's withdrawals) and, physically, the users' money on
 * its way: fundings left it for users' subaccounts, release legs, fee collections and conversions
 * came back into it, while the journal moved those between users' transit and subaccounts (their
 * `subaccount_transfers` rows name each one). So per currency, in base units:
 *
 *   expected = platformHot(EXCHANGE_CHAIN) + interest of the running hours + settled movements
 *              (− funded, + released, + fees collected, − converted in, + converted out)
 *
 * What is in flight may or may not show at the exchange yet, in either direction, and widens the
 * band the exchange may lie in: `low` (the exchange may hold less: a funding or conversion deposit
 * sent and not settled, a treasury withdrawal to L1 not journaled yet, a bridge deposit of the last hour journaled and not credited yet) and `high`
 * (it may hold more: a release leg, fee collection or conversion withdraw not settled, a bridge
 * deposit of the last hour credited before it was journaled, a creation top-up owed and not landed).
 * A currency diverges when exchange − expected lies more than RECONCILE_EPSILON outside
 * [low, high]; its delta is the part outside. A quiet world has an empty band and compares exactly.
 *
 * A divergence alerts (observe: once an hour per diverging currencies) and counts in the run's
 * drift metric. In `enforce` mode it also books a `reconciliation_adjustment` without a user
 * (from PLATFORM_EXPENSE_RECONCILIATION into `platformHot(EXCHANGE_CHAIN)`, key per minute and delta), so the
 * journal mirrors the exchange again and the loss (or unexplained gain) is the platform's, in the
 * open. No stop: the funds are the platform's and no user's subaccount is wrong, and holding every
 * user's funding would not bring the money back; whether the platform as a whole still covers what
 * it owes is the solvency run's question, and its deficit stop (docs/solvency.md) the platform-wide one.
 */
import type { ReconcileMode } from '@wh/config'
import { fromBaseUnits, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { accountBalances, appendBatch, type EventInput, EXCHANGE_CHAIN, minuteBucket, platformHot } from '@wh/ledger'
import { currencyDecimals, unitsOf } from '@wh/subaccounts'
import { openWithdrawalTotals } from '@wh/treasury'
import { type AccountingDeps, type AccountingLog, ingestFundingSubaccountAccruals } from './accruals'

/** A bridge deposit journaled this recently may not be credited at the exchange yet (and the reverse). */
export const BRIDGE_CREDIT_WINDOW_MS = 60 * 60_000
/** In observe mode the funding subaccount's divergence in the same currencies alerts once per this period. */
export const FUNDING_ALERT_EVERY_MS = 60 * 60_000
const ALERT_KEY_PREFIX = 'alert:reconcile:funding:'

export interface FundingDivergence {
  readonly currency: string
  readonly decimals: number
  /** the funding subaccount's balance at the exchange */
  readonly exchange: bigint
  /** what the journal and the settled movements explain */
  readonly expected: bigint
  /** the band of movements in flight: the exchange may hold expected + low … expected + high */
  readonly low: bigint
  readonly high: bigint
  /** the part of exchange − expected outside the band: what an adjustment posts to the platform's exchange funds */
  readonly delta: bigint
}

export interface FundingReconcileResult {
  readonly outcome: 'clean' | 'observed' | 'adjusted' | 'already_recorded'
  readonly divergences: readonly FundingDivergence[]
}

/** Per currency, base units: settled movements' effect on the funding subaccount, and the in-flight band. */
interface Flows {
  settled: bigint
  low: bigint
  high: bigint
}

const SETTLED_SIGN: Readonly<Record<string, bigint>> = {
  fund: -1n,
  release: 1n,
  fee: 1n,
  convert_in: -1n,
  convert_out: 1n,
}

function flowOf(flows: Map<string, Flows>, currency: string): Flows {
  let f = flows.get(currency)
  if (!f) {
    f = { settled: 0n, low: 0n, high: 0n }
    flows.set(currency, f)
  }
  return f
}

/** The movements of `subaccount_transfers`: settled (summed) and in flight (each with what it sent). */
async function movementFlows(deps: Pick<AccountingDeps, 'sql' | 'exchange'>, flows: Map<string, Flows>) {
  const [settled, open] = await Promise.all([
    deps.sql<{ currency: string; kind: string; total: string }[]>`
      select currency, kind, sum(amount)::text as total from subaccount_transfers
      where (kind = 'fund' and state = 'funded') or (kind = 'release' and state = 'released')
        or (kind in ('fee', 'convert_in', 'convert_out') and state = 'done')
      group by currency, kind`,
    deps.sql<{ currency: string; kind: string; amount: string; sent: string | null }[]>`
      select currency, kind, amount::text as amount, params->>'amount' as sent from subaccount_transfers
      where state in ('submitted', 'accepted') or (kind = 'top_up' and state <> 'done')`,
  ])
  for (const r of settled) flowOf(flows, r.currency).settled += (SETTLED_SIGN[r.kind] ?? 0n) * BigInt(r.total)
  for (const r of open) {
    const f = flowOf(flows, r.currency)
    const amount = BigInt(r.amount)
    if (r.kind === 'fund') {
      // a creation sends the fee cap's worth on top of the amount (docs/exchange-v3.md "Movements on v3")
      const sent = r.sent === null ? null : unitsOf(r.sent, await currencyDecimals(deps.exchange, r.currency))
      f.low -= sent !== null && sent > amount ? sent : amount
    } else if (r.kind === 'convert_in') f.low -= amount
    // release, fee, convert_out come back into it; a top-up owed is already out of the platform's exchange funds
    else f.high += amount
  }
}

/**
 * Bridge deposits of the last BRIDGE_CREDIT_WINDOW_MS widen the band both ways: journaled, the exchange may not have
 * credited them yet; not journaled, it may have. Both, whatever the journal says now: the bridge tick does not take
 * the exchange cycle lock, so it may journal one between this read and the journal's.
 */
async function bridgeFlows(sql: Sql, flows: Map<string, Flows>) {
  const rows = await sql<{ token: string; amount: string }[]>`
    select distinct on (ref_id) token, amount::text as amount from outbound_txs
    where purpose = 'bridge' and state <> 'failed'
      and created_at > now() - make_interval(secs => ${BRIDGE_CREDIT_WINDOW_MS / 1000})
    order by ref_id, step desc`
  for (const r of rows) {
    const f = flowOf(flows, r.token)
    f.low -= BigInt(r.amount)
    f.high += BigInt(r.amount)
  }
}

/**
 * The treasury's open withdrawals to L1 (jobs/treasury): once sent the exchange has debited them, and the journal
 * books them (`bridged` derive → ethereum) only when the payout is final on L1.
 */
async function treasuryFlows(sql: Sql, flows: Map<string, Flows>) {
  for (const [currency, total] of await openWithdrawalTotals(sql)) flowOf(flows, currency).low -= total
}

/** Compares the funding subaccount with what the journal explains; records nothing. */
export async function findFundingDivergences(
  deps: AccountingDeps,
  fundingId: number,
  opts: { epsilon: string; nowMs: number },
  log: AccountingLog,
): Promise<FundingDivergence[]> {
  // its complete hours of interest recorded first; the running hours' are in the exchange's balance
  const accruals = await ingestFundingSubaccountAccruals(deps, fundingId, { nowMs: opts.nowMs, needPending: true }, log)
  const flows = new Map<string, Flows>()
  await Promise.all([movementFlows(deps, flows), bridgeFlows(deps.sql, flows), treasuryFlows(deps.sql, flows)])
  // the exchange after the movements' rows: under the cycle lock none of them moves in between
  const exchange = new Map<string, string>()
  for (const c of (await deps.exchange.getSubaccount(fundingId)).collaterals) exchange.set(c.asset_name, c.amount)
  const journal = new Map<string, bigint>()
  for (const b of await accountBalances(deps.sql, platformHot(EXCHANGE_CHAIN))) journal.set(b.currency, b.balance)

  const currencies = [...new Set([...exchange.keys(), ...journal.keys(), ...flows.keys(), ...accruals.pending.keys()])]
  const divergences: FundingDivergence[] = []
  for (const currency of currencies.sort()) {
    const decimals = await currencyDecimals(deps.exchange, currency)
    const f = flows.get(currency) ?? { settled: 0n, low: 0n, high: 0n }
    const held = toBaseUnits(exchange.get(currency) ?? '0', decimals, 'half-even')
    const expected = (journal.get(currency) ?? 0n) + (accruals.pending.get(currency) ?? 0n) + f.settled
    const raw = held - expected
    const eps = toBaseUnits(opts.epsilon, decimals, 'down')
    const delta = raw > f.high + eps ? raw - f.high : raw < f.low - eps ? raw - f.low : 0n
    if (delta !== 0n)
      divergences.push({ currency, decimals, exchange: held, expected, low: f.low, high: f.high, delta })
  }
  return divergences
}

function alertFields(fundingId: number, mode: ReconcileMode, divergences: readonly FundingDivergence[]) {
  const fields: Record<string, string> = { mode, fundingSubaccount: String(fundingId) }
  const dec = (x: bigint, d: number) => fromBaseUnits(x, d)
  for (const d of divergences)
    fields[d.currency] =
      `expected ${dec(d.expected, d.decimals)} (in flight ${dec(d.low, d.decimals)} to +${dec(d.high, d.decimals)})` +
      `, exchange ${dec(d.exchange, d.decimals)}, delta ${d.delta > 0n ? '+' : ''}${dec(d.delta, d.decimals)}`
  return fields
}

/**
 * Reconciles the funding subaccount (see the file comment). Run under the cycle lock.
 *
 * @example
 *   const r = await reconcileFundingSubaccount(deps, 7, { mode: 'observe', epsilon: '0.01', nowMs, at }, log)
 */
export async function reconcileFundingSubaccount(
  deps: AccountingDeps,
  fundingId: number,
  opts: { mode: ReconcileMode; epsilon: string; nowMs: number; at: Date },
  log: AccountingLog,
): Promise<FundingReconcileResult> {
  const divergences = await findFundingDivergences(deps, fundingId, opts, log)
  if (divergences.length === 0) return { outcome: 'clean', divergences }
  log.warn(
    {
      fundingSubaccount: fundingId,
      mode: opts.mode,
      divergences: divergences.map((d) => ({ currency: d.currency, delta: d.delta.toString() })),
    },
    'reconciliation divergence of the funding subaccount',
  )
  const fields = alertFields(fundingId, opts.mode, divergences)
  if (opts.mode === 'observe') {
    const currencies = divergences.map((d) => d.currency).join(',')
    const key = `${ALERT_KEY_PREFIX}${fundingId}:${currencies}`
    if ((await deps.redis.set(key, '1', 'PX', FUNDING_ALERT_EVERY_MS, 'NX')) === 'OK')
      await deps.alerter.alert('reconciliation: funding subaccount diverges (observe mode: nothing recorded)', fields)
    return { outcome: 'observed', divergences }
  }
  const bucket = minuteBucket(opts.at)
  const events: EventInput[] = divergences.map((d) => ({
    type: 'reconciliation_adjustment',
    payload: { subaccountId: String(fundingId), currency: d.currency, bucket, delta: d.delta },
    occurredAt: opts.at,
  }))
  const results = await appendBatch(deps.sql, events)
  if (!results.some((r) => !r.duplicate)) return { outcome: 'already_recorded', divergences }
  await deps.alerter.alert('reconciliation: funding subaccount adjusted (enforce mode)', fields)
  return { outcome: 'adjusted', divergences }
}
