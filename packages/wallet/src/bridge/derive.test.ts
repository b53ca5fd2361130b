/**
 * The live adapter's pure parts: the calldata it signs (selectors and argument words against the
 * Socket vault ABI read from derive_client and the Socket Vault ABI), the fee margin, the route
 * table, and the refusals of `assertReady`.
 */
import {
  type Address,
  decodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  keccak256,
  slice,
  toBytes,
  toFunctionSelector,
} from 'viem'
import { describe, expect, it } from 'vitest'
import { buildChainRegistry, CHAIN_NAMES, type ChainName } from '../chains'
import type { OutboxDeps } from '../outbox'
import { encodeApprove } from './approve-call'
import {
  DERIVE_MSG_GAS_LIMIT,
  DeriveBridgeAdapter,
  encodeDeriveDeposit,
  messageFeeWithMargin,
  socketVaultAbi,
} from './derive'
import { DERIVE_CHAIN_ID, DERIVE_USDC_ROUTES } from './derive-routes'
import { BridgeUnavailableError } from './types'

const RECEIVER = getAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed')
const CONNECTOR = getAddress('0x200AF8FCdD5246D70B369A98143Ac8930A077B7A')
const selector = (signature: string) => slice(keccak256(toBytes(signature)), 0, 4)
const word = (data: Hex, i: number) => slice(data, 4 + 32 * i, 4 + 32 * (i + 1))
const pad = (hex: string) => `0x${hex.replace(/^0x/, '').toLowerCase().padStart(64, '0')}`

describe('the Derive deposit calldata', () => {
  it('calls depositToAppChain(address,uint256,uint256,address) with receiver, amount, msg gas limit and connector, one word each', () => {
    const data = encodeDeriveDeposit({
      receiver: RECEIVER,
      amountBaseUnits: 350_000_000n,
      msgGasLimit: DERIVE_MSG_GAS_LIMIT,
      connector: CONNECTOR,
    })
    expect(slice(data, 0, 4)).toBe(selector('depositToAppChain(address,uint256,uint256,address)'))
    expect((data.length - 2) / 2).toBe(4 + 4 * 32)
    expect(word(data, 0)).toBe(pad(RECEIVER))
    expect(word(data, 1)).toBe(pad(350_000_000n.toString(16)))
    expect(word(data, 2)).toBe(pad(200_000n.toString(16)))
    expect(word(data, 3)).toBe(pad(CONNECTOR))
    expect(decodeFunctionData({ abi: socketVaultAbi, data }).args).toEqual([
      RECEIVER,
      350_000_000n,
      200_000n,
      CONNECTOR,
    ])
  })

  it('the vault ABI is the old-style Socket vault: payable deposit, two-argument fee quote, lock limit, token__', () => {
    const fn = (name: string) => socketVaultAbi.find((e) => e.type === 'function' && e.name === name)
    expect(toFunctionSelector(fn('depositToAppChain') as never)).toBe(
      selector('depositToAppChain(address,uint256,uint256,address)'),
    )
    expect(fn('depositToAppChain')).toMatchObject({ stateMutability: 'payable' })
    expect(toFunctionSelector(fn('getMinFees') as never)).toBe(selector('getMinFees(address,uint256)'))
    expect(toFunctionSelector(fn('getCurrentLockLimit') as never)).toBe(selector('getCurrentLockLimit(address)'))
    expect(toFunctionSelector(fn('token__') as never)).toBe(selector('token__()'))
    const event = socketVaultAbi.find((e) => e.type === 'event')
    expect(event && 'inputs' in event && event.inputs.map((i) => `${i.type} ${i.name}`)).toEqual([
      'address connector',
      'address depositor',
      'address receiver',
      'uint256 depositAmount',
    ])
  })

  it('approves the vault with the standard ERC-20 approve(address,uint256)', () => {
    const data = encodeApprove(DERIVE_USDC_ROUTES.routes.ethereum?.vault as Address, 100_000_000_000n)
    expect(slice(data, 0, 4)).toBe('0x095ea7b3')
    expect(decodeFunctionData({ abi: erc20Abi, data }).args).toEqual([
      DERIVE_USDC_ROUTES.routes.ethereum?.vault,
      100_000_000_000n,
    ])
  })

  it('pays the quote plus the margin, rounded up, and never less than the quote', () => {
    expect(messageFeeWithMargin(1_000_000_000_000n, 1_000n)).toBe(1_100_000_000_000n)
    expect(messageFeeWithMargin(1n, 1_000n)).toBe(2n)
    expect(messageFeeWithMargin(0n, 1_000n)).toBe(0n)
    expect(messageFeeWithMargin(12_345n, 0n)).toBe(12_345n)
  })
})

describe('the route table', () => {
  const registry = buildChainRegistry({
    rpcUrls: { ethereum: 'http://x', optimism: 'http://x', base: 'http://x', arbitrum: 'http://x' },
  } as never)
  const entries = Object.entries(DERIVE_USDC_ROUTES.routes) as [
    ChainName,
    NonNullable<(typeof DERIVE_USDC_ROUTES.routes)[ChainName]>,
  ][]

  it('delivers to Derive Chain (957) and covers the four deposit chains', () => {
    expect(DERIVE_USDC_ROUTES.destinationChainId).toBe(DERIVE_CHAIN_ID)
    expect(DERIVE_CHAIN_ID).toBe(957)
    expect(entries.map(([c]) => c).sort()).toEqual([...CHAIN_NAMES].sort())
  })

  it("matches the registry's chain ids and Circle USDC contracts, with checksummed, distinct addresses and a source for each", () => {
    const all: string[] = []
    for (const [chain, r] of entries) {
      const info = registry.get(chain)
      expect(r.chainId).toBe(info?.chainId)
      expect(r.usdc).toBe(info?.tokens.find((t) => t.symbol === 'USDC')?.contract)
      for (const a of [r.usdc, r.vault, r.connector]) expect(getAddress(a)).toBe(a)
      expect(new Set([r.usdc, r.vault, r.connector]).size).toBe(3)
      expect(r.sources.vault.length).toBeGreaterThan(10)
      expect(r.sources.connector.length).toBeGreaterThan(10)
      all.push(r.vault, r.connector)
    }
    expect(new Set(all).size).toBe(all.length)
  })

  it('pins the vault and connector of each chain', () => {
    expect(Object.fromEntries(entries.map(([c, r]) => [c, [r.vault, r.connector]]))).toEqual({
      ethereum: ['0x6D303CEE7959f814042D31E0624fB88Ec6fbcC1d', '0x200AF8FCdD5246D70B369A98143Ac8930A077B7A'],
      optimism: ['0xDEf0bfBdf7530C75AB3C73f8d2F64d9eaA7aA98e', '0xfd76d8b79C2E2c86EA0814e92D5cA0e4E8096c13'],
      base: ['0x4e798659b9846F1da7B6D6B5d09d581270aB6FEC', '0x57B03E14d409ADC7fAb6CFc44b5886CAD2D5f02b'],
      arbitrum: ['0x5e027ad442e031424b5a2C0ad6f656662Be32882', '0x17Fc4c7ea8267044b6D0ACC17a6C049Bed6F8B21'],
    })
  })
})

describe('assertReady', () => {
  const mainnet = buildChainRegistry({
    rpcUrls: { ethereum: 'http://x', optimism: 'http://x', base: 'http://x', arbitrum: 'http://x' },
  } as never)
  const outbox = (registry = mainnet) => ({ sql: {}, clients: new Map(), registry }) as unknown as OutboxDeps
  const adapter = (o: Partial<ConstructorParameters<typeof DeriveBridgeAdapter>[0]> = {}) =>
    new DeriveBridgeAdapter({ outbox: outbox(), receiver: RECEIVER, exchangeChainId: DERIVE_CHAIN_ID, ...o })

  it('accepts every chain of the live table on mainnet', () => {
    for (const chain of CHAIN_NAMES) expect(() => adapter().assertReady(chain)).not.toThrow()
  })

  it('refuses a chain whose addresses are not in the table', () => {
    const routes = { destinationChainId: DERIVE_CHAIN_ID, routes: { ethereum: DERIVE_USDC_ROUTES.routes.ethereum } }
    const a = adapter({ routes: routes as never })
    expect(() => a.assertReady('ethereum')).not.toThrow()
    expect(() => a.assertReady('base')).toThrow(BridgeUnavailableError)
    expect(() => a.assertReady('base')).toThrow(/not verified for base/)
  })

  it('refuses an exchange chain other than the vaults destination (a testnet, the local run)', () => {
    expect(() => adapter({ exchangeChainId: 901 }).assertReady('ethereum')).toThrow(
      /not verified for exchange chain 901/,
    )
  })

  it('refuses a registry whose chain id or USDC differs from the route (a local node, bridged USDC.e)', () => {
    const local = buildChainRegistry(
      { rpcUrls: { ethereum: 'http://x', optimism: 'http://x', base: 'http://x', arbitrum: 'http://x' } } as never,
      { arbitrum: { chainId: 31337 }, optimism: { usdc: '0x7F5c764cBc14f9669B88837ca1490cCa17c31607' } },
    )
    const a = adapter({ outbox: outbox(local) })
    expect(() => a.assertReady('arbitrum')).toThrow(/not verified for arbitrum as configured/)
    expect(() => a.assertReady('optimism')).toThrow(/not verified for optimism as configured/)
    expect(() => a.assertReady('ethereum')).not.toThrow()
  })
})
