/**
 * What a conversion round's steps share (docs/trading.md "Conversions and swaps"): their dependencies, the round as
 * the run reads it, a transition's answer and a movement. In a file of its own, so the steps (run.ts, plan.ts,
 * swap.ts, movement.ts) import it and not each other.
 */
import type { Clock } from '@wh/core'
import type { TransferDeps, TransferRow } from '@wh/subaccounts'
import type { SwapAdapter } from '@wh/swap'
import type { ChainClients, ChainInfo, ChainName, OutboxSource } from '@wh/wallet'
import type { Redis } from 'ioredis'
import type { LocalAccount } from 'viem'
import type { ConversionDirection, ConversionTrigger } from './figures'
import type { ConversionState } from './store'

export interface ConvertDeps extends TransferDeps {
  readonly redis: Redis
  readonly clock: Clock
  readonly swap: { readonly adapter: SwapAdapter; readonly wallet: LocalAccount; readonly chain: ChainName }
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  /** signs replacements of the swap wallet's stuck transactions (@wh/wallet's outboxOf) */
  readonly signerOf?: OutboxSource['signerOf']
  /** PRE_CONVERT_LEAD_MINUTES, CONVERSION_STUCK_MINUTES */
  readonly preConvertLeadMinutes: number
  readonly stuckMinutes: number
  /** tests: poll receipts faster */
  readonly swapReceiptPollMs?: number
  /** set by runConversions: the index per instrument, read once per run */
  readonly indexCache?: Map<string, Promise<bigint>>
  /** tests: runs once a movement is stored and before it is first sent (the crash window) */
  readonly hooks?: { afterStored?: (row: TransferRow) => Promise<void> }
}

/** An open round as the tick reads it: the row, its subaccount's exchange id and stop, its leg. */
export interface Round {
  id: string
  wheel_id: string
  position_id: string
  user_id: string
  subaccount_id: string
  exchange_id: string | null
  stopped_at: Date | null
  asset: string
  direction: ConversionDirection
  trigger: ConversionTrigger
  state: ConversionState
  sell_currency: string
  buy_currency: string
  amount_in: string | null
  amount_out: string | null
  out_transfer_id: string | null
  in_transfer_id: string | null
  alerted_at: Date | null
  created_at: Date
  instrument: string
  strike_e18: string
  filled_e18: string
  settlement_cost: string | null
  attempts: number
}

/**
 * A transition's answer: this run of the round ends with `done` (the step counted), or the round is
 * now `next` (as stored) and the run takes it on; `firstSend` when its movement was just stored by
 * this process and was never sent.
 */
export type Transition = { readonly done: string } | { readonly next: Round; readonly firstSend?: boolean }

/** What a round moves between the subaccount and the exchange wallet. */
export interface Movement {
  readonly kind: 'convert_in' | 'convert_out'
  readonly method: 'deposit' | 'withdraw'
  readonly currency: string
  readonly units: bigint
}
