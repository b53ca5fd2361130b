/**
 * The platform's capital booked once (docs/ledger.md "Platform capital"): the capital CLI, as an
 * approver runs it, writes a movement's reference in one spelling, so the same transaction typed
 * again with its hash as an explorer shows it changes nothing; and the event's time is the clock's.
 */
import { ManualClock } from '@wh/core'
import { balanceOf, platformHot } from '@wh/ledger'
import { recordCapital } from '@wh/ops'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeOperators, runOpsCli } from './fixtures/operators'

describe('capital, booked once under one reference', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  beforeAll(async () => {
    ctx = await integrationContext()
  })
  afterAll(() => ctx?.database.close())

  it('the same transaction typed in another case through the CLI is a duplicate, not a second booking', async () => {
    const pw = await makeOperators(ctx.ownerUrl, [{ name: 'alice', role: 'approver' }])
    const hash = `0x${'cd'.repeat(32)}`
    const run = (reference: string) =>
      runOpsCli(
        'capital.ts',
        [
          '--contribute',
          '--holding',
          'hot',
          '--chain',
          'ethereum',
          '--currency',
          'USDC',
          '--amount',
          '250',
          '--reference',
          reference,
          '--reason',
          'float for the week',
          '--operator',
          'alice',
        ],
        ctx.env,
        `${pw.alice}\n`,
      )
    const first = await run(`tx:1:${hash}`)
    expect(first.code, first.text).toBe(0)
    expect(first.out).toMatchObject({ duplicate: false, idempotencyKey: `capital_contributed:tx:1:${hash}` })
    const again = await run(`TX:1:0x${'CD'.repeat(32)}`)
    expect(again.code, again.text).toBe(0)
    expect(again.out).toMatchObject({ duplicate: true, idempotencyKey: `capital_contributed:tx:1:${hash}` })
    expect(await balanceOf(ctx.database.sql, platformHot('ethereum'), 'USDC')).toBe(250_000_000n)
    // not a transaction or a treasury reference: refused as bad usage, nothing booked
    const loose = await run('wire of monday')
    expect(loose.code).toBe(2)
    expect(await balanceOf(ctx.database.sql, platformHot('ethereum'), 'USDC')).toBe(250_000_000n)
  }, 120_000)

  it("the event's time is the clock's", async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 3, 4, 5, 6))
    const r = await recordCapital(ctx.database.sql, clock, {
      direction: 'withdrawn',
      holding: 'gas',
      chain: 'base',
      currency: 'ETH',
      amount: 5n,
      reference: { treasury: 'Gas-Return-7' },
      reason: 'gas float returned',
      actor: 'alice',
    })
    expect(r).toMatchObject({ duplicate: false, idempotencyKey: 'capital_withdrawn:treasury:gas-return-7' })
    const [row] = await ctx.database.sql<{ occurred_at: Date }[]>`
      select occurred_at from ledger_events where id = ${r.eventId}`
    expect(row?.occurred_at.toISOString()).toBe('2026-03-03T04:05:06.000Z')
  })
})
