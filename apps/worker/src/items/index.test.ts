import { ROW_JOB_NAMES, ROW_JOBS } from '@wh/jobs'
import { describe, expect, it } from 'vitest'
import { ticks } from '../jobs/index'
import { comebackDelayMs, MAX_COMEBACKS } from './defer'

describe('the row jobs the API enqueues', () => {
  it('each has exactly one processor, on the queue the API adds it to, without a schedule', () => {
    for (const name of ROW_JOB_NAMES) {
      const processors = ticks.filter((t) => t.name === name)
      expect(processors, name).toHaveLength(1)
      expect(processors[0]?.queue, name).toBe(ROW_JOBS[name].queue)
      expect(processors[0]?.everyMs, name).toBeUndefined()
    }
  })

  it('a job comes back sooner first, never later than the cap, a bounded number of times', () => {
    expect(comebackDelayMs(1)).toBe(250)
    expect(comebackDelayMs(2)).toBe(500)
    expect(comebackDelayMs(40)).toBe(5_000)
    expect(MAX_COMEBACKS * 5_000).toBeLessThanOrEqual(10 * 60_000)
  })
})
