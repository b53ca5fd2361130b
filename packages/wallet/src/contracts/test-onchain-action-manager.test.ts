import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type AbiEvent, type AbiFunction, toEventSelector, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { compileTestOnchainActionManager } from '../../scripts/solc'
import {
  testOnchainActionManagerAbi,
  testOnchainActionManagerBytecode,
  testOnchainActionManagerCompilerVersion,
} from './test-onchain-action-manager.gen'

/** The verified ABI of Derive's Sepolia OnchainActionManager, kept as test data with its source (SOURCE.md there). */
const PUBLISHED = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '../../../exchange/test/spec/v3/onchain-action-manager.sepolia.abi.json'),
    'utf8',
  ),
) as (AbiFunction | AbiEvent | { type: string; name?: string })[]

describe('the committed TestOnchainActionManager artifact', () => {
  it('is what the pinned solc makes of contracts/TestOnchainActionManager.sol (else: pnpm --filter @wh/wallet compile:contracts)', () => {
    const fresh = compileTestOnchainActionManager()
    expect(testOnchainActionManagerCompilerVersion).toBe(fresh.compilerVersion)
    expect(testOnchainActionManagerAbi).toEqual(fresh.abi)
    expect(testOnchainActionManagerBytecode).toBe(fresh.bytecode)
  }, 60_000)

  it('has the published deposit entry points, type codes, queue readers and event, with the same signatures', () => {
    const ours = new Set(
      testOnchainActionManagerAbi.flatMap((e) =>
        e.type === 'function'
          ? [toFunctionSelector(e as AbiFunction)]
          : e.type === 'event'
            ? [toEventSelector(e as AbiEvent)]
            : [],
      ),
    )
    const wanted = [
      'deposit',
      'depositToNewSubaccount',
      'DEPOSIT_TYPE',
      'DEPOSIT_TO_NEW_SUBACCOUNT_TYPE',
      'publicHeadIndex',
      'publicActionsAcc',
      'PublicActionQueued',
    ]
    for (const name of wanted) {
      const e = PUBLISHED.find((x) => x.name === name)
      expect(e, `${name} in the published ABI`).toBeDefined()
      const selector = e?.type === 'event' ? toEventSelector(e as AbiEvent) : toFunctionSelector(e as AbiFunction)
      expect(ours.has(selector), name).toBe(true)
    }
    // the event's indexed fields are the published ones (a log filter depends on them)
    const published = PUBLISHED.find((x) => x.name === 'PublicActionQueued') as AbiEvent
    const event = testOnchainActionManagerAbi.find((e) => e.type === 'event') as AbiEvent
    expect(event.inputs.map((i) => [i.name, i.type, i.indexed])).toEqual(
      published.inputs.map((i) => [i.name, i.type, i.indexed]),
    )
  })
})
