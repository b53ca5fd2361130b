/**
 * readCycles against a real Postgres: a leg bought back before expiry counts its close cost like a
 * settlement, so a cycle's net (and every statistic built on it) includes the loss.
 */
import { randomUUID } from 'node:crypto'
import { integrationContext } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { netOf, readCycles } from '../src/strategies'

const E18 = 10n ** 18n
const USDC = (n: number) => BigInt(n) * 1_000_000n

describe('readCycles', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  beforeAll(async () => {
    ctx = await integrationContext()
  })
  afterAll(async () => ctx?.database.close())

  it('a bought-back leg counts its close cost as a loss of the cycle', async () => {
    const sql = ctx.database.sql
    const expiryMs = Date.UTC(2026, 10, 27, 8)
    const leg = (state: string, closeCost: bigint) =>
      sql`insert into positions (user_id, asset, side, subaccount_id, state, collateral_currency, collateral_amount,
          instrument, strike_e18, expiry_sec, size_e18, filled_e18, bought_e18, premium, fees, close_cost, created_at)
        values (${randomUUID()}, 'ETH', 'put', ${randomUUID()}, ${state}, 'USDC', ${USDC(2800).toString()},
          'ETH-20261127-2800-P', ${(2800n * E18).toString()}, ${expiryMs / 1000}, ${E18.toString()}, ${E18.toString()},
          ${state === 'closed' ? E18.toString() : '0'}, ${USDC(40).toString()}, ${USDC(1).toString()},
          ${closeCost.toString()}, ${new Date(expiryMs - 86_400_000)})`
    await leg('closed', USDC(95))
    await leg('open', 0n)
    const [cycle] = await readCycles(sql, 'ETH')
    expect(cycle?.legs).toBe(2)
    expect(cycle?.premium).toBe(USDC(80))
    expect(cycle?.settlementCost).toBe(USDC(95))
    expect(netOf(cycle as NonNullable<typeof cycle>)).toBe(USDC(80) - USDC(2) - USDC(95))
  })
})
