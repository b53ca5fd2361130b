/**
 * No secret in a worker log (docs/architecture.md "Least privilege"): run ticks of the runtime with known secrets, the production
 * logger at trace level and the deps main.ts builds; a processor that logs a caught error the pino
 * way ({ err }), where the error carries the deps (as a client library's error carries its
 * options), and a job that fails with such an error. No secret may appear in any log line, nor in
 * what BullMQ keeps of the failed job (Bull Board shows it).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { generateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { integrationContext } from '@wh/testkit'
import { WITHDRAWAL_SEND_TICK } from '@wh/withdrawals'
import { Redis } from 'ioredis'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildWorkerDeps } from '../src/deps'
import { ticks } from '../src/jobs/index'
import { workerLogger } from '../src/logger'
import { startRuntime } from '../src/runtime'
import type { TickDefinition } from '../src/ticks'

/** Every form a secret may take in a log line (hex in any case, with or without 0x; mnemonic word runs). */
function secretForms(value: string): string[] {
  const forms = new Set([value])
  const hex = value.replace(/^0x/i, '')
  if (/^[0-9a-f]+$/i.test(hex) && hex.length >= 16)
    for (const h of [hex, hex.toLowerCase(), hex.toUpperCase()]) forms.add(h)
  const words = value.split(' ')
  if (words.length >= 12)
    for (let i = 0; i < words.length - 1; i++)
      for (let j = i + 2; j <= words.length; j++)
        for (const sep of [' ', '","', '-', ',', ', ']) forms.add(words.slice(i, j).join(sep))
  return [...forms]
}

describe('no secret reaches a worker log line', () => {
  const lines: string[] = []
  const secrets: Record<string, string> = {
    JWT_SECRET: randomBytes(32).toString('base64url'),
    MASTER_MNEMONIC: generateMnemonic(wordlist, 256),
    MASTER_PRIVATE_KEY: generatePrivateKey(),
    SESSION_PRIVATE_KEY: generatePrivateKey(),
    GAS_WALLET_PRIVATE_KEY: generatePrivateKey(),
    SWAP_WALLET_PRIVATE_KEY: generatePrivateKey(),
    WEBHOOK_SECRET: randomBytes(32).toString('hex'),
    METRICS_TOKEN: randomBytes(24).toString('base64url'),
    ALERT_BOT_TOKEN: `${Math.floor(Math.random() * 1e9)}:${randomBytes(20).toString('base64url')}`,
  }
  // a provider's key in its RPC URL's path, as Alchemy and Infura take it: viem's errors name the URL
  const rpcKey = randomBytes(16).toString('hex')
  const rpcUrl = `http://127.0.0.1:9/v2/${rpcKey}`
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let connection: Redis
  let redis: Redis

  beforeAll(async () => {
    ctx = await integrationContext({
      ...secrets,
      ALERT_CHAT_ID: '42',
      LOG_LEVEL: 'trace',
      RPC_URL_ETHEREUM: rpcUrl,
      RPC_URL_BASE: rpcUrl,
    })
    connection = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: null })
    redis = new Redis(ctx.config.cacheUrl)
  })
  afterAll(async () => {
    connection?.disconnect()
    redis?.disconnect()
    await ctx?.database.close()
  })

  it('ticks that log and fail with errors carrying the deps leak nothing', async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean))
        done()
      },
    })
    const log = workerLogger('trace', stream)
    // the chat API at a closed local port: delivery fails, and the failure is logged
    const deps = buildWorkerDeps(
      ctx.config,
      { sql: ctx.database.sql, redis, log },
      { alertApiBaseUrl: 'http://127.0.0.1:9' },
    )
    const prefix = `t-secrets-${randomUUID().slice(0, 8)}`
    const withDeps = (message: string) =>
      Object.assign(new Error(message), {
        deps,
        config: deps.config,
        request: { headers: { authorization: `Bearer ${secrets.JWT_SECRET}` } },
        cause: Object.assign(new Error('inner'), { keys: deps.config.keys }),
      })

    let logged!: () => void
    let failed!: () => void
    const ran = Promise.all([new Promise<void>((r) => (logged = r)), new Promise<void>((r) => (failed = r))])
    const caught: TickDefinition = {
      name: 'secrets-caught',
      queue: 'accounting',
      everyMs: 60_000,
      process: async (_job, tctx) => {
        try {
          throw withDeps('exchange call failed')
        } catch (err) {
          tctx.log.warn({ err, deps: tctx.deps }, 'a caught failure, logged the pino way')
        }
        // a real RPC failure: logged as an error, as a string, and in an alert's fields
        const rpcError = await tctx.deps.clients
          .get('ethereum')
          ?.publicClient.getBlockNumber()
          .then(
            () => undefined,
            (e: unknown) => e,
          )
        expect(String(rpcError)).toContain(rpcKey) // viem's message names the URL, key and all
        tctx.log.warn({ err: rpcError }, 'rpc failure, logged the pino way')
        tctx.log.warn({ err: String(rpcError) }, 'rpc failure, logged as a string')
        await tctx.deps.alerter.alert('rpc failure', { error: String(rpcError) })
        logged()
      },
    }
    const failing: TickDefinition = {
      name: 'secrets-fails',
      queue: 'accounting',
      everyMs: 60_000,
      process: async () => {
        setTimeout(failed, 50)
        throw withDeps('rpc unreachable')
      },
    }
    // a tick whose RPC call fails: BullMQ keeps the failure's message and stack
    const rpcFailing: TickDefinition = {
      name: 'secrets-rpc-fails',
      queue: 'accounting',
      everyMs: 60_000,
      process: async (_job, tctx) => {
        await tctx.deps.clients.get('base')?.publicClient.getBlockNumber()
      },
    }
    // one real tick too: reads Postgres through the deps, logs what it logs
    const real = ticks.find((t) => t.name === WITHDRAWAL_SEND_TICK)
    expect(real).toBeDefined()
    const rt = await startRuntime({
      connection,
      ticks: [caught, failing, rpcFailing, real as TickDefinition],
      consume: ['accounting', 'withdrawals'],
      prefix,
      log,
      deps,
    })
    try {
      await ran
      const queue = rt.queues.get('accounting')
      while (((await queue?.getFailedCount()) ?? 0) < 2) await new Promise((r) => setTimeout(r, 20))
      while ((await rt.queues.get('withdrawals')?.getCompletedCount()) === 0)
        await new Promise((r) => setTimeout(r, 20))
      // the alert path (spec 6.2) logs when the chat cannot be reached
      await deps.alerter.alert?.('secrets test alert').catch(() => {})
      const failedJobs = (await queue?.getFailed()) ?? []
      expect(failedJobs.length).toBeGreaterThan(0)
      const kept = failedJobs.map((j) => JSON.stringify({ reason: j.failedReason, stack: j.stacktrace, data: j.data }))

      expect(lines.length).toBeGreaterThan(0)
      const caughtLine = JSON.parse(lines.find((l) => l.includes('a caught failure')) ?? '{}')
      // the error keeps what explains it, not what hangs on it; a deps field is censored
      expect(caughtLine.err).toMatchObject({
        type: 'Error',
        message: 'exchange call failed',
        cause: { message: 'inner' },
      })
      expect(caughtLine.err.deps).toBeUndefined()
      expect(caughtLine.deps).toBe('[redacted]')
      for (const line of lines) expect(() => JSON.parse(line)).not.toThrow()
      const found: string[] = []
      expect(kept.some((k) => k.includes('127.0.0.1:9/[redacted]'))).toBe(true)
      expect(lines.some((l) => l.includes('rpc failure') && l.includes('127.0.0.1:9/[redacted]'))).toBe(true)
      for (const [name, value] of Object.entries({ ...secrets, RPC_KEY: rpcKey }))
        for (const form of secretForms(value))
          for (const line of [...lines, ...kept])
            if (line.includes(form))
              found.push(`${name} as ${JSON.stringify(form.slice(0, 20))}… in ${line.slice(0, 300)}`)
      expect(found.slice(0, 10)).toEqual([])
    } finally {
      await rt.close()
    }
  })
})
