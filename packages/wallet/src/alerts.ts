/**
 * Alerts (spec 6.2): a chat-bot message (Telegram Bot API `sendMessage`) when both the bot token
 * and the chat id are set, otherwise one `warn` log line. Alerting is never disabled, and it never
 * throws: a delivery failure is logged (with the alert itself, so nothing is lost) and swallowed,
 * because the caller is a tick whose own work must not fail over a chat outage.
 *
 * The bot token travels only in the request path; it is scrubbed from every string this module
 * logs or sends, and the request URL is never logged.
 */

import { redactUrls } from '@wh/core'

/** What the alerter logs through (pino's shape). */
export interface AlertLog {
  warn(obj: object, msg?: string): void
}

/** Context shown under the alert's text, one `key: value` line each. Never pass a secret here. */
export type AlertFields = Readonly<Record<string, string | number | bigint | boolean | null | undefined>>

export interface AlerterOptions {
  /** ALERT_BOT_TOKEN */
  readonly botToken?: string | undefined
  /** ALERT_CHAT_ID */
  readonly chatId?: string | undefined
  readonly log: AlertLog
  /** injectable for tests; the global fetch by default */
  readonly fetch?: typeof fetch
  /** the Bot API's origin; tests point it at a local capture server */
  readonly apiBaseUrl?: string
  readonly timeoutMs?: number
}

export interface Alerter {
  /** where alerts go: the chat, or the log when the chat is not configured */
  readonly channel: 'telegram' | 'log'
  /** Sends one alert. Resolves once delivered or given up on; never rejects. */
  alert(text: string, fields?: AlertFields): Promise<void>
}

export const TELEGRAM_API_BASE_URL = 'https://api.telegram.org'
/** A delivery attempt is abandoned after this long. */
export const ALERT_TIMEOUT_MS = 5_000
/** Telegram refuses a message text longer than 4096 characters. */
export const ALERT_MAX_TEXT_CHARS = 4_096

function formatFields(fields: AlertFields | undefined): string[] {
  if (!fields) return []
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v === null ? 'null' : String(v)}`)
}

function jsonFields(
  fields: AlertFields | undefined,
  scrub: (s: string) => string = (s) => s,
): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {}
  if (!fields) return out
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue
    out[k] = typeof v === 'bigint' ? v.toString() : typeof v === 'string' ? scrub(v) : v
  }
  return out
}

/**
 * Builds the alerter once per process (main.ts) from config.alert.
 *
 * @example
 *   const alerter = createAlerter({ botToken: config.alert?.botToken, chatId: config.alert?.chatId, log })
 *   await alerter.alert('withdrawal stuck', { withdrawalId, minutes: 31 })
 */
export function createAlerter(opts: AlerterOptions): Alerter {
  const { log } = opts
  const token = opts.botToken?.trim() || undefined
  const chatId = opts.chatId?.trim() || undefined
  if (!token || !chatId) {
    return {
      channel: 'log',
      async alert(text, fields) {
        log.warn({ alert: redactUrls(text), ...jsonFields(fields, redactUrls) }, 'alert')
      },
    }
  }
  const doFetch = opts.fetch ?? fetch
  const base = (opts.apiBaseUrl ?? TELEGRAM_API_BASE_URL).replace(/\/+$/, '')
  const timeoutMs = opts.timeoutMs ?? ALERT_TIMEOUT_MS
  // the token, and any URL's path and query (an RPC error in a field names its provider's key)
  const scrub = (s: string) => redactUrls(s.split(token).join('[redacted]'))

  return {
    channel: 'telegram',
    async alert(text, fields) {
      const body = scrub([text, ...formatFields(fields)].join('\n')).slice(0, ALERT_MAX_TEXT_CHARS)
      try {
        const res = await doFetch(`${base}/bot${token}/sendMessage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chat_id: chatId, text: body, disable_web_page_preview: true }),
          signal: AbortSignal.timeout(timeoutMs),
        })
        // drain the body either way so the connection is reused; its text may explain a refusal
        const answer = await res.text().catch(() => '')
        if (!res.ok) {
          log.warn(
            {
              alert: scrub(text),
              ...jsonFields(fields, scrub),
              status: res.status,
              response: scrub(answer.slice(0, 300)),
            },
            'alert delivery refused by the chat API',
          )
        }
      } catch (err) {
        const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
        log.warn({ alert: scrub(text), ...jsonFields(fields, scrub), reason: scrub(reason) }, 'alert delivery failed')
      }
    },
  }
}
