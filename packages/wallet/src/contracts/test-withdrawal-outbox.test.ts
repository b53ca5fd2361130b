import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { compileTestWithdrawalOutbox } from '../../scripts/solc'
import {
  testWithdrawalOutboxAbi,
  testWithdrawalOutboxBytecode,
  testWithdrawalOutboxCompilerVersion,
} from './test-withdrawal-outbox'

/** The verified ABI of Derive's Sepolia WithdrawalOutbox, kept as test data with its source (SOURCE.md there). */
const PUBLISHED = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../../exchange/test/spec/v3/withdrawal-outbox.sepolia.abi.json'), 'utf8'),
) as (AbiFunction | AbiEvent | { type: string; name?: string })[]

const selectorOf = (e: AbiFunction | AbiEvent | { type: string }) =>
  e.type === 'event' ? toEventSelector(e as AbiEvent) : toFunctionSelector(e as AbiFunction)

describe('the committed TestWithdrawalOutbox artifact', () => {
  it('is what the pinned solc makes of contracts/TestWithdrawalOutbox.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const fresh = compileTestWithdrawalOutbox()
    expect(testWithdrawalOutboxCompilerVersion).toBe(fresh.compilerVersion)
    expect(testWithdrawalOutboxAbi).toEqual(fresh.abi)
    expect(testWithdrawalOutboxBytecode).toBe(fresh.bytecode)
  }, 60_000)

  it('has the published payout entry, readers and events, with the same signatures and indexed fields', () => {
    const ours = new Map(
      testWithdrawalOutboxAbi.filter((e) => e.type === 'function' || e.type === 'event').map((e) => [selectorOf(e), e]),
    )
    const wanted = [
      'executeWithdrawals',
      'consumed',
      'registerAsset',
      'assetConfig',
      'VERIFIABLE_APP',
      'WithdrawalPaid',
      'WithdrawalSkipped',
      'AssetRegistered',
    ]
    for (const name of wanted) {
      const e = PUBLISHED.find((x) => x.name === name)
      expect(e, `${name} in the published ABI`).toBeDefined()
      const mine = ours.get(selectorOf(e as AbiFunction))
      expect(mine, name).toBeDefined()
      if (e?.type === 'event')
        expect(
          (mine as AbiEvent).inputs.map((i) => [i.name, i.type, i.indexed]),
          name,
        ).toEqual((e as AbiEvent).inputs.map((i) => [i.name, i.type, i.indexed]))
    }
  })
})
