/**
 * Adversarial users over HTTP against the withdrawal queue (docs/hostile-world.md "Fair queues",
 * "Destinations"): the blocking attack — a flood of withdrawals that can never be sent, ETH to
 * contracts that start refusing it after the request, USDC the hot wallet does not hold — must not
 * delay an honest user's withdrawal by a single tick; withdrawals to the platform's own wallets are
 * refused; many users withdrawing at once are all paid, once.
 */
import { randomBytes } from 'node:crypto'
import { freeBalance } from '@wh/ledger'
import { WITHDRAWAL_OPEN_MAX_PER_USER } from '@wh/withdrawals'
import { getAddress, type Hex, parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AdversarialStack, anvilOf, CHAIN, type Client, startAdversarialStack, USDC } from './fixtures/stack'

/** REVERT(0, 0): any call, any value, refused */
const REFUSE_EVERYTHING: Hex = '0x60006000fd'
/** the batch the blocking attack's ticks take: fewer rows than there are attacking accounts (14) */
const BATCH = 8
const freshAddress = () => getAddress(`0x${randomBytes(20).toString('hex')}`)

describe('adversarial users against the withdrawal queue (over HTTP)', () => {
  let s: AdversarialStack
  let victim: Client

  beforeAll(async () => {
    s = await startAdversarialStack()
    victim = await s.signUp()
    await s.pay(victim.depositAddress, 'ETH', parseEther('1'))
    await s.scan()
    await s.freshPrice()
  }, 120_000)
  afterAll(() => s?.close())

  const userIdOf = async (c: Client) =>
    (await s.ctx.database.sql<{ id: string }[]>`select id from users where wallet_address = ${c.wallet}`)[0]
      ?.id as string

  /**
   * Ticks until the withdrawal is sent (at most `max`); returns how many it took. Batches of
   * BATCH rows: fewer than the attacking accounts, so the attack is wider than one batch.
   */
  async function ticksUntilSent(c: Client, id: string, max = 10): Promise<number> {
    for (let n = 1; n <= max; n++) {
      await s.withdrawTick({ batchSize: BATCH })
      const { body } = await c.call('GET', '/withdrawals?limit=100')
      if (body.items.find((w: { id: string }) => w.id === id)?.state === 'sent') return n
    }
    throw new Error(`withdrawal ${id} not sent in ${max} ticks`)
  }

  it('the blocking attack leaves an honest withdrawal’s latency unchanged', async () => {
    // the honest baseline: one tick from request to sent
    const before = await victim.call('POST', '/withdrawals', {
      chain: CHAIN,
      asset: 'ETH',
      amount: '0.01',
      destination: freshAddress(),
    })
    expect(before.status).toBe(202)
    const baseline = await ticksUntilSent(victim, before.body.id)
    expect(baseline).toBe(1)

    // twelve attacker accounts: each asks for as many ETH withdrawals as it may, to addresses that
    // accept ETH when asked (the API's dry run passes) and refuse it once the requests are in
    const attackers = await Promise.all(Array.from({ length: 12 }, () => s.signUp()))
    for (const a of attackers) await s.pay(a.depositAddress, 'ETH', parseEther('0.5'))
    // and two more asking for more USDC than the hot wallet holds (within the USD maximum)
    const hoarders = await Promise.all(Array.from({ length: 2 }, () => s.signUp()))
    for (const h of hoarders) await s.pay(h.depositAddress, 'USDC', USDC(1_000_000))
    await s.scan()
    await s.freshPrice()
    const traps: Array<ReturnType<typeof freshAddress>> = []
    for (const a of attackers)
      for (let i = 0; i < WITHDRAWAL_OPEN_MAX_PER_USER; i++) {
        const trap = freshAddress()
        traps.push(trap)
        const r = await a.call('POST', '/withdrawals', {
          chain: CHAIN,
          asset: 'ETH',
          amount: '0.01',
          destination: trap,
        })
        expect(r.status, JSON.stringify(r.body)).toBe(202)
      }
    // one more is over the cap: the queue a single account can fill is bounded
    const over = await attackers[0]?.call('POST', '/withdrawals', {
      chain: CHAIN,
      asset: 'ETH',
      amount: '0.01',
      destination: freshAddress(),
    })
    expect(over?.status).toBe(422)
    expect(over?.body.code).toBe('TOO_MANY_OPEN_WITHDRAWALS')
    for (const h of hoarders)
      for (let i = 0; i < WITHDRAWAL_OPEN_MAX_PER_USER; i++) {
        const r = await h.call('POST', '/withdrawals', {
          chain: CHAIN,
          asset: 'USDC',
          amount: '90000',
          destination: freshAddress(),
        })
        expect(r.status).toBe(202)
      }
    // the switch: every trap now refuses ETH
    const anvil = anvilOf(s.chain)
    for (const trap of traps) await anvil.setCode({ address: trap, bytecode: REFUSE_EVERYTHING })

    // 140 poisoned withdrawals from 14 accounts, more than a batch, wait ahead of the honest one
    const honest = await victim.call('POST', '/withdrawals', {
      chain: CHAIN,
      asset: 'ETH',
      amount: '0.02',
      destination: freshAddress(),
    })
    expect(honest.status).toBe(202)
    const underAttack = await ticksUntilSent(victim, honest.body.id)
    expect(underAttack).toBe(baseline)

    // the poison drains: refused withdrawals end failed with a readable reason, reserves released,
    // and nothing was ever signed for them; the hoarders wait out their backoff
    for (let i = 0; i < 8; i++) await s.withdrawTick()
    const rows = await s.ctx.database.sql<{ state: string; last_error_code: string; failure_reason: string | null }[]>`
      select state, last_error_code, failure_reason from withdrawals
      where destination = any(${traps}::text[])`
    expect(rows).toHaveLength(traps.length)
    for (const r of rows) {
      expect(r.state).toBe('failed')
      expect(r.last_error_code).toBe('DESTINATION_REFUSED')
      expect(r.failure_reason).toMatch(/destination refused/)
    }
    const [{ signed } = { signed: -1 }] = await s.ctx.database.sql<{ signed: number }[]>`
      select count(*)::int as signed from outbound_txs o join withdrawals w on w.id::text = o.ref_id
      where o.purpose = 'withdrawal' and w.destination = any(${traps}::text[])`
    expect(signed).toBe(0)
    for (const a of attackers)
      expect(await freeBalance(s.ctx.database.sql, await userIdOf(a), 'ETH')).toBe(parseEther('0.5'))
    const hoarded = await s.ctx.database.sql<{ state: string; last_error_code: string; due: boolean }[]>`
      select w.state, w.last_error_code, w.next_attempt_at <= now() as due from withdrawals w
      join users u on u.id = w.user_id where u.wallet_address = any(${hoarders.map((h) => h.wallet)}::text[])`
    expect(hoarded).toHaveLength(2 * WITHDRAWAL_OPEN_MAX_PER_USER)
    for (const r of hoarded) expect(r).toEqual({ state: 'requested', last_error_code: 'HOT_WALLET_SHORT', due: false })
    expect(s.alerts.filter((a) => a.includes('hot wallet is short'))).toHaveLength(1)

    // and an honest withdrawal after all that still takes one tick
    const after = await victim.call('POST', '/withdrawals', {
      chain: CHAIN,
      asset: 'ETH',
      amount: '0.01',
      destination: freshAddress(),
    })
    expect(await ticksUntilSent(victim, after.body.id)).toBe(baseline)
  }, 240_000)

  it('withdrawals to the platform’s own wallets or to any deposit address are refused over HTTP; nothing is reserved', async () => {
    const userId = await userIdOf(victim)
    const free = await freeBalance(s.ctx.database.sql, userId, 'ETH')
    const other = await s.signUp()
    for (const destination of [
      ...s.deps.platformWallets.map((w) => w.address),
      victim.depositAddress,
      other.depositAddress.toLowerCase(),
    ]) {
      const r = await victim.call('POST', '/withdrawals', { chain: CHAIN, asset: 'ETH', amount: '0.01', destination })
      expect(r.status, destination).toBe(400)
      expect(r.body.code).toBe('INVALID_DESTINATION')
    }
    expect(await freeBalance(s.ctx.database.sql, userId, 'ETH')).toBe(free)
  })

  it('forty users withdrawing at once are each paid once, in one tick', async () => {
    const users = await Promise.all(Array.from({ length: 40 }, () => s.signUp()))
    for (const u of users) await s.pay(u.depositAddress, 'USDC', USDC(100))
    await s.scan()
    const destinations = users.map(() => freshAddress())
    const answers = await Promise.all(
      users.map((u, i) =>
        u.call('POST', '/withdrawals', { chain: CHAIN, asset: 'USDC', amount: '42.5', destination: destinations[i] }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(202))
    const summary = await s.withdrawTick()
    expect(summary.sent).toBeGreaterThanOrEqual(40)
    for (const d of destinations) {
      const held = await s.client.publicClient.readContract({
        address: s.usdc,
        abi: [
          {
            type: 'function',
            name: 'balanceOf',
            stateMutability: 'view',
            inputs: [{ name: 'a', type: 'address' }],
            outputs: [{ type: 'uint256' }],
          },
        ],
        functionName: 'balanceOf',
        args: [d],
      })
      expect(held).toBe(42_500_000n)
    }
    for (const u of users) expect(await freeBalance(s.ctx.database.sql, await userIdOf(u), 'USDC')).toBe(57_500_000n)
  }, 120_000)
})
