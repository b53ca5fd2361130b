/**
 * Starting a wheel: the asset, the USDC it starts with and its settings in one form, with a live
 * quote of the first leg those settings would sell now (POST /quotes with the settings, docs/trading.md
 * "Economics"), read again as any field changes.
 */
import type { PositionQuote } from '@wh/client'
import { useEffect, useState } from 'preact/hooks'
import { ASSETS, type Asset } from '../config'
import { errorText, sentenceOf } from '../errors'
import { formatAmount, formatLocalTime } from '../format'
import { api } from '../session'
import { refresh, summary } from '../state/account'
import { tradingConfig } from '../state/trading-config'
import { Result, useAction } from '../ui/action'
import { Loading } from '../ui/common'
import { percent } from '../ui/values'
import { changedSettings, fieldsOf, profileSettings, type SettingsFields, settingsOf } from '../wheel-form'
import { SettingsInputs } from './settings-fields'

type QuoteState =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | { kind: 'quote'; q: PositionQuote }
  | { kind: 'error'; text: string }

/** How long the form waits after a keystroke before asking for a quote. */
const QUOTE_DEBOUNCE_MS = 300

export function QuoteLine({ state }: { state: QuoteState }) {
  if (state.kind === 'idle') return null
  if (state.kind === 'loading')
    return (
      <output class="quote" data-state="loading">
        Quoting…
      </output>
    )
  if (state.kind === 'error')
    return (
      <output class="quote" data-state="error">
        No quote: {state.text}
      </output>
    )
  const q = state.q
  const usdc = (v: string) => formatAmount(v, 'USDC')
  return (
    <output class="quote" data-state={q.warning ? 'warning' : 'ok'} data-testid="quote">
      <strong>If started now</strong>, its first leg sells <strong>{q.instrument}</strong>: strike{' '}
      {formatAmount(q.strike, 'USD')}, expiry {formatLocalTime(q.expiry)}, {formatAmount(q.size, q.asset)} contracts.
      <br />
      Premium {usdc(q.premium)} − exchange fee {usdc(q.exchangeFee)} − platform fee {usdc(q.platformFee)} ={' '}
      <strong>{usdc(q.netPremium)}</strong>, {percent(q.netAnnualisedYieldBps)} a year.
      {!q.wouldPlace && <span class="warn"> Not sold right now: {q.reason}.</span>}
      {q.warning && (
        <span class="warn">
          {' '}
          ⚠{' '}
          {sentenceOf('FEES_EXCEED_PREMIUM_SHARE', {
            feeShareBps: q.feeShareBps,
            maxFeeShareBps: q.maxFeeShareBps,
          })}
        </span>
      )}
    </output>
  )
}

/** The quote of the first leg these settings would sell now, read again (debounced) as they change. */
function useWheelQuote(asset: Asset, amount: string, checked: ReturnType<typeof settingsOf> | undefined): QuoteState {
  const [quote, setQuote] = useState<QuoteState>({ kind: 'idle' })
  useEffect(() => {
    if (!checked) return
    if ('error' in checked) return setQuote({ kind: 'error', text: checked.error })
    if (!/^\d+(\.\d{1,6})?$/.test(amount)) return setQuote({ kind: 'error', text: 'enter an amount of USDC.' })
    let current = true
    setQuote({ kind: 'loading' })
    const t = setTimeout(() => {
      api.quote({ asset, side: 'wheel', amount, settings: checked.settings }).then(
        (q) => current && setQuote({ kind: 'quote', q }),
        (e) => current && setQuote({ kind: 'error', text: errorText(e) }),
      )
    }, QUOTE_DEBOUNCE_MS)
    return () => {
      current = false
      clearTimeout(t)
    }
  }, [asset, amount, JSON.stringify(checked)])
  return quote
}

export function StartWheel() {
  const config = tradingConfig.value
  const [asset, setAsset] = useState<Asset>('ETH')
  const [amount, setAmount] = useState('1000')
  const [fields, setFields] = useState<SettingsFields | undefined>(undefined)
  const [outcome, act] = useAction()
  useEffect(() => {
    if (config && !fields) setFields(fieldsOf(profileSettings(config)))
  }, [config, fields])
  const checked = config && fields ? settingsOf(fields, config.profile.wheelSettingBounds) : undefined
  const quote = useWheelQuote(asset, amount, checked)
  if (!config || !fields) return <Loading what="the trading profile" />
  const free = summary.value?.assets.find((a) => a.currency === 'USDC')?.freeBalance
  const submit = (e: Event) => {
    e.preventDefault()
    if (!checked || 'error' in checked) return
    void act(async () => {
      // only what differs from the profile: the rest follows the profile (docs/trading.md "Wheel settings")
      const settings = changedSettings(profileSettings(config), checked.settings)
      const p = await api.createPosition(
        { asset, side: 'wheel', amount, ...(Object.keys(settings).length > 0 && { settings }) },
        { idempotencyKey: crypto.randomUUID() },
      )
      refresh(['positions', 'summary'])
      return `${asset} wheel started with ${formatAmount(p.collateral, 'USDC')}: its first put is ${p.state === 'funding' ? 'being funded at the exchange' : 'waiting to be placed'}.`
    }, 'Starting the wheel…')
  }
  return (
    <form class="stack" aria-label="Start a wheel" onSubmit={submit}>
      <div class="row">
        <div class="field">
          <label for="start-asset">Asset</label>
          <select
            id="start-asset"
            name="asset"
            value={asset}
            onChange={(e) => setAsset((e.target as HTMLSelectElement).value as Asset)}
          >
            {ASSETS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="start-amount">Amount (USDC)</label>
          <input
            id="start-amount"
            name="amount"
            inputMode="decimal"
            value={amount}
            onInput={(e) => setAmount((e.target as HTMLInputElement).value.trim())}
            aria-describedby="start-amount-hint"
            required
          />
          <span class="hint" id="start-amount-hint">
            {free ? `${formatAmount(free, 'USDC')} free` : 'from your free USDC'}
          </span>
        </div>
      </div>
      <SettingsInputs
        fields={fields}
        onChange={setFields}
        bounds={config.profile.wheelSettingBounds}
        idPrefix="start"
      />
      <QuoteLine state={quote} />
      <button type="submit" class="primary" disabled={outcome?.kind === 'busy' || !checked || 'error' in checked}>
        Start the wheel
      </button>
      <Result outcome={outcome} testId="start-result" />
    </form>
  )
}
