/**
 * endPosition, the one call behind DELETE /positions/:id (docs/trading.md "Position states",
 * "Buying a leg back", "The wheel"): what the id names decides the action, and the tag says which
 * was taken. Real Postgres (a migrated database per file); the buy-back's price source is the
 * route's own seam (a PriceReader), here a fixed ticker, since a quote is an input of the call.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import { append, freeBalance } from '@wh/ledger'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { endPosition } from '../src/position-end'
import { type PriceReader, requestPosition } from '../src/positions'
import { startWheel } from '../src/wheel'

const USDC = (n: number) => BigInt(n) * 1_000_000n
const E18 = 10n ** 18n
const NOW = new Date('2026-03-02T09:00:00Z')
const clock: Clock = { now: () => NOW }
const ask =
  (e18: bigint): PriceReader =>
  async () => ({ askE18: e18, markE18: e18, tickE18: E18 / 10_000n })

describe('endPosition (DELETE /positions/:id)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let sql: Sql
  let priceReads: number
  const prices: PriceReader = async (instrument) => {
    priceReads++
    return ask(E18 / 20n)(instrument)
  }
  const end = (userId: string, id: string, mode: 'now' | 'after_cycle' = 'after_cycle') =>
    endPosition(sql, userId, id, { prices, mode, clock })

  beforeAll(async () => {
    ctx = await integrationContext()
    sql = ctx.database.sql
  })
  afterAll(async () => ctx?.database.close())

  async function funded(amount: bigint): Promise<string> {
    const userId = randomUUID()
    await append(sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount,
      },
      occurredAt: NOW,
    })
    return userId
  }
  const rowOf = async (id: string) =>
    (
      await sql<{ state: string; cancel_requested_at: Date | null; close_limit_e18: string | null }[]>`
        select state, cancel_requested_at, close_limit_e18::text from positions where id = ${id}`
    )[0]

  it('a leg not at the exchange: cancelled now, its reserve released; again: 409 POSITION_FINISHED', async () => {
    const userId = await funded(USDC(1000))
    const p = await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: USDC(400) })
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(600))
    priceReads = 0
    expect(await end(userId, p.id)).toEqual({ kind: 'cancelled', cancel: { outcome: 'cancelled', state: 'cancelled' } })
    expect((await rowOf(p.id))?.state).toBe('cancelled')
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(1000))
    await expect(end(userId, p.id)).rejects.toMatchObject({ code: 'POSITION_FINISHED', statusCode: 409 })
    expect(priceReads).toBe(0)
  })

  it('a leg placing: its orders are asked to end (cancel_requested), the leg stays placing', async () => {
    const userId = await funded(USDC(1000))
    const p = await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: USDC(100) })
    await sql`update positions set state = 'placing' where id = ${p.id}`
    expect(await end(userId, p.id)).toEqual({
      kind: 'cancel_requested',
      cancel: { outcome: 'cancel_requested', state: 'placing' },
    })
    const row = await rowOf(p.id)
    expect(row?.state).toBe('placing')
    expect(row?.cancel_requested_at).not.toBeNull()
  })

  it('a sold leg: quoted from the price reader and moved to closing, nothing cancelled', async () => {
    const userId = await funded(USDC(1000))
    const p = await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: USDC(500) })
    const expirySec = NOW.getTime() / 1000 + 3 * 86_400
    const filled = (3n * E18) / 2n
    await sql`update positions set state = 'open', instrument = 'ETH-20260305-2000-P', strike_e18 = ${(2000n * E18).toString()},
      expiry_sec = ${expirySec}, size_e18 = ${filled.toString()}, filled_e18 = ${filled.toString()} where id = ${p.id}`
    priceReads = 0
    const r = await end(userId, p.id)
    if (r.kind !== 'closing') throw new Error(`expected closing, got ${r.kind}`)
    expect(r.close).toMatchObject({ outcome: 'close_requested', state: 'closing' })
    expect(r.close.quote).toMatchObject({ priceE18: E18 / 20n, amountE18: filled })
    expect(r.close.quote.limitE18).toBeGreaterThan(E18 / 20n)
    expect(priceReads).toBe(1)
    expect(await rowOf(p.id)).toMatchObject({ state: 'closing', close_limit_e18: r.close.quote.limitE18.toString() })
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(500))
  })

  it('a wheel: stopped with mode now (its unplaced leg cancelled), stopping after the cycle', async () => {
    const now = await funded(USDC(1000))
    const a = await startWheel(sql, { userId: now, asset: 'ETH', amount: USDC(500) })
    const stopped = await end(now, a.wheelId, 'now')
    expect(stopped).toMatchObject({ kind: 'stopped', stop: { state: 'stopped', stopMode: 'now' } })
    expect((await rowOf(a.leg.id))?.state).toBe('cancelled')

    const later = await funded(USDC(1000))
    const b = await startWheel(sql, { userId: later, asset: 'ETH', amount: USDC(500) })
    const stopping = await end(later, b.wheelId)
    expect(stopping).toMatchObject({ kind: 'stopping', stop: { state: 'stopping', stopMode: 'after_cycle' } })
    expect((await rowOf(b.leg.id))?.state).toBe(b.leg.state)
  })

  it("another user's leg or wheel, or an unknown id: 404, nothing changed", async () => {
    const owner = await funded(USDC(1000))
    const p = await requestPosition(sql, { userId: owner, asset: 'ETH', side: 'put', amount: USDC(100) })
    const w = await startWheel(sql, { userId: owner, asset: 'BTC', amount: USDC(100) })
    const stranger = await funded(USDC(10))
    for (const id of [p.id, w.wheelId, randomUUID()])
      await expect(end(stranger, id, 'now')).rejects.toMatchObject({ code: 'NOT_FOUND', statusCode: 404 })
    expect((await rowOf(p.id))?.state).toBe(p.state)
    const [wheel] = await sql<{ state: string }[]>`select state from wheels where id = ${w.wheelId}`
    expect(wheel?.state).toBe('running')
  })
})
