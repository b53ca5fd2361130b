/**
 * A single-holder lease in Redis: `SET key token NX PX ttl` to take it, renewal and release only
 * while `key` still holds our token. The holder renews well inside the TTL; a holder that dies or
 * stalls past the TTL loses it, and a standby takes over. What the holder writes can be fenced
 * by checking the token in the same atomic step (channels.ts `publishPriceUpdate`).
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`

export interface Lease {
  readonly key: string
  readonly token: string
  /** true while still ours (the TTL starts again); false once lost */
  renew(): Promise<boolean>
  release(): Promise<void>
}

/** Takes the lease when free; undefined when another holds it. */
export async function tryAcquireLease(redis: Redis, key: string, ttlMs: number): Promise<Lease | undefined> {
  const token = randomUUID()
  if ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') return undefined
  return {
    key,
    token,
    renew: async () => (await redis.eval(RENEW, 1, key, token, String(ttlMs))) === 1,
    release: async () => {
      await redis.eval(RELEASE, 1, key, token)
    },
  }
}
