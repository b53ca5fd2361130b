import { concat, keccak256, toHex } from 'viem'
import { privateKeyToAccount, sign } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { recoverV3LoginSigner, signV3Login, v3AuthHeaders, v3WsLoginParams } from './auth'
import { TS } from './test-vectors'

/**
 * No published v3 login vector was found. These values are computed from the SDKs' algorithm
 * (derive-py@92fa887:derive_py/_web3/action_signing/utils.py sign_rest_auth_header: EIP-191
 * personal_sign of the millisecond timestamp string; derive-ts@a58797b:src/auth/auth.ts the same),
 * with the EIP-191 prefix assembled by hand below rather than by the library under test.
 */
describe('v3 session login (computed from the SDKs algorithm)', () => {
  const key = TS.signerPrivateKey
  const owner = '0x5cb67F7829d01d9C75385A920De5E51060663374' as const
  const ts = '1720000000000'

  it('signs "\\x19Ethereum Signed Message:\\n<len>" ‖ the decimal millisecond timestamp', async () => {
    const digest = keccak256(concat([toHex(`\x19Ethereum Signed Message:\n${ts.length}`), toHex(ts)]))
    const proof = await signV3Login(owner, key, 1_720_000_000_000)
    expect(proof.timestamp).toBe(ts)
    expect(proof.signature).toBe(await sign({ hash: digest, privateKey: key, to: 'hex' }))
    expect(proof.signature).toBe(
      '0x6f0668e90d9c0b54ac9449660d764c19c91087df0726f1f16dbf020b18a1685a4e1733bf5fcd9b876e73023c42affc22c89097083a9de0b9f95f6343d22adbe91c',
    )
  })

  it('REST sends X-DeriveWallet/X-DeriveTimestamp/X-DeriveSignature; WS sends the timestamp as a number', async () => {
    const proof = await signV3Login(owner.toLowerCase() as `0x${string}`, key, 1_720_000_000_000.9)
    expect(v3AuthHeaders(proof)).toEqual({
      'X-DeriveWallet': owner,
      'X-DeriveTimestamp': ts,
      'X-DeriveSignature': proof.signature,
    })
    expect(v3WsLoginParams(proof)).toEqual({ wallet: owner, timestamp: 1_720_000_000_000, signature: proof.signature })
  })

  it('the wallet is the owner while the signer may be a session key; recovery names the signer', async () => {
    const proof = await signV3Login(owner, key, 1_720_000_000_000)
    expect(await recoverV3LoginSigner(proof.timestamp, proof.signature)).toBe(privateKeyToAccount(key).address)
    expect(await recoverV3LoginSigner('1720000000001', proof.signature)).not.toBe(privateKeyToAccount(key).address)
  })
})
