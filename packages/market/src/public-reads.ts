/**
 * The public market reads (spec 4.2; docs/market-data.md): the asset list with index prices and
 * 24 h change, index-price charts from the stored candles (a chart never calls the exchange), and
 * the fees that apply to an asset with a worked example. `marketReader` holds what they share (the
 * 24 h reference closes, the strategies each asset offers); GET /assets, /:asset/chart and
 * /:asset/fees map its answers to HTTP.
 */
import { type Clock, systemClock } from '@wh/core'
import type { Sql } from '@wh/db'
import { fromE18, toE18 } from '@wh/exchange'
import type { TradingProfile } from '@wh/trading'
import { type ChainInfo, type ChainName, type FeeEstimator, gasLimitOf } from '@wh/wallet'
import type { Redis } from 'ioredis'
import { depositRoutesOf, findAsset, MARKET_ASSETS, type MarketAsset } from './assets'
import { CHART_MAX_CANDLES, closeAt, readCandles } from './candle-store'
import { CANDLE_INTERVAL_MS, type CandleInterval } from './candles'
import { type MarketNames, readLatestPrices } from './channels'
import { InvalidChartRangeError, UnknownAssetError } from './errors'
import { E18, optionFeeSchedule, optionSaleFees } from './fees'
import type { PriceUpdate } from './messages'
import { chartOverlays, offeredStrategies } from './strategy-reads'

export interface MarketReaderOptions {
  sql: Sql
  redis: Redis
  names: MarketNames
  chains: ReadonlyMap<ChainName, ChainInfo>
  /** PLATFORM_FEE_RATE */
  platformFeeRate: string
  fees: FeeEstimator
  /** TRADING_PROFILE: the strategies each asset offers */
  profile: TradingProfile
  clock?: Clock
}

const DAY_MS = 86_400_000
/** How long the 24 h reference close of an asset is reused (it moves once a minute). */
const REFERENCE_CACHE_MS = 60_000
/** Default chart length when `from` is absent, in intervals. */
const DEFAULT_CHART_CANDLES = 300
/** Stand-ins for the worked fee example before the feed has a price (flagged `illustrative`). */
const ILLUSTRATIVE_INDEX_USD: Readonly<Record<string, string>> = { ETH: '3000', BTC: '90000' }
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z')
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z')

/** The underlying `:asset` names, or a 404 in the error shape. */
function underlyingOf(asset: string): MarketAsset {
  const a = findAsset(asset)
  if (a?.kind !== 'underlying') throw new UnknownAssetError(asset)
  return a
}

/** (a − b) / b in percent, 2 decimals, truncated toward zero; bigint only. */
export function changePct(nowE18: bigint, refE18: bigint): string {
  const bp = ((nowE18 - refE18) * 10_000n) / refE18
  const neg = bp < 0n
  const abs = neg ? -bp : bp
  return `${neg ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`
}

/** The chart's range in ms: `to` defaults to now and `from` to DEFAULT_CHART_CANDLES before it. */
function chartRange(query: { from?: string; to?: string }, sizeMs: number, nowMs: number) {
  const toMs = query.to ? Date.parse(query.to) : nowMs
  const fromMs = query.from ? Date.parse(query.from) : toMs - DEFAULT_CHART_CANDLES * sizeMs
  // years 1..9999: a default start (to - N candles) or an offset can reach year 0, which Postgres refuses (a 500)
  if (![fromMs, toMs].every((t) => t >= EARLIEST_MS && t <= LATEST_MS))
    throw new InvalidChartRangeError('from and to must be ISO-8601, in the years 1 to 9999')
  if (fromMs >= toMs) throw new InvalidChartRangeError('from must be before to')
  if ((toMs - fromMs) / sizeMs > CHART_MAX_CANDLES)
    throw new InvalidChartRangeError(`at most ${CHART_MAX_CANDLES} candles per request: narrow the range`)
  return { fromMs, toMs }
}

/** Per chain and token of the asset: deposit terms and the network fee of a withdrawal now. */
async function networkFees(o: MarketReaderOptions, asset: MarketAsset) {
  const tokens = [...new Set([asset.symbol, 'USDC'])]
  const chains = [...o.chains.values()]
  const feeByChain = await Promise.all(chains.map((c) => o.fees.feePerGasWei(c.name)))
  return chains.flatMap((info, i) =>
    info.tokens
      .filter((t) => tokens.includes(t.symbol))
      .map((t) => {
        const gasLimit = gasLimitOf(t.symbol)
        const perGas = feeByChain[i]
        const route = depositRoutesOf(t.symbol, new Map([[info.name, info]]))[0]
        const withdrawal = { asset: 'ETH' as const, gasLimit: gasLimit.toString(), paidBy: 'platform' as const }
        return {
          chain: info.name,
          chainId: info.chainId,
          token: t.symbol,
          deposit: {
            minDeposit: route?.minDeposit ?? '0',
            confirmations: info.confirmations,
            transferPaidBy: 'user' as const,
            sweepGasPaidBy: 'platform' as const,
          },
          withdrawal:
            perGas === undefined
              ? { available: false, ...withdrawal }
              : { available: true, ...withdrawal, estimate: fromE18(gasLimit * perGas) }, // wei are e18 of ETH
        }
      }),
  )
}

/** The worked example: one ATM call at its live mark, or fixed figures flagged illustrative. */
function feeExample(asset: MarketAsset, latest: PriceUpdate | undefined, platformFeeRate: string) {
  const atMs = latest ? Date.parse(latest.ts) : 0
  const atmCall = latest?.instruments.find(
    (i) => i.kind === 'option' && i.optionType === 'C' && i.expiry !== null && Date.parse(i.expiry) > atMs,
  )
  const illustrative = !latest || !atmCall || toE18(atmCall.mark) <= 0n
  const indexE18 = latest ? toE18(latest.index) : toE18(ILLUSTRATIVE_INDEX_USD[asset.symbol] ?? '1000')
  const premiumE18 = illustrative ? indexE18 / 50n : toE18(atmCall.mark) // 2 % of the index as a stand-in
  const amountE18 = E18
  const f = optionSaleFees({ indexE18, premiumE18, amountE18, platformFeeRate })
  return {
    description: illustrative
      ? `Selling 1 ${asset.symbol} call at an illustrative premium (2 % of an illustrative index): no live price yet`
      : `Selling 1 ${atmCall?.name} at its current mark`,
    illustrative,
    amount: fromE18(amountE18),
    indexPrice: fromE18(indexE18),
    instrument: illustrative ? null : (atmCall?.name ?? null),
    premiumPerOption: fromE18(premiumE18),
    grossPremium: fromE18(f.grossPremiumE18),
    exchangeFeeMaker: fromE18(f.exchangeFeeMakerE18),
    exchangeFeeTaker: fromE18(f.exchangeFeeTakerE18),
    platformFee: fromE18(f.platformFeeE18),
    netPremiumMaker: fromE18(f.netPremiumMakerE18),
  }
}

/** The public reads of GET /assets, /:asset/chart and /:asset/fees, sharing their caches. */
export function marketReader(o: MarketReaderOptions): MarketReader {
  return new MarketReader(o)
}

export class MarketReader {
  readonly #o: MarketReaderOptions
  readonly #clock: Clock
  readonly #reference = new Map<string, { at: number; minute: number; value: bigint | undefined }>()
  /** the profile is fixed for the process: what each asset offers is built once */
  readonly #offered: ReadonlyMap<string, ReturnType<typeof offeredStrategies>>

  constructor(o: MarketReaderOptions) {
    this.#o = o
    this.#clock = o.clock ?? systemClock
    this.#offered = new Map(MARKET_ASSETS.map((a) => [a.symbol, offeredStrategies(a.symbol, o.profile)]))
  }

  /** Every asset: deposit chains and tokens, index price and 24 h change, strategies, availability. */
  async assets() {
    const priced = MARKET_ASSETS.filter((a) => a.kind === 'underlying')
    const latest = await this.#latestOf(priced)
    const assets = await Promise.all(MARKET_ASSETS.map((a) => this.#assetItem(a, latest[priced.indexOf(a)])))
    return { assets }
  }

  /** Index-price candles of an underlying, with the strategies' overlays and returns. */
  async chart(assetParam: string, query: { interval?: CandleInterval; from?: string; to?: string }) {
    const asset = underlyingOf(assetParam)
    const interval = query.interval ?? '1h'
    const { fromMs, toMs } = chartRange(query, CANDLE_INTERVAL_MS[interval], this.#clock.now().getTime())
    const [candles, overlays] = await Promise.all([
      readCandles(this.#o.sql, { asset: asset.symbol, interval, fromMs, toMs }),
      chartOverlays(this.#o.sql, asset.symbol, fromMs, toMs),
    ])
    return {
      asset: asset.symbol,
      interval,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      candles: candles.map((c) => ({
        t: new Date(c.bucketStartMs).toISOString(),
        open: fromE18(c.openE18),
        high: fromE18(c.highE18),
        low: fromE18(c.lowE18),
        close: fromE18(c.closeE18),
        ticks: c.tickCount,
      })),
      overlays: overlays.overlays,
      returns: overlays.returns,
    }
  }

  /** The fees that apply to an underlying: ours, the exchange's, network fees, a worked example. */
  async fees(assetParam: string) {
    const asset = underlyingOf(assetParam)
    const [latest] = await this.#latestOf([asset])
    return {
      asset: asset.symbol,
      platform: {
        feeRate: this.#o.platformFeeRate,
        appliesTo: 'premium' as const,
        description:
          'PLATFORM_FEE_RATE × the premium of each option sold, taken from the subaccount with the fill ' +
          '(option_sold). No fee on deposits, withdrawals or balances.',
      },
      exchange: {
        name: 'Derive',
        options: optionFeeSchedule(),
        description:
          'Per fill: the rate × index price × amount, capped at capRateOfOptionValue × option price × amount; ' +
          'a taker order also pays baseFeeUsd once. Orders rest as maker first.',
      },
      network: await networkFees(this.#o, asset),
      example: feeExample(asset, latest, this.#o.platformFeeRate),
    }
  }

  async #latestOf(assets: readonly MarketAsset[]): Promise<(PriceUpdate | undefined)[]> {
    const symbols = assets.map((a) => a.symbol)
    const raws = await readLatestPrices(this.#o.redis, this.#o.names, symbols)
    return raws.map((r) => (r ? (JSON.parse(r) as PriceUpdate) : undefined))
  }

  /** The close 24 h before `tsMs`, cached per asset and minute. */
  async #referenceClose(asset: string, tsMs: number): Promise<bigint | undefined> {
    const minute = Math.floor((tsMs - DAY_MS) / 60_000)
    const hit = this.#reference.get(asset)
    const now = this.#clock.now().getTime()
    if (hit && hit.minute === minute && now - hit.at < REFERENCE_CACHE_MS) return hit.value
    const value = await closeAt(this.#o.sql, asset, tsMs - DAY_MS)
    this.#reference.set(asset, { at: now, minute, value })
    return value
  }

  async #assetItem(a: MarketAsset, latest: PriceUpdate | undefined) {
    const base = {
      symbol: a.symbol,
      name: a.name,
      kind: a.kind,
      exchangeCurrency: a.exchangeCurrency,
      decimals: a.decimals,
      availability: a.availability,
      depositRoutes: depositRoutesOf(a.symbol, this.#o.chains),
      strategies: this.#offered.get(a.symbol) ?? [],
    }
    if (a.kind === 'cash') return { ...base, indexPrice: '1', priceAt: null, change24hPct: '0.00' }
    if (!latest) return { ...base, indexPrice: null, priceAt: null, change24hPct: null }
    const ref = await this.#referenceClose(a.symbol, Date.parse(latest.ts))
    const change24hPct = ref === undefined ? null : changePct(toE18(latest.index), ref)
    return { ...base, indexPrice: latest.index, priceAt: latest.ts, change24hPct }
  }
}
