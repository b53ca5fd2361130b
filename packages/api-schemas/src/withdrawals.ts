/** TypeBox schemas of the withdrawals controller (spec 4.2). Amounts are decimal strings. */
import { CHAIN_NAMES } from '@wh/wallet'
import Type from 'typebox'
import { LiteralUnion } from './literals'

/** Max length of the Idempotency-Key header (the column is varchar(128)). */
export const IDEMPOTENCY_KEY_MAX_CHARS = 128
export const PAGE_LIMIT_MAX = 100
export const PAGE_LIMIT_DEFAULT = 20

export const ChainSchema = LiteralUnion(CHAIN_NAMES, { description: 'a withdrawal chain' })
export const AssetSchema = LiteralUnion(['USDC', 'ETH'])
const Decimal = (description: string) => Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', description })
const Timestamp = Type.String({ format: 'date-time' })

export const RouteSchema = Type.Object(
  {
    chain: Type.String(),
    chainId: Type.Integer(),
    asset: AssetSchema,
    decimals: Type.Integer(),
    contract: Type.Union([Type.String(), Type.Null()], { description: 'null for the native asset' }),
    minUsd: Decimal('WITHDRAWAL_MIN_USD'),
    maxUsd: Decimal('WITHDRAWAL_MAX_USD'),
    priceAvailable: Type.Boolean({
      description:
        'false while the price feed has no recent price of the asset: no bounds in the asset then, and a request of it answers 503 PRICE_UNAVAILABLE',
    }),
    priceUsd: Type.Union([Decimal('USD per whole unit of the asset, from the price feed'), Type.Null()]),
    minAmount: Type.Union([Decimal('smallest amount accepted, in the asset'), Type.Null()]),
    maxAmount: Type.Union([Decimal('largest amount accepted, in the asset'), Type.Null()]),
    networkFee: Type.Object({
      available: Type.Boolean({ description: 'false when the chain could not be reached; no estimate then' }),
      asset: Type.Literal('ETH'),
      estimate: Type.Optional(Decimal('gas limit × current max fee per gas, in ETH')),
      gasLimit: Type.String(),
      maxFeePerGasWei: Type.Optional(Type.String()),
    }),
  },
  { title: 'WithdrawalRoute' },
)
export const RoutesResponse = Type.Object({ routes: Type.Array(RouteSchema) })

export const CreateWithdrawalBody = Type.Object(
  {
    chain: ChainSchema,
    asset: AssetSchema,
    amount: Type.String({
      pattern: '^[0-9]{1,40}(\\.[0-9]{1,18})?$',
      description: 'decimal string in the asset, at most its decimals',
    }),
    destination: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EIP-55 or all-lowercase address' }),
  },
  { additionalProperties: false },
)
export const CreateWithdrawalHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_CHARS, pattern: '^[\\x21-\\x7e]+$' }),
  ),
})

export const WithdrawalState = LiteralUnion(['requested', 'sent', 'failed'])

export const CreatedWithdrawal = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: WithdrawalState,
    chain: Type.String(),
    asset: AssetSchema,
    amount: Type.String(),
    destination: Type.String(),
    createdAt: Timestamp,
  },
  { title: 'CreatedWithdrawal' },
)

export const WithdrawalItem = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: WithdrawalState,
    chain: Type.Union([Type.String(), Type.Null()]),
    asset: Type.String(),
    amount: Type.String({ description: 'decimal, in the asset' }),
    destination: Type.Union([Type.String(), Type.Null()]),
    networkFee: Type.Union([Type.String(), Type.Null()], { description: 'ETH paid in gas by the platform' }),
    networkFeeAsset: Type.Literal('ETH'),
    txHash: Type.Union([Type.String(), Type.Null()], { description: 'set once broadcast' }),
    failureReason: Type.Union([Type.String(), Type.Null()]),
    failureCode: Type.Union([Type.String(), Type.Null()], {
      description:
        'a failed withdrawal: the stable code of its failure (DESTINATION_REFUSED, REVERTED, …) for a client to branch on',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    sentAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'Withdrawal' },
)
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT })),
    cursor: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
)
export const ListResponse = Type.Object({
  items: Type.Array(WithdrawalItem),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
})
