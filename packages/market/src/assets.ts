/**
 * The asset catalogue of the public market data (GET /assets): the underlyings options are sold on
 * (ETH, BTC) and the cash currency (USDC). Which chains and tokens take deposits comes from the
 * wallet's chain registry, so a chain added there shows up here without a second list.
 */
import { CASH_CURRENCY, fromBaseUnits, type UNDERLYINGS } from '@wh/core'
import type { ChainInfo, ChainName } from '@wh/wallet'

export const ASSET_AVAILABILITIES = ['active', 'deposit-only', 'withdraw-only', 'paused'] as const
/** active: deposits, trading, withdrawals; deposit-only / withdraw-only: one direction; paused: none */
export type AssetAvailability = (typeof ASSET_AVAILABILITIES)[number]

export type MarketAssetSymbol = (typeof UNDERLYINGS)[number] | typeof CASH_CURRENCY

export interface MarketAsset {
  readonly symbol: MarketAssetSymbol
  readonly name: string
  /** 'underlying': options are sold on it and it has a price feed; 'cash': the currency premiums are paid in */
  readonly kind: 'underlying' | 'cash'
  /** the exchange's currency name (Derive `base_currency` / collateral asset) */
  readonly exchangeCurrency: string
  /** decimals of the asset's base unit */
  readonly decimals: number
  /** the instrument whose ticker carries the index price; null for cash (priced at 1 USD) */
  readonly indexInstrument: string | null
  readonly availability: AssetAvailability
}

export const MARKET_ASSETS: readonly MarketAsset[] = Object.freeze([
  {
    symbol: 'ETH',
    name: 'Ether',
    kind: 'underlying',
    exchangeCurrency: 'ETH',
    decimals: 18,
    indexInstrument: 'ETH-PERP',
    availability: 'active',
  },
  {
    symbol: 'BTC',
    name: 'Bitcoin',
    kind: 'underlying',
    exchangeCurrency: 'BTC',
    decimals: 8,
    indexInstrument: 'BTC-PERP',
    availability: 'active',
  },
  {
    symbol: CASH_CURRENCY,
    name: 'USD Coin',
    kind: 'cash',
    exchangeCurrency: 'USDC',
    decimals: 6,
    indexInstrument: null,
    availability: 'active',
  },
] satisfies MarketAsset[])

/** The assets with a price feed (the underlyings). */
export const PRICED_ASSETS = MARKET_ASSETS.filter((a) => a.kind === 'underlying')

/** An asset by symbol, case-insensitive (`eth` → ETH); undefined for an unknown one. */
export function findAsset(symbol: string): MarketAsset | undefined {
  const upper = symbol.toUpperCase()
  return MARKET_ASSETS.find((a) => a.symbol === upper)
}

export interface DepositRoute {
  readonly chain: ChainName
  readonly chainId: number
  readonly token: string
  /** null for the chain's native asset */
  readonly contract: string | null
  readonly decimals: number
  /** smallest deposit credited, decimal string in the token */
  readonly minDeposit: string
  /** blocks on top of the deposit's block before it counts */
  readonly confirmations: number
}

/** Where `symbol` can be deposited: every chain of the registry that accepts the token. */
export function depositRoutesOf(symbol: string, chains: ReadonlyMap<ChainName, ChainInfo>): DepositRoute[] {
  const routes: DepositRoute[] = []
  for (const info of chains.values()) {
    for (const token of info.tokens) {
      if (token.symbol !== symbol) continue
      routes.push({
        chain: info.name,
        chainId: info.chainId,
        token: token.symbol,
        contract: token.contract,
        decimals: token.decimals,
        minDeposit: fromBaseUnits(token.minDepositBaseUnits, token.decimals),
        confirmations: info.confirmations,
      })
    }
  }
  return routes
}
