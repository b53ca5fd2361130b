/**
 * The caller's deposit address (spec 2.1 rules 2–4, 4.2): JWT → user id → user → hd_index →
 * derived address. A user's hd_index never changes, so it is cached per process; the address
 * of an index is cached by the keyring. A warm request does no I/O; the first one of a user in a
 * process records the address in deposit_addresses. And the caller's deposits with their
 * progress (GET /deposits; docs/chains.md "A deposit's progress").
 */
import {
  DEPOSITS_PAGE_LIMIT_DEFAULT,
  DEPOSITS_PAGE_LIMIT_MAX,
  DepositAddressResponse,
  DepositsQuery,
  DepositsResponse,
} from '@wh/api-schemas/treasury'
import { decimalsOf, fromBaseUnits, Lru, NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { type UserDeposit, userDeposits } from '@wh/deposits'
import { type ChainInfo, type ChainName, type DepositKeyring, recordDepositAddresses } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { decodeCursor, encodeCursor, pageLimit } from '../../lib/page'
import { currentUser, requireAuth } from '../../plugins/auth'

export interface TreasuryRoutesOptions {
  sql: Sql
  keyring: DepositKeyring
  chains: ReadonlyMap<ChainName, ChainInfo>
}

function formatUnits(units: bigint, decimals: number): string {
  const s = units.toString().padStart(decimals + 1, '0')
  const whole = s.slice(0, -decimals)
  const frac = s.slice(-decimals).replace(/0+$/, '')
  return frac ? `${whole}.${frac}` : whole
}

export default async function treasuryRoutes(app: FastifyInstance, opts: TreasuryRoutesOptions) {
  requireAuth(app)
  const hdIndexByUser = new Lru<string, number>(100_000)
  // the chain part of the answer is the same for every user: build it once
  const chains = [...opts.chains.values()].map((c) => ({
    chain: c.name,
    chainId: c.chainId,
    confirmations: c.confirmations,
    tokens: c.tokens.map((t) => ({
      symbol: t.symbol,
      decimals: t.decimals,
      contract: t.contract,
      minDeposit: formatUnits(t.minDepositBaseUnits, t.decimals),
    })),
  }))

  app.get(
    '/deposit-address',
    {
      schema: {
        tags: ['treasury'],
        summary: "The caller's deposit address and what it accepts",
        response: { 200: DepositAddressResponse, 404: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      let hdIndex = hdIndexByUser.get(userId)
      if (hdIndex === undefined) {
        const rows = await opts.sql<{ hd_index: number }[]>`select hd_index from users where id = ${userId}`
        if (!rows[0]) throw new NotFoundError('user')
        hdIndex = rows[0].hd_index
        // the first time this process shows the address: kept, so it is refused as a withdrawal
        // destination at once (docs/hostile-world.md "Destinations"); later requests do no I/O
        await recordDepositAddresses(opts.sql, [{ hdIndex, address: opts.keyring.address(hdIndex), userId }])
        hdIndexByUser.set(userId, hdIndex)
      }
      return { address: opts.keyring.address(hdIndex), chains }
    },
  )
}

/** A deposit as GET /deposits shows it: its steps' times (docs/chains.md "A deposit's progress"). */
function depositItem(d: UserDeposit, confirmations: number) {
  const recorded = d.createdAt.toISOString()
  const swept = d.state === 'swept'
  return {
    id: d.id,
    chain: d.chain,
    asset: d.token,
    amount: fromBaseUnits(BigInt(d.amount), decimalsOf(d.token) ?? 0),
    txHash: d.txHash,
    blockNumber: d.blockNumber,
    confirmations,
    stage: swept ? ('swept' as const) : ('credited' as const),
    detectedAt: recorded,
    confirmedAt: recorded,
    creditedAt: recorded,
    sweptAt: swept ? d.updatedAt.toISOString() : null,
  }
}

/** GET /deposits: the caller's deposits, newest first, cursor pages. */
export async function depositsRoute(app: FastifyInstance, opts: TreasuryRoutesOptions) {
  requireAuth(app)
  const confirmations = new Map([...opts.chains.values()].map((c) => [c.name as string, c.confirmations]))
  app.get<{ Querystring: Type.Static<typeof DepositsQuery> }>(
    '/deposits',
    {
      schema: {
        tags: ['treasury'],
        summary: "The caller's deposits, newest first, with each one's progress: detected, confirmed, credited, swept",
        description:
          'A deposit is recorded once its block is `confirmations` deep, and credited in the same transaction: its ' +
          'first three steps share one time. `sweptAt` follows when it moved on to the hot wallet. Live: ' +
          '`deposit.credited` and `deposit.swept` on WS /ws/account.',
        querystring: DepositsQuery,
        response: { 200: DepositsResponse, 400: { $ref: 'ErrorBody#' } },
      },
    },
    async (request) => {
      const { userId } = currentUser(request)
      const limit = pageLimit(request.query.limit, DEPOSITS_PAGE_LIMIT_DEFAULT, DEPOSITS_PAGE_LIMIT_MAX)
      const before = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor)
      const rows = await userDeposits(opts.sql, userId, { limit: limit + 1, ...(before && { before }) })
      const page = rows.slice(0, limit)
      const last = page.at(-1)
      return {
        items: page.map((d) => depositItem(d, confirmations.get(d.chain) ?? 0)),
        nextCursor:
          rows.length > limit && last ? encodeCursor({ created_at_text: last.createdAtText, id: last.id }) : null,
      }
    },
  )
}
