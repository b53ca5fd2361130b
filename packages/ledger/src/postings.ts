import type { AccountName } from './accounts'
import { UnbalancedPostingsError } from './errors'
import type { Posting } from './rules/types'

/**
 * Nets a rule's legs to one posting per (account, currency), drops zeros, and asserts the set sums
 * to zero in every currency (docs/ledger.md: every rule is zero-sum per currency within its event). The
 * database checks the same at commit; this catches a bad rule before a round trip.
 */
export function netPostings(type: string, legs: readonly Posting[]): Posting[] {
  const net = new Map<string, { account: AccountName; currency: string; amount: bigint }>()
  const perCurrency = new Map<string, bigint>()
  for (const leg of legs) {
    const k = `${leg.account}\u0000${leg.currency}`
    const cur = net.get(k)
    if (cur) cur.amount += leg.amount
    else net.set(k, { account: leg.account, currency: leg.currency, amount: leg.amount })
    perCurrency.set(leg.currency, (perCurrency.get(leg.currency) ?? 0n) + leg.amount)
  }
  for (const [currency, sum] of perCurrency) if (sum !== 0n) throw new UnbalancedPostingsError(type, currency, sum)
  return [...net.values()].filter((p) => p.amount !== 0n)
}
