import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import {
  type AbiEvent,
  type AbiFunction,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  toEventSelector,
  toFunctionSelector,
  toHex,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compileTestWithdrawalOutbox } from '../../scripts/solc'
import {
  WITHDRAWAL_DIVERTED_EVENT,
  WITHDRAWAL_ENQUEUED_EVENT,
  WITHDRAWAL_PAID_EVENT,
  WITHDRAWAL_SKIPPED_EVENT,
} from '../bridge/derive-v3'
import { deployTestOnchainActionManager, deployTestUsdc, deployTestWithdrawalOutbox } from './deploy'
import { testUsdcAbi } from './test-usdc.gen'
import {
  testWithdrawalOutboxAbi,
  testWithdrawalOutboxBytecode,
  testWithdrawalOutboxCompilerVersion,
} from './test-withdrawal-outbox.gen'

/** The verified ABI of Derive's Sepolia WithdrawalOutbox, kept as test data with its source (SOURCE.md there). */
const PUBLISHED = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../../exchange/test/spec/v3/withdrawal-outbox.sepolia.abi.json'), 'utf8'),
) as (AbiFunction | AbiEvent | { type: string; name?: string })[]

/** outputs by name and type (and components), without solc's internalType, which names the contract */
const outputsOf = (f: AbiFunction): unknown => strip(f.outputs)
const strip = (x: unknown): unknown =>
  Array.isArray(x)
    ? x.map(strip)
    : typeof x === 'object' && x !== null
      ? Object.fromEntries(
          Object.entries(x)
            .filter(([k]) => k !== 'internalType')
            .map(([k, v]) => [k, strip(v)]),
        )
      : x

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
      // the throttle and its queue
      'setBucketLimit',
      'throttleFor',
      'pendingBucket',
      'processQueue',
      'queueLength',
      'queueEntry',
      'BucketLimitSet',
      'WithdrawalEnqueued',
    ]
    for (const name of wanted) {
      const e = PUBLISHED.find((x) => x.name === name)
      expect(e, `${name} in the published ABI`).toBeDefined()
      const mine = ours.get(selectorOf(e as AbiFunction))
      expect(mine, name).toBeDefined()
      // the same outputs (the selector covers the inputs only): a reader decodes by them
      if (e?.type === 'function')
        expect(JSON.stringify(outputsOf(mine as AbiFunction)), name).toBe(JSON.stringify(outputsOf(e as AbiFunction)))
      if (e?.type === 'event')
        expect(
          (mine as AbiEvent).inputs.map((i) => [i.name, i.type, i.indexed]),
          name,
        ).toEqual((e as AbiEvent).inputs.map((i) => [i.name, i.type, i.indexed]))
    }
  })
})

describe("the outbox events the treasury reads (bridge/derive-v3.ts) are Derive's published ones", () => {
  it.each([WITHDRAWAL_PAID_EVENT, WITHDRAWAL_ENQUEUED_EVENT, WITHDRAWAL_DIVERTED_EVENT, WITHDRAWAL_SKIPPED_EVENT])(
    '$name: same selector, fields and indexed fields',
    (event) => {
      const published = PUBLISHED.find((x) => x.type === 'event' && x.name === event.name) as AbiEvent
      expect(published).toBeDefined()
      expect(toEventSelector(event as AbiEvent)).toBe(toEventSelector(published))
      expect(event.inputs.map((i) => [i.name, i.type, i.indexed])).toEqual(
        published.inputs.map((i) => [i.name, i.type, i.indexed]),
      )
    },
  )
})

describe('the stand-in outbox on anvil: the per-recipient throttle and its queue', () => {
  const USDC = (n: number) => BigInt(Math.round(n * 1_000_000))
  const owner = privateKeyToAccount(TEST_PRIVATE_KEYS[0]) // deployer, owner and verifiable app here
  const keeper = privateKeyToAccount(TEST_PRIVATE_KEYS[1])
  const asset: Address = getAddress('0x00000000000000000000000000000000000a55e7')
  const recipient: Address = getAddress('0x00000000000000000000000000000000000000b1')
  const free: Address = getAddress('0x00000000000000000000000000000000000000f2')
  const idOf = (s: string): Hex => keccak256(toHex(s))
  let chain: RunningChain
  let outbox: Address
  let usdc: Address
  let c: {
    owner: ReturnType<typeof createWalletClient>
    keeper: ReturnType<typeof createWalletClient>
    pub: ReturnType<typeof createPublicClient>
    anvil: ReturnType<typeof createTestClient>
  }

  /** a write, mined; its outbox events as [name, id, paid | amount, remaining | queueIndex] */
  async function send(by: 'owner' | 'keeper', functionName: string, args: unknown[]) {
    const hash = await c[by].writeContract({
      address: outbox,
      abi: testWithdrawalOutboxAbi,
      functionName,
      args,
      chain: null,
      account: by === 'owner' ? owner : keeper,
    } as never)
    const r = await c.pub.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    expect(r.status).toBe('success')
    return parseEventLogs({ abi: testWithdrawalOutboxAbi, logs: r.logs }).map((l) =>
      l.eventName === 'WithdrawalPaid'
        ? ['paid', l.args.id, l.args.paid, l.args.remaining]
        : l.eventName === 'WithdrawalEnqueued'
          ? ['enqueued', l.args.id, l.args.amount, l.args.queueIndex]
          : l.eventName === 'WithdrawalSkipped'
            ? ['skipped', l.args.id]
            : [l.eventName],
    )
  }
  const execute = (id: string, to: Address, amount: bigint) =>
    send('owner', 'executeWithdrawals', [[{ id: idOf(id), accountId: 1n, asset, recipient: to, amount }]])
  const read = (functionName: string, args: unknown[]) =>
    c.pub.readContract({
      address: outbox,
      abi: testWithdrawalOutboxAbi,
      functionName,
      args,
    } as never) as Promise<unknown>
  const usdcOf = (a: Address) =>
    c.pub.readContract({ address: usdc, abi: testUsdcAbi, functionName: 'balanceOf', args: [a] })
  const later = async (seconds: number) => {
    await c.anvil.increaseTime({ seconds })
    await c.anvil.mine({ blocks: 1 })
  }

  beforeAll(async () => {
    chain = await startChain()
    const transport = http(chain.rpcUrl)
    c = {
      owner: createWalletClient({ account: owner, transport }),
      keeper: createWalletClient({ account: keeper, transport }),
      pub: createPublicClient({ transport }),
      anvil: createTestClient({ mode: 'anvil', transport }),
    }
    const wallet = c.owner as Parameters<typeof deployTestUsdc>[0]
    const pub = c.pub as Parameters<typeof deployTestUsdc>[1]
    usdc = getAddress(await deployTestUsdc(wallet, pub))
    const manager = await deployTestOnchainActionManager(wallet, pub, [{ asset, token: usdc }])
    outbox = await deployTestWithdrawalOutbox(wallet, pub, {
      verifiableApp: owner.address,
      manager,
      assets: [{ asset, token: usdc, decimals: 6 }],
    })
    const mint = await c.owner.writeContract({
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [manager, USDC(10_000)],
      chain: null,
      account: owner,
    })
    await c.pub.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
  }, 60_000)
  afterAll(async () => {
    await chain?.stop()
  })

  it('only the owner sets a limit, and not one that never drains', async () => {
    await expect(
      c.keeper.writeContract({
        address: outbox,
        abi: testWithdrawalOutboxAbi,
        functionName: 'setBucketLimit',
        args: [recipient, asset, USDC(100), USDC(1)],
        chain: null,
        account: keeper,
      }),
    ).rejects.toThrow(/NotOwner/)
    await expect(
      c.owner.writeContract({
        address: outbox,
        abi: testWithdrawalOutboxAbi,
        functionName: 'setBucketLimit',
        args: [recipient, asset, USDC(100), 0n],
        chain: null,
        account: owner,
      }),
    ).rejects.toThrow(/BucketConfigTooRestrictive/)
  })

  it('no limit set: paid whole at once, nothing queued', async () => {
    expect(await execute('free', free, USDC(500))).toEqual([['paid', idOf('free'), USDC(500), 0n]])
    expect(await usdcOf(free)).toBe(USDC(500))
    expect(await read('queueLength', [free, asset])).toBe(0n)
    expect(await read('pendingBucket', [free, asset])).toBe(0n)
  })

  it('a throttled withdrawal pays the bucket and queues the rest; processQueue (anyone) pays it after refills, in parts, each id once', async () => {
    // 100 USDC bucket, 1 USDC a second
    expect(await send('owner', 'setBucketLimit', [recipient, asset, USDC(100), USDC(1)])).toEqual([['BucketLimitSet']])
    expect(await read('throttleFor', [recipient, asset])).toMatchObject({
      capacity: USDC(100),
      refillRate: USDC(1),
      bucket: USDC(100),
    })

    // 250: 100 now, 150 queued at index 0
    expect(await execute('a', recipient, USDC(250))).toEqual([
      ['paid', idOf('a'), USDC(100), USDC(150)],
      ['enqueued', idOf('a'), USDC(150), 0n],
    ])
    expect(await usdcOf(recipient)).toBe(USDC(100))
    // behind a non-empty queue a new one is queued whole (first in, first out), even as the bucket refills
    await later(5)
    expect(await execute('b', recipient, USDC(10))).toEqual([['enqueued', idOf('b'), USDC(10), 1n]])
    expect(await usdcOf(recipient)).toBe(USDC(100))
    expect(await read('queueLength', [recipient, asset])).toBe(2n)
    expect(await read('queueEntry', [recipient, asset, 0n])).toMatchObject({
      id: idOf('a'),
      asset,
      accountId: 1n,
      recipient,
      remainingAmount: USDC(150),
    })
    // a batch submitted again: each id skipped, nothing paid or queued twice
    expect(await execute('a', recipient, USDC(250))).toEqual([['skipped', idOf('a')]])
    expect(await read('queueLength', [recipient, asset])).toBe(2n)

    // 200 s later the bucket is full again (capped at 100): a part of the first
    await later(200)
    expect(await read('pendingBucket', [recipient, asset])).toBe(USDC(100))
    expect(await send('keeper', 'processQueue', [recipient, asset, 10n])).toEqual([
      ['paid', idOf('a'), USDC(100), USDC(50)],
    ])
    expect(await read('queueEntry', [recipient, asset, 0n])).toMatchObject({ remainingAmount: USDC(50) })
    expect(await usdcOf(recipient)).toBe(USDC(200))

    // another 100 s: the first finishes, then the second, each with remaining 0; the queue is empty
    await later(100)
    expect(await send('keeper', 'processQueue', [recipient, asset, 10n])).toEqual([
      ['paid', idOf('a'), USDC(50), 0n],
      ['paid', idOf('b'), USDC(10), 0n],
    ])
    expect(await read('queueLength', [recipient, asset])).toBe(0n)
    expect(await usdcOf(recipient)).toBe(USDC(260)) // 250 + 10: each paid whole, once
    expect(await send('keeper', 'processQueue', [recipient, asset, 10n])).toEqual([])
    expect(await execute('b', recipient, USDC(10))).toEqual([['skipped', idOf('b')]])
    expect(await usdcOf(recipient)).toBe(USDC(260))
  })
})
