/**
 * Conversion rounds, opening and watching (docs/trading.md "Conversions"): a round for each running
 * wheel's leg that needs one, the index the decision reads (once per instrument and run), and one
 * alert per round open too long. run.ts advances the rounds; the rows are written by
 * the conversion store (store.ts).
 */

import { toE18 } from '@wh/exchange'
import { decider } from '../decider'
import { inPreConvertWindow, inTheMoney } from './figures'
import { markStuckAlerted, planConversions } from './store'
import type { ConvertDeps } from './types'

/** rounds opened per run (the rest next run: they are only rows) */
export const PLAN_BATCH = 1_000

/**
 * Opens a round for each running wheel's live leg that needs one: in the money inside the lead
 * before expiry (by the exchange's index), or settled in the money without a round yet (the
 * index had not crossed the strike at the lead, or the worker was down). One round per leg.
 */
export async function planRounds(deps: ConvertDeps): Promise<number> {
  const { sql } = deps
  const now = deps.clock.now()
  const nowSec = Math.floor(now.getTime() / 1000)
  const leadEndSec = nowSec + deps.preConvertLeadMinutes * 60
  // every wheel's leg of a daily expiry enters the lead at once: the instruments first (a handful),
  // their index once each, then the legs of the ones in the money, all in one insert
  const inWindow = await sql<{ instrument: string; side: 'put' | 'call'; strike_e18: string; expiry_sec: number }[]>`
    select distinct p.instrument, p.side, p.strike_e18::text, p.expiry_sec
    from wheels w join positions p on p.id = w.current_position_id
    where w.state = 'running' and p.state = 'open' and p.filled_e18 > 0 and p.instrument is not null
      and p.expiry_sec > ${nowSec} and p.expiry_sec <= ${leadEndSec}
      and not exists (select 1 from conversions c where c.position_id = p.id)`
  const itm: string[] = []
  for (const i of inWindow) {
    if (!inPreConvertWindow(i.expiry_sec, now.getTime(), deps.preConvertLeadMinutes)) continue
    if (inTheMoney(i.side, BigInt(i.strike_e18), await indexOf(deps, i.instrument))) itm.push(i.instrument)
  }
  const inserted = await planConversions(sql, { now, nowSec, inTheMoney: itm, limit: PLAN_BATCH })
  // each round is a decision of its wheel (docs/trading.md "Why: the decision log")
  for (const r of inserted)
    await decider(deps, { wheelId: r.wheel_id, userId: r.user_id, positionId: r.position_id }, now)(
      'conversion',
      r.trigger === 'pre_expiry' ? 'in_the_money_before_expiry' : 'settled_in_the_money',
      { conversion: { direction: r.direction, trigger: r.trigger } },
    )
  return inserted.length
}

/** The index (e18) from the instrument's ticker, read once per run. */
export function indexOf(deps: ConvertDeps, instrument: string): Promise<bigint> {
  const cached = deps.indexCache?.get(instrument)
  if (cached) return cached
  const read = deps.exchange.getTicker(instrument).then((t) => toE18(t.index_price))
  // a failed read is not kept: the next round asks again
  read.catch(() => deps.indexCache?.delete(instrument))
  deps.indexCache?.set(instrument, read)
  return read
}

/** One alert per round open longer than CONVERSION_STUCK_MINUTES. */
export async function alertStuck(deps: ConvertDeps): Promise<void> {
  const cutoff = new Date(deps.clock.now().getTime() - deps.stuckMinutes * 60_000)
  const stuck = await markStuckAlerted(deps.sql, cutoff)
  for (const r of stuck)
    await deps.alerter.alert('conversion round stuck', {
      conversionId: r.id,
      userId: r.user_id,
      state: r.state,
      reason: r.reason ?? '',
      openSince: r.created_at.toISOString(),
    })
}
