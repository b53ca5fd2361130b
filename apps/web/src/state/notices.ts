/**
 * Live notices: what the account stream just said ("Deposit of 1,500.00 USDC credited"), shown in
 * one polite live region and gone after a while. A form's own result is shown in place, under the
 * form (ui/action.tsx), not here.
 */
import { signal } from '@preact/signals'

export interface Notice {
  readonly id: number
  readonly text: string
  readonly kind: 'info' | 'ok' | 'error'
}

/** Notices shown at once (the newest first); older ones drop off. */
const SHOWN = 4
/** How long a notice stays. */
const NOTICE_MS = 10_000

export const notices = signal<readonly Notice[]>([])
let next = 1

export function notify(text: string, kind: Notice['kind'] = 'info'): void {
  const n = { id: next++, text, kind }
  notices.value = [n, ...notices.value].slice(0, SHOWN)
  setTimeout(() => dismiss(n.id), NOTICE_MS)
}

export function dismiss(id: number): void {
  notices.value = notices.value.filter((n) => n.id !== id)
}
