/**
 * Reconciliation (spec 2.4, 6, 6.1, 8.3) against the Derive simulator
 * over real HTTP, a real Postgres and Redis, with alerts caught by a Telegram capture server: no
 * divergence records nothing; a divergence injected at the simulator alerts in `observe` mode and
 * records nothing, and in `enforce` mode records an adjustment and a stop and stops the subaccount;
 * re-runs deduplicate; a different divergence leaves a second pair; the ops CLI clears the stop;
 * a transfer in flight is not compared; the cycle lock makes a concurrent run skip.
 * The tests run in order on one simulator and its manual clock.
 */
import { randomUUID } from 'node:crypto'
import { fromBaseUnits, systemClock } from '@wh/core'
import { fromE18, toE18 } from '@wh/exchange'
import { reconcileDriftKey, tryLock } from '@wh/jobs'
import {
  appendBatch,
  balanceOf,
  EXCHANGE_CHAIN,
  minuteBucket,
  PLATFORM_EXPENSE_RECONCILIATION,
  platformHot,
  reconcileAdjustmentKey,
  reconcileStopKey,
  userSub,
} from '@wh/ledger'
import { assertNotStopped, clearStop, isTradingStopped, SubaccountStoppedError } from '@wh/ops'
import {
  EXCHANGE_CYCLE_LOCK,
  findFundingDivergences,
  type ReconcileSummary,
  runAccruals,
  runReconcile,
  withCycleLock,
} from '@wh/subaccounts'
import type { Job } from 'bullmq'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcileSources, reconcileTick } from '../src/jobs/exchange/ticks'
import { ticks } from '../src/jobs/index'
import { type AccountingStack, type OpenedSubaccount, silent, startAccountingStack } from './fixtures/accounting'
import { makeOperators, runOpsCli } from './fixtures/operators'

const START = Date.UTC(2026, 0, 5, 0, 30)
const at = (h: number, m = 0) => Date.UTC(2026, 0, 5, h, m)
describe('reconciliation against the simulator', () => {
  let stack: AccountingStack
  let c: OpenedSubaccount // a million USDC: an hour of interest (~5.7 USDC) is far above epsilon
  let d: OpenedSubaccount

  beforeAll(async () => {
    stack = await startAccountingStack({ startMs: START })
    c = await stack.openSubaccount({ asset: 'ETH', usdc: '1000000' })
    d = await stack.openSubaccount({ asset: 'BTC', usdc: '2500' })
  })
  afterAll(async () => {
    await stack?.close()
  })

  const sql = () => stack.ctx.database.sql
  const observe = () => runReconcile(stack.deps, reconcileSources, silent, { mode: 'observe' })
  const enforce = () => runReconcile(stack.deps, reconcileSources, silent, { mode: 'enforce' })
  const alerts = () => stack.capture.requests.map((r) => r.body.text)
  const events = async (s: OpenedSubaccount, types: string[]) =>
    sql()<{ type: string; idempotency_key: string; payload: Record<string, unknown> }[]>`
      select type, idempotency_key, payload from ledger_events
      where user_id = ${s.userId} and type in ${sql()(types)}
      order by recorded_at, type`
  /** what the run left for GET /metrics (the stack's Redis carries its own key prefix) */
  const drift = () => stack.redis.hgetall(reconcileDriftKey())
  const reconcileEvents = (s: OpenedSubaccount) => events(s, ['reconciliation_adjustment', 'stop_raised'])
  const eventCount = async () => (await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events`)[0]?.n ?? 0
  const stoppedAt = async (s: OpenedSubaccount) =>
    (await sql()<{ stopped_at: Date | null }[]>`select stopped_at from subaccounts where id = ${s.rowId}`)[0]
      ?.stopped_at ?? null
  const exchangeUsdcE18 = async (s: OpenedSubaccount) =>
    toE18(
      (await stack.deps.exchange.getSubaccount(s.exchangeId)).collaterals.find((x) => x.asset_name === 'USDC')
        ?.amount ?? '0',
    )
  /** Injects a divergence: the exchange balance moves by `delta` (a USDC decimal) without any event. */
  const shift = async (s: OpenedSubaccount, delta: string) =>
    stack.sim.control.setBalance(s.exchangeId, 'USDC', fromE18((await exchangeUsdcE18(s)) + toE18(delta)))

  it('is registered on the accounting queue', () => {
    const t = ticks.find((x) => x.name === 'exchange-reconcile')
    expect(t).toBe(reconcileTick)
    expect(t?.queue).toBe('accounting')
  })

  it('no divergence records nothing and alerts nobody, with interest of a running hour not yet journaled', async () => {
    stack.sim.control.advanceTo(at(3, 0)) // hour marks 01:00, 02:00, 03:00; only 01:00 is complete
    const before = await eventCount()
    const s = await enforce()
    expect(s).toMatchObject({ ran: true, subaccounts: 2, clean: 2, observed: 0, stopped: 0, errors: 0 })
    // the funding subaccount against the platform's exchange funds too, its creations' fees and interest explained
    expect(s.fundingSubaccount).toBe('clean')
    // the ingestion recorded the complete hour (one per subaccount, and the funding subaccount's);
    // the running ones are pending
    expect(await eventCount()).toBe(before + 3)
    expect(await reconcileEvents(c)).toEqual([])
    expect(alerts()).toEqual([])
    expect(await stoppedAt(c)).toBeNull()
    expect(await drift()).toEqual({}) // GET /metrics: no divergence, no drift
    // without the pending hours the journal would be ~11 USDC short of the exchange
    const journal = await balanceOf(sql(), userSub(c.userId, c.ledgerId, 'USDC'), 'USDC')
    expect((await exchangeUsdcE18(c)) / 10n ** 12n - journal).toBeGreaterThan(10_000_000n)
  })

  it('observe mode: a divergence injected at the exchange alerts once and records nothing', async () => {
    await shift(c, '12.5')
    const before = await eventCount()
    const s = await observe()
    expect(s).toMatchObject({ clean: 1, observed: 1, stopped: 0, errors: 0 })
    expect(alerts()).toHaveLength(1)
    expect(alerts()[0]).toContain('reconciliation divergence (observe mode: nothing recorded)')
    expect(alerts()[0]).toContain(`subaccount: ${c.ledgerId}`)
    expect(alerts()[0]).toMatch(/USDC: journal .*, exchange .*, delta \+12\.(49999[89]|50000[012])$/)
    expect(alerts()[0]).not.toContain('42:test-token')
    expect(await eventCount()).toBe(before)
    expect(await stoppedAt(c)).toBeNull()
    // the run's drift for GET /metrics: |delta| in USDC, the other subaccount (clean) adds nothing
    expect(Object.keys(await drift())).toEqual(['USDC'])
    expect(Math.abs(Number((await drift()).USDC) - 12.5)).toBeLessThanOrEqual(0.000002)
    // the same divergence again: no second alert within the hour, still nothing recorded
    expect(await observe()).toMatchObject({ observed: 1 })
    expect(alerts()).toHaveLength(1)
    expect(await eventCount()).toBe(before)
  })

  it('the tick reads the mode from RECONCILE_MODE (observe by default)', async () => {
    expect(stack.ctx.config.reconcileMode).toBe('observe')
    const before = await eventCount()
    const s = (await reconcileTick.process({} as Job, {
      log: silent,
      deps: stack.deps,
      queues: new Map(),
    })) as ReconcileSummary
    expect(s).toMatchObject({ ran: true, observed: 1, stopped: 0 })
    expect(await eventCount()).toBe(before)
  })

  /** the delta of the run: the injected amount give or take the half-unit roundings of the open hours */
  let firstDelta = 0n

  it('enforce mode: one adjustment and one stop_raised, the subaccount stopped, one alert', async () => {
    const bucket = minuteBucket(new Date(stack.sim.control.nowMs()))
    const account = userSub(c.userId, c.ledgerId, 'USDC')
    const journalBefore = await balanceOf(sql(), account, 'USDC')
    const s = await enforce()
    expect(s).toMatchObject({ clean: 1, stopped: 1, errors: 0 })
    const recorded = await reconcileEvents(c)
    firstDelta = BigInt(String(recorded[0]?.payload.delta))
    expect(firstDelta - 12_500_000n).toBeGreaterThanOrEqual(-2n) // two open hours, half a unit each
    expect(firstDelta - 12_500_000n).toBeLessThanOrEqual(2n)
    const divergences = [{ account, delta: firstDelta }]
    expect(recorded).toEqual([
      expect.objectContaining({
        type: 'reconciliation_adjustment',
        idempotency_key: reconcileAdjustmentKey({ subaccountId: c.ledgerId, account, bucket, delta: firstDelta }),
        payload: expect.objectContaining({ currency: 'USDC', bucket, delta: String(firstDelta) }),
      }),
      expect.objectContaining({
        type: 'stop_raised',
        idempotency_key: reconcileStopKey({ subaccountId: c.ledgerId, bucket, divergences }),
        payload: expect.objectContaining({
          source: 'reconciliation',
          divergences: [{ account, delta: String(firstDelta) }],
        }),
      }),
    ])
    // the difference sits with the platform (spec 2.4 platform:expense:reconciliation)
    expect(await balanceOf(sql(), account, 'USDC')).toBe(journalBefore + firstDelta)
    expect(await balanceOf(sql(), PLATFORM_EXPENSE_RECONCILIATION, 'USDC')).toBe(-firstDelta)
    expect(await stoppedAt(c)).toEqual(new Date(stack.sim.control.nowMs()))
    expect(await isTradingStopped(sql(), c.rowId)).toBe(true)
    await expect(assertNotStopped(sql(), c.rowId)).rejects.toBeInstanceOf(SubaccountStoppedError)
    await expect(assertNotStopped(sql(), d.rowId)).resolves.toBeUndefined()
    expect(alerts().at(-1)).toContain('subaccount stopped, adjustment recorded (enforce mode)')
    expect(await drift()).toEqual({ USDC: fromBaseUnits(firstDelta, 6) })
    // the journal mirrors the exchange now: a re-run finds nothing, and the drift is gone
    expect(await enforce()).toMatchObject({ clean: 2, stopped: 0, alreadyRecorded: 0 })
    expect(await drift()).toEqual({})
  })

  it('the same divergence again within the minute adds nothing; a different one adds a second pair', async () => {
    const account = userSub(c.userId, c.ledgerId, 'USDC')
    const bucket = minuteBucket(new Date(stack.sim.control.nowMs()))
    const alertsBefore = alerts().length
    // exactly the first delta again, same minute: the same keys (a whole base-unit shift adds no rounding)
    await shift(c, fromBaseUnits(firstDelta, 6))
    const before = await eventCount()
    expect(await enforce()).toMatchObject({ alreadyRecorded: 1, stopped: 0 })
    expect(await eventCount()).toBe(before)
    expect(alerts()).toHaveLength(alertsBefore)
    expect(await stoppedAt(c)).not.toBeNull()

    // 3 USDC more: the exchange is now firstDelta + 3 ahead of the journal, different contents
    await shift(c, '3')
    const second = firstDelta + 3_000_000n
    expect(await enforce()).toMatchObject({ stopped: 1 })
    const recorded = await reconcileEvents(c)
    expect(recorded.map((e) => e.type)).toEqual([
      'reconciliation_adjustment',
      'stop_raised',
      'reconciliation_adjustment',
      'stop_raised',
    ])
    expect(recorded[2]?.idempotency_key).toBe(
      reconcileAdjustmentKey({ subaccountId: c.ledgerId, account, bucket, delta: second }),
    )
    expect(recorded[3]?.idempotency_key).toBe(
      reconcileStopKey({ subaccountId: c.ledgerId, bucket, divergences: [{ account, delta: second }] }),
    )
    expect(recorded[3]?.idempotency_key).not.toBe(recorded[1]?.idempotency_key)
    expect(await balanceOf(sql(), PLATFORM_EXPENSE_RECONCILIATION, 'USDC')).toBe(-(firstDelta + second))
    expect(alerts()).toHaveLength(alertsBefore + 1)
    expect(await enforce()).toMatchObject({ clean: 2, stopped: 0 })
  })

  it('the ops CLI proposes clearing the stop, a second operator approves, stop_cleared in one transaction; again a no-op', async () => {
    const env = stack.ctx.env
    const pw = await makeOperators(stack.ctx.ownerUrl, [
      { name: 'otto', role: 'operator' },
      { name: 'alice', role: 'approver' },
    ])
    const proposed = await runOpsCli(
      'clear-stop.ts',
      [c.ledgerId, '--reason', 'injected in a test', '--operator', 'otto'],
      env,
      `${pw.otto}\n`,
    )
    expect(proposed.code, proposed.text).toBe(0)
    expect(proposed.out).toMatchObject({
      proposal: { action: 'subaccount_stop_clear', status: 'open' },
      existing: false,
    })
    // nothing moved on one operator's word
    expect(await stoppedAt(c)).not.toBeNull()
    // a wrong password is refused, whoever it names
    const forged = await runOpsCli(
      'proposals.ts',
      [proposed.out.proposal.id, '--approve', '--operator', 'alice'],
      env,
      'guess\n',
    )
    expect([forged.code, forged.out]).toEqual([1, { error: 'SIGN_IN_REJECTED', message: 'wrong name or password' }])
    const approved = await runOpsCli(
      'proposals.ts',
      [proposed.out.proposal.id, '--approve', '--operator', 'alice'],
      env,
      `${pw.alice}\n`,
    )
    expect(approved.code, approved.text).toBe(0)
    expect(approved.out).toMatchObject({ executed: true, proposal: { status: 'executed' } })
    expect(approved.out.proposal.outcome.result.idempotencyKey).toMatch(
      new RegExp(`^stop_cleared:${c.ledgerId}:[0-9]+$`),
    )
    expect(await stoppedAt(c)).toBeNull()
    expect(await isTradingStopped(sql(), c.rowId)).toBe(false)
    const cleared = await events(c, ['stop_cleared'])
    expect(cleared).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ reason: 'injected in a test', userId: c.userId }) }),
    ])
    // by the row id this time, straight through the function the approval ran
    const again = await clearStop(
      { sql: sql(), clock: systemClock },
      { subaccountRowId: c.rowId, reason: 'again', actor: 'otto' },
    )
    expect(again).toEqual({ cleared: false, subaccountRowId: c.rowId })
    expect(await events(c, ['stop_cleared'])).toHaveLength(1)
  }, 120_000)

  it('a subaccount with a transfer in flight is not compared', async () => {
    await shift(d, '-1')
    await sql()`
      insert into subaccount_transfers (user_id, subaccount_id, kind, state, currency, amount)
      values (${d.userId}, ${d.rowId}, 'fund', 'submitted', 'USDC', 1000000)`
    const before = await eventCount()
    expect(await enforce()).toMatchObject({ inFlight: 1, clean: 1, stopped: 0 })
    expect(await eventCount()).toBe(before)
    await sql()`update subaccount_transfers set state = 'failed' where subaccount_id = ${d.rowId} and state = 'submitted'`
    expect(await enforce()).toMatchObject({ inFlight: 0, stopped: 1 })
    const [adjustment] = await reconcileEvents(d)
    const delta = BigInt(String(adjustment?.payload.delta))
    expect(delta + 1_000_000n).toBeGreaterThanOrEqual(-2n)
    expect(delta + 1_000_000n).toBeLessThanOrEqual(2n)
  })

  it('the cycle lock: a second run waits for the first; a run held out past its wait skips; fast ticks step aside for a waiting one', async () => {
    const [x, y] = await Promise.all([observe(), observe()])
    expect([x.ran, y.ran]).toEqual([true, true])
    const skipped = await withCycleLock(stack.redis, async () => ({
      reconcile: await runReconcile(stack.deps, reconcileSources, silent, { mode: 'observe', lockWaitMs: 200 }),
      accruals: await runAccruals(stack.deps, silent, { lockWaitMs: 200 }),
    }))
    expect(skipped).toMatchObject({ ran: true, value: { reconcile: { ran: false }, accruals: { ran: false } } })
    // a fast tick holds the lock; reconciliation waits for it and raises the queued flag
    const holder = await tryLock(stack.redis, EXCHANGE_CYCLE_LOCK, 60_000)
    const waiting = runReconcile(stack.deps, reconcileSources, silent, { mode: 'observe', lockWaitMs: 10_000 })
    for (let i = 0; i < 100 && (await stack.redis.exists(`${EXCHANGE_CYCLE_LOCK}:queued`)) === 0; i++)
      await new Promise((r) => setTimeout(r, 20))
    await holder?.release()
    // the next fast tick does not take the lock from the waiting reconciliation
    expect(await withCycleLock(stack.redis, async () => 'fast')).toEqual({ ran: false })
    expect((await waiting).ran).toBe(true)
    expect(await stack.redis.exists(`${EXCHANGE_CYCLE_LOCK}:queued`)).toBe(0)
  })
  const fundingId = () => stack.deps.config.exchange.fundingSubaccountId as number
  const fundingUsdcE18 = async () =>
    toE18(
      (await stack.deps.exchange.getSubaccount(fundingId())).collaterals.find((x) => x.asset_name === 'USDC')?.amount ??
        '0',
    )
  const platformEvents = () =>
    sql()<{ type: string; idempotency_key: string; payload: Record<string, unknown> }[]>`
      select type, idempotency_key, payload from ledger_events
      where user_id is null and type = 'reconciliation_adjustment' order by recorded_at`

  it('a funding from the funding subaccount that landed but is not settled yet is in flight, not a divergence', async () => {
    // the exchange moved 5 USDC to d; the row is accepted, its subaccount_funded not recorded yet
    const tx = await stack.deps.exchange.deposit({ subaccount_id: d.exchangeId, asset_name: 'USDC', amount: '5' })
    await sql()`
        insert into subaccount_transfers (user_id, subaccount_id, kind, state, currency, amount, method, transaction_id)
        values (${d.userId}, ${d.rowId}, 'fund', 'accepted', 'USDC', 5000000, 'deposit', ${tx.transaction_id})`
    const s = await enforce()
    expect(s).toMatchObject({ inFlight: 1, errors: 0, fundingSubaccount: 'clean' })
    expect(await platformEvents()).toEqual([])
    // settled: the row funded and its event, as the funding tick records them; still clean
    await sql()`update subaccount_transfers set state = 'funded' where transaction_id = ${tx.transaction_id}`
    await appendBatch(sql(), [
      {
        type: 'deposit_detected',
        payload: {
          userId: d.userId,
          chain: 'base',
          txHash: `0x${'ab'.repeat(32)}`,
          logIndex: 0,
          currency: 'USDC',
          amount: 5_000_000n,
        },
        occurredAt: new Date(stack.sim.control.nowMs()),
      },
      {
        type: 'subaccount_funded',
        payload: {
          userId: d.userId,
          subaccountId: d.ledgerId,
          transactionId: tx.transaction_id,
          currency: 'USDC',
          amount: 5_000_000n,
        },
        occurredAt: new Date(stack.sim.control.nowMs()),
      },
    ])
    expect(await enforce()).toMatchObject({ inFlight: 0, errors: 0, fundingSubaccount: 'clean' })
    expect(await platformEvents()).toEqual([])
  })

  it('a bridge deposit credited at the exchange before its `bridged` is journaled is in flight for an hour, then a divergence until journaled', async () => {
    const txHash = `0x${'cd'.repeat(32)}`
    const [outbox] = await sql()<{ id: string }[]>`
        insert into outbound_txs (chain, purpose, ref_id, step, from_address, to_address, token, amount, nonce, raw_tx,
          tx_hash, state, block_number)
        values ('ethereum', 'bridge', ${randomUUID()}, 1, ${`0x${'11'.repeat(20)}`}, ${`0x${'22'.repeat(20)}`}, 'USDC',
          300000000, 1, '0x', ${txHash}, 'confirmed', 1)
        returning id`
    stack.sim.control.depositL1({
      owner: stack.deps.config.exchange.walletAddress,
      asset: 'USDC',
      amount: '300',
      subaccountId: fundingId(),
    })
    expect(await observe()).toMatchObject({ fundingSubaccount: 'clean' })
    // an hour later it is no longer in flight: credited and never journaled
    await sql()`update outbound_txs set created_at = now() - interval '2 hours' where id = ${outbox?.id ?? ''}`
    const [gap, ...others] = await findFundingDivergences(
      stack.deps,
      reconcileSources,
      fundingId(),
      { epsilon: '0.01', nowMs: stack.sim.control.nowMs() },
      silent,
    )
    expect(others).toEqual([])
    expect(gap).toMatchObject({ currency: 'USDC', low: 0n, high: 0n })
    const off = (gap?.delta ?? 0n) - 300_000_000n
    expect(off >= -2n && off <= 2n).toBe(true)
    // the bridge tick journals it: explained
    await appendBatch(sql(), [
      {
        type: 'bridged',
        payload: {
          fromChain: 'ethereum',
          toChain: 'derive',
          txHash,
          currency: 'USDC',
          amount: 300_000_000n,
          feeAmount: 0n,
        },
        occurredAt: new Date(stack.sim.control.nowMs()),
      },
    ])
    expect(await observe()).toMatchObject({ fundingSubaccount: 'clean' })
  })

  it("money taken from the funding subaccount behind the service's back alerts, shows in the drift, and enforce adjusts the platform's exchange funds without a stop", async () => {
    const taken = 250_000_000n // 250 USDC
    stack.sim.control.setBalance(fundingId(), 'USDC', fromE18((await fundingUsdcE18()) - taken * 10n ** 12n))
    const alertsBefore = alerts().length
    const before = await eventCount()
    const observed = await observe()
    expect(observed.fundingSubaccount).toBe('observed')
    expect(alerts()).toHaveLength(alertsBefore + 1)
    expect(alerts().at(-1)).toContain('funding subaccount diverges (observe mode: nothing recorded)')
    expect(alerts().at(-1)).toContain(`fundingSubaccount: ${fundingId()}`)
    expect(await eventCount()).toBe(before)
    expect(Math.abs(Number((await drift()).USDC) - 250)).toBeLessThanOrEqual(0.000002)

    const hotBefore = await balanceOf(sql(), platformHot(EXCHANGE_CHAIN), 'USDC')
    const writtenOffBefore = await balanceOf(sql(), PLATFORM_EXPENSE_RECONCILIATION, 'USDC')
    const stoppedBefore = await sql()`select id from subaccounts where stopped_at is not null`
    const bucket = minuteBucket(new Date(stack.sim.control.nowMs()))
    const enforced = await enforce()
    expect(enforced).toMatchObject({ fundingSubaccount: 'adjusted', errors: 0 })
    const [adjustment, ...more] = await platformEvents()
    expect(more).toEqual([])
    const delta = BigInt(String(adjustment?.payload.delta))
    // the amount taken, give or take the half-unit roundings of the funding subaccount's running hours
    expect(delta + taken).toBeGreaterThanOrEqual(-2n)
    expect(delta + taken).toBeLessThanOrEqual(2n)
    expect(adjustment).toEqual({
      type: 'reconciliation_adjustment',
      idempotency_key: reconcileAdjustmentKey({
        subaccountId: String(fundingId()),
        account: platformHot(EXCHANGE_CHAIN),
        bucket,
        delta,
      }),
      payload: { subaccountId: String(fundingId()), currency: 'USDC', bucket, delta: String(delta) },
    })
    expect(await balanceOf(sql(), platformHot(EXCHANGE_CHAIN), 'USDC')).toBe(hotBefore + delta)
    expect(await balanceOf(sql(), PLATFORM_EXPENSE_RECONCILIATION, 'USDC')).toBe(writtenOffBefore - delta)
    expect(alerts().at(-1)).toContain('funding subaccount adjusted (enforce mode)')
    // no user's subaccount is stopped for the platform's loss
    expect(await sql()`select id from subaccounts where stopped_at is not null`).toEqual(stoppedBefore)
    // the journal mirrors the exchange again
    expect(await enforce()).toMatchObject({ fundingSubaccount: 'clean' })
  })
})
