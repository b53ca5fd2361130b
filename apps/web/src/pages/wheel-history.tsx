/**
 * A wheel's history: each cycle with its premium, fees and P&L, the running net as a chart against
 * holding the asset, and the decision log ("Why": docs/trading.md "Why: the decision log").
 */
import type { WheelItem } from '@wh/client'
import { plotNumber, sumDecimals } from '../format'
import { cycles, decisions } from '../state/account'
import { LineChart } from '../ui/chart'
import { Loading, ScrollRegion } from '../ui/common'
import { Amount, percent, Time } from '../ui/values'

export function Cycles({ w }: { w: WheelItem }) {
  const c = cycles.value[w.id]
  if (!c) return <Loading what="its cycles" />
  const oldestFirst = [...c.items].reverse()
  const x = oldestFirst.map((i) => Date.parse(i.closedAt ?? i.createdAt) / 1000)
  return (
    <>
      <p>
        Net so far <Amount value={c.cumulativeNet} currency="USDC" signed /> on{' '}
        <Amount value={c.startAmount} currency="USDC" /> ({percent(c.wheelReturnBps)}); holding {w.asset} instead:{' '}
        {c.hold.returnBps === null ? 'no price history yet' : percent(c.hold.returnBps)}.
      </p>
      <LineChart
        x={x}
        series={[
          {
            label: 'Cumulative net, USDC',
            values: oldestFirst.map((i) => plotNumber(i.cumulativeNet)),
            color: '#0b6e4f',
            stepped: true,
          },
        ]}
        caption={`Cumulative net of the ${w.asset} wheel over its ${c.cycles} ${c.cycles === 1 ? 'cycle' : 'cycles'}`}
        height={160}
      />
      <ScrollRegion label={`Cycles of the ${w.asset} wheel`}>
        <table class="stack" data-testid="cycles">
          <thead>
            <tr>
              <th scope="col">Cycle</th>
              <th scope="col">Leg</th>
              <th scope="col">Outcome</th>
              <th scope="col">Premium</th>
              <th scope="col">Fees</th>
              <th scope="col">Settlement and buy-back</th>
              <th scope="col">P&L</th>
            </tr>
          </thead>
          <tbody>
            {c.items.map((i) => (
              <tr key={i.positionId}>
                <td data-label="Cycle">{i.cycle}</td>
                <td data-label="Leg">{i.instrument ?? `${i.side} (${i.state})`}</td>
                <td data-label="Outcome">
                  {i.outcome ? (i.outcome === 'itm' ? 'in the money' : 'out of the money') : i.state}
                </td>
                <td data-label="Premium">
                  <Amount value={i.premium} currency="USDC" />
                </td>
                <td data-label="Fees">
                  <Amount value={sumDecimals([i.exchangeFees, i.platformFee])} currency="USDC" />
                </td>
                <td data-label="Settlement and buy-back">
                  <Amount value={sumDecimals([i.settlementCost, i.closeCost])} currency="USDC" />
                </td>
                <td data-label="P&L">
                  <Amount value={i.net} currency="USDC" signed />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  )
}

export function DecisionLog({ w }: { w: WheelItem }) {
  const list = decisions.value[w.id]
  if (!list) return <Loading what="its decisions" />
  return (
    <details class="decisions" open={w.state !== 'stopped'} data-wheel={w.id}>
      <summary>Why: the {w.asset} wheel's latest decisions</summary>
      <ol data-testid="decisions">
        {list.length === 0 && <li class="muted">No decisions yet.</li>}
        {list.map((d) => (
          <li key={d.id} data-kind={d.kind} title={`${d.kind}: ${d.reason}`}>
            <Time iso={d.at} /> <span>{d.message}</span>
          </li>
        ))}
      </ol>
    </details>
  )
}
