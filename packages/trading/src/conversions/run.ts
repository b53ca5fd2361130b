/**
 * Conversion rounds (the worker's tick `trading-convert`, queue `conversions`, every CONVERSION_FAST_TICK_SECONDS,
 * under the exchange cycle lock; docs/trading.md "Conversions"). A wheel leg that ends in the money flips what the wheel
 * holds: after a put the subaccount buys the underlying, after a call it sells it. A round is a
 * state machine over its `conversions` row (ConversionState, the conversion store, store.ts):
 *
 *   planned ─▶ swapping ─▶ depositing ─▶ withdrawing ─▶ done
 *      └──────────┴─▶ failed (nothing moved: nothing to convert, or the swap abandoned)
 *
 * 1. swapping: the swap wallet sells the round's amount at the venue through the swap ladder
 *    (@wh/swap, swap id = the round's id): `swap_executed` moves the subaccount's journal balance
 *    from the sold currency to the bought one at the venue's real price, gas as `gas_spent`;
 * 2. depositing: the bought amount goes from the platform's exchange wallet into the subaccount
 *    (a signed deposit stored before it is sent, subaccount_transfers kind `convert_in`);
 * 3. withdrawing: then the sold amount leaves the subaccount for the exchange wallet (kind
 *    `convert_out`); on settlement the round is done and the wheel holds the other side (with its
 *    cost basis after a put). Deposit first, withdraw second: the subaccount's margin never drops
 *    during a round (a short leg in the money needs it), the platform fronts the bought side.
 *
 * One transition function per open state (`TRANSITIONS`: `planned` and `swapping` in
 * swap.ts, `depositing` and `withdrawing` here), as the swap ladder's: each answers the
 * round as it now is (`next`, taken on in the same run) or ends the run (`done`, the step counted).
 * Each move of the round is one conditional update of its row in one transaction (with the
 * movement it stores, or the settlement it records), written only by the conversion store.
 *
 * The exchange wallet and the swap wallet are the platform's two inventories: each round moves the
 * user's money between the subaccount and the exchange wallet, and the venue trade rebalances the
 * platform by the same amounts (docs/trading.md "Inventory"). Every step is a conditional update
 * of the round, every movement a stored signed action, and the swap keyed by the round: a crash at
 * any point resumes the same step and nothing is sent twice.
 */
import { decimalsOf, errorMessage, mapLimit } from '@wh/core'
import type { Sql } from '@wh/db'
import { retryDelayMs } from '@wh/jobs'
import {
  advanceMovement,
  errorCodeOf,
  markConversionTransferDone,
  TRANSFER_COLUMNS,
  type TransferRow,
  withCycleLock,
} from '@wh/subaccounts'
import { amountOf, decider } from '../decider'
import { e18Decimal } from '../decision-facts'
import { holdCash, holdUnderlying } from '../wheel-store'
import { costBasisAfter } from './figures'
import { storeMovement } from './movement'
import { alertStuck, planRounds } from './plan'
import {
  backOffRound,
  finishRound,
  noteRoundReason,
  type OpenConversionState,
  replaceMovement,
  requeueRound,
  startWithdrawing,
} from './store'
import { start, swap } from './swap'
import type { ConvertDeps, Round, Transition } from './types'

/** rounds advanced per run (a bound on everything) */
export const CONVERT_BATCH = 100
export { PLAN_BATCH } from './plan'
/** rounds advanced at once */
export const CONVERT_CONCURRENCY = 8

/** The one transition of an open state. */
type TransitionOf = (deps: ConvertDeps, round: Round, firstSend: boolean) => Promise<Transition>

const TRANSITIONS: { readonly [S in OpenConversionState]: TransitionOf } = {
  planned: start,
  swapping: swap,
  depositing: deposit,
  withdrawing: withdraw,
}

/** planned → swapping → depositing → withdrawing: a run moves a round at most this many times. */
const MAX_TRANSITIONS = 4

export interface ConvertSummary {
  locked: boolean
  planned: number
  steps: Record<string, number>
}

export async function runConversions(given: ConvertDeps): Promise<ConvertSummary> {
  // one index read per instrument and run (a run takes seconds; the ladder's sanity guard and the
  // in-the-money check are not finer than that), not one per round and step
  const deps: ConvertDeps = { ...given, indexCache: new Map() }
  const r = await withCycleLock(deps.redis, async () => {
    const planned = await planRounds(deps)
    const steps: Record<string, number> = {}
    // rounds side by side (the swap wallet's nonce lock serialises only the signing): on a chain
    // with real block times a round waits seconds for its swap, and one at a time would hold the
    // cycle lock for minutes with a hundred rounds open
    await mapLimit(await openRounds(deps.sql), CONVERT_CONCURRENCY, async (round) => {
      const step = await stepRound(deps, round)
      steps[step] = (steps[step] ?? 0) + 1
    })
    await alertStuck(deps)
    return { planned, steps }
  })
  return r.ran ? { locked: false, ...r.value } : { locked: true, planned: 0, steps: {} }
}

/**
 * One round by its id, as far as it goes now, under the exchange cycle lock (a job per round may call it; the tick
 * does the same for each due round): the step it ended on, `locked` while another process holds the lock,
 * undefined when the round is not open or not due (backed off: docs/hostile-world.md "Fair queues").
 */
export async function runConversion(given: ConvertDeps, id: string): Promise<string | undefined> {
  const deps: ConvertDeps = { ...given, indexCache: new Map() }
  const r = await withCycleLock(deps.redis, async () => {
    const [round] = await openRounds(deps.sql, id)
    return round ? stepRound(deps, round) : undefined
  })
  return r.ran ? r.value : 'locked'
}

/** One round's run: its transitions, then behind the others (or backed off after a failure); the step it ended on. */
async function stepRound(deps: ConvertDeps, round: Round): Promise<string> {
  try {
    const step = await advance(deps, round)
    // not done: behind the rounds not served yet (docs/hostile-world.md "Fair queues")
    if (step !== 'done' && step !== 'failed') await deferRound(deps.sql, round)
    return step
  } catch (e) {
    await noteRoundReason(deps.sql, round.id, `step failed: ${errorMessage(e)}`)
    await deferRound(deps.sql, round, e)
    return 'error'
  }
}

/** The open rounds that are due, oldest first (one of them by `id`, when given). */
async function openRounds(sql: Sql, id?: string): Promise<Round[]> {
  return sql<Round[]>`
    select c.id, c.wheel_id, c.position_id, c.user_id, c.subaccount_id, s.exchange_id::text, s.stopped_at, c.asset,
      c.direction, c.trigger, c.state, c.sell_currency, c.buy_currency, c.amount_in::text, c.amount_out::text,
      c.out_transfer_id, c.in_transfer_id, c.alerted_at, c.created_at, p.instrument, p.strike_e18::text,
      p.filled_e18::text, p.settlement_cost::text, c.attempts
    from conversions c
    join subaccounts s on s.id = c.subaccount_id
    join positions p on p.id = c.position_id
    where c.state in ('planned', 'withdrawing', 'swapping', 'depositing') and c.next_attempt_at <= now()
      ${id === undefined ? sql`` : sql`and c.id = ${id}`}
    order by c.next_attempt_at, c.created_at
    limit ${CONVERT_BATCH}`
}

/** Rotates an open round behind the others, or (after a failure) backs it off. */
async function deferRound(sql: Sql, round: Round, failure?: unknown): Promise<void> {
  if (failure === undefined) {
    await requeueRound(sql, round.id)
    return
  }
  const attempts = round.attempts + 1
  await backOffRound(sql, round.id, {
    attempts,
    errorCode: errorCodeOf(failure),
    delaySecs: retryDelayMs(attempts) / 1000,
  })
}

/** The round's transitions from its stored state, as far as they go this run; the last step's name. */
async function advance(deps: ConvertDeps, round: Round): Promise<string> {
  let current = round
  let firstSend = false
  for (let i = 0; i < MAX_TRANSITIONS; i++) {
    if (current.state === 'done' || current.state === 'failed') return current.state
    const t = await TRANSITIONS[current.state](deps, current, firstSend)
    if ('done' in t) return t.done
    current = t.next
    firstSend = t.firstSend ?? false
  }
  throw new Error(`conversion ${round.id}: more than ${MAX_TRANSITIONS} transitions in one run`)
}

async function loadTransfer(sql: Sql, id: string): Promise<TransferRow | undefined> {
  const [row] = await sql.unsafe<TransferRow[]>(`select ${TRANSFER_COLUMNS} from subaccount_transfers where id = $1`, [
    id,
  ])
  return row
}

/** A settled movement row: `done`, out of `from` only (a concurrent pass finds it moved and records nothing). */
async function markDone(t: Sql, row: TransferRow, transactionId: string, from: 'submitted' | 'accepted') {
  return markConversionTransferDone(t, row.id, { transactionId, from })
}

/** A movement that did not land: a fresh one for the same amount, stored with the round (same state). */
async function signAgain(
  deps: ConvertDeps,
  round: Round,
  row: TransferRow,
  state: 'depositing' | 'withdrawing',
): Promise<Transition> {
  const deposit = state === 'depositing'
  const reason = `${deposit ? 'deposit' : 'withdraw'} signed again after: ${row.reason}`
  await storeMovement(
    deps,
    round,
    {
      kind: deposit ? 'convert_in' : 'convert_out',
      method: deposit ? 'deposit' : 'withdraw',
      currency: row.currency,
      units: BigInt(row.amount),
    },
    (tx, transferId) => replaceMovement(tx, round, state, transferId, reason),
  )
  return { done: deposit ? 'deposit_resigned' : 'withdraw_resigned' }
}

/**
 * depositing → withdrawing: the bought amount goes from the exchange wallet into the subaccount
 * first, so the subaccount's margin never drops during the round (the sold amount leaves it only
 * after). On settlement the withdraw of the sold amount is stored with the move. A deposit that did
 * not land (the exchange wallet short of the bought currency, an expired signature) is signed
 * again next tick: the money is the user's and waits in the exchange wallet until it lands.
 */
async function deposit(deps: ConvertDeps, round: Round, firstSend: boolean): Promise<Transition> {
  const row = await loadTransfer(deps.sql, round.in_transfer_id as string)
  if (!row) throw new Error(`conversion ${round.id} lost its deposit row`)
  if (row.state === 'failed') return signAgain(deps, round, row, 'depositing')
  if (row.state !== 'done') {
    const outcome = await advanceMovement(
      deps,
      row,
      { exchangeSubaccountId: Number(round.exchange_id), firstSend },
      (t, transactionId, from) => markDone(t, row, transactionId, from),
    )
    if (outcome.kind === 'failed') await noteRoundReason(deps.sql, round.id, `deposit did not land: ${outcome.reason}`)
    if (outcome.kind !== 'settled') return { done: 'depositing' }
  }
  const out = await storeMovement(
    deps,
    round,
    {
      kind: 'convert_out',
      method: 'withdraw',
      currency: round.sell_currency,
      units: BigInt(round.amount_in as string),
    },
    (tx, transferId) => startWithdrawing(tx, round, transferId),
  )
  if (!out) return { done: 'raced' }
  return { next: { ...round, state: 'withdrawing', out_transfer_id: out.id }, firstSend: true }
}

/**
 * withdrawing → done: the sold amount leaves the subaccount for the exchange wallet; on settlement,
 * in the same transaction, the round ends and the wheel takes its new holding (with the cost basis
 * after a put). A withdraw refused or expired is signed again next tick (the reason shown; the
 * stuck alert fires after CONVERSION_STUCK_MINUTES): until it lands the subaccount holds both sides.
 */
async function withdraw(deps: ConvertDeps, round: Round, firstSend: boolean): Promise<Transition> {
  const row = await loadTransfer(deps.sql, round.out_transfer_id as string)
  if (!row) throw new Error(`conversion ${round.id} lost its withdraw row`)
  if (row.state === 'failed') return signAgain(deps, round, row, 'withdrawing')
  const now = deps.clock.now()
  let [sold, bought, basis] = [0n, 0n, null as bigint | null]
  const outcome = await advanceMovement(
    deps,
    row,
    { exchangeSubaccountId: Number(round.exchange_id), firstSend },
    async (t, transactionId, from) => {
      if (!(await markDone(t, row, transactionId, from))) return false
      await finishRound(t, round.id, now)
      const [r] = await t<{ amount_in: string; amount_out: string }[]>`
        select amount_in::text, amount_out::text from conversions where id = ${round.id}`
      ;[sold, bought] = [BigInt(r?.amount_in ?? '0'), BigInt(r?.amount_out ?? '0')]
      if (round.direction === 'to_underlying') {
        basis = costBasisAfter({
          strikeE18: BigInt(round.strike_e18),
          usdcIn: sold,
          settlementPaid: round.trigger === 'after_settlement' ? BigInt(round.settlement_cost ?? '0') : 0n,
          unitsOut: bought,
          decimals: decimalsOf(round.asset) ?? 18,
        })
        await holdUnderlying(t, round.wheel_id, basis)
      } else await holdCash(t, round.wheel_id)
      return true
    },
  )
  if (outcome.kind === 'settled') {
    await roundDone(deps, round, now, { sold, bought, basis })
    return { done: 'done' }
  }
  if (outcome.kind === 'failed') await noteRoundReason(deps.sql, round.id, `withdraw did not land: ${outcome.reason}`)
  return { done: 'withdrawing' }
}

/** The round is done: logged, and the wheel's decision (what was sold and bought, the cost basis). */
async function roundDone(
  deps: ConvertDeps,
  round: Round,
  now: Date,
  r: { sold: bigint; bought: bigint; basis: bigint | null },
): Promise<void> {
  deps.log.info({ conversionId: round.id, direction: round.direction }, 'conversion round done')
  await decider(deps, { wheelId: round.wheel_id, userId: round.user_id, positionId: round.position_id }, now)(
    'conversion',
    'conversion_done',
    {
      conversion: {
        direction: round.direction,
        trigger: round.trigger,
        sold: amountOf(r.sold, round.sell_currency),
        bought: amountOf(r.bought, round.buy_currency),
        costBasis: r.basis === null ? null : e18Decimal(r.basis),
      },
    },
  )
}
