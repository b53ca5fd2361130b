import { randomUUID } from 'node:crypto'
import { type DecisionKind, type DecisionReason, recordDecision, type WheelDecisionItem } from '@wh/trading'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, fundedUser, startApi } from './support'

/** GET /wheels/{id}/decisions (docs/trading.md "Why: the decision log"): paging, ownership, errors. */
describe('wheel decisions', () => {
  let api: Api
  const sql = () => api.ctx.database.sql

  beforeAll(async () => {
    api = await startApi()
  })
  afterAll(async () => api?.close())

  /** A signed-in user with a wheel (started through the API with 1,000 USDC deposited). */
  async function wheelOwner(): Promise<{ token: string; userId: string; wheelId: string }> {
    const { token, userId } = await fundedUser(api, 1_000_000_000n)
    const res = await api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: { authorization: `Bearer ${token}` },
      payload: { asset: 'ETH', side: 'wheel', amount: '500' },
    })
    expect(res.statusCode).toBe(202)
    return { token, userId, wheelId: res.json().wheelId }
  }
  const get = (token: string, wheelId: string, qs = '') =>
    api.app.inject({
      method: 'GET',
      url: `/wheels/${wheelId}/decisions${qs}`,
      headers: { authorization: `Bearer ${token}` },
    })
  const STEPS: [DecisionKind, DecisionReason][] = [
    ['waiting', 'yield_below_floor'],
    ['expiry_chosen', 'nearest_expiry_in_window'],
    ['strike_chosen', 'nearest_target_delta'],
  ]

  it('pages a wheel’s decisions newest first with a message each; a repeated decision is one row', async () => {
    const { token, userId, wheelId } = await wheelOwner()
    const at = new Date('2026-11-23T09:00:00Z')
    for (let i = 0; i < 25; i++) {
      const [kind, reason] = STEPS[i % 3] as [DecisionKind, DecisionReason]
      const d = { wheelId, userId, kind, reason, at: new Date(at.getTime() + i * 1000) }
      expect(await recordDecision(sql(), { ...d, facts: { detail: `step ${i}` } })).toBeDefined()
      // the same kind and reason again: not a new decision
      expect(await recordDecision(sql(), d)).toBeUndefined()
    }
    const seen: WheelDecisionItem[] = []
    let cursor: string | null = null
    const sizes: number[] = []
    do {
      const res = await get(token, wheelId, `?limit=10${cursor ? `&cursor=${cursor}` : ''}`)
      expect(res.statusCode).toBe(200)
      const body = res.json() as { decisions: WheelDecisionItem[]; nextCursor: string | null }
      sizes.push(body.decisions.length)
      seen.push(...body.decisions)
      cursor = body.nextCursor
    } while (cursor)
    expect(sizes).toEqual([10, 10, 5])
    expect(seen.map((d) => d.facts.detail)).toEqual(Array.from({ length: 25 }, (_, i) => `step ${24 - i}`))
    expect(new Set(seen.map((d) => d.id)).size).toBe(25)
    expect(seen[0]).toMatchObject({
      kind: 'waiting',
      reason: 'yield_below_floor',
      at: '2026-11-23T09:00:24.000Z',
      positionId: null,
      message: 'Waiting: the premium yields less than the profile minimum.',
    })
    // the default page
    expect((await get(token, wheelId)).json().decisions).toHaveLength(20)
    // history: the service's role may append and read, never change or erase (migration 0020)
    await expect(
      sql()`update wheel_decisions set reason = 'refused' where wheel_id = ${wheelId}`,
    ).rejects.toMatchObject({
      code: '42501',
    })
    await expect(sql()`delete from wheel_decisions where wheel_id = ${wheelId}`).rejects.toMatchObject({
      code: '42501',
    })
  })

  it('another user’s wheel, or none, is 404; a foreign cursor or limit is 400; no token is 401', async () => {
    const a = await wheelOwner()
    const b = await wheelOwner()
    await recordDecision(sql(), {
      wheelId: a.wheelId,
      userId: a.userId,
      kind: 'skipped',
      reason: 'deadline_passed',
      at: new Date(),
    })
    const own = await get(a.token, a.wheelId)
    expect(own.json().decisions.map((d: WheelDecisionItem) => d.message)).toEqual([
      'Skipped: past the 20:00 UTC deadline; the next leg waits for tomorrow.',
    ])
    const foreign = await get(b.token, a.wheelId)
    expect(foreign.statusCode).toBe(404)
    expect(foreign.json()).toMatchObject({ code: 'NOT_FOUND', statusCode: 404 })
    expect((await get(a.token, randomUUID())).statusCode).toBe(404)
    expect((await get(b.token, b.wheelId)).json()).toEqual({ decisions: [], nextCursor: null })
    expect((await get(a.token, 'not-a-uuid')).statusCode).toBe(400)
    const badCursor = await get(a.token, a.wheelId, '?cursor=bm90LW91cnM')
    expect(badCursor.statusCode).toBe(400)
    expect(badCursor.json()).toMatchObject({ code: 'INVALID_CURSOR' })
    expect((await get(a.token, a.wheelId, '?limit=0')).statusCode).toBe(400)
    expect((await get(a.token, a.wheelId, '?limit=101')).statusCode).toBe(400)
    const anonymous = await api.app.inject({ method: 'GET', url: `/wheels/${a.wheelId}/decisions` })
    expect(anonymous.statusCode).toBe(401)
  })
})
