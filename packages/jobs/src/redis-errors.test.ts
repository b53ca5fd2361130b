import { Redis } from 'ioredis'
import { describe, expect, it, vi } from 'vitest'
import { ERROR_LOG_EVERY_MS, logErrorsOf } from './redis-errors'

describe('logErrorsOf', () => {
  it('logs a failing connection once per period, without the URL path, and nothing goes unhandled', async () => {
    const lines: Array<Record<string, unknown>> = []
    const log = { warn: (obj: object) => lines.push(obj as Record<string, unknown>) }
    // a closed port: refused at once, retried every 20 ms
    const client = new Redis('redis://127.0.0.1:9/0', { retryStrategy: () => 20, maxRetriesPerRequest: 0 })
    let errors = 0
    client.on('error', () => errors++)
    logErrorsOf(client, 'cache', log)
    // several failures of the connection (state); the wait's bound is inside one logging period
    const waitMs = 5_000
    expect(ERROR_LOG_EVERY_MS).toBeGreaterThan(waitMs)
    await vi.waitFor(() => expect(errors).toBeGreaterThan(3), { timeout: waitMs, interval: 10 })
    client.disconnect()
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ connection: 'cache', err: expect.stringContaining('ECONNREFUSED') })
  })
})
