import { readFileSync } from 'node:fs'
import { type Abi, decodeFunctionData, type Hex, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { PROTOCOL_SCOPES } from './constants'
import { toE18, toUnits } from './decimal'
import {
  ceilToE12,
  encodeDepositCall,
  encodeDepositToNewSubaccountCall,
  encodeSessionKeyData,
  encodeTradeData,
  encodeTradeDataV3,
  encodeTransferSpot,
  encodeTransferSpotExternal,
  encodeWhitelistedRecipients,
  encodeWithdrawalDataV3,
  ONCHAIN_ACTION_MANAGER_ABI,
} from './module-data'
import { goldenCase, PY } from './test-vectors'

const c = PY.c
const usdc = c.USDC_ADDRESS as Hex
const one = '0x0000000000000000000000000000000000000001' as const

describe('module data the v3 testnet returned from its *_debug routes (derive-py@92fa887:tests/test_action_signing/expected.py)', () => {
  it('private/withdraw: amount in native decimals (10 USDC = 10_000_000), fee in e18', () => {
    const data = encodeWithdrawalDataV3({
      asset: usdc,
      maxFeeUsdE18: toE18('1.5'),
      recipient: c.OWNER_ADDRESS as Hex,
      amountUnits: toUnits('10', c.USDC_DECIMALS),
      forceBatch: false,
    })
    expect(data).toBe(c.EXPECTED_WITHDRAW)
  })

  it('private/transfer_spot to an existing subaccount', () => {
    const data = encodeTransferSpot({
      toSubaccountId: BigInt(c.OTHER_SUBACCOUNT_ID),
      newSubaccountManager: 0n,
      asset: usdc,
      subId: BigInt(c.USDC_SUB_ID),
      amountE18: toE18('10'),
      maxFeeUsdE18: toE18('1.5'),
    })
    expect(data).toBe(c.EXPECTED_TRANSFER_SPOT)
  })

  it('private/transfer_spot_external creating a subaccount under manager 1 for another owner', () => {
    const data = encodeTransferSpotExternal({
      toSubaccountId: 0n,
      newSubaccountManager: 1n,
      asset: usdc,
      subId: 0n,
      amountE18: toE18('10'),
      maxFeeUsdE18: toE18('1.5'),
      recipient: one,
    })
    expect(data).toBe(c.EXPECTED_TRANSFER_SPOT_EXTERNAL)
  })

  it('private/set_session_key with the withdraw scope on all subaccounts', () => {
    const data = encodeSessionKeyData({
      sessionKey: one,
      expirySec: BigInt(c.EXPIRY),
      scopes: [PROTOCOL_SCOPES.withdraw],
      subaccountIds: [],
    })
    expect(data).toBe(c.EXPECTED_SESSION_KEY)
  })

  it('private/update_whitelisted_recipients adding one address', () => {
    expect(encodeWhitelistedRecipients([one], [])).toBe(c.EXPECTED_WHITELISTED_RECIPIENTS)
    expect(encodeWhitelistedRecipients([], [one])).not.toBe(c.EXPECTED_WHITELISTED_RECIPIENTS)
  })

  it('private/order: the checked encoder and the raw ABI layout both give the data the server computed', () => {
    const t = {
      asset: c.OPTION_A_ADDRESS as Hex,
      subId: BigInt(c.OPTION_A_SUB_ID),
      limitPriceE18: toE18('100'),
      amountE18: toE18('1'),
      maxFeeE18: toE18('1000'),
      recipientId: BigInt(c.SUBACCOUNT_ID),
      isBid: true,
    }
    expect(encodeTradeDataV3(t)).toBe(c.EXPECTED_TRADE)
    expect(encodeTradeData(t)).toBe(c.EXPECTED_TRADE)
  })
})

describe('derive-ts golden data (derive-ts@a58797b:test/unit/fixtures/golden-vectors.json)', () => {
  it('trade: 1500.5 limit, 2.5 amount, 100 max fee, bid', () => {
    const g = goldenCase('trade')
    const data = encodeTradeDataV3({
      asset: g.inputs.asset_address as Hex,
      subId: 42n,
      limitPriceE18: toE18('1500.5'),
      amountE18: toE18('2.5'),
      maxFeeE18: toE18('100'),
      recipientId: 1n,
      isBid: true,
    })
    expect(data).toBe(g.dataHex)
  })

  it('transfer: 10.5 to subaccount 2 with a 1000 USD fee cap', () => {
    const g = goldenCase('transfer')
    const data = encodeTransferSpot({
      toSubaccountId: 2n,
      newSubaccountManager: 0n,
      asset: g.inputs.asset_address as Hex,
      subId: 0n,
      amountE18: toE18('10.5'),
      maxFeeUsdE18: toE18('1000'),
    })
    expect(data).toBe(g.dataHex)
  })

  it('withdrawal: 123.456789 of a 6-decimal token, 2.5 USD fee cap, no forced batch', () => {
    const g = goldenCase('withdrawal')
    const data = encodeWithdrawalDataV3({
      asset: g.inputs.asset_address as Hex,
      maxFeeUsdE18: toE18('2.5'),
      recipient: g.inputs.recipient as Hex,
      amountUnits: toUnits('123.456789', 6),
      forceBatch: false,
    })
    expect(data).toBe(g.dataHex)
  })
})

describe('set-session-key layout (derive-ts@a58797b:test/unit/session-key-codec.test.ts, computed by the SDK)', () => {
  const word = (hex: string) => hex.padStart(64, '0')

  it('address, expiry, two dynamic arrays: scopes 5/12/15 and subaccounts 1, 7, u64 max', () => {
    const data = encodeSessionKeyData({
      sessionKey: '0x4242424242424242424242424242424242424242',
      expirySec: 1_700_000_000n,
      scopes: [
        PROTOCOL_SCOPES['trade:orderbook:perp'],
        PROTOCOL_SCOPES['transfer:existing_subaccount'],
        PROTOCOL_SCOPES.create_session_key,
      ],
      subaccountIds: [1n, 7n, 2n ** 64n - 1n],
    })
    const expected = [
      '42'.repeat(20),
      '6553f100',
      '80',
      '0100',
      '03',
      '05',
      '0c',
      '0f',
      '03',
      '01',
      '07',
      'f'.repeat(16),
    ]
    expect(data).toBe(`0x${expected.map(word).join('')}`)
  })
})

describe('limits the exchange enforces on signed words', () => {
  const base = {
    toSubaccountId: 2n,
    newSubaccountManager: 0n,
    asset: usdc,
    subId: 0n,
    amountE18: toE18('1'),
    maxFeeUsdE18: toE18('1'),
  }

  it('refuses more than 12 decimal places, which the exchange rejects rather than truncates', () => {
    expect(() => encodeTransferSpot({ ...base, amountE18: toE18('0.0000000000001') })).toThrow(/12 decimal/)
    expect(() => encodeTransferSpot({ ...base, amountE18: toE18('0.000000000001') })).not.toThrow()
  })

  it('rounds a ceiling up to 12 places, never down, and leaves an exact one alone', () => {
    expect(ceilToE12(toE18('0.123456789012000001'))).toBe(toE18('0.123456789013'))
    expect(ceilToE12(toE18('0.123456789012999999'))).toBe(toE18('0.123456789013'))
    expect(ceilToE12(toE18('0.123456789012'))).toBe(toE18('0.123456789012'))
    expect(ceilToE12(0n)).toBe(0n)
  })

  it('refuses zero or negative amounts and prices outside i128', () => {
    expect(() => encodeTransferSpot({ ...base, amountE18: 0n })).toThrow(/positive/)
    const trade = {
      asset: usdc,
      subId: 0n,
      limitPriceE18: 10n ** 39n,
      amountE18: toE18('1'),
      maxFeeE18: 0n,
      recipientId: 1n,
      isBid: false,
    }
    expect(() => encodeTradeDataV3(trade)).toThrow(/i128/)
    expect(() => encodeTradeDataV3({ ...trade, limitPriceE18: toE18('-1.5') })).not.toThrow()
  })
})

describe('L1 deposit calls (OnchainActionManager)', () => {
  const published = JSON.parse(
    readFileSync(new URL('../../test/spec/v3/onchain-action-manager.sepolia.abi.json', import.meta.url), 'utf8'),
  ) as Abi

  it('our ABI entries have the selectors of the published Sepolia implementation ABI', () => {
    for (const ours of ONCHAIN_ACTION_MANAGER_ABI) {
      const theirs = published.find((e) => e.type === 'function' && e.name === ours.name)
      expect(theirs).toBeDefined()
      expect(toFunctionSelector(ours)).toBe(toFunctionSelector(theirs as typeof ours))
    }
  })

  it('deposit and depositToNewSubaccount calldata decode back under the published ABI', () => {
    const owner = c.OWNER_ADDRESS as Hex
    const a = encodeDepositCall(usdc, 25_000_000n, 75723n, owner)
    expect(decodeFunctionData({ abi: published, data: a }).args).toEqual([usdc, 25_000_000n, 75723n, owner])
    const b = encodeDepositToNewSubaccountCall(usdc, 25_000_000n, 1, owner)
    expect(decodeFunctionData({ abi: published, data: b })).toMatchObject({
      functionName: 'depositToNewSubaccount',
      args: [usdc, 25_000_000n, 1, owner],
    })
    expect(() => encodeDepositToNewSubaccountCall(usdc, 1n, 0, owner)).toThrow(/managerId/)
  })
})
