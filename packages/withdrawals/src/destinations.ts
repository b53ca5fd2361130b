/**
 * Where a withdrawal may go (docs/hostile-world.md "Destinations"). Refused, before anything is
 * reserved:
 * - the platform's own addresses: every deposit address (the caller's, derived from their
 *   hd_index, and every stored one) and the platform's wallets (hot, gas, swap, exchange, which
 *   the worker registers: the API holds no key to derive them). Money sent there would leave the
 *   user's balance and land in the platform's own.
 * - ETH to an address that holds code (a contract, or an EOA delegating to one under EIP-7702),
 *   unless a dry run of that very payment from the hot wallet succeeds: many contracts refuse
 *   ETH, and a payment that reverts at send time would only come back as a failed withdrawal.
 *   Tokens to a contract are allowed (Safes and exchanges hold them); the worker's own dry run at
 *   send time still fails a transfer the token refuses.
 * An RPC that cannot answer the dry run does not block the request: the worker dry-runs again
 * before signing and fails the withdrawal with a reason if the payment would revert.
 */
import { Lru } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  type ChainInfo,
  type ChainName,
  createChainClients,
  type DepositKeyring,
  loadPlatformWallets,
} from '@wh/wallet'
import type { Address } from 'viem'
import { DestinationRefusesEthError, InvalidDestinationError } from './errors'

/** The platform's addresses are read again after this long (a new wallet is seen within it). */
export const PLATFORM_WALLETS_CACHE_MS = 30_000
/** The code read and the dry run give up after this long (the worker checks again anyway). */
export const DESTINATION_RPC_TIMEOUT_MS = 2_000

export interface DestinationGuardOptions {
  sql: Sql
  chains: ReadonlyMap<ChainName, ChainInfo>
  /** public-only keyring: the caller's own deposit address */
  keyring: DepositKeyring
  now?: () => number
  log?: { warn(obj: object, msg?: string): void }
}

export interface DestinationGuard {
  /** Throws InvalidDestinationError / DestinationRefusesEthError; returns when the destination is acceptable. */
  check(req: { userId: string; chain: ChainName; asset: string; amount: bigint; destination: Address }): Promise<void>
}

export function destinationGuard(opts: DestinationGuardOptions): DestinationGuard {
  const now = opts.now ?? Date.now
  const hdIndexByUser = new Lru<string, number>(100_000)
  const clients = new Map(
    [...opts.chains].map(([name, info]) => [
      name,
      createChainClients(info, { timeoutMs: DESTINATION_RPC_TIMEOUT_MS }).publicClient,
    ]),
  )
  let wallets: { at: number; value: Promise<ReadonlyMap<string, string>> } | undefined

  function platformWallets(): Promise<ReadonlyMap<string, string>> {
    if (!wallets || now() - wallets.at >= PLATFORM_WALLETS_CACHE_MS) {
      const value = loadPlatformWallets(opts.sql)
      // a failed read is not kept: the next request asks again
      value.catch(() => {
        wallets = undefined
      })
      wallets = { at: now(), value }
    }
    return wallets.value
  }

  async function isDepositAddress(userId: string, address: Address): Promise<boolean> {
    let hdIndex = hdIndexByUser.get(userId)
    if (hdIndex === undefined) {
      const rows = await opts.sql<{ hd_index: number }[]>`select hd_index from users where id = ${userId}`
      if (rows[0]) {
        hdIndex = rows[0].hd_index
        hdIndexByUser.set(userId, hdIndex)
      }
    }
    if (hdIndex !== undefined && opts.keyring.address(hdIndex) === address) return true
    const hit = await opts.sql`select 1 from deposit_addresses where address = ${address} limit 1`
    return hit.length > 0
  }

  /** undefined: no answer from the chain (the worker decides); true/false: the dry run's verdict. */
  async function ethAccepted(chain: ChainName, from: Address | undefined, to: Address, value: bigint) {
    const client = clients.get(chain)
    if (!client) return undefined
    try {
      const code = await client.getCode({ address: to })
      if (code === undefined || code === '0x') return true
      if (!from) return undefined
      await client.estimateGas({ account: from, to, value })
      return true
    } catch (err) {
      const text = String((err as Error).message ?? err)
      if (/revert/i.test(text)) return false
      opts.log?.warn({ chain, err: (err as Error).name }, 'withdrawal destination: dry run unavailable')
      return undefined
    }
  }

  return {
    async check({ userId, chain, asset, amount, destination }) {
      const own = await platformWallets()
      if (own.has(destination.toLowerCase()))
        throw new InvalidDestinationError('destination is an address of this service (a platform wallet)')
      if (await isDepositAddress(userId, destination))
        throw new InvalidDestinationError('destination is a deposit address of this service')
      if (asset !== 'ETH') return
      const hot = [...own].find(([, role]) => role === 'hot')?.[0] as Address | undefined
      if ((await ethAccepted(chain, hot, destination, amount)) === false) throw new DestinationRefusesEthError(chain)
    },
  }
}
