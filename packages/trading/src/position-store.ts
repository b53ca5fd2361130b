/**
 * The positions' rows (docs/trading.md "Position states", "Placing", "Buying a leg back",
 * "Settlement"): the one writer of `positions` (test/table-owners.test.ts). Each function is one
 * transition of a leg, named after it, and one conditional statement: the API's request, cancel
 * (position-cancel.ts, positions.ts), the placing step and its buy-backs (placing/), and the fills
 * and settlements (fills/) call them. Those that take a `tx` are a step of the caller's
 * transaction (the request under the subaccount's lock, the cancel under the row's, the fills and
 * settlements with their journal events); the others are one statement of their own.
 */
import type { Queryable } from '@wh/db'
import type { PositionSide, PositionState } from './position-types'

/** Marks `order_id` of a closing leg between committing to send its buy-back and the exchange's answer. */
export const BUYBACK_PENDING = 'buyback-pending'

/** A leg's reason (why it waits, or why its step failed), whatever its state. */
export async function setPositionReason(sql: Queryable, id: string, reason: string): Promise<void> {
  await sql`update positions set reason = ${reason}, updated_at = now() where id = ${id}`
}

// ── requested | funding ──────────────────────────────────────────────────────────────────────

/** → requested (the subaccount holds the collateral) or funding (`fundingTransferId` brings the rest). */
export async function insertPosition(
  tx: Queryable,
  p: {
    userId: string
    asset: string
    side: PositionSide
    wheelId: string | null
    subaccountId: string
    state: PositionState
    currency: string
    amount: bigint
    fundingTransferId: string | null
    idempotencyKey: string | null
  },
): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
        insert into positions (user_id, asset, side, wheel_id, subaccount_id, state, collateral_currency,
          collateral_amount, funding_transfer_id, idempotency_key)
        values (${p.userId}, ${p.asset}, ${p.side}, ${p.wheelId}, ${p.subaccountId}, ${p.state}, ${p.currency},
          ${p.amount.toString()}, ${p.fundingTransferId}, ${p.idempotencyKey})
        returning id`
  return (row as { id: string }).id
}

/** requested | funding → cancelled by the user; under the row's lock (the caller's transaction). */
export async function cancelUnplaced(tx: Queryable, id: string): Promise<void> {
  await tx`update positions set state = 'cancelled', reason = 'cancelled by the user', closed_at = now(),
          updated_at = now() where id = ${id}`
}

/** funding → requested: the collateral landed in the subaccount. */
export async function fundingLanded(sql: Queryable, id: string): Promise<void> {
  await sql`update positions set state = 'requested', reason = null, updated_at = now()
          where id = ${id} and state = 'funding'`
}

/** funding → failed: the subaccount's funding failed. */
export async function fundingFailed(sql: Queryable, id: string, fundingReason: string | null): Promise<void> {
  await sql`update positions set state = 'failed', closed_at = now(), updated_at = now(),
          reason = ${`funding the subaccount failed: ${fundingReason ?? 'unknown'}`}
          where id = ${id} and state = 'funding'`
}

/** requested → failed (the collateral secures less than the minimum size). */
export async function failRequested(sql: Queryable, id: string, reason: string): Promise<void> {
  await sql`update positions set state = 'failed', closed_at = now(), updated_at = now(),
      reason = ${reason}
      where id = ${id} and state = 'requested'`
}

/** What a leg is placed with: its instrument, size and maker window. */
export interface ChosenLeg {
  readonly instrument: string
  readonly strikeE18: bigint
  readonly expirySec: number
  readonly sizeE18: bigint
  readonly ivE18: bigint | null
  /** a wheel's leg: the settings it was chosen with (legSettingsOf) */
  readonly legSettings: Record<string, unknown> | null
  readonly windowEndsAt: Date
  readonly now: Date
}

/** requested → placing, unless the leg moved meanwhile (false). */
export async function startPlacing(sql: Queryable, id: string, leg: ChosenLeg): Promise<boolean> {
  const [placed] = await sql`update positions set state = 'placing', instrument = ${leg.instrument},
    strike_e18 = ${leg.strikeE18.toString()}, expiry_sec = ${leg.expirySec}, size_e18 = ${leg.sizeE18.toString()},
    iv_e18 = ${leg.ivE18 === null ? null : leg.ivE18.toString()},
    leg_settings = ${leg.legSettings ? sql.json(leg.legSettings as never) : null},
    window_ends_at = ${leg.windowEndsAt}, next_reprice_at = ${leg.now}, reason = null, updated_at = now()
    where id = ${id} and state = 'requested' returning id`
  return placed !== undefined
}

/** placing: the user asked to cancel; the placing tick cancels the resting orders, then the leg ends. */
export async function requestCancel(tx: Queryable, id: string): Promise<void> {
  await tx`update positions set cancel_requested_at = coalesce(cancel_requested_at, now()), updated_at = now()
          where id = ${id}`
}

// ── placing ─────────────────────────────────────────────────────────────────────────────────

/** placing: the resting order's price stands until `nextRepriceAt`. */
export async function deferReprice(sql: Queryable, id: string, nextRepriceAt: Date): Promise<void> {
  await sql`update positions set next_reprice_at = ${nextRepriceAt}, updated_at = now() where id = ${id}`
}

/** placing: a new maker order rests. */
export async function recordRestingOrder(
  sql: Queryable,
  id: string,
  orderId: string,
  nextRepriceAt: Date,
): Promise<void> {
  await sql`update positions set order_id = ${orderId}, next_reprice_at = ${nextRepriceAt}, reason = null,
      updated_at = now() where id = ${id} and state = 'placing'`
}

/** placing → open (something sold) or cancelled (nothing), with why the window ended early. */
export async function endPlacing(
  sql: Queryable,
  id: string,
  w: { sold: boolean; reason: string | null; now: Date },
): Promise<void> {
  await sql`update positions set state = ${w.sold ? 'open' : 'cancelled'}, order_id = null,
    next_reprice_at = null, reason = ${w.reason}, updated_at = now(),
    closed_at = ${w.sold ? null : w.now}
    where id = ${id} and state = 'placing'`
}

// ── open | closing: buying a leg back ────────────────────────────────────────────────────────

/**
 * open → closing at the quoted limit, only while the leg is still the one quoted (its state and
 * amounts unchanged): false when it moved (a fill landed, another DELETE won).
 */
export async function startClosing(
  sql: Queryable,
  q: { id: string; userId: string; limitE18: bigint; now: Date; filledE18: string; boughtE18: string },
): Promise<boolean> {
  const [moved] = await sql`
      update positions set state = 'closing', close_limit_e18 = ${q.limitE18.toString()},
        cancel_requested_at = ${q.now}, order_id = null, reason = null, updated_at = now()
      where id = ${q.id} and user_id = ${q.userId} and state = 'open'
        and filled_e18 = ${q.filledE18} and bought_e18 = ${q.boughtE18}
      returning id`
  return moved !== undefined
}

/** closing: the buy-back is about to be sent (BUYBACK_PENDING); false when another run marked it first. */
export async function markBuyBackPending(sql: Queryable, id: string): Promise<boolean> {
  const [marked] = await sql`update positions set order_id = ${BUYBACK_PENDING}, updated_at = now()
    where id = ${id} and state = 'closing' and order_id is null returning id`
  return marked !== undefined
}

/** closing: the exchange took the buy-back; its order id replaces the marker. */
export async function recordBuyBackOrder(sql: Queryable, id: string, orderId: string): Promise<void> {
  await sql`update positions set order_id = ${orderId}, updated_at = now()
    where id = ${id} and state = 'closing' and order_id = ${BUYBACK_PENDING}`
}

/** closing → closed: everything sold is bought back. */
export async function finishClosing(sql: Queryable, id: string): Promise<void> {
  await sql`update positions set state = 'closed', order_id = null, reason = null, closed_at = now(),
    updated_at = now() where id = ${id} and state = 'closing'`
}

/** closing → open: the leg stays sold (to expiry) with the reason; the user may ask again. */
export async function reopenClosing(sql: Queryable, id: string, reason: string): Promise<void> {
  await sql`update positions set state = 'open', order_id = null, cancel_requested_at = null,
    reason = ${reason.slice(0, 500)}, updated_at = now()
    where id = ${id} and state = 'closing'`
}

/** open → closed when late buy-back fills bought the whole leg (checked on the row as it is now). */
export async function closeBoughtBack(sql: Queryable, id: string): Promise<boolean> {
  const [r] = await sql`update positions set state = 'closed', order_id = null, closed_at = now(), updated_at = now()
    where id = ${id} and state = 'open' and bought_e18 > 0 and bought_e18 >= filled_e18 returning id`
  return r !== undefined
}

// ── fills and settlement (in the transaction of their journal events) ────────────────────────

/** What a leg's new fills add: contracts sold and bought back, premium, buy-back cost, fees. */
export interface FillSums {
  sold: bigint
  premium: bigint
  bought: bigint
  cost: bigint
  fees: bigint
}

/** The leg's figures moved by its new fills (sold: filled and premium; bought back: bought and cost). */
export async function addFills(tx: Queryable, id: string, s: FillSums): Promise<void> {
  await tx`update positions set filled_e18 = filled_e18 + ${s.sold.toString()},
        premium = premium + ${s.premium.toString()}, bought_e18 = bought_e18 + ${s.bought.toString()},
        close_cost = close_cost + ${s.cost.toString()}, fees = fees + ${s.fees.toString()}, updated_at = now()
        where id = ${id}`
}

/** open | closing → settled at expiry, with the outcome and the leg's share of the settlement cost. */
export async function settlePosition(tx: Queryable, id: string, outcome: 'itm' | 'otm', cost: bigint): Promise<void> {
  await tx`update positions set state = 'settled', outcome = ${outcome},
          settlement_cost = ${cost.toString()}, closed_at = now(), updated_at = now()
          where id = ${id} and state in ('open', 'closing')`
}
