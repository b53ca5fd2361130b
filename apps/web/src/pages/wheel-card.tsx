/**
 * One wheel, as vault interfaces show a strategy: its current leg with its state and the reason it
 * waits, countdowns to the end of the maker window and to expiry, stop and resume, its settings,
 * then its cycles (./wheel-history.tsx) and its decisions.
 */
import type { PositionItem, WheelItem } from '@wh/client'
import { useState } from 'preact/hooks'
import { Refusal } from '../errors'
import { formatAmount, hoursToDays } from '../format'
import { api } from '../session'
import { positions, refresh } from '../state/account'
import { tradingConfig } from '../state/trading-config'
import { Result, useAction } from '../ui/action'
import { Figure } from '../ui/common'
import { Amount, Countdown, percent } from '../ui/values'
import { changedSettings, fieldsOf, settingsOf } from '../wheel-form'
import { SettingsInputs } from './settings-fields'
import { legStateInWords, stateInWords, waitingReason } from './wheel-words'

const LIVE = new Set(['requested', 'funding', 'placing', 'open', 'closing'])
const CANCELLABLE = new Set(['requested', 'funding', 'placing'])

/** The settings in words: "delta 20 % put / 20 % call, 2 to 8 days, then the next leg". */
export function settingsInWords(s: WheelItem['settings']): string {
  const strike =
    s.strikeBy === 'delta'
      ? `delta ${percent(s.putTargetDeltaBps, 0)} put, ${percent(s.callTargetDeltaBps, 0)} call`
      : `${percent(s.otmBps, 1)} from the price`
  const tenor = `${hoursToDays(s.minTenorHours)} to ${s.maxTenorDays} days`
  return `${strike}; expiries ${tenor}; after expiry ${s.atExpiry === 'roll' ? 'the next leg' : 'stop'}`
}

function Leg({ w, leg }: { w: WheelItem; leg: PositionItem | undefined }) {
  const [outcome, act] = useAction()
  const waiting = waitingReason(w, leg)
  if (!leg || !LIVE.has(leg.state))
    return (
      <div class="leg" data-testid="current-leg">
        <p>
          <strong>No live leg.</strong>{' '}
          {waiting ?? (w.state === 'stopped' ? 'The wheel is stopped.' : 'The next leg opens shortly.')}
        </p>
      </div>
    )
  const cancel = () =>
    act(async () => {
      const r = await api.cancelPosition(leg.id)
      refresh(['positions', 'summary'])
      const wheel = r.wheel ? ` The wheel is ${r.wheel.state === 'stopped' ? 'stopped' : 'stopping'} with it.` : ''
      return `${r.outcome === 'cancelled' ? 'Leg cancelled.' : 'Cancelling the leg: its orders are being cancelled.'}${wheel}`
    }, 'Cancelling…')
  return (
    <div class="leg" data-testid="current-leg" data-state={leg.state}>
      <p>
        <strong>
          {leg.side === 'put' ? 'Put' : 'Call'} {leg.instrument ?? `on ${leg.asset}`}
        </strong>{' '}
        · <span data-testid="leg-state">{legStateInWords(leg)}</span>
      </p>
      {waiting && (
        <p class="waiting" data-testid="leg-waiting">
          Waiting: {waiting}
        </p>
      )}
      <div class="figures">
        <Figure label="Collateral">
          <Amount value={leg.collateral} currency={leg.collateralCurrency} />
        </Figure>
        <Figure label="Strike">
          <Amount value={leg.strike} currency="USD" />
        </Figure>
        <Figure label="Sold">
          {leg.size ? `${formatAmount(leg.filled, leg.asset)} of ${formatAmount(leg.size, leg.asset)}` : '—'}
        </Figure>
        <Figure label="Premium">
          <Amount value={leg.premium} currency="USDC" />
        </Figure>
      </div>
      <p class="countdowns">
        {leg.windowEndsAt && <Countdown to={leg.windowEndsAt} label="maker window ends in" />}{' '}
        {leg.expiry && <Countdown to={leg.expiry} label="expires in" />}
      </p>
      {CANCELLABLE.has(leg.state) && !leg.cancelRequested && (
        <button type="button" onClick={cancel} aria-label={`Cancel this leg (stops the wheel): the ${w.asset} wheel`}>
          Cancel this leg (stops the wheel)
        </button>
      )}
      <Result outcome={outcome} />
    </div>
  )
}

function Actions({ w }: { w: WheelItem }) {
  const [outcome, act] = useAction()
  const stop = (mode: 'after_cycle' | 'now') =>
    act(async () => {
      const r = await api.cancelPosition(w.id, { mode })
      refresh(['positions', 'summary'])
      return r.state === 'stopped'
        ? `The ${w.asset} wheel is stopped.`
        : `The ${w.asset} wheel is stopping${mode === 'now' ? ': its leg is being cancelled or bought back' : ' after its current leg'}.`
    }, 'Stopping…')
  const resume = () =>
    act(async () => {
      await api.resumeWheel(w.id)
      refresh(['positions'])
      return `The ${w.asset} wheel runs again: its next leg opens from what its subaccount holds.`
    }, 'Resuming…')
  return (
    <div class="actions">
      {w.state === 'running' && (
        <>
          <button
            type="button"
            onClick={() => stop('after_cycle')}
            aria-label={`Stop after this leg: the ${w.asset} wheel`}
          >
            Stop after this leg
          </button>
          <button type="button" onClick={() => stop('now')} aria-label={`Stop now: the ${w.asset} wheel`}>
            Stop now
          </button>
        </>
      )}
      {w.state === 'stopped' && (
        <button type="button" class="primary" onClick={resume} aria-label={`Resume: the ${w.asset} wheel`}>
          Resume
        </button>
      )}
      <Result outcome={outcome} />
    </div>
  )
}

function Settings({ w }: { w: WheelItem }) {
  const config = tradingConfig.value
  const [fields, setFields] = useState(() => fieldsOf(w.settings))
  const [outcome, act] = useAction()
  if (!config || w.state !== 'running') return null
  const save = (e: Event) => {
    e.preventDefault()
    const checked = settingsOf(fields, config.profile.wheelSettingBounds)
    if ('error' in checked) return void act(async () => Promise.reject(new Refusal(checked.error)))
    const changed = changedSettings(w.settings, checked.settings)
    void act(async () => {
      if (Object.keys(changed).length === 0) return `The ${w.asset} wheel's settings are unchanged.`
      await api.updateWheelSettings(w.id, changed)
      refresh(['positions'])
      return `Saved: they apply from the ${w.asset} wheel's next leg.`
    }, 'Saving…')
  }
  return (
    <details class="edit">
      <summary>Change its settings</summary>
      <form aria-label={`Settings of the ${w.asset} wheel`} onSubmit={save}>
        <SettingsInputs
          fields={fields}
          onChange={setFields}
          bounds={config.profile.wheelSettingBounds}
          idPrefix={`w-${w.id}`}
        />
        <button type="submit">Save settings</button>
        <Result outcome={outcome} />
      </form>
    </details>
  )
}

export function WheelHead({ w }: { w: WheelItem }) {
  const leg = positions.value?.positions.find((p) => p.id === w.currentPositionId)
  return (
    <>
      <p class="subtitle">
        <span class={`badge ${w.state}`}>{stateInWords(w.state)}</span> · {w.cycles} {w.cycles === 1 ? 'leg' : 'legs'} ·{' '}
        <span class="muted">{settingsInWords(w.settings)}</span>
      </p>
      <Leg w={w} leg={leg} />
      <Actions w={w} />
      <Settings w={w} />
    </>
  )
}
