/**
 * The exchange ticks: when funding, releases, fee collection, accruals, reconciliation and the session
 * keys' check run. What they do is @wh/subaccounts' (funding/, release/, fees/, accruals/, reconcile/,
 * session-keys/); every one but the session keys' takes the exchange cycle lock inside its run.
 */
import {
  type AccrualsSummary,
  type FeeClaims,
  type FeeSummary,
  type FundSummary,
  type ReconcileSources,
  type ReconcileSummary,
  type ReleaseSummary,
  runAccruals,
  runFeeCollection,
  runFunding,
  runReconcile,
  runReleases,
  runSessionKeys,
} from '@wh/subaccounts'
import {
  claimFeeFills,
  ingestFills,
  ingestSettlements,
  markFeesCollected,
  releaseFailedFeeClaims,
  releaseFeeClaim,
  uncollectedPlatformFees,
} from '@wh/trading'
import { openWithdrawalTotals } from '@wh/treasury'
import type { TickDefinition } from '../../ticks'

/**
 * What reconciliation reads from the packages above @wh/subaccounts: the positions' fills and settlements,
 * the platform's uncollected fees, the treasury's open withdrawals to L1.
 */
export const reconcileSources: ReconcileSources = {
  ingestFills,
  ingestSettlements,
  uncollectedPlatformFees,
  openWithdrawalTotals,
}

/** The fills' fee claims, written by their owner (@wh/trading), for the fee collection. */
export const feeClaims: FeeClaims = { releaseFailedFeeClaims, claimFeeFills, markFeesCollected, releaseFeeClaim }

export const fundTick: TickDefinition = {
  name: 'exchange-fund',
  queue: 'treasury',
  everyMs: 5_000,
  process: async (_job, ctx): Promise<FundSummary> => {
    const summary = await runFunding({ ...ctx.deps, log: ctx.log })
    if (summary.funded + summary.failed > 0) ctx.log.info({ ...summary }, 'funding tick')
    return summary
  },
}

export const releaseTick: TickDefinition = {
  name: 'exchange-release',
  queue: 'treasury',
  everyMs: 10_000,
  process: async (_job, ctx): Promise<ReleaseSummary> => {
    const summary = await runReleases({ ...ctx.deps, log: ctx.log })
    if (summary.released + summary.failed > 0) ctx.log.info({ ...summary }, 'release tick')
    return summary
  },
}

/** Fees wait in the subaccount meanwhile: collecting them is not urgent, only regular. */
export const feeTick: TickDefinition = {
  name: 'exchange-fees',
  queue: 'treasury',
  everyMs: 10 * 60_000,
  process: async (_job, ctx): Promise<FeeSummary> => {
    const summary = await runFeeCollection({ ...ctx.deps, log: ctx.log }, feeClaims)
    if (summary.collected + summary.failed + summary.started > 0) ctx.log.info({ ...summary }, 'fee collection tick')
    return summary
  },
}

/** Buckets close hourly; a quarter-hour period records each at most ~20 minutes after it ends. */
export const accrualsTick: TickDefinition = {
  name: 'exchange-accruals',
  queue: 'accounting',
  everyMs: 15 * 60_000,
  process: async (_job, ctx): Promise<AccrualsSummary> => {
    const summary = await runAccruals(ctx.deps, ctx.log)
    const funding = summary.fundingSubaccount
    if (summary.recorded + summary.late + summary.errors > 0 || funding?.recorded || funding?.late || funding?.error)
      ctx.log.info({ ...summary }, 'accruals tick')
    return summary
  },
}

export const reconcileTick: TickDefinition = {
  name: 'exchange-reconcile',
  queue: 'accounting',
  everyMs: 5 * 60_000,
  process: async (_job, ctx): Promise<ReconcileSummary> => {
    const summary = await runReconcile(ctx.deps, reconcileSources, ctx.log)
    const funding = summary.fundingSubaccount
    if (summary.observed + summary.stopped + summary.errors > 0 || (funding !== null && funding !== 'clean'))
      ctx.log.info({ ...summary }, 'reconciliation tick')
    return summary
  },
}

export const sessionKeysTick: TickDefinition = {
  name: 'exchange-session-keys',
  queue: 'accounting',
  everyMs: 3_600_000,
  process: async (_job, ctx) => runSessionKeys(ctx.deps),
}
