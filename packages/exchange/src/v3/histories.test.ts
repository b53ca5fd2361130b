import { describe, expect, it } from 'vitest'
import { fundingHistory, readCapped, transaction, V3_HISTORY_CAP } from './histories'
import type { V3Port } from './port'
import type * as W from './wire.gen'

/** A port whose wire answers `answer(method, params)`; nothing is signed. */
function portAnswering(answer: (method: string, params: unknown) => unknown): V3Port {
  return {
    wallet: '0x0000000000000000000000000000000000000001',
    fundingSubaccountId: 1,
    call: async (method, params) => answer(method, params) as never,
    sign: () => Promise.reject(new Error('not signing here')),
    wireCurrency: () => Promise.reject(new Error('no currencies here')),
    assetName: (a) => a,
  }
}

const funding = (batch_status: W.BatchStatus, funding: string): W.PerpSettlementEventResponse => ({
  batch_status,
  batch_uuid: 'b',
  funding,
  instrument_name: 'ETH-PERP',
  pnl: funding,
  subaccount_id: 7,
  timestamp: 1,
})

describe('v3 histories in the service shapes', () => {
  it('funding: an entry of a failed batch did not apply and is left out; one on its way counts', async () => {
    const port = portAnswering(() => ({
      events: [funding('Settled', '-1'), funding('ExecutingError', '-2'), funding('Proving', '-3')],
      pagination: { count: 3, num_pages: 1 },
    }))
    const r = await fundingHistory(port, { subaccount_id: 7, page: 1, page_size: 1000 })
    expect(r.events.map((e) => e.funding)).toEqual(['-1', '-3'])
    expect(r.pagination).toEqual({ count: 3, num_pages: 1 })
  })

  it("get_transaction: the batch status as v2's status; the operation's data stays opaque (no subaccount_id read)", async () => {
    const answer = (status: W.BatchStatus | null) =>
      transaction(
        portAnswering(() => ({ data: '{"subaccount_id":1}', status })),
        'op',
      )
    expect(await answer('Settled')).toMatchObject({ status: 'settled', data: { operation: '{"subaccount_id":1}' } })
    expect(await answer('SettlingError')).toMatchObject({ status: 'reverted' })
    expect(await answer(null)).toMatchObject({ status: 'pending' })
    expect((await answer('Settled')).data).not.toHaveProperty('subaccount_id')
  })

  it('a capped window is read again up to its oldest timestamp; a full answer of one millisecond cannot be paged', async () => {
    const rows = Array.from({ length: 2 * V3_HISTORY_CAP + 10 }, (_, i) => ({ timestamp: 100 + Math.floor(i / 7) }))
    const reads: Array<[number, number | null]> = []
    const newestFirst = (start: number, end: number | null) => {
      reads.push([start, end])
      return Promise.resolve(
        rows
          .filter((r) => r.timestamp >= start && (end === null || r.timestamp <= end))
          .sort((a, b) => b.timestamp - a.timestamp)
          .slice(0, V3_HISTORY_CAP),
      )
    }
    const all = await readCapped(newestFirst, 0)
    expect(all).toHaveLength(rows.length)
    expect(all.map((r) => r.timestamp)).toEqual(rows.map((r) => r.timestamp))
    expect(reads.length).toBe(3)
    const same = Array.from({ length: V3_HISTORY_CAP }, () => ({ timestamp: 5 }))
    await expect(readCapped(async () => same)).rejects.toThrow(/cannot be paged/)
  })
})
