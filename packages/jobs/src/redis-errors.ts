/**
 * Every Redis connection and BullMQ object has an error listener: without one, ioredis prints
 * "Unhandled error event" for each failed reconnect and an EventEmitter's 'error' throws. The
 * listener logs one line per connection per ERROR_LOG_EVERY_MS (an outage reconnects many times a
 * second), without the URL (redactUrls runs on every line anyway).
 */
import type { EventEmitter } from 'node:events'
import { errorMessage } from '@wh/core'

export const ERROR_LOG_EVERY_MS = 10_000

export interface ErrorLog {
  warn(obj: object, msg?: string): void
}

/** Attaches the throttled listener to `emitter` (a Redis client, a Queue, a Worker); returns it. */
export function logErrorsOf<T extends Pick<EventEmitter, 'on'>>(emitter: T, name: string, log: ErrorLog): T {
  let lastMs = Number.NEGATIVE_INFINITY
  let suppressed = 0
  emitter.on('error', (err: unknown) => {
    const now = performance.now()
    if (now - lastMs < ERROR_LOG_EVERY_MS) {
      suppressed++
      return
    }
    lastMs = now
    const message = errorMessage(err)
    log.warn({ connection: name, err: message, ...(suppressed > 0 && { suppressed }) }, 'redis connection error')
    suppressed = 0
  })
  return emitter
}
