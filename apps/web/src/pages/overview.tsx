/**
 * Overview: balances per currency, the P&L of the wheels and single legs, live prices, the wheels
 * at a glance, and the account's latest activity, all live (state/account.ts, state/market.ts).
 */
import { ASSETS } from '../config'
import { plotNumber, sumDecimals } from '../format'
import { hrefOf } from '../router'
import { signedIn } from '../session'
import { activity, cycles, positions, summary } from '../state/account'
import { prices } from '../state/market'
import { LineChart } from '../ui/chart'
import { Card, Figure, Loading, SignInFirst } from '../ui/common'
import { Amount, Countdown, Time } from '../ui/values'
import { legInWords, stateInWords } from './wheel-words'

function Balances() {
  const s = summary.value
  if (!s) return <Loading what="balances" />
  if (s.assets.length === 0)
    return (
      <p>
        No money here yet. <a href={hrefOf('deposit')}>Deposit</a> USDC or ETH to start.
      </p>
    )
  return (
    <div class="figures" data-testid="balances">
      {s.assets.map((a) => (
        <div class="currency" key={a.currency} data-currency={a.currency}>
          <h3>{a.currency}</h3>
          <Figure label="Free to use" testId={`free-${a.currency}`}>
            <Amount value={a.freeBalance} currency={a.currency} />
          </Figure>
          <Figure label="At the exchange">
            <Amount value={a.inSubaccounts} currency={a.currency} />
          </Figure>
          <Figure label="On its way (withdrawals, fundings)">
            <Amount value={sumDecimals([a.pendingWithdrawals, a.pendingFundings])} currency={a.currency} />
          </Figure>
          <Figure label="Return, last 30 days">
            <Amount value={a.periodReturn} currency={a.currency} signed />
          </Figure>
        </div>
      ))}
    </div>
  )
}

function ProfitAndLoss() {
  const list = positions.value
  if (!list) return <Loading what="P&L" />
  const realised = sumDecimals(list.positions.map((p) => p.realizedPnl))
  const premium = sumDecimals(list.positions.map((p) => p.premium))
  const fees = sumDecimals(list.positions.map((p) => p.fees))
  // every cycle of every wheel by time: the running total of their nets
  const all = Object.values(cycles.value)
    .flatMap((c) => c.items)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
  let running = '0'
  const points = all.map((c) => {
    running = sumDecimals([running, c.net])
    return { t: Date.parse(c.closedAt ?? c.createdAt) / 1000, v: plotNumber(running) }
  })
  return (
    <>
      <div class="figures">
        <Figure label="Total P&L, realised" testId="total-pnl">
          <Amount value={realised} currency="USDC" signed />
        </Figure>
        <Figure label="Premium received">
          <Amount value={premium} currency="USDC" />
        </Figure>
        <Figure label="Fees paid">
          <Amount value={fees} currency="USDC" />
        </Figure>
      </div>
      <LineChart
        x={points.map((p) => p.t)}
        series={[{ label: 'Cumulative net, USDC', values: points.map((p) => p.v), color: '#0b6e4f', stepped: true }]}
        caption={`Cumulative net of every wheel cycle, ${all.length} ${all.length === 1 ? 'cycle' : 'cycles'}`}
        height={160}
      />
    </>
  )
}

export function LivePrices() {
  return (
    <ul class="prices" data-testid="live-prices">
      {ASSETS.map((a) => {
        const p = prices.value[a]
        return (
          <li key={a}>
            <span class="asset">{a}</span>{' '}
            {p ? (
              <>
                <Amount value={p.index} currency="USD" /> <span class="muted">index</span>{' '}
                <span class="muted small">
                  <Time iso={p.ts} />
                </span>
              </>
            ) : (
              <span class="muted">waiting for the feed…</span>
            )}
          </li>
        )
      })}
    </ul>
  )
}

function WheelsAtAGlance() {
  const list = positions.value
  if (!list) return <Loading what="wheels" />
  const live = list.wheels.filter((w) => w.state !== 'stopped')
  if (live.length === 0)
    return (
      <p>
        No wheel is running. <a href={hrefOf('wheel')}>Start one</a>: it sells a put with your USDC, then covered calls.
      </p>
    )
  return (
    <ul class="glance" data-testid="wheels-glance">
      {live.map((w) => {
        const leg = list.positions.find((p) => p.id === w.currentPositionId)
        const c = cycles.value[w.id]
        return (
          <li key={w.id}>
            <a href={hrefOf('wheel')}>
              <strong>{w.asset} wheel</strong>
            </a>{' '}
            · {stateInWords(w.state)} · cycle {w.cycles}
            {c && (
              <>
                {' '}
                · net <Amount value={c.cumulativeNet} currency="USDC" signed />
              </>
            )}
            <br />
            <span class="muted">{leg ? legInWords(leg) : (w.reason ?? 'between legs')}</span>{' '}
            {leg?.expiry && <Countdown to={leg.expiry} label="to expiry" />}
          </li>
        )
      })}
    </ul>
  )
}

export function OverviewPage() {
  return (
    <div class="grid">
      <Card title="Live prices" id="overview-prices">
        <LivePrices />
      </Card>
      {signedIn.value ? (
        <>
          <Card title="Balances" id="overview-balances" wide>
            <Balances />
          </Card>
          <Card title="Profit and loss" id="overview-pnl">
            <ProfitAndLoss />
          </Card>
          <Card title="Your wheels" id="overview-wheels">
            <WheelsAtAGlance />
          </Card>
          <Card title="Latest activity" id="overview-activity">
            {activity.value.length === 0 ? (
              <p class="muted">Nothing yet in this session: events appear here as they happen.</p>
            ) : (
              <ol class="activity" data-testid="activity">
                {activity.value.map((a) => (
                  <li key={a.seq}>
                    <Time iso={a.at} /> {a.text}
                  </li>
                ))}
              </ol>
            )}
          </Card>
        </>
      ) : (
        <SignInFirst what="Your balances, P&L and wheels" />
      )}
    </div>
  )
}
