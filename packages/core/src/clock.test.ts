import { describe, expect, it } from 'vitest'
import { FollowedClock } from './clock'

describe('FollowedClock', () => {
  it('reads the wall clock until it first syncs, then the source time moving at the wall pace', async () => {
    let sourceMs = Date.UTC(2030, 0, 1, 8, 0)
    const clock = new FollowedClock(async () => sourceMs)
    expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(1_000)
    expect(await clock.sync()).toBe(true)
    expect(Math.abs(clock.now().getTime() - sourceMs)).toBeLessThan(1_000)
    sourceMs += 86_400_000
    // not followed until the next sync: now() never calls the source
    expect(clock.now().getTime()).toBeLessThan(sourceMs - 80_000_000)
    await clock.sync()
    expect(Math.abs(clock.now().getTime() - sourceMs)).toBeLessThan(1_000)
  })

  it('keeps the last offset when the source fails or answers no time', async () => {
    let answer: () => Promise<number> = async () => Date.UTC(2030, 0, 1)
    const clock = new FollowedClock(() => answer())
    await clock.sync()
    const before = clock.now().getTime()
    answer = async () => {
      throw new Error('exchange down')
    }
    expect(await clock.sync()).toBe(false)
    answer = async () => Number.NaN
    expect(await clock.sync()).toBe(false)
    expect(Math.abs(clock.now().getTime() - before)).toBeLessThan(1_000)
  })
})
