/**
 * A TypeBox payload schema per event type (spec 6 rule 1: the journal itself also accepts a type
 * without one, which it stores unchecked). Amounts are bigint base units of the payload's currency.
 * Stored in ledger_events.payload as JSON with bigints as decimal strings.
 */
import Type from 'typebox'
import type { EventType } from '../events'
import {
  Amount,
  Chain,
  Currency,
  EpochSeconds,
  ExternalId,
  FeeAmount,
  Instrument,
  LogIndex,
  Reason,
  SignedAmount,
  Slot,
  SubaccountId,
  TxHash,
  UserId,
} from './common'

const strict = { additionalProperties: false } as const

/** A transfer into a user's deposit address, confirmed on its chain (a log, so a real logIndex). */
export const DepositDetected = Type.Object(
  { userId: UserId, chain: Chain, txHash: TxHash, logIndex: LogIndex, currency: Currency, amount: Amount },
  strict,
)
/** The deposit address sent to the hot wallet (the service's own transaction: slot 0). */
export const DepositSwept = Type.Object(
  { userId: UserId, chain: Chain, txHash: TxHash, currency: Currency, amount: Amount },
  strict,
)
/** Hot-wallet funds crossed to another chain; `feeAmount` is what the bridge kept. */
export const Bridged = Type.Object(
  {
    fromChain: Chain,
    toChain: Chain,
    txHash: TxHash,
    currency: Currency,
    amount: Amount,
    feeAmount: FeeAmount,
    userId: Type.Optional(UserId),
  },
  strict,
)
/**
 * Free balance moved into the user's subaccount. A creation the exchange charged for (docs/exchange-v3.md "Movements
 * on v3") carries, in `currency`: `feeAmount`, what the exchange took in kind, and `feeExcess`, what the platform sent
 * on top of the amount for the fee but the exchange did not take (it stays in the user's subaccount). Both are paid
 * out of the platform's exchange funds.
 */
export const SubaccountFunded = Type.Object(
  {
    userId: UserId,
    subaccountId: SubaccountId,
    transactionId: ExternalId,
    currency: Currency,
    amount: Amount,
    feeAmount: Type.Optional(FeeAmount),
    feeExcess: Type.Optional(FeeAmount),
  },
  strict,
)
export const SubaccountReleased = Type.Object(
  { userId: UserId, subaccountId: SubaccountId, rowId: ExternalId, currency: Currency, amount: Amount },
  strict,
)
const FillBase = {
  userId: UserId,
  subaccountId: SubaccountId,
  tradeId: ExternalId,
  instrument: Instrument,
  currency: Currency,
}
/**
 * One fill of an option leg (key: the trade id); the fees are in the premium's currency.
 * - a sale (`side` absent or `sell`): `premium` (price × amount) received, the exchange's and the platform's fee;
 * - a buy-back (`side: 'buy'`, docs/trading.md "Buying a leg back"): `premium` (price × amount) paid, the
 *   exchange's fee; the platform takes no fee on a buy.
 */
export const OptionSold = Type.Union([
  Type.Object(
    {
      ...FillBase,
      side: Type.Optional(Type.Literal('sell')),
      premium: Amount,
      exchangeFee: FeeAmount,
      platformFee: FeeAmount,
    },
    strict,
  ),
  Type.Object({ ...FillBase, side: Type.Literal('buy'), premium: Amount, exchangeFee: FeeAmount }, strict),
])
const SettlementBase = { userId: UserId, subaccountId: SubaccountId, instrument: Instrument, expirySec: EpochSeconds }
/** Expiry: in the money costs the seller the settlement amount; out of the money costs nothing. */
export const OptionSettled = Type.Union([
  Type.Object({ ...SettlementBase, outcome: Type.Literal('itm'), currency: Currency, amount: Amount }, strict),
  Type.Object({ ...SettlementBase, outcome: Type.Literal('otm') }, strict),
])
/** A conversion between cash and underlying in a subaccount (the service's own transaction: slot 0). */
export const SwapExecuted = Type.Object(
  {
    userId: UserId,
    subaccountId: SubaccountId,
    chain: Chain,
    txHash: TxHash,
    sellCurrency: Currency,
    sellAmount: Amount,
    buyCurrency: Currency,
    buyAmount: Amount,
  },
  strict,
)
export const SwapReverted = Type.Object(
  {
    chain: Chain,
    txHash: TxHash,
    userId: Type.Optional(UserId),
    subaccountId: Type.Optional(SubaccountId),
    reason: Type.Optional(Reason),
  },
  strict,
)
/**
 * Interest for one bucket: positive earned, negative charged (a borrow). Without `userId` the subaccount is the
 * platform's own funding subaccount on Derive v3 (docs/exchange-v3.md "Accruals and reconciliation on v3"): its
 * interest is the platform's.
 */
export const InterestAccrued = Type.Object(
  {
    userId: Type.Optional(UserId),
    subaccountId: SubaccountId,
    currency: Currency,
    bucketTs: EpochSeconds,
    amount: SignedAmount,
  },
  strict,
)
/** Funding for one bucket: positive received by the user, negative paid by the user. */
export const FundingPaid = Type.Object(
  { userId: UserId, subaccountId: SubaccountId, currency: Currency, bucketTs: EpochSeconds, amount: SignedAmount },
  strict,
)
export const WithdrawalSent = Type.Object(
  {
    userId: UserId,
    withdrawalId: ExternalId,
    chain: Chain,
    txHash: TxHash,
    currency: Currency,
    amount: Amount,
  },
  strict,
)
/**
 * Native gas burnt by a transaction. `slot` 1 when another event already holds slot 0 of the same
 * transaction (a sweep, a withdrawal, a swap), 0 when gas is the only event (a top-up). `userId`
 * attributes the gas to a user; it is never charged to them.
 */
export const GasSpent = Type.Object(
  { chain: Chain, txHash: TxHash, slot: Slot, currency: Currency, amount: Amount, userId: Type.Optional(UserId) },
  strict,
)
/**
 * The gas a withdrawal burnt failing on chain, charged to its user (docs/ledger.md): `amount` in the
 * withdrawn currency (ETH: the gas itself, at most the withdrawal's amount). The gas is a `gas_spent`
 * of the same transaction at slot 0; this is its slot 1.
 */
export const WithdrawalGasCharged = Type.Object(
  {
    userId: UserId,
    withdrawalId: ExternalId,
    chain: Chain,
    txHash: TxHash,
    currency: Currency,
    amount: Amount,
  },
  strict,
)
export const TradeRejected = Type.Object(
  {
    subaccountId: SubaccountId,
    orderId: ExternalId,
    instrument: Instrument,
    reason: Reason,
    userId: Type.Optional(UserId),
  },
  strict,
)
export const SignalReceived = Type.Object(
  { signalId: ExternalId, source: Type.String({ maxLength: 100 }), data: Type.Record(Type.String(), Type.Unknown()) },
  strict,
)
/**
 * The exchange holds `delta` more (or less, negative) than the journal's subaccount balance. Without `userId` the
 * subaccount is the platform's funding subaccount on Derive v3 and the journal's side is the platform's exchange
 * funds (docs/exchange-v3.md "Accruals and reconciliation on v3").
 */
export const ReconciliationAdjustment = Type.Object(
  {
    userId: Type.Optional(UserId),
    subaccountId: SubaccountId,
    currency: Currency,
    bucket: EpochSeconds,
    delta: SignedAmount,
  },
  strict,
)
const Divergence = Type.Object({ account: Type.String({ maxLength: 200 }), delta: SignedAmount }, strict)
export const StopRaised = Type.Union([
  Type.Object(
    {
      source: Type.Literal('reconciliation'),
      subaccountId: SubaccountId,
      bucket: EpochSeconds,
      divergences: Type.Array(Divergence, { minItems: 1, maxItems: 1000 }),
      userId: Type.Optional(UserId),
    },
    strict,
  ),
  Type.Object(
    {
      source: Type.Literal('operator'),
      subaccountId: SubaccountId,
      minuteBucket: EpochSeconds,
      reason: Reason,
      userId: Type.Optional(UserId),
    },
    strict,
  ),
])
export const StopCleared = Type.Object(
  { subaccountId: SubaccountId, minuteBucket: EpochSeconds, reason: Reason, userId: Type.Optional(UserId) },
  strict,
)

/**
 * The platform's own money moved by its operator (docs/ledger.md "Platform capital"): `amount` of
 * `currency` into (or out of) the platform's `holding` on `chain` (`hot`: the hot wallet, or the
 * funding subaccount when chain is `derive`; `gas`: the gas wallet). `reference` names the movement
 * once, in its one spelling (keys.ts capitalReference: `tx:{chain id}:{hash}` of the transaction that
 * moved it, or `treasury:{reference}`): the key.
 */
export const CapitalMovement = Type.Object(
  {
    holding: Type.Union([Type.Literal('hot'), Type.Literal('gas')]),
    chain: Chain,
    currency: Currency,
    amount: Amount,
    reference: Type.String({ pattern: '^(tx:[1-9][0-9]{0,15}:0x[0-9a-f]{64}|treasury:[a-z0-9][a-z0-9._:-]{0,100})$' }),
    reason: Reason,
  },
  strict,
)

export const PAYLOAD_SCHEMAS = {
  deposit_detected: DepositDetected,
  deposit_swept: DepositSwept,
  bridged: Bridged,
  subaccount_funded: SubaccountFunded,
  subaccount_released: SubaccountReleased,
  option_sold: OptionSold,
  option_settled: OptionSettled,
  swap_executed: SwapExecuted,
  swap_reverted: SwapReverted,
  interest_accrued: InterestAccrued,
  funding_paid: FundingPaid,
  withdrawal_sent: WithdrawalSent,
  gas_spent: GasSpent,
  trade_rejected: TradeRejected,
  signal_received: SignalReceived,
  reconciliation_adjustment: ReconciliationAdjustment,
  stop_raised: StopRaised,
  stop_cleared: StopCleared,
  capital_contributed: CapitalMovement,
  capital_withdrawn: CapitalMovement,
  withdrawal_gas_charged: WithdrawalGasCharged,
} as const satisfies Record<EventType, Type.TSchema>

/** The payload type of each event type. */
export type Payloads = { [T in EventType]: Type.Static<(typeof PAYLOAD_SCHEMAS)[T]> }
