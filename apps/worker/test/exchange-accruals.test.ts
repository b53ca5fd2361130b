/**
 * The accruals tick (spec 6 and 6.1) against the Derive simulator over real
 * HTTP, a real Postgres and Redis: the exchange's hourly interest and perp funding become one
 * `interest_accrued` / `funding_paid` per subaccount, type and complete hour; re-runs add nothing;
 * an hour is recorded only once it is complete; an entry written late into a recorded hour is
 * reported, never recorded twice. The tests run in order on one simulator and its manual clock
 * (Derive v3's histories).
 */
import {
  accrualKey,
  balanceOf,
  EXCHANGE_CHAIN,
  PLATFORM_EXPENSE_OVERHEAD,
  platformHot,
  userIncome,
  userSub,
} from '@wh/ledger'
import { ACCRUAL_SETTLE_MS, type AccrualsSummary, fundingAccrualCursorKey, runAccruals } from '@wh/subaccounts'
import type { Job } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { accrualsTick } from '../src/jobs/exchange/ticks'
import { ticks } from '../src/jobs/index'
import { type AccountingStack, HOUR, type OpenedSubaccount, silent, startAccountingStack } from './fixtures/accounting'

const START = Date.UTC(2026, 0, 5, 0, 30) // half past midnight: hour ticks at 01:00, 02:00, …
const at = (h: number, m = 0) => Date.UTC(2026, 0, 5, h, m)
const E12 = 10n ** 12n

/** e18 → USDC base units (6), half to even: written out here, independent of the code under test. */
function usdcUnits(e18: bigint): bigint {
  const neg = e18 < 0n
  const a = neg ? -e18 : e18
  let q = a / E12
  const r = a % E12
  if (r * 2n > E12 || (r * 2n === E12 && q % 2n === 1n)) q += 1n
  return neg ? -q : q
}
const e18 = (decimal: string) => {
  const [w = '0', f = ''] = decimal.replace('-', '').split('.')
  const v = BigInt(w) * 10n ** 18n + BigInt(f.padEnd(18, '0'))
  return decimal.startsWith('-') ? -v : v
}

describe('accruals tick against the simulator', () => {
  let stack: AccountingStack
  let a: OpenedSubaccount // cash only: interest
  let b: OpenedSubaccount // cash and a long ETH perp: interest and funding
  const warnings: Array<{ obj: object; msg?: string }> = []
  const log = { info() {}, warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }) }

  beforeAll(async () => {
    stack = await startAccountingStack({ startMs: START })
    a = await stack.openSubaccount({ asset: 'ETH', usdc: '10000' })
    b = await stack.openSubaccount({ asset: 'BTC', usdc: '5000' })
    const ask = (await stack.deps.exchange.getTicker('ETH-PERP')).best_ask_price
    // a user's perp, placed as the owner: the worker's key trades options only
    await stack.owner.order({
      subaccount_id: b.exchangeId,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '1',
      limit_price: ask,
      max_fee: '10',
    })
  })
  afterAll(async () => {
    await stack?.close()
  })

  const sql = () => stack.ctx.database.sql
  const run = () => runAccruals(stack.deps, log)
  const advanceTo = (ms: number) => stack.sim.control.advanceTo(ms)
  const eventCount = async () => (await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events`)[0]?.n ?? 0
  const accruals = async (s: OpenedSubaccount) =>
    sql()<{ type: string; idempotency_key: string; payload: { bucketTs: number; amount: string; currency: string } }[]>`
      select type, idempotency_key, payload from ledger_events
      where user_id = ${s.userId} and type in ('interest_accrued', 'funding_paid')
      order by idempotency_key`
  const cursorOf = async (s: OpenedSubaccount) =>
    Number((await sql()<{ c: string }[]>`select accrued_to_ms as c from subaccounts where id = ${s.rowId}`)[0]?.c)
  /** The simulator's own history, summed per hour and rounded: what the journal must hold. */
  async function expectedBuckets(s: { exchangeId: number }, type: 'interest' | 'funding', closedBeforeMs: number) {
    const entries =
      type === 'interest'
        ? (await stack.deps.exchange.getInterestHistory({ subaccount_id: s.exchangeId })).events.map((e) => ({
            ts: e.timestamp,
            v: e18(e.interest),
          }))
        : (await stack.deps.exchange.getFundingHistory({ subaccount_id: s.exchangeId })).events.map((e) => ({
            ts: e.timestamp,
            v: e18(e.funding),
          }))
    const sums = new Map<number, bigint>()
    for (const e of entries) {
      const bucketMs = e.ts - (e.ts % HOUR)
      if (bucketMs + HOUR <= closedBeforeMs) sums.set(bucketMs / 1000, (sums.get(bucketMs / 1000) ?? 0n) + e.v)
    }
    return [...sums].map(([bucketTs, v]) => ({ bucketTs, amount: usdcUnits(v) }))
  }

  it('is registered on the accounting queue', () => {
    const t = ticks.find((x) => x.name === 'exchange-accruals')
    expect(t).toBe(accrualsTick)
    expect(t?.queue).toBe('accounting')
  })

  let first: AccrualsSummary
  it('records interest and perp funding once per subaccount, type and complete hour, in USDC base units', async () => {
    advanceTo(at(3, 30)) // hour ticks at 01:00, 02:00, 03:00; the 03:00 hour is still running
    const summary = await run()
    first = summary
    expect(summary).toMatchObject({ ran: true, subaccounts: 2, read: 2, recorded: 6, errors: 0, late: 0 })

    const closed = at(3) // the hours 01:00 and 02:00 are complete
    const wantA = await expectedBuckets(a, 'interest', closed)
    const wantBi = await expectedBuckets(b, 'interest', closed)
    const wantBf = await expectedBuckets(b, 'funding', closed)
    expect(wantA.map((x) => x.bucketTs)).toEqual([at(1) / 1000, at(2) / 1000])
    expect(wantBf.map((x) => x.bucketTs)).toEqual([at(1) / 1000, at(2) / 1000])
    // 10,000 USDC at 5 % a year: about 0.0571 USDC an hour
    for (const x of wantA) expect(x.amount).toBeGreaterThan(57_000n)
    for (const x of wantA) expect(x.amount).toBeLessThan(57_200n)
    // a long perp pays funding when the rate is positive
    for (const x of wantBf) expect(x.amount).toBeLessThan(0n)

    const asEvents = (type: string, s: OpenedSubaccount, want: Array<{ bucketTs: number; amount: bigint }>) =>
      want.map((w) => ({
        type,
        idempotency_key: accrualKey({
          subaccountId: s.ledgerId,
          type: type === 'interest_accrued' ? 'interest' : 'funding',
          bucketTs: w.bucketTs,
        }),
        payload: expect.objectContaining({ currency: 'USDC', bucketTs: w.bucketTs, amount: w.amount.toString() }),
      }))
    expect(await accruals(a)).toEqual(asEvents('interest_accrued', a, wantA))
    expect(await accruals(b)).toEqual(
      [...asEvents('funding_paid', b, wantBf), ...asEvents('interest_accrued', b, wantBi)].sort((x, y) =>
        x.idempotency_key.localeCompare(y.idempotency_key),
      ),
    )
    // postings: the subaccount gains what the income accounts give
    const interestA = wantA.reduce((s, x) => s + x.amount, 0n)
    expect(await balanceOf(sql(), userSub(a.userId, a.ledgerId, 'USDC'), 'USDC')).toBe(10_000_000_000n + interestA)
    expect(await balanceOf(sql(), userIncome(a.userId, 'interest'), 'USDC')).toBe(-interestA)
    const fundingB = wantBf.reduce((s, x) => s + x.amount, 0n)
    expect(await balanceOf(sql(), userIncome(b.userId, 'funding'), 'USDC')).toBe(-fundingB)
    // the cursor sits at the end of the complete hours
    expect(await cursorOf(a)).toBe(at(3))
    expect(await cursorOf(b)).toBe(at(3))
  })

  it("the funding subaccount's interest is the platform's: into its exchange funds, against overhead", async () => {
    const fundingId = stack.deps.config.exchange.fundingSubaccountId
    const platformAccruals = () =>
      sql()<{ idempotency_key: string; user_id: string | null; payload: Record<string, unknown> }[]>`
        select idempotency_key, user_id, payload from ledger_events
        where type = 'interest_accrued' and user_id is null order by idempotency_key`
    if (fundingId === undefined) throw new Error('no funding subaccount configured')
    expect(first.fundingSubaccount).toEqual({ recorded: 2, late: 0, error: false })
    const want = await expectedBuckets({ exchangeId: fundingId }, 'interest', at(3))
    expect(want.map((x) => x.bucketTs)).toEqual([at(1) / 1000, at(2) / 1000])
    // about 100,000,000 USDC at 5 % a year: some 570 USDC an hour
    for (const x of want) expect(x.amount).toBeGreaterThan(500_000_000n)
    expect(await platformAccruals()).toEqual(
      want.map((w) => ({
        idempotency_key: accrualKey({ subaccountId: String(fundingId), type: 'interest', bucketTs: w.bucketTs }),
        user_id: null,
        payload: {
          subaccountId: String(fundingId),
          currency: 'USDC',
          bucketTs: w.bucketTs,
          amount: w.amount.toString(),
        },
      })),
    )
    // the interest's postings: into the platform's exchange funds, out of overhead
    const earned = want.reduce((s, x) => s + x.amount, 0n)
    const postings = await sql()<{ account: string; total: string }[]>`
      select p.account, sum(p.amount)::text as total from ledger_postings p
      join ledger_events e on e.id = p.event_id
      where e.type = 'interest_accrued' and e.user_id is null group by p.account order by p.account`
    expect(postings).toEqual([
      { account: PLATFORM_EXPENSE_OVERHEAD, total: String(-earned) },
      { account: platformHot(EXCHANGE_CHAIN), total: String(earned) },
    ])
    expect(await stack.redis.get(fundingAccrualCursorKey(fundingId))).toBe(String(at(3)))
    // a lost cursor only makes the next run read again from the start: the keys deduplicate it
    await stack.redis.del(fundingAccrualCursorKey(fundingId))
    const again = await run()
    expect(again.fundingSubaccount).toEqual({ recorded: 0, late: 0, error: false })
    expect(await platformAccruals()).toHaveLength(2)
    expect(await stack.redis.get(fundingAccrualCursorKey(fundingId))).toBe(String(at(3)))
  })

  it('running the tick twice more adds nothing and does not even read the histories', async () => {
    const before = await eventCount()
    for (let i = 0; i < 2; i++) {
      const s = await run()
      expect(s).toMatchObject({ ran: true, subaccounts: 2, read: 0, recorded: 0, errors: 0 })
    }
    expect(await eventCount()).toBe(before)
  })

  it('an hour is recorded only once it is complete, with every entry of the hour', async () => {
    // Derive also pays interest between hour marks (on balance changes); the simulator only at
    // the marks, so an entry inside the running hour is added to its history here
    advanceTo(at(3, 45))
    const midHourE18 = 1_234_567_000_000_000_000n
    stack.sim.engine.history.interest.push({
      subaccountId: a.exchangeId,
      timestampMs: at(3, 40),
      interestE18: midHourE18,
    })
    const before = await eventCount()
    expect((await run()).recorded).toBe(0)
    // the hour has ended but the settle delay has not passed: still not recorded
    advanceTo(at(4) + ACCRUAL_SETTLE_MS - 60_000)
    const s1 = await run()
    expect(s1.recorded).toBe(0)
    expect(await eventCount()).toBe(before)
    advanceTo(at(4) + ACCRUAL_SETTLE_MS)
    const s2 = await run()
    expect(s2).toMatchObject({ recorded: 3, duplicates: 3, late: 0 }) // the overlap re-reads 02:00: same sums
    const want = await expectedBuckets(a, 'interest', at(4))
    const h3 = want.find((x) => x.bucketTs === at(3) / 1000)
    expect(h3?.amount).toBeGreaterThan(1_234_567n) // the 03:00 mark and the mid-hour entry together
    const recorded = (await accruals(a)).find((e) => e.payload.bucketTs === at(3) / 1000)
    expect(recorded?.payload.amount).toBe(h3?.amount.toString())
    expect(await cursorOf(a)).toBe(at(4))
  })

  it('an entry written late into the last recorded hour is reported, not recorded a second time', async () => {
    stack.sim.engine.history.interest.push({
      subaccountId: a.exchangeId,
      timestampMs: at(3, 50),
      interestE18: 5n * 10n ** 18n,
    })
    const before = (await accruals(a)).find((e) => e.payload.bucketTs === at(3) / 1000)
    advanceTo(at(5) + ACCRUAL_SETTLE_MS)
    warnings.length = 0
    const s = await run()
    expect(s).toMatchObject({ recorded: 3, late: 1, errors: 0 }) // the 04:00 hour of each; 03:00 of A is late
    const after = (await accruals(a)).find((e) => e.payload.bucketTs === at(3) / 1000)
    expect(after).toEqual(before)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.msg).toMatch(/re-read with another amount/)
  })

  it('the tick itself runs the same code under the cycle lock', async () => {
    advanceTo(at(6) + ACCRUAL_SETTLE_MS)
    const s = (await accrualsTick.process({} as Job, {
      log: silent,
      deps: stack.deps,
      queues: new Map(),
    })) as AccrualsSummary
    expect(s).toMatchObject({ ran: true, recorded: 3, late: 0, errors: 0 })
    const again = (await accrualsTick.process({} as Job, {
      log: silent,
      deps: stack.deps,
      queues: new Map(),
    })) as AccrualsSummary
    expect(again.recorded).toBe(0)
  })
})
