/**
 * The arithmetic of a solvency run (docs/solvency.md "Continuous solvency"), pure: legs in, totals
 * and deficits out. A leg is one place the platform holds a currency (an asset) or one kind of
 * claim on it (a liability), in base units.
 */

export type LegSide = 'asset' | 'liability'

export const ASSET_KINDS = [
  /** a platform wallet (hot, gas, swap, exchange role) on a chain */
  'platform_wallet',
  /** deposit addresses holding deposits not swept yet, or ETH no record explains */
  'deposit_addresses',
  /** every subaccount at the exchange */
  'exchange_subaccounts',
  /** the platform's wallet at the exchange (bridged, not yet in a subaccount) */
  'exchange_wallet',
  /** a bridge transfer that left a hot wallet and has not reached the exchange wallet */
  'bridge_in_flight',
  /** a withdrawal mined on chain whose `withdrawal_sent` is not journaled yet: still owed in the journal */
  'withdrawal_in_flight',
  /** v3: a treasury withdrawal out of the funding subaccount whose `bridged` to the hot wallet is not journaled yet */
  'treasury_in_flight',
  /** CCTP: USDC burned on its source chain whose mint is not journaled yet (docs/chains.md "The L2 route") */
  'cctp_in_flight',
] as const
export const LIABILITY_KINDS = ['user_transit', 'user_subaccounts', 'fee_revenue'] as const
export type LegKind = (typeof ASSET_KINDS)[number] | (typeof LIABILITY_KINDS)[number]

export interface Leg {
  readonly side: LegSide
  readonly currency: string
  readonly kind: LegKind
  /** where: `base:hot:0xab…`, `exchange`, `ethereum:deposit-addresses`, `journal`, … */
  readonly place: string
  readonly amount: bigint
  /**
   * The platform's own address or exchange account the amount was read from (a platform wallet,
   * the exchange's wallet and subaccounts): what GET /solvency publishes so anyone can read it
   * again. Never a user's deposit address.
   */
  readonly account?: string
}

export interface CurrencyTotals {
  readonly currency: string
  readonly assets: bigint
  readonly liabilities: bigint
  /** assets − liabilities: negative is a deficit */
  readonly surplus: bigint
}

/** Per currency, sorted by currency: the legs added up. */
export function totalsOf(legs: readonly Leg[]): CurrencyTotals[] {
  const by = new Map<string, { assets: bigint; liabilities: bigint }>()
  for (const l of legs) {
    const t = by.get(l.currency) ?? { assets: 0n, liabilities: 0n }
    if (l.side === 'asset') t.assets += l.amount
    else t.liabilities += l.amount
    by.set(l.currency, t)
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([currency, t]) => ({ currency, ...t, surplus: t.assets - t.liabilities }))
}

/**
 * The currencies whose assets fall short of liabilities by more than their epsilon (base units):
 * `surplus < −epsilon`. A currency with no epsilon given tolerates nothing.
 *
 * @example
 *   deficitsOf(totalsOf(legs), new Map([['USDC', 10_000n]])) // [{ currency: 'USDC', surplus: -50_000n, … }]
 */
export function deficitsOf(totals: readonly CurrencyTotals[], epsilon: ReadonlyMap<string, bigint>): CurrencyTotals[] {
  return totals.filter((t) => t.surplus < -(epsilon.get(t.currency) ?? 0n))
}

/** A place holding more than the platform's records explain (an uncredited deposit is found here). */
export interface PlaceSurplus {
  readonly currency: string
  readonly place: string
  readonly held: bigint
  readonly expected: bigint
  /** held − expected, > 0 */
  readonly amount: bigint
}

/** Amounts as decimal strings, for JSON (storage, the desk, alerts). */
export function legToJson(l: Leg) {
  return {
    side: l.side,
    currency: l.currency,
    kind: l.kind,
    place: l.place,
    amount: l.amount.toString(),
    ...(l.account !== undefined && { account: l.account }),
  }
}
export function totalsToJson(t: CurrencyTotals) {
  return {
    currency: t.currency,
    assets: t.assets.toString(),
    liabilities: t.liabilities.toString(),
    surplus: t.surplus.toString(),
  }
}
export function surplusToJson(s: PlaceSurplus) {
  return {
    currency: s.currency,
    place: s.place,
    held: s.held.toString(),
    expected: s.expected.toString(),
    amount: s.amount.toString(),
  }
}
