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

/** The pools and clients of the adapter, looked up per chain; each throws InvalidSwapRequestError when missing. */
interface LocalVenue {
  readonly clientOf: (chain: ChainName) => ChainClients['publicClient']
  readonly token: (chain: ChainName, currency: string) => SwapToken
  /** the pool of a leg and its two tokens, in the leg's direction */
  readonly pair: (leg: SwapLeg) => { pool: Address; tokenIn: SwapToken; tokenOut: SwapToken }
}

function localVenue(opts: LocalPoolAdapterOptions): LocalVenue {
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
  return { clientOf, token, pair }
}

/** What the pool would pay out for the leg now (its `getAmountOut`). */
async function quoteLocal(venue: LocalVenue, leg: SwapLeg): Promise<bigint> {
  const { pool, tokenIn } = venue.pair(leg)
  return venue.clientOf(leg.chain).readContract({
    address: pool,
    abi: poolAbi,
    functionName: 'getAmountOut',
    args: [tokenIn.address, leg.amountIn],
  })
}

/** The approval the swap needs first: none while the pool may already spend `amountIn`. */
function approvalsFor(tokenIn: SwapToken, pool: Address, allowance: bigint, amountIn: bigint): ApprovalCall[] {
  // one unlimited approval per token and pool: a swap then costs one transaction, not two
  if (allowance >= amountIn) return []
  return [
    {
      token: tokenIn,
      spender: pool,
      allowance: maxUint256,
      to: tokenIn.address,
      value: 0n,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [pool, maxUint256] }),
    },
  ]
}

/** The approvals the owner still needs and the pool's `swapExactIn` call. */
async function buildLocalSwap(venue: LocalVenue, input: BuildSwapInput): Promise<BuiltSwap> {
  const { pool, tokenIn } = venue.pair(input)
  const allowance = await venue.clientOf(input.chain).readContract({
    address: tokenIn.address,
    abi: erc20Abi,
    functionName: 'allowance',
    args: [input.owner, pool],
  })
  const swap = {
    to: pool,
    value: 0n,
    data: encodeFunctionData({
      abi: poolAbi,
      functionName: 'swapExactIn',
      args: [tokenIn.address, input.amountIn, input.minAmountOut, input.recipient, input.deadlineSec],
    }),
  }
  return { approvals: approvalsFor(tokenIn, pool, allowance, input.amountIn), swap }
}

type OutcomeInput = SwapLeg & { owner: Address; recipient: Address; receipt: TransactionReceipt }

/** The swap's amounts, from the receipt's Transfer logs: owner to pool (sold), pool to recipient (bought). */
function parseLocalOutcome(venue: LocalVenue, input: OutcomeInput): SwapReceiptOutcome {
  const { receipt } = input
  if (receipt.status !== 'success') return { status: 'reverted' }
  const { pool, tokenIn, tokenOut } = venue.pair(input)
  const transfers = parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs, strict: true })
  let sellAmount = 0n
  let buyAmount = 0n
  for (const log of transfers) {
    const { from, to, value } = log.args
    if (isAddressEqual(log.address, tokenIn.address) && isAddressEqual(from, input.owner) && isAddressEqual(to, pool))
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
}

/**
 * @example
 *   const adapter = localPoolAdapter({ clients, pools: { base: { address: pool, tokens: [usdcToken, wethToken] } } })
 *   const out = await adapter.quote({ chain: 'base', sell: 'USDC', buy: 'ETH', amountIn: 3_000_000_000n })
 */
export function localPoolAdapter(opts: LocalPoolAdapterOptions): SwapAdapter {
  const venue = localVenue(opts)
  return {
    name: 'local-pool',
    token: venue.token,
    quote: (leg) => quoteLocal(venue, leg),
    buildSwap: (input) => buildLocalSwap(venue, input),
    parseOutcome: (input) => parseLocalOutcome(venue, input),
  }
}
