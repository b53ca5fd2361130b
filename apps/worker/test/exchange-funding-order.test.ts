/**
 * The funding run after a crash on Derive v3, where every funding is a transfer_spot signed by the
 * platform's one funding subaccount and its nonces must increase (docs/exchange-v3.md "Movements on
 * v3"). A worker that died between storing a funding's signature and sending it leaves the row
 * `submitted`; the next run must send that stored signature before it signs any new one, else the
 * exchange refuses it for its nonce and the row waits out its signature and grace (20 min) before
 * failing. The fault suite's chaos test met it (a kill at the funding's `stored` checkpoint) when
 * the restarted run signed other users' fundings first.
 *
 * Made certain here: the crashed row is the newest, behind FUND_CONCURRENCY older fundings (backed
 * off by an earlier exchange error), so a run that worked in age order would reach it only after
 * one of them had been signed and sent.
 */
import { randomUUID } from 'node:crypto'
import { reserveFunding } from '@wh/ledger'
import { deferTransfer, FUND_CONCURRENCY, fundOpenTransfers } from '@wh/subaccounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import type { WorkerDeps } from '../src/ticks'
import { creditDeposit, type ExchangeStack, silent, startExchangeStack } from './fixtures/exchange-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n

describe('funding on v3 after a crash between storing a signature and sending it', () => {
  let stack: ExchangeStack

  beforeAll(async () => {
    // the wall clock: nanosecond nonces of two processes (the crashed one, the restarted one) follow real time
    stack = await startExchangeStack({ sim: { clock: 'wall' } })
  })
  afterAll(async () => stack?.close())

  /** A worker process's deps, as main.ts builds them: its own exchange client (a restart is a new one). */
  const processDeps = (): WorkerDeps & { log: typeof silent } => ({
    ...buildWorkerDeps(
      stack.ctx.config,
      { sql: stack.sql, redis: stack.redis, log: silent },
      { clock: { now: () => new Date(stack.sim.control.nowMs()) } },
    ),
    alerter: stack.deps.alerter,
    log: silent,
  })

  async function reserved(): Promise<string> {
    const userId = randomUUID()
    await creditDeposit(stack.sql, userId, USDC(100), { at: new Date(stack.sim.control.nowMs()) })
    return (await reserveFunding(stack.sql, { userId, asset: 'ETH', currency: 'USDC', amount: USDC(10) })).transferId
  }
  const rowOf = async (id: string) =>
    (
      await stack.sql<{ state: string; nonce: string | null; transaction_id: string | null }[]>`
        select state, nonce::text as nonce, transaction_id from subaccount_transfers where id = ${id}`
    )[0]

  it('sends the stored signature first: every funding lands once, the crashed one with the nonce it was signed with', async () => {
    // older fundings an exchange error backed off, enough to fill every slot of a run
    const older: string[] = []
    for (let i = 0; i < FUND_CONCURRENCY; i++) older.push(await reserved())
    for (const id of older) await deferTransfer(stack.sql, { id, attempts: 0 }, 'EXCHANGE_UNAVAILABLE')

    // a worker signs and stores the newest one, and dies before sending it
    const crashed = await reserved()
    const dying = await fundOpenTransfers(processDeps(), {
      afterStored: async () => {
        throw new Error('SIGKILL')
      },
    })
    expect(dying).toMatchObject({ funded: 0, pending: 1 })
    const stored = await rowOf(crashed)
    expect(stored?.state).toBe('submitted')

    // later: every row is due again, and a restarted worker (a fresh client) runs the funding
    await stack.sql`update subaccount_transfers set next_attempt_at = now()`
    const restarted = await fundOpenTransfers(processDeps())
    expect(restarted).toMatchObject({ funded: FUND_CONCURRENCY + 1, failed: 0, pending: 0, held: 0 })

    const after = await rowOf(crashed)
    expect(after).toMatchObject({ state: 'funded', nonce: stored?.nonce })
    const rows = await stack.sql<{ state: string; transaction_id: string }[]>`
      select state, transaction_id from subaccount_transfers`
    expect(rows.map((r) => r.state)).toEqual(rows.map(() => 'funded'))
    expect(new Set(rows.map((r) => r.transaction_id)).size).toBe(FUND_CONCURRENCY + 1)
    const [events] = await stack.sql<{ n: number }[]>`
      select count(*)::int as n from ledger_events where type = 'subaccount_funded'`
    expect(events?.n).toBe(FUND_CONCURRENCY + 1)
    expect(stack.alerts).toEqual([])
  })
})
