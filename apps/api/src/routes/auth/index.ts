/**
 * Sign-in with Ethereum (spec 4.1, 5.1). Public routes, rate-limited per IP.
 * POST /auth/verify runs the spec's steps in order: verify message and signature, redeem the
 * nonce, find or create the user, issue the token. Every failure is the same opaque 401.
 */

import { NonceResponse, VerifyBody, VerifyResponse } from '@wh/api-schemas/auth'
import { AppError, type Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { toErrorBody } from '../../plugins/errors'
import { issueNonce, NonceRedeemer } from './nonces'
import { verifySiweSignature } from './siwe-verify'
import { createUser } from './users'

export class SiweRejectedError extends AppError {
  constructor() {
    // one message for every cause (spec 5.1: no detail, to prevent probing)
    super({ code: 'SIWE_REJECTED', statusCode: 401, message: 'Sign-in rejected' })
  }
}

export interface AuthRoutesOptions {
  sql: Sql
  clock: Clock
  siweDomain: string
  rateLimitPerMinute: number
}

export default async function authRoutes(app: FastifyInstance, opts: AuthRoutesOptions) {
  const rateLimit = { max: opts.rateLimitPerMinute, timeWindow: 60_000 }
  const redeemer = new NonceRedeemer(opts.sql, () => opts.clock.now())

  app.get(
    '/auth/nonce',
    {
      config: { rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'A fresh sign-in nonce',
        response: { 200: NonceResponse, 429: { $ref: 'ErrorBody#' } },
      },
    },
    async () => ({ nonce: await issueNonce(opts.sql, opts.clock.now()) }),
  )

  app.post<{ Body: { message: string; signature: string } }>(
    '/auth/verify',
    {
      config: { rateLimit },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a signed SIWE message for an access token',
        body: VerifyBody,
        response: { 200: VerifyResponse, 401: { $ref: 'ErrorBody#' }, 429: { $ref: 'ErrorBody#' } },
      },
      // Fastify's own body errors (bad JSON, wrong types, missing fields) are rejections too.
      errorHandler: (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
        const body = toErrorBody(err)
        if (body.statusCode >= 500 || body.statusCode === 429) {
          if (body.statusCode >= 500) request.log.error({ err }, 'sign-in failed')
          return reply.code(body.statusCode).send(body)
        }
        return reply.code(401).send(toErrorBody(new SiweRejectedError()))
      },
    },
    async (request) => {
      const { message, signature } = request.body
      const now = opts.clock.now()
      // step 1
      const fields = verifySiweSignature(message, signature, { domain: opts.siweDomain, nowMs: now.getTime() })
      if (!fields) throw new SiweRejectedError()
      // step 2: burn the nonce before any user exists, so a replay cannot create one;
      // a returning wallet's user comes back in the same round trip
      const redemption = await redeemer.redeem(fields.nonce, fields.address)
      if (!redemption.redeemed) throw new SiweRejectedError()
      // step 3: find (above) or create
      const user = redemption.user ?? (await createUser(opts.sql, fields.address))
      // step 4: sub = user id; the wallet address is deliberately not in the token
      const token = await app.jwt.sign({ sub: user.id })
      return { token, address: fields.address }
    },
  )
}
