/**
 * Withdrawal requests against a hostile world (docs/hostile-world.md): the USD bounds follow the
 * price feed and refuse a stale price; destinations that are the platform's own, or contracts
 * that refuse ETH, are refused before anything is reserved; cheap checks come before any RPC call,
 * and one user's requests that reach the chain are limited.
 */
import { randomBytes } from 'node:crypto'
import { toBaseUnits } from '@wh/core'
import { append, freeBalance } from '@wh/ledger'
import {
  createRpcProxyServer,
  type RpcProxyServer,
  type RunningChain,
  startChain,
  TEST_PRIVATE_KEYS,
} from '@wh/testkit'
import { registerPlatformWallets } from '@wh/wallet'
import { WITHDRAWAL_OPEN_MAX_PER_USER, WITHDRAWAL_REQUESTS_PER_MINUTE } from '@wh/withdrawals'
import type { FastifyInstance } from 'fastify'
import { createTestClient, getAddress, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MarketStack, startMarketStack, waitFor } from './market-support'
import { type Api, newAccount, signIn, startApi } from './support'

const DEST = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'

async function fundedUser(app: FastifyInstance, sql: Api['ctx']['database']['sql'], currency: string, amount: bigint) {
  const account = newAccount()
  const token = await signIn(app, account)
  const [row] = await sql<{ id: string }[]>`select id from users where wallet_address = ${account.address}`
  const userId = row?.id as string
  if (amount > 0n)
    await append(sql, {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: `0x${randomBytes(32).toString('hex')}`, logIndex: 3, currency, amount },
      occurredAt: new Date(),
    })
  return { userId, account, auth: { authorization: `Bearer ${token}` } }
}

describe('withdrawal bounds use the price feed, never a price fixed in code', () => {
  let stack: MarketStack
  let app: FastifyInstance

  beforeAll(async () => {
    stack = await startMarketStack()
    app = await stack.startApp()
  })
  afterAll(() => stack.close())

  const ethRoute = async (auth: Record<string, string>) => {
    const res = await app.inject({ method: 'GET', url: '/withdrawals/routes', headers: auth })
    if (res.statusCode !== 200) return { statusCode: res.statusCode, body: res.json() }
    const eth = res.json().routes.find((r: { chain: string; asset: string }) => r.chain === 'base' && r.asset === 'ETH')
    return { statusCode: 200, body: eth }
  }

  it('the bounds in ETH follow the simulator’s price; a stale price leaves the route without bounds and a request answers 503 PRICE_UNAVAILABLE, reserving nothing', async () => {
    const { userId, auth } = await fundedUser(app, stack.ctx.database.sql, 'ETH', 10n ** 18n)
    const indexE18 = stack.sim.engine.market.index.get('ETH') as bigint
    const first = await waitFor(async () => {
      const r = await ethRoute(auth)
      return r.statusCode === 200 && r.body
    }, 'an ETH price from the feed')
    expect(first.priceAvailable).toBe(true)
    expect(toBaseUnits(first.priceUsd, 18, 'exact')).toBe(indexE18)

    // the market moves: the bounds follow (WITHDRAWAL_MIN_USD 10 at 2000 USD = 0.005 ETH)
    stack.sim.control.setPrice('ETH', '2000')
    const moved = await waitFor(async () => {
      const r = await ethRoute(auth)
      return r.statusCode === 200 && r.body.priceUsd === '2000' && r.body
    }, 'the bounds at the new price')
    expect(moved.minAmount).toBe('0.005000000000000000')
    expect(moved.maxAmount).toBe('50.000000000000000000')
    const below = await app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: auth,
      payload: { chain: 'base', asset: 'ETH', amount: '0.0049', destination: DEST },
    })
    expect(below.json().code).toBe('WITHDRAWAL_BELOW_MINIMUM')

    // the feed stops and time passes: the last price is too old to convert a bound with
    await stack.feed.close()
    stack.sim.control.advance(61_000)
    const stale = await ethRoute(auth)
    expect(stale.statusCode).toBe(200)
    expect(stale.body).toMatchObject({ priceAvailable: false, priceUsd: null, minAmount: null, maxAmount: null })
    const refused = await app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: auth,
      payload: { chain: 'base', asset: 'ETH', amount: '0.01', destination: DEST },
    })
    expect(refused.statusCode).toBe(503)
    expect(refused.json().code).toBe('PRICE_UNAVAILABLE')
    expect(refused.headers['retry-after']).toBe('5')
    expect(await freeBalance(stack.ctx.database.sql, userId, 'ETH')).toBe(10n ** 18n)
  })
})

describe('withdrawal destinations (docs/hostile-world.md "Destinations")', () => {
  let chain: RunningChain
  let api: Api
  const hot = privateKeyToAccount(TEST_PRIVATE_KEYS[1])
  const gas = privateKeyToAccount(TEST_PRIVATE_KEYS[3])

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    api = await startApi({ RPC_URL_BASE: chain.rpcUrl })
    await api.seedPrice('ETH', '3000')
    // what the worker registers at start from the keys it holds
    await registerPlatformWallets(api.ctx.database.sql, [
      { address: hot.address, role: 'hot' },
      { address: gas.address, role: 'gas' },
      { address: api.ctx.config.exchange.walletAddress, role: 'exchange' },
    ])
  })
  afterAll(async () => {
    await api?.close()
    await chain?.stop()
  })

  const post = (auth: Record<string, string>, payload: object) =>
    api.app.inject({ method: 'POST', url: '/withdrawals', headers: auth, payload })

  it('the platform’s own wallets and any deposit address are refused, in any case, and nothing is reserved', async () => {
    const { userId, auth } = await fundedUser(api.app, api.ctx.database.sql, 'USDC', 100_000_000n)
    const other = await fundedUser(api.app, api.ctx.database.sql, 'USDC', 0n)
    const [{ hd_index } = { hd_index: -1 }] = await api.ctx.database.sql<{ hd_index: number }[]>`
      select hd_index from users where id = ${other.userId}`
    const otherDeposit = api.keyring.address(hd_index)
    await api.ctx.database.sql`
      insert into deposit_addresses (hd_index, address, user_id) values (${hd_index}, ${otherDeposit}, ${other.userId})`
    const [{ hd_index: own } = { hd_index: -1 }] = await api.ctx.database.sql<{ hd_index: number }[]>`
      select hd_index from users where id = ${userId}`
    for (const destination of [
      hot.address,
      gas.address.toLowerCase(),
      api.ctx.config.exchange.walletAddress,
      otherDeposit,
      api.keyring.address(own),
    ]) {
      const res = await post(auth, { chain: 'base', asset: 'USDC', amount: '20', destination })
      expect(res.statusCode, destination).toBe(400)
      expect(res.json().code).toBe('INVALID_DESTINATION')
    }
    expect(await freeBalance(api.ctx.database.sql, userId, 'USDC')).toBe(100_000_000n)
  })

  it('ETH to a contract whose dry run reverts is refused (422); to one that accepts, and tokens to either, are taken', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    const refusing = getAddress(`0x${randomBytes(20).toString('hex')}`)
    const accepting = getAddress(`0x${randomBytes(20).toString('hex')}`)
    await anvil.setCode({ address: refusing, bytecode: '0x60006000fd' }) // PUSH1 0 PUSH1 0 REVERT
    await anvil.setCode({ address: accepting, bytecode: '0x00' }) // STOP: accepts any call
    const { userId, auth } = await fundedUser(api.app, api.ctx.database.sql, 'ETH', 10n ** 18n)
    const usdcUser = await fundedUser(api.app, api.ctx.database.sql, 'USDC', 100_000_000n)

    const refused = await post(auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: refusing })
    expect(refused.statusCode).toBe(422)
    expect(refused.json().code).toBe('DESTINATION_REFUSES_ETH')
    expect(await freeBalance(api.ctx.database.sql, userId, 'ETH')).toBe(10n ** 18n)

    const accepted = await post(auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: accepting })
    expect(accepted.statusCode, accepted.body).toBe(202)
    const toEoa = await post(auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: DEST })
    expect(toEoa.statusCode).toBe(202)
    const token = await post(usdcUser.auth, { chain: 'base', asset: 'USDC', amount: '20', destination: refusing })
    expect(token.statusCode).toBe(202)
  })
})

describe('cheap checks first (docs/hostile-world.md "Cheap checks first")', () => {
  let chain: RunningChain
  let proxy: RpcProxyServer
  let api: Api
  const hot = privateKeyToAccount(TEST_PRIVATE_KEYS[1])
  const rpcCalls = () => Object.values(proxy.stats()).reduce((n, m) => n + m.seen, 0)

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    // the API reaches the chain through a proxy that counts every call
    proxy = await createRpcProxyServer({ upstream: chain.rpcUrl })
    api = await startApi({ RPC_URL_BASE: proxy.url })
    await api.seedPrice('ETH', '3000')
    await registerPlatformWallets(api.ctx.database.sql, [{ address: hot.address, role: 'hot' }])
  })
  afterAll(async () => {
    await api?.close()
    await proxy?.close()
    await chain?.stop()
  })

  const post = (auth: Record<string, string>, payload: object) =>
    api.app.inject({ method: 'POST', url: '/withdrawals', headers: auth, payload })

  it('an account with nothing to withdraw, or at its open cap, costs the chain no call, whatever the destination', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    const contract = getAddress(`0x${randomBytes(20).toString('hex')}`)
    await anvil.setCode({ address: contract, bytecode: '0x5b600056' }) // burns every gas it is given
    const broke = await fundedUser(api.app, api.ctx.database.sql, 'ETH', 0n)
    const capped = await fundedUser(api.app, api.ctx.database.sql, 'USDC', 1_000_000_000n)
    for (let i = 0; i < WITHDRAWAL_OPEN_MAX_PER_USER; i++)
      expect(
        (await post(capped.auth, { chain: 'base', asset: 'USDC', amount: '20', destination: DEST })).statusCode,
      ).toBe(202)
    const capEth = await fundedUser(api.app, api.ctx.database.sql, 'ETH', 10n ** 18n)
    proxy.reset()
    for (let i = 0; i < 20; i++) {
      const r = await post(broke.auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: contract })
      expect(r.json().code).toBe('INSUFFICIENT_FREE_BALANCE')
      const c = await post(capped.auth, { chain: 'base', asset: 'USDC', amount: '20', destination: contract })
      expect(c.json().code).toBe('TOO_MANY_OPEN_WITHDRAWALS')
      const below = await post(capEth.auth, { chain: 'base', asset: 'ETH', amount: '0.0001', destination: contract })
      expect(below.json().code).toBe('WITHDRAWAL_BELOW_MINIMUM')
    }
    expect(rpcCalls()).toBe(0)
    // the same destination with a balance is asked of the chain, as the send will be: above the budget
    const refused = await post(capEth.auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: contract })
    expect(refused.statusCode).toBe(422)
    expect(refused.json()).toMatchObject({ code: 'DESTINATION_GAS_ABOVE_BUDGET', details: { budgetGas: '50000' } })
    expect(rpcCalls()).toBeGreaterThan(0)
    expect(await freeBalance(api.ctx.database.sql, capEth.userId, 'ETH')).toBe(10n ** 18n)
  })

  it('one user’s requests that reach the chain are limited per minute: 429 with retry-after, no RPC call for it', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    const refusing = getAddress(`0x${randomBytes(20).toString('hex')}`)
    await anvil.setCode({ address: refusing, bytecode: '0x60006000fd' })
    const { auth } = await fundedUser(api.app, api.ctx.database.sql, 'ETH', 10n ** 18n)
    for (let i = 0; i < WITHDRAWAL_REQUESTS_PER_MINUTE; i++) {
      const r = await post(auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: refusing })
      expect(r.json().code).toBe('DESTINATION_REFUSES_ETH')
    }
    proxy.reset()
    const limited = await post(auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: refusing })
    expect(limited.statusCode).toBe(429)
    expect(limited.json().code).toBe('TOO_MANY_WITHDRAWAL_REQUESTS')
    expect(limited.headers['retry-after']).toBe('60')
    expect(rpcCalls()).toBe(0)
    // another user is not limited by it
    const other = await fundedUser(api.app, api.ctx.database.sql, 'ETH', 10n ** 18n)
    expect(
      (await post(other.auth, { chain: 'base', asset: 'ETH', amount: '0.01', destination: DEST })).statusCode,
    ).toBe(202)
  })
})
