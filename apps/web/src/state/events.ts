/**
 * An account event (WS /ws/account, docs/account-stream.md) in words, and what it changes on the
 * page: which of the account's reads to take again. Amounts on the stream are base units; the
 * snapshot names their decimals ("Amounts").
 */
import type { AccountEventMessage } from '@wh/client'
import { formatAmount, unitsToDecimal } from '../format'

/** The reads of the signed-in part (state/account.ts loads each). */
export type AccountPart = 'summary' | 'positions' | 'wheels' | 'withdrawals' | 'deposits' | 'statement' | 'routes'

/** What each kind of event makes stale. */
const STALE: Readonly<Record<string, readonly AccountPart[]>> = {
  'deposit.credited': ['summary', 'deposits', 'statement'],
  'deposit.swept': ['deposits'],
  'withdrawal.requested': ['summary', 'withdrawals', 'statement'],
  'withdrawal.sent': ['withdrawals'],
  'withdrawal.confirmed': ['summary', 'withdrawals', 'statement'],
  'withdrawal.failed': ['summary', 'withdrawals', 'statement'],
  'position.state': ['positions', 'summary', 'statement'],
  'position.funded': ['positions', 'summary', 'statement'],
  'position.settled': ['positions', 'wheels', 'summary', 'statement'],
  'order.placed': ['positions'],
  fill: ['positions', 'wheels', 'summary', 'statement'],
  'wheel.state': ['positions', 'wheels'],
  'wheel.decision': ['wheels'],
  conversion: ['positions', 'summary', 'statement'],
  'subaccount.stopped': ['positions', 'summary'],
  'subaccount.resumed': ['positions', 'summary'],
}

export const staleAfter = (kind: string): readonly AccountPart[] => STALE[kind] ?? ['summary', 'positions']

/**
 * The wheels whose decisions and cycles an event makes stale: the wheel it names, or the wheel of the leg it
 * names; none for a leg of no wheel; all (`'all'`) when it names a leg not read yet, so nothing is missed.
 * A fill on one leg then reads one wheel again, not every wheel of the account.
 */
export function wheelsStale(
  data: Readonly<Record<string, unknown>>,
  legs: ReadonlyArray<{ readonly id: string; readonly wheelId: string | null }>,
): readonly string[] | 'all' {
  if (typeof data.wheelId === 'string') return [data.wheelId]
  if (typeof data.positionId !== 'string') return 'all'
  const leg = legs.find((l) => l.id === data.positionId)
  if (!leg) return 'all'
  return leg.wheelId === null ? [] : [leg.wheelId]
}

type Data = Record<string, string | undefined>

/** Base units of `currency` as people read them, with the stream's decimals. */
export function unitsOf(units: string | undefined, currency: string | undefined, decimals: Record<string, number>) {
  if (units === undefined || currency === undefined) return ''
  const d = decimals[currency]
  return d === undefined ? `${units} ${currency} base units` : formatAmount(unitsToDecimal(units, d), currency)
}

const short = (hash: string | undefined) => (hash ? `${hash.slice(0, 10)}…` : '')

/**
 * One sentence for an event, and whether it is worth a notice (a money movement, a wheel's stop);
 * the routine ones (an order repriced, a decision) go to the activity list only.
 */
export function describeEvent(
  e: Pick<AccountEventMessage, 'kind' | 'data'>,
  decimals: Record<string, number>,
): { text: string; notice?: 'ok' | 'info' | 'error' } {
  const d = e.data as Data
  const money = unitsOf(d.amount ?? d.collateralAmount, d.currency ?? d.collateralCurrency, decimals)
  switch (e.kind) {
    case 'deposit.credited':
      return { text: `Deposit of ${money} credited (${d.chain}).`, notice: 'ok' }
    case 'deposit.swept':
      return { text: `Deposit of ${money} moved on to the platform's wallet.` }
    case 'withdrawal.requested':
      return { text: `Withdrawal of ${money} requested to ${short(d.destination)}.` }
    case 'withdrawal.sent':
      return { text: `Withdrawal of ${money} sent: transaction ${short(d.txHash)}.`, notice: 'ok' }
    case 'withdrawal.confirmed':
      return { text: `Withdrawal of ${money} confirmed on ${d.chain}.`, notice: 'ok' }
    case 'withdrawal.failed':
      return { text: `Withdrawal of ${money} failed: ${d.reason ?? 'no reason given'}.`, notice: 'error' }
    case 'position.funded':
      return { text: `Your ${d.side} on ${d.asset} is funded: its orders are being placed.` }
    case 'position.settled':
      return {
        text: `Your ${d.side} on ${d.asset} settled ${d.outcome === 'itm' ? 'in' : 'out of'} the money.`,
        notice: 'info',
      }
    case 'position.state':
      return { text: `Your ${d.side} on ${d.asset} is ${d.state}${d.reason ? ` (${d.reason})` : ''}.` }
    case 'order.placed':
      return { text: `Order placed for ${d.instrument}.` }
    case 'fill':
      return { text: `Sold: premium ${unitsOf(d.premium, 'USDC', decimals)} received.`, notice: 'ok' }
    case 'wheel.state':
      return d.state === 'stopped'
        ? { text: `Your ${d.asset} wheel stopped.`, notice: 'info' }
        : { text: `Your ${d.asset} wheel is ${d.state}${d.reason ? ` (${d.reason})` : ''}.` }
    case 'wheel.decision':
      return { text: 'A wheel logged a new decision (Wheel page, "Why").' }
    case 'conversion':
      return { text: `Conversion ${d.direction?.replaceAll('_', ' ') ?? ''} is ${d.state}.` }
    case 'subaccount.stopped':
      return {
        text: `Trading on your ${d.asset} subaccount is stopped while its balances are checked.`,
        notice: 'error',
      }
    case 'subaccount.resumed':
      return { text: `Trading on your ${d.asset} subaccount resumed.`, notice: 'ok' }
    default:
      return { text: `${String(e.kind).replace('.', ' ')}.` }
  }
}
