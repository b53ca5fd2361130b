import { randomBytes, randomUUID } from 'node:crypto'
import { append, freeBalance } from '@wh/ledger'
import { clearPlatformStop, raisePlatformStop } from '@wh/ops'
import { normaliseDestination, usdToBaseUnits } from '@wh/withdrawals'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

// test env: WITHDRAWAL_MIN_USD 10, WITHDRAWAL_MAX_USD 100000 (packages/testkit localStackEnv)
// an EIP-55 test vector, not derived from the test mnemonic (whose addresses are deposit addresses here)
const DEST = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

describe('withdrawal routes (spec 4.2, 3.2, 8.2)', () => {
  let api: Api

  beforeAll(async () => {
    api = await startApi()
    await api.seedPrice('ETH', '3000')
  })
  afterAll(() => api.close())

  /** A signed-in user holding `usdc` (decimal) in transit, seeded by a deposit_detected. */
  async function user(usdc?: string) {
    const account = newAccount()
    const token = await signIn(api.app, account)
    const [row] = await api.ctx.database.sql<{ id: string }[]>`
      select id from users where wallet_address = ${account.address}`
    const userId = row?.id as string
    if (usdc !== undefined) {
      const [whole = '0', frac = ''] = usdc.split('.')
      await append(api.ctx.database.sql, {
        type: 'deposit_detected',
        payload: {
          userId,
          chain: 'base',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          logIndex: 3,
          currency: 'USDC',
          amount: BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, '0') || '0'),
        },
        occurredAt: new Date(),
      })
    }
    const auth = { authorization: `Bearer ${token}` }
    return { userId, auth }
  }

  const post = (headers: Record<string, string>, payload: unknown) =>
    api.app.inject({ method: 'POST', url: '/withdrawals', headers, payload: payload as object })

  it('GET /withdrawals/routes lists every chain and asset with bounds in USD and in the asset', async () => {
    const { auth } = await user()
    const res = await api.app.inject({ method: 'GET', url: '/withdrawals/routes', headers: auth })
    expect(res.statusCode).toBe(200)
    const { routes } = res.json()
    expect(routes).toHaveLength(8)
    const usdc = routes.find((r: { chain: string; asset: string }) => r.chain === 'base' && r.asset === 'USDC')
    expect(usdc).toMatchObject({
      chainId: 8453,
      decimals: 6,
      minUsd: '10',
      maxUsd: '100000',
      minAmount: '10.000000',
      maxAmount: '100000.000000',
      // the test env's RPC URLs point at nothing: no estimate, flagged
      networkFee: { available: false, asset: 'ETH', gasLimit: '65000' },
    })
    const eth = routes.find((r: { chain: string; asset: string }) => r.chain === 'base' && r.asset === 'ETH')
    // the feed's index (3000 USD): 10 USD rounds up, 100000 USD down
    expect(eth).toMatchObject({ decimals: 18, priceUsd: '3000', priceAvailable: true, contract: null })
    expect(eth.minAmount).toBe('0.003333333333333334')
    expect(eth.maxAmount).toBe('33.333333333333333333')
  })

  it('accepts a request: 202, state requested, and the amount leaves the free balance', async () => {
    const { userId, auth } = await user('100')
    const res = await post(auth, { chain: 'base', asset: 'USDC', amount: '25.5', destination: DEST.toLowerCase() })
    expect(res.statusCode, res.body).toBe(202)
    const body = res.json()
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      state: 'requested',
      chain: 'base',
      asset: 'USDC',
      amount: '25.500000',
      destination: DEST,
      createdAt: expect.any(String),
    })
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(74_500_000n)

    const list = await api.app.inject({ method: 'GET', url: '/withdrawals', headers: auth })
    expect(list.statusCode).toBe(200)
    expect(list.json()).toEqual({
      items: [
        {
          id: body.id,
          state: 'requested',
          chain: 'base',
          asset: 'USDC',
          amount: '25.500000',
          destination: DEST,
          networkFee: null,
          networkFeeAsset: 'ETH',
          txHash: null,
          failureReason: null,
          failureCode: null,
          createdAt: body.createdAt,
          updatedAt: expect.any(String),
          sentAt: null,
        },
      ],
      nextCursor: null,
    })
  })

  it('400 in the one error shape for a bad body, destination or amount format', async () => {
    const { auth } = await user('100')
    const ok = { chain: 'base', asset: 'USDC', amount: '20', destination: DEST }
    const cases: Array<[unknown, string]> = [
      [{ ...ok, chain: 'solana' }, 'VALIDATION_ERROR'],
      [{ ...ok, asset: 'BTC' }, 'VALIDATION_ERROR'],
      [{ ...ok, amount: '-1' }, 'VALIDATION_ERROR'],
      [{ ...ok, amount: '1e3' }, 'VALIDATION_ERROR'],
      [{ ...ok, amount: 20 }, 'VALIDATION_ERROR'],
      [{ ...ok, amount: '20.1234567' }, 'INVALID_AMOUNT'],
      [{ ...ok, destination: '0x1234' }, 'VALIDATION_ERROR'],
      [{ ...ok, destination: DEST.replace('aAeb', 'aaeb') }, 'INVALID_DESTINATION'],
      [{ ...ok, destination: `0x${'0'.repeat(40)}` }, 'INVALID_DESTINATION'],
      [{ ...ok, extra: 1 }, 'VALIDATION_ERROR'],
      [{ chain: 'base' }, 'VALIDATION_ERROR'],
    ]
    for (const [payload, code] of cases) {
      const res = await post(auth, payload)
      expect(res.statusCode, JSON.stringify(payload)).toBe(400)
      const { details, ...shape } = res.json()
      expect(shape).toEqual({ statusCode: 400, code, error: 'Bad Request', message: expect.any(String) })
      // an amount refused for its format names the input it refused; other 400s carry no details
      if (code === 'INVALID_AMOUNT') expect(details).toEqual({ input: (payload as { amount: string }).amount })
      else expect(details).toBeUndefined()
    }
    const longKey = await post({ ...auth, 'idempotency-key': 'k'.repeat(129) }, ok)
    expect(longKey.statusCode).toBe(400)
    const list = await api.app.inject({ method: 'GET', url: '/withdrawals?limit=101', headers: auth })
    expect(list.statusCode).toBe(400)
    const badCursor = await api.app.inject({ method: 'GET', url: '/withdrawals?cursor=bm9wZQ', headers: auth })
    expect(badCursor.json()).toMatchObject({ statusCode: 400, code: 'INVALID_CURSOR' })
  })

  it("refuses the caller's own deposit address as destination", async () => {
    const { userId, auth } = await user('100')
    const [u] = await api.ctx.database.sql<{ hd_index: number }[]>`select hd_index from users where id = ${userId}`
    const own = api.keyring.address(u?.hd_index as number)
    const res = await post(auth, { chain: 'base', asset: 'USDC', amount: '20', destination: own })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('INVALID_DESTINATION')
  })

  it('422 below the minimum, above the maximum and above the free balance; nothing reserved', async () => {
    const { userId, auth } = await user('50')
    const base = { chain: 'base', destination: DEST }
    const cases: Array<[object, string]> = [
      [{ asset: 'USDC', amount: '9.999999' }, 'WITHDRAWAL_BELOW_MINIMUM'],
      [{ asset: 'USDC', amount: '0' }, 'WITHDRAWAL_BELOW_MINIMUM'],
      [{ asset: 'ETH', amount: '0.003333333333333333' }, 'WITHDRAWAL_BELOW_MINIMUM'],
      [{ asset: 'USDC', amount: '100000.000001' }, 'WITHDRAWAL_ABOVE_MAXIMUM'],
      [{ asset: 'ETH', amount: '34' }, 'WITHDRAWAL_ABOVE_MAXIMUM'],
      [{ asset: 'USDC', amount: '50.000001' }, 'INSUFFICIENT_FREE_BALANCE'],
      [{ asset: 'ETH', amount: '0.01' }, 'INSUFFICIENT_FREE_BALANCE'],
    ]
    for (const [body, code] of cases) {
      const res = await post(auth, { ...base, ...body })
      expect(res.statusCode, JSON.stringify(body)).toBe(422)
      expect(res.json()).toEqual({
        statusCode: 422,
        code,
        error: 'Unprocessable Entity',
        message: expect.any(String),
        details: expect.any(Object),
      })
      // the bounds a client shows, without parsing the message
      if (code === 'WITHDRAWAL_BELOW_MINIMUM') expect(res.json().details.minAmount).toMatch(/^[0-9]+\.[0-9]+$/)
      if (code === 'WITHDRAWAL_ABOVE_MAXIMUM') expect(res.json().details.maxAmount).toMatch(/^[0-9]+\.[0-9]+$/)
    }
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(50_000_000n)
    const exact = await post(auth, { ...base, asset: 'USDC', amount: '50' })
    expect(exact.statusCode).toBe(202)
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(0n)
  })

  it('a retried request with the same Idempotency-Key answers the same withdrawal, even when 20 race', async () => {
    const { userId, auth } = await user('100')
    const headers = { ...auth, 'idempotency-key': `k-${randomUUID()}` }
    const body = { chain: 'base', asset: 'USDC', amount: '30', destination: DEST }
    const results = await Promise.all(Array.from({ length: 20 }, () => post(headers, body)))
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(202))
    const bodies = new Set(results.map((r) => r.body))
    expect(bodies.size).toBe(1)
    const again = await post(headers, body)
    expect(again.statusCode).toBe(202)
    expect(again.body).toBe(results[0]?.body)
    const [{ n } = { n: 0 }] = await api.ctx.database.sql<{ n: number }[]>`
      select count(*)::int as n from withdrawals where user_id = ${userId}`
    expect(n).toBe(1)
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(70_000_000n)

    // the same key for another request is refused, not merged
    const other = await post(headers, { ...body, amount: '31' })
    expect(other.statusCode).toBe(422)
    expect(other.json().code).toBe('IDEMPOTENCY_KEY_REUSED')
  })

  it('twenty concurrent requests never overdraw the free balance', async () => {
    const { userId, auth } = await user('100')
    const body = { chain: 'base', asset: 'USDC', amount: '15', destination: DEST }
    const results = await Promise.all(Array.from({ length: 20 }, () => post(auth, body)))
    const accepted = results.filter((r) => r.statusCode === 202)
    const refused = results.filter((r) => r.statusCode === 422)
    expect(accepted).toHaveLength(6) // 6 × 15 = 90 ≤ 100 < 7 × 15
    expect(refused).toHaveLength(14)
    for (const r of refused) expect(r.json().code).toBe('INSUFFICIENT_FREE_BALANCE')
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(10_000_000n)
  })

  it('GET /withdrawals pages newest first with a cursor and shows only the caller’s', async () => {
    const { auth } = await user('1000')
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await post(auth, { chain: 'optimism', asset: 'USDC', amount: `${11 + i}`, destination: DEST })
      ids.push(res.json().id)
    }
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const url: string = `/withdrawals?limit=2${cursor ? `&cursor=${cursor}` : ''}`
      const res = await api.app.inject({ method: 'GET', url, headers: auth })
      expect(res.statusCode).toBe(200)
      const page = res.json()
      expect(page.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.items.map((w: { id: string }) => w.id))
      cursor = page.nextCursor
    } while (cursor)
    expect(seen).toEqual([...ids].reverse())

    const stranger = await user()
    const theirs = await api.app.inject({ method: 'GET', url: '/withdrawals', headers: stranger.auth })
    expect(theirs.json()).toEqual({ items: [], nextCursor: null })
  })

  it('while the platform is stopped: a withdrawal above PLATFORM_STOP_WITHDRAWAL_MAX_USD is a 503 that changes nothing, a small one passes, no position opens', async () => {
    const sql = api.ctx.database.sql
    const { userId, auth } = await user('5000')
    await raisePlatformStop(sql, { raisedBy: 'operator', reason: 'test: a deficit under review', actor: 'test' })
    try {
      const big = await post(auth, { chain: 'base', asset: 'USDC', amount: '1000.000001', destination: DEST })
      expect(big.statusCode, big.body).toBe(503)
      expect(big.json().code).toBe('PLATFORM_STOPPED')
      expect(big.headers['retry-after']).toBeDefined()
      expect(await freeBalance(sql, userId, 'USDC')).toBe(5_000_000_000n)
      const [{ n } = { n: -1 }] = await sql<
        { n: number }[]
      >`select count(*)::int as n from withdrawals where user_id = ${userId}`
      expect(n).toBe(0)
      // at the bound (1,000 USD by default) it still goes through
      const small = await post(auth, { chain: 'base', asset: 'USDC', amount: '1000', destination: DEST })
      expect(small.statusCode, small.body).toBe(202)
      const position = await api.app.inject({
        method: 'POST',
        url: '/positions',
        headers: auth,
        payload: { asset: 'ETH', side: 'put', amount: '100' },
      })
      expect(position.statusCode, position.body).toBe(503)
      expect(position.json().code).toBe('PLATFORM_STOPPED')
    } finally {
      await clearPlatformStop(sql, { actor: 'test', reason: 'test over' })
    }
    const after = await post(auth, { chain: 'base', asset: 'USDC', amount: '1500', destination: DEST })
    expect(after.statusCode, after.body).toBe(202)
  })
})

describe('withdrawal helpers', () => {
  it('normalises lowercase to EIP-55 and refuses a wrong checksum or the zero address', () => {
    expect(normaliseDestination(DEST.toLowerCase())).toBe(DEST)
    expect(normaliseDestination(DEST)).toBe(DEST)
    expect(() => normaliseDestination(DEST.replace('aAeb', 'aaeb'))).toThrow(/checksum/)
    expect(() => normaliseDestination(`0x${'0'.repeat(40)}`)).toThrow(/zero/)
  })

  it('converts USD bounds with explicit rounding', () => {
    expect(usdToBaseUnits('10', '1', 6, 'up')).toBe(10_000_000n)
    expect(usdToBaseUnits('10', '3000', 18, 'up')).toBe(3_333_333_333_333_334n)
    expect(usdToBaseUnits('10', '3000', 18, 'down')).toBe(3_333_333_333_333_333n)
    expect(usdToBaseUnits('0.5', '3', 6, 'down')).toBe(166_666n)
  })
})
