/**
 * What a frontend developer meets (docs/console.md "What the API gives a frontend"): the JSON
 * statement's `x-next-cursor` and account labels, weak ETags honoured on If-None-Match, ETags on
 * the proof of liabilities and the trading configuration, the public answers readable from any
 * origin and preflights cached, GET /deposits with each deposit's progress, and GET /solvency's
 * public figures (docs/solvency.md "Public solvency").
 */
import { randomBytes } from 'node:crypto'
import { publishLiabilities } from '@wh/proof/publish'
import { storeRun } from '@wh/solvency'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SOLVENCY_KEEP_MS } from '../src/routes/liabilities/solvency'
import { type Api, creditUsdc, fundedUser, startApi } from './support'

const WEB = 'https://console.example.test'
const ELSEWHERE = 'https://someone-else.example.test'
const HOT = '0x52908400098527886E0F7030069857D2E4169EE7'
const EXCHANGE_WALLET = '0x8617E340B3D01FA5F11F306F4090FD50E238070D'
const DEPOSIT_ADDR = '0xde709f2102306220921060314715629080e2fb77'

describe('the API a console is built on', () => {
  let api: Api

  beforeAll(async () => {
    api = await startApi({ WEB_ORIGIN: WEB })
  })
  afterAll(async () => api?.close())

  const get = (url: string, headers: Record<string, string> = {}) => api.app.inject({ method: 'GET', url, headers })

  it('the JSON statement names its next page in x-next-cursor, as the CSV does, and labels each account', async () => {
    const { token, userId } = await fundedUser(api, 10_000_000n)
    await creditUsdc(api, userId, 5_000_000n)
    const auth = { authorization: `Bearer ${token}` }
    const first = await get('/portfolio/statement?limit=1', auth)
    expect(first.statusCode).toBe(200)
    expect(first.headers['x-next-cursor']).toBe(first.json().nextCursor)
    expect(
      first
        .json()
        .rows[0].postings.map((p: { label: string }) => p.label)
        .sort(),
    ).toEqual(['Outside the platform', 'Platform balance'])
    const last = await get(`/portfolio/statement?limit=1&cursor=${first.json().nextCursor}`, auth)
    expect(last.json().nextCursor).toBeNull()
    expect(last.headers['x-next-cursor']).toBeUndefined()
  })

  it('If-None-Match is compared weakly: W/"…", lists and * all give 304', async () => {
    const assets = await get('/assets')
    const etag = String(assets.headers.etag)
    expect(etag).toMatch(/^"[\w-]+"$/)
    for (const inm of [`W/${etag}`, `"other", ${etag}`, `W/"other", W/${etag}`, '*']) {
      const res = await get('/assets', { 'if-none-match': inm })
      expect(res.statusCode, inm).toBe(304)
      expect(res.body).toBe('')
    }
    expect((await get('/assets', { 'if-none-match': 'W/"other"' })).statusCode).toBe(200)
  })

  it('/proof-of-liabilities, its roots and /trading-config carry an ETag and answer 304 to it', async () => {
    // a funded user: the published tree has a leaf of theirs, so the document is not an empty proof
    await fundedUser(api, 1_000_000n)
    const r = await publishLiabilities(api.ctx.database.sql, { now: new Date(), force: true })
    expect(r.status).toBe('published')
    expect(r.status === 'published' && r.rows.leaves).toBeGreaterThan(0)
    for (const url of ['/proof-of-liabilities', '/proof-of-liabilities/roots', '/trading-config']) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(200)
      expect(res.headers.etag, url).toMatch(/^"[\w-]+"$/)
      expect(res.headers['cache-control'], url).toMatch(/^public, max-age=\d+$/)
      const again = await get(url, { 'if-none-match': `W/${res.headers.etag}` })
      expect(again.statusCode, url).toBe(304)
    }
  })

  it('public answers are readable from any origin; the rest only from the console; preflights are cached', async () => {
    for (const url of ['/assets', '/ETH/chart', '/proof-of-liabilities/roots', '/trading-config']) {
      const res = await get(url, { origin: ELSEWHERE })
      expect(res.headers['access-control-allow-origin'], url).toBe('*')
    }
    const pre = await api.app.inject({
      method: 'OPTIONS',
      url: '/proof-of-liabilities',
      headers: {
        origin: ELSEWHERE,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'if-none-match',
      },
    })
    expect(pre.statusCode).toBe(204)
    expect(pre.headers['access-control-allow-origin']).toBe('*')
    expect(pre.headers['access-control-max-age']).toBe('600')

    // a private route: no CORS grant to another origin, the console's own is granted, preflights cached
    expect((await get('/portfolio/summary', { origin: ELSEWHERE })).headers['access-control-allow-origin']).toBe(
      undefined,
    )
    const del = await api.app.inject({
      method: 'OPTIONS',
      url: '/positions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      headers: {
        origin: WEB,
        'access-control-request-method': 'DELETE',
        'access-control-request-headers': 'authorization',
      },
    })
    expect(del.headers['access-control-allow-origin']).toBe(WEB)
    expect(del.headers['access-control-allow-methods']).toContain('DELETE')
    expect(del.headers['access-control-max-age']).toBe('600')
    // a DELETE to a public path is not a public read
    const notPublic = await api.app.inject({
      method: 'OPTIONS',
      url: '/assets',
      headers: { origin: ELSEWHERE, 'access-control-request-method': 'DELETE' },
    })
    expect(notPublic.headers['access-control-allow-origin']).toBeUndefined()
  })

  it("GET /deposits lists the caller's deposits with their progress, credited then swept", async () => {
    const { token, userId } = await fundedUser(api, 1n)
    const sql = api.ctx.database.sql
    const tx = `0x${randomBytes(32).toString('hex')}`
    const [d] = await sql<{ id: string }[]>`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      values ('base', ${tx}, 0, 42, ${userId}, 0, ${DEPOSIT_ADDR}, 'USDC', '1500000000', 'detected') returning id`
    const auth = { authorization: `Bearer ${token}` }
    const credited = (await get('/deposits', auth)).json()
    expect(credited.items).toEqual([
      {
        id: d?.id,
        chain: 'base',
        asset: 'USDC',
        amount: '1500.000000',
        txHash: tx,
        blockNumber: '42',
        confirmations: expect.any(Number),
        stage: 'credited',
        detectedAt: expect.any(String),
        confirmedAt: expect.any(String),
        creditedAt: expect.any(String),
        sweptAt: null,
      },
    ])
    await sql`update deposits set state = 'swept', updated_at = now() where id = ${d?.id ?? ''}`
    const swept = (await get('/deposits', auth)).json().items[0]
    expect(swept).toMatchObject({ stage: 'swept', sweptAt: expect.any(String) })
    // another user sees none of it
    const other = await fundedUser(api, 1n)
    expect((await get('/deposits', { authorization: `Bearer ${other.token}` })).json().items).toEqual([])
    expect((await get('/deposits?cursor=nope', auth)).json()).toMatchObject({ statusCode: 400, code: 'INVALID_CURSOR' })
  })

  it('GET /deposits pages with its cursor: each deposit once, newest first, the last page without a cursor', async () => {
    const { token, userId } = await fundedUser(api, 1n)
    const sql = api.ctx.database.sql
    // five deposits, two of them in the same instant: the cursor's id breaks the tie
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const [d] = await sql<{ id: string }[]>`
        insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state,
          created_at)
        values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, ${40 + i}, ${userId}, 0, ${DEPOSIT_ADDR}, 'USDC',
          '1000000', 'detected', now() - make_interval(secs => ${i < 2 ? 100 : 100 - i}))
        returning id`
      ids.push((d as { id: string }).id)
    }
    const auth = { authorization: `Bearer ${token}` }
    const seen: string[] = []
    let cursor: string | null = null
    const pages: number[] = []
    do {
      const body: { items: Array<{ id: string }>; nextCursor: string | null } = (
        await get(`/deposits?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth)
      ).json()
      pages.push(body.items.length)
      seen.push(...body.items.map((x) => x.id))
      cursor = body.nextCursor
    } while (cursor !== null && pages.length < 10)
    expect(pages).toEqual([2, 2, 1])
    // newest first: i = 4, 3, 2, then the two of one instant, each once (the page boundary falls between them)
    expect(seen.slice(0, 3)).toEqual([ids[4], ids[3], ids[2]])
    expect([...seen.slice(3)].sort()).toEqual([ids[0], ids[1]].sort())
  })

  it('GET /solvency: the latest complete run, its addresses and exchange account, never a deposit address', async () => {
    const sql = api.ctx.database.sql
    expect((await get('/solvency')).json()).toMatchObject({ statusCode: 404, code: 'NO_SOLVENCY_RUN' })
    const legs = [
      { side: 'liability', currency: 'USDC', kind: 'user_transit', place: 'journal', amount: 900_000_000n },
      { side: 'liability', currency: 'USDC', kind: 'fee_revenue', place: 'journal', amount: 100_000_000n },
      {
        side: 'asset',
        currency: 'USDC',
        kind: 'platform_wallet',
        place: `base:hot:${HOT}`,
        account: HOT,
        amount: 700_000_000n,
      },
      {
        side: 'asset',
        currency: 'USDC',
        kind: 'deposit_addresses',
        place: 'base:deposit-addresses',
        amount: 50_000_000n,
      },
      {
        side: 'asset',
        currency: 'USDC',
        kind: 'exchange_subaccounts',
        place: 'exchange:subaccounts',
        account: EXCHANGE_WALLET,
        amount: 300_000_000n,
      },
    ] as const
    const totals = [{ currency: 'USDC', assets: 1_050_000_000n, liabilities: 1_000_000_000n, surplus: 50_000_000n }]
    const surpluses = [{ currency: 'USDC', place: `base:deposit:${DEPOSIT_ADDR}`, held: 1n, expected: 0n, amount: 1n }]
    const base = { startedAt: new Date(), legs: [...legs], totals, surpluses }
    const runId = await storeRun(sql, { ...base, complete: true, errors: [] })
    // a later incomplete run decides nothing, and is not published
    await storeRun(sql, { ...base, complete: false, errors: [{ place: 'base', error: 'rpc down' }] })
    const res = await get('/solvency', { origin: ELSEWHERE })
    expect(res.statusCode).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.json()).toEqual({
      runId,
      startedAt: expect.any(String),
      finishedAt: expect.any(String),
      totals: [
        {
          currency: 'USDC',
          decimals: 6,
          assets: '1050.000000',
          liabilities: '1000.000000',
          surplus: '50.000000',
          assetsByKind: expect.objectContaining({
            platform_wallet: '700.000000',
            deposit_addresses: '50.000000',
            exchange_subaccounts: '300.000000',
            exchange_wallet: '0.000000',
          }),
          liabilitiesByKind: { user_transit: '900.000000', user_subaccounts: '0.000000', fee_revenue: '100.000000' },
        },
      ],
      addresses: [{ chain: 'base', role: 'hot', address: HOT }],
      exchangeAccount: EXCHANGE_WALLET,
    })
    expect(res.body.toLowerCase()).not.toContain(DEPOSIT_ADDR.toLowerCase())
    expect((await get('/solvency', { 'if-none-match': String(res.headers.etag) })).statusCode).toBe(304)

    // the answer is kept SOLVENCY_KEEP_MS by the API's clock: a newer run shows after it, not at each request
    const newer = await storeRun(sql, { ...base, startedAt: new Date(), complete: true, errors: [] })
    expect((await get('/solvency')).json().runId).toBe(runId)
    api.clock.advance(SOLVENCY_KEEP_MS)
    expect((await get('/solvency')).json().runId).toBe(newer)
  })
})
