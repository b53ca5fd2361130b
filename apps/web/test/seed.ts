/**
 * What the console's page tests need to find in the database, written through the tables' owners
 * where one exists (a deposit as the watch records it, candles as the feed stores them, a root as
 * the worker publishes it, a solvency run as the tick stores it) and as the worker's ticks would
 * leave a wheel's legs where no owner function fits a test (a leg sold and settled).
 */
import { randomBytes } from 'node:crypto'
import type { Sql } from '@wh/db'
import { recordDetected } from '@wh/deposits'
import { upsertCandles } from '@wh/market'
import { publishLiabilities } from '@wh/proof/publish'
import { storeRun } from '@wh/solvency'
import { requestPosition } from '@wh/trading'

const E18 = 10n ** 18n
export const txHash = () => `0x${randomBytes(32).toString('hex')}`

export async function userOf(sql: Sql, address: string): Promise<{ id: string; hdIndex: number }> {
  const [u] = await sql<{ id: string; hd_index: number }[]>`
    select id, hd_index from users where wallet_address = ${address}`
  if (!u) throw new Error(`no user for ${address}`)
  return { id: u.id, hdIndex: u.hd_index }
}

/** A deposit as the deposit watch records it: the row and its credit in one transaction. */
export async function deposit(
  sql: Sql,
  user: { id: string; hdIndex: number },
  to: string,
  token: 'USDC' | 'ETH',
  amount: bigint,
): Promise<string> {
  const hash = txHash()
  await sql.begin((tx) =>
    recordDetected(tx, [
      {
        chain: 'base',
        tx_hash: hash,
        log_index: 0,
        block_number: '120',
        user_id: user.id,
        hd_index: user.hdIndex,
        address: to,
        token,
        amount: amount.toString(),
      },
    ]),
  )
  return hash
}

/** Hourly index candles of `asset` over the two days before `endMs`, a gentle wave around `level`. */
export async function candles(sql: Sql, asset: string, level: number, endMs: number): Promise<void> {
  const hour = 3_600_000
  const end = Math.floor(endMs / hour) * hour - hour
  const rows = Array.from({ length: 48 }, (_, i) => {
    const at = end - (47 - i) * hour
    const price = BigInt(Math.round(level * (1 + 0.03 * Math.sin(i / 5)) * 100)) * (E18 / 100n)
    return {
      asset,
      interval: '1h' as const,
      bucketStartMs: at,
      openE18: price,
      highE18: price + E18,
      lowE18: price - E18,
      closeE18: price,
      tickCount: 10,
      firstTickMs: at,
      lastTickMs: at + hour - 1,
    }
  })
  await upsertCandles(sql, rows)
}

/**
 * A wheel's first leg as the ticks leave it after a sale that expired out of the money (premium and
 * fees recorded on the row), and its second leg, a put being sold now: instrument, strike, expiry in
 * three days and a maker window ending in ten minutes.
 */
export async function wheelWithHistory(sql: Sql, userId: string, wheelId: string, firstLeg: string, nowMs: number) {
  const day = 86_400_000
  await sql`update positions set state = 'settled', outcome = 'otm', instrument = 'ETH-20300101-2700-P',
      strike_e18 = ${(2700n * E18).toString()}, expiry_sec = ${Math.floor((nowMs - day) / 1000)},
      size_e18 = ${((3n * E18) / 10n).toString()}, filled_e18 = ${((3n * E18) / 10n).toString()}, premium = '18500000', fees = '2350000'
    where id = ${firstLeg}`
  const leg = await requestPosition(sql, { userId, asset: 'ETH', side: 'put', amount: 400_000_000n, wheelId })
  await sql`update positions set state = 'placing', instrument = 'ETH-20300104-2600-P',
      strike_e18 = ${(2600n * E18).toString()}, expiry_sec = ${Math.floor((nowMs + 3 * day) / 1000)},
      size_e18 = ${((15n * E18) / 100n).toString()}, window_ends_at = ${new Date(nowMs + 10 * 60_000)}
    where id = ${leg.id}`
  await sql`update wheels set current_position_id = ${leg.id}, cycles = 2 where id = ${wheelId}`
  await sql`insert into wheel_decisions (wheel_id, user_id, position_id, kind, reason, facts, created_at) values
    (${wheelId}, ${userId}, ${leg.id}, 'leg_opened', 'holding_cash',
      ${sql.json({ leg: { side: 'put', amount: '400', currency: 'USDC' } })}, ${new Date(nowMs - 60_000)}),
    (${wheelId}, ${userId}, ${leg.id}, 'waiting', 'yield_below_floor',
      ${sql.json({ yield: { instrument: 'ETH-20300104-2600-P', annualisedYieldBps: 312, floorBps: 500 } })}, ${new Date(nowMs - 30_000)})`
  return leg.id
}

/** Today's proof of liabilities, published as the worker does. */
export async function publishRoot(sql: Sql): Promise<void> {
  const r = await publishLiabilities(sql, { now: new Date(), force: true })
  if (r.status !== 'published') throw new Error(`no root published: ${r.status}`)
}

/** A complete solvency run as the tick stores it: USDC held in a hot wallet and at the exchange. */
export async function solvencyRun(sql: Sql, owedUsdc: bigint): Promise<void> {
  const hot = '0x52908400098527886E0F7030069857D2E4169EE7'
  const held = owedUsdc + 25_000_000n
  await storeRun(sql, {
    startedAt: new Date(),
    complete: true,
    legs: [
      { side: 'liability', currency: 'USDC', kind: 'user_transit', place: 'journal', amount: owedUsdc },
      {
        side: 'asset',
        currency: 'USDC',
        kind: 'platform_wallet',
        place: `base:hot:${hot}`,
        account: hot,
        amount: held,
      },
    ],
    totals: [{ currency: 'USDC', assets: held, liabilities: owedUsdc, surplus: held - owedUsdc }],
    surpluses: [],
    errors: [],
  })
}
