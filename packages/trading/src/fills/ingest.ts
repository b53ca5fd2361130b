/**
 * Fills (docs/trading.md "Placing" step 5, "Buying a leg back"): the exchange's trade history of a
 * subaccount becomes `option_sold` (key = trade id; a sale, or with `side: 'buy'` a buy-back), with
 * the positions' figures moved in the same transaction. Every order we send carries its position id
 * as label, which is how a trade finds its position. Re-reading a history records nothing twice
 * (spec 6 rule 3). Settlements are ./settlements.ts. The placing step ingests a subaccount's fills
 * before it steps that subaccount's positions; reconciliation does too before it compares.
 */
import { E18_DECIMALS, toBaseUnits, USDC_DECIMALS } from '@wh/core'
import type { Trade } from '@wh/exchange'
import { appendBatch, type EventInput } from '@wh/ledger'
import { type FillRecord, type RecordedFill, recordFillRows } from '../fill-store'
import { costUsdcUp, platformFee, premiumUsdc } from '../placing'
import { addFills, type FillSums } from '../position-store'
import { publishFills } from '../strategy-events/publish'
import type { FillDeps, TradingSubaccount } from './types'

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/** trades are re-read this far back from the newest recorded one: a late-published fill is not missed */
export const FILL_OVERLAP_MS = 60 * 60_000
const PAGE_SIZE = 500
const MAX_PAGES = 20

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
      const amount = toBaseUnits(t.trade_amount, E18_DECIMALS, 'down')
      const price = toBaseUnits(t.trade_price, E18_DECIMALS, 'down')
      // a sale's premium rounds down, a buy's cost up: either way the journal's subaccount stays at
      // or below the exchange's balance, off by under a unit per fill
      const premium = buy ? costUsdcUp(amount, price) : premiumUsdc(amount, price)
      const platform = buy ? 0n : platformFee(premium, deps.platformFeeRate)
      return {
        trade: t,
        buy,
        amount,
        price,
        premium,
        exchangeFee: toBaseUnits(t.trade_fee, USDC_DECIMALS, 'up'),
        platformFee: platform,
      }
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
