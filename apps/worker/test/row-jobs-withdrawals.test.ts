/**
 * The `withdrawal.send` job end to end (docs/architecture.md "Accepted work: one job per 202"): the
 * real API answers POST /withdrawals with its 202 and adds the job after its commit, a real BullMQ
 * worker runs the processor against the real outbox and an anvil node, and no tick runs at all. A
 * destination the chain refuses ends the row `failed` with its code, and the job fails with that
 * code, once (not retried). With Redis refusing the job the request still answers, and the tick
 * sends the row.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { BULL_PREFIX, QUEUES, rowJob } from '@wh/jobs'
import { append } from '@wh/ledger'
import { marketNames } from '@wh/market'
import { freePort, integrationContext, type RunningChain, startChain } from '@wh/testkit'
import { type ChainClients, deployTestUsdc, testUsdcAbi } from '@wh/wallet'
import type { WithdrawalSendSummary } from '@wh/withdrawals'
import { type Job, Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createTestClient, createWalletClient, http, parseEther } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildServer } from '../../api/src/server'
import { seedFeedPrice } from '../../api/test/support'
import { buildWorkerDeps } from '../src/deps'
import { withdrawalSendProcessor } from '../src/items/withdrawal'
import { withdrawalSendTick } from '../src/jobs/withdrawals/ticks'
import { type Runtime, startRuntime } from '../src/runtime'
import type { TickContext, WorkerDeps } from '../src/ticks'

const silent = { info() {}, warn() {} }
const USDC = (n: number) => BigInt(n) * 1_000_000n
const REFUSE_EVERYTHING = '0x60006000fd' as const
const fresh = () => `0x${randomBytes(20).toString('hex')}` as Address

describe('withdrawal.send: sent by its job, not by the tick', () => {
  let chain: RunningChain
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let redis: Redis
  let deps: WorkerDeps
  let base: ChainClients
  let api: FastifyInstance
  let queues: Queue[]
  const prefix = `jobs-${randomUUID().slice(0, 8)}`
  // the API's own Redis names of market data: the ETH bounds read the price seeded there
  const names = marketNames(`jobs-w-${randomUUID().slice(0, 8)}:`)
  const deployer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')

  beforeAll(async () => {
    chain = await startChain({ chainId: 8453 })
    ctx = await integrationContext({ RPC_URL_BASE: chain.rpcUrl })
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 })
    const transport = http(chain.rpcUrl)
    const usdc = await deployTestUsdc(
      createWalletClient({ account: deployer, transport }),
      createPublicClient({ transport }),
    )
    deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log: silent },
      { chains: { base: { chainId: chain.chainId, usdc, confirmations: 1 } } },
    )
    base = deps.clients.get('base') as ChainClients
    const mint = await base.walletClient.writeContract({
      account: deployer,
      address: usdc,
      abi: testUsdcAbi,
      functionName: 'mint',
      args: [deps.hotWallet('base').address, USDC(1_000)],
    })
    await base.publicClient.waitForTransactionReceipt({ hash: mint, pollingInterval: 20 })
    queues = Object.values(QUEUES).map((n) => new Queue(n, { connection: redis, prefix }))
    api = await apiWith(queues)
  })
  afterAll(async () => {
    await api?.close()
    await Promise.all((queues ?? []).map((q) => q.close()))
    redis?.disconnect()
    await ctx?.database.close()
    await chain?.stop()
  })

  async function apiWith(q: Queue[], log?: { write(l: string): void }) {
    const app = await buildServer({
      config: ctx.config,
      database: ctx.database,
      redis,
      keyring: deps.keyring.publicOnly(),
      chains: deps.registry,
      queues: q,
      bullPrefix: prefix,
      logger: log ? { level: 'warn', stream: log } : false,
      marketData: { names },
    })
    await app.ready()
    return app
  }

  /** A user with `eth` ETH and 100 USDC in transit, and a token for the API. */
  async function user(eth = '1') {
    const userId = randomUUID()
    for (const [currency, amount] of [
      ['ETH', parseEther(eth)],
      ['USDC', USDC(100)],
    ] as const)
      await append(ctx.database.sql, {
        type: 'deposit_detected',
        payload: {
          userId,
          chain: 'base',
          txHash: `0x${randomBytes(32).toString('hex')}`,
          logIndex: 0,
          currency,
          amount,
        },
        occurredAt: new Date(),
      })
    return { userId, headers: { authorization: `Bearer ${api.jwt.sign({ sub: userId })}` } }
  }
  const withdraw = (headers: Record<string, string>, payload: object) =>
    api.inject({ method: 'POST', url: '/withdrawals', headers, payload })

  /** A worker that runs only the withdrawal job's processor (no tick is registered). */
  const runtime = (): Promise<Runtime> =>
    startRuntime({
      connection: new Redis(inject('redisUrl'), { maxRetriesPerRequest: null }),
      ticks: [withdrawalSendProcessor],
      consume: ['withdrawals'],
      prefix,
      log: silent,
      deps,
    })
  const queue = () => queues.find((q) => q.name === QUEUES.withdrawals) as Queue
  async function settled(id: string): Promise<Job> {
    const deadline = performance.now() + 30_000
    for (;;) {
      // the state first, then the job: a job read before it finished keeps its old return value
      const state = await queue().getJobState(id)
      const job = state === 'completed' || state === 'failed' ? await queue().getJob(id) : undefined
      if (job) return job
      if (performance.now() > deadline) throw new Error(`job ${id} is still ${state}`)
      await new Promise((r) => setTimeout(r, 25))
    }
  }
  const row = async (id: string) =>
    (
      await ctx.database.sql<{ state: string; tx_hash: string | null; last_error_code: string | null }[]>`
        select state, tx_hash, last_error_code from withdrawals where id = ${id}`
    )[0]

  it('the 202 adds the job; the job signs and broadcasts it, and comes back until it is confirmed and sent', async () => {
    const { headers } = await user()
    const res = await withdraw(headers, { chain: 'base', asset: 'USDC', amount: '25', destination: fresh() })
    expect(res.statusCode, res.body).toBe(202)
    const id = res.json().id as string
    const rt = await runtime()
    try {
      // broadcast by the job: the transaction is on chain before any tick could have run
      const deadline = performance.now() + 30_000
      while ((await row(id))?.tx_hash == null) {
        if (performance.now() > deadline) throw new Error('not broadcast')
        await new Promise((r) => setTimeout(r, 25))
      }
      const hash = (await row(id))?.tx_hash as `0x${string}`
      expect(await base.publicClient.getTransaction({ hash })).toMatchObject({ hash })
      // one block on top: confirmed depth; the job's next comeback records it sent
      await createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) }).mine({ blocks: 1 })
      const job = await settled(id)
      expect(await job.getState()).toBe('completed')
      expect(job.returnvalue).toEqual({ withdrawalId: id, outcome: 'sent' })
      expect((await row(id))?.state).toBe('sent')
    } finally {
      await rt.close()
    }
  })

  it('a destination the chain refuses: the row fails with its code, the job fails with that code, once', async () => {
    const { headers } = await user()
    const trap = fresh()
    await seedFeedPrice(redis, names, 'ETH', '3000', Date.now())
    const res = await withdraw(headers, { chain: 'base', asset: 'ETH', amount: '0.01', destination: trap })
    expect(res.statusCode, res.body).toBe(202)
    const id = res.json().id as string
    // after the request was accepted, the destination becomes a contract that refuses everything
    await createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) }).setCode({
      address: trap,
      bytecode: REFUSE_EVERYTHING,
    })
    const rt = await runtime()
    try {
      const job = await settled(id)
      expect(await job.getState()).toBe('failed')
      expect(job.failedReason).toBe('DESTINATION_REFUSED')
      // a decided failure: not retried
      expect(job.attemptsMade).toBe(1)
      expect(await row(id)).toMatchObject({ state: 'failed', last_error_code: 'DESTINATION_REFUSED' })
    } finally {
      await rt.close()
    }
    // counted where it was decided: GET /metrics shows it by area and reason
    const metrics = await api.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/wh_business_failures_total\{area="withdrawals",reason="DESTINATION_REFUSED"\} [1-9]/)
  })

  it('a job for an id with no row, or a row no longer requested, does nothing', async () => {
    const rt = await runtime()
    try {
      const ghost = randomUUID()
      const job = rowJob('withdrawal.send', ghost, randomUUID())
      await queue().add(job.name, job.data, job.opts)
      const done = await settled(ghost)
      expect(done.returnvalue).toEqual({ withdrawalId: ghost, outcome: 'absent' })
      expect(await ctx.database.sql`select 1 from outbound_txs where ref_id = ${ghost}`).toHaveLength(0)
    } finally {
      await rt.close()
    }
  })

  it('Redis refusing the job: the request still answers 202, and the tick sends the row', async () => {
    const dead = new Redis(`redis://127.0.0.1:${await freePort()}`, {
      maxRetriesPerRequest: null,
      enableOfflineQueue: false,
      lazyConnect: true,
    })
    dead.on('error', () => {})
    const deadQueues = Object.values(QUEUES).map((n) => new Queue(n, { connection: dead, prefix: `${BULL_PREFIX}-x` }))
    for (const q of deadQueues) q.on('error', () => {})
    const lines: string[] = []
    const noRedis = await apiWith(deadQueues, { write: (l) => void lines.push(l) })
    try {
      const { headers } = await user()
      const res = await noRedis.inject({
        method: 'POST',
        url: '/withdrawals',
        headers,
        payload: { chain: 'base', asset: 'USDC', amount: '20', destination: fresh() },
      })
      expect(res.statusCode, res.body).toBe(202)
      const id = res.json().id as string
      expect(lines.map((l) => JSON.parse(l)).find((l) => l.jobId === id)?.job).toBe('withdrawal.send')
      expect(await queue().getJob(id)).toBeUndefined()
      // the sweeper: the withdrawals tick finds the row and sends it
      const tickCtx: TickContext = { log: silent, deps, queues: new Map() }
      const summary = (await withdrawalSendTick.process({} as Job, tickCtx)) as WithdrawalSendSummary
      expect(summary.pending + summary.sent).toBeGreaterThanOrEqual(1)
      expect((await row(id))?.tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    } finally {
      await noRedis.close()
      await Promise.all(deadQueues.map((q) => q.close().catch(() => {})))
      dead.disconnect()
    }
  })
})
