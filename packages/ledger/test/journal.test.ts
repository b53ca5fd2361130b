import { randomUUID } from 'node:crypto'
import { APP_ROLE } from '@wh/db'
import { APP_LOGIN, integrationContext } from '@wh/testkit'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  append,
  appendBatch,
  balanceOf,
  type EventInput,
  freeBalance,
  InsufficientFreeBalanceError,
  InvalidEventError,
  PLATFORM_FEE_REVENUE,
  platformGas,
  reserveFunding,
  reserveWithdrawal,
  userExternal,
  userSub,
  userTransit,
} from '../src/index'
import { balancesSnapshot, one, postingsSnapshot, txHash } from './helpers'

let n = 0
const at = new Date('2026-02-01T00:00:00Z')
const deposit = (userId: string, amount = 1_000n, hash = txHash(++n)): EventInput => ({
  type: 'deposit_detected',
  payload: { userId, chain: 'base', txHash: hash, logIndex: 0, currency: 'USDC', amount },
  occurredAt: at,
})
const funding = (userId: string, amount: bigint, transactionId = `t${++n}`): EventInput => ({
  type: 'subaccount_funded',
  payload: { userId, subaccountId: '1', transactionId, currency: 'USDC', amount },
  occurredAt: at,
})
const fill = (userId: string, platformFee = 10n): EventInput => ({
  type: 'option_sold',
  payload: {
    userId,
    subaccountId: '1',
    tradeId: `trade-${++n}`,
    instrument: 'ETH-X-P',
    currency: 'USDC',
    premium: 100n,
    exchangeFee: 1n,
    platformFee,
  },
  occurredAt: at,
})

describe('journal append (spec 6)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  beforeAll(async () => {
    ctx = await integrationContext()
  })
  afterAll(() => ctx.database.close())

  it('posts a deposit from external into transit and keeps the balances', async () => {
    const u = randomUUID()
    const r = await append(ctx.database.sql, deposit(u, 500n))
    expect(r.duplicate).toBe(false)
    expect(r.event.idempotencyKey).toMatch(/^tx:base:0x[0-9a-f]{64}:0$/)
    expect(await balanceOf(ctx.database.sql, userTransit(u), 'USDC')).toBe(500n)
    expect(await balanceOf(ctx.database.sql, userExternal(u), 'USDC')).toBe(-500n)
  })

  it('a second append of a key returns the existing event and posts nothing (spec 6 rule 3)', async () => {
    const u = randomUUID()
    const e = deposit(u)
    const first = await append(ctx.database.sql, e)
    const second = await append(ctx.database.sql, { ...e, occurredAt: new Date() })
    expect(second).toMatchObject({ duplicate: true, payloadMismatch: false, postings: [] })
    expect(second.event.id).toBe(first.event.id)
    expect(await balanceOf(ctx.database.sql, userTransit(u), 'USDC')).toBe(1_000n)
  })

  it('a reused key with a different payload is still deduplicated, and flagged', async () => {
    const u = randomUUID()
    const hash = txHash(++n)
    const first = await append(ctx.database.sql, deposit(u, 1_000n, hash))
    const other = await append(ctx.database.sql, deposit(u, 9_999n, hash))
    expect(other).toMatchObject({ duplicate: true, payloadMismatch: true })
    expect(other.event.id).toBe(first.event.id)
    expect(other.event.payload['amount']).toBe('1000')
    expect(await balanceOf(ctx.database.sql, userTransit(u), 'USDC')).toBe(1_000n)
  })

  it('20 racing appends of one key leave one event and one set of postings', async () => {
    const u = randomUUID()
    const e = deposit(u, 70n)
    const results = await Promise.all(Array.from({ length: 20 }, () => append(ctx.database.sql, e)))
    expect(results.filter((r) => !r.duplicate)).toHaveLength(1)
    expect(new Set(results.map((r) => r.event.id)).size).toBe(1)
    expect(results.every((r) => !r.payloadMismatch)).toBe(true)
    expect(await balanceOf(ctx.database.sql, userTransit(u), 'USDC')).toBe(70n)
    const { c } = one(
      await ctx.database.sql<{ c: string }[]>`
      select count(*) as c from ledger_postings where event_id = ${results[0]!.event.id}`,
    )
    expect(c).toBe('2')
  })

  it('duplicates inside one batch are one event', async () => {
    const u = randomUUID()
    const e = deposit(u, 5n)
    const rs = await appendBatch(ctx.database.sql, [e, e, deposit(u, 6n)])
    expect(rs.map((r) => r.duplicate)).toEqual([false, true, false])
    expect(rs[1]!.event.id).toBe(rs[0]!.event.id)
    expect(await balanceOf(ctx.database.sql, userTransit(u), 'USDC')).toBe(11n)
  })

  it('an authorizing event over the free balance is refused with a 422 and writes nothing', async () => {
    const { sql } = ctx.database
    const u = randomUUID()
    await append(sql, deposit(u, 100n))
    await reserveWithdrawal(sql, { userId: u, currency: 'USDC', amount: 30n })
    const err = await append(sql, funding(u, 71n)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(InsufficientFreeBalanceError)
    expect(err).toMatchObject({ code: 'INSUFFICIENT_FREE_BALANCE', statusCode: 422 })
    expect(await freeBalance(sql, u, 'USDC')).toBe(70n)
    const ok = await append(sql, funding(u, 70n))
    expect(ok.duplicate).toBe(false)
    expect(await freeBalance(sql, u, 'USDC')).toBe(0n)
    expect(await balanceOf(sql, userSub(u, '1', 'USDC'), 'USDC')).toBe(70n)
  })

  it('racing fundings and withdrawal requests never take the free balance below zero', async () => {
    const { sql } = ctx.database
    const u = randomUUID()
    await append(sql, deposit(u, 1_000n))
    const attempts = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? append(sql, funding(u, 100n))
          : reserveWithdrawal(sql, { userId: u, currency: 'USDC', amount: 100n }),
      ),
    )
    const ok = attempts.filter((a) => a.status === 'fulfilled').length
    expect(ok).toBe(10)
    for (const a of attempts) if (a.status === 'rejected') expect(a.reason).toBeInstanceOf(InsufficientFreeBalanceError)
    expect(await freeBalance(sql, u, 'USDC')).toBe(0n)
  })

  it('a funding reservation counts against the free balance until its event moves the money', async () => {
    const { sql } = ctx.database
    const u = randomUUID()
    await append(sql, deposit(u, 100n))
    const r = await reserveFunding(sql, { userId: u, asset: 'ETH', currency: 'USDC', amount: 60n })
    expect(r.freeBalanceAfter).toBe(40n)
    expect(await freeBalance(sql, u, 'USDC')).toBe(40n)
    // neither a withdrawal nor a second funding may take the reserved money
    await expect(reserveWithdrawal(sql, { userId: u, currency: 'USDC', amount: 41n })).rejects.toBeInstanceOf(
      InsufficientFreeBalanceError,
    )
    await expect(
      reserveFunding(sql, { userId: u, asset: 'ETH', currency: 'USDC', amount: 41n }),
    ).rejects.toBeInstanceOf(InsufficientFreeBalanceError)
    // one subaccount row per user and asset, reused by the next funding
    const again = await reserveFunding(sql, { userId: u, asset: 'ETH', currency: 'USDC', amount: 40n })
    expect(again.subaccountRowId).toBe(r.subaccountRowId)
    expect(await freeBalance(sql, u, 'USDC')).toBe(0n)
    // the worker records the event in the transaction that takes the row out of flight
    await sql.begin(async (tx) => {
      await tx`update subaccount_transfers set state = 'funded' where id = ${r.transferId}`
      await append(tx, funding(u, 60n))
    })
    expect(await freeBalance(sql, u, 'USDC')).toBe(0n)
    expect(await balanceOf(sql, userTransit(u), 'USDC')).toBe(40n)
    // a failed funding releases its reservation
    await sql`update subaccount_transfers set state = 'failed' where id = ${again.transferId}`
    expect(await freeBalance(sql, u, 'USDC')).toBe(40n)
  })

  it('an event recorded while its own funding row is still in flight is refused: no double count', async () => {
    const { sql } = ctx.database
    const u = randomUUID()
    await append(sql, deposit(u, 100n))
    await reserveFunding(sql, { userId: u, asset: 'ETH', currency: 'USDC', amount: 100n })
    await expect(append(sql, funding(u, 100n))).rejects.toBeInstanceOf(InsufficientFreeBalanceError)
    expect(await balanceOf(sql, userTransit(u), 'USDC')).toBe(100n)
  })

  it('recording events always post, even past the free balance', async () => {
    const u = randomUUID()
    const r = await append(ctx.database.sql, {
      type: 'withdrawal_sent',
      payload: { userId: u, withdrawalId: 'w1', chain: 'base', txHash: txHash(++n), currency: 'USDC', amount: 5n },
      occurredAt: at,
    })
    expect(r.postings).toHaveLength(2)
    expect(await balanceOf(ctx.database.sql, userTransit(u), 'USDC')).toBe(-5n)
  })

  it('a withdrawal and its gas: slot 0 and slot 1 of one transaction are both recorded', async () => {
    const u = randomUUID()
    const hash = txHash(++n)
    const sent = await append(ctx.database.sql, {
      type: 'withdrawal_sent',
      payload: { userId: u, withdrawalId: 'w2', chain: 'base', txHash: hash, currency: 'USDC', amount: 5n },
      occurredAt: at,
    })
    const gas = await append(ctx.database.sql, {
      type: 'gas_spent',
      payload: { chain: 'base', txHash: hash, slot: 1, currency: 'ETH', amount: 21_000n, userId: u },
      occurredAt: at,
    })
    expect(sent.duplicate || gas.duplicate).toBe(false)
    expect(gas.event.idempotencyKey).toBe(`tx:base:${hash}:1`)
  })

  it('refuses a payload that fails its schema', async () => {
    const bad = { ...deposit(randomUUID()), payload: { amount: 5 } } as unknown as EventInput
    await expect(append(ctx.database.sql, bad)).rejects.toBeInstanceOf(InvalidEventError)
  })

  it('many writers on one hot platform account: no deadlock, every fee counted', async () => {
    const { sql } = ctx.database
    const before = await balanceOf(sql, PLATFORM_FEE_REVENUE, 'USDC')
    const users = Array.from({ length: 10 }, () => randomUUID())
    await Promise.all(
      users.map(async (u) => {
        for (let i = 0; i < 20; i++) await append(sql, fill(u, 3n))
      }),
    )
    expect((await balanceOf(sql, PLATFORM_FEE_REVENUE, 'USDC')) - before).toBe(600n)
    const { slots } = one(
      await sql<{ slots: string }[]>`
      select count(*) as slots from ledger_balances where account = ${PLATFORM_FEE_REVENUE}`,
    )
    expect(Number(slots)).toBeGreaterThan(1)
  })

  it('concurrent batches over shared accounts in opposite orders never deadlock', async () => {
    const { sql } = ctx.database
    const users = Array.from({ length: 30 }, () => randomUUID())
    const batch = (order: string[]) =>
      order.flatMap((u): EventInput[] => [
        deposit(u, 1n),
        fill(u),
        {
          type: 'gas_spent',
          payload: { chain: 'base', txHash: txHash(++n), slot: 0, currency: 'ETH', amount: 1n },
          occurredAt: at,
        },
      ])
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => appendBatch(sql, batch(i % 2 ? users : [...users].reverse()))),
    )
    expect(await balancesSnapshot(sql)).toEqual(await postingsSnapshot(sql))
    expect(await balanceOf(sql, platformGas('base'), 'ETH')).toBeLessThan(0n)
  })
})

describe('the database guards the journal', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  /** the schema owner: the journal's own guards (triggers) are tested with rights the application lacks */
  let owner: postgres.Sql
  beforeAll(async () => {
    ctx = await integrationContext()
    owner = postgres(ctx.ownerUrl, { max: 1, onnotice: () => {} })
    await append(ctx.database.sql, deposit(randomUUID()))
  })
  afterAll(async () => {
    await owner?.end()
    await ctx.database.close()
  })

  const refused = { code: '42501', message: expect.stringMatching(/permission denied/) }

  it('as the application role, UPDATE, DELETE and TRUNCATE of the journal are not permitted; appends and reads work', async () => {
    const { sql } = ctx.database
    const [who] = await sql<{ user: string; member: boolean }[]>`
      select current_user as user, pg_has_role(current_user, ${APP_ROLE}, 'MEMBER') as member`
    expect(who).toEqual({ user: APP_LOGIN, member: true })
    // refused by the privilege check, before the append-only trigger would run
    for (const statement of [
      sql`update ledger_events set type = 'bridged'`,
      sql`delete from ledger_events`,
      sql`truncate ledger_events`,
      sql`update ledger_postings set amount = 0`,
      sql`delete from ledger_postings`,
      sql`truncate ledger_postings`,
    ])
      await expect(statement).rejects.toMatchObject(refused)
    // what the service does with the journal: append (ledger_append), reserve (ledger_reserve_*), read
    const u = randomUUID()
    expect((await append(sql, deposit(u, 500n))).duplicate).toBe(false)
    await reserveWithdrawal(sql, { userId: u, currency: 'USDC', amount: 100n })
    await reserveFunding(sql, { userId: u, asset: 'ETH', currency: 'USDC', amount: 50n })
    expect(await freeBalance(sql, u, 'USDC')).toBe(350n)
    expect(await balancesSnapshot(sql)).toEqual(await postingsSnapshot(sql))
  })

  it('as the application role, the balances cannot be written at all, nor the journal but through ledger_append', async () => {
    const { sql } = ctx.database
    const u = randomUUID()
    await append(sql, deposit(u, 1_000_000n))
    const transit = userTransit(u)
    // a user's transit raised by 1,000,000 USDC behind the journal: refused, whatever the statement
    for (const statement of [
      sql`update ledger_balances set balance = balance + 1000000000000 where account = ${transit}`,
      sql`update ledger_balances set balance = 0`,
      sql`delete from ledger_balances where account = ${transit}`,
      sql`delete from ledger_balances`,
      sql`truncate ledger_balances`,
      sql`insert into ledger_balances (account, currency, slot, user_id, balance)
          values (${transit}, 'USDC', 1, ${u}, 1000000000000)`,
      sql`select 1 from ledger_balances where account = ${transit} for update`,
      // raw postings would move money without moving the balances
      sql`insert into ledger_events (id, type, idempotency_key, payload, occurred_at)
          values (${randomUUID()}, 'bridged', ${`manual-${u}`}, '{}', now())`,
      sql`insert into ledger_postings select id, ${PLATFORM_FEE_REVENUE}, 'USDC', 0 from ledger_events limit 1`,
    ])
      await expect(statement).rejects.toMatchObject(refused)
    expect(await balanceOf(sql, transit, 'USDC')).toBe(1_000_000n)
    // the functions that keep them run as their owner, with a fixed search_path, and only for the application
    const fns = await owner<{ name: string; definer: boolean; config: string[] | null; public: boolean }[]>`
      select p.proname as name, p.prosecdef as definer, p.proconfig as config,
        has_function_privilege('public', p.oid, 'execute') as public
      from pg_proc p where p.proname in ('ledger_append', 'ledger_reserve_withdrawal', 'ledger_reserve_funding')
      order by p.proname`
    expect(fns.map((f) => f.name)).toEqual(['ledger_append', 'ledger_reserve_funding', 'ledger_reserve_withdrawal'])
    for (const f of fns) {
      expect(f, f.name).toMatchObject({ definer: true, public: false })
      expect(f.config, f.name).toContain('search_path=public, pg_temp')
    }
  })

  it("as the application role, the operators' record is appended, never rewritten", async () => {
    const { sql } = ctx.database
    await sql`insert into operator_actions (action, subject, actor, reason) values ('chain_resumed', 'base', 'alice', 'test')`
    for (const statement of [
      sql`update operator_actions set actor = 'ceo@wheelhouse (not me)'`,
      sql`delete from operator_actions`,
      sql`truncate operator_actions`,
      sql`update operator_proposals set proposed_by = 'x'`,
      sql`delete from operator_approvals`,
      sql`delete from operator_proposal_outcomes`,
    ])
      await expect(statement).rejects.toMatchObject(refused)
    // and the owner meets the append-only triggers
    await expect(owner`update operator_actions set actor = 'x'`).rejects.toThrow(/append-only/)
    await expect(owner`delete from operator_actions`).rejects.toThrow(/append-only/)
  })

  it('even the owner cannot change the journal: UPDATE, DELETE and TRUNCATE are refused by its triggers', async () => {
    // the owner may (it could drop the triggers too): the application role above never can
    await expect(owner`update ledger_events set type = 'bridged'`).rejects.toThrow(/append-only/)
    await expect(owner`delete from ledger_events`).rejects.toThrow(/append-only/)
    await expect(owner`update ledger_postings set amount = 0`).rejects.toThrow(/append-only/)
    await expect(owner`delete from ledger_postings`).rejects.toThrow(/append-only/)
    await expect(owner`truncate ledger_postings`).rejects.toThrow(/append-only/)
  })

  it('postings that do not sum to zero are refused, and nothing of their transaction stays', async () => {
    const id = randomUUID()
    await expect(
      owner.begin(async (t) => {
        await t`insert into ledger_events (id, type, idempotency_key, payload, occurred_at)
                values (${id}, 'bridged', ${`manual-${id}`}, '{}', now())`
        await t`insert into ledger_postings values (${id}, ${PLATFORM_FEE_REVENUE}, 'USDC', 5),
                (${id}, ${platformGas('base')}, 'USDC', -4)`
      }),
    ).rejects.toThrow(/does not sum to zero/)
    expect(await owner`select 1 from ledger_events where id = ${id}`).toHaveLength(0)
    // balanced per currency: accepted
    const id2 = randomUUID()
    await owner.begin(async (t) => {
      await t`insert into ledger_events (id, type, idempotency_key, payload, occurred_at)
              values (${id2}, 'bridged', ${`manual-${id2}`}, '{}', now())`
      await t`insert into ledger_postings values (${id2}, ${PLATFORM_FEE_REVENUE}, 'USDC', 5),
              (${id2}, ${platformGas('base')}, 'USDC', -5), (${id2}, ${platformGas('base')}, 'ETH', 0)`
    })
  })

  it('every insert statement must balance by itself: two halves in two statements are refused', async () => {
    const id = randomUUID()
    await expect(
      owner.begin(async (t) => {
        await t`insert into ledger_events (id, type, idempotency_key, payload, occurred_at)
                values (${id}, 'bridged', ${`manual-${id}`}, '{}', now())`
        await t`insert into ledger_postings values (${id}, ${PLATFORM_FEE_REVENUE}, 'USDC', 5)`
        await t`insert into ledger_postings values (${id}, ${platformGas('base')}, 'USDC', -5)`
      }),
    ).rejects.toThrow(/does not sum to zero/)
  })

  it('postings cannot be added to an event of an earlier transaction', async () => {
    await expect(
      owner`insert into ledger_postings select id, ${PLATFORM_FEE_REVENUE}, 'USDC', 0 from ledger_events limit 1`,
    ).rejects.toThrow(/same transaction/)
  })
})
