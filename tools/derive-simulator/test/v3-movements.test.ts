/**
 * The worker's movements and histories on v3 (docs/exchange-v3.md "Movements on v3", "Histories
 * on v3"), the v3 client against the simulator's v3 layer: create_subaccount, deposit and withdraw
 * as transfer_spot with the funding subaccount, signed and stored before they are sent; concurrent
 * fundings from the one funding subaccount in nonce order; a creation the exchange would charge
 * for refused rather than credited short; interest, funding and settlements as the engine booked
 * them; capped histories read whole; L1 withdrawals; order_debug; the slim ticker feed.
 */

import {
  DeriveClient,
  encodeTradeDataV3,
  optionName,
  RPC,
  type SignedTransfer,
  type TickerUpdate,
  toE18,
  tradeDataOf,
  v3DomainSeparator,
} from '@wh/exchange'
import { concat, keccak256 } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunningSimulator, startDeriveSimulator, whitelistRecipient } from '../src/index'

const START = Date.UTC(2026, 0, 5, 0, 0)
const PUT = optionName('ETH', Date.UTC(2026, 0, 5, 8) / 1000, '2900', 'P')
const sessionKey = generatePrivateKey()
const session = privateKeyToAccount(sessionKey).address
const owner = privateKeyToAccount(generatePrivateKey()).address

let sim: RunningSimulator
let v3: DeriveClient
let funding = 0

const usdcOf = async (sub: number) => (await v3.getCollaterals(sub)).find((c) => c.asset_name === 'USDC')?.amount ?? '0'
/** what a row's jsonb column gives back */
const stored = (a: SignedTransfer): SignedTransfer => JSON.parse(JSON.stringify(a))

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: 901, startMs: START })
  // the key holds what these movements need and withdraw, not admin: the whitelist binds it
  const scopes = ['trade:all', 'transfer:all', 'withdraw'] as const
  sim.control.registerWallet({ wallet: owner, sessionKeys: [{ address: session, scopes: [...scopes] }] })
  sim.control.setPrice('ETH', '3000')
  funding = sim.control.depositL1({ owner, asset: 'USDC', amount: '100000' })
  const common = {
    wallet: owner,
    sessionKey,
    chainId: 901,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  }
  v3 = new DeriveClient({ ...common, httpUrl: sim.v3HttpUrl, wsUrl: sim.v3WsUrl, fundingSubaccountId: funding })
})
afterAll(async () => sim?.close())

describe('the worker movements on v3: transfer_spot with the funding subaccount', () => {
  it('create, deposit and withdraw, stored then sent; the histories and get_transaction agree; a replay moves nothing', async () => {
    const create = stored(await v3.signTransfer({ method: 'create_subaccount', asset_name: 'USDC', amount: '600' }))
    expect(create.method).toBe('create_subaccount')
    expect(create.params).toMatchObject({
      subaccount_id: funding,
      to_subaccount_id: 0,
      new_subaccount_manager: 1,
      max_fee_usd: '0',
    })
    expect(create.params.nonce).toMatch(/^\d{19}$/)
    const before = (await v3.getSubaccounts()).subaccount_ids
    const created = await v3.sendSigned(create)
    expect(await v3.getTransaction(created.transaction_id)).toMatchObject({ status: 'settled' })
    const [sub = 0, ...more] = (await v3.getSubaccounts()).subaccount_ids.filter((id) => !before.includes(id))
    expect(more).toEqual([])
    expect((await v3.getDepositHistory({ subaccount_id: sub })).events).toEqual([
      expect.objectContaining({ amount: '600', asset: 'USDC', transaction_id: created.transaction_id }),
    ])

    const deposited = await v3.deposit({ subaccount_id: sub, asset_name: 'USDC', amount: '150' })
    const withdraw = stored(
      await v3.signTransfer({ method: 'withdraw', subaccount_id: sub, asset_name: 'USDC', amount: '100' }),
    )
    expect(withdraw.params).toMatchObject({ subaccount_id: sub, to_subaccount_id: funding, new_subaccount_manager: 0 })
    const withdrawn = await v3.sendSigned(withdraw)
    const deposits = (await v3.getDepositHistory({ subaccount_id: sub, start_timestamp: START })).events
    expect(deposits.map((d) => [d.amount, d.transaction_id, d.tx_status])).toEqual([
      ['600', created.transaction_id, 'settled'],
      ['150', deposited.transaction_id, 'settled'],
    ])
    expect((await v3.getWithdrawalHistory({ subaccount_id: sub })).events).toEqual([
      expect.objectContaining({
        amount: '100',
        asset: 'USDC',
        tx_hash: withdrawn.transaction_id,
        tx_status: 'settled',
      }),
    ])
    expect(await usdcOf(sub)).toBe('650')
    expect(await usdcOf(funding)).toBe('99350')

    const replay = await v3.sendSigned(withdraw).catch((e) => e)
    expect(replay.rpcCode).toBe(RPC.NONCE_NOT_UNIQUE)
    expect(await usdcOf(sub)).toBe('650')
    // the funding subaccount: its L1 top-up is an L1 deposit, not a worker deposit; transfers both ways
    expect((await v3.getDepositHistory({ subaccount_id: funding })).events).toEqual([])
    expect((await v3.getL1DepositHistory({ subaccount_id: funding })).events).toEqual([
      expect.objectContaining({ amount: '100000', asset: 'USDC', new_subaccount: true, tx_status: 'settled' }),
    ])
    const seen = (await v3.getErc20TransferHistory({ subaccount_id: sub })).events
    expect(seen.map((e) => [e.is_outgoing, e.counterparty_subaccount_id, e.amount])).toEqual([
      [false, funding, '600'],
      [false, funding, '150'],
      [true, funding, '100'],
    ])
  })

  it('concurrent fundings out of the one funding subaccount all land: each signs once the one before was sent', async () => {
    const target = sim.control.openSubaccount(owner, {})
    const sent = await Promise.all(
      [1, 2, 3, 4, 5].map(async (i) => {
        const action = stored(
          await v3.signTransfer({ method: 'deposit', subaccount_id: target, asset_name: 'USDC', amount: String(i) }),
        )
        await new Promise((r) => setTimeout(r, (5 - i) * 15)) // the first signed would be sent last
        return v3.sendSigned(action)
      }),
    )
    expect(new Set(sent.map((s) => s.transaction_id)).size).toBe(5)
    expect(await usdcOf(target)).toBe('15')
  })

  it('a creation the exchange charges for is refused in its batch, never credited short (max_fee_usd 0)', async () => {
    sim.engine.subaccountCreationFeeE18 = toE18('1')
    try {
      const before = (await v3.getSubaccounts()).subaccount_ids
      const fundsBefore = await usdcOf(funding)
      const tx = await v3.createSubaccount({ asset_name: 'USDC', amount: '50' })
      const status = await v3.getTransaction(tx.transaction_id)
      expect(status).toMatchObject({ status: 'reverted', data: { batch_status: 'ExecutingError' } })
      expect((await v3.getSubaccounts()).subaccount_ids).toEqual(before)
      expect(await usdcOf(funding)).toBe(fundsBefore)
    } finally {
      sim.engine.subaccountCreationFeeE18 = 0n
    }
  })
})

describe('a creation charged by the exchange, with a fee cap (EXCHANGE_SUBACCOUNT_CREATION_FEE_CAP_USD)', () => {
  it('sends amount + cap: the new subaccount receives the amount whole; the fee is read back; above the cap it fails', async () => {
    const capped = new DeriveClient({
      wallet: owner,
      sessionKey,
      chainId: 901,
      clock: { now: () => new Date(sim.control.nowMs()) },
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
      httpUrl: sim.v3HttpUrl,
      wsUrl: sim.v3WsUrl,
      fundingSubaccountId: funding,
      subaccountCreationFeeCapUsd: '1',
    })
    sim.control.advance(1000) // a second client: its nanosecond nonces must pass the other client's for the sender
    sim.engine.subaccountCreationFeeE18 = toE18('1')
    try {
      const before = new Set((await v3.getSubaccounts()).subaccount_ids)
      const fundsBefore = toE18(await usdcOf(funding))
      const action = stored(
        await capped.signTransfer({ method: 'create_subaccount', asset_name: 'USDC', amount: '50' }),
      )
      expect(action.params).toMatchObject({ amount: '51', max_fee_usd: '1' })
      const since = sim.control.nowMs()
      const tx = await capped.sendSigned(action)
      expect((await capped.getTransaction(tx.transaction_id)).status).toBe('settled')
      const [created] = (await v3.getSubaccounts()).subaccount_ids.filter((id) => !before.has(id))
      expect(await usdcOf(created as number)).toBe('50')
      expect(fundsBefore - toE18(await usdcOf(funding))).toBe(toE18('51'))
      expect(await capped.movementFee({ transaction_id: tx.transaction_id, start_timestamp: since })).toBe('1')
      expect((await capped.getDepositHistory({ subaccount_id: created as number })).events).toEqual([
        expect.objectContaining({ amount: '50', transaction_id: tx.transaction_id }),
      ])

      sim.engine.subaccountCreationFeeE18 = toE18('2') // above the cap: refused in its batch, nothing moves
      const ids = (await v3.getSubaccounts()).subaccount_ids
      const fundsNow = await usdcOf(funding)
      const refused = await capped.createSubaccount({ asset_name: 'USDC', amount: '50' })
      expect((await capped.getTransaction(refused.transaction_id)).status).toBe('reverted')
      expect((await v3.getSubaccounts()).subaccount_ids).toEqual(ids)
      expect(await usdcOf(funding)).toBe(fundsNow)
    } finally {
      sim.engine.subaccountCreationFeeE18 = 0n
    }
  })
})

describe('histories on v3 in the shapes the service reads', () => {
  it('interest, perp funding and option settlements: the entries the engine booked', async () => {
    const sub = sim.control.openSubaccount(owner, { USDC: '20000' })
    const perp = await v3.getTicker('ETH-PERP')
    const order = { subaccount_id: sub, amount: '1', max_fee: '10', time_in_force: 'ioc' as const }
    await v3.order({ ...order, instrument_name: 'ETH-PERP', direction: 'buy', limit_price: perp.best_ask_price })
    const put = await v3.getTicker(PUT)
    await v3.order({ ...order, instrument_name: PUT, direction: 'sell', limit_price: put.best_bid_price })
    sim.control.setPrice('ETH', '2800') // the put ends in the money
    sim.control.advanceTo(Date.UTC(2026, 0, 5, 9, 30))

    const interest = await v3.getInterestHistory({ subaccount_id: sub })
    expect(interest.events.length).toBeGreaterThanOrEqual(9)
    const booked = sim.engine.history
    const mine = <E extends { subaccountId: number }>(rows: E[]) => rows.filter((r) => r.subaccountId === sub)
    expect(interest.events.map((e) => [e.timestamp, toE18(e.interest)])).toEqual(
      mine(booked.interest).map((r) => [r.timestampMs, r.interestE18]),
    )
    const fundingPage = await v3.getFundingHistory({ subaccount_id: sub, page: 1, page_size: 1000 })
    expect(fundingPage.events.length).toBeGreaterThanOrEqual(9)
    expect(fundingPage.events.map((e) => [e.timestamp, e.instrument_name, toE18(e.funding)])).toEqual(
      mine(booked.funding).map((r) => [r.timestampMs, r.instrument, r.fundingE18]),
    )
    const [settled] = (await v3.getOptionSettlementHistory(sub)).settlements
    expect(mine(booked.settlements)).toHaveLength(1)
    expect(settled).toMatchObject({ instrument_name: PUT, amount: '-1', settlement_price: '2800' })
    expect(settled?.option_settlement_pnl).toBe('-100')
  })

  it('past the 1000-row cap the interest history is read whole and in time order', async () => {
    const sub = sim.control.openSubaccount(owner, {})
    for (let i = 0; i < 2_500; i++)
      sim.engine.history.interest.push({ subaccountId: sub, timestampMs: START + Math.floor(i / 3), interestE18: 1n })
    const { events } = await v3.getInterestHistory({ subaccount_id: sub, start_timestamp: START })
    expect(events).toHaveLength(2_500)
    expect(events.map((e) => e.timestamp)).toEqual([...events.map((e) => e.timestamp)].sort((a, b) => a - b))
    expect(events.at(-1)?.timestamp).toBe(START + 833)
  })

  it('an L1 withdrawal pays the owner once whitelisted and shows in the L1 history; a session key may not pay another address', async () => {
    const sub = sim.control.openSubaccount(owner, { USDC: '500' })
    const before = Number(sim.control.walletBalance(owner, 'USDC'))
    const first = { subaccount_id: sub, asset_name: 'USDC', amount: '120.5', max_fee_usd: '1' }
    // the owner too must be on the whitelist for a session key that is not admin (derive-ts withdrawals.ts)
    expect((await v3.withdrawToL1(first).catch((e) => e)).rpcCode).toBe(11033)
    whitelistRecipient(sim.engine, owner, owner)
    const r = await v3.withdrawToL1({ subaccount_id: sub, asset_name: 'USDC', amount: '120.5', max_fee_usd: '1' })
    expect(Number(sim.control.walletBalance(owner, 'USDC')) - before).toBe(120.5)
    expect((await v3.getL1WithdrawalHistory({ subaccount_id: sub })).events).toEqual([
      expect.objectContaining({ amount: '120.5', asset: 'USDC', recipient: owner, tx_hash: r.op_uuid }),
    ])
    expect(await v3.getTransaction(r.op_uuid)).toMatchObject({ status: 'settled' })
    const stranger = privateKeyToAccount(generatePrivateKey()).address
    const p = { subaccount_id: sub, asset_name: 'USDC', amount: '1', max_fee_usd: '1', recipient: stranger }
    expect((await v3.withdrawToL1(p).catch((e) => e)).rpcCode).toBe(11033)
  })

  it("order_debug rebuilds the order's data and hashes under the v3 domain", async () => {
    const sub = sim.control.openSubaccount(owner, { USDC: '1000' })
    const p = {
      subaccount_id: sub,
      instrument_name: PUT,
      direction: 'sell' as const,
      amount: '1',
      limit_price: '150',
      max_fee: '10',
    }
    const d = await v3.orderDebug(p)
    expect(d.encoded_data).toBe(encodeTradeDataV3(tradeDataOf(await v3.getInstrument(PUT), p)))
    expect(d.encoded_data_hashed).toBe(keccak256(d.encoded_data as `0x${string}`))
    const separator = v3DomainSeparator(901)
    expect(d.raw_data).toMatchObject({ domain_separator: separator, expected_signer: session, owner })
    expect(d.typed_data_hash).toBe(keccak256(concat(['0x1901', separator, d.action_hash as `0x${string}`])))
  })

  it('the ticker feed: ticker_slim snapshots arrive in the service ticker shape', async () => {
    const ws = await v3.connectWs({ login: false })
    const got: TickerUpdate[] = []
    try {
      const off = await v3.subscribeTicker(ws, 'ETH-PERP', 100, (u) => got.push(u))
      sim.control.setPrice('ETH', '3150')
      for (let i = 0; i < 100 && !got.some((u) => u.ticker.index_price === '3150'); i++)
        await new Promise((r) => setTimeout(r, 10))
      const u = got.find((x) => x.ticker.index_price === '3150')
      expect(u?.ticker).toMatchObject({ instrument_name: 'ETH-PERP', instrument_type: 'perp', mark_price: '3150' })
      expect(u?.timestamp).toBe(sim.control.nowMs())
      await off()
    } finally {
      await ws.close()
    }
  })
})
