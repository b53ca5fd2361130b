/**
 * Where a withdrawal may go (docs/hostile-world.md "Destinations"). Refused, before anything is
 * reserved:
 * - the platform's own addresses (`checkOwn`, the database only): every deposit address (the
 *   caller's, derived from their hd_index, and every stored one) and the platform's wallets (hot,
 *   gas, swap, exchange, which the worker registers: the API holds no key to derive them). Money
 *   sent there would leave the user's balance and land in the platform's own.
 * - on chain (`checkOnChain`, called after every cheap check of the request, so an account with no
 *   balance never costs an RPC call): ETH to an address that holds code (a contract, or an EOA
 *   delegating to one under EIP-7702) unless a dry run of that very payment, made as the worker
 *   will sign it (outbound-policy.ts: from the hot wallet, with the fee fields and the budget as its
 *   gas), succeeds: a contract that reverts is 422 DESTINATION_REFUSES_ETH, one that needs more gas
 *   than the budget 422 DESTINATION_GAS_ABOVE_BUDGET. ETH to an address without code needs no dry
 *   run (exactly 21,000 gas, nothing runs). Any asset to an address with code while the caller is
 *   cooling (cooling.ts) is 422 CONTRACT_DESTINATIONS_COOLING. Tokens to a contract are allowed
 *   otherwise (Safes and exchanges hold them); the worker's own dry run at send time still fails a
 *   transfer the token refuses.
 * An RPC that cannot answer does not block the request: the worker reads the chain again before
 * signing, with the same policy, and fails the withdrawal with a reason if the payment cannot go.
 */
import { Lru } from '@wh/core'
import type { Sql } from '@wh/db'
import {
  type ChainInfo,
  type ChainName,
  createChainClients,
  type DepositKeyring,
  ETH_TO_CODE_GAS_BUDGET,
  loadPlatformWallets,
  outboundFailureOf,
  planGas,
  rpcOf,
} from '@wh/wallet'
import type { Address } from 'viem'
import type { Cooling } from './cooling'
import {
  ContractDestinationsCoolingError,
  DestinationGasAboveBudgetError,
  DestinationRefusesEthError,
  InvalidDestinationError,
} from './errors'

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

export interface DestinationRequest {
  userId: string
  chain: ChainName
  asset: string
  amount: bigint
  destination: Address
}

export interface DestinationGuard {
  /** The platform's own addresses (the database only): throws InvalidDestinationError. */
  checkOwn(req: DestinationRequest): Promise<void>
  /**
   * The chain's answer (after the request's cheap checks): throws DestinationRefusesEthError,
   * DestinationGasAboveBudgetError, ContractDestinationsCoolingError; returns when the destination
   * is acceptable or the chain did not answer (the worker decides then).
   */
  checkOnChain(req: DestinationRequest & { cooling?: Cooling }): Promise<void>
  /** Both, in that order. */
  check(req: DestinationRequest & { cooling?: Cooling }): Promise<void>
}

type Client = ReturnType<typeof createChainClients>['publicClient']
type Log = DestinationGuardOptions['log']

/** undefined when the chain does not answer (the worker decides), else whether `to` holds code. */
async function hasCode(client: Client | undefined, to: Address, log: Log): Promise<boolean | undefined> {
  if (!client) return undefined
  try {
    const code = await client.getCode({ address: to })
    return code !== undefined && code !== '0x'
  } catch (err) {
    log?.warn({ chain: client.chain.name, err: (err as Error).name }, 'withdrawal destination: code read unavailable')
    return undefined
  }
}

/** The ETH payment's dry run as the worker will sign it (outbound-policy.ts); throws the refusal, else returns. */
async function dryRunEth(
  client: Client,
  p: { chain: ChainName; from: Address; to: Address; value: bigint },
  log: Log,
): Promise<void> {
  try {
    await planGas(rpcOf(client), {
      chain: p.chain,
      purpose: 'withdrawal',
      from: p.from,
      call: { to: p.to, value: p.value, data: undefined },
      kind: 'transfer',
      native: true,
    })
  } catch (err) {
    const f = outboundFailureOf(err)
    if (f.kind === 'row' && f.reason === 'gas-above-cap')
      throw new DestinationGasAboveBudgetError(p.chain, ETH_TO_CODE_GAS_BUDGET)
    if (f.kind === 'row') throw new DestinationRefusesEthError(p.chain)
    // the hot wallet short, or no answer: the worker's own dry run decides at send time
    log?.warn({ chain: p.chain, err: (err as Error).name }, 'withdrawal destination: dry run unavailable')
  }
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

  const guard: DestinationGuard = {
    async checkOwn({ userId, destination }) {
      const own = await platformWallets()
      if (own.has(destination.toLowerCase()))
        throw new InvalidDestinationError('destination is an address of this service (a platform wallet)')
      if (await isDepositAddress(userId, destination))
        throw new InvalidDestinationError('destination is a deposit address of this service')
    },
    async checkOnChain({ chain, asset, amount, destination, cooling }) {
      // only ETH runs the destination's code; any asset waits while the caller is cooling
      if (asset !== 'ETH' && cooling?.until === undefined) return
      const code = await hasCode(clients.get(chain), destination, opts.log)
      if (!code) return
      if (cooling?.until !== undefined) throw new ContractDestinationsCoolingError(cooling.failures, cooling.until)
      if (asset !== 'ETH') return
      const hot = [...(await platformWallets())].find(([, role]) => role === 'hot')?.[0] as Address | undefined
      const client = clients.get(chain)
      if (hot && client) await dryRunEth(client, { chain, from: hot, to: destination, value: amount }, opts.log)
    },
    async check(req) {
      await guard.checkOwn(req)
      await guard.checkOnChain(req)
    },
  }
  return guard
}
