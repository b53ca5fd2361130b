/**
 * Fills and settlements (docs/trading.md "Placing" step 5, "Settlement"): the exchange's trade and
 * settlement histories of a subaccount become `option_sold` (key = trade id) and `option_settled`
 * (key `{sub}:{instrument}:{expirySec}`), with the positions' figures moved in the same
 * transaction. Every order we send carries its position id as label, which is how a trade finds
 * its position. Re-reading a history records nothing twice (spec 6 rule 3).
 */
import type { Sql } from '@wh/db'
import type { DeriveClient, Trade } from '@wh/exchange'
import { appendBatch, type EventInput } from '@wh/ledger'
import { platformFee, premiumUsdc } from '@wh/trading'
import { publishFills, publishSettlement, type StrategyEvents } from './events'

export interface TradingSubaccount {
  /** subaccounts.id */
  readonly id: string
  readonly userId: string
  /** the exchange's subaccount id */
  readonly exchangeId: number
}

export interface FillDeps {
  readonly sql: Sql
  readonly exchange: DeriveClient
  /** PLATFORM_FEE_RATE */
  readonly platformFeeRate: string
  /** WS /ws/strategies: fills and settlements announced (aggregated) when set */
  readonly strategyEvents?: StrategyEvents
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** trades are re-read this far back from the newest recorded one: a late-published fill is not missed */
export const FILL_OVERLAP_MS = 60 * 60_000
const PAGE_SIZE = 500
const MAX_PAGES = 20

/** e18 decimal string → USDC base units, rounding toward zero (premium) or away from it (fees). */
function usdc(decimal: string, round: 'down' | 'up'): bigint {
  const neg = decimal.startsWith('-')
  const [int = '0', frac = ''] = (neg ? decimal.slice(1) : decimal).split('.')
  const kept = BigInt(int) * 1_000_000n + BigInt((frac.slice(0, 6) || '0').padEnd(6, '0'))
  const rest = frac.slice(6).replace(/0+$/, '')
  const abs = round === 'up' && rest.length > 0 ? kept + 1n : kept
  return neg ? -abs : abs
}
const e18 = (decimal: string) => {
  const [int = '0', frac = ''] = decimal.split('.')
  return BigInt(int) * 10n ** 18n + BigInt((frac.slice(0, 18) || '0').padEnd(18, '0'))
}

/** Reads the subaccount's new trades and records the sells of our positions. Returns fills recorded. */
export async function ingestFills(deps: FillDeps, sub: TradingSubaccount): Promise<number> {
  const { sql } = deps
  const [since] = await sql<{ ms: string | null }[]>`
    select (extract(epoch from coalesce(
      (select max(traded_at) from position_fills where subaccount_id = ${sub.id}),
      -- exchange time, not ours: the window is set from the tick's clock (the exchange's in tests)
      (select min(window_ends_at) - interval '1 day' from positions where subaccount_id = ${sub.id}
        and state in ('placing', 'open', 'closing'))
    )) * 1000)::bigint::text as ms`
  if (!since?.ms) return 0
  const from = Math.max(0, Number(since.ms) - FILL_OVERLAP_MS)
  const trades: Trade[] = []
  for (let page = 1; page <= MAX_PAGES; page++) {
    const r = await deps.exchange.getTradeHistory({
      subaccount_id: sub.exchangeId,
      from_timestamp: from,
      page,
      page_size: PAGE_SIZE,
    })
    trades.push(...r.trades)
    if (page >= r.pagination.num_pages) break
  }
  const ours = trades.filter((t) => t.direction === 'sell' && UUID_RE.test(t.label) && !t.is_transfer)
  if (ours.length === 0) return 0
  const positions = await sql<{ id: string; instrument: string | null }[]>`
    select id, instrument from positions where subaccount_id = ${sub.id}
      and id = any(${[...new Set(ours.map((t) => t.label))]}::uuid[])`
  const byId = new Map(positions.map((p) => [p.id, p]))
  const fills = ours
    .filter((t) => byId.get(t.label)?.instrument === t.instrument_name)
    .map((t) => {
      const premium = premiumUsdc(e18(t.trade_amount), e18(t.trade_price))
      return {
        trade: t,
        premium,
        exchangeFee: usdc(t.trade_fee, 'up'),
        platformFee: platformFee(premium, deps.platformFeeRate),
      }
    })
  if (fills.length === 0) return 0
  const events: EventInput[] = fills.map((f) => ({
    type: 'option_sold',
    payload: {
      userId: sub.userId,
      subaccountId: String(sub.exchangeId),
      tradeId: f.trade.trade_id,
      instrument: f.trade.instrument_name,
      currency: 'USDC',
      premium: f.premium,
      exchangeFee: f.exchangeFee,
      platformFee: f.platformFee,
    },
    occurredAt: new Date(f.trade.timestamp),
  }))
  const touched = await sql.begin(async (tx) => {
    await appendBatch(tx, events)
    // the fill rows decide what is new: a trade already recorded adds nothing to its position
    const rows = fills.map((f) => ({
      trade_id: f.trade.trade_id,
      position_id: f.trade.label,
      amount_e18: e18(f.trade.trade_amount).toString(),
      price_e18: e18(f.trade.trade_price).toString(),
      premium: f.premium.toString(),
      exchange_fee: f.exchangeFee.toString(),
      platform_fee: f.platformFee.toString(),
      traded_at: new Date(f.trade.timestamp).toISOString(),
    }))
    const inserted = await tx<{ position_id: string; amount_e18: string; premium: string; fees: string }[]>`
      insert into position_fills (trade_id, position_id, user_id, subaccount_id, amount_e18, price_e18, premium,
        exchange_fee, platform_fee, traded_at)
      select x.trade_id, x.position_id, ${sub.userId}, ${sub.id}, x.amount_e18, x.price_e18, x.premium,
        x.exchange_fee, x.platform_fee, x.traded_at
      from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as x(trade_id text, position_id uuid,
        amount_e18 numeric, price_e18 numeric, premium numeric, exchange_fee numeric, platform_fee numeric,
        traded_at timestamptz)
      on conflict (trade_id) do nothing
      returning position_id, amount_e18::text, premium::text, (exchange_fee + platform_fee)::text as fees`
    const sums = new Map<string, { amount: bigint; premium: bigint; fees: bigint }>()
    for (const r of inserted) {
      const s = sums.get(r.position_id) ?? { amount: 0n, premium: 0n, fees: 0n }
      s.amount += BigInt(r.amount_e18)
      s.premium += BigInt(r.premium)
      s.fees += BigInt(r.fees)
      sums.set(r.position_id, s)
    }
    for (const [id, s] of sums)
      await tx`update positions set filled_e18 = filled_e18 + ${s.amount.toString()},
        premium = premium + ${s.premium.toString()}, fees = fees + ${s.fees.toString()}, updated_at = now()
        where id = ${id}`
    return { ids: [...sums.keys()], count: inserted.length }
  })
  if (deps.strategyEvents && touched.ids.length > 0) {
    const at = new Date(Math.max(...fills.map((f) => f.trade.timestamp)))
    await publishFills(sql, deps.strategyEvents, touched.ids, at)
  }
  return touched.count
}

/**
 * Records the settlements of the subaccount's expired instruments that still have sold positions:
 * in the money (a negative settlement P&L for the seller) the cost, out of the money nothing
 * (spec 6 rule 2); the positions become `settled`, the cost shared by their filled size.
 */
export async function ingestSettlements(deps: FillDeps, sub: TradingSubaccount, nowMs: number): Promise<number> {
  const { sql } = deps
  // expiry_sec as float8: an epoch second fits a double exactly, and postgres.js gives int8 as a string
  const due = await sql<{ id: string; instrument: string; expiry_sec: number; filled_e18: string }[]>`
    select id, instrument, expiry_sec::float8 as expiry_sec, filled_e18::text from positions
    where subaccount_id = ${sub.id} and state in ('open', 'closing') and expiry_sec <= ${Math.floor(nowMs / 1000)}`
  if (due.length === 0) return 0
  const { settlements } = await deps.exchange.getOptionSettlementHistory(sub.exchangeId)
  let recorded = 0
  for (const instrument of new Set(due.map((d) => d.instrument))) {
    const s = settlements.find((x) => x.instrument_name === instrument)
    if (!s) continue // not settled at the exchange yet
    const legs = due.filter((d) => d.instrument === instrument)
    const expirySec = legs[0]?.expiry_sec ?? s.expiry
    const pnl = usdc(s.option_settlement_pnl, 'down')
    const cost = pnl < 0n ? usdc(s.option_settlement_pnl.slice(1), 'up') : 0n
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
    const total = legs.reduce((a, l) => a + BigInt(l.filled_e18), 0n)
    await sql.begin(async (tx) => {
      await appendBatch(tx, [event])
      let left = cost
      for (const [i, leg] of legs.entries()) {
        // the cost split by filled size; the last leg takes the rounding rest
        const share =
          i === legs.length - 1 || total === 0n ? left : (cost * BigInt(leg.filled_e18)) / (total === 0n ? 1n : total)
        left -= share
        await tx`update positions set state = 'settled', outcome = ${cost > 0n ? 'itm' : 'otm'},
          settlement_cost = ${share.toString()}, closed_at = now(), updated_at = now()
          where id = ${leg.id} and state in ('open', 'closing')`
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

/**
 * The platform's fees recorded on the subaccount's fills but still held in the user's subaccount
 * at the exchange (not yet collected to the platform's), per currency: reconciliation adds them to
 * the journal side, since the journal already moved them to PLATFORM_FEE_REVENUE.
 */
export async function uncollectedPlatformFees(sql: Sql, subaccountRowId: string): Promise<Map<string, bigint>> {
  const [r] = await sql<{ v: string }[]>`
    select coalesce(sum(platform_fee), 0)::text as v from position_fills
    where subaccount_id = ${subaccountRowId} and fee_collected_at is null`
  const v = BigInt(r?.v ?? '0')
  return v === 0n ? new Map() : new Map([['USDC', v]])
}
