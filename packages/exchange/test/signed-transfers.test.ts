/**
 * Signing a collateral movement without sending it, storing it (as JSON, like a jsonb column)
 * and sending it later as it is: the simulator verifies it like the real exchange, takes it once,
 * and refuses a tampered or expired copy.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  DeriveClient,
  ExchangeAuthError,
  ExchangeInsufficientMarginError,
  ExchangeOrderRejectedError,
  RPC,
  type RunningSimulator,
  type SignedTransfer,
  startDeriveSimulator,
} from '../src/index'

let sim: RunningSimulator
let client: DeriveClient
const sessionKey = generatePrivateKey()
const wallet = privateKeyToAccount(generatePrivateKey()).address
const stored = (a: SignedTransfer): SignedTransfer => JSON.parse(JSON.stringify(a))
const usdcIn = async (id: number) =>
  (await client.getSubaccount(id)).collaterals.find((c) => c.asset_name === 'USDC')?.amount ?? '0'

beforeAll(async () => {
  sim = await startDeriveSimulator({ chainId: 901 })
  sim.control.registerWallet({ wallet, sessionKeys: [privateKeyToAccount(sessionKey).address] })
  sim.control.fundWallet(wallet, 'USDC', '1000')
  client = new DeriveClient({
    httpUrl: sim.httpUrl,
    wallet,
    sessionKey,
    chainId: 901,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
})
afterAll(async () => {
  await sim?.close()
})

describe('signTransfer / sendSigned', () => {
  let sub = 0

  it('signs without sending; the stored create_subaccount is accepted once, a replay is refused as a used nonce', async () => {
    const action = await client.signTransfer({ method: 'create_subaccount', asset_name: 'USDC', amount: '100' })
    expect(action.method).toBe('create_subaccount')
    expect(action.params).toMatchObject({ wallet, asset_name: 'USDC', amount: '100', margin_type: 'SM' })
    expect(typeof action.params.nonce).toBe('number')
    expect((await client.getSubaccounts()).subaccount_ids).toEqual([]) // nothing sent yet
    const tx = await client.sendSigned(stored(action))
    expect(tx.transaction_id).toMatch(/[0-9a-f-]{36}/)
    sub = (await client.getSubaccounts()).subaccount_ids[0] as number
    expect(await usdcIn(sub)).toBe('100')
    const replay = await client.sendSigned(stored(action)).catch((e) => e)
    expect(replay).toBeInstanceOf(ExchangeOrderRejectedError)
    expect(replay.rpcCode).toBe(RPC.NONCE_NOT_UNIQUE)
    expect((await client.getSubaccounts()).subaccount_ids).toHaveLength(1)
  })

  it('a stored deposit and withdrawal are accepted as they are', async () => {
    const dep = stored(
      await client.signTransfer({ method: 'deposit', subaccount_id: sub, asset_name: 'USDC', amount: '50.5' }),
    )
    await client.sendSigned(dep)
    expect(await usdcIn(sub)).toBe('150.5')
    const wd = stored(
      await client.signTransfer({ method: 'withdraw', subaccount_id: sub, asset_name: 'USDC', amount: '20' }),
    )
    await client.sendSigned(wd)
    expect(await usdcIn(sub)).toBe('130.5')
    const history = await client.getDepositHistory({ subaccount_id: sub })
    expect(history.events).toHaveLength(2)
  })

  it('a tampered stored action is refused with an invalid signature and moves nothing', async () => {
    const dep = stored(
      await client.signTransfer({ method: 'deposit', subaccount_id: sub, asset_name: 'USDC', amount: '1' }),
    )
    const err = await client.sendSigned({ ...dep, params: { ...dep.params, amount: '900' } }).catch((e) => e)
    expect(err).toBeInstanceOf(ExchangeAuthError)
    expect(err.rpcCode).toBe(RPC.SIGNATURE_INVALID)
    expect(await usdcIn(sub)).toBe('130.5')
    // the untampered original is still good
    await client.sendSigned(dep)
    expect(await usdcIn(sub)).toBe('131.5')
  })

  it('an action sent after its signature expired is refused; an over-large withdrawal is a margin refusal', async () => {
    const soon = Math.floor(sim.control.nowMs() / 1000) + 301
    const dep = stored(
      await client.signTransfer({
        method: 'deposit',
        subaccount_id: sub,
        asset_name: 'USDC',
        amount: '1',
        signature_expiry_sec: soon,
      }),
    )
    sim.control.advance(60_000)
    const err = await client.sendSigned(dep).catch((e) => e)
    expect(err.rpcCode).toBe(RPC.INVALID_SIGNATURE_EXPIRY)
    const big = await client.signTransfer({
      method: 'withdraw',
      subaccount_id: sub,
      asset_name: 'USDC',
      amount: '5000',
    })
    await expect(client.sendSigned(big)).rejects.toBeInstanceOf(ExchangeInsufficientMarginError)
  })
})
