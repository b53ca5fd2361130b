import { randomUUID } from 'node:crypto'
import { integrationContext } from '@wh/testkit'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  append,
  appendBatch,
  type EventInput,
  type EventType,
  InsufficientFreeBalanceError,
  POSTING_RULES,
  type PostingRules,
} from '../src/index'
import { eventArbitrary } from './arbitraries'
import { balancesSnapshot, one, postingsSnapshot } from './helpers'

describe('ledger invariants over random event sequences (fast-check)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  const users = Array.from({ length: 3 }, () => randomUUID())
  beforeAll(async () => {
    ctx = await integrationContext()
  })
  afterAll(() => ctx.database.close())

  /** Appends one by one; returns the accepted events and whether each was a reused key with another payload. */
  async function appendAll(events: readonly EventInput[], rules?: PostingRules): Promise<[EventInput, boolean][]> {
    const accepted: [EventInput, boolean][] = []
    for (const e of events) {
      try {
        const r = await append(ctx.database.sql, e, rules ? { rules } : {})
        accepted.push([e, r.payloadMismatch])
      } catch (err) {
        // an authorizing event over the free balance is refused and writes nothing
        if (!(err instanceof InsufficientFreeBalanceError)) throw err
        expect(e.type).toBe('subaccount_funded')
      }
    }
    return accepted
  }

  it('each balance equals the sum of its postings; each currency sums to zero; re-appending changes nothing', async () => {
    const { sql } = ctx.database
    await fc.assert(
      fc.asyncProperty(fc.array(eventArbitrary(users), { minLength: 1, maxLength: 25 }), async (events) => {
        const accepted = await appendAll(events)
        const balances = await balancesSnapshot(sql)
        expect(balances).toEqual(await postingsSnapshot(sql))
        const perCurrency = await sql<{ currency: string; v: string }[]>`
          select currency, sum(amount) as v from ledger_postings group by currency`
        for (const r of perCurrency) expect(BigInt(r.v)).toBe(0n)
        const { n } = one(await sql<{ n: string }[]>`select count(*) as n from ledger_events`)

        const again = await appendBatch(
          sql,
          accepted.map(([e]) => e),
        )
        expect(again.every((r) => r.duplicate && r.postings.length === 0)).toBe(true)
        // keys are random and may repeat with another payload; the flag must not change on replay
        expect(again.map((r) => r.payloadMismatch)).toEqual(accepted.map(([, mismatch]) => mismatch))
        expect(await balancesSnapshot(sql)).toEqual(balances)
        const { n: after } = one(await sql<{ n: string }[]>`select count(*) as n from ledger_events`)
        expect(after).toBe(n)
      }),
      { numRuns: 25 },
    )
  })

  it('spec 6 rule 1: events whose rule does not exist yet are stored with no postings and move no balance', async () => {
    const { sql } = ctx.database
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArbitrary(users), { minLength: 1, maxLength: 15 }),
        fc.subarray(Object.keys(POSTING_RULES) as EventType[], { minLength: 1 }),
        async (events, withoutRule) => {
          const rules = Object.fromEntries(
            Object.entries(POSTING_RULES).filter(([t]) => !withoutRule.includes(t as EventType)),
          ) as PostingRules
          const ruleless = events.filter((e) => withoutRule.includes(e.type))
          const before = await balancesSnapshot(sql)
          const results = await appendBatch(sql, ruleless, { rules })
          for (const r of results) expect(r.postings).toEqual([])
          expect(await balancesSnapshot(sql)).toEqual(before)
          const ids = results.filter((r) => !r.duplicate).map((r) => r.event.id)
          const { n } = one(
            await sql<{ n: string }[]>`
            select count(*) as n from ledger_postings where event_id = any(${ids}::uuid[])`,
          )
          expect(n).toBe('0')
          const { stored } = one(
            await sql<{ stored: string }[]>`
            select count(*) as stored from ledger_events where id = any(${ids}::uuid[])`,
          )
          expect(Number(stored)).toBe(ids.length)
        },
      ),
      { numRuns: 15 },
    )
  })
})
