/** Schemas of GET /solvency (docs/solvency.md "Public solvency"): a complete run's public figures. */
import Type from 'typebox'

const Amount = (description: string) => Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$', description })
const ByKind = (description: string) =>
  Type.Record(Type.String(), Type.String({ pattern: '^-?[0-9]+(\\.[0-9]+)?$' }), { description })

export const SolvencyTotals = Type.Object(
  {
    currency: Type.String(),
    decimals: Type.Integer({ minimum: 0 }),
    assets: Amount('what the platform holds, decimal in the currency'),
    liabilities: Amount('what the journal says it owes: users’ balances and its fee revenue'),
    surplus: Amount('assets − liabilities; negative is a shortfall'),
    assetsByKind: ByKind(
      'assets per kind: platform_wallet, deposit_addresses, exchange_subaccounts, exchange_wallet, and money in ' +
        'flight (bridge_in_flight, withdrawal_in_flight, treasury_in_flight)',
    ),
    liabilitiesByKind: ByKind('liabilities per kind: user_transit, user_subaccounts, fee_revenue (aggregates only)'),
  },
  { title: 'SolvencyTotals' },
)

export const PublicSolvencyResponse = Type.Object(
  {
    runId: Type.String({ format: 'uuid' }),
    startedAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.String({ format: 'date-time', description: 'when the run’s figures were stored' }),
    totals: Type.Array(SolvencyTotals, { description: 'per currency, by currency' }),
    addresses: Type.Array(
      Type.Object({
        chain: Type.String(),
        role: Type.String({ description: 'hot, gas, swap or exchange' }),
        address: Type.String({ description: 'EIP-55: read its balances on that chain' }),
      }),
      {
        description:
          "the platform's wallets the run read; deposit addresses (one user's each) are counted in " +
          '`deposit_addresses`, never listed',
      },
    ),
    exchangeAccount: Type.Union([Type.String(), Type.Null()], {
      description: "the platform's account at the exchange whose wallet and subaccounts were read",
    }),
  },
  { title: 'PublicSolvency' },
)
