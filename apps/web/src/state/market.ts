/**
 * Public market data, live (docs/market-data.md): each asset's latest price update from WS
 * /ws/prices and the strategy events from WS /ws/strategies, through @wh/client's streams (they
 * resubscribe after a reconnect and resnapshot an asset whose sequence skips). No sign-in needed.
 */
import { signal } from '@preact/signals'
import { openPriceStream, openStrategyStream, type PriceUpdate, type StrategyEvent } from '@wh/client'
import { API_URL, ASSETS } from '../config'

export const prices = signal<Readonly<Record<string, PriceUpdate>>>({})
export const priceStatus = signal('closed')
/** the strategy events as they come, newest first; each one bumps `strategyVersion` */
export const strategyEvents = signal<readonly StrategyEvent[]>([])
export const strategyVersion = signal(0)

const EVENTS_SHOWN = 30
let started = false

export function startMarketStreams(): void {
  if (started) return
  started = true
  const onPrice = (u: PriceUpdate) => {
    prices.value = { ...prices.value, [u.asset]: u }
  }
  openPriceStream({
    baseUrl: API_URL,
    assets: [...ASSETS],
    onSnapshot: onPrice,
    onEvent: onPrice,
    onStatus: (s) => {
      priceStatus.value = s
    },
  })
  openStrategyStream({
    baseUrl: API_URL,
    assets: [...ASSETS],
    onEvent: (e) => {
      strategyEvents.value = [e, ...strategyEvents.value].slice(0, EVENTS_SHOWN)
      strategyVersion.value++
    },
  })
}
