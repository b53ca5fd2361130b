/**
 * A Redis lock with a TTL (the cycle lock, LOCK_TTL_MS): a tick that must not overlap with
 * itself takes it; a crashed holder's lock expires by itself. Release only deletes the lock
 * if it still holds our token, so a slow holder cannot free a lock someone else now owns.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`

export interface Lock {
  readonly key: string
  release(): Promise<void>
}

export async function tryLock(redis: Redis, key: string, ttlMs: number): Promise<Lock | undefined> {
  const token = randomUUID()
  const ok = await redis.set(key, token, 'PX', ttlMs, 'NX')
  if (ok !== 'OK') return undefined
  return {
    key,
    release: async () => {
      await redis.eval(RELEASE, 1, key, token)
    },
  }
}

/** Runs `fn` under the lock; returns undefined without running it when the lock is held. */
export async function withLock<T>(
  redis: Redis,
  key: string,
  ttlMs: number,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  const lock = await tryLock(redis, key, ttlMs)
  if (!lock) return undefined
  try {
    return await fn()
  } finally {
    await lock.release()
  }
}
