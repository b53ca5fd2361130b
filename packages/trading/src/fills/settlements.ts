/**
 * Settlements (docs/trading.md "Settlement"): the exchange's settlement history of a subaccount
 * becomes `option_settled` (key `{sub}:{instrument}:{expirySec}`) for the legs still short at their
 * expiry, each leg `settled` in the event's transaction. Re-reading a history records nothing twice
 * (spec 6 rule 3).
 */
import { toBaseUnits, USDC_DECIMALS } from '@wh/core'
import { appendBatch, type EventInput } from '@wh/ledger'
import { settlePosition } from '../position-store'
import { publishSettlement } from '../strategy-events/publish'
import type { FillDeps, TradingSubaccount } from './types'

/**
 * Records the settlements of the subaccount's expired instruments that still have sold positions:
 * in the money (a negative settlement P&L for the seller) the cost, out of the money nothing
 * (spec 6 rule 2); the positions become `settled`, the cost shared by their filled size.
 */
export async function ingestSettlements(deps: FillDeps, sub: TradingSubaccount, nowMs: number): Promise<number> {
  const { sql } = deps
  // expiry_sec as float8: an epoch second fits a double exactly, and postgres.js gives int8 as a string
  // a leg bought back in part is still short its open amount (filled − bought), and the exchange
  // settles exactly that; one bought back in full has nothing to settle (the placing tick closes it)
  const due = await sql<{ id: string; instrument: string; expiry_sec: number; open_e18: string }[]>`
    select id, instrument, expiry_sec::float8 as expiry_sec, (filled_e18 - bought_e18)::text as open_e18
    from positions
    where subaccount_id = ${sub.id} and state in ('open', 'closing') and expiry_sec <= ${Math.floor(nowMs / 1000)}
      and filled_e18 > bought_e18`
  if (due.length === 0) return 0
  const { settlements } = await deps.exchange.getOptionSettlementHistory(sub.exchangeId)
  let recorded = 0
  for (const instrument of new Set(due.map((d) => d.instrument))) {
    const s = settlements.find((x) => x.instrument_name === instrument)
    if (!s) continue // not settled at the exchange yet
    const legs = due.filter((d) => d.instrument === instrument)
    const expirySec = legs[0]?.expiry_sec ?? s.expiry
    const pnl = toBaseUnits(s.option_settlement_pnl, USDC_DECIMALS, 'down')
    const cost = pnl < 0n ? toBaseUnits(s.option_settlement_pnl.slice(1), USDC_DECIMALS, 'up') : 0n
    const event: EventInput =
      cost > 0n
        ? {
            type: 'option_settled',
            payload: {
              userId: sub.userId,
              subaccountId: String(sub.exchangeId),
              instrument,
              expirySec,
              outcome: 'itm',
              currency: 'USDC',
              amount: cost,
            },
            occurredAt: new Date(expirySec * 1000),
          }
        : {
            type: 'option_settled',
            payload: {
              userId: sub.userId,
              subaccountId: String(sub.exchangeId),
              instrument,
              expirySec,
              outcome: 'otm',
            },
            occurredAt: new Date(expirySec * 1000),
          }
    const total = legs.reduce((a, l) => a + BigInt(l.open_e18), 0n)
    await sql.begin(async (tx) => {
      await appendBatch(tx, [event])
      let left = cost
      for (const [i, leg] of legs.entries()) {
        // the cost split by the size still short; the last leg takes the rounding rest
        const share =
          i === legs.length - 1 || total === 0n ? left : (cost * BigInt(leg.open_e18)) / (total === 0n ? 1n : total)
        left -= share
        await settlePosition(tx, leg.id, cost > 0n ? 'itm' : 'otm', share)
      }
    })
    if (deps.strategyEvents)
      await publishSettlement(
        sql,
        deps.strategyEvents,
        legs.map((l) => l.id),
        new Date(expirySec * 1000),
      )
    recorded++
  }
  return recorded
}
