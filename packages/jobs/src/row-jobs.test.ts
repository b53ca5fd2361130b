import { describe, expect, it } from 'vitest'
import { bullBoardJobPath, depositSweepJobRef, enqueueAfterCommit, rowIdOf, rowJob, rowJobId } from './row-jobs'

const ID = '0192f3a4-5b6c-7d8e-9f01-23456789abcd'

describe('row jobs', () => {
  it('the id is the row id where a row has one job on its queue, with a suffix where it has several', () => {
    expect(rowJobId('withdrawal.send', ID)).toBe(ID)
    expect(rowJobId('position.advance', ID)).toBe(ID)
    expect(rowJobId('position.cancel', ID)).toBe(`${ID}.cancel`)
    expect(rowJobId('position.close', ID)).toBe(`${ID}.close`)
    expect(rowJobId('wheel.next-leg', ID)).toBe(ID)
    expect(rowJobId('wheel.stop', ID)).toBe(`${ID}.stop`)
    expect(depositSweepJobRef(ID)).toEqual({ queue: 'deposits', queueName: '{deposits}', jobId: `deposit-sweep.${ID}` })
  })

  it('the data carries ids only: purpose, the row, the user, the request', () => {
    const job = rowJob('release.run', ID, 'u-1', 'req-1')
    expect(job.queue).toBe('treasury')
    expect(job.data).toEqual({ purpose: 'release.run', releaseId: ID, userId: 'u-1', requestId: 'req-1' })
    expect(job.opts).toMatchObject({ jobId: ID, attempts: 5, backoff: { type: 'exponential', delay: 1_000 } })
    // a job whose row may need it again is removed when it ends, so its id is free for the next
    expect(rowJob('wheel.next-leg', ID, 'u-1').opts).toMatchObject({ removeOnComplete: true, removeOnFail: true })
    expect(rowJob('withdrawal.send', ID, 'u-1').opts.removeOnComplete).toMatchObject({ age: expect.any(Number) })
  })

  it('a processor reads the row id only from the field its name says, and only a uuid', () => {
    expect(rowIdOf('withdrawal.send', { withdrawalId: ID })).toBe(ID)
    expect(rowIdOf('withdrawal.send', { positionId: ID })).toBeUndefined()
    expect(rowIdOf('position.advance', { positionId: 'x; drop table' })).toBeUndefined()
    expect(rowIdOf('release.run', null)).toBeUndefined()
  })

  it("a job's page in Bull Board", () => {
    expect(bullBoardJobPath('{withdrawals}', ID)).toBe(`/admin/queues/queue/%7Bwithdrawals%7D/${ID}`)
  })

  it('enqueueAfterCommit never throws and never waits past its bound', async () => {
    const refused = { add: async () => Promise.reject(new Error('READONLY')) }
    expect(await enqueueAfterCommit(refused, 'n', {}, { jobId: 'a' })).toEqual({ ok: false, error: 'READONLY' })
    const silent = { add: () => new Promise<never>(() => {}) }
    expect(await enqueueAfterCommit(silent, 'n', {}, { jobId: 'a' }, 10)).toMatchObject({ ok: false })
    const ok = { add: async () => ({}) }
    expect(await enqueueAfterCommit(ok as never, 'n', {}, { jobId: 'a' })).toEqual({ ok: true })
  })
})
