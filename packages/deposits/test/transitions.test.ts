/**
 * The deposit tables' writes (packages/deposits/src/transitions.ts, audit/store.ts) on the test Postgres,
 * without a chain: what each writes, and that each guard leaves a row that moved on alone. The
 * ticks that call them on a real chain are apps/worker/test/deposits*.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { Sql } from '@wh/db'
import { integrationContext } from '@wh/testkit'
import type { OutboundRecord } from '@wh/wallet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  claimSurplusAlert,
  creditTracedTransfers,
  type DepositRow,
  holdDeposit,
  markRetryStarted,
  markSweepFailed,
  markSweepRetry,
  markSweepSent,
  markSwept,
  type NewDeposit,
  openAuditCursor,
  recordDetected,
  recordReadings,
  recordSweepAttempt,
  releaseHeldDeposit,
  requeueSweep,
  type SurplusEpisode,
  setDustAside,
  sweepGasEvent,
} from '../src/index'

type Hex = `0x${string}`
const hash = (): Hex => `0x${randomBytes(32).toString('hex')}`
const addr = () => `0x${randomBytes(20).toString('hex')}`

describe('deposit writes (packages/deposits)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let sql: Sql
  let hd = 0

  beforeAll(async () => {
    ctx = await integrationContext()
    sql = ctx.database.sql
  })
  afterAll(() => ctx.database.close())

  const fresh = (over: Partial<NewDeposit> = {}): NewDeposit => ({
    chain: 'base',
    tx_hash: hash(),
    log_index: 0,
    block_number: '10',
    user_id: randomUUID(),
    hd_index: hd++,
    address: addr(),
    token: 'ETH',
    amount: '1000000000000000000',
    ...over,
  })
  /** A deposit recorded as the scan records it, then in `state`. */
  async function deposit(state = 'detected', over: Partial<NewDeposit> = {}): Promise<DepositRow> {
    const d = fresh(over)
    await sql.begin((tx) => recordDetected(tx, [d]))
    await sql`update deposits set state = ${state} where tx_hash = ${d.tx_hash}`
    return row(d.tx_hash)
  }
  const row = async (txHash: string) =>
    (
      await sql<DepositRow[]>`
        select id, chain, user_id, hd_index, address, token, amount::text, state from deposits where tx_hash = ${txHash}`
    )[0] as DepositRow
  const stateOf = async (id: string) =>
    (
      await sql<
        {
          state: string
          held_at: Date | null
          hold_reason: string | null
          attempts: number
          last_error_code: string | null
          due: boolean
        }[]
      >`
        select state, held_at, hold_reason, attempts, last_error_code, next_attempt_at <= now() as due
        from deposits where id = ${id}`
    )[0]
  const mined = (txHash: Hex): OutboundRecord => ({
    id: randomUUID(),
    txHash,
    nonce: 0,
    state: 'confirmed',
    gasUsed: 21_000n,
    effectiveGasPrice: 1_000_000_000n,
    blockNumber: 11n,
  })

  it('recordDetected inserts the deposits and their deposit_detected events once; a replay changes nothing', async () => {
    const rows = [fresh(), fresh({ token: 'USDC', amount: '5000000', log_index: 3 })]
    const first = await sql.begin((tx) => recordDetected(tx, rows))
    expect(first).toMatchObject({ detected: 2, duplicates: 0 })
    expect(first.inserted.map((r) => r.amount).sort()).toEqual(['1000000000000000000', '5000000'])
    const again = await sql.begin((tx) => recordDetected(tx, rows))
    expect(again).toEqual({ inserted: [], detected: 0, duplicates: 2 })
    expect(await sql.begin((tx) => recordDetected(tx, []))).toEqual({ inserted: [], detected: 0, duplicates: 0 })
    const [n] = await sql<{ deposits: number; events: number }[]>`
      select (select count(*)::int from deposits where tx_hash in (${rows[0]?.tx_hash as string}, ${rows[1]?.tx_hash as string})) as deposits,
        (select count(*)::int from ledger_events where type = 'deposit_detected'
          and payload->>'txHash' in (${rows[0]?.tx_hash as string}, ${rows[1]?.tx_hash as string})) as events`
    expect(n).toEqual({ deposits: 2, events: 2 })
    expect((await row(rows[0]?.tx_hash as string)).state).toBe('detected')
  })

  it('the sweep states move only from the states their guards name', async () => {
    const d = await deposit('retry')
    await markRetryStarted(sql, d.id)
    expect((await stateOf(d.id))?.state).toBe('detected')
    await markSweepSent(sql, d.id)
    expect((await stateOf(d.id))?.state).toBe('sweeping')
    await markRetryStarted(sql, d.id) // not 'retry' any more: left alone
    expect((await stateOf(d.id))?.state).toBe('sweeping')
    expect(await markSweepRetry(sql, d.id)).toBe(false) // only a failed sweep is retried
    const gas = sweepGasEvent(d, mined(hash()), 0, new Date())
    expect(await markSweepFailed(sql, d.id, [gas])).toBe(true)
    expect(await markSweepFailed(sql, d.id, [])).toBe(false) // once: the caller alerts once
    expect((await stateOf(d.id))?.state).toBe('failed')
    await markSweepSent(sql, d.id) // a failed deposit is not sent again without a retry
    expect((await stateOf(d.id))?.state).toBe('failed')
    expect(await markSweepRetry(sql, d.id)).toBe(true)
    expect((await stateOf(d.id))?.state).toBe('retry')
  })

  it('markSwept records deposit_swept and the gas in the commit that moves the row', async () => {
    const d = await deposit('sweeping')
    const sweep = mined(hash())
    const topup = mined(hash())
    await markSwept(sql, d, sweep, 999n, [topup])
    expect((await stateOf(d.id))?.state).toBe('swept')
    const events = await sql<{ type: string; slot: string | null; amount: string }[]>`
      select type, payload->>'slot' as slot, payload->>'amount' as amount from ledger_events
      where payload->>'txHash' in (${sweep.txHash}, ${topup.txHash}) order by type, slot`
    expect(events).toEqual([
      { type: 'deposit_swept', slot: null, amount: '999' },
      { type: 'gas_spent', slot: '0', amount: '21000000000000' },
      { type: 'gas_spent', slot: '1', amount: '21000000000000' },
    ])
  })

  it('the queue: a backoff records the attempt, a requeue is due now, a hold leaves the queue until its release', async () => {
    const d = await deposit()
    await recordSweepAttempt(sql, d.id, 'RPC_UNAVAILABLE')
    expect(await stateOf(d.id)).toMatchObject({ attempts: 1, last_error_code: 'RPC_UNAVAILABLE', due: false })
    await requeueSweep(sql, d.id)
    expect(await stateOf(d.id)).toMatchObject({ attempts: 1, due: true })
    await holdDeposit(sql, d.id)
    const held = await stateOf(d.id)
    expect(held).toMatchObject({ hold_reason: 'a transaction of its sweep is held for an operator', state: 'detected' })
    expect(held?.held_at).toBeInstanceOf(Date)
    await holdDeposit(sql, d.id) // held already: its first hold stands
    expect((await stateOf(d.id))?.held_at).toEqual(held?.held_at)
    await recordSweepAttempt(sql, d.id, 'SHORT_OF_GAS', 3_600_000)
    await releaseHeldDeposit(sql, d.id)
    expect(await stateOf(d.id)).toMatchObject({ held_at: null, hold_reason: null, due: true, state: 'detected' })
  })

  it('setDustAside takes due, unheld ETH deposits at or below the threshold of its chain, at most `limit`', async () => {
    const chain = 'optimism'
    const dust = await deposit('detected', { chain, amount: '100' })
    const dust2 = await deposit('retry', { chain, amount: '200' })
    const big = await deposit('detected', { chain, amount: '100000' })
    const usdc = await deposit('detected', { chain, amount: '100', token: 'USDC' })
    const sweeping = await deposit('sweeping', { chain, amount: '100' })
    const held = await deposit('detected', { chain, amount: '100' })
    await holdDeposit(sql, held.id)
    expect(await setDustAside(sql, chain, 1_000n, { retryMs: 60_000, limit: 1 })).toBe(1)
    expect(await setDustAside(sql, chain, 1_000n, { retryMs: 60_000, limit: 10 })).toBe(1) // the first is not due
    for (const d of [dust, dust2])
      expect(await stateOf(d.id)).toMatchObject({ attempts: 1, last_error_code: 'BELOW_SWEEP_GAS', due: false })
    for (const d of [big, usdc, sweeping, held]) expect((await stateOf(d.id))?.attempts).toBe(0)
  })

  it('the audit: readings open, continue and resolve an episode; its alert is claimed once; traces credit it', async () => {
    const chain = 'arbitrum'
    await openAuditCursor(sql, chain, 5n)
    await openAuditCursor(sql, chain, 9n) // there already: left as it is
    const target = { hdIndex: hd++, address: addr(), userId: randomUUID() }
    const other = { hdIndex: hd++, address: addr(), userId: randomUUID() }
    const reading = (t: typeof target, balance: bigint, surplus: boolean) => ({
      target: t,
      balance,
      expected: 0n,
      surplus,
    })
    const record = (block: bigint, readings: ReturnType<typeof reading>[], wrapped = false) =>
      recordReadings(sql, {
        chain,
        block,
        floor: 1n,
        readings,
        surplusAddresses: readings.filter((r) => r.surplus).map((r) => r.target.address),
        activityTo: block,
        rotationNext: 7,
        rotationWrapped: wrapped,
      })
    expect(await record(10n, [reading(target, 500n, true), reading(other, 0n, false)])).toBe(0)
    expect(await record(12n, [reading(target, 700n, true), reading(other, 300n, true)], true)).toBe(0)
    const episodes = await sql<SurplusEpisode[]>`
      select id, address, hd_index, user_id, amount::text, readings, trace_from_block::text, traced_to_block::text,
        alerted_at
      from deposit_surpluses where chain = ${chain} and state = 'open' order by hd_index`
    expect(episodes.map((e) => [e.amount, e.readings, e.trace_from_block])).toEqual([
      ['700', 2, '1'],
      ['300', 1, '11'], // after its clean reading at block 10
    ])
    const [cursor] = await sql<{ next_hd_index: number; activity_block: string; rotations: number }[]>`
      select next_hd_index, activity_block::text, rotations from deposit_audit_cursors where chain = ${chain}`
    expect(cursor).toEqual({ next_hd_index: 7, activity_block: '12', rotations: 1 })

    const [first, second] = [...episodes] as [SurplusEpisode, SurplusEpisode]
    expect(await claimSurplusAlert(sql, second.id, 'no-trace-api')).toBe(true)
    expect(await claimSurplusAlert(sql, second.id, 'not-in-traces')).toBe(false)
    expect(await record(13n, [reading(other, 0n, false)])).toBe(1)

    const transfer = {
      txHash: hash(),
      blockNumber: 11n,
      transactionIndex: 0,
      traceIndex: 1,
      logIndex: 2 ** 32 + 1,
      from: addr(),
      to: first.address,
      valueWei: 650n,
    }
    const credit = () =>
      creditTracedTransfers(sql, { chain, block: 12n, minSurplus: 100n, episodes: [first], transfers: [transfer] })
    expect(await credit()).toBe(1)
    expect(await credit()).toBe(0) // credited: closed, and the deposit is there already
    const closed = await sql<{ state: string; amount: string; credited_amount: string; reason: string | null }[]>`
      select state, amount::text, credited_amount::text, reason from deposit_surpluses
      where id in (${first.id}, ${second.id}) order by hd_index`
    expect(closed).toEqual([
      { state: 'credited', amount: '50', credited_amount: '650', reason: null },
      { state: 'resolved', amount: '300', credited_amount: '0', reason: 'no-trace-api' },
    ])
    expect((await row(transfer.txHash)).amount).toBe('650')
  })
})
