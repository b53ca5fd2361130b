/**
 * Outside signals (spec 5.4): POST /webhooks/signals carries a JSON body, a timestamp
 * header and an HMAC-SHA256 signature header. The MAC covers `${timestamp}.${rawBody}`, so a
 * captured request cannot be replayed with a fresh timestamp; the timestamp must lie within
 * SIGNAL_WINDOW_MS of our clock; the signal's id makes an identical replay inside the window a
 * duplicate of the journal's `signal_received` (spec 6 rule 3), which the route refuses.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { UNDERLYINGS } from '@wh/core'
import Type from 'typebox'

export const SIGNAL_TIMESTAMP_HEADER = 'x-signal-timestamp'
export const SIGNAL_SIGNATURE_HEADER = 'x-signal-signature'
/** a signal's timestamp may be this far from our clock, either way */
export const SIGNAL_WINDOW_MS = 5 * 60_000
/** the largest signal body accepted, bytes */
export const SIGNAL_MAX_BODY_BYTES = 16 * 1024

export const SIGNAL_SIDES = ['put', 'call'] as const
export type SignalSide = (typeof SIGNAL_SIDES)[number]

export const SignalBody = Type.Object(
  {
    /** the sender's id of this signal: one journal event per id */
    id: Type.String({ pattern: '^[A-Za-z0-9._:-]{1,100}$' }),
    asset: Type.Union(UNDERLYINGS.map((a) => Type.Literal(a))),
    /** which options the signal is about; 'both' means put and call */
    side: Type.Union([Type.Literal('put'), Type.Literal('call'), Type.Literal('both')]),
    /** pause stops new sales of that side on that asset; resume allows them again */
    action: Type.Union([Type.Literal('pause'), Type.Literal('resume')]),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    /** who sent it (a strategy, an operator); shown in /signals/state */
    source: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._ -]{1,100}$' })),
  },
  { additionalProperties: false },
)
export type Signal = Type.Static<typeof SignalBody>

export function sidesOf(side: Signal['side']): readonly SignalSide[] {
  return side === 'both' ? SIGNAL_SIDES : [side]
}

/** The signature header's value for a body: `sha256=<hex>`. */
export function signalSignature(secret: string, timestampSec: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampSec}.${rawBody}`).digest('hex')}`
}

export type SignalVerdict =
  | { readonly ok: true; readonly at: Date }
  | { readonly ok: false; readonly reason: 'missing headers' | 'bad timestamp' | 'stale timestamp' | 'bad signature' }

/**
 * Checks the headers of a signal request against its raw body. Constant-time comparison; the
 * verdict's reason is for our logs, the caller answers one opaque error.
 */
export function verifySignal(req: {
  secret: string
  timestamp: string | undefined
  signature: string | undefined
  rawBody: string
  now: Date
  windowMs?: number
}): SignalVerdict {
  if (!req.timestamp || !req.signature) return { ok: false, reason: 'missing headers' }
  if (!/^\d{1,12}$/.test(req.timestamp)) return { ok: false, reason: 'bad timestamp' }
  const atMs = Number(req.timestamp) * 1000
  if (Math.abs(req.now.getTime() - atMs) > (req.windowMs ?? SIGNAL_WINDOW_MS))
    return { ok: false, reason: 'stale timestamp' }
  const expected = Buffer.from(signalSignature(req.secret, req.timestamp, req.rawBody))
  const given = Buffer.from(req.signature)
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'bad signature' }
  return { ok: true, at: new Date(atMs) }
}
