import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { eventArbitrary } from '../../test/arbitraries'
import {
  bearerOf,
  EXCHANGE_CHAIN,
  PLATFORM_EQUITY,
  PLATFORM_EXPENSE_OVERHEAD,
  PLATFORM_EXPENSE_RECONCILIATION,
  PLATFORM_FEE_REVENUE,
  parseAccount,
  platformGas,
  platformHot,
  userExpense,
  userIncome,
  userSub,
  userTransit,
} from '../accounts'
import { eventKey } from '../event-keys'
import { EVENT_TYPES } from '../events'
import { netPostings } from '../postings'
import { POSTING_RULES } from './index'

const u = '0a1b2c3d-0000-4000-8000-000000000001'

describe('posting rules (spec 6)', () => {
  it('there is a rule for every event type: the 18 of spec 6 and the extensions', () => {
    expect(Object.keys(POSTING_RULES).sort()).toEqual([...EVENT_TYPES].sort())
  })

  it('every rule is zero-sum per currency for any valid payload', () => {
    fc.assert(
      fc.property(eventArbitrary([u]), (e) => {
        const legs = (
          POSTING_RULES[e.type] as unknown as (p: unknown) => readonly { currency: string; amount: bigint }[]
        )(e.payload)
        const sums = new Map<string, bigint>()
        for (const l of legs) sums.set(l.currency, (sums.get(l.currency) ?? 0n) + l.amount)
        for (const s of sums.values()) expect(s).toBe(0n)
      }),
    )
  })

  it('spec 6 rule 2: no postings for deposit_swept, swap_reverted, trade_rejected, out-of-the-money settlement', () => {
    const tx = `0x${'01'.repeat(32)}`
    expect(POSTING_RULES.deposit_swept({ userId: u, chain: 'base', txHash: tx, currency: 'USDC', amount: 5n })).toEqual(
      [],
    )
    expect(POSTING_RULES.swap_reverted({ chain: 'base', txHash: tx })).toEqual([])
    expect(POSTING_RULES.trade_rejected({ subaccountId: '1', orderId: 'o', instrument: 'i', reason: 'r' })).toEqual([])
    expect(
      POSTING_RULES.option_settled({ userId: u, subaccountId: '1', instrument: 'i', expirySec: 1, outcome: 'otm' }),
    ).toEqual([])
  })

  it("platform capital: the operator's money moves between the platform's equity and a holding, no user's claim moves", () => {
    const opening = {
      holding: 'hot' as const,
      chain: EXCHANGE_CHAIN,
      currency: 'USDC',
      amount: 1_000_000n,
      reference: `tx:1:0x${'ab'.repeat(32)}`,
      reason: 'the funding subaccount opened by its first deposit',
    }
    expect(netPostings('capital_contributed', POSTING_RULES.capital_contributed(opening))).toEqual([
      { account: PLATFORM_EQUITY, currency: 'USDC', amount: -1_000_000n },
      { account: platformHot(EXCHANGE_CHAIN), currency: 'USDC', amount: 1_000_000n },
    ])
    const gasOut = { ...opening, holding: 'gas' as const, chain: 'base', currency: 'ETH', amount: 5n }
    expect(netPostings('capital_withdrawn', POSTING_RULES.capital_withdrawn(gasOut))).toEqual([
      { account: platformGas('base'), currency: 'ETH', amount: -5n },
      { account: PLATFORM_EQUITY, currency: 'ETH', amount: 5n },
    ])
    expect(eventKey('capital_contributed', opening)).toBe(`capital_contributed:${opening.reference}`)
    expect(eventKey('capital_withdrawn', opening)).toBe(`capital_withdrawn:${opening.reference}`)
    expect(parseAccount(PLATFORM_EQUITY)).toEqual({ bearer: 'platform', family: 'equity' })
  })

  it('a funding: the user moves the whole amount; a creation fee leaves the platform exchange funds (overhead, excess)', () => {
    const funded = { userId: u, subaccountId: '7', transactionId: 'op-1', currency: 'USDC', amount: 50_000_000n }
    const plain = netPostings('subaccount_funded', POSTING_RULES.subaccount_funded(funded))
    expect(plain).toHaveLength(2)
    const legs = netPostings('subaccount_funded', POSTING_RULES.subaccount_funded({ ...funded, feeAmount: 1_000_000n }))
    const of = (a: string) => legs.find((l) => l.account === a)?.amount
    expect(of(userTransit(u))).toBe(-50_000_000n)
    expect(of(userSub(u, '7', 'USDC'))).toBe(50_000_000n)
    expect(of(platformHot(EXCHANGE_CHAIN))).toBe(-1_000_000n)
    expect(of(PLATFORM_EXPENSE_OVERHEAD)).toBe(1_000_000n)
    expect(bearerOf(PLATFORM_EXPENSE_OVERHEAD)).toBe('platform')
    expect(netPostings('subaccount_funded', POSTING_RULES.subaccount_funded({ ...funded, feeAmount: 0n }))).toEqual(
      plain,
    )
    // the exchange took less than was sent for it: the rest is in the user's subaccount, paid by the platform
    const less = netPostings(
      'subaccount_funded',
      POSTING_RULES.subaccount_funded({ ...funded, feeAmount: 400_000n, feeExcess: 600_000n }),
    )
    const ofLess = (a: string) => less.find((l) => l.account === a)?.amount
    expect(ofLess(userTransit(u))).toBe(-50_000_000n)
    expect(ofLess(userSub(u, '7', 'USDC'))).toBe(50_600_000n)
    expect(ofLess(platformHot(EXCHANGE_CHAIN))).toBe(-1_000_000n)
    expect(ofLess(PLATFORM_EXPENSE_OVERHEAD)).toBe(400_000n)
  })

  it("interest: a user's is theirs; the platform's funding subaccount's (no userId) offsets overhead", () => {
    const accrual = { subaccountId: '9', currency: 'USDC', bucketTs: 3600, amount: 57_078n }
    const user = netPostings('interest_accrued', POSTING_RULES.interest_accrued({ ...accrual, userId: u }))
    expect(user).toEqual([
      { account: userIncome(u, 'interest'), currency: 'USDC', amount: -57_078n },
      { account: userSub(u, '9', 'USDC'), currency: 'USDC', amount: 57_078n },
    ])
    const earned = netPostings('interest_accrued', POSTING_RULES.interest_accrued(accrual))
    const of = (legs: readonly { account: string; amount: bigint }[], a: string) =>
      legs.find((l) => l.account === a)?.amount
    expect(earned).toHaveLength(2)
    expect(of(earned, platformHot(EXCHANGE_CHAIN))).toBe(57_078n)
    expect(of(earned, PLATFORM_EXPENSE_OVERHEAD)).toBe(-57_078n)
    // a charge (negative interest) leaves the platform's exchange funds for its overhead
    const charged = netPostings('interest_accrued', POSTING_RULES.interest_accrued({ ...accrual, amount: -12n }))
    expect(of(charged, platformHot(EXCHANGE_CHAIN))).toBe(-12n)
    expect(of(charged, PLATFORM_EXPENSE_OVERHEAD)).toBe(12n)
    // no user account is touched
    expect([...earned, ...charged].every((l) => bearerOf(l.account) === 'platform')).toBe(true)
  })

  it("a reconciliation adjustment moves the user's subaccount, or without a user the platform's exchange funds", () => {
    const adj = { subaccountId: '9', currency: 'USDC', bucket: 60, delta: -5_000_000n }
    expect(
      netPostings('reconciliation_adjustment', POSTING_RULES.reconciliation_adjustment({ ...adj, userId: u })),
    ).toEqual(
      [
        { account: PLATFORM_EXPENSE_RECONCILIATION, currency: 'USDC', amount: 5_000_000n },
        { account: userSub(u, '9', 'USDC'), currency: 'USDC', amount: -5_000_000n },
      ].sort((a, b) => (a.account < b.account ? -1 : 1)),
    )
    const platform = netPostings('reconciliation_adjustment', POSTING_RULES.reconciliation_adjustment(adj))
    expect(platform.find((l) => l.account === platformHot(EXCHANGE_CHAIN))?.amount).toBe(-5_000_000n)
    expect(platform.find((l) => l.account === PLATFORM_EXPENSE_RECONCILIATION)?.amount).toBe(5_000_000n)
    expect(platform).toHaveLength(2)
    // its key names the account it moved, so a platform and a user adjustment of one subaccount id never collide
    expect(eventKey('reconciliation_adjustment', adj)).toBe(`reconcile:9:${platformHot(EXCHANGE_CHAIN)}:60:-5000000`)
    expect(eventKey('interest_accrued', { subaccountId: '9', currency: 'USDC', bucketTs: 3600, amount: 1n })).toBe(
      'accrual:9:interest:3600',
    )
  })

  it('a fill: the user bears the exchange fee, the platform earns its fee', () => {
    const legs = netPostings(
      'option_sold',
      POSTING_RULES.option_sold({
        userId: u,
        subaccountId: '1',
        tradeId: 't',
        instrument: 'i',
        currency: 'USDC',
        premium: 1000n,
        exchangeFee: 10n,
        platformFee: 100n,
      }),
    )
    const of = (a: string) => legs.find((l) => l.account === a)?.amount
    expect(of(userSub(u, '1', 'USDC'))).toBe(890n)
    expect(of(userExpense(u, 'exchange_fee'))).toBe(10n)
    expect(of(PLATFORM_FEE_REVENUE)).toBe(100n)
    expect(bearerOf(userExpense(u, 'exchange_fee'))).toBe('user')
  })

  it('a buy-back fill: the price paid is the user settlement expense, the fee theirs, no platform fee', () => {
    const legs = netPostings(
      'option_sold',
      POSTING_RULES.option_sold({
        userId: u,
        subaccountId: '1',
        tradeId: 't-buy',
        instrument: 'i',
        currency: 'USDC',
        side: 'buy',
        premium: 700n,
        exchangeFee: 12n,
      }),
    )
    const of = (a: string) => legs.find((l) => l.account === a)?.amount
    expect(of(userSub(u, '1', 'USDC'))).toBe(-712n)
    expect(of(userExpense(u, 'settlement'))).toBe(700n)
    expect(of(userExpense(u, 'exchange_fee'))).toBe(12n)
    expect(of(PLATFORM_FEE_REVENUE)).toBeUndefined()
    expect(legs).toHaveLength(3)
    for (const l of legs) expect(bearerOf(l.account)).toBe('user')
  })

  it('gas is always borne by the platform', () => {
    const tx = `0x${'01'.repeat(32)}`
    for (const userId of [u, undefined]) {
      const legs = POSTING_RULES.gas_spent({ chain: 'base', txHash: tx, slot: 1, currency: 'ETH', amount: 7n, userId })
      for (const l of legs) expect(bearerOf(l.account)).toBe('platform')
    }
  })

  it('the gas of a withdrawal that failed on chain, charged to its user, pays the platform back from transit', () => {
    const tx = `0x${'02'.repeat(32)}`
    const payload = { userId: u, withdrawalId: 'w1', chain: 'base', txHash: tx, currency: 'ETH', amount: 9n }
    const legs = POSTING_RULES.withdrawal_gas_charged(payload)
    const of = (a: string) => legs.find((l) => l.account === a)?.amount
    expect(of(userTransit(u))).toBe(-9n)
    expect(of(PLATFORM_FEE_REVENUE)).toBe(9n)
    expect(legs).toHaveLength(2)
    // slot 1 of the failed transaction: its gas_spent holds slot 0
    expect(eventKey('withdrawal_gas_charged', payload)).toBe(`tx:base:${tx}:1`)
  })

  it('netting refuses a set that does not balance', () => {
    expect(() => netPostings('x', [{ account: PLATFORM_FEE_REVENUE, currency: 'USDC', amount: 1n }])).toThrow(
      /sum to zero/,
    )
  })
})
