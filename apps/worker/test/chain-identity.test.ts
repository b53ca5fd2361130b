/**
 * Chains are who they say they are (docs/hostile-world.md): a reorg past the deposit watch's cursor
 * halts crediting on that chain until an operator resumes it; a worker whose RPC is another network
 * refuses to start, and one whose RPC does not answer yet waits for it; one network under two names
 * is refused, whatever its URLs; a chain with a `finalized` block is read only to it. Each chain has a
 * node of its own, as in the local run (docs/chains.md "Local run: four chains").
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '@wh/config'
import { DepositAddressBook, scanChainDeposits, scanTarget } from '@wh/deposits'
import { inspectHalt, resumeChain } from '@wh/ops'
import {
  integrationContext,
  type LocalChains,
  localChainsEnv,
  type RunningChain,
  startLocalChains,
  startRpcProxy,
  TEST_PRIVATE_KEYS,
  testEnv,
} from '@wh/testkit'
import {
  buildChainClients,
  buildChainRegistry,
  ChainGuard,
  ChainIdMismatchError,
  type ChainInfo,
  checkChainsAtStart,
  DuplicateChainIdError,
  deployTestUsdcs,
  listCursors,
  testUsdcAbi,
} from '@wh/wallet'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createTestClient, createWalletClient, getAddress, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import type { WorkerDeps } from '../src/ticks'

const WORKER_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const LOCAL_CHAIN_ID = 901
const silent = { info() {}, warn() {} }
const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

describe('chains are who they say they are', () => {
  let chains: LocalChains
  /** Ethereum's node, where the deposits are made */
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let usdc: Address
  let nextHd = 1000
  const alerts: string[] = []

  beforeAll(async () => {
    chains = await startLocalChains()
    chain = chains.ethereum
    const usdcs = await deployTestUsdcs(chains, TEST_PRIVATE_KEYS[0])
    usdc = usdcs.ethereum
    ctx = await integrationContext(localChainsEnv(chains, usdcs))
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const built = buildWorkerDeps(ctx.config, { sql: ctx.database.sql, redis, log: silent })
    deps = { ...built, alerter: { channel: 'log', alert: async (text) => void alerts.push(text) } }
  })
  afterAll(async () => {
    redis?.disconnect()
    await ctx?.database.close()
    await chains?.stop()
  })

  async function depositTo(): Promise<{ address: Address; txHash: `0x${string}` }> {
    const hdIndex = nextHd++
    await ctx.database.sql`
      insert into users (wallet_address, hd_index) values (${getAddress(`0x${randomBytes(20).toString('hex')}`)}, ${hdIndex})`
    const address = deps.keyring.address(hdIndex)
    const wallet = createWalletClient({ account: deployer, transport: http(chain.rpcUrl) })
    const txHash = await wallet.writeContract({
      chain: null,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [address, 5_000_000n],
    })
    await createPublicClient({ transport: http(chain.rpcUrl) }).waitForTransactionReceipt({ hash: txHash })
    return { address, txHash }
  }
  const book = new DepositAddressBook()
  const testEnvConfig = (over: Record<string, string>) => loadConfig({ ...ctx.env, ...over })
  const scan = () => scanChainDeposits({ ...deps, addressBook: book }, 'ethereum')
  const credited = async (txHash: string) =>
    (await ctx.database.sql`select 1 from deposits where tx_hash = ${txHash.toLowerCase()}`).length

  it('a reorg past the cursor halts crediting with one alert; the operator inspects, then resumes', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    await anvil.mine({ blocks: 5 })
    const first = await depositTo()
    expect((await scan()).status).toBe('scanned')
    expect(await credited(first.txHash)).toBe(1)
    const [cursor] = (await listCursors(ctx.database.sql)).filter((c) => c.chain === 'ethereum')
    expect(cursor?.blockHash).toMatch(/^0x[0-9a-f]{64}$/)

    // the block of that deposit, and the one after, are replaced by blocks without it
    await anvil.mine({ blocks: 1 })
    expect((await scan()).status).toBe('scanned')
    await anvil.request({ method: 'anvil_reorg' as never, params: [2, []] as never })

    expect((await scan()).status).toBe('halted')
    expect(alerts.filter((a) => a.startsWith('deposit watch halted'))).toHaveLength(1)
    // while halted nothing is credited, however many runs
    const later = await depositTo()
    expect((await scan()).status).toBe('halted')
    expect(await credited(later.txHash)).toBe(0)
    expect(alerts.filter((a) => a.startsWith('deposit watch halted'))).toHaveLength(1)

    // the operator: which credited deposits are gone with the old blocks
    const client = deps.clients.get('ethereum')?.publicClient as NonNullable<
      ReturnType<typeof deps.clients.get>
    >['publicClient']
    const report = await inspectHalt(ctx.database.sql, client, 'ethereum')
    expect(report.haltReason).toMatch(/reorg past the cursor/)
    const inspected = report.deposits.find((d) => d.txHash === first.txHash.toLowerCase())
    expect(inspected?.onChain).toBe('vanished')
    // the journal keeps it: a correction is the operator's decision, never a delete
    expect(await credited(first.txHash)).toBe(1)

    // resume from the first replaced block: the chain is read again from there
    const from = BigInt(inspected?.blockNumber ?? '0')
    expect(
      await resumeChain(ctx.database.sql, client, { chain: 'ethereum', fromBlock: from, reason: 'test', actor: 'ops' }),
    ).toBe(true)
    expect(await resumeChain(ctx.database.sql, client, { chain: 'ethereum', reason: 'again', actor: 'ops' })).toBe(
      false,
    )
    for (let i = 0; i < 5 && (await scan()).status === 'scanned'; i++);
    expect(await credited(later.txHash)).toBe(1)
    const [action] = await ctx.database.sql<{ action: string; subject: string; actor: string }[]>`
      select action, subject, actor from operator_actions where subject = 'ethereum'`
    expect(action).toEqual({ action: 'chain_resumed', subject: 'ethereum', actor: 'ops' })
  })

  it('each name is its own node, checked at start; one network under two names is refused, whatever its URLs', async () => {
    // the four nodes answer the four ids the configuration names
    expect(await checkChainsAtStart(new ChainGuard(deps.registry, deps.clients))).toEqual([])
    expect(new Set([...deps.registry.values()].map((c) => c.chainId)).size).toBe(4)
    // base under the Ethereum node's id (through another URL: the chain id decides, not the URL)
    const proxy = await startRpcProxy({ upstream: chain.rpcUrl })
    try {
      const build = () =>
        buildChainRegistry(
          { rpcUrls: { ...ctx.config.rpcUrls, base: proxy.url } },
          { ethereum: { chainId: LOCAL_CHAIN_ID }, base: { chainId: LOCAL_CHAIN_ID } },
        )
      expect(build).toThrow(DuplicateChainIdError)
      expect(build).toThrow('ethereum and base have the same chain id 901')
      // the configuration refuses it first: the local nodes must have distinct ids
      expect(() => testEnvConfig({ CHAIN_ID_LOCAL_BASE: String(LOCAL_CHAIN_ID) })).toThrow(/one node per chain/)
      // and a base RPC that is in truth Ethereum's node fails the identity check
      const swapped = new Map(deps.registry)
      swapped.set('base', { ...(deps.registry.get('base') as ChainInfo), rpcUrl: proxy.url })
      const guard = new ChainGuard(swapped, buildChainClients(swapped))
      await expect(guard.ready('base')).rejects.toMatchObject({ expected: chains.base.chainId, actual: LOCAL_CHAIN_ID })
    } finally {
      await proxy.stop()
    }
  })

  it('a chain with a finalized block is read to it, not to its head', async () => {
    const anvil = createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) })
    await anvil.mine({ blocks: 100 })
    const client = deps.clients.get('ethereum')?.publicClient as NonNullable<
      ReturnType<typeof deps.clients.get>
    >['publicClient']
    const head = BigInt(await client.request({ method: 'eth_blockNumber' }))
    const finalized = await client.getBlock({ blockTag: 'finalized' })
    expect(finalized.number).toBeLessThan(head)
    expect(await scanTarget(client, { finality: 'finalized', confirmations: 0 }, head)).toBe(finalized.number)
    expect(await scanTarget(client, { finality: 'finalized', confirmations: 200 }, head)).toBe(head - 200n)
    expect(await scanTarget(client, { finality: 'depth', confirmations: 3 }, head)).toBe(head - 3n)
    // the registry: public chains by finality, stand-ins by depth
    const mainnet = buildChainRegistry({
      rpcUrls: { ethereum: 'http://a', optimism: 'http://b', base: 'http://c', arbitrum: 'http://d' },
    })
    expect([...mainnet.values()].map((c) => c.finality)).toEqual(['finalized', 'finalized', 'finalized', 'finalized'])
    expect(deps.registry.get('ethereum')?.finality).toBe('depth')
  })

  it('the guard: an unreachable RPC waits until it answers; one that is another chain throws, every time', async () => {
    const proxy = await startRpcProxy({ upstream: chains.base.rpcUrl })
    try {
      await proxy.script([{ method: '*', action: { httpError: { status: 503 } } }])
      const registry = new Map([['base', { ...(deps.registry.get('base') as ChainInfo), rpcUrl: proxy.url }]] as const)
      const guard = new ChainGuard(registry, buildChainClients(registry, { timeoutMs: 500 }))
      expect(await guard.ready('base')).toBe(false)
      await proxy.reset()
      expect(await guard.ready('base')).toBe(true)

      const wrong = new Map([['base', { ...(deps.registry.get('base') as ChainInfo), chainId: 8453 }]] as const)
      const wrongGuard = new ChainGuard(wrong, buildChainClients(wrong))
      await expect(wrongGuard.ready('base')).rejects.toBeInstanceOf(ChainIdMismatchError)
      await expect(wrongGuard.ready('base')).rejects.toMatchObject({
        code: 'CHAIN_ID_MISMATCH',
        expected: 8453,
        actual: chains.base.chainId,
      })
    } finally {
      await proxy.stop()
    }
  })

  /**
   * Runs the worker until it exits by itself, or until its output shows `until` (then SIGTERM): a state, never
   * a time. `limitMs` only bounds a worker that never gets there (its output then fails the assertions).
   */
  function startWorker(env: Record<string, string | undefined>, limitMs: number, until?: string) {
    return new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', WORKER_MAIN], {
        env: { PATH: process.env.PATH, WH_ENV_FILE: 'none', ...env } as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      const take = (d: unknown) => {
        output += String(d)
        if (until !== undefined && output.includes(until)) child.kill('SIGTERM')
      }
      child.stdout.on('data', take)
      child.stderr.on('data', take)
      const timer = setTimeout(() => child.kill('SIGTERM'), limitMs)
      child.on('exit', (code) => {
        clearTimeout(timer)
        resolve({ code, output })
      })
    })
  }

  it('a worker whose RPC is another network refuses to start, naming the chain and never the URL', async () => {
    // base's RPC, with a key in its URL, is in truth the Optimism node
    const proxy = await startRpcProxy({ upstream: chains.optimism.rpcUrl })
    try {
      const env = testEnv({
        ...ctx.env,
        LOG_LEVEL: 'info',
        RPC_URL_BASE: `${proxy.url}/v2/SECRETKEY123?key=SECRETKEY456`,
      })
      const { code, output } = await startWorker(env, 30_000)
      expect(code).toBe(1)
      expect(output).toContain(
        `the RPC of base answers chain id ${chains.optimism.chainId}, the registry expects ${chains.base.chainId}`,
      )
      expect(output).not.toContain('SECRETKEY')
    } finally {
      await proxy.stop()
    }
  })

  it('a worker whose RPC does not answer at start keeps running and says which chain waits', async () => {
    // a Redis database of its own: the worker registers its schedulers and runs its ticks
    const env = testEnv({
      ...ctx.env,
      LOG_LEVEL: 'info',
      CACHE_URL: `${inject('redisUrl')}/9`,
      WORKER_QUEUES: 'accounting',
      RPC_URL_ARBITRUM: 'http://127.0.0.1:9/',
    })
    // running means started: its ticks registered after the warning, then stopped by our SIGTERM
    const { code, output } = await startWorker(env, 100_000, 'worker started')
    expect(output).toContain('chain RPC not answering at start')
    expect(output).toContain('worker started')
    expect(output).toContain('arbitrum')
    expect(code).toBe(0) // stopped by our SIGTERM, not by itself
  }, 120_000)
})
