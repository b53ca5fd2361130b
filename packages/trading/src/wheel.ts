/**
 * The wheel (docs/trading.md "The wheel"): a user's standing order to keep selling options on one
 * underlying, one leg after another: a put while the subaccount holds cash, a call (never below the
 * cost basis) while it holds the underlying. Starting, stopping, resuming and changing its settings
 * happen here (the API calls them); the runner (wheel/next-leg.ts) opens each next leg. The rows are written by wheel-store.ts, the one writer of `wheels`.
 */
import { WHEEL_DEADLINE_UTC } from '@wh/config'
import { AppError, NotFoundError, type Underlying } from '@wh/core'
import type { Sql } from '@wh/db'
import { ensureSubaccount } from '@wh/subaccounts'
import { recordDecision } from './decisions'
import type { BuyBackQuote } from './placing'
import { cancelLeg } from './position-cancel'
import {
  CloseUnavailableError,
  closePosition,
  type PriceReader,
  type RequestedPosition,
  requestPosition,
  SubaccountStoppedError,
  unencumbered,
} from './positions'
import type { TradingProfile } from './profiles'
import {
  applyWheelSettings,
  emptyStoredSettings,
  resolveWheelSettings,
  type StoredWheelSettings,
  WHEEL_SETTING_COLUMNS,
  type WheelSettings,
  type WheelSettingsInput,
} from './wheel-settings'
import { announceStop, settleStop } from './wheel-stop'
import { dropUnstarted, insertWheel, resumeStopped, saveWheelSettings, setFirstLeg } from './wheel-store'
import type { StopMode, WheelState } from './wheel-types'

export class WheelAlreadyRunningError extends AppError {
  constructor(asset: string) {
    super({ code: 'WHEEL_ALREADY_RUNNING', statusCode: 409, message: `a wheel on ${asset} is already running` })
  }
}

/** Whether `now` is past the day's deadline for wheel steps (spec 8.1: 20:00 UTC). */
export function pastWheelDeadline(now: Date): boolean {
  const minutes = now.getUTCHours() * 60 + now.getUTCMinutes()
  return minutes >= WHEEL_DEADLINE_UTC.hour * 60 + WHEEL_DEADLINE_UTC.minute
}

/**
 * The next leg from what the subaccount holds unclaimed: a call when the underlying covers the
 * minimum size, else a put with the cash; nothing when neither is there.
 */
export function chooseLeg(
  unclaimed: { underlying: bigint; cash: bigint },
  minUnderlying: bigint,
): { side: 'put' | 'call'; amount: bigint } | undefined {
  if (unclaimed.underlying >= minUnderlying && unclaimed.underlying > 0n)
    return { side: 'call', amount: unclaimed.underlying }
  if (unclaimed.cash > 0n) return { side: 'put', amount: unclaimed.cash }
  return undefined
}

/**
 * Starts a wheel with `amount` of cash: the wheel row and its first leg (a put funded like any
 * position) in one go. One running wheel per user and underlying (409 otherwise).
 */
export async function startWheel(
  sql: Sql,
  req: { userId: string; asset: Underlying; amount: bigint; idempotencyKey?: string },
  /** the wheel's own settings (docs/trading.md "Wheel settings"), checked against the profile's bounds */
  settings?: { input: WheelSettingsInput; profile: TradingProfile },
): Promise<{ wheelId: string; leg: RequestedPosition }> {
  if (req.idempotencyKey) {
    const [earlier] = await sql<{ wheel_id: string }[]>`
      select wheel_id from positions where user_id = ${req.userId} and idempotency_key = ${req.idempotencyKey}
        and wheel_id is not null`
    if (earlier) {
      const leg = await requestPosition(sql, { ...req, side: 'put', wheelId: earlier.wheel_id })
      return { wheelId: earlier.wheel_id, leg }
    }
  }
  // out of bounds → 422 before anything is written
  const s = settings ? applyWheelSettings(undefined, settings.input, settings.profile) : emptyStoredSettings()
  await ensureSubaccount(sql, req.userId, req.asset)
  let wheelId: string
  try {
    wheelId = await insertWheel(sql, req, s)
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw new WheelAlreadyRunningError(req.asset)
    throw e
  }
  try {
    const leg = await requestPosition(sql, { ...req, side: 'put', wheelId })
    await setFirstLeg(sql, wheelId, leg.id)
    return { wheelId, leg }
  } catch (e) {
    // the first leg was refused (no collateral, paused, stopped): no wheel is left behind
    await dropUnstarted(sql, wheelId)
    throw e
  }
}

/**
 * Stops a wheel: `after_cycle` lets the live leg run to its end and opens no new one; `now` also
 * cancels the leg's resting orders, or buys a sold leg back at a quoted cost (closePosition). The
 * wheel is `stopped` at once when nothing of it can be at the exchange, else once no leg is live
 * and the exchange shows no order of it (the runner checks); wheel-stop.ts settles and records it.
 */
export async function stopWheel(
  sql: Sql,
  userId: string,
  wheelId: string,
  mode: StopMode,
  now: Date,
  /** reads the leg's ticker: with it, a stop "now" buys an open leg back at a quoted cost */
  prices?: PriceReader,
): Promise<{ state: 'stopped' | 'stopping'; stopMode: StopMode; closeQuote?: BuyBackQuote }> {
  const [w] = await sql<{ state: WheelState; current_position_id: string | null; exchange_id: string | null }[]>`
    select w.state, w.current_position_id, s.exchange_id::text from wheels w join subaccounts s on s.id = w.subaccount_id
    where w.id = ${wheelId} and w.user_id = ${userId}`
  if (!w) throw new NotFoundError('wheel')
  if (w.state === 'stopped') return { state: 'stopped', stopMode: mode }
  let closeQuote: BuyBackQuote | undefined
  const leg = w.current_position_id
  if (mode === 'now' && leg) {
    const [p] = await sql<{ state: string }[]>`select state from positions where id = ${leg}`
    if (p && ['open', 'closing'].includes(p.state) && prices) {
      // before the wheel is marked: a quote that cannot be read (503) changes nothing, and a retry
      // finds the leg closing with its stored quote
      try {
        closeQuote = (await closePosition(sql, userId, leg, prices, now)).quote
      } catch (e) {
        // expired, nothing left to buy, or the subaccount stopped: the leg runs to expiry
        if (!(e instanceof CloseUnavailableError || e instanceof SubaccountStoppedError)) throw e
      }
    }
  }
  const state = await sql.begin(async (tx) => {
    if (mode === 'now' && leg) {
      const [p] = await tx<{ state: string }[]>`select state from positions where id = ${leg}`
      if (p && ['requested', 'funding', 'placing'].includes(p.state)) await cancelLeg(tx, userId, leg)
    }
    return settleStop(tx, wheelId, mode, now, 'stopped_by_user')
  })
  await announceStop(sql, { wheelId, userId, exchangeId: w.exchange_id }, state, mode, now, 'stopped_by_user')
  return { state, stopMode: mode, ...(closeQuote && { closeQuote }) }
}

export class WheelStoppingError extends AppError {
  constructor() {
    super({
      code: 'WHEEL_STOPPING',
      statusCode: 409,
      message: 'the wheel is stopping: resume it once it is stopped',
    })
  }
}

export class AnotherWheelRunningError extends AppError {
  constructor(asset: string) {
    super({
      code: 'ANOTHER_WHEEL_RUNNING',
      statusCode: 409,
      message: `another wheel on ${asset} is running: stop it first`,
      details: { asset },
    })
  }
}

export class NothingToWheelError extends AppError {
  constructor(asset: string) {
    super({
      code: 'NOTHING_TO_WHEEL',
      statusCode: 422,
      message: `your ${asset} subaccount holds no unclaimed cash or ${asset} for the wheel to sell`,
      details: { asset },
    })
  }
}

/**
 * Resumes a stopped wheel (POST /wheels/{id}/resume; docs/trading.md "Wheel settings"): it becomes
 * `running` with no leg, and the runner opens its next leg from what the subaccount holds unclaimed
 * (`chooseLeg`: a call on the underlying, else a put with the cash), as after any expiry. Nothing is
 * funded from the free balance. 404 for another user's wheel; 409 WHEEL_ALREADY_RUNNING when it
 * runs, WHEEL_STOPPING while it stops, ANOTHER_WHEEL_RUNNING when a newer wheel runs on the asset;
 * 422 SUBACCOUNT_STOPPED, NOTHING_TO_WHEEL.
 */
export async function resumeWheel(sql: Sql, userId: string, wheelId: string): Promise<void> {
  const [w] = await sql<
    {
      state: WheelState
      asset: string
      subaccount_id: string
      exchange_id: string | null
      stopped_at: Date | null
      stop_reason: string | null
    }[]
  >`
    select w.state, w.asset, w.subaccount_id, s.exchange_id::text, s.stopped_at, s.stop_reason
    from wheels w join subaccounts s on s.id = w.subaccount_id
    where w.id = ${wheelId} and w.user_id = ${userId}`
  if (!w) throw new NotFoundError('wheel')
  if (w.state === 'running') throw new WheelAlreadyRunningError(w.asset)
  if (w.state === 'stopping') throw new WheelStoppingError()
  if (w.stopped_at !== null) throw new SubaccountStoppedError(w.asset, w.stop_reason)
  const [other] = await sql`select 1 from wheels where user_id = ${userId} and asset = ${w.asset}
    and state <> 'stopped' and id <> ${wheelId}`
  if (other) throw new AnotherWheelRunningError(w.asset)
  const sub = { id: w.subaccount_id, exchange_id: w.exchange_id }
  const cash = await unencumbered(sql, sub, userId, 'USDC')
  const underlying = await unencumbered(sql, sub, userId, w.asset)
  if (!chooseLeg({ cash, underlying }, 1n)) throw new NothingToWheelError(w.asset)
  try {
    const resumed = await resumeStopped(sql, wheelId)
    // the decision log says when the wheel came back (docs/trading.md "Why: the decision log")
    if (resumed)
      await recordDecision(sql, { wheelId, userId, kind: 'resumed', reason: 'resumed_by_user', at: new Date() })
  } catch (e) {
    if ((e as { code?: string }).code === '23505') throw new AnotherWheelRunningError(w.asset)
    throw e
  }
}

/**
 * Changes a wheel's settings (PATCH /wheels/{id}): the caller's own wheel only (404 otherwise). They
 * apply from the next leg: a leg whose instrument is chosen keeps it; a leg still `requested` is
 * chosen with the new settings at the next placing tick.
 */
export async function updateWheelSettings(
  sql: Sql,
  userId: string,
  wheelId: string,
  input: WheelSettingsInput,
  p: TradingProfile,
): Promise<WheelSettings> {
  return sql.begin(async (tx) => {
    const [row] = await tx<StoredWheelSettings[]>`
      select ${tx(WHEEL_SETTING_COLUMNS)} from wheels where id = ${wheelId} and user_id = ${userId} for update`
    if (!row) throw new NotFoundError('wheel')
    const next = applyWheelSettings(row, input, p)
    await saveWheelSettings(tx, wheelId, next)
    return resolveWheelSettings(next, p)
  })
}
