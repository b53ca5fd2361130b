import { randomBytes, randomUUID } from 'node:crypto'
import { append, freeBalance } from '@wh/ledger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

/** POST/GET/DELETE /positions (spec 4.2; docs/trading.md "Position states", "Collateral"). */
describe('positions', () => {
  let api: Api
  const usdc = (n: number) => BigInt(n) * 1_000_000n
  const txHash = () => `0x${randomBytes(32).toString('hex')}`
  const userOf = (t: string) => (api.app.jwt.decode(t) as { sub: string }).sub

  beforeAll(async () => {
    api = await startApi()
  })
  afterAll(async () => api?.close())

  async function funded(amount: bigint): Promise<{ token: string; userId: string }> {
    const token = await signIn(api.app, newAccount())
    const userId = userOf(token)
    await append(api.ctx.database.sql, {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: txHash(), logIndex: 0, currency: 'USDC', amount },
      occurredAt: new Date(),
    })
    return { token, userId }
  }
  const post = (token: string, payload: unknown, headers: Record<string, string> = {}) =>
    api.app.inject({
      method: 'POST',
      url: '/positions',
      headers: { authorization: `Bearer ${token}`, ...headers },
      payload: payload as object,
    })
  const list = (token: string, qs = '') =>
    api.app.inject({ method: 'GET', url: `/positions${qs}`, headers: { authorization: `Bearer ${token}` } })
  const del = (token: string, id: string) =>
    api.app.inject({ method: 'DELETE', url: `/positions/${id}`, headers: { authorization: `Bearer ${token}` } })
  const rowsOf = (userId: string) =>
    api.ctx.database.sql`select state from positions where user_id = ${userId} order by created_at`

  it('a put reserves its USDC collateral from the free balance and answers 202', async () => {
    const { token, userId } = await funded(usdc(1000))
    const res = await post(token, { asset: 'ETH', side: 'put', amount: '600' })
    expect(res.statusCode).toBe(202)
    expect(res.json()).toMatchObject({
      state: 'funding',
      asset: 'ETH',
      side: 'put',
      collateralCurrency: 'USDC',
      collateral: '600.000000',
      funded: '600.000000',
    })
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(usdc(400))
    const [t] = await api.ctx.database
      .sql`select kind, state, amount from subaccount_transfers where user_id = ${userId}`
    expect(t).toMatchObject({ kind: 'fund', state: 'reserved', amount: usdc(600).toString() })
  })

  it('refuses collateral beyond the free balance with 422 and writes nothing', async () => {
    const { token, userId } = await funded(usdc(100))
    const res = await post(token, { asset: 'ETH', side: 'put', amount: '100.000001' })
    expect(res.statusCode).toBe(422)
    expect(res.json()).toMatchObject({ code: 'INSUFFICIENT_COLLATERAL', statusCode: 422 })
    expect(await rowsOf(userId)).toHaveLength(0)
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(usdc(100))
    // a covered call needs the underlying, which this user does not have
    const call = await post(token, { asset: 'ETH', side: 'call', amount: '1' })
    expect(call.statusCode).toBe(422)
  })

  it('twenty concurrent requests never commit more than the free balance', async () => {
    const { token, userId } = await funded(usdc(1000))
    const res = await Promise.all(
      Array.from({ length: 20 }, () => post(token, { asset: 'BTC', side: 'put', amount: '100' })),
    )
    expect(res.filter((r) => r.statusCode === 202)).toHaveLength(10)
    expect(res.filter((r) => r.statusCode === 422)).toHaveLength(10)
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(0n)
  })

  it('uses what the subaccount holds unclaimed before funding the rest', async () => {
    const { token, userId } = await funded(usdc(1000))
    const { sql } = api.ctx.database
    // 500 USDC already in the user's ETH subaccount (exchange id unique per test run)
    const exchangeId = 900_000 + Math.floor(Math.random() * 90_000)
    await sql`insert into subaccounts (user_id, asset, exchange_id) values (${userId}, 'ETH', ${exchangeId})`
    await sql`insert into subaccount_transfers (user_id, subaccount_id, kind, state, currency, amount)
      select ${userId}, id, 'fund', 'funded', 'USDC', ${usdc(500).toString()} from subaccounts where user_id = ${userId}`
    await append(sql, {
      type: 'subaccount_funded',
      payload: {
        userId,
        subaccountId: String(exchangeId),
        transactionId: randomUUID(),
        currency: 'USDC',
        amount: usdc(500),
      },
      occurredAt: new Date(),
    })
    const first = await post(token, { asset: 'ETH', side: 'put', amount: '300' })
    expect(first.json()).toMatchObject({ state: 'requested', funded: '0.000000' })
    const second = await post(token, { asset: 'ETH', side: 'put', amount: '300' })
    expect(second.json()).toMatchObject({ state: 'funding', funded: '100.000000' })
    expect(await freeBalance(sql, userId, 'USDC')).toBe(usdc(400))
  })

  it('an Idempotency-Key answers a retried request with the same position', async () => {
    const { token, userId } = await funded(usdc(1000))
    const key = `k-${randomUUID()}`
    const a = await post(token, { asset: 'ETH', side: 'put', amount: '200' }, { 'idempotency-key': key })
    const b = await post(token, { asset: 'ETH', side: 'put', amount: '200' }, { 'idempotency-key': key })
    expect(b.statusCode).toBe(202)
    expect(b.json().id).toBe(a.json().id)
    expect(await rowsOf(userId)).toHaveLength(1)
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(usdc(800))
    // the same answer, field for field
    expect(b.json()).toEqual(a.json())
  })

  it('an Idempotency-Key reused for another request is refused: 422 IDEMPOTENCY_KEY_REUSED, nothing written', async () => {
    const { token, userId } = await funded(usdc(1000))
    const key = `k-${randomUUID()}`
    const a = await post(token, { asset: 'ETH', side: 'put', amount: '500' }, { 'idempotency-key': key })
    expect(a.statusCode).toBe(202)
    for (const other of [
      { asset: 'ETH', side: 'put', amount: '400' },
      { asset: 'BTC', side: 'put', amount: '500' },
      { asset: 'ETH', side: 'wheel', amount: '500' },
    ]) {
      const r = await post(token, other, { 'idempotency-key': key })
      expect(r.statusCode, JSON.stringify(other)).toBe(422)
      expect(r.json()).toMatchObject({ statusCode: 422, code: 'IDEMPOTENCY_KEY_REUSED' })
    }
    expect(await rowsOf(userId)).toHaveLength(1)
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(usdc(500))
    const { sql } = api.ctx.database
    const [{ wheels } = { wheels: -1 }] = await sql<{ wheels: number }[]>`
      select count(*)::int as wheels from wheels where user_id = ${userId}`
    expect(wheels).toBe(0)
  })

  it('a paused side, an open release or a stopped subaccount refuses with its own 422', async () => {
    const { token, userId } = await funded(usdc(1000))
    const { sql } = api.ctx.database
    await sql`insert into signal_state (asset, side, paused, reason, signal_id, source, signal_at)
      values ('BTC', 'call', true, 'test pause', ${randomUUID()}, 'test', now())
      on conflict (asset, side) do update set paused = true`
    const paused = await post(token, { asset: 'BTC', side: 'call', amount: '1' })
    expect(paused.json()).toMatchObject({ statusCode: 422, code: 'SELLING_PAUSED' })
    await sql`update signal_state set paused = false where asset = 'BTC' and side = 'call'`

    // an open release of the subaccount: no new position until it ends
    const [btc] = await sql<
      { id: string }[]
    >`insert into subaccounts (user_id, asset) values (${userId}, 'BTC') returning id`
    await sql`insert into subaccount_releases (user_id, subaccount_id, state) values (${userId}, ${btc?.id ?? ''}, 'waiting')`
    const releasing = await post(token, { asset: 'BTC', side: 'put', amount: '10' })
    expect(releasing.json()).toMatchObject({ statusCode: 422, code: 'RELEASE_IN_PROGRESS' })

    await sql`insert into subaccounts (user_id, asset, stopped_at, stop_reason) values (${userId}, 'ETH', now(), 'divergence')`
    const stopped = await post(token, { asset: 'ETH', side: 'put', amount: '10' })
    expect(stopped.json()).toMatchObject({ statusCode: 422, code: 'SUBACCOUNT_STOPPED' })
    expect(await rowsOf(userId)).toHaveLength(0)
  })

  it('bad bodies are 400 in the error shape and write nothing', async () => {
    const { token, userId } = await funded(usdc(1000))
    for (const body of [
      { asset: 'DOGE', side: 'put', amount: '1' },
      { asset: 'ETH', side: 'strangle', amount: '1' },
      { asset: 'ETH', side: 'put', amount: 5 },
      { asset: 'ETH', side: 'put', amount: '1.0000001' },
      { asset: 'ETH', side: 'put', amount: '-1' },
      { asset: 'ETH', side: 'put' },
      { asset: 'ETH', side: 'put', amount: '1', extra: true },
    ]) {
      const res = await post(token, body)
      expect(res.statusCode, JSON.stringify(body)).toBe(400)
      expect(res.json()).toMatchObject({ statusCode: 400, code: expect.any(String), message: expect.any(String) })
    }
    // one INVALID_AMOUNT, one status: a zero amount is bad input like an over-precise one (not a 422)
    const zero = await post(token, { asset: 'ETH', side: 'put', amount: '0' })
    expect([zero.statusCode, zero.json().code]).toEqual([400, 'INVALID_AMOUNT'])
    expect(await rowsOf(userId)).toHaveLength(0)
  })

  it("lists the caller's positions newest first in pages, never another user's", async () => {
    const a = await funded(usdc(1000))
    const b = await funded(usdc(1000))
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await post(a.token, { asset: 'ETH', side: 'put', amount: '10' })).json().id)
    await post(b.token, { asset: 'ETH', side: 'put', amount: '10' })
    const p1 = (await list(a.token, '?limit=2')).json()
    const p2 = (await list(a.token, `?limit=2&cursor=${p1.nextCursor}`)).json()
    const p3 = (await list(a.token, `?limit=2&cursor=${p2.nextCursor}`)).json()
    const seen = [...p1.positions, ...p2.positions, ...p3.positions].map((p: { id: string }) => p.id)
    expect(seen).toEqual([...ids].reverse())
    expect(p3.nextCursor).toBeNull()
    expect(p1.positions[0]).toMatchObject({
      state: 'funding',
      collateral: '10.000000',
      filled: '0.000000000000000000',
      premium: '0.000000',
      realizedPnl: '0.000000',
      fills: 0,
      cancelRequested: false,
      instrument: null,
    })
    expect((await list(a.token, '?cursor=bm9wZQ')).statusCode).toBe(400)
    expect((await list(a.token, '?limit=1000')).statusCode).toBe(400)
  })

  it('DELETE cancels what is not at the exchange (releasing the reserve), asks the tick otherwise', async () => {
    const { token, userId } = await funded(usdc(1000))
    const { sql } = api.ctx.database
    const id = (await post(token, { asset: 'ETH', side: 'put', amount: '400' })).json().id
    expect(await freeBalance(sql, userId, 'USDC')).toBe(usdc(600))
    const res = await del(token, id)
    expect(res.statusCode).toBe(200)
    expect(res.json()).toEqual({ id, action: 'cancel', outcome: 'cancelled', state: 'cancelled' })
    expect(await freeBalance(sql, userId, 'USDC')).toBe(usdc(1000))
    expect((await del(token, id)).json()).toMatchObject({ statusCode: 409, code: 'POSITION_FINISHED' })

    const placing = (await post(token, { asset: 'ETH', side: 'put', amount: '100' })).json().id
    await sql`update positions set state = 'placing' where id = ${placing}`
    const r2 = await del(token, placing)
    expect(r2.statusCode).toBe(202)
    expect(r2.json()).toEqual({ id: placing, action: 'cancel', outcome: 'cancel_requested', state: 'placing' })
    // an open leg is bought back (test/positions-close.test.ts); one with nothing sold has nothing to buy
    await sql`update positions set state = 'open' where id = ${placing}`
    expect((await del(token, placing)).json()).toMatchObject({ statusCode: 409, code: 'CLOSE_UNAVAILABLE' })

    const other = await funded(usdc(10))
    expect((await del(other.token, placing)).statusCode).toBe(404)
    expect((await del(token, randomUUID())).statusCode).toBe(404)
    expect((await del(token, 'not-a-uuid')).statusCode).toBe(400)
  })

  it('side wheel starts a wheel with a first put; one wheel per asset; DELETE stops it', async () => {
    const { token } = await funded(usdc(1000))
    const res = await post(token, { asset: 'ETH', side: 'wheel', amount: '500' })
    expect(res.statusCode).toBe(202)
    const body = res.json()
    expect(body).toMatchObject({ side: 'put', state: 'funding', collateral: '500.000000', wheelId: expect.any(String) })
    const again = await post(token, { asset: 'ETH', side: 'wheel', amount: '100' })
    expect(again.json()).toMatchObject({ statusCode: 409, code: 'WHEEL_ALREADY_RUNNING' })
    // a refused first leg leaves no wheel behind
    const tooBig = await post(token, { asset: 'BTC', side: 'wheel', amount: '600' })
    expect(tooBig.json()).toMatchObject({ code: 'INSUFFICIENT_COLLATERAL' })
    const listed = (await list(token)).json()
    expect(listed.wheels).toEqual([
      expect.objectContaining({
        id: body.wheelId,
        asset: 'ETH',
        state: 'running',
        cycles: 1,
        currentPositionId: body.id,
      }),
    ])
    expect(listed.positions[0]).toMatchObject({ id: body.id, wheelId: body.wheelId })
    expect(
      (
        await api.app.inject({
          method: 'DELETE',
          url: `/positions/${body.wheelId}?mode=sometime`,
          headers: { authorization: `Bearer ${token}` },
        })
      ).statusCode,
    ).toBe(400)
    const stop = await del(token, body.wheelId)
    expect(stop.statusCode).toBe(202)
    expect(stop.json()).toEqual({ id: body.wheelId, action: 'stop', outcome: 'stopping', state: 'stopping' })
    const [w] = await api.ctx.database.sql`select state, stop_mode from wheels where id = ${body.wheelId}`
    expect(w).toEqual({ state: 'stopping', stop_mode: 'after_cycle' })
    // another user cannot stop it
    const other = await funded(usdc(10))
    expect((await del(other.token, body.wheelId)).statusCode).toBe(404)
  })
})
