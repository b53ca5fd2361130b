/**
 * The client's keys per duty (docs/exchange-v3.md "Session keys"): the trading ring signs orders,
 * transfers and reads, the payout ring L1 withdrawals and their requests. Each ring picks its key
 * from the registrations it last read (key-ring.ts); this reads them when they are stale and signs
 * a request's auth headers with the key of its duty.
 */
import type { Address, Hex } from 'viem'
import { AUTH_HEADERS, signAuthProof } from '../protocol/auth-message'
import { V3_MODULES } from '../protocol/constants'
import type * as W from '../v3/wire.gen'
import type { HttpTransport } from './http-transport'
import type { KeyRing, RegisteredKey } from './key-ring'

export class DutyKeys {
  constructor(
    readonly trading: KeyRing,
    readonly payout: KeyRing,
    private readonly o: { wallet: Address; nowMs: () => number; http: HttpTransport },
  ) {}

  /** `private/session_keys`, authenticated by `privateKey`. */
  async #registered(privateKey: Hex): Promise<RegisteredKey[]> {
    const r = await this.o.http.call<W.PrivateSessionKeysResponse>(
      'private/session_keys',
      { wallet: this.o.wallet },
      { idempotent: true, headers: () => this.headers(privateKey) },
    )
    return r.public_session_keys.map((k) => ({ address: k.public_session_key as Address, expirySec: k.expiry_sec }))
  }

  /** The ring of a private method: a withdrawal's is the payout ring. */
  ofMethod(method: string): KeyRing {
    return method === 'withdraw' ? this.payout : this.trading
  }

  /** The ring of a signed action's module: a withdrawal's is the payout ring. */
  ofModule(module: Address): KeyRing {
    return module === V3_MODULES.withdrawal ? this.payout : this.trading
  }

  /**
   * The key a ring signs with now, its registrations read first when they are stale: authenticated by
   * the key it would pick, else by each other key of the ring in turn (the one it picked may have just
   * expired: that is when the next one must be found).
   */
  async key(ring: KeyRing): Promise<{ address: Address; privateKey: Hex }> {
    const now = this.o.nowMs()
    if (ring.stale(now)) {
      const first = ring.pick(now)
      let registered: RegisteredKey[] = [] // unreadable: the ring signs with its first key until the next read
      for (const k of [first, ...ring.keys.filter((x) => x.address !== first.address)]) {
        const read = await this.#registered(k.privateKey).catch(() => undefined)
        if (read) {
          registered = read
          break
        }
      }
      ring.learn(registered, now)
    }
    return ring.pick(now)
  }

  /** The three auth headers for one request, signed now by `privateKey`. */
  async headers(privateKey: Hex): Promise<Record<string, string>> {
    const p = await signAuthProof(this.o.wallet, privateKey, this.o.nowMs())
    return {
      [AUTH_HEADERS.wallet]: p.wallet,
      [AUTH_HEADERS.timestamp]: p.timestamp,
      [AUTH_HEADERS.signature]: p.signature,
    }
  }
}
