/** Balances per currency now, and income and return over the summary's period (GET /portfolio/summary). */
import type { ApiClient } from '@wh/client'
import { $, amount, table } from './dom'
import { formatLocalTime } from './format'

export async function loadBalances(api: ApiClient): Promise<void> {
  const summary = await api.portfolioSummary()
  $('balances-period').textContent =
    `Income and return from ${formatLocalTime(summary.from)} to ${formatLocalTime(summary.to)} (local time).`
  table(
    $('summary'),
    ['Currency', 'Free', 'In subaccounts', 'Pending withdrawals', 'Premium', 'Interest', 'Return'],
    summary.assets.map((a) => [
      a.currency,
      amount(a.freeBalance, a.currency),
      amount(a.inSubaccounts, a.currency),
      amount(a.pendingWithdrawals, a.currency),
      amount(a.income.premium, a.currency),
      amount(a.income.interest, a.currency),
      amount(a.periodReturn, a.currency),
    ]),
    'no balances yet',
  )
}
