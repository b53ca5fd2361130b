/**
 * A Redis lock with a TTL (the cycle lock, LOCK_TTL_MS): a tick that must not overlap with
 * itself takes it; a crashed holder's lock expires by itself. Release only deletes the lock
 * if it still holds our token, so a slow holder cannot free a lock someone else now owns.
 */
import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`

export interface Lock {
  readonly key: string
  release(): Promise<void>
  /** pushes the expiry `ttlMs` ahead while we still hold it; false when the lock is no longer ours */
  extend(ttlMs: number): Promise<boolean>
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
    extend: async (ms) => (await redis.eval(EXTEND, 1, key, token, String(ms))) === 1,
  }
}

export interface LockOptions {
  /**
   * wait up to this long for a holder to finish (polling), instead of giving up at once; while it
   * waits it raises `{key}:queued`
   */
  readonly waitMs?: number
  /**
   * without `waitMs`: give up while a waiter has raised `{key}:queued`, so a rare tick is not
   * starved by frequent ones (the exchange cycle lock). Costs one Redis read; locks nobody waits
   * for (sweeps, scans) leave it off
   */
  readonly yieldToWaiters?: boolean
  /** poll period while waiting (default 100 ms, jittered) */
  readonly pollMs?: number
}

/**
 * Runs `fn` under the lock; returns undefined without running it when the lock is held (after
 * `waitMs`, when given). While `fn` runs the lock is extended every third of its TTL, so a long
 * run keeps it and a crashed one still loses it within `ttlMs`.
 */
export async function withLock<T>(
  redis: Redis,
  key: string,
  ttlMs: number,
  fn: () => Promise<T>,
  opts: LockOptions = {},
): Promise<T | undefined> {
  const lock = await acquire(redis, key, ttlMs, opts)
  if (!lock) return undefined
  const renewal = setInterval(() => void lock.extend(ttlMs).catch(() => undefined), Math.max(50, Math.floor(ttlMs / 3)))
  renewal.unref?.()
  try {
    return await fn()
  } finally {
    clearInterval(renewal)
    await lock.release()
  }
}

async function acquire(redis: Redis, key: string, ttlMs: number, opts: LockOptions): Promise<Lock | undefined> {
  const queued = `${key}:queued`
  if (!opts.waitMs) {
    if (opts.yieldToWaiters && (await redis.exists(queued)) === 1) return undefined
    return tryLock(redis, key, ttlMs)
  }
  const deadline = Date.now() + opts.waitMs
  const poll = opts.pollMs ?? 100
  try {
    for (;;) {
      await redis.set(queued, '1', 'PX', Math.max(1, deadline - Date.now()) + poll)
      const lock = await tryLock(redis, key, ttlMs)
      if (lock || Date.now() >= deadline) return lock
      await new Promise((r) => setTimeout(r, poll / 2 + Math.random() * poll))
    }
  } finally {
    await redis.del(queued)
  }
}
