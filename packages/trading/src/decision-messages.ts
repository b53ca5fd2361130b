/**
 * One line a person reads for each decision of the wheel's log (docs/trading.md "Why: the decision
 * log"), built from its kind, reason and facts only, so the API, the live stream and the demo
 * print the same words.
 */
import type { DecisionFacts, DecisionKind, DecisionReason, StrikeFacts } from './decision-facts'

/** Basis points as a percentage with up to two decimals ("25.3 %"). */
export function bpsPercent(bps: number): string {
  const v = Math.trunc(bps)
  const whole = Math.trunc(v / 100)
  const frac = Math.abs(v % 100)
    .toString()
    .padStart(2, '0')
    .replace(/0+$/, '')
  return `${v < 0 && whole === 0 ? '-' : ''}${whole}${frac ? `.${frac}` : ''} %`
}

/** A delta in basis points as the exchange writes deltas (1800 → "0.18"), sign dropped. */
function delta(bps: number): string {
  const v = Math.abs(Math.trunc(bps))
  const frac = (v % 10_000).toString().padStart(4, '0').replace(/0+$/, '')
  return `${Math.trunc(v / 10_000)}${frac ? `.${frac}` : ''}`
}

/** "2026-11-25 08:00 UTC" */
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

function expiryChosen(f: DecisionFacts): string {
  const e = f.expiries
  if (!e?.chosen) return 'Expiry chosen.'
  const tenor = e.candidates.find((c) => c.expiry === e.chosen)?.tenorHours
  return (
    `Expiry ${when(e.chosen)} chosen${tenor === undefined ? '' : ` (${tenor} h away)`}: the nearest of ` +
    `${plural(e.candidates.length, 'expiry', 'expiries')} at least ${e.minTenorHours} h and at most ${e.maxTenorDays} days away.`
  )
}

function strikeChosen(f: DecisionFacts, byOtm: boolean): string {
  const s = f.strikes
  const c = s?.candidates.find((x) => x.instrument === s.chosen)
  if (!s || !c) return 'Strike chosen.'
  const y = c.annualisedYieldBps === null ? '' : `; the mark yields ${bpsPercent(c.annualisedYieldBps)} a year`
  const floor = s.minStrike ? `, not below the cost basis ${s.minStrike}` : ''
  const rule = byOtm
    ? "the out-of-the-money strike nearest the wheel's distance from the index"
    : `the nearest to the ${delta(s.targetDeltaBps)} target`
  return (
    `${s.side === 'put' ? 'Put' : 'Call'} strike ${c.strike} chosen (${c.instrument}): delta ${delta(c.deltaBps)}, ` +
    `${rule} among ${plural(s.candidates.length, 'strike')}${floor}${y}.`
  )
}

function noStrike(s: StrikeFacts | undefined, belowBasis: boolean): string {
  if (!s) return 'Waiting: no strike qualifies.'
  const band = `a delta within ${delta(s.toleranceBps)} of the ${delta(s.targetDeltaBps)} target`
  if (belowBasis)
    return `Waiting: the calls with ${band} are struck below the cost basis ${s.minStrike ?? ''}; waiting for the index to recover.`
  return `Waiting: none of the ${plural(s.candidates.length, `${s.side} strike`)} has ${band}.`
}

const FIXED: Partial<Record<DecisionReason, string>> = {
  side_paused: 'Waiting: selling this side is paused by a signal.',
  subaccount_stopped: 'Waiting: the subaccount is stopped by reconciliation.',
  awaiting_conversion: 'Waiting: the last leg settled in the money; its conversion round opens first.',
  deadline_passed: 'Skipped: past the 20:00 UTC deadline; the next leg waits for tomorrow.',
  nothing_to_sell: 'Skipped: the subaccount holds no unclaimed collateral to sell against.',
  subaccount_missing: 'Skipped: the subaccount is not created yet.',
  window_ended: 'The maker window ended with nothing sold: the leg was cancelled and the wheel opens a new one.',
  stopped_by_user: 'Wheel stopped: no leg is live and no order rests.',
  stopped_at_expiry: "Wheel stopped after its leg's expiry: its at-expiry setting is settle.",
  leg_cancelled: 'Wheel stopped: its leg was cancelled before anything was sold. Start a new wheel or resume this one.',
}

function conversion(reason: DecisionReason, f: DecisionFacts): string {
  const c = f.conversion
  const what = c?.direction === 'to_cash' ? 'the underlying to USDC' : 'USDC to the underlying'
  switch (reason) {
    case 'in_the_money_before_expiry':
      return `Converting ${what} before expiry: the leg is in the money at the index.`
    case 'settled_in_the_money':
      return `Converting ${what}: the leg settled in the money.`
    case 'conversion_done': {
      const basis = c?.costBasis ? `; cost basis ${c.costBasis}` : ''
      return `Conversion done: sold ${c?.sold ?? '?'} for ${c?.bought ?? '?'}${basis}.`
    }
    default:
      return `Conversion failed: ${f.detail ?? 'see the round'}; the wheel goes on with what it holds.`
  }
}

/** The one-line explanation of a decision. */
export function decisionMessage(kind: DecisionKind, reason: DecisionReason, f: DecisionFacts): string {
  if (kind === 'expiry_chosen') return expiryChosen(f)
  if (kind === 'strike_chosen') return strikeChosen(f, reason === 'nearest_otm_distance')
  if (kind === 'conversion') return conversion(reason, f)
  if (kind === 'leg_opened' && f.leg)
    return `Opened a ${f.leg.side} with ${f.leg.amount} ${f.leg.currency}: the subaccount holds ${
      reason === 'holding_underlying' ? 'the underlying (a covered call)' : 'cash (a cash-secured put)'
    }.`
  if (kind === 'resumed') return 'Wheel resumed.'
  switch (reason) {
    case 'no_expiry_in_range': {
      const e = f.expiries
      return `Waiting: none of the ${plural(e?.candidates.length ?? 0, 'expiry', 'expiries')} is between ${
        e?.minTenorHours ?? '?'
      } h and ${e?.maxTenorDays ?? '?'} days away.`
    }
    case 'no_strike_within_tolerance':
    case 'index_below_cost_basis':
      return noStrike(f.strikes, reason === 'index_below_cost_basis')
    case 'yield_below_floor': {
      const y = f.yield
      if (!y) return 'Waiting: the premium yields less than the profile minimum.'
      return `Waiting: ${y.instrument} yields ${bpsPercent(y.annualisedYieldBps)} a year, below the ${bpsPercent(y.floorBps)} floor.`
    }
    case 'conversion_in_progress':
      return `Waiting: the last leg's conversion round is running${f.detail ? ` (${f.detail})` : ''}.`
    case 'refused':
      return `Skipped: ${f.detail ?? 'the step was refused'}; retried in a minute.`
    default:
      return FIXED[reason] ?? `${kind}: ${reason}`
  }
}
