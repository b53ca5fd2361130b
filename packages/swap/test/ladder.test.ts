/**
 * The ladder executor against a real anvil (the constant-product pool, TestUSDC, TestWETH) and a
 * real Postgres (the outbox, the swaps table, the journal): what executes, what reverts on chain,
 * what is refused before any transaction, and what a restart does.
 */
import { randomUUID } from 'node:crypto'
import { SWAP_GAS_FLOOR_WEI } from '@wh/config'
import { balanceOf, platformExpenseGas, userExpense, userSub } from '@wh/ledger'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import { erc20Abi, type Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  executeSwap,
  poolReserves,
  SwapGasFloorError,
  type SwapRequest,
  SwapSanityError,
  SwapWalletBalanceError,
} from '../src/index'
import { buildSwapStack, CHAIN, type SwapStack } from './stack'

const SUB = 'sub-eth-1'
/** 3,000 USDC: 0.01 % of the pool, so the pool's price barely moves (deep) */
const USDC_IN = 3_000_000_000n
/** selling USDC for ETH at 3,000 USDC per ETH: 1/3000 ETH per USDC */
const INDEX_USDC_TO_ETH = { num: 1n, den: 3000n }

describe('swap ladder on a real pool', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let s: SwapStack
  const sql = () => ctx.database.sql

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({ RPC_URL_BASE: chain.rpcUrl })
    s = await buildSwapStack({
      config: ctx.config,
      sql: ctx.database.sql,
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
    })
  })
  afterAll(async () => {
    await ctx?.database.close()
    await chain?.stop()
  })

  const request = (over: Partial<SwapRequest> = {}): SwapRequest => ({
    swapId: randomUUID(),
    userId: randomUUID(),
    subaccountId: SUB,
    chain: CHAIN,
    sell: 'USDC',
    buy: 'ETH',
    amountIn: USDC_IN,
    indexPrice: INDEX_USDC_TO_ETH,
    ...over,
  })
  const nonceOf = (address: Hex) => s.base.publicClient.getTransactionCount({ address, blockTag: 'pending' })
  const eventsOf = (userId: string) =>
    sql()<{ type: string; idempotency_key: string; payload: Record<string, string> }[]>`
      select type, idempotency_key, payload from ledger_events where user_id = ${userId} order by idempotency_key`
  const swapTxs = (swapId: string) =>
    sql()<{ step: number; tx_hash: string; state: string }[]>`
      select step, tx_hash, state from outbound_txs where purpose = 'swap' and ref_id like ${`${swapId}:%`} order by ref_id, step`
  const mined = async (hash: Promise<Hex>) =>
    s.base.publicClient.waitForTransactionReceipt({ hash: await hash, pollingInterval: 20 })
  const tokenBalance = (token: Hex) =>
    s.base.publicClient.readContract({
      address: token,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [s.swapWallet.address],
    })

  /** automine off; after our step-0 swap is broadcast, a third party outbids it with a swap the same way, one block */
  async function frontRunAfterFirstBroadcast(frontRunUsdc: bigint, also?: () => void) {
    await s.anvil.setAutomine(false)
    let armed = false
    let done = false
    const beforeSend = () => {
      armed = true
    }
    const afterBroadcast = async (rec: { txHash: Hex }) => {
      if (!armed || done) return
      done = true
      await s.frontRun({ sell: 'USDC', amountIn: frontRunUsdc, outbid: rec.txHash })
      await s.anvil.mine({ blocks: 1 })
      await s.anvil.setAutomine(true)
      also?.()
    }
    return { hooks: { beforeSend }, outboxHooks: { afterBroadcast } }
  }

  it('a swap on a deep pool executes at the first step (3 bps) and records swap_executed and gas_spent', async () => {
    const req = request()
    const usdcBefore = await tokenBalance(s.usdc)
    const wethBefore = await tokenBalance(s.weth)
    const quote = await s.deps().adapter.quote(req)
    const r = await executeSwap(s.deps(), req)

    expect(r.outcome).toBe('executed')
    expect(r.steps.map((x) => [x.step, x.epsilonBps, x.status])).toEqual([[0, 3, 'executed']])
    expect(r.buyAmount).toBe(quote) // nothing moved the pool between quote and execution
    expect(r.sellAmount).toBe(USDC_IN)
    // the journal's amounts are the chain's: the swap wallet's balances moved by exactly them
    expect(usdcBefore - (await tokenBalance(s.usdc))).toBe(r.sellAmount)
    expect((await tokenBalance(s.weth)) - wethBefore).toBe(r.buyAmount)

    const txHash = r.txHash!.toLowerCase()
    const events = await eventsOf(req.userId)
    expect(events.map((e) => [e.type, e.idempotency_key])).toEqual([
      ['swap_executed', `tx:${CHAIN}:${txHash}:0`],
      ['gas_spent', `tx:${CHAIN}:${txHash}:1`],
    ])
    const receipt = await s.base.publicClient.getTransactionReceipt({ hash: r.txHash as Hex })
    expect(BigInt(events[1]!.payload['amount']!)).toBe(receipt.gasUsed * receipt.effectiveGasPrice)
    // the first swap of the wallet granted the pool its allowance: one approval, platform overhead at slot 0
    const [approval] = await sql()<{ n: number }[]>`
      select count(*)::int as n from outbound_txs where purpose = 'swap_approval' and state = 'confirmed'`
    expect(approval?.n).toBe(1)
  })

  it('ledger postings follow the swap_executed rule: sub sells into expense:swap, expense:swap buys into sub', async () => {
    const req = request()
    const r = await executeSwap(s.deps(), req)
    const u = req.userId
    expect(await balanceOf(sql(), userSub(u, SUB, 'USDC'), 'USDC')).toBe(-r.sellAmount!)
    expect(await balanceOf(sql(), userSub(u, SUB, 'ETH'), 'ETH')).toBe(r.buyAmount!)
    expect(await balanceOf(sql(), userExpense(u, 'swap'), 'USDC')).toBe(r.sellAmount!)
    expect(await balanceOf(sql(), userExpense(u, 'swap'), 'ETH')).toBe(-r.buyAmount!)
    // every event of the swap sums to zero per currency; the gas is the platform's, attributed to the user
    const sums = await sql()<{ currency: string; total: string }[]>`
      select p.currency, sum(p.amount)::text as total from ledger_postings p join ledger_events e on e.id = p.event_id
      where e.idempotency_key like ${`tx:${CHAIN}:${r.txHash!.toLowerCase()}:%`} group by p.currency`
    expect(sums.every((x) => x.total === '0')).toBe(true)
    const gas = await sql()<{ amount: string }[]>`
      select p.amount from ledger_postings p join ledger_events e on e.id = p.event_id
      where e.idempotency_key = ${`tx:${CHAIN}:${r.txHash!.toLowerCase()}:1`} and p.account = ${platformExpenseGas(CHAIN)}`
    expect(BigInt(gas[0]!.amount)).toBe(r.steps[0]!.gasWei)
  })

  it('a pool moved against us between quote and mining: step 0 reverts on chain (swap_reverted + gas_spent), 6 bps executes', async () => {
    const req = request()
    const nonce0 = await nonceOf(s.swapWallet.address)
    // 30,000 USDC (0.1 % of the pool) moves the ETH price ~20 bps: past 3 bps, well inside the sanity guard
    const hooks = await frontRunAfterFirstBroadcast(30_000_000_000n)
    const r = await executeSwap(s.deps(hooks), req)

    expect(r.outcome).toBe('executed')
    expect(r.steps.map((x) => [x.step, x.epsilonBps, x.status])).toEqual([
      [0, 3, 'reverted'],
      [1, 6, 'executed'],
    ])
    const [reverted, executed] = r.steps
    expect(reverted!.txHash).not.toBe(executed!.txHash)
    // the fresh quote of step 1 is lower than step 0's (the pool moved), and step 1 required less
    expect(executed!.quote! < reverted!.quote!).toBe(true)
    expect(r.buyAmount! >= executed!.minAmountOut!).toBe(true)
    const receipt0 = await s.base.publicClient.getTransactionReceipt({ hash: reverted!.txHash! })
    expect(receipt0.status).toBe('reverted')
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0 + 2)

    const events = await eventsOf(req.userId)
    const h0 = reverted!.txHash!.toLowerCase()
    const h1 = executed!.txHash!.toLowerCase()
    expect(events.map((e) => [e.type, e.idempotency_key]).sort()).toEqual(
      [
        ['gas_spent', `tx:${CHAIN}:${h0}:1`],
        ['gas_spent', `tx:${CHAIN}:${h1}:1`],
        ['swap_executed', `tx:${CHAIN}:${h1}:0`],
        ['swap_reverted', `tx:${CHAIN}:${h0}:0`],
      ].sort(),
    )
    const revertGas = events.find((e) => e.idempotency_key === `tx:${CHAIN}:${h0}:1`)!
    expect(BigInt(revertGas.payload['amount']!)).toBe(receipt0.gasUsed * receipt0.effectiveGasPrice)
    // swap_reverted posts nothing; the user's subaccount moved once
    expect(await balanceOf(sql(), userSub(req.userId, SUB, 'USDC'), 'USDC')).toBe(-USDC_IN)
  })

  it('a pool moved between quote and signing: step 0 fails its gas estimate, is not_sent (no row, no nonce), 6 bps executes', async () => {
    const req = request()
    const nonce0 = await nonceOf(s.swapWallet.address)
    const poolWeth = async () => (await poolReserves(s.base.publicClient, s.pool)).reserve1
    const wethBefore = await poolWeth()
    let moved = false
    const beforeSend = async () => {
      if (moved) return
      moved = true
      // mined at once (automine): the step's estimate then sees the moved pool and reverts (InsufficientOutput)
      await mined(s.frontRun({ sell: 'USDC', amountIn: 30_000_000_000n }))
    }
    const r = await executeSwap(s.deps({ hooks: { beforeSend } }), req).finally(async () => {
      // the pool is shared by the tests: put its ETH back where it was so the price stays near the index
      const ethOut = wethBefore - (await poolWeth())
      if (ethOut > 0n) await mined(s.frontRun({ sell: 'ETH', amountIn: ethOut }))
    })

    expect(r.outcome).toBe('executed')
    expect(r.steps.map((x) => [x.step, x.epsilonBps, x.status])).toEqual([
      [0, 3, 'not_sent'],
      [1, 6, 'executed'],
    ])
    expect(r.steps[0]!.txHash).toBeUndefined()
    // only step 1 was stored and sent: the failed estimate left no row and took no nonce
    expect((await swapTxs(req.swapId)).map((x) => [x.step, x.tx_hash])).toEqual([[1, r.txHash]])
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0 + 1)
    expect((await eventsOf(req.userId)).map((e) => e.type)).toEqual(['swap_executed', 'gas_spent'])
  })

  it('the sanity guard refuses a quote more than 100 bps from the index price: no transaction, no event', async () => {
    const nonce0 = await nonceOf(s.swapWallet.address)
    // the index says 2,900 USDC per ETH; the pool pays ~1/3000: ~330 bps less ETH than the index implies
    const req = request({ indexPrice: { num: 1n, den: 2900n } })
    const r = await executeSwap(s.deps(), req)
    expect(r.outcome).toBe('refused_sanity')
    expect(r.error).toBeInstanceOf(SwapSanityError)
    expect(r.error?.code).toBe('SWAP_SANITY_REFUSED')
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0)
    expect(await swapTxs(req.swapId)).toEqual([])
    expect(await eventsOf(req.userId)).toEqual([])
    // the other direction counts too: selling 1 ETH, the pool pays ~2,991 USDC where the index says 2,900
    // (~310 bps better): a stale index or a manipulated pool, refused as well
    const sell = request({ sell: 'ETH', buy: 'USDC', amountIn: 10n ** 18n, indexPrice: '2900' })
    expect((await executeSwap(s.deps(), sell)).outcome).toBe('refused_sanity')
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0)
    // and at the index, the same sale executes
    const fair = await executeSwap(s.deps(), { ...sell, swapId: randomUUID(), indexPrice: '3000' })
    expect(fair.outcome).toBe('executed')
  })

  it('the deadline stops the ladder: a step that reverts after LADDER_DEADLINE_MS is the last (manual clock)', async () => {
    const req = request()
    const hooks = await frontRunAfterFirstBroadcast(30_000_000_000n, () => s.clock.advance(30_001))
    const r = await executeSwap(s.deps(hooks), req)
    expect(r.outcome).toBe('deadline')
    expect(r.steps.map((x) => x.status)).toEqual(['reverted'])
    expect((await swapTxs(req.swapId)).length).toBe(1)
    expect((await eventsOf(req.userId)).map((e) => e.type).sort()).toEqual(['gas_spent', 'swap_reverted'])
    // a retry within SWAP_RETRY_STALE_AFTER_MS is a new run of the ladder, and executes
    const again = await executeSwap(s.deps(), req)
    expect(again.outcome).toBe('executed')
    expect(again.run).toBe(1)
    expect((await swapTxs(req.swapId)).length).toBe(2)
  })

  it('a retry whose first attempt is older than SWAP_RETRY_STALE_AFTER_MS is abandoned with an alert, nothing sent', async () => {
    const req = request({ indexPrice: { num: 1n, den: 2900n } })
    expect((await executeSwap(s.deps(), req)).outcome).toBe('refused_sanity')
    s.clock.advance(30 * 60 * 1000 + 1)
    const nonce0 = await nonceOf(s.swapWallet.address)
    const alertsBefore = s.alerts.length
    const r = await executeSwap(s.deps(), { ...req, indexPrice: INDEX_USDC_TO_ETH })
    expect(r.outcome).toBe('abandoned')
    expect(s.alerts.length).toBe(alertsBefore + 1)
    expect(s.alerts.at(-1)?.fields?.['swapId']).toBe(req.swapId)
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0)
    // abandoned is final: a further call neither sends nor alerts again
    expect((await executeSwap(s.deps(), req)).outcome).toBe('abandoned')
    expect(s.alerts.length).toBe(alertsBefore + 1)
  })

  it('a swap wallet below SWAP_GAS_FLOOR_WEI is refused with a typed error and sends nothing', async () => {
    const poor = privateKeyToAccount(generatePrivateKey())
    // exactly one wei short of the floor
    const fund = await s.base.walletClient.sendTransaction({
      account: s.deployer,
      to: poor.address,
      value: SWAP_GAS_FLOOR_WEI - 1n,
    })
    await s.base.publicClient.waitForTransactionReceipt({ hash: fund, pollingInterval: 20 })
    const req = request()
    const r = await executeSwap(s.deps({ swapWallet: poor }), req)
    expect(r.outcome).toBe('refused_gas')
    expect(r.error).toBeInstanceOf(SwapGasFloorError)
    expect(r.error?.code).toBe('SWAP_GAS_BELOW_FLOOR')
    expect(await nonceOf(poor.address)).toBe(0)
    expect(await swapTxs(req.swapId)).toEqual([])
    expect(await eventsOf(req.userId)).toEqual([])
  })

  it('a crash after the swap is signed and stored, before its broadcast: the restart sends those bytes, once', async () => {
    const req = request()
    const nonce0 = await nonceOf(s.swapWallet.address)
    let armed = false
    const crashing = s.deps({
      hooks: {
        beforeSend: () => {
          armed = true
        },
      },
      outboxHooks: {
        afterSigned: () => {
          if (armed) throw new Error('killed')
        },
      },
    })
    await expect(executeSwap(crashing, req)).rejects.toThrow('killed')
    const [stored] = await swapTxs(req.swapId)
    expect(stored?.state).toBe('signed')
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0) // nothing reached the node

    const r = await executeSwap(s.deps(), req)
    expect(r.outcome).toBe('executed')
    expect(r.txHash).toBe(stored?.tx_hash)
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0 + 1)
    const events = await eventsOf(req.userId)
    expect(events.map((e) => e.type)).toEqual(['swap_executed', 'gas_spent'])

    // a third call answers the stored result: no transaction, no event
    const again = await executeSwap(s.deps(), req)
    expect(again.outcome).toBe('executed')
    expect(again.txHash).toBe(stored?.tx_hash)
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0 + 1)
    expect(await eventsOf(req.userId)).toHaveLength(2)
  })

  it('a crash mid-ladder (step 1 broadcast, worker dies): the restart settles step 1, never sends a step on top', async () => {
    const req = request()
    const nonce0 = await nonceOf(s.swapWallet.address)
    const front = await frontRunAfterFirstBroadcast(30_000_000_000n)
    let broadcasts = 0
    const crashing = s.deps({
      hooks: front.hooks,
      outboxHooks: {
        afterBroadcast: async (rec) => {
          await front.outboxHooks.afterBroadcast(rec)
          broadcasts++
          if (broadcasts === 2) throw new Error(`killed after broadcasting ${rec.txHash}`)
        },
      },
    })
    await expect(executeSwap(crashing, req)).rejects.toThrow('killed')
    const before = await swapTxs(req.swapId)
    expect(before.map((x) => x.step)).toEqual([0, 1])

    const r = await executeSwap(s.deps(), req)
    expect(r.outcome).toBe('executed')
    expect(r.txHash).toBe(before[1]?.tx_hash)
    expect((await swapTxs(req.swapId)).map((x) => x.step)).toEqual([0, 1])
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0 + 2)
    const types = (await eventsOf(req.userId)).map((e) => e.type).sort()
    expect(types).toEqual(['gas_spent', 'gas_spent', 'swap_executed', 'swap_reverted'])
    await executeSwap(s.deps(), req)
    expect(await eventsOf(req.userId)).toHaveLength(4)
  })

  it('a swap wallet holding less of the sold token than the swap sells is refused with a typed error, nothing sent', async () => {
    const nonce0 = await nonceOf(s.swapWallet.address)
    const held = await tokenBalance(s.usdc)
    const req = request({ amountIn: held + 1n })
    await expect(executeSwap(s.deps(), req)).rejects.toBeInstanceOf(SwapWalletBalanceError)
    expect(await nonceOf(s.swapWallet.address)).toBe(nonce0)
    expect(await swapTxs(req.swapId)).toEqual([])
  })

  it('the same swap id with another amount is refused (a swap id is one swap)', async () => {
    const req = request({ indexPrice: { num: 1n, den: 2900n } })
    await executeSwap(s.deps(), req)
    await expect(executeSwap(s.deps(), { ...req, amountIn: req.amountIn + 1n })).rejects.toMatchObject({
      code: 'SWAP_MISMATCH',
    })
  })
})
