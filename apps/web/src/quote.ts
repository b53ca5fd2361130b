/**
 * The quote shown before a position is opened (POST /quotes, docs/trading.md "Economics"): the
 * option the placing tick would sell now for the form's asset and amount, its premium, the
 * exchange's and the platform's fees with their share of the premium, the net and the yield, and
 * the API's warning when fees take more than the allowed share. Read again when the form changes.
 */
import type { ApiClient, PositionQuote } from '@wh/client'
import { $, describe } from './dom'
import { formatAmount } from './format'

const pct = (bps: number | null) => (bps === null ? '–' : `${(bps / 100).toFixed(2)} %`)

function quoteText(q: PositionQuote): string {
  const usdc = (v: string) => formatAmount(v, 'USDC')
  const expiry = q.expiry.slice(0, 10)
  return [
    `${q.instrument} (strike ${usdc(q.strike)}, expiry ${expiry}): ${formatAmount(q.size, q.asset)} contracts`,
    `premium ${usdc(q.premium)}`,
    `exchange fee ${usdc(q.exchangeFee)} (${pct(q.exchangeFeeShareBps)})`,
    `platform fee ${usdc(q.platformFee)} (${pct(q.platformFeeShareBps)})`,
    `net ${usdc(q.netPremium)}, ${pct(q.netAnnualisedYieldBps)} a year`,
  ].join(' · ')
}

/** Adds the quote line under the position form and keeps it current; call the answer once signed in. */
export function quoteLine(api: ApiClient): () => Promise<void> {
  const form = $<HTMLFormElement>('position-form')
  const out = document.createElement('output')
  out.id = 'position-quote'
  out.setAttribute('aria-live', 'polite')
  form.after(out)
  let asked = 0
  async function refresh() {
    const f = new FormData(form)
    const n = ++asked
    out.dataset.state = 'loading'
    try {
      const q = await api.quote({
        asset: String(f.get('asset')) as 'ETH' | 'BTC',
        side: String(f.get('side')) as 'put' | 'wheel',
        amount: String(f.get('amount')),
      })
      if (n !== asked) return // a newer question is on its way
      const warning = q.warning ? ` ⚠ ${q.warning.message}` : ''
      const blocked = q.wouldPlace ? '' : ` (not sold now: ${q.reason})`
      out.textContent = `Quote: ${quoteText(q)}${blocked}${warning}`
      out.dataset.state = q.warning ? 'warning' : 'ok'
    } catch (e) {
      if (n !== asked) return
      out.textContent = `No quote: ${describe(e)}`
      out.dataset.state = 'error'
    }
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  form.addEventListener('input', () => {
    clearTimeout(timer)
    timer = setTimeout(() => void refresh(), 300)
  })
  form.addEventListener('change', () => void refresh())
  return refresh
}
