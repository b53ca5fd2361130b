/**
 * What the platform publishes of a solvency run (GET /solvency; docs/solvency.md "Public
 * solvency"): the totals per currency, assets and liabilities by kind, and the platform's own
 * addresses and exchange account the assets were read from, so anyone can read them again on chain
 * and at the exchange. Pure: a stored run in, the public figures out (base units).
 *
 * Nothing of a user: the liabilities are the journal's aggregates, and the deposit addresses (each
 * one user's) are counted per chain, never listed: listing them would tie each user's deposits to
 * them. The places holding more than the records explain (the run's surpluses) name deposit
 * addresses too, and are left out.
 */
import { ASSET_KINDS, LIABILITY_KINDS } from './legs'
import type { StoredRun } from './runs'

export interface PublicCurrencyTotals {
  readonly currency: string
  /** base units */
  readonly assets: bigint
  readonly liabilities: bigint
  /** assets − liabilities */
  readonly surplus: bigint
  readonly assetsByKind: Readonly<Record<string, bigint>>
  readonly liabilitiesByKind: Readonly<Record<string, bigint>>
}

export interface PublicSolvency {
  readonly runId: string
  readonly startedAt: Date
  readonly finishedAt: Date
  readonly totals: readonly PublicCurrencyTotals[]
  /** the platform wallets read, per chain and role (hot, gas, swap, exchange) */
  readonly addresses: ReadonlyArray<{ chain: string; role: string; address: string }>
  /** the platform's account at the exchange whose wallet and subaccounts were read; null when the run did not record it */
  readonly exchangeAccount: string | null
}

const PLATFORM_PLACE = /^([a-z][a-z0-9-]*):([a-z]+):(0x[0-9a-fA-F]{40})$/

/** The public figures of `run` (a complete one: an incomplete run decides nothing, and publishes nothing). */
export function publicSolvency(run: StoredRun): PublicSolvency {
  const byCurrency = new Map<string, { assets: Record<string, bigint>; liabilities: Record<string, bigint> }>()
  const addresses = new Map<string, { chain: string; role: string; address: string }>()
  let exchangeAccount: string | null = null
  for (const leg of run.legs) {
    const t = byCurrency.get(leg.currency) ?? { assets: {}, liabilities: {} }
    byCurrency.set(leg.currency, t)
    const into = leg.side === 'asset' ? t.assets : t.liabilities
    into[leg.kind] = (into[leg.kind] ?? 0n) + BigInt(leg.amount)
    const platform = leg.kind === 'platform_wallet' ? PLATFORM_PLACE.exec(leg.place) : null
    if (platform) {
      const [, chain = '', role = '', address = ''] = platform
      addresses.set(`${chain}:${role}:${address}`, { chain, role, address })
    }
    if ((leg.kind === 'exchange_wallet' || leg.kind === 'exchange_subaccounts') && leg.account)
      exchangeAccount = leg.account
  }
  const totals = run.totals.map((t) => {
    const kinds = byCurrency.get(t.currency) ?? { assets: {}, liabilities: {} }
    return {
      currency: t.currency,
      assets: BigInt(t.assets),
      liabilities: BigInt(t.liabilities),
      surplus: BigInt(t.surplus),
      assetsByKind: Object.fromEntries(ASSET_KINDS.map((k) => [k, kinds.assets[k] ?? 0n])),
      liabilitiesByKind: Object.fromEntries(LIABILITY_KINDS.map((k) => [k, kinds.liabilities[k] ?? 0n])),
    }
  })
  return {
    runId: run.id,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    totals,
    addresses: [...addresses.values()].sort((a, b) =>
      `${a.chain}:${a.role}:${a.address}`.localeCompare(`${b.chain}:${b.role}:${b.address}`),
    ),
    exchangeAccount,
  }
}
