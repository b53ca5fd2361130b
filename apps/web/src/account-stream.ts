/**
 * The signed-in user's live events (WS /ws/account, docs/account-stream.md) through
 * @wh/client's openAccountStream: a section under "Your account" listing each event as it comes
 * (newest first, the last 50), with the stream's status and last `seq`. The stream resumes by
 * itself after a dropped connection; signing out or switching wallets closes it.
 */
import { type AccountEventMessage, type AccountStream, openAccountStream } from '@wh/client'
import { $ } from './dom'
import { formatUnits } from './format'

/** Decimals of the currencies events carry (the table of @wh/core's CURRENCY_DECIMALS). */
const DECIMALS: Readonly<Record<string, number>> = { USDC: 6, ETH: 18, BTC: 8 }
const SHOWN = 50

/** One line for an event: its number, its kind, and what a person reads first. */
export function describeEvent(e: AccountEventMessage): string {
  const d = e.data as Record<string, string | undefined>
  const currency = d.currency ?? d.collateralCurrency
  const units = d.amount ?? d.collateralAmount
  const decimals = currency === undefined ? undefined : DECIMALS[currency]
  const parts = [`#${e.seq}`, e.kind.replace('.', ' ')]
  if (units !== undefined && currency !== undefined)
    parts.push(decimals === undefined ? `${units} ${currency} (base units)` : formatUnits(units, decimals, currency))
  for (const key of ['asset', 'state', 'instrument', 'reason'] as const) if (d[key]) parts.push(String(d[key]))
  if (d.txHash) parts.push(`tx ${d.txHash.slice(0, 10)}…`)
  return parts.join(' · ')
}

function sectionElements() {
  let section = document.getElementById('account-stream')
  if (!section) {
    section = document.createElement('section')
    section.id = 'account-stream'
    section.setAttribute('aria-labelledby', 'account-stream-heading')
    section.innerHTML =
      '<h2 id="account-stream-heading">Live activity</h2>' +
      '<p>Stream: <span id="account-stream-status" data-testid="account-stream-status">closed</span>' +
      ' · last event <span id="account-stream-seq">—</span></p>' +
      '<ol id="account-events" data-testid="account-events" reversed></ol>'
    $('private').append(section)
  }
  return { status: $('account-stream-status'), seq: $('account-stream-seq'), list: $('account-events') }
}

/** The section's stream: `sync(token)` opens it for a token, reopens it for another, closes it for none. */
export function accountStreamSection(baseUrl: string) {
  let stream: AccountStream | undefined
  let current: string | undefined
  return {
    sync(token: string | undefined) {
      if (token === current) return
      stream?.close()
      stream = undefined
      current = token
      const ui = sectionElements()
      ui.list.replaceChildren()
      if (!token) return
      const add = (text: string) => {
        const li = document.createElement('li')
        li.textContent = text
        ui.list.prepend(li)
        while (ui.list.childElementCount > SHOWN) ui.list.lastElementChild?.remove()
      }
      stream = openAccountStream({
        baseUrl,
        token,
        onSnapshot: (s) => {
          ui.seq.textContent = String(s.seq)
          add(`snapshot at #${s.seq}: ${s.positions.length} live legs, ${s.wheels.length} wheels`)
        },
        onEvent: (e) => {
          ui.seq.textContent = String(e.seq)
          add(describeEvent(e))
        },
        onStatus: (s) => {
          ui.status.textContent = s
        },
        onAuthFailed: () => add('the stream refused the token: sign in again'),
      })
    },
  }
}
