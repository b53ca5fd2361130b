/**
 * The port between the ladder and a swap venue (docs/swaps.md "Adapter"). The ladder owns the
 * policy (sanity guard, tolerance steps, deadline, gas floor, journal); an adapter only knows its
 * venue: what it quotes, which calls a swap takes, and what a receipt says happened.
 */
import type { ChainName } from '@wh/wallet'
import type { Address, Hex, TransactionReceipt } from 'viem'
import { SwapAdapterNotConfiguredError } from './errors'

/** A ledger currency's ERC-20 on one chain. */
export interface SwapToken {
  /** the ledger currency (USDC, ETH, …) */
  readonly currency: string
  readonly address: Address
  readonly decimals: number
}

/** One transaction to sign: a contract call. */
export interface ContractCall {
  readonly to: Address
  readonly data: Hex
  readonly value: bigint
}

/** An allowance the owner must grant before the swap can pull `token`. */
export interface ApprovalCall extends ContractCall {
  readonly token: SwapToken
  readonly spender: Address
  readonly allowance: bigint
}

export interface SwapLeg {
  readonly chain: ChainName
  /** ledger currency sold */
  readonly sell: string
  /** ledger currency bought */
  readonly buy: string
  /** base units of `sell` */
  readonly amountIn: bigint
}

export interface BuildSwapInput extends SwapLeg {
  readonly minAmountOut: bigint
  /** the signer (pays amountIn, must have granted the allowances) */
  readonly owner: Address
  /** receives the output */
  readonly recipient: Address
  /** unix seconds after which the venue must refuse the swap */
  readonly deadlineSec: bigint
}

export interface BuiltSwap {
  /** allowances still missing right now, to be mined before `swap` */
  readonly approvals: readonly ApprovalCall[]
  readonly swap: ContractCall
}

export type SwapReceiptOutcome =
  | { readonly status: 'executed'; readonly sellAmount: bigint; readonly buyAmount: bigint }
  | { readonly status: 'reverted' }

export interface SwapAdapter {
  /** for logs and alerts */
  readonly name: string
  /** the token of a ledger currency on a chain; throws InvalidSwapRequestError when the venue has none */
  token(chain: ChainName, currency: string): SwapToken
  /** base units of `buy` that `amountIn` of `sell` gets right now */
  quote(leg: SwapLeg): Promise<bigint>
  /** the transaction(s) to sign for one swap */
  buildSwap(input: BuildSwapInput): Promise<BuiltSwap>
  /** what a mined swap did, from the receipt's status and Transfer logs */
  parseOutcome(input: SwapLeg & { owner: Address; recipient: Address; receipt: TransactionReceipt }): SwapReceiptOutcome
}

/**
 * The adapter of a deployment without a swap venue: the live (mainnet) adapter is out of scope
 * for now, so anything but the local pool refuses loudly instead of pretending.
 *
 * @example
 *   const adapter = config.nodeEnv === 'production' ? notConfiguredSwapAdapter('mainnet') : localPoolAdapter(…)
 */
export function notConfiguredSwapAdapter(what = 'live'): SwapAdapter {
  const refuse = (): never => {
    throw new SwapAdapterNotConfiguredError(what)
  }
  return {
    name: `not-configured:${what}`,
    token: refuse,
    quote: async () => refuse(),
    buildSwap: async () => refuse(),
    parseOutcome: refuse,
  }
}
