/**
 * The few DOM helpers the console's sections share. Everything from the API is set as text
 * (textContent, attributes): nothing it sends is parsed as HTML.
 */
import { ApiError } from '@wh/client'
import { formatAmount, formatTime } from './format'

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T

/** A table cell: text, a node (a button, a <time>), or nothing (shown as a dash). */
export type Cell = string | number | Node | null | undefined

/** The status line under the header, read out by screen readers (role="status"). */
export function say(text: string, kind: 'error' | 'ok' = 'error') {
  const m = $('message')
  m.textContent = text
  m.dataset.kind = kind
}

export function describe(e: unknown): string {
  if (e instanceof ApiError) return `${e.code}: ${e.message}`
  return e instanceof Error ? e.message : String(e)
}

/**
 * Fills `el` with a header row and one row per entry (an `empty` row when there are none). A
 * <caption> already in the table is kept: it names the table for screen readers.
 */
export function table(el: HTMLElement, head: string[], rows: Cell[][], empty = 'none') {
  const caption = el.querySelector(':scope > caption')
  const thead = document.createElement('thead')
  const hr = document.createElement('tr')
  for (const h of head) {
    const th = document.createElement('th')
    th.scope = 'col'
    th.textContent = h
    hr.append(th)
  }
  thead.append(hr)
  const tbody = document.createElement('tbody')
  if (rows.length === 0) {
    const td = document.createElement('td')
    td.colSpan = head.length
    td.className = 'empty'
    td.textContent = empty
    tbody.append(row([td]))
  }
  for (const r of rows) tbody.append(row(r.map(cell)))
  el.replaceChildren(...(caption ? [caption] : []), thead, tbody)
}

function row(cells: HTMLTableCellElement[]): HTMLTableRowElement {
  const tr = document.createElement('tr')
  tr.append(...cells)
  return tr
}

function cell(c: Cell): HTMLTableCellElement {
  const td = document.createElement('td')
  if (c instanceof Node) {
    td.append(c)
    if (c instanceof HTMLElement && c.classList.contains('amount')) td.className = 'num'
  } else td.textContent = c === null || c === undefined || c === '' ? '—' : String(c)
  return td
}

/** An amount as people read it; the exact figure the API gave is its tooltip. */
export function amount(value: string | null | undefined, currency: string): Node | null {
  if (value === null || value === undefined) return null
  const s = document.createElement('span')
  s.className = 'amount'
  s.textContent = formatAmount(value, currency)
  s.title = `${value} ${currency}`
  return s
}

/** A timestamp as local time and age, in a <time> carrying the exact instant. */
export function time(iso: string | null | undefined): Node | null {
  if (!iso) return null
  const t = document.createElement('time')
  t.dateTime = iso
  t.title = iso
  t.textContent = formatTime(iso, Date.now())
  return t
}

export function button(text: string, label: string, onClick: (b: HTMLButtonElement) => void): HTMLButtonElement {
  const b = document.createElement('button')
  b.type = 'button'
  b.textContent = text
  b.setAttribute('aria-label', label)
  b.addEventListener('click', () => onClick(b))
  return b
}
