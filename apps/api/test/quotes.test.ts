import { type RunningSimulator, startDeriveSimulator } from '@wh/derive-simulator'
import { HttpTransport, type Instrument, type PublicReader, publicReader, type Ticker, toE18 } from '@wh/exchange'
import { freeBalance } from '@wh/ledger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { START } from './market-support'
import { type Api, fundedUser, newAccount, signIn, startApi } from './support'

/**
 * POST /quotes, the fee-share policy of POST /positions and GET /trading-config's minimum sizes
 * (docs/trading.md "Economics") against the Derive simulator over HTTP. Every figure is recomputed
 * here from the simulator's own instruments and tickers, with this file's arithmetic.
 */
describe('quotes: the economics of a leg before it starts', () => {
  let sim: RunningSimulator
  let warn: Api // FEE_SHARE_POLICY=warn, MAX_FEE_SHARE_BPS=0: every quote exceeds
  let refuse: Api // FEE_SHARE_POLICY=refuse, the threshold between a small and a large quote
  let exchange: PublicReader
  let threshold = 0
  const E18 = 10n ** 18n
  const USDC = 10n ** 12n // e18 → USDC base units
  const usdc = (n: bigint) => n * 1_000_000n
  const dec6 = (v: bigint) => `${v / 1_000_000n}.${(v % 1_000_000n).toString().padStart(6, '0')}`
  const dec18 = (v: bigint) => `${v / E18}.${(v % E18).toString().padStart(18, '0')}`

  beforeAll(async () => {
    sim = await startDeriveSimulator({ chainId: 901, startMs: START })
    const env = { EXCHANGE_HTTP_URL: sim.v3HttpUrl, EXCHANGE_WS_URL: sim.v3WsUrl }
    warn = await startApi({ ...env, FEE_SHARE_POLICY: 'warn', MAX_FEE_SHARE_BPS: '0' })
    warn.clock.set(START)
    exchange = publicReader(new HttpTransport({ baseUrl: sim.v3HttpUrl }))
  })
  afterAll(async () => {
    await warn?.close()
    await refuse?.close()
    await sim?.close()
  })

  /** The quote recomputed from the simulator: balanced profile, 10 % platform fee (the tests' environment). */
  async function expected(asset: 'ETH' | 'BTC', side: 'put' | 'call', collateral: bigint, decimals: number) {
    const nowSec = START / 1000
    const all = await exchange.getInstruments({ currency: asset, instrument_type: 'option' })
    const expiry = [...new Set(all.map((i) => i.option_details?.expiry ?? 0))]
      .filter((e) => e >= nowSec + 40 * 3600 && e <= nowSec + 8 * 86_400)
      .sort((a, b) => a - b)[0] as number
    const type = side === 'put' ? 'P' : 'C'
    const options = all.filter((i) => i.option_details?.expiry === expiry && i.option_details.option_type === type)
    let best: { i: Instrument; t: Ticker; d: number } | undefined
    for (const i of options) {
      const t = await exchange.getTicker(i.instrument_name)
      const d = Math.abs(Math.abs(Number(t.option_pricing?.delta)) * 10_000 - 2000)
      const strike = Number(i.option_details?.strike)
      const further =
        best &&
        (side === 'put'
          ? strike < Number(best.i.option_details?.strike)
          : strike > Number(best.i.option_details?.strike))
      if (d <= 700 && (!best || d < best.d || (d === best.d && further))) best = { i, t, d }
    }
    if (!best) throw new Error('no strike near 0.20 delta in the simulator')
    const { i, t } = best
    const strike = toE18(i.option_details?.strike ?? '0')
    const mark = toE18(t.mark_price)
    const index = toE18(t.index_price)
    const step = toE18(i.amount_step)
    const collateralE18 = collateral * 10n ** BigInt(18 - decimals)
    const size = (((side === 'put' ? (collateralE18 * E18) / strike : collateralE18) / step) * step) as bigint
    const premium = (size * mark) / E18 / USDC
    const optionValue = (mark * size) / E18
    const cap = (optionValue * toE18(i.mark_price_fee_rate_cap ?? '1')) / E18
    const rate = (r: string) => {
      const v = (((index * size) / E18) * toE18(r)) / E18
      return v < cap ? v : cap
    }
    const up = (e18: bigint) => (e18 + USDC - 1n) / USDC
    const maker = up(rate(i.maker_fee_rate))
    const taker = up(toE18(i.base_fee) + rate(i.taker_fee_rate))
    const platform = premium / 10n
    const share = (f: bigint) => Number((f * 10_000n + premium - 1n) / premium)
    const tenorMs = BigInt(expiry * 1000 - START)
    return {
      instrument: i.instrument_name,
      strike: dec18(strike),
      expiry: new Date(expiry * 1000).toISOString(),
      mark: dec18(mark),
      index: dec18(index),
      size: dec18(size),
      premium: dec6(premium),
      exchangeFee: dec6(taker), // balanced crosses at the window's end: the worst case is taker
      exchangeFeeMaker: dec6(maker),
      exchangeFeeTaker: dec6(taker),
      platformFee: dec6(platform),
      netPremium: dec6(premium - taker - platform),
      exchangeFeeShareBps: share(taker),
      platformFeeShareBps: share(platform),
      feeShareBps: share(taker + platform),
      annualisedYieldBps: Number((mark * 10_000n * 365n * 86_400_000n) / ((side === 'put' ? strike : index) * tenorMs)),
    }
  }

  const quote = (api: Api, token: string, body: object) =>
    api.app.inject({ method: 'POST', url: '/quotes', headers: { authorization: `Bearer ${token}` }, payload: body })

  it('quotes the put the tick would sell, a wheel as its first put, and a covered call', async () => {
    const token = await signIn(warn.app, newAccount())
    const put = await quote(warn, token, { asset: 'ETH', side: 'put', amount: '5000' })
    expect(put.statusCode).toBe(200)
    expect(put.json()).toMatchObject({
      ...(await expected('ETH', 'put', usdc(5000n), 6)),
      asset: 'ETH',
      side: 'put',
      collateralCurrency: 'USDC',
      collateral: '5000.000000',
      maxFeeShareBps: 0,
      feeSharePolicy: 'warn',
      wouldPlace: true,
      reason: null,
      warning: { code: 'FEES_EXCEED_PREMIUM_SHARE' },
      quotedAt: new Date(START).toISOString(),
    })
    const wheel = await quote(warn, token, { asset: 'ETH', side: 'wheel', amount: '5000' })
    expect({ ...wheel.json(), quotedAt: 0 }).toEqual({ ...put.json(), quotedAt: 0 })
    const btcCall = await quote(warn, token, { asset: 'BTC', side: 'call', amount: '0.5' })
    expect(btcCall.statusCode).toBe(200)
    expect(btcCall.json()).toMatchObject({
      ...(await expected('BTC', 'call', 5n * 10n ** 17n, 18)),
      side: 'call',
      collateralCurrency: 'BTC',
    })
  })

  it('a collateral below the minimum size is quoted with the reason the tick would not sell it', async () => {
    const token = await signIn(warn.app, newAccount())
    const res = await quote(warn, token, { asset: 'ETH', side: 'put', amount: '50' })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ wouldPlace: false, reason: expect.stringMatching(/minimum size/) })
  })

  it('answers 400 for more decimals than the collateral has, 401 without a token', async () => {
    const token = await signIn(warn.app, newAccount())
    expect((await quote(warn, token, { asset: 'ETH', side: 'put', amount: '1.0000001' })).statusCode).toBe(400)
    expect((await quote(warn, token, { asset: 'ETH', side: 'straddle', amount: '1' })).statusCode).toBe(400)
    const anon = await warn.app.inject({
      method: 'POST',
      url: '/quotes',
      payload: { asset: 'ETH', side: 'put', amount: '1' },
    })
    expect(anon.statusCode).toBe(401)
  })

  it('warn: POST /positions accepts and carries the warning', async () => {
    const { token } = await fundedUser(warn, usdc(1000n))
    const res = await warn.app.inject({
      method: 'POST',
      url: '/positions',
      headers: { authorization: `Bearer ${token}` },
      payload: { asset: 'ETH', side: 'put', amount: '600' },
    })
    expect(res.statusCode).toBe(202)
    expect(res.json().warning).toMatchObject({ code: 'FEES_EXCEED_PREMIUM_SHARE', message: expect.any(String) })
  })

  it('refuse: a small position whose base fee takes too much is refused with the figures, a large one accepted', async () => {
    const small = await expected('ETH', 'put', usdc(300n), 6)
    const large = await expected('ETH', 'put', usdc(5000n), 6)
    // the base fee weighs on the small size only
    expect(small.feeShareBps).toBeGreaterThan(large.feeShareBps)
    threshold = Math.floor((small.feeShareBps + large.feeShareBps) / 2)
    refuse = await startApi({
      EXCHANGE_HTTP_URL: sim.v3HttpUrl,
      EXCHANGE_WS_URL: sim.v3WsUrl,
      FEE_SHARE_POLICY: 'refuse',
      MAX_FEE_SHARE_BPS: String(threshold),
    })
    refuse.clock.set(START)
    const { token, userId } = await fundedUser(refuse, usdc(10_000n))
    const q = await quote(refuse, token, { asset: 'ETH', side: 'put', amount: '300' })
    expect(q.json()).toMatchObject({ feeShareBps: small.feeShareBps, warning: { code: 'FEES_EXCEED_PREMIUM_SHARE' } })
    expect((await quote(refuse, token, { asset: 'ETH', side: 'put', amount: '5000' })).json().warning).toBeNull()

    const post = (amount: string) =>
      refuse.app.inject({
        method: 'POST',
        url: '/positions',
        headers: { authorization: `Bearer ${token}` },
        payload: { asset: 'ETH', side: 'put', amount },
      })
    const refused = await post('300')
    expect(refused.statusCode).toBe(422)
    expect(refused.json()).toMatchObject({
      code: 'FEES_EXCEED_PREMIUM_SHARE',
      details: {
        instrument: small.instrument,
        size: small.size,
        premium: small.premium,
        exchangeFee: small.exchangeFee,
        platformFee: small.platformFee,
        netPremium: small.netPremium,
        feeShareBps: small.feeShareBps,
        maxFeeShareBps: threshold,
      },
    })
    const { sql } = refuse.ctx.database
    expect(await sql`select id from positions where user_id = ${userId}`).toHaveLength(0)
    expect(await freeBalance(sql, userId, 'USDC')).toBe(usdc(10_000n))
    const accepted = await post('5000')
    expect(accepted.statusCode).toBe(202)
    expect(accepted.json().warning).toBeUndefined()
    expect(await freeBalance(sql, userId, 'USDC')).toBe(usdc(5000n))
  })

  it('GET /trading-config: the smallest size whose fees stay within the share, checked one step each side', async () => {
    const res = await refuse.app.inject({ method: 'GET', url: '/trading-config' })
    expect(res.statusCode).toBe(200)
    const m = res.json().minimumSizes
    expect(m).toMatchObject({ maxFeeShareBps: threshold, feeSharePolicy: 'refuse' })
    const put = m.assets.ETH.find((s: { side: string }) => s.side === 'put')
    expect(put).toMatchObject({ collateralCurrency: 'USDC', reason: null })
    const token = await signIn(refuse.app, newAccount())
    const at = await quote(refuse, token, { asset: 'ETH', side: 'put', amount: put.collateral })
    expect(at.json()).toMatchObject({ size: put.contracts, instrument: put.instrument, warning: null })
    // one amount step (0.01 ETH) less exceeds the share
    const less = (toE18(put.contracts) - E18 / 100n) * toE18(at.json().strike)
    const below = await quote(refuse, token, { asset: 'ETH', side: 'put', amount: dec6(less / E18 / USDC) })
    expect(below.json().warning).toMatchObject({ code: 'FEES_EXCEED_PREMIUM_SHARE' })
  })

  it('an unreadable exchange: 503 QUOTE_UNAVAILABLE, and POST /positions under warn says the fees were not checked', async () => {
    const down = await startApi({ FEE_SHARE_POLICY: 'warn' }) // the test environment's unreachable exchange
    try {
      const { token } = await fundedUser(down, usdc(1000n))
      const q = await quote(down, token, { asset: 'ETH', side: 'put', amount: '500' })
      expect(q.statusCode).toBe(503)
      expect(q.json()).toMatchObject({ code: 'QUOTE_UNAVAILABLE' })
      const p = await down.app.inject({
        method: 'POST',
        url: '/positions',
        headers: { authorization: `Bearer ${token}` },
        payload: { asset: 'ETH', side: 'put', amount: '500' },
      })
      expect(p.statusCode).toBe(202)
      expect(p.json().warning).toMatchObject({ code: 'FEES_NOT_CHECKED' })
      const config = await down.app.inject({ method: 'GET', url: '/trading-config' })
      expect(config.json().minimumSizes.assets.ETH[0]).toMatchObject({ contracts: null, reason: expect.any(String) })
    } finally {
      await down.close()
    }
  })
})
