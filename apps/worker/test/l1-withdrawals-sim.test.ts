/**
 * The simulator's v3 money out (tools/derive-simulator/src/l1-withdrawals.ts) and the outbox
 * stand-in (packages/wallet/contracts/TestWithdrawalOutbox.sol) on a real anvil node: a batch paid
 * in one executeWithdrawals call, net of the fee and in the token's decimals, settled once
 * confirmations deep; refusals (recipient not whitelisted, a fee above max_fee_usd); a payout the
 * vault cannot cover fails its withdrawals and returns the amounts; the outbox pays an id once and
 * only to its verifiable app's call; a recipient the outbox throttles is paid the bucket at once, and
 * the payer (the local keeper) pays the queued rest on a later poll once the bucket refilled.
 * docs/exchange-v3.md "Money out".
 */

import {
  attachL1Payer,
  type L1Payer,
  outboxIdOf,
  type RunningSimulator,
  startDeriveSimulator,
  whitelistRecipient,
} from '@wh/derive-simulator'
import { DeriveClient, ExchangeError } from '@wh/exchange'
import { type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  deployTestOnchainActionManager,
  deployTestUsdc,
  deployTestWithdrawalOutbox,
  testUsdcAbi,
  testWithdrawalOutboxAbi,
} from '@wh/wallet'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  type PublicClient,
  parseEventLogs,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

const L1 = 11_155_111
const USDC = (n: number) => BigInt(Math.round(n * 1_000_000))
const E12 = 10n ** 12n

describe('the simulator pays v3 withdrawals on L1 through the outbox stand-in', () => {
  let chain: RunningChain
  let sim: RunningSimulator
  let payer: L1Payer
  let v3: DeriveClient
  let usdc: Address
  let outbox: Address
  let funding: number
  let mine: () => Promise<void>
  let later: (seconds: number) => Promise<void>
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
  const operatorKey = generatePrivateKey()
  const sessionKey = generatePrivateKey()
  const owner = privateKeyToAccount(generatePrivateKey()).address
  const friend = privateKeyToAccount(generatePrivateKey()).address
  const stranger = privateKeyToAccount(generatePrivateKey()).address
  let publicClient: PublicClient

  /** the payer's transactions are all mined: its pending nonce is its latest (bounded wait on state) */
  const payerIdle = () =>
    vi.waitFor(
      async () => {
        const address = privateKeyToAccount(operatorKey).address
        const [latest, pending] = await Promise.all([
          publicClient.getTransactionCount({ address }),
          publicClient.getTransactionCount({ address, blockTag: 'pending' }),
        ])
        if (pending !== latest) throw new Error(`${pending - latest} payer transaction(s) in flight`)
      },
      { timeout: 10_000, interval: 20 },
    )
  const usdcOf = (a: Address) =>
    publicClient.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const held = () => sim.engine.subaccounts.get(funding)?.balances.get('USDC') ?? 0n
  const withdraw = (amount: string, recipient: Address, max_fee_usd = '1') =>
    v3.withdrawToL1({ subaccount_id: funding, asset_name: 'USDC', amount, max_fee_usd, recipient })

  beforeAll(async () => {
    chain = await startChain({ chainId: L1 })
    sim = await startDeriveSimulator({ chainId: L1 })
    const transport = http(chain.rpcUrl)
    const walletClient = createWalletClient({ account: deployer, transport })
    publicClient = createPublicClient({ transport })
    const anvil = createTestClient({ mode: 'anvil', transport })
    mine = () => anvil.mine({ blocks: 1 })
    later = async (seconds) => {
      await anvil.increaseTime({ seconds })
      await mine()
    }
    usdc = getAddress(await deployTestUsdc(walletClient, publicClient))
    const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
    const asset = getAddress(
      ((await res.json()) as { result: { spot: { address: Address }[] } }).result.spot[0]?.address ?? '0x',
    )
    const manager = await deployTestOnchainActionManager(walletClient, publicClient, [{ asset, token: usdc }])
    await anvil.setBalance({ address: privateKeyToAccount(operatorKey).address, value: 10n ** 20n })
    outbox = await deployTestWithdrawalOutbox(walletClient, publicClient, {
      verifiableApp: privateKeyToAccount(operatorKey).address,
      manager,
      assets: [{ asset, token: usdc, decimals: 6 }],
    })
    // the vault holds 1,000 USDC of deposits; the account's subaccount is credited 10,000 (more than the vault)
    const mint = await walletClient.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [manager, USDC(1_000)],
      chain: null,
    })
    await publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
    // a payout key: withdraw only, not admin, so Derive's whitelist binds it (the owner too is on it)
    const payoutKey = { address: privateKeyToAccount(sessionKey).address, scopes: ['withdraw' as const] }
    sim.control.registerWallet({ wallet: owner, sessionKeys: [payoutKey] })
    funding = sim.control.depositL1({ owner, asset: 'USDC', amount: '10000' })
    whitelistRecipient(sim.engine, owner, friend)
    whitelistRecipient(sim.engine, owner, owner)
    payer = attachL1Payer(sim.engine, {
      rpcUrl: chain.rpcUrl,
      outbox,
      operatorKey,
      confirmations: 1,
      pollMs: 0,
      feeUsd: '1',
    })
    v3 = new DeriveClient({
      wallet: owner,
      sessionKey,
      chainId: L1,
      httpUrl: sim.v3HttpUrl,
      wsUrl: sim.v3WsUrl,
      fundingSubaccountId: funding,
      clock: { now: () => new Date(sim.control.nowMs()) },
      retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    })
  }, 60_000)
  afterAll(async () => {
    await payer?.stop()
    await sim?.close()
    await chain?.stop()
  })

  it('a batch of two in one call, net of the fee in native decimals; Settled with that transaction once 1 block deep', async () => {
    const a = await withdraw('100', owner)
    const b = await withdraw('50.5', friend)
    expect(held()).toBe(USDC(9_849.5) * E12)
    expect(await v3.getTransaction(a.op_uuid)).toMatchObject({ status: 'pending', data: { batch_status: 'Batching' } })
    expect((await v3.getL1WithdrawalHistory({ subaccount_id: funding })).events).toEqual([])

    expect(await payer.poll()).toBe(0) // paid in a mined call, not yet 1 block deep
    expect([await usdcOf(owner), await usdcOf(friend)]).toEqual([USDC(99), USDC(49.5)])
    expect(await v3.getTransaction(b.op_uuid)).toMatchObject({ status: 'pending' })
    await mine()
    expect(await payer.poll()).toBe(2)
    const settled = await v3.getTransaction(a.op_uuid)
    expect(settled.status).toBe('settled')
    const txHash = (settled.data as { transaction_hash: Hex }).transaction_hash
    expect((await v3.getTransaction(b.op_uuid)).data).toMatchObject({ transaction_hash: txHash })
    const paid = parseEventLogs({
      abi: testWithdrawalOutboxAbi,
      eventName: 'WithdrawalPaid',
      logs: (await publicClient.getTransactionReceipt({ hash: txHash })).logs,
    })
    expect(paid.map((l) => [l.args.id, l.args.recipient, l.args.paid, l.args.remaining])).toEqual([
      [outboxIdOf(a.op_uuid), owner, USDC(99), 0n],
      [outboxIdOf(b.op_uuid), friend, USDC(49.5), 0n],
    ])
    expect((await v3.getL1WithdrawalHistory({ subaccount_id: funding })).events).toEqual([
      expect.objectContaining({ amount: '100', fee: '1', recipient: owner, tx_hash: a.op_uuid, tx_status: 'settled' }),
      expect.objectContaining({
        amount: '50.5',
        fee: '1',
        recipient: friend,
        tx_hash: b.op_uuid,
        tx_status: 'settled',
      }),
    ])
    expect(await payer.poll()).toBe(0) // nothing left: nothing paid twice
    expect(await usdcOf(owner)).toBe(USDC(99))
  })

  it('refusals: a recipient the owner did not whitelist (11033); a fee above max_fee_usd fails in its batch, nothing debited', async () => {
    const refused = await withdraw('10', stranger).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ExchangeError)
    expect((refused as ExchangeError).rpcCode).toBe(11033)
    const before = held()
    const capped = await withdraw('10', owner, '0.5')
    expect(await v3.getTransaction(capped.op_uuid)).toMatchObject({ status: 'reverted' })
    expect(held()).toBe(before)
    expect(payer.pending()).toBe(0)
  })

  it('a payout the vault cannot cover reverts: its withdrawals fail and the amounts return to the subaccount', async () => {
    const before = held()
    const big = await withdraw('2000', owner) // the vault holds 850.5 after the first batch
    expect(held()).toBe(before - USDC(2_000) * E12)
    expect(await payer.poll()).toBe(0)
    await mine()
    expect(await payer.poll()).toBe(0)
    expect(await v3.getTransaction(big.op_uuid)).toMatchObject({ status: 'reverted' })
    expect(held()).toBe(before)
    expect(await usdcOf(owner)).toBe(USDC(99))
  })

  it('the outbox: only its verifiable app pays, and an id is paid once (a second time it is skipped)', async () => {
    const transport = http(chain.rpcUrl)
    const operator = createWalletClient({ account: privateKeyToAccount(operatorKey), transport })
    const outsider = createWalletClient({ account: deployer, transport })
    const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
    const asset = getAddress(
      ((await res.json()) as { result: { spot: { address: Address }[] } }).result.spot[0]?.address ?? '0x',
    )
    const w = { id: outboxIdOf('manual'), accountId: 1n, asset, recipient: stranger, amount: USDC(1) }
    const call = {
      address: outbox,
      abi: testWithdrawalOutboxAbi,
      functionName: 'executeWithdrawals',
      args: [[w]],
      chain: null,
    } as const
    await expect(outsider.writeContract(call)).rejects.toThrow(/NotVerifiableApp/)
    for (let i = 0; i < 2; i++) {
      const hash = await operator.writeContract(call)
      const r = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
      const names = parseEventLogs({ abi: testWithdrawalOutboxAbi, logs: r.logs }).map((l) => l.eventName)
      expect(names).toEqual(i === 0 ? ['WithdrawalPaid'] : ['WithdrawalSkipped'])
    }
    expect(await usdcOf(stranger)).toBe(USDC(1))
  })

  it('a throttled recipient: the batch settles with part paid and the rest queued; the payer processes the queue once the bucket refilled', async () => {
    const transport = http(chain.rpcUrl)
    const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
    const asset = getAddress(
      ((await res.json()) as { result: { spot: { address: Address }[] } }).result.spot[0]?.address ?? '0x',
    )
    // the outbox's owner (its deployer) throttles the friend: 100 USDC at once, 10 USDC a second
    const limit = await createWalletClient({ account: deployer, transport }).writeContract({
      address: outbox,
      abi: testWithdrawalOutboxAbi,
      functionName: 'setBucketLimit',
      args: [friend, asset, USDC(100), USDC(10)],
      chain: null,
    })
    expect((await publicClient.waitForTransactionReceipt({ hash: limit, pollingInterval: 20 })).status).toBe('success')
    const before = await usdcOf(friend)
    const w = await withdraw('301', friend) // 300 net of the 1 USDC fee
    const id = outboxIdOf(w.op_uuid)
    const paidLogs = async () =>
      (
        await publicClient.getLogs({
          address: outbox,
          event: testWithdrawalOutboxAbi.find((e) => e.type === 'event' && e.name === 'WithdrawalPaid') as never,
          args: { id } as never,
          fromBlock: 0n,
        })
      ).map((l) => (l as unknown as { args: { paid: bigint; remaining: bigint } }).args)

    expect(await payer.poll()).toBe(0)
    await mine()
    expect(await payer.poll()).toBe(1) // settled as Derive settles it: the queue is L1's business
    const settled = await v3.getTransaction(w.op_uuid)
    expect(settled.status).toBe('settled')
    const receipt = await publicClient.getTransactionReceipt({
      hash: (settled.data as { transaction_hash: Hex }).transaction_hash,
    })
    expect(
      parseEventLogs({ abi: testWithdrawalOutboxAbi, logs: receipt.logs }).map((l) =>
        l.eventName === 'WithdrawalPaid'
          ? [l.eventName, l.args.id, l.args.paid, l.args.remaining]
          : l.eventName === 'WithdrawalEnqueued'
            ? [l.eventName, l.args.id, l.args.amount, l.args.recipient]
            : [l.eventName],
      ),
    ).toEqual([
      ['WithdrawalPaid', id, USDC(100), USDC(200)],
      ['WithdrawalEnqueued', id, USDC(200), friend],
    ])
    // the poll may already have paid a few seconds' refill; the rest waits in the queue
    const queued = () =>
      publicClient.readContract({
        address: outbox,
        abi: testWithdrawalOutboxAbi,
        functionName: 'queueLength',
        args: [friend, asset],
      })
    expect(await queued()).toBe(1n)
    expect(await usdcOf(friend)).toBeLessThan(before + USDC(300))

    // the bucket full again (100) at each poll: the payer's polls pay the queue off, the last part
    // with remaining 0. A poll sends its processQueue and does not wait for it; the node mines it a
    // moment after it answers: wait until the payer has nothing in flight (state, not time) before
    // reading the queue, so a slow machine reads what was mined, not what is still in the pool
    for (let i = 0; i < 4 && (await queued()) > 0n; i++) {
      await later(60)
      await payer.poll()
      await payerIdle()
    }
    expect(await queued()).toBe(0n)
    expect(await usdcOf(friend)).toBe(before + USDC(300))
    const logs = await paidLogs()
    expect(logs.reduce((sum, l) => sum + l.paid, 0n)).toBe(USDC(300))
    expect(logs.at(-1)?.remaining).toBe(0n)
    expect(logs.length).toBeGreaterThanOrEqual(3)
    await later(60)
    await payer.poll() // nothing queued: nothing paid twice
    await payerIdle()
    expect(await usdcOf(friend)).toBe(before + USDC(300))
  })
})
