/**
 * The sign-in's nonce redemptions group-commit (apps/api/src/routes/auth/nonces.ts): at most
 * MAX_REDEMPTIONS_IN_FLIGHT statements at once, and what arrives while they are shares the next one.
 * Deterministic: the first statements are held by a row lock another transaction keeps, so they are
 * in flight for as long as the test says.
 */
import { integrationContext } from '@wh/testkit'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueNonce, MAX_REDEMPTIONS_IN_FLIGHT, NonceRedeemer } from '../src/routes/auth/nonces'

const turn = () => new Promise((r) => setImmediate(r))

describe('nonce redemptions share statements while others are in flight', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  beforeAll(async () => {
    ctx = await integrationContext()
  })
  afterAll(async () => {
    await ctx?.database.close()
  })

  it('two statements held in flight; three redemptions in three later turns go in one statement', async () => {
    const { sql } = ctx.database
    const now = new Date()
    const nonces = await Promise.all(Array.from({ length: 5 }, () => issueNonce(sql, now)))
    const [a, b, c, d, e] = nonces as [string, string, string, string, string]
    let statements = 0
    const counted = ((...args: Parameters<typeof sql>) => {
      statements++
      return (sql as unknown as (...x: unknown[]) => unknown)(...args)
    }) as unknown as typeof sql
    const redeemer = new NonceRedeemer(counted, () => now)
    const wallet = '0x00000000000000000000000000000000000000aa'
    expect(MAX_REDEMPTIONS_IN_FLIGHT).toBe(2)

    // another transaction locks a's and b's rows: their redemptions wait for it, in flight
    const locker = postgres(ctx.ownerUrl, { max: 1, onnotice: () => {} })
    let release: () => void = () => {}
    const released = new Promise<void>((r) => {
      release = r
    })
    let locked: () => void = () => {}
    const isLocked = new Promise<void>((r) => {
      locked = r
    })
    const holder = locker.begin(async (tx) => {
      await tx`select 1 from siwe_nonces where nonce in (${a}, ${b}) for update`
      locked()
      await released
    })
    try {
      await isLocked
      const first = redeemer.redeem(a, wallet)
      await turn()
      const second = redeemer.redeem(b, wallet)
      await turn()
      expect(statements).toBe(2)
      const later: Promise<unknown>[] = []
      for (const n of [c, d, e]) {
        later.push(redeemer.redeem(n, wallet))
        await turn()
      }
      // nothing sent while both are in flight
      expect(statements).toBe(2)
      release()
      await holder
      const results = await Promise.all([first, second, ...later])
      expect(results.map((r) => (r as { redeemed: boolean }).redeemed)).toEqual([true, true, true, true, true])
      expect(statements).toBe(3)
    } finally {
      release()
      await holder.catch(() => {})
      await locker.end()
    }
  })
})
