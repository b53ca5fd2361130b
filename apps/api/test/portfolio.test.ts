import { randomBytes } from 'node:crypto'
import { appendBatch, type EventInput, reserveWithdrawal, userExternal, userSub, userTransit } from '@wh/ledger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

const DAY = 86_400_000
const usdc = (n: number) => BigInt(Math.round(n * 1e6))
const txHash = () => `0x${randomBytes(32).toString('hex')}`

interface Posting {
  account: string
  currency: string
  amount: string
  balanceAfter: string
}
interface Row {
  eventId: string
  type: string
  occurredAt: string
  recordedAt: string
  postings: Posting[]
}

describe('GET /portfolio/summary and /portfolio/statement (spec 4.2)', () => {
  let api: Api
  let token: string
  let userId: string
  let other: { token: string; userId: string }
  let now: Date
  const at = (daysAgo: number) => new Date(now.getTime() - daysAgo * DAY)

  /** `bearer: null` sends no Authorization header */
  const get = (url: string, bearer: string | null = token) =>
    api.app.inject({ method: 'GET', url, headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` } })
  const userOf = (t: string) => (api.app.jwt.decode(t) as { sub: string }).sub

  /** A's history: one deposit 40 days ago (outside the default period), the rest in the last 30 days. */
  function eventsOf(u: string): EventInput[] {
    // subaccount ids are the exchange's, unique across users (accrual and settlement keys carry them)
    const s = `S-${u.slice(0, 8)}`
    return [
      {
        type: 'deposit_detected',
        payload: { userId: u, chain: 'base', txHash: txHash(), logIndex: 0, currency: 'USDC', amount: usdc(10) },
        occurredAt: at(40),
      },
      {
        type: 'deposit_detected',
        payload: { userId: u, chain: 'base', txHash: txHash(), logIndex: 3, currency: 'USDC', amount: usdc(1000) },
        occurredAt: at(10),
      },
      {
        type: 'subaccount_funded',
        payload: { userId: u, subaccountId: s, transactionId: `f-${u}`, currency: 'USDC', amount: usdc(600) },
        occurredAt: at(9),
      },
      {
        type: 'option_sold',
        payload: {
          userId: u,
          subaccountId: s,
          tradeId: `t-${u}`,
          instrument: 'ETH-20260130-3000-P',
          currency: 'USDC',
          premium: usdc(50),
          exchangeFee: usdc(2),
          platformFee: usdc(5),
        },
        occurredAt: at(8),
      },
      {
        type: 'interest_accrued',
        payload: { userId: u, subaccountId: s, currency: 'USDC', bucketTs: 1_000, amount: usdc(3) },
        occurredAt: at(7),
      },
      {
        type: 'option_settled',
        payload: {
          userId: u,
          subaccountId: s,
          instrument: 'ETH-20260130-3000-P',
          expirySec: 1_769_760_000,
          outcome: 'itm',
          currency: 'USDC',
          amount: usdc(20),
        },
        occurredAt: at(6),
      },
      {
        type: 'deposit_detected',
        payload: {
          userId: u,
          chain: 'ethereum',
          txHash: txHash(),
          logIndex: 0,
          currency: 'ETH',
          amount: 1_500_000_000_000_000_000n,
        },
        occurredAt: at(5),
      },
      {
        // a loss: funding paid
        type: 'funding_paid',
        payload: { userId: u, subaccountId: s, currency: 'USDC', bucketTs: 2_000, amount: -usdc(1) },
        occurredAt: at(4),
      },
    ]
  }

  beforeAll(async () => {
    api = await startApi()
    now = api.clock.now()
    token = await signIn(api.app, newAccount())
    userId = userOf(token)
    const otherToken = await signIn(api.app, newAccount())
    other = { token: otherToken, userId: userOf(otherToken) }
    const sql = api.ctx.database.sql
    await appendBatch(sql, eventsOf(userId))
    await reserveWithdrawal(sql, { userId, currency: 'USDC', amount: usdc(100) })
    // the other user: the same kinds of events, other amounts, interleaved in time
    await appendBatch(sql, [
      ...eventsOf(other.userId).map((e) => ({ ...e, occurredAt: new Date(e.occurredAt.getTime() + 1_000) })),
      {
        type: 'deposit_detected',
        payload: {
          userId: other.userId,
          chain: 'base',
          txHash: txHash(),
          logIndex: 0,
          currency: 'USDC',
          amount: usdc(7777),
        },
        occurredAt: at(3),
      },
    ] as EventInput[])
  })
  afterAll(() => api.close())

  describe('summary', () => {
    it('answers per asset balances and the figures of the last 30 days, as decimal strings', async () => {
      const res = await get('/portfolio/summary')
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(new Date(body.to).getTime()).toBe(now.getTime())
      expect(new Date(body.from).getTime()).toBe(now.getTime() - 30 * DAY)
      expect(body.assets).toEqual([
        {
          currency: 'ETH',
          decimals: 18,
          freeBalance: '1.500000000000000000',
          inSubaccounts: '0.000000000000000000',
          pendingWithdrawals: '0.000000000000000000',
          pendingFundings: '0.000000000000000000',
          income: {
            premium: '0.000000000000000000',
            interest: '0.000000000000000000',
            funding: '0.000000000000000000',
          },
          expenses: {
            exchangeFee: '0.000000000000000000',
            settlement: '0.000000000000000000',
            swap: '0.000000000000000000',
            borrow: '0.000000000000000000',
          },
          netDeposits: '1.500000000000000000',
          periodReturn: '0.000000000000000000',
        },
        {
          currency: 'USDC',
          decimals: 6,
          // transit 10 + 1000 - 600 = 410, minus the 100 requested
          freeBalance: '310.000000',
          // 600 + 50 - 2 - 5 + 3 - 20 - 1
          inSubaccounts: '625.000000',
          pendingWithdrawals: '100.000000',
          pendingFundings: '0.000000',
          income: { premium: '50.000000', interest: '3.000000', funding: '-1.000000' },
          expenses: { exchangeFee: '2.000000', settlement: '20.000000', swap: '0.000000', borrow: '0.000000' },
          // the deposit of 40 days ago is outside the period
          netDeposits: '1000.000000',
          // 50 + 3 - 1 - 2 - 5 (platform fee) - 20: losses and fees included
          periodReturn: '25.000000',
        },
      ])
    })

    it('takes an explicit period [from, to)', async () => {
      const from = at(41).toISOString()
      const to = at(7).toISOString() // the interest at day 7 is excluded: `to` is exclusive
      const res = await get(`/portfolio/summary?from=${from}&to=${to}`)
      expect(res.statusCode).toBe(200)
      const body = res.json()
      expect(body).toMatchObject({ from, to })
      const usdcRow = body.assets.find((a: { currency: string }) => a.currency === 'USDC')
      expect(usdcRow).toMatchObject({
        freeBalance: '310.000000', // balances are now, not at `to`
        netDeposits: '1010.000000',
        income: { premium: '50.000000', interest: '0.000000', funding: '0.000000' },
        expenses: { exchangeFee: '2.000000', settlement: '0.000000' },
        periodReturn: '43.000000',
      })
    })

    it("never shows another user's events", async () => {
      const res = await get('/portfolio/summary', other.token)
      expect(res.statusCode).toBe(200)
      const usdcRow = res.json().assets.find((a: { currency: string }) => a.currency === 'USDC')
      expect(usdcRow).toMatchObject({ freeBalance: '8187.000000', pendingWithdrawals: '0.000000' })
      expect(usdcRow.netDeposits).toBe('8777.000000')
    })

    it('answers an empty list for a user without events', async () => {
      const res = await get('/portfolio/summary', await signIn(api.app, newAccount()))
      expect(res.statusCode).toBe(200)
      expect(res.json().assets).toEqual([])
      expect(res.json().subaccounts).toEqual([])
    })

    it("lists the user's subaccounts with exchange id, state and journal balances", async () => {
      const t = await signIn(api.app, newAccount())
      const u = userOf(t)
      const sql = api.ctx.database.sql
      const exchangeId = String(100_000 + Math.floor(Math.random() * 1_000_000))
      await sql`insert into subaccounts (user_id, asset, exchange_id) values (${u}, 'ETH', ${exchangeId})`
      await sql`insert into subaccounts (user_id, asset, stopped_at, stop_reason) values (${u}, 'BTC', now(), 'operator')`
      await appendBatch(sql, [
        {
          type: 'deposit_detected',
          payload: { userId: u, chain: 'base', txHash: txHash(), logIndex: 0, currency: 'USDC', amount: usdc(500) },
          occurredAt: at(2),
        },
        {
          type: 'subaccount_funded',
          payload: {
            userId: u,
            subaccountId: exchangeId,
            transactionId: `f-${u}`,
            currency: 'USDC',
            amount: usdc(200),
          },
          occurredAt: at(1),
        },
      ])
      const res = await get('/portfolio/summary', t)
      expect(res.statusCode).toBe(200)
      expect(res.json().subaccounts).toEqual([
        { asset: 'BTC', exchangeId: null, state: 'stopped', stopReason: 'operator', balances: [] },
        {
          asset: 'ETH',
          exchangeId,
          state: 'active',
          stopReason: null,
          balances: [{ currency: 'USDC', decimals: 6, amount: '200.000000' }],
        },
      ])
      expect(res.json().assets.find((a: { currency: string }) => a.currency === 'USDC').inSubaccounts).toBe(
        '200.000000',
      )
    })
  })

  describe('statement', () => {
    const statementOf = async (query: string, bearer = token) => {
      const res = await get(`/portfolio/statement${query}`, bearer)
      expect(res.statusCode, res.body).toBe(200)
      return res.json() as { rows: Row[]; nextCursor: string | null }
    }

    it('lists the events in time order with their postings and running balances', async () => {
      const { rows, nextCursor } = await statementOf('')
      expect(nextCursor).toBeNull()
      expect(rows.map((r) => r.type)).toEqual([
        'deposit_detected',
        'deposit_detected',
        'subaccount_funded',
        'option_sold',
        'interest_accrued',
        'option_settled',
        'deposit_detected',
        'funding_paid',
      ])
      const times = rows.map((r) => Date.parse(r.occurredAt))
      expect(times).toEqual([...times].sort((a, b) => a - b))
      expect(times[0]).toBe(at(40).getTime())
      for (const r of rows) expect(r.eventId).toMatch(/^[0-9a-f-]{36}$/)

      const transit = userTransit(userId)
      const sub = userSub(userId, `S-${userId.slice(0, 8)}`, 'USDC')
      const balanceOf = (r: Row, account: string) => r.postings.find((p) => p.account === account)
      expect(balanceOf(rows[0]!, transit)).toEqual({
        account: transit,
        label: 'Platform balance',
        currency: 'USDC',
        amount: '10.000000',
        balanceAfter: '10.000000',
      })
      expect(balanceOf(rows[1]!, transit)?.balanceAfter).toBe('1010.000000')
      expect(balanceOf(rows[2]!, transit)).toMatchObject({ amount: '-600.000000', balanceAfter: '410.000000' })
      expect(balanceOf(rows[2]!, sub)).toMatchObject({ amount: '600.000000', balanceAfter: '600.000000' })
      // premium 50 less the exchange fee 2 and the platform fee 5; the platform's account is not the user's
      expect(balanceOf(rows[3]!, sub)).toMatchObject({ amount: '43.000000', balanceAfter: '643.000000' })
      expect(rows[3]!.postings.every((p) => p.account.includes(userId))).toBe(true)
      expect(rows[3]!.postings).toHaveLength(3)
      expect(balanceOf(rows[5]!, sub)?.balanceAfter).toBe('626.000000')
      expect(rows[6]!.postings).toEqual([
        {
          account: userExternal(userId),
          label: 'Outside the platform',
          currency: 'ETH',
          amount: '-1.500000000000000000',
          balanceAfter: '-1.500000000000000000',
        },
        {
          account: transit,
          label: 'Platform balance',
          currency: 'ETH',
          amount: '1.500000000000000000',
          balanceAfter: '1.500000000000000000',
        },
      ])
      expect(balanceOf(rows[7]!, sub)).toMatchObject({ amount: '-1.000000', balanceAfter: '625.000000' })
    })

    it('pages with an opaque cursor; balances on later pages count from the first event', async () => {
      const all = (await statementOf('')).rows
      const seen: Row[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const page: { rows: Row[]; nextCursor: string | null } = await statementOf(
          `?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        )
        expect(page.rows.length).toBeLessThanOrEqual(3)
        seen.push(...page.rows)
        cursor = page.nextCursor
        pages++
      } while (cursor && pages < 10)
      expect(pages).toBe(3)
      expect(seen).toEqual(all)
    })

    it('filters by [from, to) without changing the running balances', async () => {
      const { rows } = await statementOf(`?from=${at(9).toISOString()}&to=${at(7).toISOString()}`)
      expect(rows.map((r) => r.type)).toEqual(['subaccount_funded', 'option_sold'])
      expect(rows[0]!.postings.find((p) => p.account === userTransit(userId))?.balanceAfter).toBe('410.000000')
    })

    it("never shows another user's events", async () => {
      const mine = (await statementOf('')).rows
      const theirs = (await statementOf('', other.token)).rows
      expect(theirs).toHaveLength(9)
      const mineIds = new Set(mine.map((r) => r.eventId))
      expect(theirs.some((r) => mineIds.has(r.eventId))).toBe(false)
      for (const r of mine) for (const p of r.postings) expect(p.account).toContain(userId)
      for (const r of theirs) for (const p of r.postings) expect(p.account).not.toContain(userId)
    })

    it('format=csv answers text/csv with a header line and one line per posting', async () => {
      const res = await get('/portfolio/statement?format=csv&limit=2')
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toMatch(/^text\/csv/)
      expect(res.headers['x-next-cursor']).toEqual(expect.any(String))
      const lines = res.body.trimEnd().split('\n')
      expect(lines[0]).toBe('event_id,type,occurred_at,account,currency,amount,balance_after,account_label')
      const transit = userTransit(userId)
      const external = userExternal(userId)
      // two deposits, each a posting to the user's external (the boundary) and one to transit
      expect(lines).toHaveLength(5)
      const ofDeposit = (line: number) => lines.slice(line, line + 2).map((l) => l.split(',').slice(1))
      const [first, second] = [ofDeposit(1), ofDeposit(3)]
      const t0 = at(40).toISOString()
      const t1 = at(10).toISOString()
      expect(first).toEqual(
        expect.arrayContaining([
          ['deposit_detected', t0, transit, 'USDC', '10.000000', '10.000000', 'Platform balance'],
          ['deposit_detected', t0, external, 'USDC', '-10.000000', '-10.000000', 'Outside the platform'],
        ]),
      )
      expect(second).toEqual(
        expect.arrayContaining([
          ['deposit_detected', t1, transit, 'USDC', '1000.000000', '1010.000000', 'Platform balance'],
          ['deposit_detected', t1, external, 'USDC', '-1000.000000', '-1010.000000', 'Outside the platform'],
        ]),
      )

      const next = await get(
        `/portfolio/statement?format=csv&limit=500&cursor=${encodeURIComponent(String(res.headers['x-next-cursor']))}`,
      )
      expect(next.statusCode).toBe(200)
      expect(next.headers['x-next-cursor']).toBeUndefined()
      expect(next.body.split('\n')[1]).toContain('subaccount_funded')
    })
  })

  describe('auth and bad input', () => {
    for (const url of ['/portfolio/summary', '/portfolio/statement']) {
      it(`${url}: 401 without a token`, async () => {
        const res = await get(url, null)
        expect(res.statusCode).toBe(401)
        expect(res.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' })
      })
    }

    const bad: [string, string][] = [
      ['/portfolio/summary?from=yesterday', 'VALIDATION_ERROR'],
      ['/portfolio/summary?to=2026-13-01T00:00:00Z', 'VALIDATION_ERROR'],
      ['/portfolio/summary?from=2026-01-01', 'VALIDATION_ERROR'],
      ['/portfolio/summary?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'INVALID_PERIOD'],
      ['/portfolio/summary?from=2026-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'INVALID_PERIOD'],
      ['/portfolio/summary?from=2024-01-01T00:00:00Z&to=2025-01-02T00:00:01Z', 'INVALID_PERIOD'],
      ['/portfolio/summary?from=0000-01-01T00:00:00Z&to=0000-06-01T00:00:00Z', 'INVALID_PERIOD'],
      ['/portfolio/summary?from=2026-01-01T00:00:00Z&from=2026-01-02T00:00:00Z', 'VALIDATION_ERROR'],
      ['/portfolio/summary?currency=USDC', 'VALIDATION_ERROR'],
      ['/portfolio/statement?limit=0', 'VALIDATION_ERROR'],
      ['/portfolio/statement?limit=501', 'VALIDATION_ERROR'],
      ['/portfolio/statement?limit=ten', 'VALIDATION_ERROR'],
      ['/portfolio/statement?limit=1.5', 'VALIDATION_ERROR'],
      ['/portfolio/statement?format=xml', 'VALIDATION_ERROR'],
      ['/portfolio/statement?cursor=', 'VALIDATION_ERROR'],
      ['/portfolio/statement?cursor=not-a-cursor', 'INVALID_CURSOR'],
      [
        `/portfolio/statement?cursor=${Buffer.from('2026-01-01T00:00:00.000Z|x').toString('base64url')}`,
        'INVALID_CURSOR',
      ],
      ['/portfolio/statement?from=garbage', 'VALIDATION_ERROR'],
      ['/portfolio/statement?from=0000-01-01T00:00:00Z', 'INVALID_PERIOD'],
      ['/portfolio/statement?from=0001-01-01T00:00:00%2B01:00', 'INVALID_PERIOD'],
      ['/portfolio/statement?to=9999-12-31T23:59:59-01:00', 'INVALID_PERIOD'],
      ['/portfolio/summary?from=9999-12-31T00:00:00Z&to=9999-12-31T23:59:59-01:00', 'INVALID_PERIOD'],
      ['/portfolio/statement?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'INVALID_PERIOD'],
      ['/portfolio/statement?page=2', 'VALIDATION_ERROR'],
    ]
    for (const [url, code] of bad) {
      it(`${url}: 400 ${code} in the error shape`, async () => {
        const res = await get(url)
        expect(res.statusCode, res.body).toBe(400)
        expect(res.json()).toEqual({ statusCode: 400, code, error: 'Bad Request', message: expect.any(String) })
      })
    }

    it('a forged cursor with an out-of-range time answers 400, not 500', async () => {
      for (const iso of ['-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
        const cursor = Buffer.from(`${iso}|00000000-0000-4000-8000-000000000000`).toString('base64url')
        const res = await get(`/portfolio/statement?cursor=${cursor}`)
        expect(res.statusCode, `${iso}: ${res.body}`).toBe(400)
        expect(res.json()).toMatchObject({ statusCode: 400, code: 'INVALID_CURSOR' })
      }
    })
  })
})
