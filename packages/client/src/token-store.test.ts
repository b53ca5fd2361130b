import { describe, expect, it } from 'vitest'
import { type KeyValueStorage, TOKEN_STORAGE_KEY, TokenStore } from './token-store.js'

class MemoryStorage implements KeyValueStorage {
  readonly map = new Map<string, string>()
  getItem(k: string) {
    return this.map.get(k) ?? null
  }
  setItem(k: string, v: string) {
    this.map.set(k, v)
  }
  removeItem(k: string) {
    this.map.delete(k)
  }
}

const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
const jwt = (expSec: number) => `${b64url({ alg: 'HS256' })}.${b64url({ sub: 'u', exp: expSec })}.sig`

const A = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'
const B = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

describe('token store (spec 5.3)', () => {
  it('returns the token for the address it was issued for', () => {
    const now = 1_000_000
    const store = new TokenStore(new MemoryStorage(), () => now)
    const t = jwt(now / 1000 + 3600)
    store.save(t, A)
    expect(store.read(A)).toBe(t)
    expect(store.read(A.toLowerCase())).toBe(t)
  })

  it('treats the token as absent when another address is connected', () => {
    const store = new TokenStore(new MemoryStorage(), () => 0)
    store.save(jwt(3600), A)
    expect(store.read(B)).toBeUndefined()
    expect(store.read(undefined)).toBeUndefined()
    // switching back finds it again: the token was not deleted, only not offered
    expect(store.read(A)).toBeDefined()
  })

  it('treats an expired token as absent and forgets it', () => {
    let now = 0
    const storage = new MemoryStorage()
    const store = new TokenStore(storage, () => now)
    store.save(jwt(7 * 24 * 3600), A)
    now = 7 * 24 * 3600 * 1000 - 1
    expect(store.read(A)).toBeDefined()
    now += 1
    expect(store.read(A)).toBeUndefined()
    expect(storage.getItem(TOKEN_STORAGE_KEY)).toBeNull()
  })

  it('keeps tabs apart: each storage (tab) holds its own session', () => {
    const tab1 = new TokenStore(new MemoryStorage(), () => 0)
    const tab2 = new TokenStore(new MemoryStorage(), () => 0)
    tab1.save(jwt(3600), A)
    expect(tab2.read(A)).toBeUndefined()
  })

  it('survives garbage in storage', () => {
    const storage = new MemoryStorage()
    storage.setItem(TOKEN_STORAGE_KEY, '{not json')
    expect(new TokenStore(storage).read(A)).toBeUndefined()
    expect(() => new TokenStore(storage).save('not-a-jwt', A)).toThrow()
  })
})
