/**
 * The ladder's request, result and dependencies (docs/swaps.md "The ladder"): the types both the ladder
 * (ladder.ts) and its side of the chain (ladder-chain.ts) read, in a file of their own so neither imports the other.
 */
import type { AppError, Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { Alerter, ChainName, OutboxDeps } from '@wh/wallet'
import type { Hex, LocalAccount } from 'viem'
import type { SwapAdapter } from './adapter'
import type { PriceRatio } from './math'

export type SwapOutcome =
  | 'executed'
  | 'exhausted'
  | 'deadline'
  | 'refused_sanity'
  | 'refused_gas'
  /** a retry whose first attempt is older than SWAP_RETRY_STALE_AFTER_MS (an alert went out) */
  | 'abandoned'
  /** a step's transaction is not final yet (not mined, or not confirmations deep): call again */
  | 'pending'

export interface SwapRequest {
  /** the caller's id of this swap (uuid): a second call with it continues or retries the same swap */
  readonly swapId: string
  readonly userId: string
  readonly subaccountId: string
  readonly chain: ChainName
  /** ledger currency sold and bought (USDC, ETH) */
  readonly sell: string
  readonly buy: string
  /** base units of `sell` */
  readonly amountIn: bigint
  /** whole units of `buy` per whole unit of `sell`: a decimal string or an exact ratio, never a float */
  readonly indexPrice: string | PriceRatio
  /**
   * base units of `buy` the user's credit is a multiple of (the exchange's finest amount, where the
   * bought amount goes next): `swap_executed` books the bought amount rounded down to it, and the
   * remainder, under one step, stays in the swap wallet as the platform's (`creditedAmount`). 1 by default.
   */
  readonly creditStep?: bigint
}

/** What one step quoted and required, handed to `hooks.beforeSend`. */
export interface LadderStep {
  readonly swapId: string
  readonly run: number
  readonly step: number
  readonly epsilonBps: number
  readonly quote: bigint
  readonly minAmountOut: bigint
}

export interface StepReport {
  readonly step: number
  readonly epsilonBps: number
  /** executed / reverted on chain; not_sent: the node refused it at estimation (it would revert);
   * dropped: its nonce went to another transaction; in_flight: not final when this call returned */
  readonly status: 'executed' | 'reverted' | 'not_sent' | 'dropped' | 'in_flight'
  readonly quote?: bigint
  readonly minAmountOut?: bigint
  readonly txHash?: Hex
  readonly gasWei?: bigint
  /** wall time of the step in this call (quote to final receipt) */
  readonly durationMs: number
}

export interface SwapResult {
  readonly swapId: string
  readonly outcome: SwapOutcome
  readonly run: number
  readonly steps: readonly StepReport[]
  readonly txHash?: string
  readonly sellAmount?: bigint
  readonly buyAmount?: bigint
  /** the typed refusal (SwapSanityError, SwapGasFloorError) */
  readonly error?: AppError
}

export interface SwapDeps {
  readonly sql: Sql
  /** the wallet's outbox dependencies (the swap's transactions share its table and nonce lock) */
  readonly outbox: OutboxDeps
  readonly adapter: SwapAdapter
  /** SWAP_WALLET_PRIVATE_KEY's account: signs, pays amountIn and gas, receives the output */
  readonly swapWallet: LocalAccount
  readonly clock: Clock
  readonly alerter: Pick<Alerter, 'alert'>
  readonly hooks?: {
    /** after the quote and before the step's transaction is signed (tests move the pool here) */
    beforeSend?: (step: LadderStep) => Promise<void> | void
  }
  readonly receiptPollMs?: number
  readonly maxReceiptPolls?: number
  readonly sleep?: (ms: number) => Promise<void>
}
