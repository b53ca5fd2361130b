/**
 * The conversion rounds' rows (docs/trading.md "Conversions and swaps"): the one writer of
 * `conversions` (test/table-owners.test.ts). A round is a state machine over its row:
 *
 *   planned ─▶ swapping ─▶ depositing ─▶ withdrawing ─▶ done
 *      └──────────┴─▶ failed (nothing moved: nothing to convert, or the swap abandoned)
 *
 * Each transition below is one conditional update on the state it leaves (compare-and-set: of two
 * workers on one round, one moves it, the other's update matches nothing), in a transaction of its
 * own or, where a movement is stored or settled with it, as the step of the caller's transaction
 * that takes a `tx`. The rounds (run.ts, swap.ts, plan.ts) decide and call them;
 * the figures are pure in figures.ts.
 */
import type { Queryable } from '@wh/db'
import type { ConversionDirection, ConversionTrigger } from './figures'

export type ConversionState = 'planned' | 'swapping' | 'depositing' | 'withdrawing' | 'done' | 'failed'
/** The states the convert tick advances (the others are final). */
export type OpenConversionState = Exclude<ConversionState, 'done' | 'failed'>

/**
 * Where each state goes (a state to itself: a movement signed again). The transitions of this file
 * are the arrows; docs/trading.md "States" says what each step does.
 */
export const CONVERSION_TRANSITIONS: { readonly [S in ConversionState]: readonly ConversionState[] } = {
  planned: ['swapping', 'failed'],
  swapping: ['depositing', 'failed'],
  depositing: ['depositing', 'withdrawing'],
  withdrawing: ['withdrawing', 'done'],
  done: [],
  failed: [],
}

/** A round the planning opened. */
export interface PlannedConversion {
  id: string
  wheel_id: string
  user_id: string
  position_id: string
  direction: ConversionDirection
  trigger: ConversionTrigger
}

/**
 * → planned: a round for each running wheel's leg that needs one and has none (one per leg): open
 * and of an instrument in `inTheMoney` (inside the lead), or settled in the money. At most `limit`.
 */
export async function planConversions(
  sql: Queryable,
  p: { now: Date; nowSec: number; inTheMoney: readonly string[]; limit: number },
): Promise<PlannedConversion[]> {
  return sql<PlannedConversion[]>`
    insert into conversions (wheel_id, position_id, user_id, subaccount_id, asset, direction, trigger, state,
      sell_currency, buy_currency, created_at)
    select p.wheel_id, p.id, p.user_id, p.subaccount_id, p.asset,
      case when p.side = 'put' then 'to_underlying' else 'to_cash' end,
      case when p.state = 'settled' then 'after_settlement' else 'pre_expiry' end, 'planned',
      case when p.side = 'put' then 'USDC' else p.asset end,
      case when p.side = 'put' then p.asset else 'USDC' end, ${p.now}
    from wheels w join positions p on p.id = w.current_position_id
    where w.state = 'running' and p.filled_e18 > 0 and p.instrument is not null
      and ((p.state = 'open' and p.expiry_sec > ${p.nowSec} and p.instrument = any(${p.inTheMoney as string[]}::text[]))
        or (p.state = 'settled' and p.outcome = 'itm'))
      and not exists (select 1 from conversions c where c.position_id = p.id)
    limit ${p.limit}
    on conflict (position_id) do nothing
    returning id, wheel_id, user_id, position_id, direction, trigger`
}

/** An open round created before `cutoff` and not alerted yet: marked alerted (once), returned to alert. */
export async function markStuckAlerted(
  sql: Queryable,
  cutoff: Date,
): Promise<{ id: string; user_id: string; state: string; reason: string | null; created_at: Date }[]> {
  return sql<{ id: string; user_id: string; state: string; reason: string | null; created_at: Date }[]>`
    update conversions set alerted_at = now()
    where state in ('planned', 'withdrawing', 'swapping', 'depositing') and alerted_at is null and created_at < ${cutoff}
    returning id, user_id, state, reason, created_at`
}

// ── every open state: the queue and the reason ──────────────────────────────────────────────

/** An open round behind the others (docs/hostile-world.md "Fair queues"). */
export async function requeueRound(sql: Queryable, id: string): Promise<void> {
  await sql`update conversions set next_attempt_at = now() where id = ${id}`
}

/** An open round whose step threw: its `attempts`-th failure, retried after `delaySecs`. */
export async function backOffRound(
  sql: Queryable,
  id: string,
  f: { attempts: number; errorCode: string; delaySecs: number },
): Promise<void> {
  await sql`
    update conversions set attempts = ${f.attempts}, last_error_code = ${f.errorCode},
      next_attempt_at = now() + make_interval(secs => ${f.delaySecs})
    where id = ${id}`
}

/** Why an open round waits (its state unchanged). */
export async function noteRoundReason(sql: Queryable, id: string, reason: string): Promise<void> {
  await sql`update conversions set reason = ${reason.slice(0, 500)}, updated_at = now() where id = ${id}`
}

// ── the transitions ─────────────────────────────────────────────────────────────────────────

/** planned → failed: the subaccount holds nothing to convert beyond the margin buffer. */
export async function failEmptyRound(sql: Queryable, id: string, at: Date): Promise<void> {
  await sql`update conversions set state = 'failed', reason = 'nothing to convert: the subaccount holds no unclaimed funds beyond the margin buffer',
      completed_at = ${at}, updated_at = now() where id = ${id} and state = 'planned'`
}

/** planned → swapping with its amount fixed; false when the round moved meanwhile. */
export async function startSwapping(sql: Queryable, id: string, amountIn: bigint): Promise<boolean> {
  const [moved] = await sql`
    update conversions set state = 'swapping', amount_in = ${amountIn.toString()}, reason = null, updated_at = now()
    where id = ${id} and state = 'planned' returning id`
  return moved !== undefined
}

/** A round as a movement's transition compares it: its transfer columns as the caller read them. */
export interface RoundTransfers {
  id: string
  in_transfer_id: string | null
  out_transfer_id: string | null
}

/** `from` → `to` with the movement `transferId` in `column`, if the round still is as read. */
async function moveWithMovement(
  tx: Queryable,
  round: RoundTransfers,
  m: {
    from: OpenConversionState
    to: OpenConversionState
    column: 'in_transfer_id' | 'out_transfer_id'
    transferId: string
    amountOut?: bigint
    reason?: string
  },
): Promise<boolean> {
  const [ok] = await tx`
        update conversions set state = ${m.to}, ${tx(m.column)} = ${m.transferId},
          amount_out = coalesce(${m.amountOut === undefined ? null : m.amountOut.toString()}::numeric, amount_out),
          reason = ${m.reason ?? null}, updated_at = now()
        where id = ${round.id} and state = ${m.from}
          and ${tx(m.column)} is not distinct from ${round[m.column] ?? null}::uuid
        returning id`
  return ok !== undefined
}

/**
 * swapping → depositing: the swap bought `amountOut`, and its deposit into the subaccount
 * (`transferId`, stored signed in the caller's transaction) is the round's. False: it moved.
 */
export function startDepositing(
  tx: Queryable,
  round: RoundTransfers,
  transferId: string,
  amountOut: bigint,
): Promise<boolean> {
  return moveWithMovement(tx, round, {
    from: 'swapping',
    to: 'depositing',
    column: 'in_transfer_id',
    transferId,
    amountOut,
  })
}

/** depositing → withdrawing: the deposit settled; the withdraw of the sold amount (`transferId`) is the round's. */
export function startWithdrawing(tx: Queryable, round: RoundTransfers, transferId: string): Promise<boolean> {
  return moveWithMovement(tx, round, {
    from: 'depositing',
    to: 'withdrawing',
    column: 'out_transfer_id',
    transferId,
  })
}

/**
 * depositing → depositing, withdrawing → withdrawing: the movement did not land, a fresh one for
 * the same amount (`transferId`) replaces it, with why.
 */
export function replaceMovement(
  tx: Queryable,
  round: RoundTransfers,
  state: 'depositing' | 'withdrawing',
  transferId: string,
  reason: string,
): Promise<boolean> {
  const column = state === 'depositing' ? 'in_transfer_id' : 'out_transfer_id'
  return moveWithMovement(tx, round, { from: state, to: state, column, transferId, reason })
}

/** withdrawing → done: the withdraw settled (in the transaction that marks it done and sets the wheel's holding). */
export async function finishRound(tx: Queryable, id: string, at: Date): Promise<void> {
  await tx`update conversions set state = 'done', reason = null, completed_at = ${at}, updated_at = now()
        where id = ${id} and state = 'withdrawing'`
}

/** `from` → failed, with why (nothing moved); false when the round was no longer in `from`. */
export async function failRound(
  sql: Queryable,
  id: string,
  from: OpenConversionState,
  reason: string,
  at: Date,
): Promise<boolean> {
  const [moved] = await sql`
    update conversions set state = 'failed', reason = ${reason.slice(0, 500)}, completed_at = ${at},
      updated_at = now() where id = ${id} and state = ${from} returning id`
  return moved !== undefined
}
