/**
 * The deposits' ticks (queue `deposits`; docs/chains.md "The watch tick", "Sweeps", "Every deposit
 * is accounted for"): the runs are @wh/deposits'; here only their names and periods.
 */
import {
  DEPOSIT_AUDIT_EVERY_MS,
  DEPOSIT_SCAN_EVERY_MS,
  DEPOSIT_SWEEP_EVERY_MS,
  depositAuditTickName,
  depositScanTickName,
  enqueueDueSweeps,
  runDepositAuditTick,
  runDepositScanTick,
  runDepositSweepJob,
} from '@wh/deposits'
import { DEPOSIT_SWEEP_JOB_NAME } from '@wh/jobs'
import { CHAIN_NAMES } from '@wh/wallet'
import type { TickDefinition } from '../../ticks'

/** One watch per chain, each under a Redis lock so a slow run never overlaps the next. */
export const depositScanTicks: readonly TickDefinition[] = CHAIN_NAMES.map((chain) => ({
  name: depositScanTickName(chain),
  queue: 'deposits',
  everyMs: DEPOSIT_SCAN_EVERY_MS,
  process: (_job, ctx) => runDepositScanTick(ctx.deps, ctx.log, chain),
}))

/** The sweep's fan-out: one `deposit-sweep` job per due deposit. */
export const depositSweepTick: TickDefinition = {
  name: 'deposits-sweep',
  queue: 'deposits',
  everyMs: DEPOSIT_SWEEP_EVERY_MS,
  process: (_job, ctx) => enqueueDueSweeps(ctx.deps, ctx.queues.get('deposits')),
}

/** The processor of the jobs the sweep tick fans out: one per deposit, `{ depositId }`; no schedule of its own. */
export const depositSweepProcessor: TickDefinition = {
  name: DEPOSIT_SWEEP_JOB_NAME,
  queue: 'deposits',
  process: (job, ctx) => runDepositSweepJob(ctx.deps, ctx.log, job.data),
}

/** One balance audit per chain, under a Redis lock per chain. */
export const depositAuditTicks: readonly TickDefinition[] = CHAIN_NAMES.map((chain) => ({
  name: depositAuditTickName(chain),
  queue: 'deposits',
  everyMs: DEPOSIT_AUDIT_EVERY_MS,
  process: (_job, ctx) => runDepositAuditTick(ctx.deps, ctx.log, chain),
}))
