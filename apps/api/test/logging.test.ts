import { Writable } from 'node:stream'
import { ManualClock } from '@wh/core'
import { integrationContext } from '@wh/testkit'
import { buildChainRegistry, DepositKeyring } from '@wh/wallet'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildServer, loggerOptions } from '../src/server'
import { getNonce, newAccount, siweMessage, verify } from './support'

describe('secrets never reach the logs', () => {
  const lines: string[] = []
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let app: Awaited<ReturnType<typeof buildServer>>
  let redis: Redis

  beforeAll(async () => {
    ctx = await integrationContext({ AUTH_RATE_LIMIT_PER_MINUTE: '100000', SIWE_DOMAIN: 'app.example.test' })
    redis = new Redis(ctx.config.cacheUrl)
    const stream = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk))
        done()
      },
    })
    app = await buildServer({
      config: ctx.config,
      database: ctx.database,
      redis,
      keyring: DepositKeyring.fromMnemonic(ctx.config.keys.masterMnemonic).publicOnly(),
      chains: buildChainRegistry(ctx.config),
      clock: new ManualClock(Date.now()),
      // the most verbose level, with the production redaction (serializers and every line's hook)
      logger: { ...loggerOptions('trace'), stream },
    })
    await app.ready()
  })
  afterAll(async () => {
    await app.close()
    redis.disconnect()
    await ctx.database.close()
  })

  it('logs requests, but no secret, token or signature, across sign-in, guarded reads and failures', async () => {
    const account = newAccount()
    const message = siweMessage(account, await getNonce(app))
    const signature = await account.signMessage({ message })
    const res = await verify(app, message, signature)
    const token = res.json().token as string
    await app.inject({ method: 'GET', url: '/deposit-address', headers: { authorization: `Bearer ${token}` } })
    await app.inject({ method: 'GET', url: '/deposit-address', headers: { authorization: `Bearer ${token}x` } })
    await verify(app, message, signature) // a replay: rejected
    // a token in a WebSocket's query: the socket is refused (4400), the request still logged
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address() as { port: number }
    const closed = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${address.port}/ws/account?token=${token}&x=1`)
      ws.addEventListener('close', (e) => resolve(e.code))
      ws.addEventListener('error', () => undefined)
    })
    expect(closed).toBe(4400)
    // credential-named query parameters on any route, and a Bearer quoted in a value
    await app.inject({ method: 'GET', url: `/assets?signature=${signature}&access_token=${token}` })
    await app.inject({ method: 'GET', url: `/deposit-address?authorization=${encodeURIComponent(`Bearer ${token}`)}` })
    await app.inject({
      method: 'POST',
      url: '/auth/verify',
      payload: '{"message":',
      headers: { 'content-type': 'application/json' },
    })

    expect(lines.length).toBeGreaterThan(5)
    const all = lines.join('')
    expect(all).toContain('incoming request')
    // the WebSocket's request is logged, without its query; the other paths keep their harmless parameters
    expect(all).toContain('"url":"/ws/account"')
    expect(all).toContain('signature=[redacted]')
    expect(all).toContain('access_token=[redacted]')
    const secrets = {
      JWT_SECRET: ctx.env.JWT_SECRET,
      MASTER_MNEMONIC: ctx.env.MASTER_MNEMONIC,
      MASTER_PRIVATE_KEY: ctx.env.MASTER_PRIVATE_KEY,
      SESSION_PRIVATE_KEY: ctx.env.SESSION_PRIVATE_KEY,
      GAS_WALLET_PRIVATE_KEY: ctx.env.GAS_WALLET_PRIVATE_KEY,
      SWAP_WALLET_PRIVATE_KEY: ctx.env.SWAP_WALLET_PRIVATE_KEY,
      WEBHOOK_SECRET: ctx.env.WEBHOOK_SECRET,
      token,
      signature,
      'token signature part': token.split('.')[2],
    }
    for (const [name, value] of Object.entries(secrets)) {
      expect(value, name).toBeTruthy()
      expect(all.includes(value as string), `${name} appears in the log`).toBe(false)
    }
  })
})
