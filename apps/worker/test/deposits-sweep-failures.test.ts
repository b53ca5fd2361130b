/**
 * Sweeps when the chain does not cooperate: fees that rise between the gas top-up and the sweep
 * (a second top-up, then a bounded stop), and a sweep that reverts on chain (its burnt gas is
 * journaled, the deposit is failed with an alert, and an operator's retry sweeps it).
 * Real anvil, real TestUSDC; the revert is the token's own refusal (InsufficientBalance).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { retryFailedSweep, type SweepDeps, sweepDeposit } from '@wh/deposits'
import { balanceOf, platformExpenseGas } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import { type AlertFields, type ChainClients, confirmOutbound, deployTestUsdc, sendOnce, testUsdcAbi } from '@wh/wallet'
import { Redis } from 'ioredis'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  getAddress,
  type Hex,
  http,
  keccak256,
  parseEther,
  parseGwei,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { WorkerDeps } from '../src/ticks'
import { buildTestDeps, TEST_CONFIRMATIONS } from './fixtures/deposit-stack'

const USDC = (n: number) => BigInt(n) * 1_000_000n

describe('sweeps: second gas top-up, reverted sweep (spec 6.1 slots, 8.1 GAS_FLOOR_WEI)', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps & SweepDeps
  let base: ChainClients
  let usdc: Address
  let anvil: ReturnType<typeof createTestClient>
  let nextHd = 5000
  const alerts: Array<{ text: string; fields: AlertFields | undefined }> = []
  const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({
      // base's node; the other chains' RPCs answer nothing (testEnv): a test of one chain
      RPC_URL_BASE: chain.rpcUrl,
    })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const transport = http(chain.rpcUrl)
    usdc = await deployTestUsdc(createWalletClient({ account: deployer, transport }), createPublicClient({ transport }))
    deps = {
      ...buildTestDeps(ctx.config, ctx.database.sql, redis, { chainId: chain.chainId, usdc }),
      alerter: {
        channel: 'log',
        alert: async (text, fields) => {
          alerts.push({ text, fields })
        },
      },
    }
    base = deps.clients.get('base') as ChainClients
    anvil = createTestClient({ mode: 'anvil', transport })
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  const mine = (blocks = TEST_CONFIRMATIONS) => anvil.mine({ blocks })
  async function mintUsdc(to: Address, amount: bigint) {
    const hash = await base.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, amount],
    })
    await base.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  /** A confirmed USDC deposit, as the scan tick leaves it: a `detected` row. */
  async function detectedDeposit(amount: bigint) {
    const hdIndex = nextHd++
    const address = deps.keyring.address(hdIndex)
    const [user] = await ctx.database.sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex})
      returning id`
    await mintUsdc(address, amount)
    const [dep] = await ctx.database.sql<{ id: string }[]>`
      insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount, state)
      values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, 1, ${user?.id as string}, ${hdIndex}, ${address},
        'USDC', ${amount.toString()}, 'detected')
      returning id`
    return { id: dep?.id as string, address, userId: user?.id as string }
  }
  async function outbound(depositId: string) {
    return ctx.database.sql<
      { purpose: string; step: number; state: string; tx_hash: string; gas_used: string; effective_gas_price: string }[]
    >`select purpose, step, state, tx_hash, gas_used, effective_gas_price from outbound_txs
      where ref_id = ${depositId} order by step`
  }
  const feeOf = (o: { gas_used: string; effective_gas_price: string }) =>
    BigInt(o.gas_used) * BigInt(o.effective_gas_price)
  async function eventsAbout(txHash: string) {
    return ctx.database.sql<{ type: string; idempotency_key: string; payload: { amount: string } }[]>`
      select type, idempotency_key, payload from ledger_events where idempotency_key like ${`tx:base:${txHash}:%`}
      order by idempotency_key`
  }
  async function untilDone(id: string, d: SweepDeps = deps): Promise<string> {
    for (let i = 0; i < 10; i++) {
      const o = await sweepDeposit(d, id)
      if (o !== 'pending') return o
      await mine()
    }
    throw new Error(`deposit ${id} still pending`)
  }
  /** Fees jump: the next block's base fee, and so every estimate after it, is `gwei`. */
  async function feesRiseTo(gwei: string) {
    await anvil.setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei(gwei) })
    await mine(1)
  }
  /** A sweep run that dies right after the broadcast of the top-up at `step`. */
  function crashAfterTopup(step: number): SweepDeps {
    return {
      ...deps,
      outboxHooks: {
        afterBroadcast: async (r) => {
          const [row] = await ctx.database.sql<{ purpose: string; step: number }[]>`
            select purpose, step from outbound_txs where id = ${r.id}`
          if (row?.purpose === 'gas_topup' && row.step === step) throw new Error(`killed after top-up ${step}`)
        },
      },
    }
  }

  it('fees that rise between the top-up and the sweep get a second top-up, not a failure; both are journaled', async () => {
    const dep = await detectedDeposit(USDC(30))
    const expenseBefore = await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')
    await expect(sweepDeposit(crashAfterTopup(0), dep.id)).rejects.toThrow('killed after top-up 0')
    await mine()
    const firstTopup = await base.publicClient.getBalance({ address: dep.address })
    expect(firstTopup).toBeGreaterThan(0n)

    await feesRiseTo('200')
    expect(await untilDone(dep.id)).toBe('swept')

    const out = await outbound(dep.id)
    expect(out.map((o) => [o.purpose, o.step, o.state])).toEqual([
      ['gas_topup', 0, 'confirmed'],
      ['sweep', 1, 'confirmed'],
      ['gas_topup', 2, 'confirmed'],
    ])
    const [t1, sweep, t2] = out
    if (!t1 || !sweep || !t2) throw new Error('missing rows')
    // the second top-up was sized at the risen fees: far more than the first
    const amounts = await ctx.database.sql<{ step: number; amount: string }[]>`
      select step, amount from outbound_txs where ref_id = ${dep.id} and purpose = 'gas_topup' order by step`
    expect(BigInt(amounts[1]?.amount ?? 0)).toBeGreaterThan(10n * BigInt(amounts[0]?.amount ?? 0))
    expect((await eventsAbout(sweep.tx_hash)).map((e) => [e.type, e.idempotency_key.split(':')[3]])).toEqual([
      ['deposit_swept', '0'],
      ['gas_spent', '1'],
    ])
    for (const t of [t1, t2])
      expect((await eventsAbout(t.tx_hash)).map((e) => [e.type, e.idempotency_key.split(':')[3]])).toEqual([
        ['gas_spent', '0'],
      ])
    const fees = feeOf(t1) + feeOf(sweep) + feeOf(t2)
    expect((await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')) - expenseBefore).toBe(fees)
    const hotUsdc = await base.publicClient.readContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'balanceOf',
      args: [deps.hotWallet('base').address],
    })
    expect(hotUsdc).toBeGreaterThanOrEqual(USDC(30))
  })

  it('a fee drift inside the headroom after a top-up signs the sweep with the gas the address holds: no second top-up', async () => {
    await feesRiseTo('10')
    const dep = await detectedDeposit(USDC(25))
    await expect(sweepDeposit(crashAfterTopup(0), dep.id)).rejects.toThrow('killed after top-up 0')
    await mine()
    // 30% dearer than the fees that sized the top-up (filled to SWEEP_FEE_HEADROOM = 2 × the fee):
    // the address still holds 2 / 1.3 ≈ 1.5 × the fresh fee, above the signing margin of 1.25
    await feesRiseTo('13')
    expect(await untilDone(dep.id)).toBe('swept')
    expect((await outbound(dep.id)).map((o) => [o.purpose, o.step, o.state])).toEqual([
      ['gas_topup', 0, 'confirmed'],
      ['sweep', 1, 'confirmed'],
    ])
  })

  it('top-ups are bounded: when fees rise past the second one the sweep waits short of gas and alerts', async () => {
    await feesRiseTo('1')
    const dep = await detectedDeposit(USDC(12))
    await expect(sweepDeposit(crashAfterTopup(0), dep.id)).rejects.toThrow('killed after top-up 0')
    await feesRiseTo('100')
    await expect(sweepDeposit(crashAfterTopup(2), dep.id)).rejects.toThrow('killed after top-up 2')
    await feesRiseTo('5000')
    const before = alerts.length
    expect(await sweepDeposit(deps, dep.id)).toBe('short-of-gas')
    expect(alerts.slice(before).map((a) => a.text)).toEqual(['deposit sweep short of gas after the last top-up'])
    expect((await outbound(dep.id)).map((o) => o.purpose)).toEqual(['gas_topup', 'gas_topup'])
    // fees come back down: the same attempt sweeps with the gas it has
    for (let i = 0; i < 40; i++) await feesRiseTo('1')
    expect(await untilDone(dep.id)).toBe('swept')
    expect((await outbound(dep.id)).map((o) => [o.purpose, o.step])).toEqual([
      ['gas_topup', 0],
      ['sweep', 1],
      ['gas_topup', 2],
    ])
  })

  it('a sweep that reverts on chain journals its burnt gas at slot 0, fails the deposit with an alert, and a retry sweeps it', async () => {
    await feesRiseTo('1')
    const dep = await detectedDeposit(USDC(9))
    // the address already holds gas the platform recorded (a top-up through the outbox): no top-up,
    // the sweep is the attempt's only transaction
    const outbox = { sql: ctx.database.sql, clients: deps.clients, registry: deps.registry }
    const gas = await sendOnce(outbox, {
      chain: 'base',
      purpose: 'gas_topup',
      refId: randomUUID(),
      signer: deps.gasWallet,
      to: dep.address,
      token: 'ETH',
      amountBaseUnits: parseEther('0.01'),
    })
    await confirmOutbound(outbox, gas.id)
    const expenseBefore = await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')

    // the sweep is signed (its estimate passes) and broadcast, then the token balance vanishes
    // before it is mined: TestUSDC refuses the transfer (InsufficientBalance), the gas is burnt
    await anvil.setAutomine(false)
    try {
      expect(await sweepDeposit(deps, dep.id)).toBe('pending')
      const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [dep.address, 2n]))
      await anvil.setStorageAt({ address: usdc, index: slot, value: toHex(0n, { size: 32 }) })
      await mine(1)
    } finally {
      await anvil.setAutomine(true)
    }
    const before = alerts.length
    expect(await untilDone(dep.id)).toBe('failed')
    const [sweep] = await outbound(dep.id)
    expect(sweep).toMatchObject({ purpose: 'sweep', step: 1, state: 'failed' })
    const receipt = await base.publicClient.getTransactionReceipt({ hash: sweep?.tx_hash as Hex })
    expect(receipt.status).toBe('reverted')

    const [row] = await ctx.database.sql<{ state: string }[]>`select state from deposits where id = ${dep.id}`
    expect(row?.state).toBe('failed')
    // its only event: gas_spent at slot 0 (no deposit_swept: nothing reached the hot wallet)
    const events = await eventsAbout(sweep?.tx_hash as string)
    expect(events.map((e) => [e.type, e.idempotency_key.split(':')[3]])).toEqual([['gas_spent', '0']])
    expect(BigInt(events[0]?.payload.amount ?? 0)).toBe(receipt.gasUsed * receipt.effectiveGasPrice)
    expect((await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')) - expenseBefore).toBe(
      receipt.gasUsed * receipt.effectiveGasPrice,
    )
    expect(alerts.slice(before).map((a) => a.text)).toEqual([
      'deposit sweep failed on chain; the funds stay at the deposit address',
    ])
    expect(String(alerts.at(-1)?.fields?.failed)).toContain(sweep?.tx_hash)
    // failed is final for the automation: no new transaction, no new event, no second alert
    expect(await sweepDeposit(deps, dep.id)).toBe('failed')
    expect(await outbound(dep.id)).toHaveLength(1)
    expect(alerts.length).toBe(before + 1)

    // an operator restores the cause and retries: a new attempt (steps 10+) sweeps the deposit
    const slot = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [dep.address, 2n]))
    await anvil.setStorageAt({ address: usdc, index: slot, value: toHex(USDC(9), { size: 32 }) })
    await retryFailedSweep(deps, dep.id)
    expect(await untilDone(dep.id)).toBe('swept')
    const out = await outbound(dep.id)
    expect(out.map((o) => [o.purpose, o.step, o.state])).toEqual([
      ['sweep', 1, 'failed'],
      ['sweep', 11, 'confirmed'],
    ])
    expect((await eventsAbout(out[1]?.tx_hash as string)).map((e) => e.type)).toEqual(['deposit_swept', 'gas_spent'])
    await expect(retryFailedSweep(deps, dep.id)).rejects.toMatchObject({ code: 'SWEEP_NOT_FAILED' })
    expect(await balanceOf(ctx.database.sql, platformExpenseGas('base'), 'ETH')).toBeGreaterThan(expenseBefore)
  })
})
