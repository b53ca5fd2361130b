/** Public: the accepted chains and tokens, live prices and the strategy feed (no sign-in needed). */
import { type ApiClient, openPriceStream, openStrategyStream, type PriceUpdate } from '@wh/client'
import { $, amount, describe, say, table, time } from './dom'
import { formatNumber } from './format'

export async function loadAssets(api: ApiClient): Promise<void> {
  try {
    const { assets } = await api.assets()
    table(
      $('asset-routes'),
      ['Asset', 'Availability', 'Chain', 'Token', 'Contract', 'Minimum deposit', 'Confirmations'],
      assets.flatMap((a) =>
        a.depositRoutes.map((r) => [
          a.symbol,
          a.availability,
          `${r.chain} (${r.chainId})`,
          r.token,
          r.contract ?? 'native',
          amount(r.minDeposit, r.token),
          r.confirmations,
        ]),
      ),
      'no deposit routes',
    )
  } catch (e) {
    say(describe(e))
  }
}

export function startStreams(baseUrl: string, assets: string[]): void {
  const latest = new Map<string, PriceUpdate>()
  const renderPrices = () =>
    table(
      $('price-table'),
      ['Asset', 'Index', 'Mark', 'ATM IV', 'Update', 'At'],
      [...latest.values()].map((u) => [
        u.asset,
        amount(u.index, 'USD'),
        amount(u.mark, 'USD'),
        u.atmIv === null ? null : formatNumber(u.atmIv, { max: 4, min: 0 }),
        u.seq,
        time(u.ts),
      ]),
      'waiting for the feed',
    )
  renderPrices()
  const onPrice = (u: PriceUpdate) => {
    latest.set(u.asset, u)
    renderPrices()
  }
  openPriceStream({
    baseUrl,
    assets,
    onSnapshot: onPrice,
    onEvent: onPrice,
    onStatus: (s) => {
      $('prices-status').textContent = s
    },
  })
  const feed = $('strategy-feed')
  const log = (text: string) => {
    const li = document.createElement('li')
    li.textContent = text
    feed.prepend(li)
    while (feed.childElementCount > 100) feed.lastElementChild?.remove()
  }
  openStrategyStream({
    baseUrl,
    assets,
    onSnapshot: (s) =>
      log(
        `${s.asset} #${s.seq} state: ${s.strategies.map((x) => `${x.id} ${x.liveCycles} live`).join(', ')}; puts ${s.signals.put}, calls ${s.signals.call}`,
      ),
    onEvent: (e) => log(`${e.asset} #${e.seq} ${e.event}${'strategy' in e ? ` ${e.strategy}` : ''}`),
    onGap: (g) => log(`${g.asset}: missed #${g.expected}…#${g.received - 1}, reloading the state`),
    onStatus: (s) => {
      $('strategies-status').textContent = s
    },
  })
}
