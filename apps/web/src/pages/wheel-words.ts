/** A wheel's and a leg's states in words (docs/trading.md "Position states", "The wheel"). */
import type { PositionItem, WheelItem } from '@wh/client'
import { formatAmount } from '../format'

const LEG_STATES: Readonly<Record<string, string>> = {
  requested: 'waiting to be placed',
  funding: 'being funded at the exchange',
  placing: 'being sold: orders rest in the maker window',
  open: 'sold: waiting for expiry',
  closing: 'being bought back',
  settled: 'settled at expiry',
  closed: 'bought back',
  cancelled: 'cancelled',
  failed: 'failed',
}

export const legStateInWords = (p: Pick<PositionItem, 'state' | 'outcome' | 'cancelRequested'>): string => {
  const base = LEG_STATES[p.state] ?? p.state
  if (p.state === 'settled' && p.outcome) return `${base}, ${p.outcome === 'itm' ? 'in' : 'out of'} the money`
  if (p.cancelRequested && ['requested', 'funding', 'placing'].includes(p.state)) return `${base}; cancel requested`
  return base
}

export const stateInWords = (s: WheelItem['state']): string =>
  s === 'running' ? 'running' : s === 'stopping' ? 'stopping after its leg' : 'stopped'

/** "a put on ETH, 1,000.00 USDC: being sold" */
export function legInWords(p: PositionItem): string {
  const what = p.instrument ? `${p.instrument}` : `a ${p.side} on ${p.asset}`
  return `${what}, ${formatAmount(p.collateral, p.collateralCurrency)}: ${legStateInWords(p)}`
}

/** Why a leg or its wheel waits, when it does: the leg's reason first, then the runner's. */
export function waitingReason(w: WheelItem, leg: PositionItem | undefined): string | undefined {
  if (leg && ['requested', 'funding'].includes(leg.state) && leg.reason) return leg.reason
  if (!leg || !['requested', 'funding', 'placing', 'open', 'closing'].includes(leg.state)) return w.reason ?? undefined
  return undefined
}
