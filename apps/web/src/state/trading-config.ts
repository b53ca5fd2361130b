/** GET /trading-config, read once when a page needs it: the profile, its bounds, the minimum sizes. */
import { signal } from '@preact/signals'
import type { TradingConfigResponse } from '@wh/client'
import { errorText } from '../errors'
import { api } from '../session'
import { notify } from './notices'

export const tradingConfig = signal<TradingConfigResponse | undefined>(undefined)
let asked = false

export function loadTradingConfig(): void {
  if (asked) return
  asked = true
  api.tradingConfig().then(
    (c) => {
      tradingConfig.value = c
    },
    (e) => {
      asked = false
      notify(errorText(e), 'error')
    },
  )
}
