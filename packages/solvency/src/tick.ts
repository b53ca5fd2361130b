/**
 * The solvency tick's run (the worker's `solvency-run`, queue `solvency`, every
 * SOLVENCY_EVERY_SECONDS, under a Redis lock): one run (run.ts) over every chain node, the exchange's subaccounts (`get_all_portfolios`, one
 * call) and the platform's exchange wallet. docs/solvency.md "Continuous solvency".
 *
 * The exchange wallet is read where it lives: on the exchange's own chain (EXCHANGE_CHAIN_RPC_URL,
 * each currency's ERC-20 there, `balanceOf` the wallet); in the local run, where the Derive
 * simulator stands in for that chain, from the simulator.
 *
 * After the run, the transfers in flight past their documented time are told to ops, once each, by
 * the hook the worker passes (CCTP transfers burned and not minted past Circle's documented time,
 * docs/chains.md "The L2 route"): the run counts them in flight, the alert says they are late.
 */
import { type Config, LOCK_TTL_MS } from '@wh/config'
import type { Sql } from '@wh/db'
import type { DeriveClient } from '@wh/exchange'
import { withLock } from '@wh/jobs'
import { currencyDecimals } from '@wh/subaccounts'
import {
  type Alerter,
  CHAIN_NAMES,
  type ChainClients,
  type ChainInfo,
  type ChainName,
  type PlatformWallet,
} from '@wh/wallet'
import type { Redis } from 'ioredis'
import { type Address, createPublicClient, erc20Abi, formatUnits, http } from 'viem'
import { type ExchangeHoldingsReader, runSolvency, type SolvencyDeps } from './run'

export const SOLVENCY_TICK = 'solvency-run'
/** Collateral currencies the exchange wallet may hold. */
export const EXCHANGE_CURRENCIES = ['USDC', 'ETH', 'BTC'] as const

/** What the tick's run reads (the worker's deps satisfy it). */
export interface SolvencyTickDeps {
  readonly sql: Sql
  /** the run's lock */
  readonly redis: Redis
  readonly config: Pick<Config, 'exchange' | 'localChains' | 'reconcileEpsilon' | 'solvency'>
  readonly registry: ReadonlyMap<ChainName, ChainInfo>
  readonly clients: ReadonlyMap<ChainName, ChainClients>
  readonly platformWallets: readonly PlatformWallet[]
  /** the exchange's subaccounts and currencies (the platform's Derive client) */
  readonly exchange: DeriveClient
  readonly alerter: Pick<Alerter, 'alert'>
  /** tests only: the simulator's wallet balances in the local run */
  readonly fetch?: typeof fetch
}

/** The run's logger, typed by what it calls (the worker's fits). */
export interface SolvencyLog {
  warn(obj: object, msg?: string): void
}

/** The exchange as the run reads it. */
export function exchangeHoldings(deps: SolvencyTickDeps): ExchangeHoldingsReader {
  const wallet = deps.config.exchange.walletAddress
  return {
    account: wallet,
    async subaccounts() {
      return (await deps.exchange.getAllPortfolios()).map((p) => ({
        subaccountId: p.subaccount_id,
        failed: p.failed_to_fetch === true,
        collaterals: (p.collaterals ?? []).map((c) => ({ asset: c.asset_name, amount: c.amount })),
      }))
    },
    async wallet() {
      if (deps.config.localChains !== undefined) {
        // the local run: the simulator holds the exchange wallet's balances
        return Promise.all(
          EXCHANGE_CURRENCIES.map(async (asset) => {
            const res = await (deps.fetch ?? fetch)(new URL('/_sim/wallet_balance', deps.config.exchange.httpUrl), {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ wallet, asset_name: asset }),
            })
            if (!res.ok) throw new Error(`the simulator did not state the exchange wallet's ${asset}: ${res.status}`)
            return { asset, amount: String(((await res.json()) as { amount: unknown }).amount) }
          }),
        )
      }
      const client = createPublicClient({ transport: http(deps.config.exchange.chainRpcUrl) })
      return Promise.all(
        EXCHANGE_CURRENCIES.map(async (asset) => {
          const c = await deps.exchange.getCurrency(asset)
          const token = c.protocol_asset_addresses.underlying_erc20
          const decimals = c.erc20_details?.decimals
          if (!token || decimals === undefined) return { asset, amount: '0' }
          const raw = await client.readContract({
            address: token as Address,
            abi: erc20Abi,
            functionName: 'balanceOf',
            args: [wallet],
          })
          return { asset, amount: formatUnits(raw, decimals) }
        }),
      )
    },
  }
}

export function solvencyDeps(deps: SolvencyTickDeps): SolvencyDeps {
  const chains: Array<SolvencyDeps['chains'][number]> = []
  for (const chain of CHAIN_NAMES) {
    const info = deps.registry.get(chain)
    const clients = deps.clients.get(chain)
    if (info && clients) chains.push({ chain, info, client: clients.publicClient })
  }
  return {
    sql: deps.sql,
    chains,
    platformWallets: deps.platformWallets,
    exchange: exchangeHoldings(deps),
    decimalsOf: (currency) => currencyDecimals(deps.exchange, currency),
    epsilon: deps.config.reconcileEpsilon,
    stopOnDeficit: deps.config.solvency.stopOnDeficit,
    alerter: deps.alerter,
  }
}

/**
 * One solvency tick: the run under its Redis lock, then `alertLate` (the transfers in flight past
 * their documented time, alerted once each; the worker passes CCTP's), and a JSON-safe summary
 * (BullMQ stores it), logged as a warning when the run is incomplete, short or something is late.
 *
 * @example
 *   await runSolvencyTick(deps, log, () => alertLateCctp(deps)) // { runId, complete, totals, … }
 */
export async function runSolvencyTick(
  deps: SolvencyTickDeps,
  log: SolvencyLog,
  alertLate: () => Promise<readonly string[]>,
) {
  const r = await withLock(deps.redis, `lock:${SOLVENCY_TICK}`, LOCK_TTL_MS, () => runSolvency(solvencyDeps(deps)))
  if (!r) return { status: 'locked' }
  // CCTP transfers burned and not minted past Circle's documented time: counted in flight above, told once here
  const lateCctp = await alertLate()
  const summary = {
    runId: r.runId,
    complete: r.complete,
    totals: r.totals.map((t) => ({ currency: t.currency, surplus: t.surplus.toString() })),
    deficits: r.deficits.map((d) => d.currency),
    surpluses: r.surpluses.length,
    errors: r.errors,
    stopRaised: r.stopRaised,
    lateCctp,
  }
  if (!r.complete || r.deficits.length > 0 || lateCctp.length > 0) log.warn(summary, 'solvency run')
  return summary
}
