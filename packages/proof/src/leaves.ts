/**
 * From every user's holdings to the leaves of a tree (docs/solvency.md "Proof of liabilities"),
 * pure: the caller gives the randomness.
 *
 * A user whose total in a currency is negative (they owe the platform: a reconciliation adjustment
 * or a fee that took a subaccount below zero) is counted as 0 in that currency, and reported. The
 * tree cannot hold a negative amount (it would let the platform hide a liability behind it), and
 * netting it against the others would lower the published total by a debt that is not a payment to
 * anyone: the total published is the sum of what is owed, never less. The report names each such
 * user, currency and amount, so an operator sees every one; the root row keeps their count and sum
 * per currency.
 */
import type { LeafInput } from './tree'

export interface Holdings {
  readonly userId: string
  /** base units per currency, signed */
  readonly balances: ReadonlyMap<string, bigint> | Readonly<Record<string, bigint>>
}

export interface NegativeHolding {
  readonly userId: string
  readonly currency: string
  /** the negative total, base units */
  readonly amount: bigint
}

export interface PreparedLeaves {
  /** in tree order: a user's index is their position */
  readonly leaves: LeafInput[]
  /** every currency any user holds a row of (negatives included, counted 0), sorted as the tree orders them */
  readonly currencies: string[]
  readonly negatives: NegativeHolding[]
}

export interface Randomness {
  /** n random bytes */
  bytes(n: number): Buffer
  /** an integer in [0, max) */
  int(max: number): number
}

const entriesOf = (b: Holdings['balances']): [string, bigint][] =>
  b instanceof Map ? [...b.entries()] : Object.entries(b as Record<string, bigint>)

/**
 * The leaves of a tree of `users`: negatives counted as 0 and reported, a fresh 32-byte salt per
 * user, and the order shuffled (Fisher-Yates) so an index tells nothing about who the user is or
 * when they joined.
 */
export function prepareLeaves(users: readonly Holdings[], random: Randomness): PreparedLeaves {
  const negatives: NegativeHolding[] = []
  const currencySet = new Set<string>()
  const leaves: LeafInput[] = users.map((u) => {
    const balances: Record<string, bigint> = {}
    for (const [currency, amount] of entriesOf(u.balances)) {
      currencySet.add(currency)
      if (amount < 0n) negatives.push({ userId: u.userId, currency, amount })
      balances[currency] = amount < 0n ? 0n : amount
    }
    return { userId: u.userId, salt: `0x${random.bytes(32).toString('hex')}`, balances }
  })
  for (let i = leaves.length - 1; i > 0; i--) {
    const j = random.int(i + 1)
    const t = leaves[i] as LeafInput
    leaves[i] = leaves[j] as LeafInput
    leaves[j] = t
  }
  return { leaves, currencies: [...currencySet].sort(), negatives }
}

/** Per currency, how many users were counted as 0 and the sum of their negative totals. */
export function summarizeNegatives(
  negatives: readonly NegativeHolding[],
): Record<string, { users: number; amount: string }> {
  const out: Record<string, { users: number; amount: bigint }> = {}
  for (const n of negatives) {
    const s = out[n.currency] ?? { users: 0, amount: 0n }
    out[n.currency] = { users: s.users + 1, amount: s.amount + n.amount }
  }
  return Object.fromEntries(
    Object.entries(out)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([c, s]) => [c, { users: s.users, amount: s.amount.toString() }]),
  )
}
