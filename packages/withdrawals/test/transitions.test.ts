/**
 * The send's transitions (packages/withdrawals/src/transitions.ts) on the test Postgres, without a
 * chain: what each writes, and what the free balance and the journal say after it. The send that
 * calls them on a real chain is apps/worker/test/withdrawals*.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { Sql } from '@wh/db'
import { append, balanceOf, freeBalance, reserveWithdrawal, userTransit } from '@wh/ledger'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  claimForSend,
  FAILURE_REASONS,
  failOwnDestinations,
  markFailed,
  markHeld,
  markReverted,
  markSent,
  recordAttempt,
  recordBroadcast,
  releaseHeldWithdrawal,
  type WithdrawalRow,
  withdrawalColumns,
} from '../src/index'

const DEST = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const hash = () => `0x${randomBytes(32).toString('hex')}`

describe('withdrawal transitions (packages/withdrawals/src/transitions.ts)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let sql: Sql

  beforeAll(async () => {
    ctx = await integrationContext()
    sql = ctx.database.sql
  })
  afterAll(() => ctx.database.close())

  /** A user holding 100 USDC with one requested withdrawal of `amount`. */
  async function requested(amount = 40_000_000n): Promise<{ userId: string; id: string }> {
    const userId = randomUUID()
    await append(sql, {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: hash(), logIndex: 0, currency: 'USDC', amount: 100_000_000n },
      occurredAt: new Date(),
    })
    const { withdrawalId } = await reserveWithdrawal(sql, {
      userId,
      currency: 'USDC',
      amount,
      chain: 'base',
      destination: DEST,
    })
    return { userId, id: withdrawalId }
  }
  const row = async (id: string) =>
    (await sql<WithdrawalRow[]>`select ${withdrawalColumns(sql)} from withdrawals where id = ${id}`)[0] as WithdrawalRow
  const eventsOf = (id: string) =>
    sql<{ type: string; slot: number | null }[]>`
      select type, (payload->>'slot')::int as slot from ledger_events
      where payload->>'withdrawalId' = ${id} or payload->>'txHash' = (select tx_hash from withdrawals where id = ${id})
      order by type`

  it('claimForSend locks the row for one sender: another skips it, and a held or finished row is not taken', async () => {
    const { id } = await requested()
    let release: () => void = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    let onClaim: (w: unknown) => void = () => {}
    const claim = new Promise((r) => {
      onClaim = r
    })
    const first = sql.begin(async (tx) => {
      onClaim(await claimForSend(tx, id))
      await held
    })
    expect(await claim).toMatchObject({ id, currency: 'USDC', amount: '40000000', chain: 'base', destination: DEST })
    expect(await sql.begin((tx) => claimForSend(tx, id))).toBeUndefined()
    release()
    await first
    expect(await sql.begin((tx) => claimForSend(tx, id))).toMatchObject({ id })
    const txHash = hash()
    await sql.begin((tx) => markHeld(tx, id, txHash, new Date()))
    expect(await sql.begin((tx) => claimForSend(tx, id))).toBeUndefined()
    expect(await row(id)).toMatchObject({ state: 'requested', txHash, lastErrorCode: 'HELD' })
  })

  it('markSent journals withdrawal_sent and its gas_spent (slot 1) and moves the row to sent: the free balance does not move', async () => {
    const { userId, id } = await requested()
    const free = await freeBalance(sql, userId, 'USDC')
    const txHash = hash()
    const now = new Date()
    await sql.begin(async (tx) => {
      const w = await claimForSend(tx, id)
      if (!w) throw new Error('not claimed')
      await markSent(tx, w, { chain: 'base', txHash, fee: 21_000n * 5n, gasCurrency: 'ETH' }, now)
    })
    expect(await row(id)).toMatchObject({
      state: 'sent',
      txHash,
      networkFee: '105000',
      sentAt: now,
      lastErrorCode: null,
    })
    expect(await eventsOf(id)).toEqual([
      { type: 'gas_spent', slot: 1 },
      { type: 'withdrawal_sent', slot: null },
    ])
    expect(await balanceOf(sql, userTransit(userId), 'USDC')).toBe(60_000_000n)
    expect(await freeBalance(sql, userId, 'USDC')).toBe(free)
  })

  it('markReverted fails the row with the reason, journals only the burnt gas (slot 0) and releases the reserve', async () => {
    const { userId, id } = await requested()
    const txHash = hash()
    await sql.begin(async (tx) => {
      const w = await claimForSend(tx, id)
      if (!w) throw new Error('not claimed')
      await markReverted(tx, w, { chain: 'base', txHash, fee: 7n, gasCurrency: 'ETH' }, new Date())
    })
    expect(await row(id)).toMatchObject({
      state: 'failed',
      failureReason: FAILURE_REASONS.REVERTED,
      lastErrorCode: 'REVERTED',
      txHash,
      networkFee: '7',
    })
    expect(await eventsOf(id)).toEqual([{ type: 'gas_spent', slot: 0 }])
    expect(await freeBalance(sql, userId, 'USDC')).toBe(100_000_000n)
  })

  it('markFailed, recordAttempt and recordBroadcast: the reason and code, the backoff, the hash in flight', async () => {
    const a = await requested()
    await sql.begin((tx) => markFailed(tx, a.id, 'DESTINATION_REFUSED', new Date()))
    expect(await row(a.id)).toMatchObject({
      state: 'failed',
      failureReason: FAILURE_REASONS.DESTINATION_REFUSED,
      lastErrorCode: 'DESTINATION_REFUSED',
      attempts: 1,
    })
    expect(await freeBalance(sql, a.userId, 'USDC')).toBe(100_000_000n)

    const b = await requested()
    await sql.begin((tx) => recordAttempt(tx, b.id, 3, 'RPC_UNAVAILABLE', new Date()))
    const [due] = await sql<{ wait: number }[]>`
      select extract(epoch from next_attempt_at - now())::float8 as wait from withdrawals where id = ${b.id}`
    expect(await row(b.id)).toMatchObject({ state: 'requested', attempts: 3, lastErrorCode: 'RPC_UNAVAILABLE' })
    expect(due?.wait).toBeGreaterThan(0)

    const c = await requested()
    const txHash = hash()
    await sql.begin((tx) => recordBroadcast(tx, c.id, txHash, new Date()))
    expect(await row(c.id)).toMatchObject({ state: 'requested', txHash })
    expect(await freeBalance(sql, c.userId, 'USDC')).toBe(60_000_000n)
  })

  it('releaseHeldWithdrawal returns a held row to the queue, due now; a row not held is left alone', async () => {
    const { id } = await requested()
    expect(await releaseHeldWithdrawal(sql, id)).toBe(false)
    await sql.begin((tx) => markHeld(tx, id, hash(), new Date()))
    expect(await releaseHeldWithdrawal(sql, id)).toBe(true)
    expect(await row(id)).toMatchObject({ state: 'requested', heldAt: null, holdReason: null })
    expect(await sql.begin((tx) => claimForSend(tx, id))).toMatchObject({ id })
  })

  it('failOwnDestinations fails the rows not yet broadcast, and only those', async () => {
    const fresh = await requested()
    const inFlight = await requested()
    await sql.begin((tx) => recordBroadcast(tx, inFlight.id, hash(), new Date()))
    await failOwnDestinations(sql, [fresh.id, inFlight.id], new Date())
    expect(await row(fresh.id)).toMatchObject({
      state: 'failed',
      failureReason: FAILURE_REASONS.PLATFORM_ADDRESS,
      lastErrorCode: 'PLATFORM_ADDRESS',
    })
    expect(await row(inFlight.id)).toMatchObject({ state: 'requested' })
  })
})
