/**
 * Why each wheel did what it did (GET /wheels/{id}/decisions; docs/trading.md "Why: the decision
 * log"): under the wheels' table, one list per wheel of its latest decisions, newest first, each
 * its time and its one-line message (kind and reason in the tooltip). A wheel whose log cannot be
 * read says so in its list; the rest of the section is unaffected.
 */
import type { ApiClient, PositionsResponse, WheelDecision } from '@wh/client'
import { describe, time } from './dom'

type Wheel = PositionsResponse['wheels'][number]

/** Decisions shown per wheel (the latest ones). */
export const DECISIONS_SHOWN = 10

function item(d: WheelDecision): HTMLLIElement {
  const li = document.createElement('li')
  li.title = `${d.kind}: ${d.reason}`
  li.dataset.kind = d.kind
  const text = document.createElement('span')
  text.textContent = d.message
  li.append(time(d.at) ?? '', ' ', text)
  return li
}

async function wheelLog(api: ApiClient, w: Wheel): Promise<HTMLDetailsElement> {
  const box = document.createElement('details')
  box.className = 'decisions'
  box.dataset.wheel = w.id
  box.open = w.state !== 'stopped'
  const summary = document.createElement('summary')
  summary.textContent = `Why: the ${w.asset} wheel's latest decisions`
  const list = document.createElement('ol')
  try {
    const page = await api.wheelDecisions(w.id, { limit: DECISIONS_SHOWN })
    list.append(...page.decisions.map(item))
    if (page.decisions.length === 0)
      list.append(Object.assign(document.createElement('li'), { textContent: 'no decisions yet' }))
  } catch (e) {
    list.append(Object.assign(document.createElement('li'), { textContent: `not available: ${describe(e)}` }))
  }
  box.append(summary, list)
  return box
}

/** Draws the wheels' decision lists right after `after` (the wheels' table), replacing earlier ones. */
export async function showDecisions(api: ApiClient, after: HTMLElement, wheels: readonly Wheel[]): Promise<void> {
  let host = document.getElementById('wheel-decisions')
  if (!host) {
    host = document.createElement('div')
    host.id = 'wheel-decisions'
    after.after(host)
  }
  host.replaceChildren(...(await Promise.all(wheels.map((w) => wheelLog(api, w)))))
}
