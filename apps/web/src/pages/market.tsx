/**
 * Market (public): an asset's index chart from GET /:asset/chart with the live price appended as it
 * comes, and its strategies from GET /:asset/strategies (what each sells now, its record), read
 * again when the strategy stream announces an event. docs/market-data.md.
 */
import type { ChartQuery, ChartResponse, StrategiesResponse } from '@wh/client'
import { useEffect, useState } from 'preact/hooks'
import { ASSETS, type Asset } from '../config'
import { errorText } from '../errors'
import { formatAmount, formatNumber, plotNumber } from '../format'
import { api } from '../session'
import { prices, strategyEvents, strategyVersion } from '../state/market'
import { LineChart } from '../ui/chart'
import { Card, Figure, Loading } from '../ui/common'
import { Amount, Countdown, Time } from '../ui/values'

type Interval = NonNullable<ChartQuery['interval']>
const INTERVALS: ReadonlyArray<[Interval, string]> = [
  ['5m', '5 minutes'],
  ['1h', '1 hour'],
  ['1d', '1 day'],
]
const pct = (v: string | null | undefined) =>
  v === null || v === undefined ? '—' : `${formatNumber(v, { max: 2, min: 2 })} %`

function Chart({ asset }: { asset: Asset }) {
  const [interval, setInterval] = useState<Interval>('1h')
  const [chart, setChart] = useState<ChartResponse | string | undefined>(undefined)
  useEffect(() => {
    let current = true
    setChart(undefined)
    api.chart(asset, { interval }).then(
      (c) => current && setChart(c),
      (e) => current && setChart(errorText(e)),
    )
    return () => {
      current = false
    }
  }, [asset, interval])
  const live = prices.value[asset]
  const candles = typeof chart === 'object' ? chart.candles : []
  const x = candles.map((c) => Date.parse(c.t) / 1000)
  const y = candles.map((c) => plotNumber(c.close))
  if (live && (x.length === 0 || Date.parse(live.ts) / 1000 > (x.at(-1) ?? 0))) {
    x.push(Date.parse(live.ts) / 1000)
    y.push(plotNumber(live.index))
  }
  return (
    <>
      <div class="toolbar">
        <label for="chart-interval">Candles of</label>{' '}
        <select
          id="chart-interval"
          value={interval}
          onChange={(e) => setInterval((e.target as HTMLSelectElement).value as Interval)}
        >
          {INTERVALS.map(([v, label]) => (
            <option key={v} value={v}>
              {label}
            </option>
          ))}
        </select>
      </div>
      {chart === undefined && <Loading what="the chart" />}
      {typeof chart === 'string' && <p role="alert">{chart}</p>}
      {typeof chart === 'object' && (
        <LineChart
          x={x}
          series={[{ label: `${asset} index, USD`, values: y, color: '#1d4ed8' }]}
          caption={`${asset} index price, ${candles.length} candles of ${INTERVALS.find((i) => i[0] === interval)?.[1]}${live ? `, now ${formatAmount(live.index, 'USD')}` : ''}`}
          testId="market-chart"
        />
      )}
    </>
  )
}

function Strategies({ asset }: { asset: Asset }) {
  const [data, setData] = useState<StrategiesResponse | string | undefined>(undefined)
  const version = strategyVersion.value
  useEffect(() => {
    let current = true
    api.strategies(asset, { limit: 5 }).then(
      (s) => current && setData(s),
      (e) => current && setData(errorText(e)),
    )
    return () => {
      current = false
    }
  }, [asset, version])
  if (data === undefined) return <Loading what="the strategies" />
  if (typeof data === 'string') return <p role="alert">{data}</p>
  return (
    <div class="strategies" data-testid="strategies">
      {data.strategies.map((s) => {
        const c = s.currentCycle
        const stats = s.statistics.last4Weeks?.strategy
        return (
          <article key={s.id} class="strategy">
            <h3>{s.name}</h3>
            <p class="muted small">{s.description}</p>
            {c ? (
              <p>
                {c.status === 'indicative' ? 'Would sell now' : 'Selling'}: <strong>{c.instrument}</strong>, strike{' '}
                {formatAmount(c.strike, 'USD')}, {pct(c.distanceToStrikePct)} from the price{' '}
                <Countdown to={c.expiry} label="expires in" />
              </p>
            ) : (
              <p class="muted small">{s.currentCycleNote ?? 'Nothing sold right now.'}</p>
            )}
            <div class="figures">
              <Figure label="Return, last 4 weeks">{pct(stats?.realisedReturnPct)}</Figure>
              <Figure label="A year at that pace">{pct(stats?.annualisedReturnPct)}</Figure>
              <Figure label="Cycles settled">{stats ? String(stats.settledCycles) : '—'}</Figure>
            </div>
          </article>
        )
      })}
    </div>
  )
}

export function MarketPage() {
  const [asset, setAsset] = useState<Asset>('ETH')
  const live = prices.value[asset]
  return (
    <div class="grid">
      <Card title={`${asset} price`} id="market-price" wide>
        <fieldset class="segmented">
          <legend class="sr-only">Asset</legend>
          {ASSETS.map((a) => (
            <button key={a} type="button" aria-pressed={a === asset} onClick={() => setAsset(a)}>
              {a}
            </button>
          ))}
        </fieldset>
        <div class="figures">
          <Figure label="Index" testId="market-index">
            {live ? <Amount value={live.index} currency="USD" /> : '—'}
          </Figure>
          <Figure label="Perpetual mark">{live ? <Amount value={live.mark} currency="USD" /> : '—'}</Figure>
          <Figure label="At-the-money volatility">
            {live?.atmIv ? `${formatNumber(String(Number(live.atmIv) * 100), { max: 1, min: 1 })} %` : '—'}
          </Figure>
          <Figure label="Updated">{live ? <Time iso={live.ts} /> : '—'}</Figure>
        </div>
        <Chart asset={asset} />
      </Card>
      <Card title="Strategies" id="market-strategies" wide>
        <Strategies asset={asset} />
      </Card>
      <Card title="Strategy events" id="market-events">
        {strategyEvents.value.length === 0 ? (
          <p class="muted">Events appear here as strategies sell and settle.</p>
        ) : (
          <ol class="activity">
            {strategyEvents.value.map((e) => (
              <li key={`${e.asset}:${e.seq}`}>
                <Time iso={e.ts} /> {e.asset} {e.event.replaceAll('_', ' ')}
                {'strategy' in e ? ` (${e.strategy})` : ''}
              </li>
            ))}
          </ol>
        )}
      </Card>
    </div>
  )
}
