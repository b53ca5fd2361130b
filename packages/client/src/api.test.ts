import { describe, expect, it } from 'vitest'
import { ApiClient } from './api.js'
import { ApiError } from './errors.js'

function recorder(status = 200, body: unknown = {}, headers: Record<string, string> = {}) {
  const calls: { url: string; init: RequestInit }[] = []
  const f = (async (url: string, init: RequestInit) => {
    calls.push({ url, init })
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers })
  }) as unknown as typeof fetch
  return { calls, f }
}

describe('ApiClient', () => {
  it('sends the bearer token on protected calls only, and drops undefined query values', async () => {
    const { calls, f } = recorder(200, { positions: [], wheels: [], nextCursor: null })
    const api = new ApiClient({ baseUrl: 'http://api.test/', token: () => 'T', fetch: f })
    await api.positions({ limit: 5, cursor: undefined })
    await api.assets()
    expect(calls[0]!.url).toBe('http://api.test/positions?limit=5')
    expect((calls[0]!.init.headers as Record<string, string>).authorization).toBe('Bearer T')
    expect(calls[1]!.url).toBe('http://api.test/assets')
    expect((calls[1]!.init.headers as Record<string, string>).authorization).toBeUndefined()
  })

  it('sends no authorization header when there is no token (spec 5.3: none for another address)', async () => {
    const { calls, f } = recorder(200, { address: '0x', chains: [] })
    await new ApiClient({ baseUrl: 'http://api.test', token: () => undefined, fetch: f }).depositAddress()
    expect((calls[0]!.init.headers as Record<string, string>).authorization).toBeUndefined()
  })

  it("patches a wheel's settings and resumes a wheel, the id escaped", async () => {
    const { calls, f } = recorder(200, { id: 'w' })
    const api = new ApiClient({ baseUrl: 'http://api.test', token: () => 'T', fetch: f })
    await api.updateWheelSettings('a/b', { putTargetDeltaBps: 3000, otmBps: null })
    await api.resumeWheel('w1')
    expect(calls[0]!.url).toBe('http://api.test/wheels/a%2Fb')
    expect(calls[0]!.init.method).toBe('PATCH')
    expect(calls[0]!.init.body).toBe('{"putTargetDeltaBps":3000,"otmBps":null}')
    expect(calls[1]!.url).toBe('http://api.test/wheels/w1/resume')
    expect(calls[1]!.init.method).toBe('POST')
    expect((calls[1]!.init.headers as Record<string, string>).authorization).toBe('Bearer T')
  })

  it('posts JSON with the idempotency key', async () => {
    const { calls, f } = recorder(202, { id: 'x' })
    const api = new ApiClient({ baseUrl: 'http://api.test', token: () => 'T', fetch: f })
    await api.createPosition({ asset: 'ETH', side: 'put', amount: '100' }, { idempotencyKey: 'k1' })
    expect(calls[0]!.init.method).toBe('POST')
    expect(calls[0]!.init.body).toBe('{"asset":"ETH","side":"put","amount":"100"}')
    expect(calls[0]!.init.headers).toMatchObject({ 'content-type': 'application/json', 'idempotency-key': 'k1' })
  })

  it('turns the error shape into a typed ApiError', async () => {
    const { f } = recorder(422, {
      statusCode: 422,
      code: 'AMOUNT_BELOW_MINIMUM',
      error: 'Unprocessable Entity',
      message: 'too small',
    })
    const err = await new ApiClient({ baseUrl: 'http://api.test', fetch: f })
      .requestWithdrawal({ chain: 'base', asset: 'USDC', amount: '1', destination: `0x${'1'.repeat(40)}` })
      .catch((e) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect(err).toMatchObject({ statusCode: 422, code: 'AMOUNT_BELOW_MINIMUM', message: 'too small' })
  })

  it('a non-JSON error still becomes an ApiError with the status', async () => {
    const { f } = recorder(502, '<html>bad gateway</html>')
    const err = await new ApiClient({ baseUrl: 'http://api.test', fetch: f }).assets().catch((e) => e)
    expect(err).toMatchObject({ name: 'ApiError', statusCode: 502, code: 'HTTP_ERROR' })
  })

  it('reads the statement as CSV with the next cursor from the header', async () => {
    const { calls, f } = recorder(200, 'event_id,type\n', { 'x-next-cursor': 'c2' })
    const out = await new ApiClient({ baseUrl: 'http://api.test', token: () => 'T', fetch: f }).portfolioStatementCsv({
      limit: 10,
    })
    expect(calls[0]!.url).toBe('http://api.test/portfolio/statement?limit=10&format=csv')
    expect(out).toEqual({ csv: 'event_id,type\n', nextCursor: 'c2' })
  })

  it('a 503 health answer is returned, not thrown', async () => {
    const { f } = recorder(503, { status: 'down' })
    expect(await new ApiClient({ baseUrl: 'http://api.test', fetch: f }).health()).toEqual({ status: 'down' })
  })
})
