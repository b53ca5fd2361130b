import { getAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import { PROTOCOL_SCOPES, V3_TESTNET_CONTRACTS, V3_TESTNET_EARLIER_CONTRACTS } from './constants'
import { toE18 } from './decimal'
import { DERIVE_FEE_SCHEDULE, orderMaxFeeFloorE18 } from './fee-schedule'
import { orderScopeOf, scopeCovers, scopeOfCode, scopeOfWire, scopesAllow, scopesWithin, scopeWire } from './scopes'

describe('session-key scopes (the tree Derive checks)', () => {
  it('a branch covers what is under it and nothing beside it', () => {
    expect(scopeCovers('admin', 'withdraw')).toBe(true)
    expect(scopeCovers('trade:all', 'trade:rfq:option')).toBe(true)
    expect(scopeCovers('trade:orderbook:all', 'trade:orderbook:option')).toBe(true)
    expect(scopeCovers('trade:orderbook:option', 'trade:orderbook:perp')).toBe(false)
    expect(scopeCovers('trade:orderbook:all', 'trade:rfq:option')).toBe(false)
    expect(scopeCovers('transfer:all', 'transfer:new_subaccount')).toBe(true)
    expect(scopeCovers('transfer:existing_subaccount', 'transfer:new_subaccount')).toBe(false)
    expect(scopeCovers('transfer:all', 'withdraw')).toBe(false)
    expect(scopesAllow(['trade:orderbook:option', 'transfer:existing_subaccount'], 'withdraw')).toBe(false)
    expect(scopesAllow([], 'trade:orderbook:option')).toBe(false)
  })

  it('a child key stays within its creator', () => {
    expect(scopesWithin(['trade:orderbook:option'], ['trade:all'])).toBe(true)
    expect(scopesWithin(['trade:orderbook:option', 'withdraw'], ['trade:all'])).toBe(false)
  })

  it('wire strings and codes name the same scopes (derive-ts spells 15 set_session_key, derive-py create_session_key)', () => {
    for (const [scope, code] of Object.entries(PROTOCOL_SCOPES)) {
      expect(scopeOfCode(code)).toBe(scope)
      expect(scopeOfWire(scopeWire(scope as keyof typeof PROTOCOL_SCOPES))).toBe(scope)
    }
    expect(scopeWire('create_session_key')).toBe('set_session_key')
    expect(scopeOfWire('create_session_key')).toBe('create_session_key')
    expect(scopeOfWire('trade:orderbook:everything')).toBeUndefined()
    expect(orderScopeOf('option')).toBe('trade:orderbook:option')
    expect(orderScopeOf('erc20')).toBe('trade:orderbook:spot')
  })
})

describe("an order's max fee floor (derive-ts: 2 × taker rate × max(index, limit) + base fee)", () => {
  const option = { takerRateE18: DERIVE_FEE_SCHEDULE.option.takerRate, baseFeeE18: DERIVE_FEE_SCHEDULE.option.baseFee }
  it('on the index when it is the larger, on the limit price otherwise', () => {
    // 2 × 0.0004 × 3000 + 0.5
    expect(orderMaxFeeFloorE18(option, toE18('3000'), toE18('50'))).toBe(toE18('2.9'))
    // 2 × 0.0004 × 4000 + 0.5
    expect(orderMaxFeeFloorE18(option, toE18('3000'), toE18('4000'))).toBe(toE18('3.7'))
  })
})

describe('the testnet contracts after the September 2026 redeploy', () => {
  it('are the set derive-rs 0.1.19 publishes, checksummed, none of them an earlier one', () => {
    // derive-rs 0.1.19 src/constants.rs TESTNET_* (docs/exchange-v3.md "Contracts")
    expect(V3_TESTNET_CONTRACTS).toEqual({
      actionManager: '0xd3625eCf97E5554C62A48Ac1c9284C9dCeFceB68',
      vapp: '0x1573bde26338A9E6AA358638679A796c81E33246',
      withdrawalOutbox: '0xFbB62CE2BbFdFdc8a60DDC22115aC29cf91B4566',
      spotVault: '0x3FB79aafCD401CDD19e3d729241545955DDE0D48',
    })
    for (const a of Object.values(V3_TESTNET_CONTRACTS)) expect(getAddress(a)).toBe(a)
    const earlier = Object.values(V3_TESTNET_EARLIER_CONTRACTS).flat()
    for (const a of earlier) expect(getAddress(a)).toBe(a)
    for (const a of Object.values(V3_TESTNET_CONTRACTS)) expect(earlier).not.toContain(a)
  })
})
