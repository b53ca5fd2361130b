import { AppError } from '@wh/core'
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import { registerErrorHandling } from './errors'
import { SignInThrottledError } from './login-throttle'

describe('Retry-After: one helper for every answer that has one', () => {
  it('what the error says, else 5 s on a 503 and 60 s on our own 429', async () => {
    const app = Fastify({ logger: false })
    registerErrorHandling(app)
    app.get('/throttled', async () => {
      throw new SignInThrottledError(17, 'for this operator')
    })
    app.get('/limited', async () => {
      throw new AppError({ code: 'WITHDRAWAL_RATE_LIMITED', statusCode: 429, message: 'per minute' })
    })
    app.get('/unavailable', async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })
    })
    app.get('/refused', async () => {
      throw new AppError({ code: 'NOPE', statusCode: 409, message: 'no' })
    })
    const answer = async (url: string) => {
      const r = await app.inject({ method: 'GET', url })
      return [r.statusCode, r.headers['retry-after']]
    }
    expect(await answer('/throttled')).toEqual([429, '17'])
    expect(await answer('/limited')).toEqual([429, '60'])
    expect(await answer('/unavailable')).toEqual([503, '5'])
    expect(await answer('/refused')).toEqual([409, undefined])
    await app.close()
  })
})
