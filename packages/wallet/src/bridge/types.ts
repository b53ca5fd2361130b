/**
 * The bridge (docs/ledger.md "The money path" step 3, event `bridged`): platform funds swept into a deposit chain's hot
 * wallet cross to the platform's wallet on the exchange chain (EXCHANGE_WALLET_ADDRESS on
 * EXCHANGE_CHAIN_ID). How they cross is an adapter's business (today Derive v3's L1 deposit into the
 * funding subaccount, derive-v3.ts; locally against its stand-in): it sits behind this interface, so
 * the bridge tick and the journal do not change with the route. docs/chains.md "Bridge".
 */
import { AppError } from '@wh/core'
import type { LocalAccount } from 'viem'
import type { ChainName } from '../chains'
import type { OutboundRecord } from '../outbox'

/** The exchange chain's name in the journal (`bridged.toChain`, account platformHot('derive')). */
export const EXCHANGE_CHAIN_NAME = 'derive'

/** One movement of hot-wallet funds to the exchange chain, identified for the outbox by `transferId`. */
export interface BridgeTransfer {
  /** stable across retries and restarts: the outbox's refId (purpose 'bridge') */
  readonly transferId: string
  readonly fromChain: ChainName
  /** what the exchange takes as collateral; the bridge moves USDC only */
  readonly token: 'USDC'
  readonly amountBaseUnits: bigint
  /** the source chain's hot wallet */
  readonly signer: LocalAccount
}

export type BridgeStatus =
  /** the source transaction (or the relay) is not final yet: ask again later */
  | { readonly state: 'pending'; readonly record: OutboundRecord }
  /**
   * the exchange-chain wallet holds `amount − feeBaseUnits`; the source transaction's gas is
   * separate (the record's receipt)
   */
  | {
      readonly state: 'delivered'
      readonly record: OutboundRecord
      readonly feeBaseUnits: bigint
      /**
       * a fee the bridge took in the source chain's native token with the source transaction (its
       * `msg.value`: Socket's message fee), in wei; a platform cost like the gas. Absent: none.
       */
      readonly messageFeeWei?: bigint
      /** earlier transactions of the same transfer (an ERC-20 approve), mined: their gas is a platform cost */
      readonly earlierLegs?: readonly OutboundRecord[]
    }
  /** the source transaction failed on chain: nothing crossed, its gas (if mined) was burnt */
  | {
      readonly state: 'failed'
      readonly record: OutboundRecord
      readonly reason: string
      /** earlier transactions of the same transfer (an ERC-20 approve), mined: their gas is a platform cost */
      readonly earlierLegs?: readonly OutboundRecord[]
    }

export interface BridgeAdapter {
  /** for logs and alerts: 'derive-v3-l1', … */
  readonly name: string
  /** the destination in the journal: EXCHANGE_CHAIN_NAME */
  readonly toChain: string
  /** Throws BridgeUnavailableError, naming what is missing, when this adapter cannot run here. */
  assertReady(fromChain: ChainName): void
  /**
   * The source-chain transaction, exactly once per transferId: through the crash-safe outbox, so
   * a retry or a restarted worker gets the same signed transaction back, never a second one.
   */
  send(t: BridgeTransfer): Promise<OutboundRecord>
  /** Where the transfer stands. Idempotent: call it as often as needed. */
  status(t: BridgeTransfer, record: OutboundRecord): Promise<BridgeStatus>
}

/** The adapter cannot run in this deployment (unverified contracts, a missing route): refuse, never guess. */
export class BridgeUnavailableError extends AppError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super({ code: 'BRIDGE_UNAVAILABLE', statusCode: 503, message, details })
  }
}
