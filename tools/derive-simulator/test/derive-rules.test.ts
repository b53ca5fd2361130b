/**
 * The rules Derive enforces that decide whether money moves, on the simulator's wire (docs/exchange.md
 * "What the simulator enforces", each rule with its source): session-key scopes, expiry and
 * subaccounts, what only the owner may sign, the recipient whitelist (the owner included), nonce
 * windows per action kind, the max_fee floor, rate limits per method class, Derive's error codes,
 * and the control API's checks of its own input. Keys are registered the way Derive registers them:
 * `private/set_session_key` signed by the owner.
 */
import { readFileSync } from 'node:fs'
import {
  DeriveClient,
  l1SetSessionKeyCall,
  optionName,
  type PreparedOwnerAction,
  type ProtocolScope,
  RPC,
  signV3Action,
  V3_METHODS,
} from '@wh/exchange'
import { type Address, decodeFunctionData, type Hex, parseAbi } from 'viem'
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyAction } from '../src/l1-deposits'
import { RATE_LIMIT_CLASS, RateLimiter, rateLimitClassOf } from '../src/rate-limit'
import { type RunningSimulator, startDeriveSimulator } from '../src/server'
import { V3_SIM_METHODS } from '../src/v3/methods'

const START = Date.UTC(2026, 0, 5, 0, 0)
const SUBMIT = parseAbi(['function submit(uint256 actionType, bytes data) payable returns (uint256 actionId)'])
const PUT = optionName('ETH', Date.UTC(2026, 0, 5, 8) / 1000, '2900', 'P')
const CHAIN = 901
const MIN = 60_000
const ownerKey = generatePrivateKey()
const owner = privateKeyToAccount(ownerKey).address

let sim: RunningSimulator
let ownerClient: DeriveClient
let subA = 0
let subB = 0

const nowSec = () => Math.floor(sim.control.nowMs() / 1000)
const code = (e: unknown) => (e as { rpcCode?: number }).rpcCode
const refusal = (p: Promise<unknown>) => p.then(() => 'accepted', code)

/** A client of the owner's account signing with `sessionKey`; `offsetMs` puts its clock off the exchange's. */
function clientOf(sessionKey: Hex, offsetMs = 0): DeriveClient {
  return new DeriveClient({
    httpUrl: sim.v3HttpUrl,
    wsUrl: sim.v3WsUrl,
    wallet: owner,
    sessionKey,
    chainId: CHAIN,
    clock: { now: () => new Date(sim.control.nowMs() + offsetMs) },
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
}

const ownerSig = (p: PreparedOwnerAction) => sign({ hash: p.typedDataHash, privateKey: ownerKey, to: 'hex' })

/** A new key registered by the owner's signed `private/set_session_key`; its private key. */
async function grant(
  scopes: ProtocolScope[],
  o: { subaccountIds?: number[]; lifeSec?: number; offchainScopes?: string[] } = {},
): Promise<Hex> {
  const key = generatePrivateKey()
  const p = ownerClient.prepareSetSessionKey({
    key: privateKeyToAccount(key).address,
    expirySec: nowSec() + (o.lifeSec ?? 86_400),
    scopes,
    ...(o.subaccountIds && { subaccountIds: o.subaccountIds }),
    ...(o.offchainScopes && { offchainScopes: o.offchainScopes }),
  })
  await ownerClient.submitOwnerAction(p, await ownerSig(p))
  return key
}

/** A prepared owner action signed by `key` instead, as a session key would send it. */
async function signedBy(p: PreparedOwnerAction, key: Hex): Promise<Record<string, unknown>> {
  const m = p.typedData.message as Record<string, string>
  const signer = privateKeyToAccount(key).address
  const fields = {
    subaccountId: 0n,
    nonce: BigInt(m.nonce ?? 0),
    module: m.module as Address,
    data: m.data as Hex,
    expirySec: BigInt(m.expiry ?? 0),
    owner,
    signer,
  }
  const signature = await signV3Action(fields, { chainId: CHAIN }, key)
  return { ...p.params, signer, signature }
}

const order = (c: DeriveClient, o: Partial<Parameters<DeriveClient['order']>[0]> = {}) =>
  c.order({
    subaccount_id: subA,
    instrument_name: PUT,
    direction: 'sell',
    amount: '1',
    limit_price: '9000',
    max_fee: '10',
    time_in_force: 'post_only',
    ...o,
  })

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: CHAIN, startMs: START })
  // the account exists, with no session key: every key below is registered by the owner's signature
  sim.control.registerWallet({ wallet: owner })
  sim.control.setPrice('ETH', '3000')
  subA = sim.control.openSubaccount(owner, { USDC: '10000' })
  subB = sim.control.openSubaccount(owner, { USDC: '10000' })
  ownerClient = clientOf(ownerKey)
})
afterAll(async () => sim?.close())

describe('session-key scopes (Derive enforces the tree of protocol scopes)', () => {
  it('an option-trading key orders options but not perps, and may neither transfer nor withdraw (14031)', async () => {
    const c = clientOf(await grant(['trade:orderbook:option']))
    await expect(order(c)).resolves.toMatchObject({ order: { order_status: 'open' } })
    const perp = { instrument_name: 'ETH-PERP', direction: 'buy' as const, amount: '0.1', limit_price: '1' }
    expect(await refusal(order(c, perp))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
    const move = { subaccount_id: subA, to_subaccount_id: subB, asset_name: 'USDC', amount: '1' }
    expect(await refusal(c.transferSpot(move))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
    const pay = { subaccount_id: subA, asset_name: 'USDC', amount: '1', max_fee_usd: '1', recipient: owner }
    expect(await refusal(c.withdrawToL1(pay))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
  })

  it('a key bound to one subaccount acts on and reads no other (14031)', async () => {
    const c = clientOf(await grant(['trade:all'], { subaccountIds: [subA] }))
    await expect(order(c)).resolves.toBeTruthy()
    expect(await refusal(order(c, { subaccount_id: subB }))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
    expect(await refusal(c.getSubaccount(subB))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
  })

  it('a key with neither a protocol scope nor account_info reads nothing; account_info reads', async () => {
    const blind = clientOf(await grant([], { offchainScopes: [] }))
    expect(await refusal(blind.getSubaccounts())).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
    const reader = clientOf(await grant([], { offchainScopes: ['account_info'] }))
    await expect(reader.getSubaccounts()).resolves.toMatchObject({ wallet: owner })
    expect(await refusal(order(reader))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
  })
})

describe('session-key expiry', () => {
  it('an expired key is refused at login and for actions (14030); an unknown one is not found (14026)', async () => {
    const c = clientOf(await grant(['trade:all'], { lifeSec: 600 }))
    await expect(c.getSubaccounts()).resolves.toBeTruthy()
    sim.control.advance(601_000)
    expect(await refusal(c.getSubaccounts())).toBe(RPC.SESSION_KEY_EXPIRED)
    expect(await refusal(order(c))).toBe(RPC.SESSION_KEY_EXPIRED)
    expect(await refusal(clientOf(generatePrivateKey()).getSubaccounts())).toBe(RPC.SESSION_KEY_NOT_FOUND)
  })

  it('an order may not outlive the key that signs it (11011)', async () => {
    const c = clientOf(await grant(['trade:all'], { lifeSec: 900 }))
    expect(await refusal(order(c, { signature_expiry_sec: nowSec() + 3_600 }))).toBe(RPC.INVALID_SIGNATURE_EXPIRY)
    await expect(order(c, { signature_expiry_sec: nowSec() + 600 })).resolves.toBeTruthy()
  })

  it('a key registered over the API must live at least 5 minutes (14039)', async () => {
    const p = ownerClient.prepareSetSessionKey({
      key: privateKeyToAccount(generatePrivateKey()).address,
      expirySec: nowSec() + 400,
      scopes: ['trade:all'],
    })
    sim.control.advance(200_000) // the key's expiry is now 200 s away
    expect(await refusal(ownerClient.submitOwnerAction(p, await ownerSig(p)))).toBe(RPC.SESSION_KEY_EXPIRY_TOO_SHORT)
  })

  it('re-registering a key with a nearer expiry retires it then (the revoke path), and its scopes with it', async () => {
    const key = await grant(['trade:all'])
    const address = privateKeyToAccount(key).address
    const p = ownerClient.prepareSetSessionKey({ key: address, expirySec: nowSec() + 301, scopes: [] })
    await ownerClient.submitOwnerAction(p, await ownerSig(p))
    const listed = (await ownerClient.sessionKeys()).find((k) => k.public_session_key === address)
    expect(listed).toMatchObject({ expiry_sec: nowSec() + 301, protocol_scopes: [] })
    sim.control.advance(302_000)
    expect(await refusal(clientOf(key).getSubaccounts())).toBe(RPC.SESSION_KEY_EXPIRED)
  })
})

describe('what only the owner may sign', () => {
  it('the whitelist: a key without admin is refused (14031); an admin key and the owner change it', async () => {
    const trader = await grant(['trade:all', 'transfer:all', 'withdraw'])
    const p = ownerClient.prepareWhitelist({ add: [owner] })
    const byKey = await signedBy(p, trader)
    expect(await refusal(clientOf(trader).privateCall('update_whitelisted_recipients', byKey))).toBe(
      RPC.UNAUTHORIZED_KEY_SCOPE,
    )
    const admin = await grant(['admin'])
    const q = ownerClient.prepareWhitelist({ add: [owner] })
    await expect(
      clientOf(admin).privateCall('update_whitelisted_recipients', await signedBy(q, admin)),
    ).resolves.toMatchObject({ whitelisted_recipients: [owner] })
  })

  it('a key registers another only with set_session_key, and only within its own scopes, subaccounts and life (14031)', async () => {
    const plain = await grant(['trade:all'])
    const child = privateKeyToAccount(generatePrivateKey()).address
    const register = (scopes: ProtocolScope[], o: { sub?: number[]; life?: number } = {}) =>
      ownerClient.prepareSetSessionKey({
        key: child,
        scopes,
        expirySec: nowSec() + (o.life ?? 3_600),
        ...(o.sub && { subaccountIds: o.sub }),
      })
    const send = async (by: Hex, p: PreparedOwnerAction) =>
      clientOf(by).privateCall('set_session_key', await signedBy(p, by))
    expect(await refusal(send(plain, register(['trade:orderbook:option'])))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
    const maker = await grant(['create_session_key', 'trade:orderbook:all'], { subaccountIds: [subA], lifeSec: 7_200 })
    expect(await refusal(send(maker, register(['trade:orderbook:option', 'withdraw'], { sub: [subA] })))).toBe(
      RPC.UNAUTHORIZED_KEY_SCOPE,
    )
    expect(await refusal(send(maker, register(['trade:orderbook:option'])))).toBe(RPC.UNAUTHORIZED_KEY_SCOPE)
    expect(await refusal(send(maker, register(['trade:orderbook:option'], { sub: [subA], life: 9_000 })))).toBe(
      RPC.UNAUTHORIZED_KEY_SCOPE,
    )
    await expect(send(maker, register(['trade:orderbook:option'], { sub: [subA] }))).resolves.toMatchObject({
      public_session_key: child,
      protocol_scopes: ['trade:orderbook:option'],
    })
  })

  it("a key another account holds is not registered for this one (14011); the other account's key stays its own", async () => {
    const other = privateKeyToAccount(generatePrivateKey()).address
    const theirs = privateKeyToAccount(generatePrivateKey()).address
    sim.control.registerWallet({ wallet: other, sessionKeys: [{ address: theirs, scopes: ['withdraw'] }] })
    const p = ownerClient.prepareSetSessionKey({ key: theirs, expirySec: nowSec() + 3_600, scopes: ['admin'] })
    expect(await refusal(ownerClient.submitOwnerAction(p, await ownerSig(p)))).toBe(
      RPC.SESSION_KEY_REGISTERED_OTHER_ACCOUNT,
    )
    const mine = (await ownerClient.sessionKeys()).map((k) => k.public_session_key)
    expect(mine).not.toContain(theirs)
  })

  it("a key's IP list and off-chain scopes are the owner's (or an admin's) to edit; its label any reader's", async () => {
    const key = await grant(['trade:all'])
    const c = clientOf(key)
    const address = privateKeyToAccount(key).address
    await expect(c.editSessionKey({ key: address, label: 'desk' })).resolves.toMatchObject({ label: 'desk' })
    expect(await refusal(c.editSessionKey({ key: address, ipWhitelist: ['10.0.0.1'] }))).toBe(
      RPC.UNAUTHORIZED_KEY_SCOPE,
    )
    await expect(ownerClient.editSessionKey({ key: address, ipWhitelist: ['10.0.0.1'] })).resolves.toMatchObject({
      ip_whitelist: ['10.0.0.1'],
    })
  })
})

describe("a multisig owner's path: the key set by the owner's own L1 action (OnchainActionManager.submit(51, …))", () => {
  it('registers the key with its scopes, without a signature; an expiry of 0 deletes it; a non-owner sender is ignored', async () => {
    const key = generatePrivateKey()
    const address = privateKeyToAccount(key).address
    const l1Data = (expirySec: number) => {
      const call = l1SetSessionKeyCall({ key: address, expirySec, scopes: ['trade:orderbook:option'] })
      const { args } = decodeFunctionData({ abi: SUBMIT, data: call })
      expect(args[0]).toBe(51n)
      return args[1]
    }
    const stranger = privateKeyToAccount(generatePrivateKey()).address
    expect(applyAction(sim.engine, 51n, l1Data(nowSec() + 3_600), 'l1:a', '0x', stranger)).toBe(false)
    // anyone may submit action 51: data that does not decode is ignored, never thrown at the L1 watcher
    expect(applyAction(sim.engine, 51n, '0x1234', 'l1:x', '0x', owner)).toBe(false)
    expect(applyAction(sim.engine, 51n, l1Data(nowSec() + 3_600), 'l1:b', '0x', owner)).toBe(true)
    await expect(order(clientOf(key))).resolves.toBeTruthy()
    expect(applyAction(sim.engine, 51n, l1Data(0), 'l1:c', '0x', owner)).toBe(true)
    expect(await refusal(clientOf(key).getSubaccounts())).toBe(RPC.SESSION_KEY_NOT_FOUND)
  })
})

describe('the recipient whitelist (Derive: every recipient of a session key, the owner included, unless admin)', () => {
  it('a payout key pays only whitelisted recipients, the owner too (11033); an admin key pays anyone', async () => {
    const hot = privateKeyToAccount(generatePrivateKey()).address
    const payout = clientOf(await grant(['withdraw'], { subaccountIds: [subB] }))
    const pay = (recipient?: Address) =>
      payout.withdrawToL1({
        subaccount_id: subB,
        asset_name: 'USDC',
        amount: '1',
        max_fee_usd: '1',
        ...(recipient && { recipient }),
      })
    const whitelist = async (change: { add?: Address[]; remove?: Address[] }) => {
      const w = ownerClient.prepareWhitelist(change)
      await ownerClient.submitOwnerAction(w, await ownerSig(w))
    }
    await whitelist({ remove: [owner] }) // an earlier test whitelisted the owner
    expect(await refusal(pay(hot))).toBe(RPC.RECIPIENT_NOT_WHITELISTED)
    // the owner is no exception for a session key: named, or as the default recipient
    expect(await refusal(pay(owner))).toBe(RPC.RECIPIENT_NOT_WHITELISTED)
    expect(await refusal(pay())).toBe(RPC.RECIPIENT_NOT_WHITELISTED)
    await whitelist({ add: [hot] })
    await expect(pay(hot)).resolves.toMatchObject({ op_uuid: expect.any(String) })
    expect(await refusal(pay())).toBe(RPC.RECIPIENT_NOT_WHITELISTED)
    await whitelist({ add: [owner] })
    await expect(pay()).resolves.toMatchObject({ op_uuid: expect.any(String) })
    const stranger = privateKeyToAccount(generatePrivateKey()).address
    expect(await refusal(pay(stranger))).toBe(RPC.RECIPIENT_NOT_WHITELISTED)
    const admin = clientOf(await grant(['admin']))
    sim.control.advance(1) // another client's nonces: from a later instant, so they follow the payout key's
    const p = { subaccount_id: subB, asset_name: 'USDC', amount: '1', max_fee_usd: '1', recipient: stranger }
    await expect(admin.withdrawToL1(p)).resolves.toMatchObject({ op_uuid: expect.any(String) })
  })
})

describe('nonces per action kind', () => {
  it('an order nonce must lie within ±5 minutes: 10 minutes and 2 hours old are refused (11018)', async () => {
    const trader = await grant(['trade:all'])
    // signed by a client whose clock is off by `ms`, sent by one on the exchange's time (fresh auth)
    const send = async (ms: number) => {
      const params = await clientOf(trader, ms).signedOrderParams({
        ...orderReq(),
        signature_expiry_sec: nowSec() + 900,
      })
      return refusal(clientOf(trader).privateCall('order', params))
    }
    expect(await send(-10 * MIN)).toBe(RPC.INVALID_NONCE_DATE)
    expect(await send(-120 * MIN)).toBe(RPC.INVALID_NONCE_DATE)
    expect(await send(-4 * MIN)).toBe('accepted')
  })

  it('session-key registrations increase per account: an older nonce is refused (11017)', async () => {
    const a = ownerClient.prepareSetSessionKey({
      key: privateKeyToAccount(generatePrivateKey()).address,
      expirySec: nowSec() + 3_600,
      scopes: [],
    })
    const b = ownerClient.prepareSetSessionKey({
      key: privateKeyToAccount(generatePrivateKey()).address,
      expirySec: nowSec() + 3_600,
      scopes: [],
    })
    await ownerClient.submitOwnerAction(b, await ownerSig(b))
    expect(await refusal(ownerClient.submitOwnerAction(a, await ownerSig(a)))).toBe(RPC.NONCE_NOT_UNIQUE)
  })
})

const orderReq = () => ({
  subaccount_id: subA,
  instrument_name: PUT,
  direction: 'sell' as const,
  amount: '1',
  limit_price: '9000',
  max_fee: '10',
  time_in_force: 'post_only' as const,
})

describe("an order's max_fee floor", () => {
  it('below 2 × taker rate × max(index, limit) + base fee the order is refused (11023); at it, taken', async () => {
    const c = clientOf(await grant(['trade:all']))
    // 2 × 0.0004 × max(3000, 9000) + 0.5 = 7.7
    const e = await order(c, { max_fee: '0' }).catch((x) => x)
    expect([code(e), (e as { details: { data: string } }).details.data]).toEqual([
      RPC.MAX_FEE_TOO_LOW,
      'signed max_fee must be >= 7.7',
    ])
    expect(await refusal(order(c, { max_fee: '7.699999' }))).toBe(RPC.MAX_FEE_TOO_LOW)
    await expect(order(c, { max_fee: '7.7' })).resolves.toBeTruthy()
  })
})

describe("Derive's error codes", () => {
  // the numbers as Derive's catalog has them (docs/exchange.md "Error codes"), not the constants under test
  it('unknown instrument 12001, currency 12002, asset 12000; a wallet not the caller 14020; channels all invalid 13000', async () => {
    const c = clientOf(await grant(['trade:all', 'transfer:all']))
    expect(await refusal(c.publicCall('get_instrument', { instrument_name: 'ETH-NOPE' }))).toBe(12001)
    expect(await refusal(c.publicCall('get_currency', { currency: 'DOGE' }))).toBe(12002)
    const signed = {
      nonce: '1',
      signer: owner,
      signature: `0x${'1'.repeat(130)}`,
      signature_expiry_sec: nowSec() + 900,
    }
    const move = { subaccount_id: subA, to_subaccount_id: subB, new_subaccount_manager: 0, sub_id: 0, max_fee_usd: '0' }
    const doge = { ...move, ...signed, asset_name: 'DOGE', amount: '1' }
    expect(await refusal(c.privateCall('transfer_spot', doge))).toBe(12000)
    const stranger = privateKeyToAccount(generatePrivateKey()).address
    expect(await refusal(c.privateCall('session_keys', { wallet: stranger }))).toBe(14020)
    const ws = await c.connectWs()
    expect(await refusal(ws.call('subscribe', { channels: ['nothing.here', `${subA + 1000}.orders`] }))).toBe(13000)
    await ws.close()
  })
})

describe('rate limits per method class', () => {
  it("a class's allowance per window, per account, refused with -32000; the classes are the spec's", async () => {
    const limited = await startDeriveSimulator({
      chainId: CHAIN,
      startMs: START,
      rateLimits: { windowMs: 3_600_000, matching: 2, nonMatching: 3, endpoint: 1, custom: 1 },
    })
    try {
      const key = generatePrivateKey()
      limited.control.registerWallet({ wallet: owner, sessionKeys: [privateKeyToAccount(key).address] })
      const sub = limited.control.openSubaccount(owner, { USDC: '10000' })
      const c = new DeriveClient({
        httpUrl: limited.v3HttpUrl,
        wallet: owner,
        sessionKey: key,
        chainId: CHAIN,
        clock: { now: () => new Date(limited.control.nowMs()) },
        retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      })
      await c.getInstrument(PUT) // one non-matching call (per IP: no login)
      const o = { ...orderReq(), subaccount_id: sub }
      await c.order(o)
      await c.order(o)
      expect(await refusal(c.order(o))).toBe(RPC.RATE_LIMITED)
      // matching and non-matching are counted apart: reads still go, to their own allowance
      await c.getSubaccount(sub)
      await c.getSubaccount(sub)
      await c.getSubaccount(sub)
      expect(await refusal(c.getSubaccount(sub))).toBe(RPC.RATE_LIMITED)
      expect(await refusal(c.publicCall('get_all_live_instruments', null as never))).toBe('accepted')
      expect(await refusal(c.publicCall('get_all_live_instruments', null as never))).toBe(RPC.RATE_LIMITED)
    } finally {
      await limited.close()
    }
    const spec = JSON.parse(
      readFileSync(new URL('../../../packages/exchange/test/spec/v3/openapi.json', import.meta.url), 'utf8'),
    ) as { paths: Record<string, { post: { 'x-rate-limit-class': string } }> }
    for (const m of Object.keys(V3_SIM_METHODS))
      expect([m, rateLimitClassOf(m)]).toEqual([m, spec.paths[`/${m}`]?.post['x-rate-limit-class']])
    expect(Object.keys(RATE_LIMIT_CLASS).every((m) => (V3_METHODS as readonly string[]).includes(m))).toBe(true)
  })

  it('a window refills the allowance (the limiter on a clock the test moves)', () => {
    let now = 0
    const l = new RateLimiter({ windowMs: 5_000, matching: 1, nonMatching: 1, endpoint: 1, custom: 1 }, () => now)
    expect([l.take('a', 'private/order'), l.take('a', 'private/order'), l.take('b', 'private/order')]).toEqual([
      true,
      false,
      true,
    ])
    now = 5_000
    expect(l.take('a', 'private/order')).toBe(true)
  })
})

describe('the control API checks its input (a 400 naming the field, nothing changed)', () => {
  const post = async (s: RunningSimulator, op: string, body: unknown) => {
    const res = await fetch(`${s.httpUrl}/_sim/${op}`, { method: 'POST', body: JSON.stringify(body) })
    return { status: res.status, body: (await res.json()) as { error?: string; field?: string } }
  }

  it('an unknown field or currency, a malformed amount: 400 naming it; no currency "undefined" appears', async () => {
    const prices = () => fetch(`${sim.httpUrl}/_sim/state`).then((r) => r.json() as Promise<{ prices: object }>)
    const before = await prices()
    expect(await post(sim, 'set_price', { currency: 'ETH', price: '3100', colour: 'red' })).toMatchObject({
      status: 400,
      body: { field: 'colour' },
    })
    expect(await post(sim, 'set_price', { curency: 'ETH', price: '3100' })).toMatchObject({
      status: 400,
      body: { field: 'curency' },
    })
    expect(await post(sim, 'set_price', { currency: 'DOGE', price: '1' })).toMatchObject({
      status: 400,
      body: { field: 'currency' },
    })
    expect(await post(sim, 'fund_wallet', { wallet: owner, asset_name: 'USDC', amount: 'lots' })).toMatchObject({
      status: 400,
      body: { field: 'amount' },
    })
    const grantBody = { wallet: owner, session_keys: [{ address: owner, scopes: ['trade:everything'] }] }
    expect(await post(sim, 'register_wallet', grantBody)).toMatchObject({
      status: 400,
      body: { field: 'session_keys' },
    })
    expect(await prices()).toEqual(before)
  })

  it('an advance the simulator cannot honour (its clients follow the wall clock) is refused with 409 saying why', async () => {
    const s = await startDeriveSimulator({ chainId: CHAIN, clock: 'wall', timeTravel: false })
    try {
      const before = s.control.nowMs()
      const r = await post(s, 'advance', { ms: 3_600_000 })
      expect(r.status).toBe(409)
      expect(r.body.error).toMatch(/time travel is off.*WORKER_CLOCK=exchange/)
      expect(s.control.nowMs() - before).toBeLessThan(60_000)
    } finally {
      await s.close()
    }
    expect(await post(sim, 'advance', { ms: 1 })).toMatchObject({ status: 200 })
  })
})
