/**
 * Spec conformance of the v3 wire (docs/exchange-v3.md "What the client does on v3"): over one
 * scripted session of the v3 client against the simulator's v3 layer (login, the slim ticker
 * feed, instruments, ticker, currency, subaccounts, order, order_debug, open orders, cancel, trade
 * history, transfer, the worker's movements through the funding subaccount and their transaction,
 * an L1 withdrawal, every history after the clock crossed hours and an expiry, a refusal), every
 * HTTP request body the client sends and every `result` (or `error`) the simulator returns is
 * validated against the published openapi.json (JSON Schema 2020-12, as OpenAPI 3.1 says, with
 * its integer and decimal formats enforced); the WebSocket login frames against
 * websocket.asyncapi.json, the subscribe frame and the ticker_slim notifications against
 * subscriptions.asyncapi.json. Every method of V3_METHODS must have been exercised.
 */
import { readFileSync } from 'node:fs'
import { DeriveClient, optionName, type PreparedOwnerAction, V3_METHODS } from '@wh/exchange'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { type RunningSimulator, startDeriveSimulator } from '../src/index'

const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../packages/exchange/test/spec/v3/${name}`, import.meta.url), 'utf8'))
const START = Date.UTC(2026, 0, 5, 0, 0)
const PUT = optionName('ETH', Date.UTC(2026, 0, 5, 8) / 1000, '2900', 'P')

/** The spec's formats: bounded integers and decimal strings (uuid comes from ajv-formats). */
function specAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
  ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
  const int = (min: number, max: number) => ({
    type: 'number' as const,
    validate: (n: number) => Number.isInteger(n) && n >= min && n <= max,
  })
  ajv.addFormat('decimal', { type: 'string', validate: /^-?\d+(\.\d+)?$/ })
  ajv.addFormat('uint8', int(0, 255))
  ajv.addFormat('uint16', int(0, 65_535))
  ajv.addFormat('uint32', int(0, 4_294_967_295))
  ajv.addFormat('int32', int(-2_147_483_648, 2_147_483_647))
  // 64/128-bit words: JSON numbers past 2^53 parse approximately, so only the sign is checkable
  ajv.addFormat('uint64', int(0, Number.MAX_VALUE))
  ajv.addFormat('uint', int(0, Number.MAX_VALUE))
  ajv.addFormat('uint128', int(0, Number.MAX_VALUE))
  ajv.addFormat('int64', int(-Number.MAX_VALUE, Number.MAX_VALUE))
  return ajv
}

type Entries = Record<string, unknown[] | undefined> | undefined

interface Exchange {
  method: string
  request: unknown
  response: { result?: unknown; error?: unknown }
}

const ptr = (...parts: string[]) => parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

let sim: RunningSimulator
let client: DeriveClient
const seen: Exchange[] = []
const frames: Array<Record<string, unknown>> = []
const realSend = WebSocket.prototype.send
const ajv = specAjv()
const sessionKey = generatePrivateKey()
const ownerKey = generatePrivateKey()
const owner = privateKeyToAccount(ownerKey).address

beforeAll(async () => {
  ajv.addSchema(load('openapi.json'), 'openapi')
  ajv.addSchema(load('websocket.asyncapi.json'), 'ws')
  ajv.addSchema(load('subscriptions.asyncapi.json'), 'subs')
  sim = await startDeriveSimulator({ chainId: 901, startMs: START })
  sim.control.registerWallet({ wallet: owner, sessionKeys: [privateKeyToAccount(sessionKey).address] })
  sim.control.setPrice('ETH', '3000')
  sim.control.openSubaccount(owner, { USDC: '5000' })
  sim.control.openSubaccount(owner, {})
  const funding = sim.control.depositL1({ owner, asset: 'USDC', amount: '100000' })
  // both ends of the socket run in this process: every frame either side sends passes here
  WebSocket.prototype.send = function (this: WebSocket, data: unknown, ...rest: unknown[]) {
    frames.push(JSON.parse(String(data)))
    return (realSend as (...a: unknown[]) => void).call(this, data, ...rest)
  } as typeof WebSocket.prototype.send
  const recording: typeof fetch = async (input, init) => {
    const res = await fetch(input, init)
    const text = await res.clone().text()
    const method = new URL(String(input)).pathname.replace(/^\/v3\//, '')
    seen.push({ method, request: JSON.parse(String(init?.body)), response: JSON.parse(text) })
    return res
  }
  client = new DeriveClient({
    httpUrl: sim.v3HttpUrl,
    wsUrl: sim.v3WsUrl,
    wallet: owner,
    sessionKey,
    chainId: 901,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    fetch: recording,
    fundingSubaccountId: funding,
  })
})
afterAll(async () => {
  WebSocket.prototype.send = realSend
  await sim?.close()
})

/** The price feed's part: the slim ticker of an instrument, pushed once the price moves. */
async function tickerFeed(): Promise<void> {
  const ws = await client.connectWs()
  let pushed = 0
  const off = await client.subscribeTicker(ws, PUT, 100, () => pushed++)
  sim.control.setPrice('ETH', '3010')
  for (let i = 0; i < 100 && pushed < 2; i++) await new Promise((r) => setTimeout(r, 10))
  await off()
  sim.control.setPrice('ETH', '3000')
  await ws.close()
}

/** The worker's movements on v3: create, deposit, withdraw through the funding subaccount, and their reads. */
async function movements(sub: number): Promise<void> {
  const before = new Set((await client.getSubaccounts()).subaccount_ids)
  const created = await client.sendSigned(
    await client.signTransfer({ method: 'create_subaccount', asset_name: 'USDC', amount: '600' }),
  )
  await client.getTransaction(created.transaction_id)
  const fresh = (await client.getSubaccounts()).subaccount_ids.find((id) => !before.has(id)) ?? 0
  await client.deposit({ subaccount_id: fresh, asset_name: 'USDC', amount: '150' })
  await client.withdraw({ subaccount_id: fresh, asset_name: 'USDC', amount: '100' })
  await client.getDepositHistory({ subaccount_id: fresh })
  await client.getWithdrawalHistory({ subaccount_id: fresh })
  await client.getErc20TransferHistory({ subaccount_id: fresh })
  await client.getL1DepositHistory({ subaccount_id: client.fundingSubaccountId ?? 0 })
  await client.withdrawToL1({ subaccount_id: sub, asset_name: 'USDC', amount: '25', max_fee_usd: '1' })
  await client.getL1WithdrawalHistory({ subaccount_id: sub })
}

/** What an owner EOA's wallet signs: the prepared typed data (eth_signTypedData_v4), integers back to numbers. */
async function ownerSigns(p: PreparedOwnerAction): Promise<Hex> {
  const m = p.typedData.message
  const message = {
    ...m,
    subaccountId: BigInt(m.subaccountId ?? 0),
    nonce: BigInt(m.nonce ?? 0),
    expiry: BigInt(m.expiry ?? 0),
  }
  return privateKeyToAccount(ownerKey).signTypedData({ ...p.typedData, message } as never)
}

/** Session keys, the whitelist and the account: read, edited, registered and changed by the owner's signature. */
async function keys(sub: number): Promise<void> {
  await client.getAccount()
  await client.sessionKeys()
  await client.editSessionKey({ key: privateKeyToAccount(sessionKey).address, label: 'conformance' })
  const next = privateKeyToAccount(generatePrivateKey()).address
  const expirySec = Math.floor(sim.control.nowMs() / 1000) + 86_400
  const grant = client.prepareSetSessionKey({
    key: next,
    expirySec,
    scopes: ['trade:orderbook:option'],
    subaccountIds: [sub],
  })
  await client.submitOwnerAction(grant, await ownerSigns(grant))
  const whitelist = client.prepareWhitelist({ add: [owner, next] })
  await client.submitOwnerAction(whitelist, await ownerSigns(whitelist))
}

/** What Derive's SDK helpers call that the service does not: currencies, tickers, live instruments, order history. */
async function sdkReads(sub: number): Promise<void> {
  await client.publicCall('get_all_currencies', null as never)
  await client.publicCall('get_tickers', { instrument_type: 'perp', currency: 'ETH' })
  await client.publicCall('get_all_live_instruments', null as never)
  await client.privateCall('get_order_history', { subaccount_id: sub })
}

/** The private channels: orders and balances of a subaccount, pushed as an order rests and is cancelled. */
async function privateFeeds(sub: number): Promise<void> {
  const ws = await client.connectWs()
  const pushed: string[] = []
  await ws.subscribe([`${sub}.orders`, `${sub}.balances`], (channel) => void pushed.push(channel))
  const o = await client.order({
    subaccount_id: sub,
    instrument_name: PUT,
    direction: 'sell',
    amount: '1',
    limit_price: '9000',
    max_fee: '10',
    time_in_force: 'post_only',
  })
  await client.cancel({ subaccount_id: sub, instrument_name: PUT, order_id: o.order.order_id })
  const perp = await client.getTicker('ETH-PERP')
  const buy = { subaccount_id: sub, instrument_name: 'ETH-PERP', direction: 'buy' as const, max_fee: '10' }
  await client.order({ ...buy, amount: '0.1', limit_price: perp.best_ask_price, time_in_force: 'ioc' })
  for (let i = 0; i < 100 && !(pushed.includes(`${sub}.orders`) && pushed.includes(`${sub}.balances`)); i++)
    await new Promise((r) => setTimeout(r, 10))
  await ws.close()
}

/** Interest and funding after the clock crossed hours, and the put's settlement after its 08:00 expiry. */
async function accruals(sub: number): Promise<void> {
  sim.control.advanceTo(Date.UTC(2026, 0, 5, 9, 0))
  await client.getInterestHistory({ subaccount_id: sub })
  await client.getFundingHistory({ subaccount_id: sub, page: 1, page_size: 1000 })
  await client.getOptionSettlementHistory(sub)
}

/** The scripted session: what the service does on the exchange, in order. */
async function session(): Promise<void> {
  await tickerFeed()
  await client.getTime()
  await client.getInstruments({ currency: 'ETH', instrument_type: 'option' })
  const ticker = await client.getTicker(PUT)
  await client.getCurrency('USDC')
  const { subaccount_ids: [sub = 0, other = 0] = [] } = await client.getSubaccounts()
  await client.getSubaccount(sub)
  await client.getAllPortfolios()
  const resting = await client.order({
    subaccount_id: sub,
    instrument_name: PUT,
    direction: 'sell',
    amount: '1',
    limit_price: (Number(ticker.best_ask_price) + 20).toFixed(1),
    max_fee: '10',
    time_in_force: 'post_only',
    label: 'conformance',
  })
  await client.getOpenOrders(sub)
  await client.getOrder(sub, resting.order.order_id)
  await client.orderDebug({
    subaccount_id: sub,
    instrument_name: PUT,
    direction: 'sell',
    amount: '1',
    limit_price: '150',
    max_fee: '10',
  })
  await client.cancel({ subaccount_id: sub, instrument_name: PUT, order_id: resting.order.order_id })
  const bid = (await client.getTicker(PUT)).best_bid_price
  await client.order({
    subaccount_id: sub,
    instrument_name: PUT,
    direction: 'sell',
    amount: '1',
    limit_price: bid,
    max_fee: '10',
    time_in_force: 'ioc',
  })
  await client.getTradeHistory({ subaccount_id: sub })
  await client.getPositions(sub)
  await client.transferSpot({ subaccount_id: sub, to_subaccount_id: other, asset_name: 'USDC', amount: '12.5' })
  await client.getCollaterals(other)
  const perp = await client.getTicker('ETH-PERP')
  const buy = { subaccount_id: sub, instrument_name: 'ETH-PERP', direction: 'buy' as const, max_fee: '10' }
  await client.order({ ...buy, amount: '0.1', limit_price: perp.best_ask_price, time_in_force: 'ioc' })
  await movements(sub)
  await keys(sub)
  await sdkReads(sub)
  await privateFeeds(sub)
  await accruals(sub)
  await client.cancelAll(sub)
  const tooSoon = Math.floor(sim.control.nowMs() / 1000) + 10
  await client
    .order({
      subaccount_id: sub,
      instrument_name: PUT,
      direction: 'sell',
      amount: '1',
      limit_price: '9000',
      max_fee: '10',
      signature_expiry_sec: tooSoon,
    })
    .then(
      () => {
        throw new Error('an expiry ten seconds out was accepted')
      },
      () => undefined,
    )
}

function validator(ref: string): ValidateFunction {
  const v = ajv.getSchema(ref)
  if (!v) throw new Error(`no schema at ${ref}`)
  return v
}

function problems(v: ValidateFunction, value: unknown, what: string): string[] {
  return v(value) ? [] : [`${what}: ${ajv.errorsText(v.errors)}`]
}

describe('v3 wire conformance with the published spec', () => {
  it('every request and every answer of the scripted session validates against openapi.json', async () => {
    await session()
    expect(new Set(seen.map((s) => s.method))).toEqual(new Set(V3_METHODS))
    const found: string[] = []
    for (const s of seen) {
      const op = ptr(`/${s.method}`)
      const req = validator(`openapi#/paths/${op}/post/requestBody/content/application~1json/schema`)
      found.push(...problems(req, s.request, `${s.method} request`))
      if ('error' in s.response) {
        found.push(
          ...problems(validator('openapi#/components/schemas/RPCError'), s.response.error, `${s.method} error`),
        )
        continue
      }
      const res = validator(`openapi#/paths/${op}/post/responses/200/content/application~1json/schema`)
      found.push(...problems(res, s.response.result, `${s.method} result`))
    }
    expect(found).toEqual([])
    // the histories were validated on entries, not on empty lists
    const entries = (method: string, key: string) =>
      Math.max(
        ...seen.filter((s) => s.method === method).map((s) => (s.response.result as Entries)?.[key]?.length ?? 0),
      )
    expect({
      deposits: entries('private/get_deposit_history', 'deposits'),
      withdrawals: entries('private/get_withdrawal_history', 'withdrawals'),
      transfers: entries('private/get_erc20_transfer_history', 'transfers'),
      interest: entries('private/get_interest_history', 'events'),
      funding: entries('private/get_funding_history', 'events'),
      settlements: entries('private/get_option_settlement_history', 'settlements'),
    }).toEqual({ deposits: 1, withdrawals: 1, transfers: 3, interest: 9, funding: 9, settlements: 1 })
    // the one refusal of the script was the expiry rule's, in the spec's error shape
    expect(seen.filter((s) => 'error' in s.response).map((s) => (s.response.error as { code: number }).code)).toEqual([
      11011,
    ])
  })

  it('the private channels: every {subaccount}.orders and {subaccount}.balances notification validates against subscriptions.asyncapi.json', () => {
    const pushes = (suffix: string) =>
      frames.filter(
        (f) => f.method === 'subscription' && String((f.params as { channel?: unknown })?.channel).endsWith(suffix),
      )
    const orders = pushes('.orders')
    const balances = pushes('.balances')
    expect(orders.length).toBeGreaterThan(0)
    expect(balances.length).toBeGreaterThan(0)
    const found: string[] = []
    const each = (frame: Record<string, unknown>, ref: string, what: string) => {
      const data = (frame.params as { data: unknown[] }).data
      expect(Array.isArray(data) && data.length > 0).toBe(true)
      for (const item of data) found.push(...problems(validator(ref), item, what))
    }
    for (const f of orders) each(f, 'subs#/components/messages/subaccountOrdersNotification/payload', 'orders push')
    for (const f of balances)
      each(f, 'subs#/components/messages/subaccountBalancesNotification/payload', 'balances push')
    expect(found).toEqual([])
  })

  it('the WebSocket login request and its answer validate against websocket.asyncapi.json', () => {
    const login = frames.find((f) => f.method === 'public/login')
    const answer = frames.find((f) => f.id === login?.id && 'result' in f)
    expect(login && answer).toBeTruthy()
    const found = [
      ...problems(validator('ws#/components/messages/publicLoginRequest/payload'), login, 'login request'),
      ...problems(validator('ws#/components/messages/publicLoginResponse/payload'), answer, 'login answer'),
    ]
    expect(found).toEqual([])
  })

  it('the ticker feed: the subscribe frame and every ticker_slim notification validate against subscriptions.asyncapi.json', () => {
    const subscribe = frames.find((f) => f.method === 'subscribe')
    const pushed = frames.filter(
      (f) =>
        f.method === 'subscription' && String((f.params as { channel?: unknown })?.channel).startsWith('ticker_slim.'),
    )
    expect(subscribe).toBeTruthy()
    expect(pushed.length).toBeGreaterThanOrEqual(2)
    const found = [
      ...problems(validator('subs#/components/messages/subscribeRequest/payload'), subscribe, 'subscribe'),
      ...pushed.flatMap((f) =>
        problems(
          validator('subs#/components/messages/tickerSlimNotification/payload'),
          (f.params as { data: unknown }).data,
          'ticker_slim notification',
        ),
      ),
    ]
    expect(found).toEqual([])
  })

  it('the validator has teeth: a v2-shaped ticker, a nonce sent as a number on private/order, a subaccount missing a field or with a negative manager id are refused', () => {
    const ticker = validator(
      `openapi#/paths/${ptr('/public/get_ticker')}/post/responses/200/content/application~1json/schema`,
    )
    expect(ticker({ instrument_name: PUT, mark_price: '1', best_bid_price: '1' })).toBe(false)
    const order = seen.find((s) => s.method === 'private/order')?.request as Record<string, unknown>
    const req = validator(`openapi#/paths/${ptr('/private/order')}/post/requestBody/content/application~1json/schema`)
    expect(req(order)).toBe(true)
    expect(req({ ...order, nonce: Number(order.nonce) })).toBe(false)
    const sub = seen.find((s) => s.method === 'private/get_subaccount')?.response.result as Record<string, unknown>
    const res = validator(
      `openapi#/paths/${ptr('/private/get_subaccount')}/post/responses/200/content/application~1json/schema`,
    )
    const { mm_credits: _, ...withoutOne } = sub
    expect([res(sub), res(withoutOne), res({ ...sub, manager_id: -1 })]).toEqual([true, false, false])
  })
})
