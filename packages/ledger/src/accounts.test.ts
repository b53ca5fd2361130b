import { describe, expect, it } from 'vitest'
import {
  accountLabel,
  bearerOf,
  isUserHolding,
  ownerOf,
  PLATFORM_EXPENSE_OVERHEAD,
  PLATFORM_EXPENSE_RECONCILIATION,
  PLATFORM_FEE_REVENUE,
  parseAccount,
  platformExpenseGas,
  platformGas,
  platformHot,
  USER_HOLDING_PATTERNS,
  userExpense,
  userExternal,
  userIncome,
  userSub,
  userTransit,
} from './accounts'

const u = '0a1b2c3d-0000-4000-8000-000000000001'

describe('account names (spec 2.4)', () => {
  it('builds every shape of the table', () => {
    expect(userSub(u, '42', 'USDC')).toBe(`user:${u}:sub:42:USDC`)
    expect(userTransit(u)).toBe(`user:${u}:transit`)
    expect(userExternal(u)).toBe(`user:${u}:external`)
    expect(userIncome(u, 'premium')).toBe(`user:${u}:income:premium`)
    expect(userExpense(u, 'exchange_fee')).toBe(`user:${u}:expense:exchange_fee`)
    expect(platformGas('base')).toBe('platform:gas:base')
    expect(platformHot('derive')).toBe('platform:hot:derive')
    expect(platformExpenseGas('base')).toBe('platform:expense:gas:base')
    expect(PLATFORM_EXPENSE_OVERHEAD).toBe('platform:expense:overhead')
    expect(PLATFORM_FEE_REVENUE).toBe('platform:fee_revenue')
    expect(PLATFORM_EXPENSE_RECONCILIATION).toBe('platform:expense:reconciliation')
  })

  it('every built name parses back to its parts', () => {
    expect(parseAccount(userSub(u, '42', 'USDC'))).toEqual({
      bearer: 'user',
      userId: u,
      family: 'sub',
      subaccountId: '42',
      currency: 'USDC',
    })
    expect(parseAccount(platformExpenseGas('base'))).toEqual({
      bearer: 'platform',
      family: 'expense_gas',
      chain: 'base',
    })
    expect(parseAccount('user:nope:transit')).toBeUndefined()
    expect(parseAccount('platform:unknown')).toBeUndefined()
  })

  it('reads who bears a cost from the prefix', () => {
    expect(bearerOf(platformExpenseGas('base'))).toBe('platform')
    expect(bearerOf(userExpense(u, 'swap'))).toBe('user')
    expect(ownerOf(userTransit(u))).toBe(u)
    expect(ownerOf(PLATFORM_FEE_REVENUE)).toBeNull()
  })

  it('refuses parts that would make a name ambiguous', () => {
    expect(() => userSub(u, 'a:b', 'USDC')).toThrow()
    expect(() => userTransit('not-a-uuid')).toThrow()
    expect(() => platformGas('Base')).toThrow()
    expect(() => userIncome(u, 'salary' as 'premium')).toThrow()
  })

  it('the holding patterns match transit and subaccounts and nothing else of a user', () => {
    const like = (pattern: string) => new RegExp(`^${pattern.split('%').join('.*')}$`)
    const matches = (a: string) => USER_HOLDING_PATTERNS.some((p) => like(p).test(a))
    for (const a of [userTransit(u), userSub(u, '42', 'USDC')]) {
      expect(matches(a), a).toBe(true)
      expect(isUserHolding(parseAccount(a)), a).toBe(true)
    }
    for (const a of [userExternal(u), userIncome(u, 'premium'), userExpense(u, 'swap'), platformHot('base')]) {
      expect(matches(a), a).toBe(false)
      expect(isUserHolding(parseAccount(a)), a).toBe(false)
    }
    expect(isUserHolding(undefined)).toBe(false)
  })

  it('labels every account as its owner reads it, with no id in it', () => {
    const labels = [
      userTransit(u),
      userExternal(u),
      userSub(u, 'S-42', 'ETH'),
      userIncome(u, 'premium'),
      userExpense(u, 'settlement'),
      platformHot('base'),
      PLATFORM_FEE_REVENUE,
    ].map(accountLabel)
    expect(labels).toEqual([
      'Platform balance',
      'Outside the platform',
      'Exchange subaccount S-42 (ETH)',
      'Income: option premium',
      'Cost: settlement at expiry',
      'Platform hot wallet (base)',
      'Platform fee revenue',
    ])
    for (const l of labels) expect(l).not.toContain(u)
    expect(accountLabel('not an account')).toBe('not an account')
  })
})
