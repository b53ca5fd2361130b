/**
 * The local adapter: the constant-product pool of contracts/ConstantProductPool.sol deployed on the
 * local EVM node, so slippage, reverts and gas are real. One pool per chain, holding the
 * two tokens of the pair (TestUSDC and TestWETH in tests and the local run).
 */
import type { ChainClients, ChainName } from '@wh/wallet'
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  isAddressEqual,
  maxUint256,
  parseEventLogs,
  type TransactionReceipt,
} from 'viem'
import type {
  ApprovalCall,
  BuildSwapInput,
  BuiltSwap,
  SwapAdapter,
  SwapLeg,
  SwapReceiptOutcome,
  SwapToken,
} from './adapter'
import { poolAbi } from './contracts/pool'
import { InvalidSwapRequestError, SwapReceiptError } from './errors'

export interface LocalPool {
  readonly address: Address
  /** the pool's two tokens, by ledger currency */
  readonly tokens: readonly [SwapToken, SwapToken]
}

export interface LocalPoolAdapterOptions {
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly pools: Partial<Record<ChainName, LocalPool>>
}

/**
 * @example
 *   const adapter = localPoolAdapter({ clients, pools: { base: { address: pool, tokens: [usdcToken, wethToken] } } })
 *   const out = await adapter.quote({ chain: 'base', sell: 'USDC', buy: 'ETH', amountIn: 3_000_000_000n })
 */
export function localPoolAdapter(opts: LocalPoolAdapterOptions): SwapAdapter {
  const poolOf = (chain: ChainName): LocalPool => {
    const pool = opts.pools[chain]
    if (!pool) throw new InvalidSwapRequestError('no local pool on this chain', { chain })
    return pool
  }
  const clientOf = (chain: ChainName) => {
    const c = opts.clients.get(chain)
    if (!c) throw new InvalidSwapRequestError('no clients for this chain', { chain })
    return c.publicClient
  }
  const token = (chain: ChainName, currency: string): SwapToken => {
    const t = poolOf(chain).tokens.find((x) => x.currency === currency)
    if (!t) throw new InvalidSwapRequestError('the pool does not hold this currency', { chain, currency })
    return t
  }
  const pair = (leg: SwapLeg) => {
    if (leg.sell === leg.buy) throw new InvalidSwapRequestError('a swap needs two currencies', { currency: leg.sell })
    return { pool: poolOf(leg.chain).address, tokenIn: token(leg.chain, leg.sell), tokenOut: token(leg.chain, leg.buy) }
  }

  return {
    name: 'local-pool',
    token,

    async quote(leg) {
      const { pool, tokenIn } = pair(leg)
      return clientOf(leg.chain).readContract({
        address: pool,
        abi: poolAbi,
        functionName: 'getAmountOut',
        args: [tokenIn.address, leg.amountIn],
      })
    },

    async buildSwap(input: BuildSwapInput): Promise<BuiltSwap> {
      const { pool, tokenIn } = pair(input)
      const allowance = await clientOf(input.chain).readContract({
        address: tokenIn.address,
        abi: erc20Abi,
        functionName: 'allowance',
        args: [input.owner, pool],
      })
      // one unlimited approval per token and pool: a swap then costs one transaction, not two
      const approvals: ApprovalCall[] =
        allowance >= input.amountIn
          ? []
          : [
              {
                token: tokenIn,
                spender: pool,
                allowance: maxUint256,
                to: tokenIn.address,
                value: 0n,
                data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [pool, maxUint256] }),
              },
            ]
      const swap = {
        to: pool,
        value: 0n,
        data: encodeFunctionData({
          abi: poolAbi,
          functionName: 'swapExactIn',
          args: [tokenIn.address, input.amountIn, input.minAmountOut, input.recipient, input.deadlineSec],
        }),
      }
      return { approvals, swap }
    },

    parseOutcome(
      input: SwapLeg & { owner: Address; recipient: Address; receipt: TransactionReceipt },
    ): SwapReceiptOutcome {
      const { receipt } = input
      if (receipt.status !== 'success') return { status: 'reverted' }
      const { pool, tokenIn, tokenOut } = pair(input)
      const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs, strict: true })
      let sellAmount = 0n
      let buyAmount = 0n
      for (const log of transfers) {
        const { from, to, value } = log.args
        if (
          isAddressEqual(log.address, tokenIn.address) &&
          isAddressEqual(from, input.owner) &&
          isAddressEqual(to, pool)
        )
          sellAmount += value
        if (
          isAddressEqual(log.address, tokenOut.address) &&
          isAddressEqual(from, pool) &&
          isAddressEqual(to, input.recipient)
        )
          buyAmount += value
      }
      if (sellAmount === 0n || buyAmount === 0n)
        throw new SwapReceiptError(receipt.transactionHash, `no Transfer logs of the swap (pool ${getAddress(pool)})`)
      return { status: 'executed', sellAmount, buyAmount }
    },
  }
}
