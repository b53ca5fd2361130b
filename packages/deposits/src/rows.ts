/**
 * The rows of the deposit tables as this package and its callers type them: one hand-written set,
 * snake_case as the SQL selects them (the worker's reads select into these too). There is no
 * drizzle-inferred twin: packages/db's schema of these tables exports no row type.
 */
import type { ChainName } from '@wh/wallet'

/** A `deposits` row as the sweep reads it. */
export interface DepositRow {
  id: string
  chain: ChainName
  user_id: string
  hd_index: number
  address: string
  token: 'ETH' | 'USDC'
  amount: string
  /** detected → sweeping → swept; failed (an operator retries: retry) */
  state: string
}

/**
 * A deposit found on chain (the scan's transfer, the audit's traced internal transfer), as
 * `recordDetected` inserts it: its fields are the columns of the JSON record set it is sent as
 * (a type, not an interface, so postgres.js takes it as JSON).
 */
export type NewDeposit = {
  chain: ChainName
  /** lowercase */
  tx_hash: string
  log_index: number
  /** decimal */
  block_number: string
  user_id: string
  hd_index: number
  address: string
  token: string
  /** base units, decimal */
  amount: string
}

/** A deposit address the audit reads. */
export interface AuditTarget {
  hdIndex: number
  address: string
  userId: string
}

/** One address's reading: its balance on chain and what the platform expects there, at one block. */
export interface BalanceReading {
  target: AuditTarget
  balance: bigint
  expected: bigint
  /** above the expectation by at least the chain's minimum ETH deposit */
  surplus: boolean
}

/** Why a surplus is not explained (deposit_surpluses.reason). */
export type SurplusReason = 'no-trace-api' | 'not-in-traces' | 'trace-failed'

/** An open `deposit_surpluses` episode as the audit reads it. */
export interface SurplusEpisode {
  id: string
  address: string
  hd_index: number
  user_id: string
  amount: string
  readings: number
  trace_from_block: string
  traced_to_block: string | null
  alerted_at: Date | null
}
