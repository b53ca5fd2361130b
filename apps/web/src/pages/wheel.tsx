/**
 * The Wheel page: each wheel as a card (./wheel-card.tsx: its leg, countdowns, stop and resume,
 * settings; ./wheel-history.tsx: cycles, P&L and decisions), the form that starts one
 * (./wheel-start.tsx), and the single legs sold on request.
 */
import { useEffect } from 'preact/hooks'
import { api } from '../session'
import { positions, refresh } from '../state/account'
import { loadTradingConfig } from '../state/trading-config'
import { Result, useAction } from '../ui/action'
import { Card, Loading, SignedIn } from '../ui/common'
import { Amount, Time } from '../ui/values'
import { WheelHead } from './wheel-card'
import { Cycles, DecisionLog } from './wheel-history'
import { StartWheel } from './wheel-start'
import { legStateInWords } from './wheel-words'

function SingleLegs() {
  const [outcome, act] = useAction()
  const single = positions.value?.positions.filter((p) => p.wheelId === null) ?? []
  if (single.length === 0) return null
  const cancel = (id: string) =>
    act(async () => {
      const r = await api.cancelPosition(id)
      refresh(['positions', 'summary'])
      return r.action === 'close' ? 'Buying it back at the quoted price.' : 'Cancelled.'
    })
  return (
    <Card title="Single legs" id="single-legs" wide>
      <ul class="legs">
        {single.map((p) => (
          <li key={p.id}>
            <Time iso={p.createdAt} plain /> · {p.side} on {p.asset},{' '}
            <Amount value={p.collateral} currency={p.collateralCurrency} /> · {legStateInWords(p)} · P&L{' '}
            <Amount value={p.realizedPnl} currency="USDC" signed />{' '}
            {['requested', 'funding', 'placing'].includes(p.state) && !p.cancelRequested && (
              <button type="button" onClick={() => cancel(p.id)} aria-label={`Cancel the ${p.side} on ${p.asset}`}>
                Cancel
              </button>
            )}
          </li>
        ))}
      </ul>
      <Result outcome={outcome} />
    </Card>
  )
}

function Wheels() {
  const list = positions.value
  if (!list) return <Loading what="your wheels" />
  const wheels = [...list.wheels].sort((a, b) => (a.state === 'stopped' ? 1 : 0) - (b.state === 'stopped' ? 1 : 0))
  return (
    <>
      {wheels.map((w) => (
        <Card key={w.id} title={`${w.asset} wheel`} id={`wheel-${w.id}`} wide>
          <div data-testid="wheel" data-wheel={w.id} data-state={w.state}>
            <WheelHead w={w} />
            <h3>Cycles</h3>
            <Cycles w={w} />
            <DecisionLog w={w} />
          </div>
        </Card>
      ))}
      <Card
        title={wheels.some((w) => w.state !== 'stopped') ? 'Start another wheel' : 'Start a wheel'}
        id="start-wheel"
        wide
      >
        <p class="muted">
          A wheel sells a cash-secured put with your USDC; if it is exercised it holds the asset and sells covered calls
          above what it paid, until they are exercised, then puts again. Each leg's premium is yours, less the fees.
        </p>
        <StartWheel />
      </Card>
      <SingleLegs />
    </>
  )
}

export function WheelPage() {
  useEffect(loadTradingConfig, [])
  return (
    <SignedIn what="Your wheels">
      <div class="grid">
        <Wheels />
      </div>
    </SignedIn>
  )
}
