/**
 * Sign-in with Ethereum (spec 4.1, 5.1). Public routes, rate-limited per IP.
 * POST /auth/verify runs the spec's steps in order: verify message and signature, redeem the
 * nonce, find or create the user, issue the token. Every failure is the same opaque 401.
 * A signature the message's address's key did not make may still be its contract account's
 * (ERC-1271, ERC-6492): that is asked of the chain the message names (contract-signature.ts), once
 * the nonce reads usable and the address is not bound to another chain; the user is then bound to
 * that chain (docs/architecture.md "Sign-in": a key's signature is good on every chain, a contract
 * account's on its own).
 */

import { NonceResponse, VerifyBody, VerifyResponse } from '@wh/api-schemas/auth'
import { AppError, type Clock } from '@wh/core'
import type { Sql } from '@wh/db'
import type { ChainInfo, ChainName } from '@wh/wallet'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { toErrorBody } from '../../plugins/errors'
import { contractSignatureCheck } from './contract-signature'
import { contractSignInPrecheck, issueNonce, NonceRedeemer, type Redemption } from './nonces'
import type { SiweFields } from './siwe-message'
import { checkSiweMessage, signedByKey } from './siwe-verify'
import { bindContractChain, createUser } from './users'

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
  /** the chains a contract account's signature is checked on (by the message's Chain ID) */
  chains: ReadonlyMap<ChainName, ChainInfo>
}

export default async function authRoutes(app: FastifyInstance, opts: AuthRoutesOptions) {
  const rateLimit = { max: opts.rateLimitPerMinute, timeWindow: 60_000 }
  const redeemer = new NonceRedeemer(opts.sql, () => opts.clock.now())
  const contractSigned = contractSignatureCheck(opts.chains)
  // a contract's signature is asked of a chain only for a usable nonce and an address bound to that chain or none
  const signedByContract = async (fields: SiweFields, message: string, signature: string, now: Date) => {
    const pre = await contractSignInPrecheck(opts.sql, fields.nonce, fields.address, now)
    if (!pre.usable || (pre.boundChainId !== null && pre.boundChainId !== fields.chainId)) return false
    return contractSigned(fields, message, signature)
  }
  // step 3: find (the redemption read it) or create; a contract account's user is bound to its chain
  const userOf = async (redemption: Redemption, fields: SiweFields, byKey: boolean) => {
    const user = redemption.user ?? (await createUser(opts.sql, fields.address, byKey ? null : fields.chainId))
    if (byKey) return user
    const bound = user.contractChainId ?? (await bindContractChain(opts.sql, user.id, fields.chainId))
    if (bound !== fields.chainId) throw new SiweRejectedError()
    return user
  }

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
        description:
          'The signature is the personal_sign (EIP-191) signature of the message by the key of its address, or, ' +
          'for a contract account (a Safe, an ERC-4337 account), a signature its `isValidSignature` accepts ' +
          "(ERC-1271), checked on the chain the message's Chain ID names when it is one of the supported " +
          'chains; an account not deployed yet sends it wrapped per ERC-6492, verified by simulation (nothing ' +
          'is deployed). Every failure, including a chain that does not answer within a few seconds, is the ' +
          'same 401 SIWE_REJECTED.',
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
      // step 1: the message, then its signature: the key's (local, no I/O), else the contract account's
      const fields = checkSiweMessage(message, { domain: opts.siweDomain, nowMs: now.getTime() })
      if (!fields) throw new SiweRejectedError()
      const byKey = signedByKey(fields, message, signature)
      if (!byKey && !(await signedByContract(fields, message, signature, now))) throw new SiweRejectedError()
      // step 2: burn the nonce before any user exists, so a replay cannot create one;
      // a returning wallet's user comes back in the same round trip
      const redemption = await redeemer.redeem(fields.nonce, fields.address)
      if (!redemption.redeemed) throw new SiweRejectedError()
      const user = await userOf(redemption, fields, byKey)
      // step 4: sub = user id; the wallet address is deliberately not in the token
      const token = await app.jwt.sign({ sub: user.id })
      return { token, address: fields.address }
    },
  )
}
