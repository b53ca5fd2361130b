/**
 * The real client against the simulator over real HTTP and WebSocket: request auth, action
 * signatures, collateral movements, orders and fills, settlement, accruals, subscriptions.
 * One simulator for the file; the tests run in order and share its state and clock.
 */
import { recoverAddress } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DeriveClient,
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
  type RunningSimulator,
  startDeriveSimulator,
  toE18,
} from '../src/index'

const START = Date.UTC(2026, 0, 5, 0, 0) // a Monday; first expiry 08:00 the same day
const EXPIRY_SEC = Date.UTC(2026, 0, 5, 8) / 1000
const CALL = optionName('ETH', EXPIRY_SEC, '3100', 'C')
const NO_WAIT = { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 }

let sim: RunningSimulator
let client: DeriveClient
const sessionKey = generatePrivateKey()
const signer = privateKeyToAccount(sessionKey).address
const wallet = privateKeyToAccount(generatePrivateKey()).address // stands in for the smart-contract wallet
const logs: ExchangeCallLog[] = []
let subA = 0
let subB = 0

function makeClient(over: Partial<ConstructorParameters<typeof DeriveClient>[0]> = {}) {
  return new DeriveClient({
    httpUrl: sim.httpUrl,
    wsUrl: sim.wsUrl,
    wallet,
    sessionKey,
    chainId: 957,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: NO_WAIT,
    logger: { info: (o) => logs.push(o), warn: (o) => logs.push(o) },
    ...over,
  })
}

const usdc = async (id: number) =>
  (await client.getSubaccount(id)).collaterals.find((c) => c.asset_name === 'USDC')?.amount ?? '0'

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: 957, startMs: START })
  sim.control.registerWallet({ wallet, sessionKeys: [signer] })
  sim.control.fundWallet(wallet, 'USDC', '100000')
  client = makeClient()
})

afterAll(async () => {
  await sim?.close()
})

describe('Derive client against the simulator', () => {
  it('authenticated requests are accepted and a subaccount is created with a signed deposit', async () => {
    expect((await client.getSubaccounts()).subaccount_ids).toEqual([])
    const tx = await client.createSubaccount({ asset_name: 'USDC', amount: '20000' })
    expect(tx.transaction_id).toMatch(/[0-9a-f-]{36}/)
    const ids = (await client.getSubaccounts()).subaccount_ids
    expect(ids).toHaveLength(1)
    subA = ids[0]!
    expect(await usdc(subA)).toBe('20000')
    expect(sim.control.walletBalance(wallet, 'USDC')).toBe('80000')
  })

  it('a signer that is not a session key of the wallet, or a stale timestamp, is refused', async () => {
    const stranger = makeClient({ sessionKey: generatePrivateKey() })
    await expect(stranger.getSubaccounts()).rejects.toBeInstanceOf(ExchangeAuthError)
    const late = makeClient({ clock: { now: () => new Date(sim.control.nowMs() - 10 * 60_000) } })
    await expect(late.getSubaccounts()).rejects.toBeInstanceOf(ExchangeAuthError)
  })

  it('the legacy X-Lyra* header spelling is accepted too', async () => {
    const p = await client.authProof()
    const res = await fetch(`${sim.httpUrl}/private/get_subaccounts`, {
      method: 'POST',
      headers: { 'X-LyraWallet': p.wallet, 'X-LyraTimestamp': p.timestamp, 'X-LyraSignature': p.signature },
      body: JSON.stringify({ wallet }),
    })
    const body = (await res.json()) as { result: { subaccount_ids: number[] } }
    expect(body.result.subaccount_ids).toEqual([subA])
  })

  it('deposit, transfer between subaccounts and withdrawal move collateral and leave histories', async () => {
    sim.control.registerWallet({ wallet }) // idempotent
    await client.createSubaccount({ asset_name: 'USDC', amount: '1000' })
    subB = (await client.getSubaccounts()).subaccount_ids.find((id) => id !== subA)!
    await client.deposit({ subaccount_id: subB, asset_name: 'USDC', amount: '500.5' })
    await client.transferErc20({
      subaccount_id: subB,
      recipient_subaccount_id: subA,
      asset_name: 'USDC',
      amount: '300',
    })
    await client.withdraw({ subaccount_id: subB, asset_name: 'USDC', amount: '200.5' })
    expect(await usdc(subB)).toBe('1000')
    expect(await usdc(subA)).toBe('20300')
    expect(sim.control.walletBalance(wallet, 'USDC')).toBe('78700')
    expect((await client.getDepositHistory({ subaccount_id: subB })).events.map((e) => e.amount)).toEqual([
      '1000',
      '500.5',
    ])
    expect((await client.getWithdrawalHistory({ subaccount_id: subB })).events.map((e) => e.amount)).toEqual(['200.5'])
    const t = (await client.getErc20TransferHistory({ subaccount_id: subA })).events
    expect(t).toMatchObject([{ amount: '300', counterparty_subaccount_id: subB, is_outgoing: false }])
  })

  it('a withdrawal above the balance is refused as insufficient margin', async () => {
    await expect(client.withdraw({ subaccount_id: subB, asset_name: 'USDC', amount: '5000' })).rejects.toBeInstanceOf(
      ExchangeInsufficientMarginError,
    )
  })

  it('a tampered action signature is refused; order_debug shows the digest the signer signed', async () => {
    const req = {
      subaccount_id: subA,
      instrument_name: CALL,
      direction: 'sell' as const,
      amount: '1',
      limit_price: '5',
      max_fee: '10',
    }
    const params = await client.signedOrderParams(req)
    const debug = await client.privateCall<{ typed_data_hash: `0x${string}` }>('order_debug', params)
    expect(await recoverAddress({ hash: debug.typed_data_hash, signature: params.signature as `0x${string}` })).toBe(
      signer,
    )
    const tampered = { ...params, limit_price: '4.9' }
    const err = (await client.privateCall('order', tampered).catch((e: unknown) => e)) as ExchangeAuthError
    expect(err).toBeInstanceOf(ExchangeAuthError)
    expect(err.rpcCode).toBe(14014)
    const replay = await client.privateCall('order', { ...params, limit_price: '1000' }).catch((e) => e)
    expect(replay).toBeInstanceOf(ExchangeAuthError)
  })

  it('a sell crossing the bid fills at once with a trade id and the option fee', async () => {
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
    const price = toE18(t.trade_price)
    const expected = toE18('0.5') + minBig(toE18('1.2'), mulE18(price, toE18('0.125')))
    expect(t.trade_fee).toBe(fromE18(expected))
    const hist = await client.getTradeHistory({ subaccount_id: subA })
    expect(hist.trades.map((x) => x.trade_id)).toContain(t.trade_id)
    const pos = (await client.getSubaccount(subA)).positions.find((p) => p.instrument_name === CALL)
    expect(pos?.amount).toBe('-1')
  })

  it('post-only orders that would cross are rejected; resting ones can be cancelled', async () => {
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
    await expect(cross).rejects.toMatchObject({ code: 'EXCHANGE_ORDER_REJECTED', rpcCode: 11008 })
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

  it('maps refusals to typed errors: margin, unknown instrument, rejected order', async () => {
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

  it('a long perp pays funding and USDC earns interest as the clock moves; the call settles at 08:00 UTC', async () => {
    const ask = (await client.getTicker('ETH-PERP')).best_ask_price
    await client.order({
      subaccount_id: subA,
      instrument_name: 'ETH-PERP',
      direction: 'buy',
      amount: '1',
      limit_price: ask,
      max_fee: '10',
    })
    sim.control.setPrice('ETH', '3300')
    sim.control.advance(9 * 3_600_000) // past the 08:00 UTC expiry
    const settled = (await client.getOptionSettlementHistory(subA)).settlements
    expect(settled).toMatchObject([
      { instrument_name: CALL, amount: '-1', settlement_price: '3300', option_settlement_pnl: '-200' },
    ])
    expect((await client.getSubaccount(subA)).positions.map((p) => p.instrument_name)).toEqual(['ETH-PERP'])
    expect((await client.getTicker(CALL)).option_details?.settlement_price).toBe('3300')
    const interest = (await client.getInterestHistory({ subaccount_id: subA })).events
    const funding = (await client.getFundingHistory({ subaccount_id: subA })).events
    expect(interest.length).toBe(9)
    expect(funding.length).toBe(9)
    expect(interest.every((e) => Number(e.interest) > 0)).toBe(true)
    expect(funding.every((e) => e.instrument_name === 'ETH-PERP' && Number(e.funding) < 0)).toBe(true)
    sim.control.advance(24 * 3_600_000)
    expect((await client.getInterestHistory({ subaccount_id: subA })).events.length).toBe(33)
  })

  it('a week of expiries runs in one call and new expiries get listed', async () => {
    sim.control.advance(7 * 24 * 3_600_000)
    const live = await client.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    expect(live.length).toBeGreaterThan(0)
    expect(live.every((i) => (i.option_details?.expiry ?? 0) * 1000 > sim.control.nowMs())).toBe(true)
    const expired = await client.getInstruments({ currency: 'ETH', instrument_type: 'option', expired: true })
    expect(expired.every((i) => i.option_details?.settlement_price !== null)).toBe(true)
  })

  it('WebSocket: login returns the subaccounts, ticker subscriptions follow the price', async () => {
    const ws = await client.connectWs()
    try {
      const seen: { index_price: string }[] = []
      await ws.subscribe(['ticker.ETH-PERP.100'], (_c, data) => {
        seen.push((data as { instrument_ticker: { index_price: string } }).instrument_ticker)
      })
      sim.control.setPrice('ETH', '3456.78')
      await expect.poll(() => seen.map((s) => s.index_price)).toContain('3456.78')
      const sub = await ws.call<{ subaccount_id: number }>('private/get_subaccount', { subaccount_id: subA })
      expect(sub.subaccount_id).toBe(subA)
    } finally {
      await ws.close()
    }
    const anon = await client.connectWs({ login: false })
    try {
      await expect(anon.call('private/get_subaccounts', { wallet })).rejects.toBeInstanceOf(ExchangeAuthError)
    } finally {
      await anon.close()
    }
  })

  it('retries reads after transport failures but never repeats an order; rate limits surface typed', async () => {
    sim.control.failNext({ method: 'public/get_ticker', httpStatus: 503 })
    expect((await client.getTicker('ETH-PERP')).instrument_name).toBe('ETH-PERP')
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
    sim.control.failNext({ method: 'public/get_time', code: -32000, count: 3 })
    await expect(client.getTime()).rejects.toBeInstanceOf(ExchangeRateLimitedError)
  })

  it('logs every call without keys or signatures', () => {
    expect(logs.length).toBeGreaterThan(10)
    const text = JSON.stringify(logs)
    expect(text).not.toContain(sessionKey.slice(2))
    expect(text).not.toMatch(/0x[0-9a-f]{130}/i)
  })
})
