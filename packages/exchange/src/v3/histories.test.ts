import { describe, expect, it } from 'vitest'
import { fundingHistory, movementFee, readCapped, transaction, V3_HISTORY_CAP } from './histories'
import type { V3Port } from './port'
import type * as W from './wire.gen'

/** A port whose wire answers `answer(method, params)`; nothing is signed. */
function portAnswering(answer: (method: string, params: unknown) => unknown): V3Port {
  return {
    wallet: '0x0000000000000000000000000000000000000001',
    fundingSubaccountId: 1,
    creationFeeCapUsd: '0',
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

const transferRow = (op: string, from: number, to: number, amount: string, fee: string): W.TransferEntry => ({
  amount,
  asset: 'USDC',
  batch_status: 'Settled',
  batch_uuid: op,
  fee,
  from_subaccount_id: from,
  from_wallet: '0x1',
  is_outgoing: from === 1,
  operation_id: op,
  timestamp: 5,
  to_subaccount_id: to,
  to_wallet: '0x1',
})

describe('v3 histories in the service shapes', () => {
  it("a movement's fee is the funding subaccount's (the sender's) row of the operation; absent, the read throws", async () => {
    const seen: unknown[] = []
    const port = portAnswering((_m, params) => {
      seen.push(params)
      return { transfers: [transferRow('op-a', 1, 9, '51', '0'), transferRow('op-b', 1, 10, '51', '1')] }
    })
    expect(await movementFee(port, { transaction_id: 'op-b', start_timestamp: 4 })).toBe('1')
    expect(seen[0]).toMatchObject({ subaccount_id: 1, start_timestamp: 4 })
    await expect(movementFee(port, { transaction_id: 'op-c', start_timestamp: 4 })).rejects.toThrow(/not in the/)
  })

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
