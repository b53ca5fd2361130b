/**
 * spec 5.3: the browser keeps the access token per tab (sessionStorage), bound to the
 * address it was issued for. A read while another address is connected, or after the
 * token's expiry, returns no token: the user signs in again.
 */

/** The subset of the Web Storage API the store needs (sessionStorage in a browser). */
export interface KeyValueStorage {
  getItem(key: string): string | null
  setItem(key: string, value: string): void
  removeItem(key: string): void
}

export interface StoredToken {
  readonly token: string
  /** the address the token was issued for, EIP-55 as the API returned it */
  readonly address: string
  /** ms since epoch, from the token's `exp` claim */
  readonly expiresAtMs: number
}

export const TOKEN_STORAGE_KEY = 'wheelhouse.session'

function expiryOf(token: string): number | undefined {
  const payload = token.split('.')[1]
  if (!payload) return undefined
  try {
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/')))
    return typeof json.exp === 'number' ? json.exp * 1000 : undefined
  } catch {
    return undefined
  }
}

export class TokenStore {
  readonly #storage: KeyValueStorage
  readonly #now: () => number

  constructor(storage: KeyValueStorage, now: () => number = Date.now) {
    this.#storage = storage
    this.#now = now
  }

  /** Keeps the token for this tab, bound to `address`. */
  save(token: string, address: string): void {
    const expiresAtMs = expiryOf(token)
    if (expiresAtMs === undefined) throw new Error('token has no exp claim')
    const value: StoredToken = { token, address, expiresAtMs }
    this.#storage.setItem(TOKEN_STORAGE_KEY, JSON.stringify(value))
  }

  /**
   * The token to send for `connectedAddress`, or undefined when there is none, it was
   * issued for another address (compared case-insensitively), or it has expired.
   */
  read(connectedAddress: string | undefined): string | undefined {
    const raw = this.#storage.getItem(TOKEN_STORAGE_KEY)
    if (!raw || !connectedAddress) return undefined
    let stored: StoredToken
    try {
      stored = JSON.parse(raw) as StoredToken
    } catch {
      this.clear()
      return undefined
    }
    if (typeof stored.token !== 'string' || typeof stored.address !== 'string') return undefined
    if (stored.address.toLowerCase() !== connectedAddress.toLowerCase()) return undefined
    if (!(stored.expiresAtMs > this.#now())) {
      this.clear()
      return undefined
    }
    return stored.token
  }

  clear(): void {
    this.#storage.removeItem(TOKEN_STORAGE_KEY)
  }
}
