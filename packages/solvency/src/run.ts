/**
 * One solvency run (docs/solvency.md "Continuous solvency"): liabilities from the journal, assets
 * from every chain, the exchange and what is in flight between them; stored with every leg; a
 * deficit confirmed by two complete runs in a row opens an episode, alerts once, and raises the
 * platform stop when PLATFORM_STOP_ON_DEFICIT is on.
 */
import { errorMessage, toBaseUnits } from '@wh/core'
import type { Sql } from '@wh/db'
import { type BalanceCheckResult, checkBalances, liabilityTotals, listBalanceChecks } from '@wh/ledger'
import { raisePlatformStop } from '@wh/ops'
import type { Alerter, ChainInfo, ChainName, PlatformWallet } from '@wh/wallet'
import type { PublicClient } from 'viem'
import { readChainAssets } from './chain-assets'
import { inFlightLegs } from './in-flight'
import { type CurrencyTotals, deficitsOf, type Leg, type PlaceSurplus, totalsOf } from './legs'
import { type DeficitEpisode, latestRun, moveEpisodes, storeRun } from './runs'

/** What the exchange holds for the platform, as the exchange states it (decimal strings). */
export interface ExchangeHoldingsReader {
  /** every subaccount of the platform's wallet; an entry the exchange could not build is `failed` */
  subaccounts(): Promise<
    Array<{ subaccountId: number; failed?: boolean; collaterals: Array<{ asset: string; amount: string }> }>
  >
  /** the platform's exchange wallet (bridged, not yet in a subaccount) */
  wallet(): Promise<Array<{ asset: string; amount: string }>>
  /** the exchange account read (the platform's wallet address there), published with the run's figures */
  readonly account?: string
}

export interface SolvencyDeps {
  readonly sql: Sql
  /** the chains to read, one node each (the registry refuses two names under one chain id) */
  readonly chains: ReadonlyArray<{
    chain: ChainName
    info: ChainInfo
    client: Pick<PublicClient, 'request' | 'readContract'>
  }>
  readonly platformWallets: readonly PlatformWallet[]
  readonly exchange: ExchangeHoldingsReader
  /** the currency's decimals (USDC 6, ETH 18, BTC 8) */
  readonly decimalsOf: (currency: string) => Promise<number>
  /** RECONCILE_EPSILON: the tolerated shortfall, a decimal in each currency's own units */
  readonly epsilon: string
  /** PLATFORM_STOP_ON_DEFICIT */
  readonly stopOnDeficit: boolean
  readonly alerter: Pick<Alerter, 'alert'>
}

export interface SolvencyResult {
  readonly runId: string
  readonly complete: boolean
  readonly totals: readonly CurrencyTotals[]
  /** currencies short beyond epsilon at this run */
  readonly deficits: readonly CurrencyTotals[]
  /** episodes this run opened (a deficit confirmed by the run before) */
  readonly opened: readonly DeficitEpisode[]
  readonly stopRaised: boolean
  readonly surpluses: readonly PlaceSurplus[]
  readonly errors: ReadonlyArray<{ place: string; error: string }>
  /** deposit addresses read, over every chain */
  readonly depositAddresses: number
  /** the ledger's balance rows against the sums of their postings (docs/solvency.md "Balances against postings") */
  readonly balanceCheck: BalanceCheckResult
}

export async function runSolvency(deps: SolvencyDeps): Promise<SolvencyResult> {
  const startedAt = new Date()
  // what is owed first: money that arrives during the run then shows as a surplus, never a deficit
  const read: Reading = { legs: await liabilityLegs(deps), errors: [], surpluses: [], depositAddresses: 0 }
  await Promise.all([...deps.chains.map((c) => readChain(deps, c, read)), readExchange(deps, read)])
  const { legs, errors, surpluses, depositAddresses } = read

  const totals = totalsOf(legs)
  const epsilon = new Map<string, bigint>()
  for (const t of totals) epsilon.set(t.currency, toBaseUnits(deps.epsilon, await deps.decimalsOf(t.currency), 'down'))
  const deficits = deficitsOf(totals, epsilon)
  const complete = errors.length === 0

  // a deficit counts once two complete runs in a row see it: one reading can straddle a transfer
  const before = complete ? await latestRun(deps.sql, { completeOnly: true }) : undefined
  const shortBefore = new Set(
    (before?.totals ?? []).filter((t) => BigInt(t.surplus) < -(epsilon.get(t.currency) ?? 0n)).map((t) => t.currency),
  )
  const confirmed = deficits.filter((d) => shortBefore.has(d.currency))
  const { runId, opened } = await deps.sql.begin(async (tx) => {
    const id = await storeRun(tx, { startedAt, complete, legs, totals, surpluses, errors })
    const o = complete ? await moveEpisodes(tx, id, confirmed, new Set(deficits.map((d) => d.currency))) : []
    return { runId: id, opened: o }
  })
  const stopRaised = await announceDeficits(deps, runId, opened, deficits)
  const balanceCheck = await checkLedgerBalances(deps)
  return { runId, complete, totals, deficits, opened, stopRaised, surpluses, errors, depositAddresses, balanceCheck }
}

/**
 * Every balance row against the sums of its postings (incremental; in full once a day). A difference
 * alerts when it first shows and whenever the set of differences changes, not at every run.
 */
async function checkLedgerBalances(deps: SolvencyDeps): Promise<BalanceCheckResult> {
  const [previous] = await listBalanceChecks(deps.sql)
  const check = await checkBalances(deps.sql)
  const shown = (ds: ReadonlyArray<{ account: string; currency: string; balance: unknown; postings: unknown }>) =>
    ds.map((d) => `${d.account} ${d.currency}: balance ${String(d.balance)}, postings ${String(d.postings)}`).join('; ')
  if (check.differenceCount > 0 && shown(check.differences) !== shown(previous?.differences ?? []))
    await deps.alerter.alert('ledger: balance rows differ from the sums of their postings', {
      differences: String(check.differenceCount),
      first: shown(check.differences.slice(0, 5)),
      check: `${check.kind} #${check.id}`,
    })
  return check
}

/** What one run gathers while it reads every place. */
interface Reading {
  legs: Leg[]
  errors: Array<{ place: string; error: string }>
  surpluses: PlaceSurplus[]
  depositAddresses: number
}

/** What the journal says the platform owes, per currency: users' transit and subaccounts, its fees. */
async function liabilityLegs(deps: SolvencyDeps): Promise<Leg[]> {
  const legs: Leg[] = []
  for (const l of await liabilityTotals(deps.sql)) {
    const leg = (kind: Leg['kind'], amount: Leg['amount']): Leg => ({
      side: 'liability',
      currency: l.currency,
      kind,
      place: 'journal',
      amount,
    })
    legs.push(leg('user_transit', l.transit), leg('user_subaccounts', l.subaccounts), leg('fee_revenue', l.feeRevenue))
  }
  return legs
}

/** One chain's platform wallets, deposit addresses and money in flight, at one block; a failure is noted. */
async function readChain(deps: SolvencyDeps, c: SolvencyDeps['chains'][number], read: Reading): Promise<void> {
  try {
    const r = await readChainAssets(deps.sql, { ...c, platformWallets: deps.platformWallets })
    read.legs.push(...r.legs, ...(await inFlightLegs(deps.sql, c.chain, r.atBlock)))
    read.surpluses.push(...r.surpluses)
    read.depositAddresses += r.depositAddresses
  } catch (err) {
    read.errors.push({ place: c.chain, error: errorMessage(err) })
  }
}

/** Every subaccount and the exchange wallet, in base units; a subaccount not read makes the run incomplete. */
async function readExchange(deps: SolvencyDeps, read: Reading): Promise<void> {
  try {
    const [subs, wallet] = await Promise.all([deps.exchange.subaccounts(), deps.exchange.wallet()])
    const failed = subs.filter((s) => s.failed)
    if (failed.length > 0)
      read.errors.push({
        place: 'exchange',
        error: `subaccounts not read: ${failed.map((s) => s.subaccountId).join(', ')}`,
      })
    const bySubs = new Map<string, bigint>()
    for (const s of subs)
      for (const c of s.collaterals)
        bySubs.set(c.asset, (bySubs.get(c.asset) ?? 0n) + (await baseUnits(deps, c.asset, c.amount)))
    const account = deps.exchange.account !== undefined ? { account: deps.exchange.account } : {}
    for (const [currency, amount] of bySubs)
      read.legs.push({
        side: 'asset',
        currency,
        kind: 'exchange_subaccounts',
        place: 'exchange:subaccounts',
        amount,
        ...account,
      })
    for (const w of wallet)
      read.legs.push({
        side: 'asset',
        currency: w.asset,
        kind: 'exchange_wallet',
        place: 'exchange:wallet',
        amount: await baseUnits(deps, w.asset, w.amount),
        ...account,
      })
  } catch (err) {
    read.errors.push({ place: 'exchange', error: errorMessage(err) })
  }
}

/** An alert per newly opened deficit episode, and the platform stop when configured; whether a stop was raised. */
async function announceDeficits(
  deps: SolvencyDeps,
  runId: string,
  opened: Awaited<ReturnType<typeof moveEpisodes>>,
  deficits: ReturnType<typeof deficitsOf>,
): Promise<boolean> {
  let stopRaised = false
  for (const e of opened) {
    const t = deficits.find((d) => d.currency === e.currency)
    await deps.alerter.alert('solvency: the platform holds less than it owes', {
      currency: e.currency,
      assets: t?.assets.toString() ?? '',
      liabilities: t?.liabilities.toString() ?? '',
      shortfall: e.worst,
      runId,
      stop: deps.stopOnDeficit ? 'raised' : 'off (PLATFORM_STOP_ON_DEFICIT)',
    })
    if (deps.stopOnDeficit) {
      const r = await raisePlatformStop(deps.sql, {
        raisedBy: 'solvency',
        reason: `solvency deficit in ${e.currency}: ${e.worst} base units short`,
        details: { runId, currency: e.currency, shortfall: e.worst },
      })
      stopRaised ||= r.raised
    }
  }
  return stopRaised
}

async function baseUnits(deps: SolvencyDeps, currency: string, amount: string): Promise<bigint> {
  // the exchange states more decimals than the token has: what cannot be withdrawn is not held
  return toBaseUnits(amount, await deps.decimalsOf(currency), 'down')
}
