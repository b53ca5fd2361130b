/**
 * The solvency tick (queue `solvency`, every SOLVENCY_EVERY_SECONDS, under a Redis lock): one run
 * of @wh/solvency over every chain node, the exchange's subaccounts (`get_all_portfolios`, one
 * call) and the platform's exchange wallet. docs/solvency.md "Continuous solvency".
 *
 * The exchange wallet is read where it lives: on the exchange's own chain (EXCHANGE_CHAIN_RPC_URL,
 * each currency's ERC-20 there, `balanceOf` the wallet); in the local run, where the Derive
 * simulator stands in for that chain, from the simulator.
 *
 * After the run, CCTP transfers burned and not minted past Circle's documented time are told to ops, once each
 * (docs/chains.md "The L2 route"): the run counts them in flight, the alert says they are late.
 */
import { LOCK_TTL_MS } from '@wh/config'
import { withLock } from '@wh/jobs'
import { type ExchangeHoldingsReader, runSolvency, type SolvencyDeps } from '@wh/solvency'
import { currencyDecimals } from '@wh/subaccounts'
import { alertLateCctp } from '@wh/treasury'
import { CHAIN_NAMES } from '@wh/wallet'
import { type Address, createPublicClient, erc20Abi, formatUnits, http } from 'viem'
import type { TickDefinition, WorkerDeps } from '../../ticks'

export const SOLVENCY_TICK = 'solvency-run'
/** Collateral currencies the exchange wallet may hold. */
export const EXCHANGE_CURRENCIES = ['USDC', 'ETH', 'BTC'] as const

export type SolvencyTickDeps = Pick<
  WorkerDeps,
  'sql' | 'redis' | 'config' | 'registry' | 'clients' | 'platformWallets' | 'exchange' | 'alerter'
> & { readonly fetch?: typeof fetch }

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

export const solvencyTick: TickDefinition = {
  name: SOLVENCY_TICK,
  queue: 'solvency',
  everyMsOf: (config) => config.solvency.everyMs,
  process: async (_job, ctx) => {
    const r = await withLock(ctx.deps.redis, `lock:${SOLVENCY_TICK}`, LOCK_TTL_MS, () =>
      runSolvency(solvencyDeps(ctx.deps)),
    )
    if (!r) return { status: 'locked' }
    // CCTP transfers burned and not minted past Circle's documented time: counted in flight above, told once here
    const lateCctp = await alertLateCctp(ctx.deps)
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
    if (!r.complete || r.deficits.length > 0 || lateCctp.length > 0) ctx.log.warn(summary, 'solvency run')
    return summary
  },
}
