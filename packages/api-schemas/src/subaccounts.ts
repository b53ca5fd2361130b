/** TypeBox schemas of the subaccounts controller (spec 4.2). Amounts are decimal strings. */
import { UNDERLYINGS } from '@wh/core'
import Type from 'typebox'
import { LiteralUnion } from './literals'

/** Max length of the Idempotency-Key header (the column is varchar(128)). */
export const IDEMPOTENCY_KEY_MAX_CHARS = 128

/** The one list of assets a subaccount trades: @wh/core's underlyings (ETH, BTC). */
export const AssetParam = LiteralUnion(UNDERLYINGS, { description: 'the underlying the subaccount trades' })
export const ReleaseParams = Type.Object({ asset: AssetParam }, { additionalProperties: false })
export const ReleaseHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_CHARS, pattern: '^[\\x21-\\x7e]+$' }),
  ),
})

const Timestamp = Type.String({ format: 'date-time' })
const Amount = (description: string) =>
  Type.String({ pattern: '^-?\\d+(\\.\\d+)?$', description: `${description}; decimal string in the currency's unit` })

export const ReleaseState = LiteralUnion(['requested', 'waiting', 'withdrawing', 'released', 'failed'] as const, {
  description:
    'requested → waiting (reason: open positions or orders, a stop, a funding in flight, a margin refusal) → ' +
    'withdrawing → released | failed (reason)',
})

export const Release = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    asset: Type.String(),
    state: ReleaseState,
    reason: Type.Union([Type.String(), Type.Null()], { description: 'why it waits or failed' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    completedAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'Release' },
)

const Balance = Type.Object(
  {
    currency: Type.String(),
    decimals: Type.Integer(),
    amount: Amount('held'),
  },
  { title: 'SubaccountBalance' },
)

export const SubaccountSummary = Type.Object({
  asset: Type.String(),
  exchangeId: Type.Union([Type.String(), Type.Null()], {
    description: "the exchange's subaccount id; null until the first funding settles",
  }),
  state: LiteralUnion(['pending', 'active', 'stopped']),
  stopReason: Type.Union([Type.String(), Type.Null()]),
  balances: Type.Array(Balance, { description: 'per currency, from the journal' }),
})

export const SubaccountDetail = Type.Object(
  {
    ...SubaccountSummary.properties,
    pendingFundings: Type.Array(Balance, { description: 'fundings reserved or sent, not yet settled' }),
    openReleases: Type.Array(
      Type.Object({
        id: Type.String({ format: 'uuid' }),
        state: ReleaseState,
        reason: Type.Union([Type.String(), Type.Null()]),
        createdAt: Timestamp,
      }),
    ),
  },
  { title: 'Subaccount' },
)

export const ListResponse = Type.Object({ items: Type.Array(SubaccountDetail) })
