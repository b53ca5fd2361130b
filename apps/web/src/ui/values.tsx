/**
 * Figures as people read them (./format): amounts rounded down with their currency (the exact
 * figure in the tooltip), times local with their age, countdowns that tick, percentages.
 */
import { signal } from '@preact/signals'
import { formatAmount, formatLocalTime, formatTime } from '../format'

/** The clock countdowns read, once a second (one timer for the whole page). */
export const now = signal(Date.now())
setInterval(() => {
  now.value = Date.now()
}, 1000)

export function Amount({
  value,
  currency,
  signed,
}: {
  value: string | null | undefined
  currency: string
  signed?: boolean
}) {
  if (value === null || value === undefined) return <span class="muted">—</span>
  const shown = formatAmount(value, currency)
  const positive = signed && !value.startsWith('-') && /[1-9]/.test(value)
  return (
    <span
      class={`amount${signed ? (value.startsWith('-') ? ' neg' : positive ? ' pos' : '') : ''}`}
      title={`${value} ${currency}`}
    >
      {positive ? '+' : ''}
      {shown}
    </span>
  )
}

export function Time({ iso, plain }: { iso: string | null | undefined; plain?: boolean }) {
  if (!iso) return <span class="muted">—</span>
  return (
    <time dateTime={iso} title={iso}>
      {plain ? formatLocalTime(iso) : formatTime(iso, now.value)}
    </time>
  )
}

/** "2 d 04:13:09" until `iso`, "ended" once past; ticks every second. */
export function countdownText(iso: string, nowMs: number): string {
  const left = Math.floor((new Date(iso).getTime() - nowMs) / 1000)
  if (Number.isNaN(left)) return '—'
  if (left <= 0) return 'ended'
  const d = Math.floor(left / 86_400)
  const hms = [Math.floor((left % 86_400) / 3600), Math.floor((left % 3600) / 60), left % 60]
    .map((n) => String(n).padStart(2, '0'))
    .join(':')
  return d > 0 ? `${d} d ${hms}` : hms
}

export function Countdown({ to, label }: { to: string | null | undefined; label: string }) {
  if (!to) return null
  return (
    <span class="countdown">
      <span class="muted">{label}</span>{' '}
      <time dateTime={to} title={formatLocalTime(to)} data-testid={`countdown-${label.replaceAll(' ', '-')}`}>
        {countdownText(to, now.value)}
      </time>
    </span>
  )
}

/** Basis points as a percentage: 312 → "3.12 %". */
export const percent = (bps: number | null | undefined, places = 2): string =>
  bps === null || bps === undefined ? '—' : `${(bps / 100).toFixed(places)} %`
