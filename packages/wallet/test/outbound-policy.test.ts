/**
 * The outbound policy against a real anvil (docs/hostile-world.md "One policy for every outbound
 * transaction"): the gas budget of ETH to code measured against a Safe-like wallet and an
 * ERC-4337-style account, ETH to an address without code signed at exactly 21,000 with no dry run,
 * dry runs made as the real transaction (fee fields, the real sender, the cap as their gas), caps
 * within the block's gas limit, and node errors read as the row's, the sender's or unknown.
 */
import { type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hex,
  http,
  parseEther,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testErc1967ProxyAbi, testErc1967ProxyBytecode } from '../src/contracts/test-erc1967-proxy.gen'
import { testErc4337AccountAbi, testErc4337AccountBytecode } from '../src/contracts/test-erc4337-account.gen'
import { testSafeProxyAbi, testSafeProxyBytecode } from '../src/contracts/test-safe-proxy.gen'
import { testSafeSingletonAbi, testSafeSingletonBytecode } from '../src/contracts/test-safe-singleton.gen'
import {
  CALL_GAS_CAPS,
  ETH_TO_CODE_GAS_BUDGET,
  OutboundFeeAboveLimitError,
  OutboundGasAboveCapError,
  OutboundSenderShortError,
  outboundFailureOf,
  type PlanRequest,
  planGas,
  probeChain,
  type Rpc,
  rpcOf,
} from '../src/index'

const funder = privateKeyToAccount(TEST_PRIVATE_KEYS[0])
const hot = privateKeyToAccount(TEST_PRIVATE_KEYS[1]).address
const fresh = () => privateKeyToAccount(generatePrivateKey()).address

/** Destinations as bytecode (docs/hostile-world.md "Destinations, kind by kind"). */
const CODE = {
  /** REVERT(0, 0) */
  reverts: '0x60006000fd',
  /** INVALID */
  invalid: '0xfe',
  /** JUMPDEST PUSH1 0 JUMP: burns every gas it is given */
  burns: '0x5b600056',
  /** GASPRICE ISZERO PUSH1 9 JUMPI PUSH1 0 DUP1 REVERT JUMPDEST STOP: accepts only at gas price 0 */
  gaspriceZero: '0x3a15600957600080fd5b00',
} as const satisfies Record<string, Hex>

/** ORIGIN PUSH20 x EQ PUSH1 0x1e JUMPI PUSH1 0 DUP1 REVERT JUMPDEST STOP: accepts only when tx.origin is `x` */
const originIs = (x: Address): Hex => `0x3273${x.slice(2).toLowerCase()}14601e57600080fd5b00`

/** An Rpc that counts every call and keeps the eth_estimateGas requests it saw. */
function counting(rpc: Rpc) {
  const calls: { method: string; params?: unknown }[] = []
  return {
    calls,
    rpc: {
      request: (args: { method: string; params?: unknown }, options?: { retryCount?: number }) => {
        calls.push(args)
        return rpc.request(args, options)
      },
    } satisfies Rpc,
  }
}

describe('the outbound policy on a real chain', () => {
  let chain: RunningChain
  let rpc: Rpc
  let anvil: ReturnType<typeof createTestClient>
  let deploy: (abi: readonly unknown[], bytecode: Hex, args?: readonly unknown[]) => Promise<Address>
  let publicClient: ReturnType<typeof createPublicClient>

  beforeAll(async () => {
    chain = await startChain({ chainId: 901 })
    const transport = http(chain.rpcUrl)
    publicClient = createPublicClient({ transport })
    rpc = rpcOf(publicClient)
    anvil = createTestClient({ mode: 'anvil', transport })
    const wallet = createWalletClient({ account: funder, transport })
    deploy = async (abi, bytecode, args = []) => {
      const hash = await wallet.deployContract({ chain: null, abi: abi as never, bytecode, args: args as never })
      return (await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })).contractAddress as Address
    }
  })
  afterAll(() => chain?.stop())

  const eth = (to: Address, over: Partial<PlanRequest> = {}): PlanRequest => ({
    chain: 'base',
    purpose: 'withdrawal',
    from: hot,
    call: { to, value: parseEther('0.01'), data: undefined },
    kind: 'transfer',
    native: true,
    ...over,
  })
  const withCode = async (code: Hex) => {
    const at = fresh()
    await anvil.setCode({ address: at, bytecode: code })
    return at
  }

  it('ETH to an address without code is signed at exactly 21,000 gas, with no dry run', async () => {
    const c = counting(rpc)
    const plan = await planGas(c.rpc, eth(fresh()))
    expect(plan.gasLimit).toBe(21_000n)
    expect(plan.toHasCode).toBe(false)
    expect(c.calls.map((x) => x.method)).not.toContain('eth_estimateGas')
  })

  it('the budget of ETH to code fits a Safe v1.4.1-like wallet and an ERC-4337 account with room, measured', async () => {
    const singleton = await deploy(testSafeSingletonAbi, testSafeSingletonBytecode)
    const safe = await deploy(testSafeProxyAbi, testSafeProxyBytecode, [singleton])
    const account = await deploy(testErc1967ProxyAbi, testErc1967ProxyBytecode, [
      await deploy(testErc4337AccountAbi, testErc4337AccountBytecode, [funder.address]),
    ])
    const wallet = createWalletClient({ account: funder, transport: http(chain.rpcUrl) })
    for (const [to, measured] of [
      [safe, 27_301n],
      [account, 25_838n],
    ] as const) {
      const plan = await planGas(rpc, eth(to))
      expect(plan.toHasCode).toBe(true)
      expect(plan.capGas).toBe(ETH_TO_CODE_GAS_BUDGET)
      // what a real payment uses: the figure docs/hostile-world.md gives
      const hash = await wallet.sendTransaction({ chain: null, to, value: parseEther('0.01'), gas: plan.gasLimit })
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
      expect(receipt.status).toBe('success')
      expect(receipt.gasUsed).toBe(measured)
      // the budget is well above what these wallets need, and the signed limit within it
      expect(measured * 3n).toBeLessThan(ETH_TO_CODE_GAS_BUDGET * 2n)
      expect(plan.gasLimit).toBeLessThanOrEqual(ETH_TO_CODE_GAS_BUDGET)
    }
  })

  it('a destination that burns gas is refused before signing, and its dry run never searched above the budget', async () => {
    const burner = await withCode(CODE.burns)
    const c = counting(rpc)
    const err = await planGas(c.rpc, eth(burner)).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(OutboundGasAboveCapError)
    expect(outboundFailureOf(err)).toEqual({ kind: 'row', reason: 'gas-above-cap' })
    const estimates = c.calls.filter((x) => x.method === 'eth_estimateGas')
    expect(estimates).toHaveLength(1)
    const [request] = (estimates[0]?.params ?? []) as [{ gas: Hex; maxFeePerGas?: Hex; from: Address }]
    expect(BigInt(request.gas)).toBe(ETH_TO_CODE_GAS_BUDGET)
    expect(request.maxFeePerGas).toBeDefined()
    expect(request.from).toBe(hot)
  })

  it('dry runs carry the fee fields: a contract that accepts only at gas price 0 is refused as the chain will refuse it', async () => {
    const trap = await withCode(CODE.gaspriceZero)
    // the old dry run (no fee fields: gas price 0) passes it…
    await expect(publicClient.estimateGas({ account: hot, to: trap, value: parseEther('0.01') })).resolves.toBeTypeOf(
      'bigint',
    )
    // …the policy's does not: it runs at the price the transaction will pay
    const err = await planGas(rpc, eth(trap)).catch((e: unknown) => e)
    expect(outboundFailureOf(err)).toEqual({ kind: 'row', reason: 'reverts' })
  })

  it('dry runs come from the real sender: a contract that accepts only one tx.origin is judged as the hot wallet', async () => {
    const someoneElse = fresh()
    expect(outboundFailureOf(await planGas(rpc, eth(await withCode(originIs(someoneElse)))).catch((e) => e))).toEqual({
      kind: 'row',
      reason: 'reverts',
    })
    const plan = await planGas(rpc, eth(await withCode(originIs(hot))))
    expect(plan.gasLimit).toBeLessThanOrEqual(ETH_TO_CODE_GAS_BUDGET)
  })

  it('INVALID and a revert are the row’s failures, never the chain’s', async () => {
    for (const [code, reason] of [
      [CODE.invalid, 'invalid'],
      [CODE.reverts, 'reverts'],
    ] as const) {
      const err = await planGas(rpc, eth(await withCode(code))).catch((e: unknown) => e)
      expect(outboundFailureOf(err)).toEqual({ kind: 'row', reason })
    }
  })

  it('no cap is above the latest block’s gas limit', async () => {
    const limit = 400_000n
    await anvil.request({ method: 'evm_setBlockGasLimit', params: [`0x${limit.toString(16)}`] } as never)
    await anvil.mine({ blocks: 1 })
    try {
      const to = await withCode('0x00')
      const plan = await planGas(rpc, {
        ...eth(to),
        purpose: 'swap',
        kind: 'call',
        native: false,
        call: { to, value: 0n, data: '0x' },
      })
      expect(CALL_GAS_CAPS.swap).toBeGreaterThan(limit)
      expect(plan.capGas).toBe(limit)
    } finally {
      await anvil.request({ method: 'evm_setBlockGasLimit', params: ['0x1c9c380'] } as never)
      await anvil.mine({ blocks: 1 })
    }
  })

  it('a sender that cannot pay is refused before signing; a fee above the caller’s limit is retryable', async () => {
    const poor = fresh()
    const short = await planGas(rpc, eth(fresh(), { from: poor })).catch((e: unknown) => e)
    expect(short).toBeInstanceOf(OutboundSenderShortError)
    expect(outboundFailureOf(short).kind).toBe('funds')
    // sizing (a top-up before the address holds gas) estimates what signing would sign
    const sized = await planGas(
      rpc,
      eth(fresh(), { from: poor, sizing: true, call: { to: fresh(), value: 0n, data: undefined } }),
    )
    expect(sized.gasLimit).toBe(21_000n)
    const dear = await planGas(rpc, eth(fresh(), { maxFeeWeiAtMost: 1n })).catch((e: unknown) => e)
    expect(dear).toBeInstanceOf(OutboundFeeAboveLimitError)
    expect((dear as OutboundFeeAboveLimitError).retryable).toBe(true)
  })

  it('on a chain whose gas carries the L1 data share (Arbitrum), caps and a plain transfer count on top of it', async () => {
    // an Arbitrum-like node: every estimate includes the L1 share of posting the transaction
    const SHARE = 300_000n
    const arbitrumLike: Rpc = {
      request: async (args, options) => {
        const answer = await rpc.request(args, options)
        return args.method === 'eth_estimateGas' ? `0x${(BigInt(answer as string) + SHARE).toString(16)}` : answer
      },
    }
    const withShare = SHARE + SHARE / 5n
    const eoa = await planGas(arbitrumLike, eth(fresh(), { chain: 'arbitrum' }))
    expect(eoa.gasLimit).toBe(21_000n + withShare)
    const safe = await planGas(arbitrumLike, eth(await withCode('0x00'), { chain: 'arbitrum' }))
    expect(safe.capGas).toBe(ETH_TO_CODE_GAS_BUDGET + withShare)
    const burner = await planGas(arbitrumLike, eth(await withCode(CODE.burns), { chain: 'arbitrum' })).catch((e) => e)
    expect(burner).toBeInstanceOf(OutboundGasAboveCapError)
    // elsewhere nothing is added, and no call is spent finding out
    const c = counting(arbitrumLike)
    expect((await planGas(c.rpc, eth(fresh(), { chain: 'base' }))).gasLimit).toBe(21_000n)
    expect(c.calls.map((x) => x.method)).not.toContain('eth_estimateGas')
  })

  it('a chain is unavailable only by its own probe: its id and its height', async () => {
    expect(await probeChain(rpc, 901)).toEqual({ ok: true })
    expect((await probeChain(rpc, 8453)).ok).toBe(false)
    const dead = rpcOf(createPublicClient({ transport: http('http://127.0.0.1:9', { retryCount: 0 }) }))
    expect((await probeChain(dead, 901)).ok).toBe(false)
  })
})
