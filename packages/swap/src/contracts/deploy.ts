/**
 * Deploys the local swap venue: TestWETH and a constant-product pool seeded with liquidity. Test,
 * benchmark and local-run only: never on a real chain.
 */
import { ContractDeployError } from '@wh/wallet'
import type { Abi, Account, Address, Chain, Hex, PublicClient, Transport, WalletClient } from 'viem'
import { erc20Abi } from 'viem'
import { poolAbi, poolBytecode } from './pool'
import { testWethAbi, testWethBytecode } from './test-weth'

type Wallet = WalletClient<Transport, Chain | undefined, Account>

/** The pool's fee on the input, in basis points (Uniswap V2's 0.3 %). */
export const DEFAULT_POOL_FEE_BPS = 30n

async function mined(publicClient: PublicClient, hash: Hex): Promise<void> {
  const r = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  if (r.status !== 'success') throw new ContractDeployError(hash, r.status)
}

async function deploy(wallet: Wallet, publicClient: PublicClient, abi: Abi, bytecode: Hex, args: unknown[]) {
  const hash = await wallet.deployContract({ abi, bytecode, args, account: wallet.account, chain: wallet.chain })
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  if (receipt.status !== 'success' || !receipt.contractAddress) throw new ContractDeployError(hash, receipt.status)
  return receipt.contractAddress
}

/**
 * Deploys TestWETH (18 decimals, owner-mintable) from the wallet client's account.
 *
 * @example const weth = await deployTestWeth(walletClient, publicClient)
 */
export function deployTestWeth(wallet: Wallet, publicClient: PublicClient): Promise<Address> {
  return deploy(wallet, publicClient, testWethAbi, testWethBytecode, [])
}

/**
 * Deploys a pool of `token0`/`token1`; the wallet client's account becomes its owner (the only
 * liquidity provider).
 *
 * @example const pool = await deployPool(walletClient, publicClient, { token0: usdc, token1: weth })
 */
export function deployPool(
  wallet: Wallet,
  publicClient: PublicClient,
  p: { token0: Address; token1: Address; feeBps?: bigint },
): Promise<Address> {
  return deploy(wallet, publicClient, poolAbi, poolBytecode, [p.token0, p.token1, p.feeBps ?? DEFAULT_POOL_FEE_BPS])
}

/**
 * The pool's owner approves and deposits `amount0` of token0 and `amount1` of token1 (it must
 * hold them: TestUSDC and TestWETH let their owner mint first).
 *
 * @example await seedLiquidity(walletClient, publicClient, { pool, token0: usdc, token1: weth, amount0: 3_000_000_000_000n, amount1: 10n ** 21n })
 */
export async function seedLiquidity(
  wallet: Wallet,
  publicClient: PublicClient,
  p: { pool: Address; token0: Address; token1: Address; amount0: bigint; amount1: bigint },
): Promise<void> {
  const base = { account: wallet.account, chain: wallet.chain } as const
  for (const [token, amount] of [
    [p.token0, p.amount0],
    [p.token1, p.amount1],
  ] as const) {
    await mined(
      publicClient,
      await wallet.writeContract({
        ...base,
        address: token,
        abi: erc20Abi,
        functionName: 'approve',
        args: [p.pool, amount],
      }),
    )
  }
  await mined(
    publicClient,
    await wallet.writeContract({
      ...base,
      address: p.pool,
      abi: poolAbi,
      functionName: 'addLiquidity',
      args: [p.amount0, p.amount1],
    }),
  )
}

/** Mints TestWETH (or any owner-mintable test token of the same shape) to `to`. */
export async function mintTestToken(
  wallet: Wallet,
  publicClient: PublicClient,
  p: { token: Address; to: Address; amount: bigint },
): Promise<void> {
  await mined(
    publicClient,
    await wallet.writeContract({
      account: wallet.account,
      chain: wallet.chain,
      address: p.token,
      abi: testWethAbi,
      functionName: 'mint',
      args: [p.to, p.amount],
    }),
  )
}

/** The pool's reserves, in the order of its tokens. */
export async function poolReserves(
  publicClient: PublicClient,
  pool: Address,
): Promise<{ reserve0: bigint; reserve1: bigint }> {
  const [reserve0, reserve1] = await Promise.all([
    publicClient.readContract({ address: pool, abi: poolAbi, functionName: 'reserve0' }),
    publicClient.readContract({ address: pool, abi: poolAbi, functionName: 'reserve1' }),
  ])
  return { reserve0, reserve1 }
}
