/**
 * The local run's swap venue (scripts/dev.ts and the Compose setup run it after
 * packages/wallet/scripts/local-stack.ts; reads the services' environment through @wh/config):
 *
 * 1. TestWETH and a constant-product TestUSDC/TestWETH pool on SWAP_CHAIN's local node: reused when
 *    SWAP_POOL_ADDRESS_LOCAL and WETH_ADDRESS_LOCAL already name contracts there, else deployed
 *    from dev account 0 and seeded at the simulator's ETH index (LOCAL_POOL_ETH deep);
 * 2. the swap wallet (SWAP_WALLET_PRIVATE_KEY) gets gas and both tokens to trade with, the
 *    platform's inventory on chain (docs/trading.md "Inventory");
 * 3. the exchange wallet at the simulator gets ETH: conversions deposit the bought underlying
 *    from it (the simulator keeps no state across restarts, so this runs on every start).
 *
 * Prints one JSON line: { poolAddress, wethAddress, deployed } (addresses only, never a key).
 */
import { loadConfig, loadDotEnvLocal, processEnv } from '@wh/config'
import { TEST_PRIVATE_KEYS } from '@wh/testkit'
import { testUsdcAbi } from '@wh/wallet'
import { type Address, createPublicClient, createWalletClient, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { deployPool, deployTestWeth, mintTestToken, seedLiquidity } from '../src/contracts/deploy'

/** ETH in the pool (its USDC side follows from the index): 10,000 ETH, deep enough for a demo. */
const LOCAL_POOL_ETH = 10_000n
/** what the swap wallet and the exchange wallet start with, per token */
const INVENTORY_ETH = 1_000n
const INVENTORY_USDC = 5_000_000n

loadDotEnvLocal()
const config = loadConfig(processEnv(), { setup: true })
if (config.nodeEnv === 'production') throw new Error('local-venue.ts sets up a local node only')
// the swap chain's own TestUSDC, on its own node (docs/chains.md "Local run: four chains")
const usdc = config.localChains?.[config.swapChain].usdc
if (!usdc) throw new Error('USDC_ADDRESS_LOCAL_* are not set: run packages/wallet/scripts/local-stack.ts first')

const rpcUrl = config.rpcUrls[config.swapChain]
const transport = http(rpcUrl)
const publicClient = createPublicClient({ transport })
const deployer = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const wallet = createWalletClient({ account: deployer, transport })
const swapWallet = privateKeyToAccount(config.keys.swapWalletPrivateKey)

const sim = async (path: string, body?: unknown) => {
  const res = await fetch(new URL(path, config.exchange.httpUrl), {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  })
  if (!res.ok) throw new Error(`the simulator refused ${path} (${res.status})`)
  return res.json() as Promise<unknown>
}

const hasCode = async (a: Address | undefined) => {
  if (!a) return false
  const code = await publicClient.getCode({ address: a })
  return code !== undefined && code !== '0x'
}

const mintUsdc = async (to: Address, units: bigint) =>
  publicClient.waitForTransactionReceipt({
    hash: await wallet.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [to, units],
      chain: null,
    }),
    pollingInterval: 50,
  })

let pool = config.swapLocal?.pool
let weth = config.swapLocal?.weth
let deployed = false
if (!(await hasCode(pool)) || !(await hasCode(weth))) {
  // the simulator reports its index in e18 (whole USD per ETH for the pool's ratio)
  const state = (await sim('/_sim/state')) as { prices?: Record<string, string> }
  const index = BigInt(state.prices?.ETH ?? 3000n * 10n ** 18n) / 10n ** 18n
  weth = await deployTestWeth(wallet, publicClient)
  pool = await deployPool(wallet, publicClient, { token0: usdc, token1: weth })
  const ethSide = LOCAL_POOL_ETH * 10n ** 18n
  const usdcSide = LOCAL_POOL_ETH * index * 10n ** 6n
  await mintUsdc(deployer.address, usdcSide)
  await mintTestToken(wallet, publicClient, { token: weth, to: deployer.address, amount: ethSide })
  await seedLiquidity(wallet, publicClient, { pool, token0: usdc, token1: weth, amount0: usdcSide, amount1: ethSide })
  // the swap wallet's inventory and gas
  await mintUsdc(swapWallet.address, INVENTORY_USDC * 10n ** 6n)
  await mintTestToken(wallet, publicClient, { token: weth, to: swapWallet.address, amount: INVENTORY_ETH * 10n ** 18n })
  await publicClient.waitForTransactionReceipt({
    hash: await wallet.sendTransaction({ to: swapWallet.address, value: parseEther('10'), chain: null }),
    pollingInterval: 50,
  })
  deployed = true
}

await sim('/_sim/fund_wallet', {
  wallet: config.exchange.walletAddress,
  asset_name: 'ETH',
  amount: String(INVENTORY_ETH),
})

process.stdout.write(`${JSON.stringify({ poolAddress: pool, wethAddress: weth, deployed })}\n`)
