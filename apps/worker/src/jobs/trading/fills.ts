/**
 * Fills and settlements (docs/trading.md "Placing" step 5, "Buying a leg back", "Settlement"): the
 * exchange's trade and settlement histories of a subaccount become `option_sold` (key = trade id;
 * a sale, or with `side: 'buy'` a buy-back) and `option_settled` (key `{sub}:{instrument}:{expirySec}`),
 * with the positions' figures moved in the same transaction. Every order we send carries its
 * position id as label, which is how a trade finds its position. Re-reading a history records
 * nothing twice (spec 6 rule 3).
 */
import type { Sql } from '@wh/db'
import type { DeriveClient, Trade } from '@wh/exchange'
import { appendBatch, type EventInput } from '@wh/ledger'
import {
  addFills,
  costUsdcUp,
  type FillRecord,
  type FillSums,
  platformFee,
  premiumUsdc,
  publishFills,
  publishSettlement,
  type RecordedFill,
  recordFillRows,
  type StrategyEvents,
  settlePosition,
} from '@wh/trading'

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

/**
 * Reads the subaccount's new trades and records those of our positions: sells (premium received,
 * the exchange's and the platform's fee) and buy-backs (`side: 'buy'`: price × amount paid, rounded
 * UP to the USDC unit like every fee, so the journal never shows more in the subaccount than the
 * exchange holds; the exchange's fee; no platform fee). Returns fills recorded.
 *
 * Each fill is a `position_fills` row, signed by side: a buy-back's amount and premium are
 * negative (so their sums are the position's net short amount and net premium), its platform fee
 * 0 and already "collected" (there is nothing to collect). The position's figures move in the
 * event's transaction: sells `filled_e18`, `premium`, `fees`; buys `bought_e18`, `close_cost`, `fees`.
 */
export async function ingestFills(deps: FillDeps, sub: TradingSubaccount): Promise<number> {
  const trades = await newTrades(deps, sub)
  if (trades.length === 0) return 0
  const fills = await fillsOf(deps, sub, trades)
  if (fills.length === 0) return 0
  const touched = await recordFills(deps, sub, fills)
  // the strategy stream announces sales (a cycle's contracts and premium); a buy-back is the user's own
  if (deps.strategyEvents && touched.sold.length > 0) {
    const at = new Date(Math.max(...fills.filter((f) => !f.buy).map((f) => f.trade.timestamp)))
    await publishFills(deps.sql, deps.strategyEvents, touched.sold, at)
  }
  return touched.count
}

/** The subaccount's trades since its last recorded fill (with an overlap), labelled by one of our positions. */
async function newTrades(deps: FillDeps, sub: TradingSubaccount): Promise<Trade[]> {
  const [since] = await deps.sql<{ ms: string | null }[]>`
    select (extract(epoch from coalesce(
      (select max(traded_at) from position_fills where subaccount_id = ${sub.id}),
      -- exchange time, not ours: the window is set from the tick's clock (the exchange's in tests)
      (select min(window_ends_at) - interval '1 day' from positions where subaccount_id = ${sub.id}
        and state in ('placing', 'open', 'closing'))
    )) * 1000)::bigint::text as ms`
  if (!since?.ms) return []
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
  return trades.filter(
    (t) => (t.direction === 'sell' || t.direction === 'buy') && UUID_RE.test(t.label) && !t.is_transfer,
  )
}

interface Fill {
  trade: Trade
  buy: boolean
  amount: bigint
  price: bigint
  premium: bigint
  exchangeFee: bigint
  platformFee: bigint
}

/** Our trades on their position's instrument, priced: premium, the exchange's fee and ours. */
async function fillsOf(deps: FillDeps, sub: TradingSubaccount, ours: readonly Trade[]): Promise<Fill[]> {
  const positions = await deps.sql<{ id: string; instrument: string | null }[]>`
    select id, instrument from positions where subaccount_id = ${sub.id}
      and id = any(${[...new Set(ours.map((t) => t.label))]}::uuid[])`
  const byId = new Map(positions.map((p) => [p.id, p]))
  return ours
    .filter((t) => byId.get(t.label)?.instrument === t.instrument_name)
    .map((t) => {
      const buy = t.direction === 'buy'
      const amount = e18(t.trade_amount)
      const price = e18(t.trade_price)
      // a sale's premium rounds down, a buy's cost up: either way the journal's subaccount stays at
      // or below the exchange's balance, off by under a unit per fill
      const premium = buy ? costUsdcUp(amount, price) : premiumUsdc(amount, price)
      const platform = buy ? 0n : platformFee(premium, deps.platformFeeRate)
      return { trade: t, buy, amount, price, premium, exchangeFee: usdc(t.trade_fee, 'up'), platformFee: platform }
    })
}

/** One `option_sold` per fill, its `position_fills` row and its position's figures, in one transaction. */
async function recordFills(deps: FillDeps, sub: TradingSubaccount, fills: readonly Fill[]) {
  const base = (f: Fill) => ({
    userId: sub.userId,
    subaccountId: String(sub.exchangeId),
    tradeId: f.trade.trade_id,
    instrument: f.trade.instrument_name,
    currency: 'USDC',
  })
  const events: EventInput[] = fills.map((f) => ({
    type: 'option_sold',
    payload: f.buy
      ? { ...base(f), side: 'buy' as const, premium: f.premium, exchangeFee: f.exchangeFee }
      : { ...base(f), premium: f.premium, exchangeFee: f.exchangeFee, platformFee: f.platformFee },
    occurredAt: new Date(f.trade.timestamp),
  }))
  return deps.sql.begin(async (tx) => {
    await appendBatch(tx, events)
    // the fill rows decide what is new: a trade already recorded adds nothing to its position
    const rows: FillRecord[] = fills.map((f) => ({
      trade_id: f.trade.trade_id,
      position_id: f.trade.label,
      amount_e18: (f.buy ? -f.amount : f.amount).toString(),
      price_e18: f.price.toString(),
      premium: (f.buy ? -f.premium : f.premium).toString(),
      exchange_fee: f.exchangeFee.toString(),
      platform_fee: f.platformFee.toString(),
      traded_at: new Date(f.trade.timestamp).toISOString(),
      // a buy carries no platform fee: nothing for the fee collection to claim
      fee_collected_at: f.buy ? new Date(f.trade.timestamp).toISOString() : null,
    }))
    const inserted = await recordFillRows(tx, sub, rows)
    const sums = positionSums(inserted)
    for (const [id, s] of sums) await addFills(tx, id, s)
    return { sold: [...sums].filter(([, s]) => s.sold > 0n).map(([id]) => id), count: inserted.length }
  })
}

/** Per position, what the new fill rows add: contracts sold and bought back, premium, cost, fees. */
function positionSums(inserted: readonly RecordedFill[]) {
  const sums = new Map<string, FillSums>()
  for (const r of inserted) {
    const s = sums.get(r.position_id) ?? { sold: 0n, premium: 0n, bought: 0n, cost: 0n, fees: 0n }
    const amount = BigInt(r.amount_e18)
    const premium = BigInt(r.premium)
    if (amount < 0n) {
      s.bought -= amount
      s.cost -= premium
    } else {
      s.sold += amount
      s.premium += premium
    }
    s.fees += BigInt(r.fees)
    sums.set(r.position_id, s)
  }
  return sums
}

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
