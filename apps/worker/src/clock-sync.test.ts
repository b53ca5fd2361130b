import { FollowedClock, systemClock } from '@wh/core'
import type { Job } from 'bullmq'
import { describe, expect, it } from 'vitest'
import { clockSyncedTicks } from './clock-sync'
import type { TickContext, TickDefinition } from './ticks'

describe('clockSyncedTicks (WORKER_CLOCK=exchange)', () => {
  const tick = (clock: { now(): Date }): TickDefinition => ({
    name: 'probe',
    queue: 'trading',
    everyMs: 1_000,
    process: async () => clock.now().getTime(),
  })

  it('reads the followed time before each job, so a job right after the source moved sees it', async () => {
    let exchangeMs = Date.UTC(2030, 0, 1, 8)
    const clock = new FollowedClock(async () => exchangeMs)
    const [synced] = clockSyncedTicks([tick(clock)], clock)
    const run = () => synced?.process({} as Job, {} as TickContext) as Promise<number>
    expect(Math.abs((await run()) - exchangeMs)).toBeLessThan(1_000)
    exchangeMs += 2 * 86_400_000
    expect(Math.abs((await run()) - exchangeMs)).toBeLessThan(1_000)
    expect(synced).toMatchObject({ name: 'probe', queue: 'trading', everyMs: 1_000 })
  })

  it('leaves the ticks as they are on the system clock', () => {
    const ticks = [tick(systemClock)]
    expect(clockSyncedTicks(ticks, systemClock)).toBe(ticks)
  })
})
