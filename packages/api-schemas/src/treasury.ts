/** Schemas of GET /deposit-address (spec 2.1 rules 2–4, 4.2) and GET /deposits. */
import Type from 'typebox'

export const TokenSchema = Type.Object(
  {
    symbol: Type.String(),
    decimals: Type.Integer(),
    contract: Type.Union([Type.String(), Type.Null()], { description: 'null for the native asset' }),
    minDeposit: Type.String({ description: 'smallest credited deposit, decimal in the token unit' }),
  },
  { title: 'DepositToken' },
)

export const DepositAddressResponse = Type.Object({
  address: Type.String({ description: 'EIP-55 deposit address of the caller, the same on every chain listed' }),
  chains: Type.Array(
    Type.Object({
      chain: Type.String(),
      chainId: Type.Integer(),
      confirmations: Type.Integer({ description: 'blocks before a deposit counts' }),
      tokens: Type.Array(TokenSchema),
    }),
  ),
})

export const DEPOSITS_PAGE_LIMIT_MAX = 100
export const DEPOSITS_PAGE_LIMIT_DEFAULT = 20

export const DepositsQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: DEPOSITS_PAGE_LIMIT_MAX, default: DEPOSITS_PAGE_LIMIT_DEFAULT }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
  },
  { additionalProperties: false },
)

const Step = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })

export const DepositItem = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    chain: Type.String(),
    asset: Type.String(),
    amount: Type.String({ description: 'decimal, in the asset' }),
    txHash: Type.String(),
    blockNumber: Type.String({ description: 'the block the transfer is in' }),
    confirmations: Type.Integer({ description: "the chain's confirmations: the deposit was recorded that deep" }),
    stage: Type.Union([Type.Literal('credited'), Type.Literal('swept')], {
      description:
        'credited: in your free balance (detected once `confirmations` deep, credited in the same step); swept: ' +
        "moved on to the platform's hot wallet as well",
    }),
    detectedAt: Step('when the platform saw it, `confirmations` deep'),
    confirmedAt: Step('when it counted as final: the same moment (only confirmed blocks are read)'),
    creditedAt: Step('when your free balance grew by it: the same moment (one transaction)'),
    sweptAt: Step("when it left your deposit address for the platform's hot wallet; null until then"),
  },
  { title: 'Deposit' },
)

export const DepositsResponse = Type.Object({
  items: Type.Array(DepositItem, { description: 'newest first' }),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
})
