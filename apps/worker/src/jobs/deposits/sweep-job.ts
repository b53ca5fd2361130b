/**
 * The deposit-sweep job (queue `deposits`, fanned out by sweep-tick.ts, one per deposit): runs
 * sweep.ts's state machine and puts the deposit back in the queue by its outcome (docs/chains.md
 * "Sweeps", docs/hostile-world.md "Fair queues").
 */
import { errorMessage } from '@wh/core'
import { retryDelayMs } from '@wh/jobs'
import { sendFailureOf } from '@wh/wallet'
import { UnrecoverableError } from 'bullmq'
import type { TickDefinition } from '../../ticks'
import { DEPOSIT_SWEEP_JOB, type SweepDeps, type SweepOutcome, sweepDeposit } from './sweep'

/**
 * An ETH deposit smaller than its own sweep's fee is looked at again after this long (fees fall;
 * it stays credited and at its address meanwhile), not on every tick.
 */
export const BELOW_GAS_RETRY_MS = 60 * 60_000

/**
 * The deposit's place in the sweep queue (docs/hostile-world.md "Fair queues"): without a code it
 * goes behind the deposits not served yet (in flight, polled again next tick); with one, the
 * attempt is recorded and it waits out a backoff (or `delayMs`), so a deposit that cannot be swept
 * never keeps the ones behind it waiting.
 */
async function deferSweep(sql: SweepDeps['sql'], depositId: string, code?: string, delayMs?: number): Promise<void> {
  if (code === undefined) {
    await sql`update deposits set next_attempt_at = now() where id = ${depositId}`
    return
  }
  const [row] = await sql<{ attempts: number }[]>`
    update deposits set attempts = attempts + 1, last_error_code = ${code} where id = ${depositId} returning attempts`
  const waitMs = delayMs ?? retryDelayMs(row?.attempts ?? 1)
  await sql`update deposits set next_attempt_at = now() + make_interval(secs => ${waitMs / 1000}) where id = ${depositId}`
}

/** A transaction of the sweep is held for an operator (the outbox alerted): the deposit leaves the queue. */
async function holdSweep(sql: SweepDeps['sql'], depositId: string): Promise<void> {
  await sql`
    update deposits set held_at = now(), hold_reason = 'a transaction of its sweep is held for an operator',
      last_error_code = 'HELD'
    where id = ${depositId} and held_at is null`
}

/** The processor of the jobs sweep-tick.ts fans out: one per deposit, `{ depositId }`. */
export const depositSweepProcessor: TickDefinition = {
  name: DEPOSIT_SWEEP_JOB,
  queue: 'deposits',
  process: async (job, ctx) => {
    const depositId = (job.data as { depositId?: unknown }).depositId
    if (typeof depositId !== 'string' || !/^[0-9a-f-]{36}$/.test(depositId)) {
      throw new UnrecoverableError('deposit-sweep needs { depositId: uuid }')
    }
    let outcome: SweepOutcome | 'error'
    try {
      outcome = await sweepDeposit(ctx.deps, depositId)
    } catch (err) {
      ctx.log.warn({ depositId, err: errorMessage(err) }, 'deposit sweep failed')
      await deferSweep(ctx.deps.sql, depositId, sendFailureOf(err) === 'reverts' ? 'REVERTS' : 'RPC_UNAVAILABLE')
      return { depositId, outcome: 'error' }
    }
    if (outcome === 'short-of-gas') ctx.log.warn({ depositId }, 'deposit sweep waits for gas')
    if (outcome === 'failed') ctx.log.warn({ depositId }, 'deposit sweep failed on chain; an operator retries it')
    if (outcome === 'short-of-gas') await deferSweep(ctx.deps.sql, depositId, 'SHORT_OF_GAS')
    else if (outcome === 'below-gas') await deferSweep(ctx.deps.sql, depositId, 'BELOW_SWEEP_GAS', BELOW_GAS_RETRY_MS)
    else if (outcome === 'held') await holdSweep(ctx.deps.sql, depositId)
    else if (outcome === 'pending') await deferSweep(ctx.deps.sql, depositId)
    return { depositId, outcome }
  },
}
