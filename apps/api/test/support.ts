import { randomBytes, randomUUID } from 'node:crypto'
import { ManualClock } from '@wh/core'
import { BULL_PREFIX, QUEUES } from '@wh/jobs'
import { append } from '@wh/ledger'
import { type MarketNames, marketNames, publishPriceUpdate, tryAcquireLease } from '@wh/market'
import { integrationContext } from '@wh/testkit'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { SiweMessage } from 'siwe'
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { buildServer } from '../src/server'
import { installContract } from './contract'

export const DOMAIN = 'app.example.test'

export interface Api {
  app: FastifyInstance
  clock: ManualClock
  ctx: Awaited<ReturnType<typeof integrationContext>>
  keyring: DepositKeyring
  /** this API's own Redis namespace of market data */
  names: MarketNames
  /** the API's Redis connection */
  redis: Redis
  /** the queues the API enqueues to (and Bull Board shows), under this API's own key prefix */
  queues: Queue[]
  /**
   * Publishes `asset`'s index as the price feed does (fenced by the feed's lease), stamped with the
   * API's clock unless `tsMs` says otherwise: what the withdrawal bounds convert with.
   */
  seedPrice(asset: string, index: string, tsMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startApi(
  env: Record<string, string | undefined> = {},
  /** WebSocket heartbeat period (default: the API's) */
  o: { heartbeatMs?: number; authTimeoutMs?: number; publicCacheMaxEntries?: number } = {},
): Promise<Api> {
  const ctx = await integrationContext({ AUTH_RATE_LIMIT_PER_MINUTE: '100000', SIWE_DOMAIN: DOMAIN, ...env })
  const clock = new ManualClock(Date.now())
  const redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
  // each test file its own rate-limit namespace: flush what this redis db holds for us
  const keyring = DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic)
  // each API its own prefix: the jobs its 202s add are this test's to read (docs/architecture.md "Accepted work")
  const bullPrefix = `${BULL_PREFIX}-test-${randomUUID().slice(0, 8)}`
  const queues = Object.values(QUEUES).map((n) => new Queue(n, { connection: redis, prefix: bullPrefix }))
  const names = marketNames(`t-${randomUUID()}:`)
  const app = await buildServer({
    config: ctx.config,
    database: ctx.database,
    redis,
    keyring: keyring.publicOnly(),
    chains: buildChainRegistry(ctx.config),
    queues,
    bullPrefix,
    clock,
    logger: process.env.TEST_LOG ? { level: 'error' } : false,
    marketData: {
      names,
      ...(o.heartbeatMs !== undefined && { heartbeatMs: o.heartbeatMs }),
      ...(o.publicCacheMaxEntries !== undefined && { publicCacheMaxEntries: o.publicCacheMaxEntries }),
    },
    ...(o.authTimeoutMs !== undefined && { accountStream: { authTimeoutMs: o.authTimeoutMs } }),
  })
  // every response a test gets is checked against the document (contract.ts)
  const contract = installContract(app)
  await app.ready()
  return {
    app,
    clock,
    ctx,
    keyring,
    names,
    redis,
    queues,
    seedPrice: (asset, index, tsMs = clock.now().getTime()) => seedFeedPrice(redis, names, asset, index, tsMs),
    async close() {
      await app.close()
      if (contract.violations.length > 0)
        throw new Error(
          `responses the OpenAPI document does not describe:\n${[...new Set(contract.violations)].join('\n')}`,
        )
      await Promise.all(queues.map((q) => q.close()))
      redis.disconnect()
      await ctx.database.close()
    },
  }
}

/**
 * Publishes `asset`'s index under `names` exactly as the worker's price feed does (fenced by the
 * feed's lease), stamped `tsMs`: what the withdrawal bounds convert with.
 */
export async function seedFeedPrice(redis: Redis, names: MarketNames, asset: string, index: string, tsMs: number) {
  const lease = await tryAcquireLease(redis, names.feedLease, 60_000)
  if (!lease) throw new Error('the feed lease of this test is held')
  const ts = new Date(tsMs).toISOString()
  await publishPriceUpdate(redis, names, lease.token, asset, {
    ts,
    publishedAt: ts,
    index,
    mark: index,
    atmIv: null,
    instruments: [],
  })
  await lease.release()
}

export const newAccount = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey())

export async function getNonce(app: FastifyInstance): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/auth/nonce' })
  if (res.statusCode !== 200) throw new Error(`nonce: ${res.statusCode} ${res.body}`)
  return res.json().nonce
}

export function siweMessage(
  account: { address: string },
  nonce: string,
  over: Partial<ConstructorParameters<typeof SiweMessage>[0] & object> = {},
): string {
  return new SiweMessage({
    domain: DOMAIN,
    address: account.address,
    statement: 'Sign in to Wheelhouse',
    uri: `https://${DOMAIN}`,
    version: '1',
    chainId: 1,
    nonce,
    issuedAt: new Date().toISOString(),
    ...over,
  }).prepareMessage()
}

export async function verify(app: FastifyInstance, message: string, signature: string) {
  return app.inject({ method: 'POST', url: '/auth/verify', payload: { message, signature } })
}

/** The whole flow of spec 5.1; returns the token. */
export async function signIn(app: FastifyInstance, account: PrivateKeyAccount): Promise<string> {
  const message = siweMessage(account, await getNonce(app))
  const res = await verify(app, message, await account.signMessage({ message }))
  if (res.statusCode !== 200) throw new Error(`verify: ${res.statusCode} ${res.body}`)
  return res.json().token
}

/** The user id a bearer token carries (its `sub`). */
export function userOf(app: FastifyInstance, token: string): string {
  return (app.jwt.decode(token) as { sub: string }).sub
}

/** Credits `userId` `amount` micro-USDC free balance: a `deposit_detected` as the deposit scan records one. */
export async function creditUsdc(api: Api, userId: string, amount: bigint): Promise<void> {
  await append(api.ctx.database.sql, {
    type: 'deposit_detected',
    payload: {
      userId,
      chain: 'base',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: 0,
      currency: 'USDC',
      amount,
    },
    occurredAt: new Date(),
  })
}

/** A new account signed in, with `amount` micro-USDC of free balance. */
export async function fundedUser(api: Api, amount: bigint): Promise<{ token: string; userId: string }> {
  const token = await signIn(api.app, newAccount())
  const userId = userOf(api.app, token)
  await creditUsdc(api, userId, amount)
  return { token, userId }
}
