/**
 * Balances against postings (packages/ledger/src/balance-check.ts, docs/solvency.md): a check
 * finds a balance changed behind the journal's back, full or incremental; appends running while
 * checks run never make a difference appear (the watermark counts each event once); and the
 * application's role cannot make one to begin with (journal.test.ts).
 */
import { randomUUID } from 'node:crypto'
import { integrationContext } from '@wh/testkit'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { append, appendBatch, checkBalances, type EventInput, listBalanceChecks, userTransit } from '../src/index'
import { txHash } from './helpers'

let n = 10_000
const deposit = (userId: string, amount = 1_000n): EventInput => ({
  type: 'deposit_detected',
  payload: { userId, chain: 'base', txHash: txHash(++n), logIndex: 0, currency: 'USDC', amount },
  occurredAt: new Date('2026-02-01T00:00:00Z'),
})
const fee = (platformFee: bigint): EventInput => ({
  type: 'gas_spent',
  payload: { chain: 'base', txHash: txHash(++n), slot: 0, currency: 'ETH', amount: platformFee },
  occurredAt: new Date('2026-02-01T00:00:00Z'),
})

describe('balances against postings', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let owner: postgres.Sql
  beforeAll(async () => {
    ctx = await integrationContext()
    owner = postgres(ctx.ownerUrl, { max: 1, onnotice: () => {} })
  })
  afterAll(async () => {
    await owner?.end()
    await ctx?.database.close()
  })

  it('the first check is full; the next ones count only the events written since, and agree', async () => {
    const { sql } = ctx.database
    await appendBatch(sql, [deposit(randomUUID()), deposit(randomUUID()), fee(7n)])
    const first = await checkBalances(sql)
    expect(first).toMatchObject({ kind: 'full', differenceCount: 0, differences: [] })
    expect(first.events).toBeGreaterThanOrEqual(3)
    expect(first.accounts).toBeGreaterThanOrEqual(5)
    await appendBatch(sql, [deposit(randomUUID()), deposit(randomUUID())])
    const second = await checkBalances(sql)
    expect(second).toMatchObject({ kind: 'incremental', differenceCount: 0 })
    // the two new events, and nothing before the first check's watermark
    expect(second.events).toBe(2)
    const third = await checkBalances(sql)
    expect(third).toMatchObject({ kind: 'incremental', events: 0, differenceCount: 0 })
  })

  it('a balance changed behind the journal (as the owner: the application may not) is found, incrementally and in full', async () => {
    const { sql } = ctx.database
    const user = randomUUID()
    await append(sql, deposit(user, 1_000_000n))
    await checkBalances(sql)
    await owner`update ledger_balances set balance = balance + 1000000000000 where account = ${userTransit(user)}`
    const found = await checkBalances(sql, { full: false })
    expect(found).toMatchObject({ kind: 'incremental', differenceCount: 1 })
    expect(found.differences).toEqual([
      { account: userTransit(user), currency: 'USDC', balance: 1_000_001_000_000n, postings: 1_000_000n },
    ])
    const full = await checkBalances(sql, { full: true })
    expect(full).toMatchObject({ kind: 'full', differenceCount: 1 })
    const [stored] = await listBalanceChecks(sql)
    expect(stored).toMatchObject({
      id: full.id,
      kind: 'full',
      differenceCount: 1,
      differences: [{ account: userTransit(user), currency: 'USDC', balance: '1000001000000', postings: '1000000' }],
    })
    // put back, and the books agree again
    await owner`update ledger_balances set balance = balance - 1000000000000 where account = ${userTransit(user)}`
    expect(await checkBalances(sql, { full: false })).toMatchObject({ differenceCount: 0 })
  })

  it('appends committing while checks run are counted exactly once: no check sees a difference', async () => {
    const { sql } = ctx.database
    await checkBalances(sql, { full: true })
    let appending = true
    const writers = Array.from({ length: 4 }, async () => {
      let written = 0
      while (appending || written < 20) {
        // some in a transaction that holds its events a while before it commits
        if (written % 3 === 0)
          await sql.begin(async (tx) => {
            await append(tx, deposit(randomUUID(), 5n))
            await tx`select pg_sleep(0.01)`
          })
        else await append(sql, deposit(randomUUID(), 5n))
        written++
      }
      return written
    })
    const checks = []
    for (let i = 0; i < 15; i++) checks.push(await checkBalances(sql, { full: i % 5 === 4 }))
    appending = false
    const written = (await Promise.all(writers)).reduce((a, b) => a + b, 0)
    checks.push(await checkBalances(sql, { full: false }))
    for (const c of checks) expect(c.differences, `check ${c.id} (${c.kind})`).toEqual([])
    // the incremental checks together summed every event written meanwhile
    expect(written).toBeGreaterThanOrEqual(80)
    expect((await checkBalances(sql, { full: true })).differenceCount).toBe(0)
  })
})
