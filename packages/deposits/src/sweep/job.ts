/**
 * The deposit-sweep job (queue `deposits`, fanned out by fan-out.ts, one per deposit): runs
 * sweep.ts's state machine and puts the deposit back in the queue by its outcome (docs/chains.md
 * "Sweeps", docs/hostile-world.md "Fair queues").
 */
import { errorMessage } from '@wh/core'
import { outboundFailureOf } from '@wh/wallet'
import { UnrecoverableError } from 'bullmq'
import type { RunLog } from '../log'
import { holdDeposit, recordSweepAttempt, requeueSweep } from '../transitions'
import { type SweepDeps, type SweepOutcome, sweepDeposit } from './sweep'

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
  if (code === undefined) await requeueSweep(sql, depositId)
  else await recordSweepAttempt(sql, depositId, code, delayMs)
}

/**
 * The code a failed sweep run waits under, as the outbound policy reads the error (docs/hostile-world.md
 * "One policy for every outbound transaction"): the transaction's own failure (it reverts, hits an
 * invalid opcode, needs more than its cap), the sender short, or unknown (the provider, most often).
 * A sweep is never failed for an unknown error: the deposit stays credited, and it only waits.
 */
export function sweepErrorCode(err: unknown): string {
  const f = outboundFailureOf(err)
  if (f.kind === 'funds') return 'SHORT_OF_GAS'
  if (f.kind === 'row') return f.reason === 'gas-above-cap' ? 'GAS_ABOVE_CAP' : 'REVERTS'
  return (err as { code?: unknown }).code === 'CHAIN_UNAVAILABLE' ? 'RPC_UNAVAILABLE' : 'SEND_ERROR'
}

/**
 * One `deposit-sweep` job (fanned out by fan-out.ts, `{ depositId }`): the sweep advanced as far as
 * the chain allows now, then the deposit's place in the queue by the outcome.
 *
 * @example
 *   await runDepositSweepJob(deps, log, job.data) // { depositId, outcome: 'swept' } once final
 */
export async function runDepositSweepJob(
  deps: SweepDeps,
  log: RunLog,
  data: unknown,
): Promise<{ depositId: string; outcome: SweepOutcome | 'error' }> {
  const depositId = (data as { depositId?: unknown }).depositId
  if (typeof depositId !== 'string' || !/^[0-9a-f-]{36}$/.test(depositId)) {
    throw new UnrecoverableError('deposit-sweep needs { depositId: uuid }')
  }
  let outcome: SweepOutcome
  try {
    outcome = await sweepDeposit(deps, depositId)
  } catch (err) {
    log.warn({ depositId, err: errorMessage(err) }, 'deposit sweep failed')
    await deferSweep(deps.sql, depositId, sweepErrorCode(err))
    return { depositId, outcome: 'error' }
  }
  if (outcome === 'short-of-gas') log.warn({ depositId }, 'deposit sweep waits for gas')
  if (outcome === 'failed') log.warn({ depositId }, 'deposit sweep failed on chain; an operator retries it')
  if (outcome === 'short-of-gas') await deferSweep(deps.sql, depositId, 'SHORT_OF_GAS')
  else if (outcome === 'below-gas') await deferSweep(deps.sql, depositId, 'BELOW_SWEEP_GAS', BELOW_GAS_RETRY_MS)
  else if (outcome === 'held') await holdDeposit(deps.sql, depositId)
  else if (outcome === 'pending') await deferSweep(deps.sql, depositId)
  return { depositId, outcome }
}
