/**
 * v3 action nonces: the UTC time in nanoseconds (19 digits today). Millisecond and microsecond
 * nonces are rejected. They exceed 2^53, so they are bigints here and decimal strings in JSON.
 * Validity rules differ per action kind; the published sources disagree in places, and the
 * table below records what each rule rests on (docs/exchange-v3.md, "Nonces").
 */
const NS_PER_MS = 1_000_000n
const MINUTE_MS = 60_000
const HOUR_MS = 60 * MINUTE_MS
const DAY_MS = 24 * HOUR_MS

export type V3ActionKind =
  | 'order'
  | 'rfq'
  | 'withdraw'
  | 'transfer'
  | 'session_key'
  | 'whitelist'
  | 'liquidation'
  | 'vault'

export interface NonceRule {
  /** How far before the server clock a nonce may lie. */
  pastMs: number
  /** How far after the server clock a nonce may lie. */
  futureMs: number
  /** Whether each nonce must exceed the previous one of the same subaccount. */
  strictlyIncreasing: boolean
}

/**
 * Orders and RFQs: ±5 minutes of the exchange's clock, any order (derive-ts 3.0.13
 * `src/signing/encoding.ts`: "the API accepts a ±5-minute intake window"; the spec's Action schema
 * names a one-day window, which the SDK written against the live API narrows); increasing kinds:
 * ±1 hour and strictly increasing per subaccount (derive-py `action_signing/utils.py`; the
 * session-key and whitelist actions are the wallet's, signed on subaccount 0); vaults: 60 days
 * back, 1 hour ahead (same source).
 */
export const NONCE_RULES: Record<V3ActionKind, NonceRule> = {
  order: { pastMs: 5 * MINUTE_MS, futureMs: 5 * MINUTE_MS, strictlyIncreasing: false },
  rfq: { pastMs: 5 * MINUTE_MS, futureMs: 5 * MINUTE_MS, strictlyIncreasing: false },
  withdraw: { pastMs: HOUR_MS, futureMs: HOUR_MS, strictlyIncreasing: true },
  transfer: { pastMs: HOUR_MS, futureMs: HOUR_MS, strictlyIncreasing: true },
  session_key: { pastMs: HOUR_MS, futureMs: HOUR_MS, strictlyIncreasing: true },
  whitelist: { pastMs: HOUR_MS, futureMs: HOUR_MS, strictlyIncreasing: true },
  liquidation: { pastMs: HOUR_MS, futureMs: HOUR_MS, strictlyIncreasing: true },
  vault: { pastMs: 60 * DAY_MS, futureMs: HOUR_MS, strictlyIncreasing: true },
}

/** signature_expiry_sec must lie between now+300 s and now+120 days (error 11011); vault actions at most 30 days. */
export const SIGNATURE_EXPIRY_MIN_SEC = 300n
export const SIGNATURE_EXPIRY_MAX_SEC = 10_368_000n
export const VAULT_SIGNATURE_EXPIRY_MAX_SEC = 30n * 86_400n
/** A session key registered over the API must live at least 5 minutes (error 14039). */
export const SESSION_KEY_MIN_LIFETIME_SEC = 300n

/**
 * Makes nanosecond nonces: the clock's milliseconds × 10^6 plus six random sub-millisecond
 * digits, bumped by one when that would not exceed the last (a stalled or stepped-back clock).
 * One generator per signer, so the transfer and withdrawal nonces it makes increase.
 */
export class NanosecondNonceGenerator {
  #last = 0n

  constructor(
    private readonly nowMs: () => number,
    private readonly random: () => number = Math.random,
  ) {}

  next(): bigint {
    const suffix = BigInt(Math.floor(this.random() * Number(NS_PER_MS)))
    let candidate = BigInt(Math.floor(this.nowMs())) * NS_PER_MS + suffix
    if (candidate <= this.#last) candidate = this.#last + 1n
    this.#last = candidate
    return candidate
  }
}

/** The millisecond time a nanosecond nonce names. */
export function nonceToMs(nonce: bigint): number {
  return Number(nonce / NS_PER_MS)
}

export type NonceVerdict = { ok: true } | { ok: false; reason: 'not_nanoseconds' | 'outside_window' | 'not_increasing' }

/** Whether a server at `nowMs` would take `nonce` for an action of `kind`, given the subaccount's last one. */
export function checkNonce(kind: V3ActionKind, nonce: bigint, nowMs: number, lastNonce?: bigint): NonceVerdict {
  // 10^18 ns is 2001-09-09: anything smaller is a ms/µs-scale nonce, not a present-day nanosecond one.
  if (nonce < 10n ** 18n) return { ok: false, reason: 'not_nanoseconds' }
  const rule = NONCE_RULES[kind]
  const now = BigInt(Math.floor(nowMs)) * NS_PER_MS
  if (nonce < now - BigInt(rule.pastMs) * NS_PER_MS || nonce > now + BigInt(rule.futureMs) * NS_PER_MS) {
    return { ok: false, reason: 'outside_window' }
  }
  if (rule.strictlyIncreasing && lastNonce !== undefined && nonce <= lastNonce) {
    return { ok: false, reason: 'not_increasing' }
  }
  return { ok: true }
}

/** Whether `expirySec` is a signature expiry the exchange accepts at `nowMs`. */
export function checkSignatureExpiry(kind: V3ActionKind, expirySec: bigint, nowMs: number): boolean {
  const now = BigInt(Math.floor(nowMs / 1000))
  const max = kind === 'vault' ? VAULT_SIGNATURE_EXPIRY_MAX_SEC : SIGNATURE_EXPIRY_MAX_SEC
  return expirySec >= now + SIGNATURE_EXPIRY_MIN_SEC && expirySec <= now + max
}
