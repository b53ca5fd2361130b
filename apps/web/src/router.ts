/**
 * Pages by the URL's hash (`#/wheel`): no history API, so the build works at `/console/`, at `/` of
 * any static server, and reloads on any page without a server-side fallback.
 */
import { signal } from '@preact/signals'

export const PAGES = [
  { id: 'overview', path: '', title: 'Overview' },
  { id: 'wheel', path: 'wheel', title: 'Wheel' },
  { id: 'deposit', path: 'deposit', title: 'Deposit' },
  { id: 'withdraw', path: 'withdraw', title: 'Withdraw' },
  { id: 'statement', path: 'statement', title: 'Statement' },
  { id: 'proof', path: 'proof', title: 'Proof' },
  { id: 'market', path: 'market', title: 'Market' },
] as const
export type PageId = (typeof PAGES)[number]['id']

const parse = (hash: string): PageId => {
  const path = hash.replace(/^#\/?/, '').split(/[?/]/)[0] ?? ''
  return PAGES.find((p) => p.path === path)?.id ?? 'overview'
}

export const page = signal<PageId>(parse(location.hash))
export const hrefOf = (id: PageId) => `#/${PAGES.find((p) => p.id === id)?.path ?? ''}`
export const titleOf = (id: PageId) => PAGES.find((p) => p.id === id)?.title ?? ''

addEventListener('hashchange', () => {
  page.value = parse(location.hash)
})
