/** Schema fragments shared by the payloads. Amounts are bigint base units (never a JS number). */
import Type from 'typebox'

export const UserId = Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' })
export const SubaccountId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })
export const Chain = Type.String({ pattern: '^[a-z][a-z0-9-]{0,31}$' })
export const Currency = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9.]{0,19}$' })
export const TxHash = Type.String({ pattern: '^0x[0-9a-fA-F]{64}$' })
/** An id from elsewhere (trade, order, row, transaction): no whitespace, bounded. */
export const ExternalId = Type.String({ pattern: '^\\S{1,200}$' })
export const Instrument = Type.String({ pattern: '^\\S{1,100}$' })
export const LogIndex = Type.Integer({ minimum: 0 })
/** spec 6.1: slot of an event about a transaction the service sent itself. */
export const Slot = Type.Union([Type.Literal(0), Type.Literal(1)])
export const EpochSeconds = Type.Integer({ minimum: 0 })
/** Strictly positive base units. */
export const Amount = Type.BigInt({ exclusiveMinimum: 0n })
/** Zero or more base units (a fee that may be waived). */
export const FeeAmount = Type.BigInt({ minimum: 0n })
/** Signed base units (accruals and adjustments go both ways). */
export const SignedAmount = Type.BigInt()
export const Reason = Type.String({ maxLength: 500 })
