/**
 * The OnchainActionManager fragments the service encodes against every publication of them: the kept
 * implementation ABI (from before the testnet redeploy) and the newer declarations in Derive's SDKs,
 * kept with their sources in spec/v3/published-fragments.json (docs/exchange-v3.md "Contracts").
 * No ABI of the redeployed implementations is published; what only the kept ABI declares is checked on
 * the live contract at start instead.
 */
import { readFileSync } from 'node:fs'
import { type Abi, type AbiFunction, decodeFunctionData, parseAbiItem, toFunctionSelector } from 'viem'
import { describe, expect, it } from 'vitest'
import { l1SetSessionKeyCall } from '../src/client/owner-actions'
import {
  encodeDepositCall,
  encodeDepositToNewSubaccountCall,
  ONCHAIN_ACTION_MANAGER_ABI,
} from '../src/protocol/module-data'

interface Published {
  signature: string
  sources: string[]
  inKeptAbi: boolean
  usedBy: string | null
}

const read = (rel: string) => readFileSync(new URL(rel, import.meta.url), 'utf8')
const published = (JSON.parse(read('./spec/v3/published-fragments.json')) as { fragments: Published[] }).fragments
const kept = JSON.parse(read('./spec/v3/onchain-action-manager.sepolia.abi.json')) as Abi
const fragment = (name: string) => {
  const p = published.find((f) => (parseAbiItem(f.signature) as AbiFunction).name === name)
  if (!p) throw new Error(`no published fragment ${name}`)
  return parseAbiItem(p.signature) as AbiFunction
}

const asset = '0x6879287835A86F50f784313dBEd5E5cCC5bb8481'
const owner = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

describe("the OnchainActionManager fragments Derive's SDKs publish", () => {
  it('agree with the kept implementation ABI where it has them (selector and mutability)', () => {
    for (const p of published) {
      const f = parseAbiItem(p.signature) as AbiFunction
      const k = kept.find((e): e is AbiFunction => e.type === 'function' && e.name === f.name)
      if (!p.inKeptAbi) {
        expect(k).toBeUndefined()
        continue
      }
      expect(k).toBeDefined()
      expect(toFunctionSelector(f)).toBe(toFunctionSelector(k as AbiFunction))
      expect(f.stateMutability).toBe((k as AbiFunction).stateMutability)
    }
  })

  it("are the service's own entries (but publicHeadIndex, of the kept ABI only), and its calldata decodes under them", () => {
    const names = published.map((p) => (parseAbiItem(p.signature) as AbiFunction).name)
    // publicHeadIndex is only in the kept ABI: the worker's check at start calls it on the live contract
    expect(ONCHAIN_ACTION_MANAGER_ABI.filter((ours) => !names.includes(ours.name)).map((f) => f.name)).toEqual([
      'publicHeadIndex',
    ])
    for (const ours of ONCHAIN_ACTION_MANAGER_ABI.filter((f) => names.includes(f.name)))
      expect(toFunctionSelector(ours)).toBe(toFunctionSelector(fragment(ours.name)))
    const deposit = encodeDepositCall(asset, 25_000_000n, 75_723n, owner)
    expect(decodeFunctionData({ abi: [fragment('deposit')], data: deposit }).args).toEqual([
      asset,
      25_000_000n,
      75_723n,
      owner,
    ])
    const open = encodeDepositToNewSubaccountCall(asset, 25_000_000n, 1, owner)
    expect(decodeFunctionData({ abi: [fragment('depositToNewSubaccount')], data: open }).args).toEqual([
      asset,
      25_000_000n,
      1,
      owner,
    ])
  })

  it("the owner's L1 session-key registration is the published payable submit(51, data)", () => {
    const submit = fragment('submit')
    expect(submit.stateMutability).toBe('payable')
    const call = l1SetSessionKeyCall({ key: owner, expirySec: 2_000_000_000, scopes: ['trade:orderbook:option'] })
    const { functionName, args } = decodeFunctionData({ abi: [submit], data: call })
    expect(functionName).toBe('submit')
    expect(args[0]).toBe(51n)
  })

  it('every fragment the service uses names where; the one it does not use is the only one absent from the kept ABI', () => {
    expect(published.filter((p) => p.usedBy).map((p) => p.inKeptAbi)).toEqual([true, true, true])
    expect(published.filter((p) => !p.usedBy).map((p) => (parseAbiItem(p.signature) as AbiFunction).name)).toEqual([
      'withdraw',
    ])
  })
})
