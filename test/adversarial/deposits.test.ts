/**
 * Dust deposits by the hundred against the sweep queue (docs/hostile-world.md "Fair queues"): on a
 * chain where gas is dear, ETH deposits too small to pay for their own sweep are credited, set
 * aside in one update per tick and left at their addresses; a real deposit that arrives after them
 * is swept in the tick after it is credited, as it would be without them.
 */

import { BELOW_GAS_RETRY_MS, DEPOSIT_SWEEP_BATCH, dustThresholdWei } from '@wh/deposits'
import { balanceOf, userTransit } from '@wh/ledger'
import { type Hex, parseEther, parseGwei } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AdversarialStack, anvilOf, type Client, startAdversarialStack, USDC } from './fixtures/stack'

/** Dear gas: a plain transfer's sweep reserve is about 0.1 ETH at this base fee. */
const BASE_FEE = parseGwei('1000')
/** above the minimum deposit (0.001 ETH), far below what its own sweep would cost */
const DUST = parseEther('0.002')

describe('dust deposits by the hundred against the sweep queue', () => {
  let s: AdversarialStack

  beforeAll(async () => {
    s = await startAdversarialStack({ baseFeePerGasWei: BASE_FEE })
  }, 120_000)
  afterAll(() => s?.close())

  const userIdOf = async (c: Client) =>
    (await s.ctx.database.sql<{ id: string }[]>`select id from users where wallet_address = ${c.wallet}`)[0]
      ?.id as string

  /** Sweep ticks until the user's deposits are swept (at most `max`); how many it took. */
  async function ticksUntilSwept(c: Client, max = 6): Promise<number> {
    for (let n = 1; n <= max; n++) {
      await s.sweepTick()
      const [row] = await s.ctx.database.sql<{ open: number }[]>`
        select count(*)::int as open from deposits where address = ${c.depositAddress} and state <> 'swept'`
      if (row?.open === 0) return n
    }
    throw new Error(`deposits of ${c.depositAddress} not swept in ${max} ticks`)
  }

  it('a real deposit after 250 dust deposits is swept in its usual time; the dust stays credited and at its addresses', async () => {
    const fees = await s.client.publicClient.estimateFeesPerGas({ type: 'eip1559' })
    expect(DUST).toBeLessThan(dustThresholdWei(fees.maxFeePerGas))

    // baseline: an honest USDC deposit, credited, then swept (its gas topped up first)
    const honest = await s.signUp()
    await s.pay(honest.depositAddress, 'USDC', USDC(500))
    await s.scan()
    const baseline = await ticksUntilSwept(honest)

    // the attack: 250 attacker accounts, each sent dust, more than one sweep batch
    const attackers = await Promise.all(Array.from({ length: DEPOSIT_SWEEP_BATCH + 50 }, () => s.signUp()))
    const anvil = anvilOf(s.chain)
    // one block for all of them (a block per transfer would walk the base fee down)
    await anvil.setAutomine(false)
    const hashes: Hex[] = []
    try {
      for (const a of attackers) hashes.push(await s.send(a.depositAddress, 'ETH', DUST))
      await anvil.mine({ blocks: 1 })
    } finally {
      await anvil.setAutomine(true)
    }
    await s.mined(hashes)
    const late = await s.signUp()
    await s.pay(late.depositAddress, 'USDC', USDC(500))
    await s.scan()
    const [{ credited } = { credited: 0 }] = await s.ctx.database.sql<{ credited: number }[]>`
      select count(*)::int as credited from deposits where token = 'ETH' and amount = ${DUST.toString()}::numeric`
    expect(credited).toBe(attackers.length)

    const first = await s.sweepTick()
    expect(first.dustSetAside).toBe(attackers.length)
    expect(await ticksUntilSwept(late)).toBeLessThanOrEqual(baseline)

    // the dust: credited to its owners, set aside with its code for an hour, never swept
    const dust = await s.ctx.database.sql<{ state: string; last_error_code: string; wait_s: number }[]>`
      select state, last_error_code, extract(epoch from next_attempt_at - now())::int as wait_s from deposits
      where token = 'ETH' and amount = ${DUST.toString()}::numeric`
    for (const d of dust) {
      expect(d.state).toBe('detected')
      expect(d.last_error_code).toBe('BELOW_SWEEP_GAS')
      expect(d.wait_s).toBeGreaterThan(BELOW_GAS_RETRY_MS / 1000 - 120)
    }
    const owner = attackers[0] as Client
    expect(await balanceOf(s.ctx.database.sql, userTransit(await userIdOf(owner)), 'ETH')).toBe(DUST)
    expect(await s.client.publicClient.getBalance({ address: owner.depositAddress })).toBe(DUST)
    const [{ sent } = { sent: -1 }] = await s.ctx.database.sql<{ sent: number }[]>`
      select count(*)::int as sent from outbound_txs where to_address = any(${attackers.map((a) => a.depositAddress)}::text[])`
    expect(sent).toBe(0) // no gas was spent topping dust up
  }, 240_000)
})
