/**
 * requestWithdrawal and the reads, without HTTP: the test Postgres (its own database, the
 * application's login), the real destination guard and keyring, a fixed price source (the bounds'
 * port) and the platform stop's port (@wh/ops depends on this package, so the API passes
 * assertPlatformRunning; here a switch stands for it). apps/api/test/withdrawals*.test.ts drive the
 * same rules over HTTP.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { AppError, InvalidAmountError } from '@wh/core'
import { createDatabase, type Sql } from '@wh/db'
import { append, freeBalance, InsufficientFreeBalanceError } from '@wh/ledger'
import { fixedPriceSource, PriceUnavailableError as StalePriceError } from '@wh/market'
import { integrationContext } from '@wh/testkit'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  destinationGuard,
  IdempotencyKeyReusedError,
  InvalidDestinationError,
  PriceUnavailableError,
  requestWithdrawal,
  TooManyOpenWithdrawalsError,
  UnknownRouteError,
  WITHDRAWAL_OPEN_MAX_PER_USER,
  WithdrawalAboveMaximumError,
  WithdrawalBelowMinimumError,
  type WithdrawalRequestDeps,
  withdrawalByIdempotencyKey,
  withdrawalsPage,
} from '../src/index'

// an EIP-55 test vector, not derived from the test mnemonic (whose addresses are deposit addresses)
const DEST = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'
const USDC = (n: number) => BigInt(Math.round(n * 1_000_000))

class StoppedError extends AppError {
  constructor(what: string) {
    super({ code: 'PLATFORM_STOPPED', statusCode: 503, message: `${what} is paused` })
  }
}

describe('requestWithdrawal (packages/withdrawals/src/request.ts)', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let sql: Sql
  let deps: WithdrawalRequestDeps
  let keyring: DepositKeyring
  /** what the platform stop was asked about; it refuses while `stopped` */
  const asked: string[] = []
  let stopped = false

  beforeAll(async () => {
    ctx = await integrationContext()
    sql = ctx.database.sql
    const chains = buildChainRegistry(ctx.config)
    keyring = DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly()
    deps = {
      sql,
      chains,
      prices: fixedPriceSource('3000'),
      destinations: destinationGuard({ sql, chains, keyring }),
      limits: { minUsd: '10', maxUsd: '100000', stoppedMaxUsd: '1000' },
      assertPlatformRunning: async (what) => {
        asked.push(what)
        if (stopped) throw new StoppedError(what)
      },
    }
  })
  afterAll(() => ctx.database.close())

  /** A user holding `usdc` in transit (a deposit_detected). */
  async function userWith(usdc: number): Promise<string> {
    const userId = randomUUID()
    await append(sql, {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: `0x${randomBytes(32).toString('hex')}`,
        logIndex: 0,
        currency: 'USDC',
        amount: USDC(usdc),
      },
      occurredAt: new Date(),
    })
    return userId
  }
  const rowsOf = async (userId: string) =>
    (await sql<{ n: number }[]>`select count(*)::int as n from withdrawals where user_id = ${userId}`)[0]?.n
  const usdc = (userId: string, amount: string, more: { idempotencyKey?: string; destination?: string } = {}) => ({
    userId,
    chain: 'base',
    asset: 'USDC',
    amount,
    destination: DEST.toLowerCase(),
    ...more,
  })

  it('writes the whole request in one INSERT (no UPDATE of withdrawals runs) and answers the row as stored', async () => {
    const owner = createDatabase(ctx.ownerUrl, { max: 1 })
    const userId = await userWith(100)
    try {
      // as the schema owner: any UPDATE of a withdrawals row fails the request that runs it
      await owner.sql`create function forbid_update() returns trigger language plpgsql as $$
        begin raise exception 'UPDATE of withdrawals'; end $$`
      await owner.sql`create trigger forbid_update before update on withdrawals
        for each row execute function forbid_update()`
      const row = await requestWithdrawal(deps, usdc(userId, '25.5', { idempotencyKey: 'k-insert' }))
      expect(row).toMatchObject({
        userId,
        state: 'requested',
        currency: 'USDC',
        amount: '25500000',
        chain: 'base',
        destination: DEST,
        idempotencyKey: 'k-insert',
        txHash: null,
        attempts: 0,
        heldAt: null,
      })
      expect(row.createdAt).toBeInstanceOf(Date)
      expect(await withdrawalByIdempotencyKey(sql, userId, 'k-insert')).toEqual(row)
      // the guard is live: an UPDATE would have failed the request
      await expect(sql`update withdrawals set updated_at = now() where id = ${row.id}`).rejects.toThrow(
        /UPDATE of withdrawals/,
      )
      expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(74.5))
    } finally {
      await owner.sql`drop trigger if exists forbid_update on withdrawals`
      await owner.sql`drop function if exists forbid_update()`
      await owner.close()
    }
  })

  it('a replayed Idempotency-Key answers the same row, even when 20 race; another request under it is refused', async () => {
    const userId = await userWith(100)
    const req = usdc(userId, '30', { idempotencyKey: `k-${randomUUID()}` })
    const rows = await Promise.all(Array.from({ length: 20 }, () => requestWithdrawal(deps, req)))
    expect(new Set(rows.map((r) => r.id)).size).toBe(1)
    expect((await requestWithdrawal(deps, req)).id).toBe(rows[0]?.id)
    expect(await rowsOf(userId)).toBe(1)
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(70))
    // the same key for another amount, chain or destination: refused, not merged
    for (const other of [
      { ...req, amount: '31' },
      { ...req, chain: 'optimism' },
      { ...req, destination: keyring.address(0) },
    ])
      await expect(requestWithdrawal(deps, other)).rejects.toBeInstanceOf(IdempotencyKeyReusedError)
    expect(await rowsOf(userId)).toBe(1)
  })

  it('refuses each bad request with its error and writes nothing', async () => {
    const userId = await userWith(100)
    const [user] = await sql<{ id: string; hd_index: number }[]>`
      insert into users (wallet_address) values (${`0x${randomBytes(20).toString('hex')}`}) returning id, hd_index`
    const ownDeposit = keyring.address(user?.hd_index as number)
    const cases: Array<[Parameters<typeof requestWithdrawal>[1], new (...a: never[]) => Error]> = [
      [{ ...usdc(userId, '20'), asset: 'DAI' }, UnknownRouteError],
      [usdc(userId, '20.0000001'), InvalidAmountError],
      [usdc(userId, '20', { destination: DEST.replace('aAeb', 'aaeb') }), InvalidDestinationError],
      [usdc(userId, '20', { destination: `0x${'0'.repeat(40)}` }), InvalidDestinationError],
      [usdc(user?.id as string, '20', { destination: ownDeposit }), InvalidDestinationError],
      [usdc(userId, '0'), WithdrawalBelowMinimumError],
      [usdc(userId, '9.999999'), WithdrawalBelowMinimumError],
      [usdc(userId, '100000.000001'), WithdrawalAboveMaximumError],
      [usdc(userId, '100.000001'), InsufficientFreeBalanceError],
    ]
    for (const [req, error] of cases) await expect(requestWithdrawal(deps, req), req.amount).rejects.toThrow(error)
    const below = await requestWithdrawal(deps, { ...usdc(userId, '0.003'), asset: 'ETH' }).catch((e) => e)
    // the bounds in ETH at the price: 10 USD at 3,000 rounds up
    expect(below).toBeInstanceOf(WithdrawalBelowMinimumError)
    expect(below.details).toEqual({ minAmount: '0.003333333333333334', asset: 'ETH', minUsd: '10' })
    const stale = { ...deps, prices: { indicative: false, usdPrice: () => Promise.reject(new StalePriceError('ETH')) } }
    await expect(requestWithdrawal(stale, { ...usdc(userId, '0.01'), asset: 'ETH' })).rejects.toBeInstanceOf(
      PriceUnavailableError,
    )
    expect(await rowsOf(userId)).toBe(0)
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(100))
  })

  it('above PLATFORM_STOP_WITHDRAWAL_MAX_USD it asks the platform stop, which refuses while stopped; at the bound it does not ask', async () => {
    const userId = await userWith(5_000)
    asked.length = 0
    stopped = true
    try {
      await expect(requestWithdrawal(deps, usdc(userId, '1000.000001'))).rejects.toBeInstanceOf(StoppedError)
      expect(asked).toEqual(['a withdrawal above 1000 USD'])
      expect(await rowsOf(userId)).toBe(0)
      await requestWithdrawal(deps, usdc(userId, '1000'))
      expect(asked).toHaveLength(1)
    } finally {
      stopped = false
    }
    await requestWithdrawal(deps, usdc(userId, '1500'))
    expect(asked).toHaveLength(2)
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(2_500))
  })

  it(`holds at most ${WITHDRAWAL_OPEN_MAX_PER_USER} open withdrawals per user, under a burst too`, async () => {
    const userId = await userWith(1_000)
    const results = await Promise.allSettled(
      Array.from({ length: WITHDRAWAL_OPEN_MAX_PER_USER + 5 }, () => requestWithdrawal(deps, usdc(userId, '20'))),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(WITHDRAWAL_OPEN_MAX_PER_USER)
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(TooManyOpenWithdrawalsError)
    expect(await rowsOf(userId)).toBe(WITHDRAWAL_OPEN_MAX_PER_USER)
    expect(await freeBalance(sql, userId, 'USDC')).toBe(USDC(1_000 - 20 * WITHDRAWAL_OPEN_MAX_PER_USER))
  })

  it("withdrawalsPage pages the user's rows newest first by cursor, and only theirs", async () => {
    const userId = await userWith(1_000)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await requestWithdrawal(deps, usdc(userId, `${11 + i}`))).id)
    const seen: string[] = []
    let after: { createdAt: string; id: string } | undefined
    for (;;) {
      const page = await withdrawalsPage(sql, userId, { limit: 2, after })
      expect(page.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.items.map((w) => w.id))
      if (!page.next) break
      after = page.next
    }
    expect(seen).toEqual([...ids].reverse())
    expect(await withdrawalsPage(sql, randomUUID(), { limit: 20 })).toEqual({ items: [], next: null })
  })
})
