/**
 * The release tick (queue `treasury`, under the exchange cycle lock): for each open release
 * (POST /subaccounts/:asset/release), withdraws what the journal holds in the subaccount back to
 * the platform's exchange wallet and records `subaccount_released` (key `release:{rowId}`, spec
 * 6.1) into the user's transit.
 *
 * A release walks requested → waiting (reason) → withdrawing → released | failed (reason):
 *   requested / waiting: checked each run; it waits (saying why) while the subaccount is stopped,
 *     a funding of it is in flight, the exchange shows open positions or open orders, or the
 *     exchange holds less of a currency than the journal. Otherwise one leg per currency the
 *     journal holds there (> 0): a subaccount_transfers row (kind 'release') inserted already
 *     signed (state submitted) in the transaction that moves the release to withdrawing.
 *   withdrawing: each leg is sent (stored params, as funding), accepted, and on settlement ONE
 *     transaction marks the leg released and appends its event. All legs released → released.
 *     A leg refused for margin or funds, or expired unlanded → the release waits again with the
 *     reason and is re-planned from the journal (released legs already left it); any other
 *     refusal → failed, with an alert.
 */
import { mapLimit } from '@wh/core'
import { ExchangeError, type SignedTransfer, toE18 } from '@wh/exchange'
import { append, parseAccount, userBalances } from '@wh/ledger'
import {
  decimalsOf,
  deferRelease,
  errorCodeOf,
  exchangeAmount,
  insertReleaseLeg,
  markLegReleased,
  markMovementFailed,
  markReleased,
  markReleaseFailed,
  markReleaseWaiting,
  markReleaseWithdrawing,
  markTransferAccepted,
  type ReleaseState,
  sendStored,
  settlementOf,
  signMovement,
  TRANSFER_COLUMNS,
  type TransferDeps,
  type TransferRow,
  unitsOf,
  withCycleLock,
} from '@wh/subaccounts'
import type { TickDefinition } from '../../ticks'

export const RELEASE_TICK = 'exchange-release'
export const RELEASE_EVERY_MS = 10_000
/** Open releases taken per run. */
export const RELEASE_BATCH = 200
export const RELEASE_CONCURRENCY = 8

export type { ReleaseState }

export interface ReleaseSummary {
  released: number
  waiting: number
  withdrawing: number
  failed: number
  locked: boolean
}

/** Test seam, as in fund.ts. */
export interface ReleaseHooks {
  afterStored?: (legs: TransferRow[]) => Promise<void>
}

interface ReleaseRow {
  id: string
  user_id: string
  subaccount_id: string
  state: ReleaseState
  reason: string | null
  exchange_id: string | null
  stopped_at: Date | null
  stop_reason: string | null
  attempts: number
}

export async function runReleases(
  deps: TransferDeps & { redis: import('ioredis').Redis },
  hooks: ReleaseHooks = {},
): Promise<ReleaseSummary> {
  const r = await withCycleLock(deps.redis, () => processOpenReleases(deps, hooks))
  return r.ran ? r.value : { released: 0, waiting: 0, withdrawing: 0, failed: 0, locked: true }
}

/** The release `releaseId` as far as it can go now (the `release.run` job); the caller holds the cycle lock. */
export const releaseOne = (deps: TransferDeps, releaseId: string) => processOpenReleases(deps, {}, releaseId)

/** Works through the open releases (or only `only`), oldest first; the caller holds the cycle lock. */
export async function processOpenReleases(
  deps: TransferDeps,
  hooks: ReleaseHooks = {},
  only?: string,
): Promise<ReleaseSummary> {
  const rows = await deps.sql<ReleaseRow[]>`
    select r.id, r.user_id, r.subaccount_id, r.state, r.reason, s.exchange_id::text as exchange_id,
      s.stopped_at, s.stop_reason, r.attempts
    from subaccount_releases r join subaccounts s on s.id = r.subaccount_id
    where r.state in ('requested', 'waiting', 'withdrawing') and r.next_attempt_at <= now()
      ${only ? deps.sql`and r.id = ${only}` : deps.sql``}
    order by r.next_attempt_at, r.created_at, r.id limit ${RELEASE_BATCH}`
  const summary: ReleaseSummary = { released: 0, waiting: 0, withdrawing: 0, failed: 0, locked: false }
  await mapLimit(rows, RELEASE_CONCURRENCY, async (rel) => {
    let state: ReleaseState
    try {
      state = await processRelease(deps, rel, hooks)
      // still open: behind the releases not served yet, so a hundred waiting ones never crowd out a new one
      if (state === 'requested' || state === 'waiting' || state === 'withdrawing') await deferRelease(deps.sql, rel)
    } catch (err) {
      deps.log.warn({ releaseId: rel.id, err: (err as Error).message }, 'release: error, retried after a backoff')
      await deferRelease(deps.sql, rel, errorCodeOf(err))
      state = rel.state
    }
    if (state === 'requested') summary.waiting++
    else summary[state]++
  })
  return summary
}

async function processRelease(deps: TransferDeps, rel: ReleaseRow, hooks: ReleaseHooks): Promise<ReleaseState> {
  let fresh: TransferRow[] = []
  if (rel.state === 'requested' || rel.state === 'waiting') {
    const planned = await plan(deps, rel)
    if (planned.kind === 'wait') return markReleaseWaiting(deps.sql, rel, planned.reason)
    if (planned.kind === 'retry') return rel.state
    if (planned.legs.length === 0) return markReleased(deps.sql, rel.id, deps.clock.now())
    fresh = await storeLegs(deps, rel, planned.legs)
    if (fresh.length === 0) return rel.state // another run moved it
    await hooks.afterStored?.(fresh)
  }
  return advanceLegs(deps, rel, new Set(fresh.map((l) => l.id)))
}

type Plan =
  | { kind: 'wait'; reason: string }
  | { kind: 'retry' }
  | { kind: 'legs'; legs: { currency: string; units: bigint }[] }

/** What the release may withdraw now, or why it waits. */
async function plan(deps: TransferDeps, rel: ReleaseRow): Promise<Plan> {
  if (rel.stopped_at) return { kind: 'wait', reason: `subaccount stopped: ${rel.stop_reason ?? 'no reason given'}` }
  const [inFlight] = await deps.sql<{ n: number }[]>`
    select count(*)::int as n from subaccount_transfers
    where subaccount_id = ${rel.subaccount_id} and kind = 'fund' and state in ('submitted', 'accepted')`
  if ((inFlight?.n ?? 0) > 0) return { kind: 'wait', reason: 'a funding of this subaccount is in flight' }
  // a conversion round or a fee collection moves money in or out of the subaccount (docs/trading.md)
  const [moving] = await deps.sql<{ n: number }[]>`
    select (select count(*)::int from conversions where subaccount_id = ${rel.subaccount_id}
        and state in ('planned', 'withdrawing', 'swapping', 'depositing'))
      + (select count(*)::int from subaccount_transfers where subaccount_id = ${rel.subaccount_id}
        and ((kind in ('convert_out', 'convert_in', 'fee') and state in ('submitted', 'accepted'))
          or (kind = 'top_up' and state <> 'done'))) as n`
  if ((moving?.n ?? 0) > 0)
    return {
      kind: 'wait',
      reason: 'a conversion round, a fee collection or a creation top-up of this subaccount is in flight',
    }
  // a position of ours claims collateral before anything shows at the exchange (docs/trading.md)
  const [live] = await deps.sql<{ n: number }[]>`
    select count(*)::int as n from positions
    where subaccount_id = ${rel.subaccount_id} and state in ('requested', 'funding', 'placing', 'open', 'closing')`
  if ((live?.n ?? 0) > 0) return { kind: 'wait', reason: `positions still live: ${live?.n}` }
  if (rel.exchange_id === null) return { kind: 'legs', legs: [] } // never created: nothing to withdraw
  const exchangeId = rel.exchange_id

  const held = (await userBalances(deps.sql, rel.user_id))
    .map((b) => ({ parsed: parseAccount(b.account), currency: b.currency, units: b.balance }))
    .filter((b) => b.parsed?.family === 'sub' && b.parsed.subaccountId === exchangeId && b.units !== 0n)

  let sub: Awaited<ReturnType<TransferDeps['exchange']['getSubaccount']>>
  try {
    sub = await deps.exchange.getSubaccount(Number(exchangeId))
  } catch (err) {
    deps.log.warn({ releaseId: rel.id, err: (err as Error).message }, 'release: subaccount read failed')
    return { kind: 'retry' }
  }
  const positions = sub.positions.filter((p) => toE18(p.amount) !== 0n).map((p) => p.instrument_name)
  if (positions.length > 0) return { kind: 'wait', reason: `open positions: ${positions.join(', ')}` }
  if (sub.open_orders.length > 0) return { kind: 'wait', reason: `open orders: ${sub.open_orders.length}` }

  const legs: { currency: string; units: bigint }[] = []
  for (const h of held) {
    if (h.units < 0n) return { kind: 'wait', reason: `the journal shows a negative ${h.currency} balance` }
    const decimals = await decimalsOf(deps.exchange, h.currency)
    const onExchange = unitsOf(sub.collaterals.find((c) => c.asset_name === h.currency)?.amount ?? '0', decimals)
    if (onExchange === null || onExchange < h.units)
      return {
        kind: 'wait',
        reason: `the exchange holds less ${h.currency} than the journal; waiting for reconciliation`,
      }
    legs.push({ currency: h.currency, units: h.units })
  }
  return { kind: 'legs', legs }
}

/** Signs every leg, then inserts them (submitted) with the release's move to withdrawing: one commit. */
async function storeLegs(
  deps: TransferDeps,
  rel: ReleaseRow,
  legs: { currency: string; units: bigint }[],
): Promise<TransferRow[]> {
  const submittedAt = deps.clock.now()
  const signed: { currency: string; units: bigint; action: SignedTransfer }[] = []
  for (const leg of legs) {
    const amount = await exchangeAmount(deps.exchange, leg.currency, leg.units)
    const action = await signMovement(deps, {
      method: 'withdraw',
      subaccountId: Number(rel.exchange_id),
      currency: leg.currency,
      amount,
    })
    signed.push({ ...leg, action })
  }
  return deps.sql.begin(async (t) => {
    if (!(await markReleaseWithdrawing(t, rel.id))) return []
    const out: TransferRow[] = []
    for (const s of signed) {
      const leg = { userId: rel.user_id, subaccountId: rel.subaccount_id, releaseId: rel.id }
      out.push(await insertReleaseLeg(t, { ...leg, currency: s.currency, units: s.units }, s.action, submittedAt))
    }
    return out
  })
}

type LegOutcome = 'released' | 'pending' | 'failed'

/** A leg failure that fails the release (not a margin refusal or an expiry) is stored with this prefix. */
const FATAL_PREFIX = 'fatal: '

async function advanceLegs(deps: TransferDeps, rel: ReleaseRow, fresh: Set<string>): Promise<ReleaseState> {
  // in signing order (nonce): v3 takes a subaccount's transfer nonces only increasing (docs/exchange-v3.md)
  const legsOf = () =>
    deps.sql.unsafe<TransferRow[]>(
      `select ${TRANSFER_COLUMNS} from subaccount_transfers where release_id = $1 and kind = 'release'
       order by created_at, nonce, id`,
      [rel.id],
    )
  for (const leg of await legsOf())
    if (leg.state === 'submitted' || leg.state === 'accepted') await advanceLeg(deps, rel, leg, fresh.has(leg.id))

  // the current round: the legs inserted together last (created_at is the inserting transaction's now())
  const legs = await legsOf()
  const last = Math.max(...legs.map((l) => l.created_at.getTime()))
  const round = legs.filter((l) => l.created_at.getTime() === last)
  if (round.some((l) => l.state === 'submitted' || l.state === 'accepted')) return 'withdrawing'
  const failures = round.filter((l) => l.state === 'failed').map((l) => l.reason ?? 'failed')
  const fatal = failures.filter((r) => r.startsWith(FATAL_PREFIX)).map((r) => r.slice(FATAL_PREFIX.length))
  if (fatal.length > 0) {
    const reason = fatal.join('; ')
    if (await markReleaseFailed(deps.sql, rel.id, reason, deps.clock.now()))
      await deps.alerter.alert('subaccount release failed', { releaseId: rel.id, userId: rel.user_id, reason })
    return 'failed'
  }
  if (failures.length > 0) return markReleaseWaiting(deps.sql, { ...rel, state: 'withdrawing' }, failures.join('; '))
  return markReleased(deps.sql, rel.id, deps.clock.now())
}

async function advanceLeg(
  deps: TransferDeps,
  rel: ReleaseRow,
  loaded: TransferRow,
  firstSend: boolean,
): Promise<LegOutcome> {
  let leg = loaded
  const exchangeId = Number(rel.exchange_id)
  if (leg.state === 'submitted') {
    const sent = await sendStored(deps, leg, { exchangeSubaccountId: exchangeId, firstSend })
    if (sent.kind === 'retry') return 'pending'
    if (sent.kind === 'expired') return failLeg(deps, leg, 'withdrawal signature expired before it landed', true)
    if (sent.kind === 'refused')
      return failLeg(deps, leg, `exchange refused the withdrawal: ${sent.reason}`, sent.margin)
    if (sent.kind === 'landed') {
      // found in the withdrawal history (by tx hash): settled there, or looked at again next run
      if (!sent.landed.settled) return 'pending'
      return record(deps, rel, leg, sent.landed.transactionId, 'submitted')
    }
    const accepted = await markTransferAccepted(deps.sql, leg.id, sent.result.transaction_id)
    if (!accepted) return 'pending'
    leg = accepted
  }
  let status: ReturnType<typeof settlementOf>
  let raw: string
  try {
    raw = (await deps.exchange.getTransaction(leg.transaction_id as string)).status
    status = settlementOf(raw)
  } catch (err) {
    if (err instanceof ExchangeError && !err.retryable) throw err
    return 'pending'
  }
  if (status === 'pending') return 'pending'
  if (status === 'failed') return failLeg(deps, leg, `exchange transaction ${leg.transaction_id} ${raw}`, true)
  return record(deps, rel, leg, leg.transaction_id as string, 'accepted')
}

/** Settled: ONE transaction marks the leg released and appends subaccount_released (release:{rowId}). */
async function record(
  deps: TransferDeps,
  rel: ReleaseRow,
  leg: TransferRow,
  transactionId: string,
  from: 'submitted' | 'accepted',
): Promise<LegOutcome> {
  const now = deps.clock.now()
  const done = await deps.sql.begin(async (t) => {
    if (!(await markLegReleased(t, leg.id, { transactionId, from, now }))) return false
    await append(t, {
      type: 'subaccount_released',
      payload: {
        userId: leg.user_id,
        subaccountId: String(rel.exchange_id),
        rowId: leg.id,
        currency: leg.currency,
        amount: BigInt(leg.amount),
      },
      occurredAt: now,
    })
    return true
  })
  if (!done) return 'pending'
  deps.log.info({ releaseId: rel.id, legId: leg.id, currency: leg.currency }, 'subaccount release leg recorded')
  return 'released'
}

/** `wait`: the release waits and re-plans (margin, funds, expiry); otherwise it fails. */
async function failLeg(deps: TransferDeps, leg: TransferRow, reason: string, wait: boolean): Promise<LegOutcome> {
  const stored = wait ? reason : `${FATAL_PREFIX}${reason}`
  await markMovementFailed(deps.sql, leg.id, stored, deps.clock.now())
  return 'failed'
}

export const releaseTick: TickDefinition = {
  name: RELEASE_TICK,
  queue: 'treasury',
  everyMs: RELEASE_EVERY_MS,
  process: async (_job, ctx): Promise<ReleaseSummary> => {
    const summary = await runReleases({ ...ctx.deps, log: ctx.log })
    if (summary.released + summary.failed > 0) ctx.log.info({ ...summary }, 'release tick')
    return summary
  },
}
