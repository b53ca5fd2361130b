/**
 * The local swap venue on a real anvil, for the integration tests and the benchmark: TestUSDC (from
 * @wh/wallet), TestWETH and a constant-product pool seeded at 3,000 USDC per ETH, the swap wallet
 * funded with both tokens, and the executor's dependencies around them.
 */
import type { Config } from '@wh/config'
import { type Clock, ManualClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  type AlertFields,
  buildChainClients,
  buildChainRegistry,
  type ChainClients,
  type ChainName,
  deployTestUsdc,
  type OutboxDeps,
  testUsdcAbi,
} from '@wh/wallet'
import { type Address, createPublicClient, createTestClient, createWalletClient, http, type LocalAccount } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import {
  deployPool,
  deployTestWeth,
  localPoolAdapter,
  mintTestToken,
  poolAbi,
  poolReserves,
  type SwapToken,
  seedLiquidity,
} from '../src/index'
import type { SwapDeps } from '../src/ladder-types'

export const CHAIN = 'base' as const
/** the pool's depth: 30,000,000 USDC against 10,000 ETH (3,000 USDC per ETH) */
export const POOL_USDC = 30_000_000_000_000n
export const POOL_WETH = 10_000n * 10n ** 18n
export const INDEX_ETH_USD = '3000'

export interface SwapStack {
  deployer: LocalAccount
  swapWallet: LocalAccount
  usdc: Address
  weth: Address
  pool: Address
  tokens: readonly [SwapToken, SwapToken]
  outbox: OutboxDeps
  base: ChainClients
  anvil: ReturnType<typeof createTestClient>
  alerts: { text: string; fields: AlertFields | undefined }[]
  clock: ManualClock
  deps(over?: Partial<SwapDeps> & { outboxHooks?: OutboxDeps['hooks'] }): SwapDeps
  /**
   * A third party's swap on the pool (moves the price). With `outbid`, it tips 1 gwei more than that
   * pending transaction, so a block mined with both orders it first.
   */
  frontRun(p: { sell: 'USDC' | 'ETH'; amountIn: bigint; outbid?: `0x${string}` }): Promise<`0x${string}`>
  /**
   * Trades the pool (as the deployer) to about `usdcPerEth` whole USDC per ETH, within its fee: what
   * an arbitrageur does after the index moved (the ladder's sanity guard compares the two).
   */
  movePoolTo(usdcPerEth: bigint): Promise<void>
}

/** ⌊√n⌋ of a bigint (Newton). */
function sqrt(n: bigint): bigint {
  if (n < 2n) return n
  let x = n
  let y = (x + 1n) / 2n
  while (y < x) {
    x = y
    y = (x + n / x) / 2n
  }
  return x
}

export async function buildSwapStack(p: {
  config: Config
  sql: Sql
  rpcUrl: string
  chainId: number
  clock?: Clock
  /** the chain the node stands for (default CHAIN) */
  chain?: ChainName
  /** a TestUSDC already on the node, owned by the deployer (default: one deployed here) */
  usdc?: Address
}): Promise<SwapStack> {
  const chain = p.chain ?? CHAIN
  const transport = http(p.rpcUrl)
  const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
  const swapWallet = privateKeyToAccount(p.config.keys.swapWalletPrivateKey)
  const wallet = createWalletClient({ account: deployer, transport })
  const publicClient = createPublicClient({ transport })
  const usdc = p.usdc ?? (await deployTestUsdc(wallet, publicClient))
  const weth = await deployTestWeth(wallet, publicClient)
  const pool = await deployPool(wallet, publicClient, { token0: usdc, token1: weth })
  const mintUsdc = async (to: Address, amount: bigint) => {
    const hash = await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, amount],
      chain: null,
    })
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }
  // the deployer provides the liquidity and front-runs; the swap wallet trades
  await mintUsdc(deployer.address, POOL_USDC * 2n)
  await mintTestToken(wallet, publicClient, { token: weth, to: deployer.address, amount: POOL_WETH * 2n })
  await seedLiquidity(wallet, publicClient, {
    pool,
    token0: usdc,
    token1: weth,
    amount0: POOL_USDC,
    amount1: POOL_WETH,
  })
  // SWAP_WALLET_PRIVATE_KEY of the test env need not be a funded dev account: give it gas
  const gas = await wallet.sendTransaction({ to: swapWallet.address, value: 10n ** 19n, chain: null })
  await publicClient.waitForTransactionReceipt({ hash: gas, pollingInterval: 20 })
  await mintUsdc(swapWallet.address, 100_000_000_000_000n)
  await mintTestToken(wallet, publicClient, { token: weth, to: swapWallet.address, amount: 10_000n * 10n ** 18n })
  for (const token of [usdc, weth]) {
    const hash = await wallet.writeContract({
      address: token,
      abi: testUsdcAbi,
      functionName: 'approve',
      args: [pool, 2n ** 256n - 1n],
      chain: null,
    })
    await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  }

  const registry = buildChainRegistry(p.config, {
    [chain]: { chainId: p.chainId, usdc, confirmations: 0 },
  })
  const clients = buildChainClients(registry)
  const outbox: OutboxDeps = { sql: p.sql, clients, registry }
  const tokens = [
    { currency: 'USDC', address: usdc, decimals: 6 },
    { currency: 'ETH', address: weth, decimals: 18 },
  ] as const
  const adapter = localPoolAdapter({ clients, pools: { [chain]: { address: pool, tokens } } })
  const alerts: SwapStack['alerts'] = []
  const clock = p.clock instanceof ManualClock ? p.clock : new ManualClock(Date.now())
  const anvil = createTestClient({ mode: 'anvil', transport })

  const self: SwapStack = {
    deployer,
    swapWallet,
    usdc,
    weth,
    pool,
    tokens,
    outbox,
    base: clients.get(chain) as ChainClients,
    anvil,
    alerts,
    clock,
    deps: (over = {}) => {
      const { outboxHooks, ...rest } = over
      return {
        sql: p.sql,
        outbox: outboxHooks ? { ...outbox, hooks: outboxHooks } : outbox,
        adapter,
        swapWallet,
        clock,
        alerter: {
          alert: async (text, fields) => {
            alerts.push({ text, fields })
          },
        },
        receiptPollMs: 20,
        ...rest,
      }
    },
    async movePoolTo(usdcPerEth) {
      const { reserve0: usdcReserve, reserve1: wethReserve } = await poolReserves(publicClient, pool)
      // x·y = k at the target price: weth' = √(k · 10^12 / price) (USDC 6 decimals, WETH 18)
      const wethTarget = sqrt((usdcReserve * wethReserve * 10n ** 12n) / usdcPerEth)
      const withFee = (x: bigint) => (x * 10_030n) / 10_000n
      const hash =
        wethTarget > wethReserve
          ? await self.frontRun({ sell: 'ETH', amountIn: withFee(wethTarget - wethReserve) })
          : await self.frontRun({
              sell: 'USDC',
              amountIn: withFee(((wethReserve - wethTarget) * usdcPerEth) / 10n ** 12n),
            })
      await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    },
    async frontRun({ sell, amountIn, outbid }) {
      const fees = await publicClient.estimateFeesPerGas()
      const victim = outbid ? await publicClient.getTransaction({ hash: outbid }) : undefined
      const tip = (victim?.maxPriorityFeePerGas ?? fees.maxPriorityFeePerGas) + 1_000_000_000n
      const head = await publicClient.getBlock()
      return wallet.writeContract({
        address: pool,
        abi: poolAbi,
        functionName: 'swapExactIn',
        args: [sell === 'USDC' ? usdc : weth, amountIn, 0n, deployer.address, head.timestamp + 3600n],
        chain: null,
        gas: 200_000n,
        maxPriorityFeePerGas: tip,
        maxFeePerGas: (victim?.maxFeePerGas ?? fees.maxFeePerGas) * 2n + tip,
      })
    },
  }
  return self
}
