import { describe, expect, it } from 'vitest'
import { jobId, QUEUE_KEYS, selectConcurrency, selectQueues } from './queues'

describe('queues', () => {
  it('job ids never contain a colon, whatever their parts', () => {
    const id = jobId('tx:ethereum:0xabc:0', 7)
    expect(id).not.toContain(':')
    expect(id).toBe('tx_ethereum_0xabc_0.7')
  })

  it('an empty WORKER_QUEUES means every queue; unknown names are refused', () => {
    expect(selectQueues([])).toEqual(QUEUE_KEYS)
    expect(selectQueues(['deposits', 'withdrawals'])).toEqual(['deposits', 'withdrawals'])
    expect(() => selectQueues(['deposits', 'nope'])).toThrow(/nope/)
  })

  it('WORKER_CONCURRENCY names known queues only', () => {
    expect(selectConcurrency({})).toEqual({})
    expect(selectConcurrency({ deposits: 8, trading: 2 })).toEqual({ deposits: 8, trading: 2 })
    expect(() => selectConcurrency({ deposits: 8, nope: 1 })).toThrow(/nope/)
  })
})
