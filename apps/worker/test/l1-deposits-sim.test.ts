/**
 * Derive v3's money in on the local chain: deposits through the OnchainActionManager stand-in on
 * anvil, credited by the simulator's L1 watcher once final (tools/derive-simulator/src/l1-deposits.ts).
 * Real contracts, a real node, reorgs by anvil's snapshots. The control API's `depositL1` (what the
 * exchange tests fund the platform with) opens an account the same way.
 */
import { type RunningSimulator, startDeriveSimulator, watchL1Deposits } from '@wh/derive-simulator'
import { type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import { deployTestOnchainActionManager, deployTestUsdc, testOnchainActionManagerAbi, testUsdcAbi } from '@wh/wallet'
import { type Address, createPublicClient, createTestClient, createWalletClient, getAddress, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// anvil's first two dev accounts: the deployer, and the platform's owner EOA that deposits
const [deployer, owner] = TEST_PRIVATE_KEYS.slice(0, 2).map((k) => privateKeyToAccount(k)) as [
  ReturnType<typeof privateKeyToAccount>,
  ReturnType<typeof privateKeyToAccount>,
]
const E12 = 10n ** 12n
const CONFIRMATIONS = 2

describe('v3 money in: L1 deposits through the OnchainActionManager, credited once final', () => {
  let chain: RunningChain
  let sim: RunningSimulator
  let manager: Address
  let usdc: Address
  /** USDC's protocol asset, as a client learns it: the spot asset of v3's public/get_currency */
  let USDC_ASSET: Address
  const clients = () => {
    const transport = http(chain.rpcUrl)
    return {
      pub: createPublicClient({ transport }),
      test: createTestClient({ mode: 'anvil', transport }),
      owner: createWalletClient({ account: owner, transport }),
      deployer: createWalletClient({ account: deployer, transport }),
    }
  }
  const mine = (blocks: number) => clients().test.mine({ blocks })
  async function call(fn: 'deposit' | 'depositToNewSubaccount', args: readonly unknown[]) {
    const c = clients()
    const hash = await c.owner.writeContract({
      address: manager,
      abi: testOnchainActionManagerAbi,
      functionName: fn,
      args: args as never,
      chain: null,
    })
    const r = await c.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    expect(r.status).toBe('success')
    return hash
  }
  const ownerSubaccounts = () =>
    [...sim.engine.subaccounts.values()].filter((s) => s.wallet === getAddress(owner.address))
  const usdcOf = (id: number) => sim.engine.subaccounts.get(id)?.balances.get('USDC') ?? 0n

  beforeAll(async () => {
    chain = await startChain()
    sim = await startDeriveSimulator({ chainId: chain.chainId })
    const res = await fetch(`${sim.v3HttpUrl}/public/get_currency`, { method: 'POST', body: '{"currency":"USDC"}' })
    const currency = (await res.json()) as { result: { spot: { address: Address }[] } }
    USDC_ASSET = getAddress(currency.result.spot[0]?.address ?? '0x')
    const c = clients()
    usdc = await deployTestUsdc(c.deployer, c.pub)
    manager = await deployTestOnchainActionManager(c.deployer, c.pub, [{ asset: USDC_ASSET, token: usdc }])
    for (const [fn, args] of [
      ['mint', [owner.address, 10_000_000_000n]],
      ['approve', [manager, 10_000_000_000n]],
    ] as const) {
      const wallet = fn === 'mint' ? c.deployer : c.owner
      const hash = await wallet.writeContract({ address: usdc, abi: testUsdcAbi, functionName: fn, args, chain: null })
      await c.pub.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    }
  }, 60_000)
  afterAll(async () => {
    await sim?.close()
    await chain?.stop()
  })

  it('a first deposit opens the account (its subaccount and a fallback) once its block is final; later deposits credit the subaccount, one to an unknown subaccount the fallback', async () => {
    const watcher = watchL1Deposits(sim.engine, {
      rpcUrl: chain.rpcUrl,
      manager,
      confirmations: CONFIRMATIONS,
      pollMs: 0,
    })
    const hash = await call('depositToNewSubaccount', [USDC_ASSET, 150_000_000n, 1, owner.address])
    // one block deep only: not final, nothing credited
    expect(await watcher.poll()).toBe(0)
    expect(ownerSubaccounts()).toEqual([])
    await mine(CONFIRMATIONS)
    expect(await watcher.poll()).toBe(1)
    const [fallback, trading] = ownerSubaccounts()
    expect(fallback?.label).toBe('fallback')
    expect(sim.engine.wallet(owner.address)?.fallbackSubaccountId).toBe(fallback?.id)
    expect(usdcOf(trading?.id ?? 0)).toBe(150_000_000n * E12)
    expect(sim.engine.history.deposits.at(-1)).toMatchObject({ subaccountId: trading?.id, txHash: hash })
    // the chain's tokens moved from the owner to the manager
    const held = await clients().pub.readContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'balanceOf',
      args: [manager],
    })
    expect(held).toBe(150_000_000n)

    await call('deposit', [USDC_ASSET, 40_000_000n, BigInt(trading?.id ?? 0), owner.address])
    await call('deposit', [USDC_ASSET, 7_000_000n, 999_999n, owner.address])
    await mine(CONFIRMATIONS)
    expect(await watcher.poll()).toBe(2)
    expect(usdcOf(trading?.id ?? 0)).toBe(190_000_000n * E12)
    expect(usdcOf(fallback?.id ?? 0)).toBe(7_000_000n * E12)
    expect(ownerSubaccounts()).toHaveLength(2)
    // read again from the first block, by a second watcher on the same engine: nothing twice
    const again = watchL1Deposits(sim.engine, { rpcUrl: chain.rpcUrl, manager, confirmations: 0, pollMs: 0 })
    expect(await again.poll()).toBe(0)
    expect(usdcOf(trading?.id ?? 0)).toBe(190_000_000n * E12)
    await again.stop()
    await watcher.stop()
  })

  it('a deposit whose block is reorganised away before it is final is never credited; the deposit that replaces it is', async () => {
    const watcher = watchL1Deposits(sim.engine, {
      rpcUrl: chain.rpcUrl,
      manager,
      confirmations: CONFIRMATIONS,
      pollMs: 0,
    })
    await watcher.poll()
    const trading = ownerSubaccounts()[1]?.id ?? 0
    const before = usdcOf(trading)
    const snapshot = await clients().test.snapshot()
    await call('deposit', [USDC_ASSET, 500_000_000n, BigInt(trading), owner.address])
    expect(await watcher.poll()).toBe(0) // seen one block deep, not final
    await clients().test.revert({ id: snapshot })
    // the other branch: a smaller deposit under the same action id, then enough blocks to be final
    await call('deposit', [USDC_ASSET, 3_000_000n, BigInt(trading), owner.address])
    await mine(CONFIRMATIONS)
    expect(await watcher.poll()).toBe(1)
    expect(usdcOf(trading) - before).toBe(3_000_000n * E12)
    await watcher.stop()
  })

  it("the control API's L1 deposit opens an account as the watcher does: its fallback subaccount with its first subaccount", async () => {
    const other = privateKeyToAccount(TEST_PRIVATE_KEYS[2] as `0x${string}`).address
    const first = sim.control.depositL1({ owner: other, asset: 'USDC', amount: '10' })
    const opened = sim.control.subaccountsOf(other)
    expect(opened.fallbackSubaccountId).not.toBeNull()
    expect(opened.subaccounts.map((s) => s.id).sort()).toEqual([first, opened.fallbackSubaccountId].sort())
    expect(sim.engine.subaccounts.get(opened.fallbackSubaccountId ?? 0)?.balances.get('USDC') ?? 0n).toBe(0n)
    // a second new subaccount of the account: no second fallback
    const second = sim.control.depositL1({ owner: other, asset: 'USDC', amount: '5' })
    expect(sim.control.subaccountsOf(other)).toEqual({
      subaccounts: expect.arrayContaining([expect.objectContaining({ id: second })]),
      fallbackSubaccountId: opened.fallbackSubaccountId,
    })
    expect(sim.control.subaccountsOf(other).subaccounts).toHaveLength(3)
  })
})
