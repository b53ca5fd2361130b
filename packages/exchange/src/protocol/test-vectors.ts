/**
 * Test-only loader of the published vectors kept in packages/exchange/test/spec/v3/vectors
 * (sources in test/spec/v3/SOURCE.md).
 */
import type { Address, Hex } from 'viem'
import derivePy from '../../test/spec/v3/vectors/derive-py-expected.json' with { type: 'json' }
import deriveTs from '../../test/spec/v3/vectors/derive-ts-golden-vectors.json' with { type: 'json' }

/** derivexyz/derive-py@92fa887b25f0657f881ad2c354a4a94ce7ed969f:tests/test_action_signing/expected.py as JSON. */
export const PY = {
  ...derivePy,
  key: derivePy.session_key_private_key_published_test_key as Hex,
  c: derivePy.constants as typeof derivePy.constants & Record<string, unknown>,
}

export interface GoldenCase {
  name: string
  inputs: Record<string, unknown> & {
    subaccount_id: number
    nonce: string
    signature_expiry_sec: number
    module: Address
    owner: Address
    signer: Address
  }
  dataHex: Hex
  actionHash: Hex
  typedDataHash: Hex
  signature: Hex
}

/** derivexyz/derive-ts@a58797b069c7f125c71e9a57963633580a5bfe04:test/unit/fixtures/golden-vectors.json. */
export const TS = deriveTs as unknown as {
  domainSeparator: Hex
  actionTypehash: Hex
  signerPrivateKey: Hex
  signerAddress: Address
  cases: GoldenCase[]
}

export function goldenCase(name: string): GoldenCase {
  const c = TS.cases.find((x) => x.name === name)
  if (!c) throw new Error(`golden vector ${name} missing`)
  return c
}
