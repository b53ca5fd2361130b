/**
 * Fee collection (docs/exchange.md "Fee collection") against the Derive simulator over real HTTP, a
 * real Postgres and Redis: the platform's fees of a subaccount's fills are withdrawn to the
 * platform's exchange wallet exactly once (the wallet's balance at the simulator), the fills are
 * marked collected, a re-run sends nothing, reconciliation still agrees; a refused withdrawal
 * releases the fills for a later run; a worker dying after storing the withdrawal sends it once.
 * The platform's funds are its funding subaccount's (Derive v3).
 */
import { randomUUID } from 'node:crypto'
import { toBaseUnits } from '@wh/core'
import type { RunningSimulator } from '@wh/derive-simulator'
import {
  FEE_MIN_COLLECT,
  FEE_RETRY_AFTER_MS,
  findFundingDivergences,
  reconcileSubaccount,
  runFeeCollection,
  runFunding,
} from '@wh/subaccounts'
import { type PlaceDeps, requestPosition, runPlacing, tradingProfile } from '@wh/trading'
import type { Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { feeClaims, feeTick, reconcileSources } from '../src/jobs/exchange/ticks'
import { ticks } from '../src/jobs/index'
import type { WorkerDeps } from '../src/ticks'
import {
  creditDeposit,
  type ExchangeStack,
  journalPlatformDeposits,
  silent,
  startExchangeStack,
  tradingDepsOf,
} from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const START = Date.UTC(2026, 10, 23, 9, 0, 0) // a Monday, 09:00 UTC

describe('platform fee collection against the simulator', () => {
  let stack: ExchangeStack
  let sim: RunningSimulator
  let deps: WorkerDeps
  let redis: Redis
  let place: PlaceDeps
  const profile = tradingProfile('balanced')

  beforeAll(async () => {
    stack = await startExchangeStack({
      sim: { startMs: START },
      env: { TRADING_PROFILE: 'balanced', PLATFORM_FEE_RATE: '0.1' },
    })
    ;({ sim, deps, redis } = stack)
    sim.control.setPrice('ETH', '3000')
    place = tradingDepsOf(stack, profile).place
  })
  afterAll(async () => stack?.close())

  const sql = () => stack.sql
  const collect = () => runFeeCollection({ ...deps, redis, log: silent }, feeClaims)
  /** the platform's USDC at the exchange: the funding subaccount less its interest */
  const wallet = () => toBaseUnits(stack.platform.balance('USDC'), 6, 'exact')
  const feeRows = async (subRow: string) =>
    sql()<{ id: string; state: string; amount: string; method: string; reason: string | null }[]>`
      select id, state, amount::text, method, reason from subaccount_transfers
      where subaccount_id = ${subRow} and kind = 'fee' order by created_at, id`
  const fills = async (subRow: string) =>
    sql()<{ platform_fee: string; fee_collected_at: Date | null; fee_transfer_id: string | null }[]>`
      select platform_fee::text, fee_collected_at, fee_transfer_id from position_fills where subaccount_id = ${subRow}`
  const uncollected = async (subRow: string) =>
    (await fills(subRow)).filter((f) => f.fee_collected_at === null).reduce((a, f) => a + BigInt(f.platform_fee), 0n)

  /** A user whose put sold (fills with platform fees); returns the subaccount row. */
  async function soldPut(amount: bigint) {
    const userId = randomUUID()
    await creditDeposit(sql(), userId, amount, { at: new Date(sim.control.nowMs()) })
    const req = await requestPosition(sql(), { userId, asset: 'ETH', side: 'put', amount })
    for (let i = 0; i < 8; i++) {
      await runFunding({ ...deps, redis, log: silent })
      await runPlacing(place)
    }
    sim.control.advance(profile.makerWindowMs)
    await runPlacing(place)
    const [p] = await sql()<{ state: string; subaccount_id: string; exchange_id: string }[]>`
      select p.state, p.subaccount_id, s.exchange_id::text from positions p join subaccounts s on s.id = p.subaccount_id
      where p.id = ${req.id}`
    expect(p?.state).toBe('open')
    return { userId, subRow: p?.subaccount_id as string, exchangeId: p?.exchange_id as string }
  }

  async function reconciled(userId: string, subRow: string, exchangeId: string) {
    const nowMs = sim.control.nowMs()
    return (
      await reconcileSubaccount(
        { ...deps, redis },
        reconcileSources,
        {
          id: subRow,
          userId,
          asset: 'ETH',
          exchangeId: Number(exchangeId),
          ledgerId: exchangeId,
          accruedToMs: null,
          stoppedAt: null,
        },
        { mode: 'enforce', epsilon: '0.01', nowMs, at: new Date(nowMs) },
        silent,
      )
    ).outcome
  }

  it('is registered on the treasury queue', () => {
    const t = ticks.find((x) => x.name === 'exchange-fees')
    expect(t).toBe(feeTick)
    expect(t?.queue).toBe('treasury')
  })

  it('withdraws exactly the uncollected fees to the exchange wallet once, marks the fills, and a re-run sends nothing', async () => {
    const { userId, subRow, exchangeId } = await soldPut(USDC(5_000))
    const fees = await uncollected(subRow)
    expect(fees).toBeGreaterThanOrEqual(FEE_MIN_COLLECT)
    const before = wallet()

    const first = await collect()
    expect(first).toMatchObject({ started: 1, collected: 1, failed: 0, locked: false })
    expect(wallet() - before).toBe(fees)
    const [row, ...more] = await feeRows(subRow)
    expect(more).toHaveLength(0)
    expect(row).toMatchObject({ state: 'done', amount: fees.toString(), method: 'withdraw' })
    for (const f of await fills(subRow)) {
      expect(f.fee_collected_at).not.toBeNull()
      expect(f.fee_transfer_id).toBe(row?.id)
    }
    // no journal event: the fee was platform revenue since the fill
    const [ev] = await sql()<{ n: number }[]>`
      select count(*)::int as n from ledger_events where user_id = ${userId}
        and type not in ('deposit_detected', 'subaccount_funded', 'option_sold', 'interest_accrued', 'funding_paid')`
    expect(ev?.n).toBe(0)

    expect(await collect()).toMatchObject({ started: 0, collected: 0, failed: 0 })
    expect(wallet() - before).toBe(fees)
    expect(await feeRows(subRow)).toHaveLength(1)
    expect(await reconciled(userId, subRow, exchangeId)).toBe('clean')
    // the funding subaccount: its opening deposit, the creation and its fee, the funding out and the fees
    // collected back in are all explained (docs/exchange-v3.md "Accruals and reconciliation on v3")
    await journalPlatformDeposits(sql(), { USDC: '10000000' }, new Date(sim.control.nowMs()))
    const fundingId = deps.config.exchange.fundingSubaccountId as number
    const opts = { epsilon: '0.00001', nowMs: sim.control.nowMs() }
    expect(await findFundingDivergences({ ...deps, redis }, reconcileSources, fundingId, opts, silent)).toEqual([])
    // and a collection the journal did not know of would not be
    await sql()`update subaccount_transfers set state = 'failed' where id = ${row?.id ?? ''}`
    const [gap, ...others] = await findFundingDivergences({ ...deps, redis }, reconcileSources, fundingId, opts, silent)
    expect(others).toEqual([])
    expect(gap?.currency).toBe('USDC')
    const off = (gap?.delta ?? 0n) - fees // the running hours' interest, rounded per hour
    expect(off >= -2n && off <= 2n).toBe(true)
    await sql()`update subaccount_transfers set state = 'done' where id = ${row?.id ?? ''}`
  })

  it('a refused withdrawal fails the row and releases its fills; a later run collects them', async () => {
    const { userId, subRow, exchangeId } = await soldPut(USDC(4_000))
    const fees = await uncollected(subRow)
    const before = wallet()
    sim.control.failNext({ method: stack.platform.method('withdraw'), code: 11000 })
    expect(await collect()).toMatchObject({ started: 1, failed: 1, collected: 0 })
    const [failed] = await feeRows(subRow)
    expect(failed?.state).toBe('failed')
    for (const f of await fills(subRow)) expect(f).toMatchObject({ fee_collected_at: null, fee_transfer_id: null })
    expect(wallet()).toBe(before)
    expect(await reconciled(userId, subRow, exchangeId)).toBe('clean')

    // within the retry delay the subaccount waits; after it the fees go
    expect(await collect()).toMatchObject({ started: 0 })
    sim.control.advance(FEE_RETRY_AFTER_MS)
    expect(await collect()).toMatchObject({ started: 1, collected: 1 })
    expect(wallet() - before).toBe(fees)
    expect(await uncollected(subRow)).toBe(0n)
    expect(await reconciled(userId, subRow, exchangeId)).toBe('clean')
  })

  it('a worker dying after storing the withdrawal sends the same one on restart: collected once', async () => {
    const { subRow } = await soldPut(USDC(3_000))
    const fees = await uncollected(subRow)
    const before = wallet()
    const died = await runFeeCollection({ ...deps, redis, log: silent }, feeClaims, {
      afterStored: async () => {
        throw new Error('killed after storing')
      },
    }).catch((e: Error) => e)
    expect(died).toBeInstanceOf(Error)
    const [stored] = await feeRows(subRow)
    expect(stored?.state).toBe('submitted')
    expect(wallet()).toBe(before)
    for (const f of await fills(subRow)) expect(f.fee_transfer_id).toBe(stored?.id)

    const r = await collect()
    expect(r).toMatchObject({ started: 0, collected: 1 })
    expect(wallet() - before).toBe(fees)
    expect(await collect()).toMatchObject({ started: 0, collected: 0 })
    expect(wallet() - before).toBe(fees)
    expect(await feeRows(subRow)).toHaveLength(1)
  })

  it('below the minimum, or with a release open, nothing is collected', async () => {
    const tick = () => feeTick.process({} as Job, { log: silent, deps: { ...deps, redis }, queues: new Map() })
    const { userId, subRow } = await soldPut(USDC(3_000))
    const [rel] = await sql()<{ id: string }[]>`
      insert into subaccount_releases (user_id, subaccount_id, state) values (${userId}, ${subRow}, 'waiting') returning id`
    expect(await tick()).toMatchObject({ started: 0 })
    await sql()`update subaccount_releases set state = 'failed' where id = ${rel?.id ?? ''}`
    // the fills' fees below 1 USDC: they wait for more
    await sql()`update position_fills set platform_fee = 1 where subaccount_id = ${subRow}`
    expect(await tick()).toMatchObject({ started: 0 })
    expect(await feeRows(subRow)).toHaveLength(0)
  })
})
