/**
 * The simulator's v3 wire layer over real HTTP and WebSocket, driven by hand-built requests (not
 * our client) so each v3 rule of docs/exchange-v3.md is seen on the wire: the owner as wallet,
 * nanosecond nonces (a millisecond one is refused: 11018), the signature expiry window (11011),
 * the v3 domain and trade module (an order signed under the v2 deployment's Matching domain is refused: 14014), bare or 0x signatures,
 * exact 19-digit integer nonces, slim tickers, one engine underneath (one market, one book).
 */

import {
  encodeTradeDataV3,
  encodeTransferSpot,
  optionName,
  signV3Action,
  signV3Login,
  toE18,
  V3_MODULES,
  v3AuthHeaders,
  v3WsLoginParams,
} from '@wh/exchange'
import type { Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { COLLATERALS } from '../src/assets'
import { type RunningSimulator, startDeriveSimulator } from '../src/server'

const START = Date.UTC(2026, 0, 5, 0, 0)
const EXPIRY_SEC = Date.UTC(2026, 0, 5, 8) / 1000
const PUT = optionName('ETH', EXPIRY_SEC, '2900', 'P')
const CHAIN = 901
const ownerKey = generatePrivateKey()
const owner = privateKeyToAccount(ownerKey).address
const sessionKey = generatePrivateKey()
const signer = privateKeyToAccount(sessionKey).address

let sim: RunningSimulator
let sub = 0
let other = 0
let seq = 0n

async function rpc(method: string, params: unknown, auth = method.startsWith('private/')) {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (auth) Object.assign(headers, v3AuthHeaders(await signV3Login(owner, sessionKey, sim.control.nowMs())))
  const body = typeof params === 'string' ? params : JSON.stringify(params)
  const res = await fetch(`${sim.v3HttpUrl}/${method}`, { method: 'POST', headers, body })
  // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever JSON the wire carries
  return (await res.json()) as { result?: any; error?: { code: number; message: string; data: string | null } }
}

/** The Matching contract of Derive's retired v2 testnet: the domain a v2 signature named. */
const RETIRED_V2_TESTNET_MATCHING = '0x3cc154e220c2197c5337b7Bd13363DD127Bc0C6E' as const

const nowNs = () => BigInt(sim.control.nowMs()) * 1_000_000n + ++seq
const expiry = () => BigInt(Math.floor(sim.control.nowMs() / 1000) + 3600)

async function orderParams(o: { nonce?: bigint; expirySec?: bigint; v2?: boolean; bare?: boolean } = {}) {
  const inst = (await rpc('public/get_instrument', { instrument_name: PUT })).result
  const data = encodeTradeDataV3({
    asset: inst.base_asset_address,
    subId: BigInt(inst.base_asset_sub_id),
    limitPriceE18: toE18('500'),
    amountE18: toE18('1'),
    maxFeeE18: toE18('10'),
    recipientId: BigInt(sub),
    isBid: false,
  })
  const nonce = o.nonce ?? nowNs()
  const expirySec = o.expirySec ?? expiry()
  const action = { subaccountId: BigInt(sub), nonce, module: V3_MODULES.trade, data, expirySec, owner, signer }
  let signature: Hex = o.v2
    ? await signV3Action(action, { chainId: CHAIN, verifyingContract: RETIRED_V2_TESTNET_MATCHING }, sessionKey)
    : await signV3Action(action, { chainId: CHAIN }, sessionKey)
  if (o.bare) signature = signature.slice(2) as Hex
  return {
    subaccount_id: sub,
    instrument_name: PUT,
    direction: 'sell',
    amount: '1',
    limit_price: '500',
    max_fee: '10',
    time_in_force: 'post_only',
    label: 'v3-sim',
    nonce: nonce.toString(),
    signer,
    signature,
    signature_expiry_sec: Number(expirySec),
  }
}

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: CHAIN, startMs: START })
  sim.control.registerWallet({ wallet: owner, sessionKeys: [signer] })
  sim.control.setPrice('ETH', '3000')
  sub = sim.control.openSubaccount(owner, { USDC: '10000' })
  other = sim.control.openSubaccount(owner, {})
})
afterAll(async () => sim?.close())

describe('simulator v3 layer', () => {
  it('serves public reads in v3 shapes: paginated instruments, slim ticker, currency with spot entries', async () => {
    const all = (
      await rpc('public/get_all_instruments', {
        instrument_type: 'option',
        expired: false,
        currency: 'ETH',
        page_size: 5,
      })
    ).result
    expect(all.instruments).toHaveLength(5)
    expect(all.pagination.num_pages).toBeGreaterThan(1)
    const t = (await rpc('public/get_ticker', { instrument_name: PUT })).result
    expect(Object.keys(t).sort()).toEqual([
      'A',
      'B',
      'I',
      'M',
      'a',
      'b',
      'f',
      'maxp',
      'minp',
      'option_pricing',
      'stats',
      't',
    ])
    expect(t.I).toBe('3000')
    const usdc = (await rpc('public/get_currency', { currency: 'USDC' })).result
    expect(usdc.spot[0]).toMatchObject({ address: COLLATERALS.USDC.address, erc20: { decimals: 6 } })
    expect((await rpc('public/get_time', null)).result).toBe(START)
  })

  it('authenticates the owner as the wallet; the v2-style smart-wallet lookup is gone', async () => {
    const subs = (await rpc('private/get_subaccounts', { wallet: owner })).result
    expect(subs).toEqual({ wallet: owner, subaccount_ids: [sub, other] })
    const s = (await rpc('private/get_subaccount', { subaccount_id: sub })).result
    expect(s).toMatchObject({ subaccount_id: sub, currency: ['USDC'], manager_id: 1, failed_to_fetch: false })
    // no auth headers: Derive's 14021 "The X-DeriveWallet header not provided"
    expect((await rpc('private/get_subaccounts', { wallet: owner }, false)).error?.code).toBe(14021)
  })

  it('refuses a millisecond nonce, a short expiry and a v2-domain signature; takes a bare signature once', async () => {
    const ms = await rpc('private/order', await orderParams({ nonce: BigInt(sim.control.nowMs()) * 1000n }))
    expect(ms.error).toMatchObject({ code: 11018, data: 'not_nanoseconds' })
    const short = await rpc('private/order', await orderParams({ expirySec: BigInt(sim.control.nowMs() / 1000 + 60) }))
    expect(short.error?.code).toBe(11011)
    expect((await rpc('private/order', await orderParams({ v2: true }))).error?.code).toBe(14014)
    const params = await orderParams({ bare: true })
    const placed = await rpc('private/order', params)
    expect(placed.result.order).toMatchObject({ order_status: 'open', nonce: params.nonce, direction: 'sell' })
    expect((await rpc('private/order', params)).error?.code).toBe(11017)
    const open = (await rpc('private/get_open_orders', { subaccount_id: sub })).result
    expect(open.orders.map((o: { order_id: string }) => o.order_id)).toEqual([placed.result.order.order_id])
    const cancelled = await rpc('private/cancel', {
      subaccount_id: sub,
      instrument_name: PUT,
      order_id: placed.result.order.order_id,
    })
    expect(cancelled.result).toMatchObject({ order_status: 'cancelled', cancel_reason: 'user_request' })
  })

  it('moves collateral with transfer_spot, reading a 19-digit integer nonce exactly; a replayed or older nonce is refused', async () => {
    const nonce = nowNs()
    const data = encodeTransferSpot({
      toSubaccountId: BigInt(other),
      newSubaccountManager: 0n,
      asset: COLLATERALS.USDC.address,
      subId: 0n,
      amountE18: toE18('250'),
      maxFeeUsdE18: toE18('1'),
    })
    const expirySec = expiry()
    const action = { subaccountId: BigInt(sub), nonce, module: V3_MODULES.transfer, data, expirySec, owner, signer }
    const signature = await signV3Action(action, { chainId: CHAIN }, sessionKey)
    // the integer literal as the spec types it: JSON.stringify cannot write a bigint, so by hand
    const body = (n: bigint) =>
      `{"subaccount_id":${sub},"to_subaccount_id":${other},"new_subaccount_manager":0,"asset_name":"USDC","sub_id":0,` +
      `"amount":"250","max_fee_usd":"1","nonce":${n},"signer":"${signer}","signature":"${signature}","signature_expiry_sec":${expirySec}}`
    const ok = await rpc('private/transfer_spot', body(nonce))
    expect(ok.result).toMatchObject({ op_uuid: expect.any(String), operation_id: expect.any(Number) })
    const moved = (await rpc('private/get_collaterals', { subaccount_id: other })).result
    expect(moved.collaterals).toEqual([expect.objectContaining({ asset_name: 'USDC', amount: '250' })])
    expect((await rpc('private/transfer_spot', body(nonce))).error?.code).toBe(11017)
    // one less in the last digit: the signature no longer matches, but the nonce rule answers first
    expect((await rpc('private/transfer_spot', body(nonce - 1n))).error?.code).toBe(11017)
  })

  it('speaks v3 over the WebSocket: owner login, methods, ticker_slim pushes', async () => {
    const ws = new WebSocket(sim.v3WsUrl)
    await new Promise((r) => ws.once('open', r))
    // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever JSON the wire carries
    const frames: any[] = []
    ws.on('message', (m) => frames.push(JSON.parse(String(m))))
    const call = async (id: number, method: string, params: unknown) => {
      ws.send(JSON.stringify({ id, method, params }))
      for (let i = 0; i < 100 && !frames.some((f) => f.id === id); i++) await new Promise((r) => setTimeout(r, 10))
      return frames.find((f) => f.id === id)
    }
    expect((await call(1, 'private/get_subaccounts', { wallet: owner })).error.code).toBe(14021)
    const login = await call(
      2,
      'public/login',
      v3WsLoginParams(await signV3Login(owner, sessionKey, sim.control.nowMs())),
    )
    expect(login.result).toEqual([sub, other])
    expect((await call(3, 'private/get_positions', { subaccount_id: sub })).result).toEqual({
      subaccount_id: sub,
      positions: [],
    })
    const channel = `ticker_slim.${PUT}.1000`
    expect((await call(4, 'subscribe', { channels: [channel] })).result.status[channel]).toBe('ok')
    sim.control.setPrice('ETH', '3010')
    for (let i = 0; i < 100 && !frames.some((f) => f.params?.data?.instrument_ticker?.I === '3010'); i++)
      await new Promise((r) => setTimeout(r, 10))
    expect(frames.find((f) => f.params?.channel === channel)?.params.data.instrument_ticker).toHaveProperty('M')
    expect(frames.some((f) => f.params?.data?.instrument_ticker?.I === '3010')).toBe(true)
    ws.close()
  })
})
