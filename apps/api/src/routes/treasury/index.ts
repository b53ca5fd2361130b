/**
 * The caller's deposit address (spec 2.1 rules 2–4, 4.2): JWT → user id → user → hd_index →
 * derived address. A user's hd_index never changes, so it is cached per process; the address
 * of an index is cached by the keyring. A warm request does no I/O; the first one of a user in a
 * process records the address in deposit_addresses.
 */
import { DepositAddressResponse } from '@wh/api-schemas/treasury'
import { Lru, NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { type ChainInfo, type ChainName, type DepositKeyring, recordDepositAddresses } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
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
