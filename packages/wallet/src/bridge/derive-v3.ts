/**
 * Money in on Derive v3 (docs/chains.md "Bridge" → "On v3"): no Derive Chain and no Derive
 * Wallet. The platform's hot wallet on Ethereum L1 deposits USDC into the platform's funding
 * subaccount at the exchange by calling the L1 OnchainActionManager:
 * `deposit(asset, amount, subaccountId, fallbackRecipient)`, after an ERC-20 approve of the manager
 * when the allowance is short (bridge/approve-call.ts: two crash-safe legs).
 * `asset` is USDC's protocol asset (the spot asset `public/get_currency` names), `amount` is in
 * USDC's own 6 decimals, the fallback recipient is the platform's owner address (a deposit the
 * exchange cannot apply lands in the owner's fallback subaccount, never elsewhere).
 *
 * `status()` says delivered once the deposit is final on L1; the exchange credits the funding
 * subaccount when its sequencer applies the queued action (the simulator: once it is
 * `confirmations` deep), so a slow credit shows as a funding waiting for funds, never as lost money.
 * The manager takes no fee here: `feeBaseUnits` 0, no message fee.
 *
 * Only the chain whose id is the v3 domain's (EXCHANGE_CHAIN_ID: 1, 11155111, or the local node's)
 * deposits; another chain's hot wallet refuses (BridgeUnavailableError): moving its USDC to L1 first
 * is a bridge of its own, not built (docs/chains.md says why).
 *
 * The manager's ABI is @wh/exchange's ONCHAIN_ACTION_MANAGER_ABI: kept in one place, where the tests check it
 * against Derive's published one (docs/exchange-v3.md "Contracts").
 */
import { ONCHAIN_ACTION_MANAGER_ABI } from '@wh/exchange'
import { type Address, encodeFunctionData, getAddress, type Hex } from 'viem'
import type { ChainName } from '../chains'
import type { OutboundRecord, OutboxDeps } from '../outbox'
import { advanceLegs, legsStatus, type TwoLegs } from './approve-call'
import {
  type BridgeAdapter,
  type BridgeStatus,
  type BridgeTransfer,
  BridgeUnavailableError,
  EXCHANGE_CHAIN_NAME,
} from './types'

/**
 * Money out on v3 (docs/exchange-v3.md "Money out"): the event Derive's L1 WithdrawalOutbox emits for each
 * withdrawal it pays (published Sepolia ABI, packages/exchange/test/spec/v3/withdrawal-outbox.sepolia.abi.json);
 * `paid` is in the token's own decimals, `remaining` what its throttle queued for later.
 */
export const WITHDRAWAL_PAID_EVENT = {
  type: 'event',
  name: 'WithdrawalPaid',
  inputs: [
    { name: 'id', type: 'bytes32', indexed: true },
    { name: 'asset', type: 'address', indexed: true },
    { name: 'recipient', type: 'address', indexed: true },
    { name: 'paid', type: 'uint128', indexed: false },
    { name: 'remaining', type: 'uint128', indexed: false },
  ],
} as const

/**
 * The outbox's other events about a withdrawal (same published ABI): its throttle queued the rest
 * (`amount`, paid later by `processQueue` as more `WithdrawalPaid` of the same id), its guardian
 * diverted it, or an id already consumed was skipped.
 */
export const WITHDRAWAL_ENQUEUED_EVENT = {
  type: 'event',
  name: 'WithdrawalEnqueued',
  inputs: [
    { name: 'id', type: 'bytes32', indexed: true },
    { name: 'asset', type: 'address', indexed: true },
    { name: 'recipient', type: 'address', indexed: true },
    { name: 'amount', type: 'uint128', indexed: false },
    { name: 'bucketRecipient', type: 'address', indexed: false },
    { name: 'bucketAsset', type: 'address', indexed: false },
    { name: 'queueIndex', type: 'uint256', indexed: false },
  ],
} as const

export const WITHDRAWAL_DIVERTED_EVENT = {
  type: 'event',
  name: 'WithdrawalDiverted',
  inputs: [
    { name: 'guardianId', type: 'uint256', indexed: true },
    { name: 'id', type: 'bytes32', indexed: true },
    { name: 'asset', type: 'address', indexed: true },
    { name: 'accountId', type: 'uint64', indexed: false },
    { name: 'recipient', type: 'address', indexed: false },
    { name: 'amount', type: 'uint128', indexed: false },
  ],
} as const

export const WITHDRAWAL_SKIPPED_EVENT = {
  type: 'event',
  name: 'WithdrawalSkipped',
  inputs: [{ name: 'id', type: 'bytes32', indexed: true }],
} as const

/** The approve covers at least this much (100,000 USDC), so most transfers reuse one allowance. */
export const V3_APPROVE_AT_LEAST_BASE_UNITS = 100_000_000_000n

export interface DeriveV3DepositOptions {
  readonly outbox: OutboxDeps
  /** the L1 OnchainActionManager (EXCHANGE_DEPOSIT_MANAGER_ADDRESS) */
  readonly manager: Address
  /** USDC's protocol asset at the exchange, read from public/get_currency once and kept */
  readonly usdcAsset: () => Promise<Address>
  /** the platform's funding subaccount, which deposits credit (EXCHANGE_FUNDING_SUBACCOUNT_ID) */
  readonly fundingSubaccountId: bigint
  /** the platform's owner address at the exchange (EXCHANGE_WALLET_ADDRESS): the fallback recipient */
  readonly owner: Address
  /** the v3 signing domain's chain id (EXCHANGE_CHAIN_ID): the L1 the manager lives on */
  readonly exchangeChainId: number
  readonly approveAtLeastBaseUnits?: bigint
}

/** The calldata of the manager's deposit into an existing subaccount. */
export function encodeV3Deposit(p: {
  asset: Address
  amountBaseUnits: bigint
  subaccountId: bigint
  fallback: Address
}): Hex {
  if (p.amountBaseUnits <= 0n) throw new RangeError('a deposit moves a positive amount')
  if (p.subaccountId <= 0n || p.subaccountId >= 2n ** 64n) throw new RangeError('subaccountId must be a u64 above 0')
  return encodeFunctionData({
    abi: ONCHAIN_ACTION_MANAGER_ABI,
    functionName: 'deposit',
    args: [getAddress(p.asset), p.amountBaseUnits, p.subaccountId, getAddress(p.fallback)],
  })
}

export class DeriveV3DepositAdapter implements BridgeAdapter {
  readonly name = 'derive-v3-l1'
  readonly toChain = EXCHANGE_CHAIN_NAME
  readonly #o: DeriveV3DepositOptions & { readonly approveAtLeastBaseUnits: bigint }

  constructor(o: DeriveV3DepositOptions) {
    if (o.fundingSubaccountId <= 0n) throw new RangeError('fundingSubaccountId must be set (the deposits land there)')
    this.#o = {
      ...o,
      manager: getAddress(o.manager),
      owner: getAddress(o.owner),
      approveAtLeastBaseUnits: o.approveAtLeastBaseUnits ?? V3_APPROVE_AT_LEAST_BASE_UNITS,
    }
  }

  assertReady(fromChain: ChainName): void {
    this.#usdc(fromChain)
  }

  async send(t: BridgeTransfer): Promise<OutboundRecord> {
    return (await advanceLegs(this.#legs(t), t)).record
  }

  /** Where the deposit stands; it also signs the deposit after its approve (through the outbox, at most once). */
  async status(t: BridgeTransfer, _record: OutboundRecord): Promise<BridgeStatus> {
    const s = await legsStatus(this.#legs(t), t, {
      approve: 'the approve of the OnchainActionManager failed',
      call: 'the L1 deposit failed on chain',
    })
    if (s.state === 'pending') return { state: 'pending', record: s.record }
    if (s.state === 'failed') return { state: 'failed', record: s.record, reason: s.reason, earlierLegs: s.earlierLegs }
    return { state: 'delivered', record: s.record, feeBaseUnits: 0n, earlierLegs: s.earlierLegs }
  }

  /** The chain's USDC, when the chain is the exchange's L1; refuses (never guesses) otherwise. */
  #usdc(fromChain: ChainName): Address {
    const info = this.#o.outbox.registry.get(fromChain)
    if (!info || info.chainId !== this.#o.exchangeChainId) {
      throw new BridgeUnavailableError(
        `Derive v3 takes deposits on its L1 (chain ${this.#o.exchangeChainId}) only, not from ${fromChain} (chain ${info?.chainId})`,
        { adapter: this.name, fromChain, exchangeChainId: this.#o.exchangeChainId },
      )
    }
    const usdc = info.tokens.find((x) => x.symbol === 'USDC')?.contract
    if (!usdc) throw new BridgeUnavailableError('no USDC contract for the L1', { adapter: this.name, fromChain })
    return getAddress(usdc)
  }

  #legs(t: BridgeTransfer): TwoLegs {
    return {
      outbox: this.#o.outbox,
      token: this.#usdc(t.fromChain),
      spender: this.#o.manager,
      approveAtLeast: this.#o.approveAtLeastBaseUnits,
      prepare: async () => ({
        to: this.#o.manager,
        valueWei: 0n,
        data: encodeV3Deposit({
          asset: await this.#o.usdcAsset(),
          amountBaseUnits: t.amountBaseUnits,
          subaccountId: this.#o.fundingSubaccountId,
          fallback: this.#o.owner,
        }),
      }),
    }
  }
}
