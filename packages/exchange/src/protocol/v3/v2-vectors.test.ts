import type { Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { actionHash } from '../action'
import { DERIVE_TESTNET, domainSeparator } from '../constants'
import { encodeTradeData } from '../module-data'
import { goldenCase, PY } from './test-vectors'

/**
 * Published vectors replayed against the v2 code the client still uses: the Action struct hash
 * and the trade layout did not change between v2 and v3, so these vectors prove the old code too.
 */
describe('published vectors against the v2 protocol code', () => {
  it('v2 actionHash reproduces every derive-ts golden action hash (derive-ts@a58797b:test/unit/fixtures/golden-vectors.json)', () => {
    for (const name of ['envelope-minimal', 'envelope-large', 'trade', 'transfer', 'withdrawal']) {
      const g = goldenCase(name)
      const a = {
        subaccountId: BigInt(g.inputs.subaccount_id),
        nonce: BigInt(g.inputs.nonce),
        module: g.inputs.module,
        data: g.dataHex,
        expirySec: BigInt(g.inputs.signature_expiry_sec),
        owner: g.inputs.owner,
        signer: g.inputs.signer,
      }
      expect(actionHash(a), name).toBe(g.actionHash)
    }
  })

  it('v2 encodeTradeData reproduces the server-captured trade data (derive-py@92fa887:tests/test_action_signing/expected.py)', () => {
    const c = PY.c
    const data = encodeTradeData({
      asset: c.OPTION_A_ADDRESS as Hex,
      subId: BigInt(c.OPTION_A_SUB_ID),
      limitPriceE18: 100n * 10n ** 18n,
      amountE18: 10n ** 18n,
      maxFeeE18: 1000n * 10n ** 18n,
      recipientId: BigInt(c.SUBACCOUNT_ID),
      isBid: true,
    })
    expect(data).toBe(c.EXPECTED_TRADE)
  })

  it('v2 testnet domain separator equals the one in derivexyz/v2-action-signing-python@969c194:tests/conftest.py', () => {
    expect(domainSeparator(901, DERIVE_TESTNET.matching)).toBe(
      '0x9bcf4dc06df5d8bf23af818d5716491b995020f377d3b7b64c29ed14e3dd1105',
    )
  })
})
