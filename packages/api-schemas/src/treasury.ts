/** Schemas of GET /deposit-address (spec 2.1 rules 2–4, 4.2). */
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
