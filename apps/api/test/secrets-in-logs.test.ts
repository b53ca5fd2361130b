/**
 * No secret in an API log (docs/architecture.md "Least privilege"): run the API with known secrets and a logger at its most verbose level (trace),
 * exercise sign-in (good and bad), the guarded routes, the signals webhook (good and bad
 * signatures), metrics, health and error paths, and find none of the secrets in any log line:
 * not as configured, not without its 0x prefix, not in lower- or upper-case hex, no run of two or
 * more words of the mnemonic, no issued JWT or its signature, no webhook signature.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { Writable } from 'node:stream'
import { generateMnemonic } from '@scure/bip39'
import { wordlist } from '@scure/bip39/wordlists/english.js'
import { ManualClock } from '@wh/core'
import { QUEUES } from '@wh/jobs'
import { marketNames } from '@wh/market'
import { integrationContext } from '@wh/testkit'
import { signalSignature } from '@wh/trading'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { BODY_LIMIT_BYTES, buildServer, loggerOptions, REDACTED_PATHS } from '../src/server'
import { makeOperators } from './desk-support'
import { getNonce, newAccount, siweMessage, verify } from './support'

/** Every form a secret may take in a log line. */
export function secretForms(name: string, value: string): Array<[string, string]> {
  const forms = new Set([value])
  const hex = value.replace(/^0x/i, '')
  if (/^[0-9a-f]+$/i.test(hex) && hex.length >= 16) {
    for (const h of [hex, hex.toLowerCase(), hex.toUpperCase()]) forms.add(h)
  }
  const words = value.split(' ')
  if (words.length >= 12) {
    // any run of two or more words, however they were joined (spaces, a JSON array, dashes)
    for (let i = 0; i < words.length - 1; i++) {
      for (let j = i + 2; j <= words.length; j++) {
        const run = words.slice(i, j)
        for (const sep of [' ', '","', '-', ',', ', ']) forms.add(run.join(sep))
      }
    }
  }
  return [...forms].map((f) => [name, f])
}

export function leaks(lines: readonly string[], secrets: Record<string, string>): string[] {
  const found: string[] = []
  const forms = Object.entries(secrets).flatMap(([name, value]) => secretForms(name, value))
  for (const line of lines) {
    for (const [name, form] of forms) {
      if (line.includes(form))
        found.push(`${name} (as ${JSON.stringify(form.slice(0, 24))}…) in: ${line.slice(0, 300)}`)
    }
  }
  return found
}

describe('no secret reaches a log line', () => {
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
  }
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let app: FastifyInstance
  let redis: Redis
  let queues: Queue[]
  let queueConnection: Redis
  let clock: ManualClock

  beforeAll(async () => {
    ctx = await integrationContext({
      AUTH_RATE_LIMIT_PER_MINUTE: '100000',
      SIWE_DOMAIN: 'app.example.test',
      LOG_LEVEL: 'trace',
      BULL_BOARD_ENABLED: 'true',
      ...secrets,
    })
    redis = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: 1 })
    const prefix = `wh-secrets-${randomUUID().slice(0, 8)}`
    queueConnection = new Redis(ctx.config.cacheUrl, { maxRetriesPerRequest: null })
    queues = Object.values(QUEUES).map((n) => new Queue(n, { connection: queueConnection, prefix }))
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean))
        done()
      },
    })
    clock = new ManualClock(Date.now())
    app = await buildServer({
      config: ctx.config,
      database: ctx.database,
      redis,
      keyring: DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly(),
      chains: buildChainRegistry(ctx.config),
      queues,
      bullPrefix: prefix,
      clock,
      marketData: { names: marketNames(`sl-${randomUUID().slice(0, 8)}:`) },
      // the most verbose level, with the production redaction (serializers and every line's hook)
      logger: { ...loggerOptions('trace'), stream },
    })
    // an unexpected failure whose error carries configuration (as a client library's error carries
    // its options): the 500 path logs the error, and must not log what it holds
    app.get('/__test/boom', async () => {
      throw Object.assign(new Error('a dependency failed'), { config: ctx.config, options: { ...secrets } })
    })
    await app.ready()
  })
  afterAll(async () => {
    await app?.close()
    await Promise.all((queues ?? []).map((q) => q.close()))
    queueConnection?.disconnect()
    redis?.disconnect()
    await ctx?.database.close()
  })

  /** Sign-ins of operators on Bull Board and on the desk (its own listener, logging to the same lines). */
  async function operatorPaths(issued: Record<string, string>): Promise<void> {
    const pw = await makeOperators(ctx.ownerUrl, [{ name: 'otto', role: 'operator' }])
    issued['operator password'] = pw.otto as string
    const form = (password: string) =>
      app.inject({
        method: 'POST',
        url: '/admin/queues/login',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ operator: 'otto', password }).toString(),
      })
    expect((await form('a-wrong-password-for-otto')).statusCode).toBe(401)
    const signedIn = await form(pw.otto as string)
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0] as string
    issued['Bull Board session'] = cookie.split('=')[1] as string
    expect((await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { cookie } })).statusCode).toBe(
      200,
    )
    const desk = await buildAdminServer({
      database: ctx.database,
      clients: new Map(),
      operators: { auth: { kind: 'password' }, approvalsRequired: 1 },
      logger: {
        ...loggerOptions('trace'),
        stream: { write: (l: string) => void lines.push(...l.split('\n').filter(Boolean)) },
      },
    })
    try {
      const session = await desk.inject({
        method: 'POST',
        url: '/admin/session',
        payload: { operator: 'otto', password: pw.otto },
      })
      issued['desk session'] = session.json().token
      const auth = { authorization: `Bearer ${session.json().token}` }
      expect((await desk.inject({ method: 'GET', url: '/admin/overview', headers: auth })).statusCode).toBe(200)
      expect(
        (await desk.inject({ method: 'GET', url: `/admin/actions?token=${session.json().token}`, headers: auth }))
          .statusCode,
      ).toBe(400)
    } finally {
      await desk.close()
    }
  }

  it('across sign-in, guarded routes, signals, metrics, health, errors and operators', async () => {
    const issued: Record<string, string> = {}
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` })

    // sign-in: a good one, then failures of every kind
    const account = newAccount()
    const message = siweMessage(account, await getNonce(app))
    const signature = await account.signMessage({ message })
    const ok = await verify(app, message, signature)
    expect(ok.statusCode).toBe(200)
    const token = ok.json().token as string
    issued.token = token
    issued['token signature'] = token.split('.')[2] as string
    issued['SIWE signature'] = signature
    const stranger = privateKeyToAccount(generatePrivateKey())
    const otherMessage = siweMessage(account, await getNonce(app))
    const wrongSigner = await stranger.signMessage({ message: otherMessage })
    issued['wrong SIWE signature'] = wrongSigner
    expect((await verify(app, otherMessage, wrongSigner)).statusCode).toBe(401)
    expect((await verify(app, otherMessage, `0x${'11'.repeat(65)}`)).statusCode).toBe(401)
    expect((await verify(app, message, signature)).statusCode).toBe(401) // a replay
    expect(
      (await verify(app, siweMessage(account, await getNonce(app), { domain: 'evil.example' }), signature)).statusCode,
    ).toBe(401)
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/auth/verify',
          payload: '{"message":',
          headers: { 'content-type': 'application/json' },
        })
      ).statusCode,
    ).toBe(401)

    // guarded routes, with the token, a tampered one and none
    for (const url of [
      '/deposit-address',
      '/withdrawals',
      '/withdrawals/routes',
      '/positions',
      '/subaccounts',
      '/portfolio/summary',
      '/portfolio/statement',
      '/portfolio/statement?format=csv',
      '/withdrawals?cursor=garbage',
    ]) {
      expect((await app.inject({ method: 'GET', url, headers: bearer(token) })).statusCode, url).toBeLessThan(500)
      expect((await app.inject({ method: 'GET', url, headers: bearer(`${token}x`) })).statusCode).toBe(401)
    }
    expect((await app.inject({ method: 'GET', url: '/deposit-address' })).statusCode).toBe(401)
    const withdrawal = await app.inject({
      method: 'POST',
      url: '/withdrawals',
      headers: { ...bearer(token), 'idempotency-key': randomUUID() },
      payload: { chain: 'base', asset: 'USDC', amount: '25', destination: stranger.address },
    })
    expect(withdrawal.statusCode).toBe(422)
    const position = await app.inject({
      method: 'POST',
      url: '/positions',
      headers: { ...bearer(token), 'idempotency-key': randomUUID() },
      payload: { asset: 'ETH', side: 'put', amount: '1000' },
    })
    expect(position.statusCode).toBeGreaterThanOrEqual(400)
    expect(
      (await app.inject({ method: 'DELETE', url: `/positions/${randomUUID()}`, headers: bearer(token) })).statusCode,
    ).toBe(404)
    expect(
      (await app.inject({ method: 'POST', url: '/subaccounts/ETH/release', headers: bearer(token) })).statusCode,
    ).toBeLessThan(500)

    // the webhook: a signed signal, a bad signature, a stale timestamp, a replay
    const nowSec = () => String(Math.floor(clock.now().getTime() / 1000))
    const post = (raw: string, ts: string, sig: string) =>
      app.inject({
        method: 'POST',
        url: '/webhooks/signals',
        headers: { 'content-type': 'application/json', 'x-signal-timestamp': ts, 'x-signal-signature': sig },
        payload: raw,
      })
    const raw = JSON.stringify({ id: `sig-${randomUUID()}`, asset: 'ETH', side: 'put', action: 'pause', reason: 'x' })
    const ts = nowSec()
    const goodSig = signalSignature(secrets.WEBHOOK_SECRET as string, ts, raw)
    issued['webhook signature'] = goodSig
    issued['webhook signature hex'] = goodSig.replace(/^sha256=/, '')
    expect((await post(raw, ts, goodSig)).statusCode).toBe(200)
    expect((await post(raw, ts, goodSig)).statusCode).toBe(409)
    const forged = signalSignature('not-the-secret-but-long-enough-to-pass', ts, raw)
    issued['forged webhook signature'] = forged.replace(/^sha256=/, '')
    expect((await post(raw, ts, forged)).statusCode).toBe(401)
    const old = String(Number(ts) - 3600)
    const oldSig = signalSignature(secrets.WEBHOOK_SECRET as string, old, raw)
    issued['stale webhook signature'] = oldSig.replace(/^sha256=/, '')
    expect((await post(raw, old, oldSig)).statusCode).toBe(401)
    expect((await app.inject({ method: 'GET', url: '/signals/state' })).statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: '/trading-config' })).statusCode).toBe(200)

    // metrics (its scrape token: right and wrong), health, public market data
    expect(
      (await app.inject({ method: 'GET', url: '/metrics', headers: bearer(secrets.METRICS_TOKEN as string) }))
        .statusCode,
    ).toBe(200)
    expect(
      (await app.inject({ method: 'GET', url: '/metrics', headers: bearer('a-wrong-scrape-token-of-some-length') }))
        .statusCode,
    ).toBe(401)
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401)
    expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBeLessThan(600)
    expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200)
    for (const url of ['/assets', '/ETH/fees', '/ETH/chart', '/ETH/strategies', '/NOPE/fees'])
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBeLessThan(500)

    // error paths: unknown route, bad JSON, oversized and wrong-typed bodies, a 500
    expect((await app.inject({ method: 'GET', url: '/nope' })).statusCode).toBe(404)
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/withdrawals',
          headers: { ...bearer(token), 'content-type': 'application/json' },
          payload: 'x'.repeat(BODY_LIMIT_BYTES + 1),
        })
      ).statusCode,
    ).toBe(413)
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/positions',
          headers: { ...bearer(token), 'content-type': 'text/plain' },
          payload: 'hello',
        })
      ).statusCode,
    ).toBe(400)
    expect((await app.inject({ method: 'GET', url: '/__test/boom', headers: bearer(token) })).statusCode).toBe(500)

    // operators: Bull Board's sign-in (a wrong password, the right one, the session cookie) and the desk's
    await operatorPaths(issued)

    expect(lines.length).toBeGreaterThan(50)
    const all = lines.join('\n')
    expect(all).toContain('incoming request')
    expect(all).toContain('request failed') // the 500 was logged, with its error
    // each line is one JSON object (pino): nothing printed around the logger
    for (const line of lines) expect(() => JSON.parse(line), line.slice(0, 200)).not.toThrow()
    expect(leaks(lines, { ...secrets, ...issued })).toEqual([])
  })

  it("the redaction paths alone keep each secret header out, even where a serializer logs a request's headers", async () => {
    // pino's standard request serializer logs every header; ours does not, and the line hook redacts
    // by name: this layer must hold without either
    const own: string[] = []
    const secret = randomBytes(24).toString('hex')
    const desk = await buildAdminServer({
      database: ctx.database,
      clients: new Map(),
      operators: { auth: { kind: 'proxy', userHeader: 'x-forwarded-user', secret }, approvalsRequired: 1 },
      logger: {
        level: 'trace',
        redact: [...REDACTED_PATHS],
        serializers: {
          req: (req: { method: string; url: string; headers: unknown }) => ({
            method: req.method,
            url: req.url,
            headers: req.headers,
          }),
        },
        stream: { write: (l: string) => void own.push(...l.split('\n').filter(Boolean)) },
      },
    })
    const sent: Record<string, string> = {
      'x-proxy-secret': secret,
      authorization: `Bearer ${randomBytes(24).toString('base64url')}`,
      cookie: `wh_desk=${randomBytes(24).toString('base64url')}`,
    }
    try {
      const me = await desk.inject({
        method: 'GET',
        url: '/admin/me',
        headers: { 'x-forwarded-user': 'nobody', ...sent },
      })
      expect(me.statusCode).toBe(401)
    } finally {
      await desk.close()
    }
    const all = own.join('\n')
    expect(all).toContain('x-forwarded-user') // the headers were logged
    expect(all).toContain('x-proxy-secret')
    expect(leaks(own, sent)).toEqual([])
  })
})
