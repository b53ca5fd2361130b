import { randomUUID } from 'node:crypto'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  appendBatch,
  type EventInput,
  InvalidCursorError,
  InvalidLimitError,
  portfolioSummary,
  reserveWithdrawal,
  statement,
  statementToCsv,
  userFamilyTotals,
  userSub,
  userTransit,
} from '../src/index'
import { txHash } from './helpers'

const day = (d: number) => new Date(Date.UTC(2026, 0, d))

describe('portfolio queries', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  const u = randomUUID()
  beforeAll(async () => {
    ctx = await integrationContext()
    const events: EventInput[] = [
      {
        type: 'deposit_detected',
        payload: { userId: u, chain: 'base', txHash: txHash(1), logIndex: 0, currency: 'USDC', amount: 1_000n },
        occurredAt: day(1),
      },
      {
        type: 'subaccount_funded',
        payload: { userId: u, subaccountId: '1', transactionId: 'f1', currency: 'USDC', amount: 600n },
        occurredAt: day(2),
      },
      {
        type: 'option_sold',
        payload: {
          userId: u,
          subaccountId: '1',
          tradeId: 'tr1',
          instrument: 'ETH-X-P',
          currency: 'USDC',
          premium: 50n,
          exchangeFee: 2n,
          platformFee: 5n,
        },
        occurredAt: day(3),
      },
      {
        type: 'option_settled',
        payload: {
          userId: u,
          subaccountId: '1',
          instrument: 'ETH-X-P',
          expirySec: 1,
          outcome: 'itm',
          currency: 'USDC',
          amount: 20n,
        },
        occurredAt: day(4),
      },
      {
        type: 'interest_accrued',
        payload: { userId: u, subaccountId: '1', currency: 'USDC', bucketTs: 5, amount: 3n },
        occurredAt: day(5),
      },
      {
        type: 'trade_rejected',
        payload: { subaccountId: '1', orderId: 'o1', instrument: 'ETH-X-P', reason: 'px', userId: u },
        occurredAt: day(6),
      },
      {
        type: 'subaccount_released',
        payload: { userId: u, subaccountId: '1', rowId: 'r1', currency: 'USDC', amount: 100n },
        occurredAt: day(7),
      },
    ]
    await appendBatch(ctx.database.sql, events)
    await reserveWithdrawal(ctx.database.sql, { userId: u, currency: 'USDC', amount: 40n })
  })
  afterAll(() => ctx.database.close())

  it('summary: free balance, subaccounts, pending withdrawals, income, expenses, net deposits, return', async () => {
    const s = await portfolioSummary(ctx.database.sql, u, { from: day(1), to: day(30) })
    expect(s.assets).toHaveLength(1)
    expect(s.assets[0]).toEqual({
      currency: 'USDC',
      transit: 500n,
      freeBalance: 460n,
      pendingWithdrawals: 40n,
      pendingFundings: 0n,
      inSubaccounts: 526n, // 600 + 50 - 2 - 5 - 20 + 3 - 100
      income: { premium: 50n, interest: 3n, funding: 0n },
      expenses: { exchange_fee: 2n, settlement: 20n, swap: 0n, borrow: 0n },
      netDeposits: 1_000n,
      periodReturn: 26n, // 50 + 3 - 2 - 20 - 5 (the platform fee)
    })
  })

  it('summary over a sub-period counts only that period', async () => {
    const s = await portfolioSummary(ctx.database.sql, u, { from: day(3), to: day(5) })
    expect(s.assets[0]).toMatchObject({
      netDeposits: 0n,
      income: { premium: 50n, interest: 0n, funding: 0n },
      periodReturn: 23n,
    })
  })

  it('statement: events in time order with running balances, paged by cursor', async () => {
    const p1 = await statement(ctx.database.sql, u, { limit: 3 })
    expect(p1.rows.map((r) => r.type)).toEqual(['deposit_detected', 'subaccount_funded', 'option_sold'])
    const transitAfter = (rows: typeof p1.rows, i: number) =>
      rows[i]!.postings.find((p) => p.account === userTransit(u))?.balanceAfter
    expect(transitAfter(p1.rows, 0)).toBe(1_000n)
    expect(transitAfter(p1.rows, 1)).toBe(400n)
    expect(p1.nextCursor).not.toBeNull()
    const p2 = await statement(ctx.database.sql, u, { limit: 3, cursor: p1.nextCursor! })
    expect(p2.rows.map((r) => r.type)).toEqual(['option_settled', 'interest_accrued', 'trade_rejected'])
    expect(p2.rows[0]!.postings.find((p) => p.account === userSub(u, '1', 'USDC'))?.balanceAfter).toBe(623n)
    expect(p2.rows[2]!.postings).toEqual([])
    const p3 = await statement(ctx.database.sql, u, { limit: 3, cursor: p2.nextCursor! })
    expect(p3.rows.map((r) => r.type)).toEqual(['subaccount_released'])
    expect(transitAfter(p3.rows, 0)).toBe(500n)
    expect(p3.nextCursor).toBeNull()
  })

  it('statement: from/to filter the rows but running balances count from the start', async () => {
    const page = await statement(ctx.database.sql, u, { from: day(7), to: day(8) })
    expect(page.rows).toHaveLength(1)
    expect(page.rows[0]!.postings.find((p) => p.account === userTransit(u))?.balanceAfter).toBe(500n)
  })

  it('statement: never shows platform accounts, and exports as CSV', async () => {
    const page = await statement(ctx.database.sql, u)
    for (const r of page.rows) for (const p of r.postings) expect(p.account.startsWith(`user:${u}:`)).toBe(true)
    const csv = statementToCsv(page.rows)
    expect(csv.split('\n')[0]).toBe('event_id,type,occurred_at,account,currency,amount,balance_after,account_label')
    expect(csv).toContain(`deposit_detected,2026-01-01T00:00:00.000Z,${userTransit(u)},USDC,1000,1000,Platform balance`)
  })

  it('statement: a bad cursor or limit is a 400', async () => {
    await expect(statement(ctx.database.sql, u, { cursor: 'garbage' })).rejects.toBeInstanceOf(InvalidCursorError)
    await expect(statement(ctx.database.sql, u, { limit: 0 })).rejects.toBeInstanceOf(InvalidLimitError)
    await expect(statement(ctx.database.sql, u, { limit: 501 })).rejects.toMatchObject({ statusCode: 400 })
  })

  it('per-user totals per account family', async () => {
    const totals = await userFamilyTotals(ctx.database.sql, u)
    const of = (f: string) => totals.find((t) => t.family === f && t.currency === 'USDC')?.balance
    expect(of('transit')).toBe(500n)
    expect(of('sub')).toBe(526n)
    expect(of('external')).toBe(-1_000n)
  })
})
