/**
 * The client against the simulator over real HTTP and WebSocket: the owner as wallet, reads in
 * the shapes the service uses, an order placed, filled and cancelled under v3 signing, a
 * transfer_spot, and a movement stored under the retired v2 protocol refused by name
 * (docs/exchange-v3.md "What the client does on v3"). The worker's movements and the histories:
 * test/v3-movements.test.ts.
 */

import { DeriveClient, ExchangeOrderRejectedError, optionName, V3UnsupportedError } from '@wh/exchange'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { COLLATERALS } from '../src/assets'
import { type RunningSimulator, startDeriveSimulator } from '../src/index'

const START = Date.UTC(2026, 0, 5, 0, 0)
const EXPIRY_SEC = Date.UTC(2026, 0, 5, 8) / 1000
const PUT = optionName('ETH', EXPIRY_SEC, '2900', 'P')
const sessionKey = generatePrivateKey()
const owner = privateKeyToAccount(generatePrivateKey()).address

let sim: RunningSimulator
let v3: DeriveClient
let sub = 0
let other = 0

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: 901, startMs: START })
  sim.control.registerWallet({ wallet: owner, sessionKeys: [privateKeyToAccount(sessionKey).address] })
  sim.control.setPrice('ETH', '3000')
  sub = sim.control.openSubaccount(owner, { USDC: '20000' })
  other = sim.control.openSubaccount(owner, {})
  const opts = {
    wallet: owner,
    sessionKey,
    chainId: 901,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  }
  v3 = new DeriveClient({ ...opts, httpUrl: sim.v3HttpUrl, wsUrl: sim.v3WsUrl })
})
afterAll(async () => sim?.close())

describe('DeriveClient against the simulator', () => {
  it('reads time, every page of instruments, a ticker and a currency in the shapes the service uses', async () => {
    expect(await v3.getTime()).toBe(START)
    const puts = await v3.getInstruments({ currency: 'ETH', instrument_type: 'option' })
    const listed = [...sim.engine.catalog.byName.values()]
      .filter((i) => i.currency === 'ETH' && i.type === 'option' && i.option && i.option.expirySec * 1000 > START)
      .map((i) => i.name)
    expect(listed.length).toBeGreaterThan(0)
    expect(puts.map((i) => i.instrument_name).sort()).toEqual(listed.sort())
    const t = await v3.getTicker(PUT)
    expect(t).toMatchObject({
      instrument_name: PUT,
      tick_size: (await v3.getInstrument(PUT)).tick_size,
      index_price: '3000',
    })
    expect(Number(t.best_bid_price)).toBeLessThan(Number(t.mark_price))
    expect(Number(t.mark_price)).toBeLessThan(Number(t.best_ask_price))
    const delta = Number(t.option_pricing?.delta)
    expect(delta).toBeLessThan(0)
    expect(delta).toBeGreaterThan(-1)
    const usdc = await v3.getCurrency('USDC')
    expect(usdc.erc20_details?.decimals).toBe(6)
    expect(usdc.protocol_asset_addresses.spot).toBe(COLLATERALS.USDC.address)
  })

  it('reads the owner account: subaccounts, portfolio, collaterals, positions', async () => {
    expect(await v3.getSubaccounts()).toEqual({ wallet: owner, subaccount_ids: [sub, other] })
    const s = await v3.getSubaccount(sub)
    expect(s).toMatchObject({ subaccount_id: sub, currency: 'USDC', margin_type: 'SM' })
    expect(s.collaterals).toEqual([expect.objectContaining({ asset_name: 'USDC', amount: '20000' })])
    expect((await v3.getAllPortfolios()).map((p) => p.subaccount_id)).toEqual([sub, other])
    expect(await v3.getCollaterals(sub)).toEqual(s.collaterals)
    expect(await v3.getPositions(sub)).toEqual([])
  })

  it('places a resting sell, sees it open, cancels it; a crossing sell fills and is in the trade history', async () => {
    const t = await v3.getTicker(PUT)
    const ask = (Number(t.best_ask_price) + 50).toFixed(1)
    const { order } = await v3.order({
      subaccount_id: sub,
      instrument_name: PUT,
      direction: 'sell',
      amount: '1',
      limit_price: ask,
      max_fee: '10',
      time_in_force: 'post_only',
      label: 'v3-resting',
    })
    expect(order).toMatchObject({ order_status: 'open', direction: 'sell', label: 'v3-resting' })
    expect((await v3.getOpenOrders(sub)).orders.map((o) => o.order_id)).toEqual([order.order_id])
    expect((await v3.getOrder(sub, order.order_id)).limit_price).toBe(order.limit_price)
    const cancelled = await v3.cancel({ subaccount_id: sub, instrument_name: PUT, order_id: order.order_id })
    expect(cancelled.order_status).toBe('cancelled')
    expect((await v3.getOpenOrders(sub)).orders).toEqual([])

    const bid = (await v3.getTicker(PUT)).best_bid_price
    const sold = await v3.order({
      subaccount_id: sub,
      instrument_name: PUT,
      direction: 'sell',
      amount: '2',
      limit_price: bid,
      max_fee: '10',
      time_in_force: 'ioc',
      label: 'v3-cross',
    })
    expect(sold.order.order_status).toBe('filled')
    expect(sold.trades.length).toBeGreaterThan(0)
    expect(sold.trades[0]).toMatchObject({ liquidity_role: 'taker', tx_status: 'settled', label: 'v3-cross' })
    const history = await v3.getTradeHistory({ subaccount_id: sub })
    expect(history.trades.map((x) => x.trade_id)).toEqual(sold.trades.map((x) => x.trade_id))
    expect((await v3.getPositions(sub))[0]).toMatchObject({ instrument_name: PUT, amount: '-2' })
    expect(await v3.cancelAll(sub)).toBe('ok')
  })

  it('refuses an order the v3 exchange refuses (expiry under five minutes: 11011)', async () => {
    const expiry = Math.floor(sim.control.nowMs() / 1000) + 60
    const p = { subaccount_id: sub, instrument_name: PUT, direction: 'sell' as const, amount: '1', limit_price: '5000' }
    const err = await v3.order({ ...p, max_fee: '10', signature_expiry_sec: expiry }).catch((e) => e)
    expect(err).toBeInstanceOf(ExchangeOrderRejectedError)
    expect(err.rpcCode).toBe(11011)
  })

  it('moves collateral with one signature (transfer_spot)', async () => {
    const r = await v3.transferSpot({
      subaccount_id: sub,
      to_subaccount_id: other,
      asset_name: 'USDC',
      amount: '100.5',
    })
    expect(r.op_uuid).toMatch(/^[0-9a-f-]{36}$/)
    await v3.transferSpot({ subaccount_id: sub, to_subaccount_id: other, asset_name: 'USDC', amount: '0.25' })
    expect(await v3.getCollaterals(other)).toEqual([expect.objectContaining({ asset_name: 'USDC', amount: '100.75' })])
  })

  it('logs in over the v3 WebSocket as the owner and calls a private method there', async () => {
    const ws = await v3.connectWs()
    try {
      const r = await ws.call<{ subaccount_ids: number[] }>('private/get_subaccounts', { wallet: owner })
      expect(r.subaccount_ids).toEqual([sub, other])
    } finally {
      await ws.close()
    }
  })

  it('refuses by name a movement stored under the retired v2 protocol, and movements without a funding subaccount', async () => {
    // a v2 deposit as the worker stored it: v2's millisecond nonce (a JSON number), no transfer_spot fields
    const stored = {
      method: 'deposit' as const,
      params: {
        subaccount_id: sub,
        asset_name: 'USDC',
        amount: '1',
        nonce: 1_767_571_200_000_123,
        signer: privateKeyToAccount(sessionKey).address,
        signature: `0x${'11'.repeat(65)}` as const,
        signature_expiry_sec: START / 1000 + 3600,
      },
    }
    await expect(v3.sendSigned(stored)).rejects.toBeInstanceOf(V3UnsupportedError)
    await expect(v3.sendSigned(stored)).rejects.toThrow(/deposit stored under v2 is not available on Derive v3/)
    await expect(v3.createSubaccount({ asset_name: 'USDC', amount: '1' })).rejects.toThrow(
      /EXCHANGE_FUNDING_SUBACCOUNT_ID/,
    )
    await expect(v3.getDepositHistory({ subaccount_id: sub })).rejects.toThrow(/funding subaccount/)
  })
})
