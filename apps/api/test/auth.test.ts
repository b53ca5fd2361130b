import { NONCE_TTL_MS, TOKEN_TTL_SECONDS } from '@wh/config'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, DOMAIN, getNonce, newAccount, siweMessage, startApi, verify } from './support'

const REJECTED = { statusCode: 401, code: 'SIWE_REJECTED', error: 'Unauthorized', message: 'Sign-in rejected' }

describe('sign-in with Ethereum (spec 4.1, 5.1, 3.1)', () => {
  let api: Api
  beforeAll(async () => {
    api = await startApi()
  })
  afterAll(() => api.close())

  const userCount = async () => Number((await api.ctx.database.sql`select count(*)::int as n from users`)[0]?.n)

  it('issues a nonce stored with a 5-minute expiry', async () => {
    const nonce = await getNonce(api.app)
    expect(nonce).toMatch(/^[0-9a-f]{32}$/)
    const [row] = await api.ctx.database
      .sql`select issued_at, expires_at, used_at from siwe_nonces where nonce = ${nonce}`
    expect(row?.expires_at.getTime() - row?.issued_at.getTime()).toBe(NONCE_TTL_MS)
    expect(row?.used_at).toBeNull()
  })

  it('signs in, registers the wallet on first signature, and issues a 7-day token with only sub', async () => {
    const account = newAccount()
    const message = siweMessage(account, await getNonce(api.app))
    const res = await verify(api.app, message, await account.signMessage({ message }))
    expect(res.statusCode).toBe(200)
    const body = res.json()
    expect(body.address).toBe(account.address)
    const [user] = await api.ctx.database
      .sql`select id, wallet_address from users where wallet_address = ${account.address}`
    expect(user).toBeDefined()
    const claims = api.app.jwt.decode<Record<string, unknown>>(body.token) as Record<string, unknown>
    expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'sub'])
    expect(claims.sub).toBe(user?.id)
    expect((claims.exp as number) - (claims.iat as number)).toBe(TOKEN_TTL_SECONDS)
    expect(JSON.stringify(claims).toLowerCase()).not.toContain(account.address.slice(2).toLowerCase())
  })

  it('a returning wallet gets the same user and does not use up an hd_index', async () => {
    const account = newAccount()
    const first = async () => {
      const message = siweMessage(account, await getNonce(api.app))
      return verify(api.app, message, await account.signMessage({ message }))
    }
    const a = await first()
    const b = await first()
    const subA = (api.app.jwt.decode(a.json().token) as { sub: string }).sub
    const subB = (api.app.jwt.decode(b.json().token) as { sub: string }).sub
    expect(subA).toBe(subB)
    const other = newAccount()
    const m = siweMessage(other, await getNonce(api.app))
    await verify(api.app, m, await other.signMessage({ message: m }))
    const rows = await api.ctx.database.sql`
      select wallet_address, hd_index from users where wallet_address in (${account.address}, ${other.address})`
    const idx = Object.fromEntries(rows.map((r) => [r.wallet_address, r.hd_index]))
    expect(idx[other.address]).toBe(idx[account.address] + 1)
  })

  it('of 50 concurrent verifies carrying one nonce, all validly signed, exactly one succeeds', async () => {
    const nonce = await getNonce(api.app)
    const before = await userCount()
    const attempts = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const account = newAccount()
        const message = siweMessage(account, nonce)
        return { message, signature: await account.signMessage({ message }) }
      }),
    )
    const results = await Promise.all(attempts.map((a) => verify(api.app, a.message, a.signature)))
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1)
    for (const r of results.filter((x) => x.statusCode !== 200)) expect(r.json()).toEqual(REJECTED)
    expect(await userCount()).toBe(before + 1)
  })

  it('100 concurrent first sign-ins from 100 wallets make 100 users with 100 distinct hd_index values', async () => {
    const accounts = Array.from({ length: 100 }, newAccount)
    const signed = await Promise.all(
      accounts.map(async (account) => {
        const message = siweMessage(account, await getNonce(api.app))
        return { message, signature: await account.signMessage({ message }) }
      }),
    )
    const results = await Promise.all(signed.map((s) => verify(api.app, s.message, s.signature)))
    expect(results.every((r) => r.statusCode === 200)).toBe(true)
    const rows = await api.ctx.database.sql`
      select hd_index from users where wallet_address in ${api.ctx.database.sql(accounts.map((a) => a.address))}`
    expect(rows).toHaveLength(100)
    expect(new Set(rows.map((r) => r.hd_index)).size).toBe(100)
  })

  it('a replay of a redeemed message is rejected and creates no user', async () => {
    const account = newAccount()
    const message = siweMessage(account, await getNonce(api.app))
    const signature = await account.signMessage({ message })
    expect((await verify(api.app, message, signature)).statusCode).toBe(200)
    const before = await userCount()
    const replay = await verify(api.app, message, signature)
    expect(replay.statusCode).toBe(401)
    expect(replay.json()).toEqual(REJECTED)
    expect(await userCount()).toBe(before)
  })

  it('a replayed signature of a wallet never seen cannot create a user once its nonce is burned', async () => {
    const victim = newAccount()
    const nonce = await getNonce(api.app)
    const message = siweMessage(victim, nonce)
    const signature = await victim.signMessage({ message })
    // the nonce is consumed by someone else's valid sign-in first
    const other = newAccount()
    const otherMessage = siweMessage(other, nonce)
    expect((await verify(api.app, otherMessage, await other.signMessage({ message: otherMessage }))).statusCode).toBe(
      200,
    )
    expect((await verify(api.app, message, signature)).json()).toEqual(REJECTED)
    expect(await api.ctx.database.sql`select 1 from users where wallet_address = ${victim.address}`).toHaveLength(0)
  })

  describe('every rejection is the same opaque 401', () => {
    const cases: Record<
      string,
      () => Promise<{ message: string; signature: string } | { raw: string; type?: string }>
    > = {
      'wrong domain': async () => {
        const a = newAccount()
        const message = siweMessage(a, await getNonce(api.app), { domain: 'evil.example' })
        return { message, signature: await a.signMessage({ message }) }
      },
      'expired expirationTime': async () => {
        const a = newAccount()
        const message = siweMessage(a, await getNonce(api.app), {
          expirationTime: new Date(api.clock.now().getTime() - 1000).toISOString(),
        })
        return { message, signature: await a.signMessage({ message }) }
      },
      'notBefore in the future': async () => {
        const a = newAccount()
        const message = siweMessage(a, await getNonce(api.app), {
          notBefore: new Date(api.clock.now().getTime() + 60_000).toISOString(),
        })
        return { message, signature: await a.signMessage({ message }) }
      },
      'tampered message': async () => {
        const a = newAccount()
        const message = siweMessage(a, await getNonce(api.app))
        const signature = await a.signMessage({ message })
        return { message: message.replace('Sign in to Wheelhouse', 'Sign in to Wheelhous3'), signature }
      },
      'signature by another key': async () => {
        const a = newAccount()
        const message = siweMessage(a, await getNonce(api.app))
        return { message, signature: await newAccount().signMessage({ message }) }
      },
      'unknown nonce': async () => {
        const a = newAccount()
        const message = siweMessage(a, 'Unknown123Nonce')
        return { message, signature: await a.signMessage({ message }) }
      },
      'malformed message': async () => {
        const a = newAccount()
        const message = `hello ${await getNonce(api.app)}`
        return { message, signature: await a.signMessage({ message }) }
      },
      'missing signature field': async () => ({ raw: JSON.stringify({ message: 'x' }) }),
      'missing message field': async () => ({ raw: JSON.stringify({ signature: `0x${'11'.repeat(65)}` }) }),
      'wrong field types': async () => ({ raw: JSON.stringify({ message: 1, signature: true }) }),
      'invalid JSON': async () => ({ raw: '{"message": ' }),
      'empty body': async () => ({ raw: '' }),
      'signature not hex': async () => ({ raw: JSON.stringify({ message: 'x', signature: 'zz' }) }),
    }
    for (const [name, make] of Object.entries(cases)) {
      it(name, async () => {
        const before = await userCount()
        const input = await make()
        const res =
          'raw' in input
            ? await api.app.inject({
                method: 'POST',
                url: '/auth/verify',
                headers: { 'content-type': 'application/json' },
                payload: input.raw,
              })
            : await verify(api.app, input.message, input.signature)
        expect(res.statusCode).toBe(401)
        expect(res.json()).toEqual(REJECTED)
        expect(await userCount()).toBe(before)
      })
    }

    it('an expired nonce (controlled clock)', async () => {
      const a = newAccount()
      const message = siweMessage(a, await getNonce(api.app))
      const signature = await a.signMessage({ message })
      api.clock.advance(NONCE_TTL_MS + 1)
      try {
        const res = await verify(api.app, message, signature)
        expect(res.json()).toEqual(REJECTED)
      } finally {
        api.clock.advance(-(NONCE_TTL_MS + 1))
      }
    })
  })

  it('a failed signature leaves the nonce unused, so the rightful signer can still use it', async () => {
    const a = newAccount()
    const message = siweMessage(a, await getNonce(api.app))
    expect((await verify(api.app, message, await newAccount().signMessage({ message }))).statusCode).toBe(401)
    expect((await verify(api.app, message, await a.signMessage({ message }))).statusCode).toBe(200)
  })

  it('accepts an arbitrary chainId (spec 5.1: not verified)', async () => {
    const a = newAccount()
    const message = siweMessage(a, await getNonce(api.app), { chainId: 999_999_999 })
    expect((await verify(api.app, message, await a.signMessage({ message }))).statusCode).toBe(200)
  })

  it('accepts an all-lowercase address and answers with the EIP-55 form', async () => {
    const a = newAccount()
    const nonce = await getNonce(api.app)
    const message = siweMessage(a, nonce).replace(a.address, a.address.toLowerCase())
    const res = await verify(api.app, message, await a.signMessage({ message }))
    expect(res.statusCode).toBe(200)
    expect(res.json().address).toBe(a.address)
    expect(await api.ctx.database.sql`select 1 from users where wallet_address = ${a.address}`).toHaveLength(1)
  })

  it('accepts a message with scheme, port-free domain and every optional field', async () => {
    const a = newAccount()
    const now = api.clock.now().getTime()
    const message = siweMessage(a, await getNonce(api.app), {
      scheme: 'https',
      expirationTime: new Date(now + 60_000).toISOString(),
      notBefore: new Date(now - 60_000).toISOString(),
      requestId: 'abc',
      resources: ['https://app.example.test/terms'],
    })
    expect((await verify(api.app, message, await a.signMessage({ message }))).statusCode).toBe(200)
    expect(DOMAIN).toBe('app.example.test')
  })
})

describe('rate limit on /auth/*', () => {
  let api: Api
  beforeAll(async () => {
    api = await startApi({ AUTH_RATE_LIMIT_PER_MINUTE: '3' })
  })
  afterAll(() => api.close())

  it('answers 429 in the error shape past the per-IP limit', async () => {
    const ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`
    const codes: number[] = []
    for (let i = 0; i < 4; i++) {
      codes.push((await api.app.inject({ method: 'GET', url: '/auth/nonce', remoteAddress: ip })).statusCode)
    }
    expect(codes).toEqual([200, 200, 200, 429])
    const res = await api.app.inject({ method: 'GET', url: '/auth/nonce', remoteAddress: ip })
    expect(res.json()).toMatchObject({ statusCode: 429, code: 'RATE_LIMITED', error: 'Too Many Requests' })
    // another address is not affected
    const other = await api.app.inject({ method: 'GET', url: '/auth/nonce', remoteAddress: '10.8.0.1' })
    expect(other.statusCode).toBe(200)
  })
})

describe('the sign-in limit behind a reverse proxy (TRUST_PROXY)', () => {
  const nonceFrom = (api: Api, proxy: string, client: string) =>
    api.app.inject({ method: 'GET', url: '/auth/nonce', remoteAddress: proxy, headers: { 'x-forwarded-for': client } })

  it('trusting the proxy, each client behind it has its own limit', async () => {
    const api = await startApi({ AUTH_RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '10.77.0.0/16' })
    try {
      const proxy = '10.77.0.5'
      const a = [await nonceFrom(api, proxy, '203.0.113.1'), await nonceFrom(api, proxy, '203.0.113.1')]
      expect(a.map((r) => r.statusCode)).toEqual([200, 200])
      expect((await nonceFrom(api, proxy, '203.0.113.1')).statusCode).toBe(429)
      // another client through the same proxy is not limited by the first
      expect((await nonceFrom(api, proxy, '203.0.113.2')).statusCode).toBe(200)
      // a client that is not the proxy cannot pick its own address with the header
      const direct = '198.51.100.7'
      const spoofed = [
        await nonceFrom(api, direct, '203.0.113.50'),
        await nonceFrom(api, direct, '203.0.113.51'),
        await nonceFrom(api, direct, '203.0.113.52'),
      ]
      expect(spoofed.map((r) => r.statusCode)).toEqual([200, 200, 429])
    } finally {
      await api.close()
    }
  })

  it('not trusting it (the default), the header is ignored and the proxy is one client', async () => {
    const api = await startApi({ AUTH_RATE_LIMIT_PER_MINUTE: '2' })
    try {
      const proxy = '10.78.0.5'
      const codes = [
        (await nonceFrom(api, proxy, '203.0.113.1')).statusCode,
        (await nonceFrom(api, proxy, '203.0.113.2')).statusCode,
        (await nonceFrom(api, proxy, '203.0.113.3')).statusCode,
      ]
      expect(codes).toEqual([200, 200, 429])
    } finally {
      await api.close()
    }
  })
})
