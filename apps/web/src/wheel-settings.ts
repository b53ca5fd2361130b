/**
 * A running wheel's settings (PATCH /wheels/{id}; docs/trading.md "Wheel settings"): a Settings
 * button next to its Stop button opens a small form under the wheels table, filled with the
 * settings in effect. Save sends only what changed; they apply from the wheel's next leg. A figure
 * outside the profile's bounds is refused by the API (SETTING_OUT_OF_BOUNDS) and said as is.
 */
import type { ApiClient, PositionsResponse, WheelSettings, WheelSettingsInput } from '@wh/client'
import { $, button, type Cell } from './dom'

type Wheel = PositionsResponse['wheels'][number]
type Act = (b: HTMLButtonElement, run: () => Promise<string>) => Promise<void>

const FORM_ID = 'wheel-settings-form'
const NUMBERS: ReadonlyArray<readonly [keyof WheelSettings, string]> = [
  ['putTargetDeltaBps', 'Put target |delta| (bps)'],
  ['callTargetDeltaBps', 'Call target |delta| (bps)'],
  ['otmBps', 'Distance from the index (bps)'],
  ['minTenorHours', 'Shortest expiry (hours)'],
  ['maxTenorDays', 'Longest expiry (days)'],
]

function field(label: string, input: HTMLInputElement | HTMLSelectElement): HTMLLabelElement {
  const l = document.createElement('label')
  l.append(`${label} `, input)
  return l
}

function select(name: string, value: string, options: Array<[string, string]>): HTMLSelectElement {
  const s = document.createElement('select')
  s.name = name
  for (const [v, text] of options) s.append(new Option(text, v, false, v === value))
  return s
}

/** The settings form of `w`, in place of any other one open. */
function openForm(api: ApiClient, act: Act, w: Wheel): void {
  document.getElementById(FORM_ID)?.remove()
  const form = document.createElement('form')
  form.id = FORM_ID
  form.setAttribute('aria-label', `Settings of the ${w.asset} wheel`)
  const s = w.settings
  form.append(
    field(
      'Strike by',
      select('strikeBy', s.strikeBy, [
        ['delta', 'target |delta|'],
        ['otm', 'distance from the index'],
      ]),
    ),
  )
  for (const [name, label] of NUMBERS) {
    const i = document.createElement('input')
    Object.assign(i, { name, type: 'number', min: '1', step: '1', required: true, value: String(s[name]) })
    form.append(field(label, i))
  }
  form.append(
    field(
      'At expiry',
      select('atExpiry', s.atExpiry, [
        ['roll', 'open the next leg'],
        ['settle', 'stop the wheel'],
      ]),
    ),
  )
  const save = document.createElement('button')
  save.type = 'submit'
  save.textContent = 'Save settings'
  form.append(save)
  form.addEventListener('submit', (ev) => {
    ev.preventDefault()
    const f = new FormData(form)
    const changed: Record<string, string | number> = {}
    for (const k of Object.keys(s) as (keyof WheelSettings)[]) {
      const raw = String(f.get(k))
      const v = typeof s[k] === 'number' ? Number(raw) : raw
      if (v !== s[k]) changed[k] = v
    }
    void act(save, async () => {
      if (Object.keys(changed).length === 0) return `The ${w.asset} wheel's settings are unchanged.`
      await api.updateWheelSettings(w.id, changed as WheelSettingsInput)
      form.remove()
      return `The ${w.asset} wheel's settings are saved: they apply from its next leg.`
    })
  })
  $('wheel-list').after(form)
}

/** A running wheel's action cell: its Stop button and a Settings button; otherwise `stop` as is. */
export function withSettings(api: ApiClient, act: Act, w: Wheel, stop: HTMLButtonElement | null): Cell {
  if (w.state !== 'running' || !stop) return stop
  const both = document.createDocumentFragment()
  both.append(
    stop,
    ' ',
    button('Settings', `Settings of the ${w.asset} wheel`, () => openForm(api, act, w)),
  )
  return both
}
