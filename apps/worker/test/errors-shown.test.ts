/**
 * An error that stops work shows on its row as a reason and in the log as text (docs/architecture.md
 * "Errors"): the placing tick's failed read of a subaccount's fills puts its reason on each position it
 * holds back, and reconciliation's failure is logged with the exchange's message, never "[object Object]".
 * Against the simulator over HTTP, the worker's own pino logger writing into the test.
 */
import { randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { RPC } from '@wh/exchange'
import { strategyEventsOn } from '@wh/market'
import { runFunding, runReconcile } from '@wh/subaccounts'
import { type PlaceDeps, requestPosition, runPlacing, tradingProfile } from '@wh/trading'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reconcileSources } from '../src/jobs/exchange/ticks'
import { workerLogger } from '../src/logger'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const START = Date.UTC(2026, 10, 23, 9, 0, 0)

/** The worker's logger writing JSON lines into an array. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = []
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l))
      done()
    },
  })
  return { log: workerLogger('info', sink), lines }
}

describe('errors that stop work are shown, on the row and in the log', () => {
  let stack: ExchangeStack
  beforeAll(async () => {
    stack = await startExchangeStack({ sim: { startMs: START }, env: { TRADING_PROFILE: 'balanced' } })
    stack.sim.control.setPrice('ETH', '3000')
  })
  afterAll(async () => stack?.close())

  it("the placing tick: a subaccount's fills unreadable, each of its positions says why, and the log says it too", async () => {
    const { sql, deps } = stack
    const { log, lines } = capturedLog()
    const place: PlaceDeps = {
      sql,
      exchange: deps.exchange,
      redis: stack.redis,
      clock: deps.clock,
      platformFeeRate: '0.1',
      profile: tradingProfile('balanced'),
      strategyEvents: strategyEventsOn(stack.redis),
      log,
    }
    const userId = randomUUID()
    await creditDeposit(sql, userId, USDC(10_000), { at: new Date(stack.sim.control.nowMs()) })
    const pos = await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: USDC(5_000) })
    for (let i = 0; i < 6; i++) {
      await runFunding({ ...deps, redis: stack.redis, log: silent })
      await runPlacing(place)
    }
    const state = async () =>
      (
        await sql<{ state: string; reason: string | null }[]>`
      select state, reason from positions where id = ${pos.id}`
      )[0]
    expect((await state())?.state).toBe('placing')
    // the exchange refuses the fills read (a key out of scope, not retried)
    stack.sim.control.failNext({ method: 'private/get_trade_history', code: RPC.UNAUTHORIZED_KEY_SCOPE })
    const run = await runPlacing(place)
    expect(run.steps.error).toBe(1)
    const reason = 'the fills could not be read: private/get_trade_history: Injected failure'
    expect(await state()).toEqual({ state: 'placing', reason })
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: reason,
        positions: [pos.id],
        err: expect.objectContaining({ message: 'private/get_trade_history: Injected failure', code: 'EXCHANGE_AUTH' }),
      }),
    )
  })

  it("reconciliation's failure is logged with the exchange's message, not [object Object]", async () => {
    const { log, lines } = capturedLog()
    stack.sim.control.failNext({ method: 'private/get_subaccount', code: RPC.UNAUTHORIZED_KEY_SCOPE, count: 10 })
    const r = await runReconcile({ ...stack.deps, redis: stack.redis }, reconcileSources, log)
    expect(r.fundingSubaccount).toBe('error')
    const failed = lines.find((l) => l.msg === 'reconciliation failed for the funding subaccount')
    expect(failed?.err).toMatchObject({ message: 'private/get_subaccount: Injected failure', code: 'EXCHANGE_AUTH' })
    expect(JSON.stringify(lines)).not.toContain('[object Object]')
    stack.sim.engine.failures.length = 0
  })
})
