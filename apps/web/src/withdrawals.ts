/** Withdrawals: the routes with their limits, a request form, and the user's withdrawals. */
import type { ApiClient, CreateWithdrawalBody, WithdrawalRoute } from '@wh/client'
import { $, amount, describe, say, table, time } from './dom'
import { formatAmount, formatNumber } from './format'

export interface WithdrawalsSection {
  load(): Promise<void>
}

const usd = (v: string) => `${formatNumber(v, { max: 2, min: 0 })} USD`

export function withdrawalsSection(api: ApiClient): WithdrawalsSection {
  let routes: WithdrawalRoute[] = []

  function renderRoutes() {
    table(
      $('withdrawal-routes'),
      ['Chain', 'Asset', 'Minimum', 'Maximum', 'Limits', 'Network fee'],
      routes.map((x) => [
        x.chain,
        x.asset,
        amount(x.minAmount, x.asset) ?? '–',
        amount(x.maxAmount, x.asset) ?? '–',
        `${usd(x.minUsd)} – ${usd(x.maxUsd)}${x.priceAvailable ? '' : ' (no recent price: unavailable)'}`,
        x.networkFee.available
          ? `${x.networkFee.estimate ? formatAmount(x.networkFee.estimate, 'ETH') : '?'}, paid by the platform`
          : 'unavailable',
      ]),
      'no routes',
    )
    const select = $<HTMLSelectElement>('withdrawal-route')
    select.replaceChildren(
      ...routes.map((x, i) => {
        const o = document.createElement('option')
        o.value = String(i)
        o.textContent =
          x.priceAvailable && x.minAmount && x.maxAmount
            ? `${x.asset} on ${x.chain} (${formatAmount(x.minAmount, x.asset)} – ${formatAmount(x.maxAmount, x.asset)})`
            : `${x.asset} on ${x.chain} (unavailable: no recent price)`
        o.disabled = !x.priceAvailable
        return o
      }),
    )
  }

  async function load() {
    const [r, list] = await Promise.all([api.withdrawalRoutes(), api.withdrawals({ limit: 20 })])
    routes = r.routes
    renderRoutes()
    table(
      $('withdrawal-list'),
      ['Requested', 'Asset', 'Chain', 'Amount', 'State', 'Destination', 'Transaction'],
      list.items.map((w) => [
        time(w.createdAt),
        w.asset,
        w.chain,
        amount(w.amount, w.asset),
        w.state + (w.failureReason ? ` (${w.failureReason})` : ''),
        w.destination,
        w.txHash,
      ]),
      'no withdrawals',
    )
  }

  $('withdrawal-form').addEventListener('submit', async (ev) => {
    ev.preventDefault()
    const f = new FormData(ev.target as HTMLFormElement)
    const route = routes[Number(f.get('route'))]
    if (!route) return
    try {
      const w = await api.requestWithdrawal(
        {
          chain: route.chain as CreateWithdrawalBody['chain'],
          asset: route.asset,
          amount: String(f.get('amount')),
          destination: String(f.get('destination')),
        },
        { idempotencyKey: crypto.randomUUID() },
      )
      say(`Withdrawal of ${formatAmount(w.amount, w.asset)} requested.`, 'ok')
      await load()
    } catch (e) {
      say(`Withdrawal refused: ${describe(e)}`)
    }
  })

  return { load }
}
