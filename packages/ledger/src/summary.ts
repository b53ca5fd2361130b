/**
 * The portfolio summary behind GET /portfolio/summary. Balances come from
 * ledger_balances (O(accounts)); the period figures sum the user's postings in [from, to), read
 * through the (user_id, occurred_at) index, so their cost follows the user's activity in the
 * period, not the size of the journal. Amounts are base units per currency: valuing them in USD
 * needs prices, which the route has and the ledger does not.
 */
import {
  EXPENSE_KINDS,
  type ExpenseKind,
  INCOME_KINDS,
  type IncomeKind,
  parseAccount,
  userAccountPrefix,
} from './accounts'
import { assertPeriod, type Period } from './period'
import { type Queryable, toBigInt } from './sql'

export interface AssetSummary {
  readonly currency: string
  /** transit minus pending withdrawals and fundings in flight: what the user may withdraw or fund with now */
  readonly freeBalance: bigint
  readonly transit: bigint
  /** the sum of the user's subaccounts in this currency */
  readonly inSubaccounts: bigint
  /** withdrawals in state 'requested' (spec 3.2) */
  readonly pendingWithdrawals: bigint
  /** fundings of a subaccount reserved or sent but not yet confirmed by the exchange */
  readonly pendingFundings: bigint
  /** over the period, positive = earned (funding may be negative: paid) */
  readonly income: Readonly<Record<IncomeKind, bigint>>
  /** over the period, positive = paid */
  readonly expenses: Readonly<Record<ExpenseKind, bigint>>
  /** deposits minus withdrawals sent, over the period */
  readonly netDeposits: bigint
  /**
   * change of the user's holdings (transit + subaccounts) over the period minus net deposits:
   * income less expenses, platform fees and reconciliation adjustments, losses included. A swap
   * shows as a loss in one currency and a gain in the other until valued at prices.
   */
  readonly periodReturn: bigint
}

export interface PortfolioSummary {
  readonly userId: string
  readonly from: Date
  readonly to: Date
  readonly assets: readonly AssetSummary[]
}

interface Acc {
  transit: bigint
  inSubaccounts: bigint
  pendingWithdrawals: bigint
  pendingFundings: bigint
  income: Record<IncomeKind, bigint>
  expenses: Record<ExpenseKind, bigint>
  externalFlow: bigint
  holdingsFlow: bigint
}
const zeros = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0n])) as Record<K, bigint>

/**
 * @example
 *   const s = await portfolioSummary(sql, userId, { from: new Date('2026-01-01'), to: new Date('2026-02-01') })
 */
export async function portfolioSummary(sql: Queryable, userId: string, period: Period): Promise<PortfolioSummary> {
  assertPeriod(period)
  const prefix = userAccountPrefix(userId)
  const [balances, reserved, funding, flows] = await Promise.all([
    sql<{ account: string; currency: string; v: string }[]>`
      select account, currency, sum(balance) as v from ledger_balances where user_id = ${userId}
      group by account, currency`,
    sql<{ currency: string; v: string }[]>`
      select currency, sum(amount) as v from withdrawals
      where user_id = ${userId} and state = 'requested' group by currency`,
    sql<{ currency: string; v: string }[]>`
      select currency, sum(amount) as v from subaccount_transfers
      where user_id = ${userId} and kind = 'fund' and state in ('reserved', 'submitted', 'accepted')
      group by currency`,
    sql<{ account: string; currency: string; v: string }[]>`
      select p.account, p.currency, sum(p.amount) as v
      from ledger_events e join ledger_postings p on p.event_id = e.id
      where e.user_id = ${userId} and e.occurred_at >= ${period.from} and e.occurred_at < ${period.to}
        and starts_with(p.account, ${prefix})
      group by p.account, p.currency`,
  ])
  const byCurrency = new Map<string, Acc>()
  const acc = (currency: string): Acc => {
    let a = byCurrency.get(currency)
    if (!a) {
      a = {
        transit: 0n,
        inSubaccounts: 0n,
        pendingWithdrawals: 0n,
        pendingFundings: 0n,
        income: zeros(INCOME_KINDS),
        expenses: zeros(EXPENSE_KINDS),
        externalFlow: 0n,
        holdingsFlow: 0n,
      }
      byCurrency.set(currency, a)
    }
    return a
  }
  for (const b of balances) {
    const parsed = parseAccount(b.account)
    if (parsed?.family === 'transit') acc(b.currency).transit += toBigInt(b.v)
    if (parsed?.family === 'sub') acc(b.currency).inSubaccounts += toBigInt(b.v)
  }
  for (const r of reserved) acc(r.currency).pendingWithdrawals += toBigInt(r.v)
  for (const r of funding) acc(r.currency).pendingFundings += toBigInt(r.v)
  for (const f of flows) {
    const parsed = parseAccount(f.account)
    const a = acc(f.currency)
    const v = toBigInt(f.v)
    // sign convention (rules/types.ts): sources (external, income) run negative
    if (parsed?.family === 'income') a.income[parsed.kind] -= v
    else if (parsed?.family === 'expense') a.expenses[parsed.kind] += v
    else if (parsed?.family === 'external') a.externalFlow += v
    else if (parsed?.family === 'transit' || parsed?.family === 'sub') a.holdingsFlow += v
  }
  const assets = [...byCurrency.entries()]
    .sort(([x], [y]) => (x < y ? -1 : 1))
    .map(([currency, a]) => ({
      currency,
      freeBalance: a.transit - a.pendingWithdrawals - a.pendingFundings,
      transit: a.transit,
      inSubaccounts: a.inSubaccounts,
      pendingWithdrawals: a.pendingWithdrawals,
      pendingFundings: a.pendingFundings,
      income: a.income,
      expenses: a.expenses,
      netDeposits: -a.externalFlow,
      periodReturn: a.holdingsFlow + a.externalFlow,
    }))
  return { userId, from: period.from, to: period.to, assets }
}
