/**
 * The session keys of one duty (docs/exchange-v3.md "Session keys"): during a renewal the service
 * holds the current key and the next one (SESSION_PRIVATE_KEY and SESSION_PRIVATE_KEY_NEXT), and
 * signs with the registered, unexpired one that lives longest, so trading moves to the new key as
 * soon as the exchange knows it and never waits for the old one to expire. Which keys the exchange
 * knows, and until when, is read from `private/session_keys` (at most every `refreshMs`, and at
 * once after a refusal that names the key: unknown or expired).
 */
import type { Address, Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'

/** A key is not picked in its last minutes: what it signs must stay valid (an order may not outlive its key). */
export const KEY_MIN_REMAINING_SEC = 600

export interface RegisteredKey {
  readonly address: Address
  readonly expirySec: number
}

export class KeyRing {
  readonly keys: ReadonlyArray<{ readonly address: Address; readonly privateKey: Hex }>
  #registered: Map<string, number> | undefined
  #readAtMs = Number.NEGATIVE_INFINITY

  constructor(
    keys: Hex | readonly Hex[],
    private readonly refreshMs = 300_000,
  ) {
    const list = (typeof keys === 'string' ? [keys] : keys).filter((k, i, all) => all.indexOf(k) === i)
    if (list.length === 0) throw new Error('a key ring needs at least one session key')
    this.keys = list.map((privateKey) => ({ address: privateKeyToAccount(privateKey).address, privateKey }))
  }

  /** Whether the ring should read the exchange's registrations before it picks (more than one key, none read lately). */
  stale(nowMs: number): boolean {
    return this.keys.length > 1 && nowMs - this.#readAtMs >= this.refreshMs
  }

  /** What `private/session_keys` answered; keys of other duties are ignored. */
  learn(registered: readonly RegisteredKey[], nowMs: number): void {
    const mine = new Set(this.keys.map((k) => k.address.toLowerCase()))
    this.#registered = new Map(
      registered.filter((r) => mine.has(r.address.toLowerCase())).map((r) => [r.address.toLowerCase(), r.expirySec]),
    )
    this.#readAtMs = nowMs
  }

  /** Forget what was read: the next pick reads again (a refusal named the key unknown or expired). */
  invalidate(): void {
    this.#readAtMs = Number.NEGATIVE_INFINITY
  }

  /** The key's registered expiry (unix seconds), when read. */
  expiryOf(address: Address): number | undefined {
    return this.#registered?.get(address.toLowerCase())
  }

  /**
   * The key to sign with at `nowMs`: the registered one with the furthest expiry among those with
   * KEY_MIN_REMAINING_SEC left; before anything was read, or when none qualifies, the first (the
   * exchange then refuses it, saying why).
   */
  pick(nowMs: number): { readonly address: Address; readonly privateKey: Hex } {
    const first = this.keys[0] as { address: Address; privateKey: Hex }
    if (!this.#registered) return first
    const floor = Math.floor(nowMs / 1000) + KEY_MIN_REMAINING_SEC
    let best: { address: Address; privateKey: Hex } | undefined
    let bestExpiry = -1
    for (const k of this.keys) {
      const e = this.#registered.get(k.address.toLowerCase())
      if (e !== undefined && e > floor && e > bestExpiry) {
        best = k
        bestExpiry = e
      }
    }
    return best ?? first
  }
}
