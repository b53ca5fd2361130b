import { randomUUID } from 'node:crypto'
import { append, reserveFunding } from '@wh/ledger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, fundedUser, newAccount, signIn, startApi } from './support'

const usdc = (n: number) => BigInt(n) * 1_000_000n

describe('GET /subaccounts and POST /subaccounts/:asset/release (spec 4.2)', () => {
  let api: Api
  let token: string
  let userId: string
  let exchangeId: string
  const sql = () => api.ctx.database.sql
  const post = (url: string, bearer: string | null = token, headers: Record<string, string> = {}) =>
    api.app.inject({
      method: 'POST',
      url,
      headers: { ...headers, ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }) },
    })
  const get = (url: string, bearer: string = token) =>
    api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}` } })

  beforeAll(async () => {
    api = await startApi()
    ;({ token, userId } = await fundedUser(api, usdc(1_000)))
    exchangeId = String(200_000 + Math.floor(Math.random() * 1_000_000))
    // a funded ETH subaccount (as the funding tick leaves it) and a BTC one still pending
    await sql()`insert into subaccounts (user_id, asset, exchange_id) values (${userId}, 'ETH', ${exchangeId})`
    await append(sql(), {
      type: 'subaccount_funded',
      payload: { userId, subaccountId: exchangeId, transactionId: randomUUID(), currency: 'USDC', amount: usdc(400) },
      occurredAt: new Date(),
    })
    await reserveFunding(sql(), { userId, asset: 'BTC', currency: 'USDC', amount: usdc(50) })
  })
  afterAll(() => api.close())

  it("lists the caller's subaccounts with state, journal balances and fundings in flight", async () => {
    const res = await get('/subaccounts')
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({
      items: [
        {
          asset: 'BTC',
          exchangeId: null,
          state: 'pending',
          stopReason: null,
          balances: [],
          pendingFundings: [{ currency: 'USDC', decimals: 6, amount: '50.000000' }],
          openReleases: [],
        },
        {
          asset: 'ETH',
          exchangeId,
          state: 'active',
          stopReason: null,
          balances: [{ currency: 'USDC', decimals: 6, amount: '400.000000' }],
          pendingFundings: [],
          openReleases: [],
        },
      ],
    })
    const other = await signIn(api.app, newAccount())
    expect((await get('/subaccounts', other)).json()).toEqual({ items: [] })
  })

  it('a release answers 202 with its id; a second one while it is open is 409 RELEASE_ALREADY_OPEN', async () => {
    const res = await post('/subaccounts/ETH/release')
    expect(res.statusCode).toBe(202)
    const body = res.json()
    expect(body).toMatchObject({ asset: 'ETH', state: 'requested', reason: null, completedAt: null })
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/)

    const again = await post('/subaccounts/ETH/release')
    expect(again.statusCode).toBe(409)
    expect(again.json()).toEqual({
      statusCode: 409,
      code: 'RELEASE_ALREADY_OPEN',
      error: 'Conflict',
      message: expect.any(String),
      // the open release, for a client to follow
      details: { releaseId: body.id },
    })
    const listed = (await get('/subaccounts')).json().items.find((s: { asset: string }) => s.asset === 'ETH')
    expect(listed.openReleases).toEqual([{ id: body.id, state: 'requested', reason: null, createdAt: body.createdAt }])

    // once it is done, a new release may be requested
    await sql()`update subaccount_releases set state = 'released', completed_at = now() where id = ${body.id}`
    const next = await post('/subaccounts/ETH/release')
    expect(next.statusCode).toBe(202)
    expect(next.json().id).not.toBe(body.id)
    await sql()`update subaccount_releases set state = 'released', completed_at = now() where id = ${next.json().id}`
  })

  it('an Idempotency-Key returns the same release, also after it closed; reused for another asset is 422', async () => {
    const key = `rel-${randomUUID()}`
    const first = await post('/subaccounts/ETH/release', token, { 'idempotency-key': key })
    expect(first.statusCode).toBe(202)
    const second = await post('/subaccounts/ETH/release', token, { 'idempotency-key': key })
    expect(second.statusCode).toBe(202)
    expect(second.json()).toEqual(first.json())
    const [n] = await sql()<{ n: number }[]>`
      select count(*)::int as n from subaccount_releases where user_id = ${userId} and idempotency_key = ${key}`
    expect(n?.n).toBe(1)
    // concurrent retries of one key: one release
    const racing = await Promise.all(
      [1, 2, 3].map(() => post('/subaccounts/BTC/release', token, { 'idempotency-key': `${key}-btc` })),
    )
    expect(racing.map((r) => r.statusCode)).toEqual([202, 202, 202])
    expect(new Set(racing.map((r) => r.json().id)).size).toBe(1)

    const reused = await post('/subaccounts/BTC/release', token, { 'idempotency-key': key })
    expect(reused.statusCode).toBe(422)
    expect(reused.json().code).toBe('IDEMPOTENCY_KEY_REUSED')
  })

  it('an unknown asset is 400, a subaccount the caller does not have is 404, both in the error shape', async () => {
    for (const asset of ['DOGE', 'eth', 'USDC']) {
      const res = await post(`/subaccounts/${asset}/release`)
      expect(res.statusCode).toBe(400)
      expect(res.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_ERROR', error: 'Bad Request' })
    }
    const stranger = await signIn(api.app, newAccount())
    const res = await post('/subaccounts/ETH/release', stranger)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toEqual({
      statusCode: 404,
      code: 'SUBACCOUNT_NOT_FOUND',
      error: 'Not Found',
      message: 'no subaccount for ETH',
    })
    const badKey = await post('/subaccounts/ETH/release', token, { 'idempotency-key': 'has space' })
    expect(badKey.statusCode).toBe(400)
  })

  it('without a token: 401 UNAUTHORIZED', async () => {
    const res = await post('/subaccounts/ETH/release', null)
    expect(res.statusCode).toBe(401)
    expect(res.json().code).toBe('UNAUTHORIZED')
    const list = await api.app.inject({ method: 'GET', url: '/subaccounts' })
    expect(list.statusCode).toBe(401)
  })
})
