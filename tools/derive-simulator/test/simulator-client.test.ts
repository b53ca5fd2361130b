/**
 * The v3 client against the simulator over real HTTP and WebSocket, for what the simulator's
 * engine and wire refuse and map: login refusals (a stranger's key, a stale timestamp, no login
 * on the socket), the legacy X-Lyra* header spelling, tampered order and movement signatures,
 * expired and over-large movements, fills with the option fee, post-only crossings, typed
 * refusals, a week of expiries, injected transport failures and rate limits through
 * control.failNext, calls logged without secrets, and the v2 routes gone. One simulator for the
 * file; the tests run in order and share its state and clock.
 */

import {
  DeriveClient,
  type DeriveClientOptions,
  ExchangeAuthError,
  type ExchangeCallLog,
  ExchangeInsufficientMarginError,
  ExchangeOrderRejectedError,
  ExchangeRateLimitedError,
  ExchangeUnavailableError,
  ExchangeUnknownInstrumentError,
  fromE18,
  minBig,
  mulE18,
  optionName,
  RPC,
  type SignedTransfer,
  signV3Login,
  toE18,
} from '@wh/exchange'
import { type Hex, recoverAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type RunningSimulator, startDeriveSimulator } from '../src/index'

const START = Date.UTC(2026, 0, 5, 0, 0) // a Monday; first expiry 08:00 the same day
const EXPIRY_SEC = Date.UTC(2026, 0, 5, 8) / 1000
const CALL = optionName('ETH', EXPIRY_SEC, '3100', 'C')
const CHAIN = 901
const NO_WAIT = { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 }

let sim: RunningSimulator
let client: DeriveClient
const sessionKey = generatePrivateKey()
const signer = privateKeyToAccount(sessionKey).address
const owner = privateKeyToAccount(generatePrivateKey()).address
const logs: ExchangeCallLog[] = []
let funding = 0
let subA = 0
let subB = 0
/** the account's subaccounts: its fallback (opened by the first L1 deposit), the funding one, A and B */
let all: number[] = []

function makeClient(over: Partial<DeriveClientOptions> = {}) {
  return new DeriveClient({
    httpUrl: sim.v3HttpUrl,
    wsUrl: sim.v3WsUrl,
    wallet: owner,
    sessionKey,
    chainId: CHAIN,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: NO_WAIT,
    logger: { info: (o) => logs.push(o), warn: (o) => logs.push(o) },
    fundingSubaccountId: funding,
    ...over,
  })
}

/** what a row's jsonb column gives back */
const stored = (a: SignedTransfer): SignedTransfer => JSON.parse(JSON.stringify(a))
const usdcE18 = (id: number) => sim.engine.subaccounts.get(id)?.balances.get('USDC') ?? 0n

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: CHAIN, startMs: START })
  sim.control.registerWallet({ wallet: owner, sessionKeys: [signer] })
  funding = sim.control.depositL1({ owner, asset: 'USDC', amount: '100000' })
  subA = sim.control.openSubaccount(owner, { USDC: '20000' })
  subB = sim.control.openSubaccount(owner, { USDC: '1000' })
  all = [sim.control.subaccountsOf(owner).fallbackSubaccountId ?? -1, funding, subA, subB]
  client = makeClient()
})

afterAll(async () => {
  await sim?.close()
})

describe('the v3 client against the simulator', () => {
  it('refuses a signer that is neither the owner nor its session key, a stale login, and a private call on a socket without login', async () => {
    expect((await client.getSubaccounts()).subaccount_ids).toEqual(all)
    const stranger = makeClient({ sessionKey: generatePrivateKey() })
    await expect(stranger.getSubaccounts()).rejects.toBeInstanceOf(ExchangeAuthError)
    const late = makeClient({ clock: { now: () => new Date(sim.control.nowMs() - 10 * 60_000) } })
    await expect(late.getSubaccounts()).rejects.toBeInstanceOf(ExchangeAuthError)
    const anon = await client.connectWs({ login: false })
    try {
      await expect(anon.call('private/get_subaccounts', { wallet: owner })).rejects.toBeInstanceOf(ExchangeAuthError)
    } finally {
      await anon.close()
    }
  })

  it('takes the legacy X-Lyra* header spelling too', async () => {
    const p = await signV3Login(owner, sessionKey, sim.control.nowMs())
    const res = await fetch(`${sim.v3HttpUrl}/private/get_subaccounts`, {
      method: 'POST',
      headers: { 'X-LyraWallet': p.wallet, 'X-LyraTimestamp': p.timestamp, 'X-LyraSignature': p.signature },
      body: JSON.stringify({ wallet: owner }),
    })
    const body = (await res.json()) as { result: { subaccount_ids: number[] } }
    expect(body.result.subaccount_ids).toEqual(all)
  })

  it('refuses a tampered order signature (14014); order_debug shows the digest the signer signed', async () => {
    const req = {
      subaccount_id: subA,
      instrument_name: CALL,
      direction: 'sell' as const,
      amount: '1',
      limit_price: '5',
      max_fee: '10',
    }
    const params = await client.signedOrderParams(req)
    const debug = await client.privateCall<{ typed_data_hash: Hex }>('order_debug', params)
    expect(await recoverAddress({ hash: debug.typed_data_hash, signature: params.signature as Hex })).toBe(signer)
    const tampered = (await client.privateCall('order', { ...params, limit_price: '4.9' }).catch((e) => e)) as unknown
    expect(tampered).toBeInstanceOf(ExchangeAuthError)
    expect((tampered as ExchangeAuthError).rpcCode).toBe(RPC.SIGNATURE_INVALID)
    const other = await client.privateCall('order', { ...params, limit_price: '1000' }).catch((e) => e)
    expect(other).toBeInstanceOf(ExchangeAuthError)
    expect([...sim.engine.orders.values()].filter((o) => o.subaccountId === subA)).toEqual([])
  })

  it('a sell crossing the bid fills at once as taker with the option fee, and shows in the history and the position', async () => {
    const ticker = await client.getTicker(CALL)
    expect(Number(ticker.option_pricing?.delta)).toBeGreaterThan(0)
    const { order, trades } = await client.order({
      subaccount_id: subA,
      instrument_name: CALL,
      direction: 'sell',
      amount: '1',
      limit_price: ticker.best_bid_price,
      max_fee: '10',
    })
    expect(order.order_status).toBe('filled')
    expect(trades).toHaveLength(1)
    const t = trades[0]!
    expect(t.trade_id).toMatch(/[0-9a-f-]{36}/)
    expect(t.liquidity_role).toBe('taker')
    // Derive's option taker fee: $0.50 plus 0.04 % of the index (3000: $1.20), capped at 12.5 % of the price
    expect(ticker.index_price).toBe('3000')
    const price = toE18(t.trade_price)
    const expected = toE18('0.5') + minBig(toE18('1.2'), mulE18(price, toE18('0.125')))
    expect(t.trade_fee).toBe(fromE18(expected))
    const hist = await client.getTradeHistory({ subaccount_id: subA })
    expect(hist.trades.map((x) => x.trade_id)).toContain(t.trade_id)
    const pos = (await client.getSubaccount(subA)).positions.find((p) => p.instrument_name === CALL)
    expect(pos?.amount).toBe('-1')
  })

  it('refuses a post-only order that would cross (11008); a resting one can be cancelled', async () => {
    const ticker = await client.getTicker('ETH-PERP')
    const cross = client.order({
      subaccount_id: subA,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '0.1',
      limit_price: ticker.best_ask_price,
      max_fee: '10',
      time_in_force: 'post_only',
    })
    await expect(cross).rejects.toMatchObject({ code: 'EXCHANGE_ORDER_REJECTED', rpcCode: RPC.POST_ONLY_REJECT })
    const { order } = await client.order({
      subaccount_id: subA,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '0.1',
      limit_price: '2500',
      max_fee: '10',
      time_in_force: 'post_only',
    })
    expect(order.order_status).toBe('open')
    expect((await client.getOpenOrders(subA)).orders.map((o) => o.order_id)).toEqual([order.order_id])
    const cancelled = await client.cancel({
      subaccount_id: subA,
      instrument_name: 'ETH-PERP',
      order_id: order.order_id,
    })
    expect(cancelled.order_status).toBe('cancelled')
    expect((await client.getOpenOrders(subA)).orders).toEqual([])
  })

  it('maps refusals to typed errors: margin, unknown instrument, a price off the tick', async () => {
    const big = client.order({
      subaccount_id: subB,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '100',
      limit_price: '3100',
      max_fee: '10',
    })
    await expect(big).rejects.toBeInstanceOf(ExchangeInsufficientMarginError)
    await expect(client.getTicker('ETH-20990101-1-C')).rejects.toBeInstanceOf(ExchangeUnknownInstrumentError)
    const badTick = client.order({
      subaccount_id: subA,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '0.1',
      limit_price: '3000.001',
      max_fee: '10',
    })
    await expect(badTick).rejects.toBeInstanceOf(ExchangeOrderRejectedError)
  })

  it('stored movements: a tampered copy is refused and moves nothing, the original still goes; an expired one and one above the free collateral are refused', async () => {
    const dep = stored(
      await client.signTransfer({ method: 'deposit', subaccount_id: subB, asset_name: 'USDC', amount: '1' }),
    )
    const before = usdcE18(subB)
    const tampered = await client.sendSigned({ ...dep, params: { ...dep.params, amount: '900' } }).catch((e) => e)
    expect(tampered).toBeInstanceOf(ExchangeAuthError)
    expect(tampered.rpcCode).toBe(RPC.SIGNATURE_INVALID)
    expect(usdcE18(subB)).toBe(before)
    await client.sendSigned(dep)
    expect(usdcE18(subB) - before).toBe(toE18('1'))

    const soon = Math.floor(sim.control.nowMs() / 1000) + 301
    const late = stored(
      await client.signTransfer({
        method: 'deposit',
        subaccount_id: subB,
        asset_name: 'USDC',
        amount: '1',
        signature_expiry_sec: soon,
      }),
    )
    sim.control.advance(60_000)
    const expired = await client.sendSigned(late).catch((e) => e)
    expect(expired).toBeInstanceOf(ExchangeOrderRejectedError)
    expect(expired.rpcCode).toBe(RPC.INVALID_SIGNATURE_EXPIRY)
    expect(usdcE18(subB) - before).toBe(toE18('1'))

    const big = await client.signTransfer({
      method: 'withdraw',
      subaccount_id: subB,
      asset_name: 'USDC',
      amount: '5000',
    })
    await expect(client.sendSigned(big)).rejects.toBeInstanceOf(ExchangeInsufficientMarginError)
    expect(usdcE18(subB) - before).toBe(toE18('1'))
  })

  it('a week of expiries runs in one call: the live listing holds only later expiries, the expired one settled prices', async () => {
    sim.control.advance(7 * 24 * 3_600_000)
    const live = await client.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    expect(live.length).toBeGreaterThan(0)
    expect(live.every((i) => (i.option_details?.expiry ?? 0) * 1000 > sim.control.nowMs())).toBe(true)
    const expired = await client.getInstruments({ currency: 'ETH', instrument_type: 'option', expired: true })
    expect(expired.map((i) => i.instrument_name)).toContain(CALL)
    expect(expired.every((i) => i.option_details?.settlement_price != null)).toBe(true)
  })

  it('retries reads after an injected transport failure but never repeats an order; an injected rate limit surfaces typed', async () => {
    sim.control.failNext({ method: 'public/get_ticker', httpStatus: 503 })
    expect((await client.getTicker('ETH-PERP')).instrument_name).toBe('ETH-PERP')
    expect(sim.engine.failures).toEqual([])
    sim.control.failNext({ method: 'private/order', httpStatus: 503 })
    const before = (await client.getTradeHistory({ subaccount_id: subA })).trades.length
    const order = client.order({
      subaccount_id: subA,
      instrument_name: 'ETH-PERP',
      direction: 'sell',
      amount: '1',
      limit_price: '3000',
      max_fee: '10',
    })
    await expect(order).rejects.toBeInstanceOf(ExchangeUnavailableError)
    expect((await client.getTradeHistory({ subaccount_id: subA })).trades.length).toBe(before)
    sim.control.failNext({ method: 'public/get_time', code: RPC.RATE_LIMITED, count: 3 })
    await expect(client.getTime()).rejects.toBeInstanceOf(ExchangeRateLimitedError)
    expect(await client.getTime()).toBe(sim.control.nowMs())
  })

  it('logs every call without keys or signatures', () => {
    expect(logs.length).toBeGreaterThan(10)
    const text = JSON.stringify(logs)
    expect(text).not.toContain(sessionKey.slice(2))
    expect(text).not.toMatch(/0x[0-9a-f]{130}/i)
  })

  it('serves no v2 wire: POST /public/* is not found and the /ws socket is refused', async () => {
    const res = await fetch(`${sim.httpUrl}/public/get_time`, { method: 'POST', body: '{}' })
    expect(res.status).toBe(404)
    const ws = new WebSocket(`${sim.httpUrl.replace('http', 'ws')}/ws`)
    const outcome = await new Promise<string>((resolve) => {
      ws.once('open', () => resolve('open'))
      ws.once('error', () => resolve('refused'))
    })
    ws.terminate()
    expect(outcome).toBe('refused')
  })
})
