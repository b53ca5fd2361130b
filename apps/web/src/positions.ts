/**
 * Positions and wheels (GET /positions): each leg with its side, asset, collateral, state, option,
 * strike and expiry; each wheel with its state, legs opened and current leg. A leg not sold yet
 * has a Cancel button and a running wheel a Stop button (both DELETE /positions/{id}); the list is
 * read again afterwards. The form opens a put or starts a wheel (POST /positions).
 */
import type { ApiClient, PositionItem, PositionsResponse } from '@wh/client'
import { showDecisions } from './decisions'
import { $, amount, button, type Cell, describe, say, table, time } from './dom'
import { formatAmount } from './format'
import { quoteLine } from './quote'
import { withSettings } from './wheel-settings'

type Wheel = PositionsResponse['wheels'][number]

/** States a DELETE cancels (docs/trading.md "Position states"): nothing sold yet. */
const CANCELLABLE = new Set(['requested', 'funding', 'placing'])

export const canCancel = (p: PositionItem) => CANCELLABLE.has(p.state) && !p.cancelRequested

/** Runs a button's action: the button disabled meanwhile, the outcome said, the section read again. */
type Act = (b: HTMLButtonElement, run: () => Promise<string>) => Promise<void>

const POSITION_HEAD = [
  'Opened',
  'Asset',
  'Side',
  'Amount',
  'State',
  'Kind',
  'Option',
  'Strike',
  'Expiry',
  'Size',
  'Premium',
  'Realised P&L',
  'Action',
]
const WHEEL_HEAD = ['Started', 'Asset', 'State', 'Legs opened', 'Current leg', 'Strike', 'Expiry', 'Action']

const describeLeg = (p: PositionItem) => `${p.side} on ${p.asset}, ${formatAmount(p.collateral, p.collateralCurrency)}`

function stateText(p: PositionItem): string {
  const parts: string[] = [p.state]
  if (p.cancelRequested && CANCELLABLE.has(p.state)) parts.push('cancel requested')
  if (p.outcome) parts.push(`expired ${p.outcome === 'itm' ? 'in' : 'out of'} the money`)
  return parts.join(', ') + (p.reason ? ` (${p.reason})` : '')
}

function positionRow(api: ApiClient, act: Act, p: PositionItem): Cell[] {
  const cancel = canCancel(p)
    ? button('Cancel', `Cancel the ${describeLeg(p)}`, (b) =>
        act(b, async () => {
          const r = await api.cancelPosition(p.id)
          return r.outcome === 'cancelled'
            ? `Cancelled the ${describeLeg(p)}.`
            : `Cancelling the ${describeLeg(p)}: its orders at the exchange are being cancelled.`
        }),
      )
    : null
  return [
    time(p.createdAt),
    p.asset,
    p.side,
    amount(p.collateral, p.collateralCurrency),
    stateText(p),
    p.wheelId ? 'wheel leg' : 'single',
    p.instrument,
    amount(p.strike, 'USD'),
    time(p.expiry),
    amount(p.size, p.asset),
    amount(p.premium, 'USDC'),
    amount(p.realizedPnl, 'USDC'),
    cancel,
  ]
}

function wheelRow(api: ApiClient, act: Act, w: Wheel, legs: Map<string, PositionItem>): Cell[] {
  const leg = w.currentPositionId ? legs.get(w.currentPositionId) : undefined
  const stop =
    w.state === 'running'
      ? button('Stop', `Stop the ${w.asset} wheel after its current leg`, (b) =>
          act(b, async () => {
            const r = await api.cancelPosition(w.id, { mode: 'after_cycle' })
            return `The ${w.asset} wheel is ${r.state}.`
          }),
        )
      : null
  return [
    time(w.createdAt),
    w.asset,
    w.state + (w.reason ? ` (${w.reason})` : ''),
    w.cycles,
    leg ? `${leg.side}, ${leg.state}` : w.currentPositionId ? 'on a later page' : null,
    leg ? amount(leg.strike, 'USD') : null,
    leg ? time(leg.expiry) : null,
    withSettings(api, act, w, stop),
  ]
}

export interface PositionsSection {
  load(): Promise<void>
}

/** `afterChange` runs after a position is opened or cancelled (the balances moved). */
export function positionsSection(api: ApiClient, afterChange: () => Promise<void>): PositionsSection {
  const act: Act = async (b, run) => {
    b.disabled = true
    try {
      say(await run(), 'ok')
      await load()
      await afterChange()
    } catch (e) {
      say(describe(e))
      b.disabled = false
    }
  }

  const quote = quoteLine(api) // the quote under the form (POST /quotes), read once signed in
  async function load() {
    void quote()
    const list = await api.positions({ limit: 50 })
    const legs = new Map(list.positions.map((p) => [p.id, p]))
    table(
      $('wheel-list'),
      WHEEL_HEAD,
      list.wheels.map((w) => wheelRow(api, act, w, legs)),
      'no wheels',
    )
    await showDecisions(api, $('wheel-list'), list.wheels)
    table(
      $('position-list'),
      POSITION_HEAD,
      list.positions.map((p) => positionRow(api, act, p)),
      'no positions',
    )
  }

  $('position-form').addEventListener('submit', async (ev) => {
    ev.preventDefault()
    const f = new FormData(ev.target as HTMLFormElement)
    const side = String(f.get('side')) as 'put' | 'wheel'
    try {
      const p = await api.createPosition(
        { asset: String(f.get('asset')) as 'ETH' | 'BTC', side, amount: String(f.get('amount')) },
        { idempotencyKey: crypto.randomUUID() },
      )
      const what = side === 'wheel' ? `${p.asset} wheel started` : `Put on ${p.asset} accepted`
      say(`${what}: ${formatAmount(p.collateral, p.collateralCurrency)} committed (${p.state}).`, 'ok')
      await load()
      await afterChange()
    } catch (e) {
      say(`Position refused: ${describe(e)}`)
    }
  })

  return { load }
}
