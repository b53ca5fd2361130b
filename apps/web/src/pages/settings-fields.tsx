/**
 * A wheel's settings as fields in percent and days (../wheel-form.ts converts them), shared by the
 * start form and a running wheel's settings. Each field shows the profile's bounds.
 */
import type { TradingConfigResponse } from '@wh/client'
import { boundsText, type SettingsFields } from '../wheel-form'

export function SettingsInputs({
  fields,
  onChange,
  bounds,
  idPrefix,
}: {
  fields: SettingsFields
  onChange: (f: SettingsFields) => void
  bounds: TradingConfigResponse['profile']['wheelSettingBounds']
  idPrefix: string
}) {
  const t = boundsText(bounds)
  const set = (k: keyof SettingsFields) => (e: Event) =>
    onChange({ ...fields, [k]: (e.target as HTMLInputElement).value })
  const id = (k: string) => `${idPrefix}-${k}`
  const number = (k: keyof SettingsFields, label: string, hint: string, step = '0.01') => (
    <div class="field">
      <label for={id(k)}>{label}</label>
      <input
        id={id(k)}
        name={k}
        type="number"
        inputMode="decimal"
        step={step}
        min="0"
        value={fields[k]}
        onInput={set(k)}
        aria-describedby={id(`${k}-hint`)}
      />
      <span class="hint" id={id(`${k}-hint`)}>
        {hint}
      </span>
    </div>
  )
  return (
    <fieldset class="settings">
      <legend>Settings</legend>
      <div class="field">
        <label for={id('strikeBy')}>Pick the strike by</label>
        <select id={id('strikeBy')} name="strikeBy" value={fields.strikeBy} onChange={set('strikeBy')}>
          <option value="delta">its delta (chance of being exercised)</option>
          <option value="otm">its distance from the price</option>
        </select>
      </div>
      {fields.strikeBy === 'delta' ? (
        <>
          {number('putDeltaPct', 'Put delta (%)', `${t.delta}; lower sells further from the price`)}
          {number('callDeltaPct', 'Call delta (%)', t.delta)}
        </>
      ) : (
        number('otmPct', 'Distance from the price (%)', `${t.otm}; a put that far below, a call that far above`)
      )}
      {number('minDays', 'Shortest expiry (days)', t.minDays)}
      {number('maxDays', 'Longest expiry (days)', t.maxDays, '1')}
      <div class="field">
        <label for={id('atExpiry')}>After each expiry</label>
        <select id={id('atExpiry')} name="atExpiry" value={fields.atExpiry} onChange={set('atExpiry')}>
          <option value="roll">open the next leg</option>
          <option value="settle">stop the wheel</option>
        </select>
      </div>
    </fieldset>
  )
}
