/**
 * The sweep tick (queue `deposits`): takes a bounded batch of the deposits not swept yet that are
 * due (soonest first: one that cannot be swept waits out its backoff behind the others, see
 * docs/hostile-world.md "Fair queues") and fans out
 * one `deposit-sweep` job per deposit. The job id is the deposit's, so while a deposit's job waits
 * or retries the tick adds no second one; jobs are removed when done, so the next period can add
 * it again while the sweep is still pending on chain. Exactly-once does not rest on this: the
 * outbox and the journal's keys make a doubled job harmless.
 */
import type { Sql } from '@wh/db'
import { DEPOSIT_SWEEP_JOB_NAME, depositSweepJobRef, QUEUES } from '@wh/jobs'
import { type ChainClients, type ChainName, ETH_TO_EOA_GAS } from '@wh/wallet'
import type { JobsOptions } from 'bullmq'
import { setDustAside } from '../transitions'
import { BELOW_GAS_RETRY_MS } from './job'
import { SWEEP_FEE_HEADROOM, SWEEPABLE_STATES } from './sweep'

export const DEPOSIT_SWEEP_EVERY_MS = 10_000
/** Deposits fanned out per tick. */
export const DEPOSIT_SWEEP_BATCH = 200
export const DEPOSIT_SWEEP_ATTEMPTS = 3
export const DEPOSIT_SWEEP_BACKOFF_MS = 5_000
/** Gas of a plain ETH transfer (a sweep of an ETH deposit to the hot wallet, an address without code). */
export const ETH_SWEEP_GAS = ETH_TO_EOA_GAS
/** Dust deposits set aside per chain and tick at most (a bound; the rest next tick). */
export const DUST_DEFER_BATCH = 10_000

/** What picking the due sweeps reads: the deposits, and each chain's fees (for the dust). */
export interface DueSweepDeps {
  readonly sql: Sql
  readonly clients: ReadonlyMap<ChainName, ChainClients>
}

/** Where the sweep jobs go: the `deposits` queue (a BullMQ Queue fits). */
export interface SweepQueue {
  addBulk(jobs: Array<{ name: string; data: { depositId: string }; opts: JobsOptions }>): Promise<unknown>
}

/**
 * The ETH below which a deposit cannot pay for its own sweep at the chain's current fees: the
 * gas of a plain transfer (the outbound policy signs exactly 21,000 to an address without code),
 * at the current max fee, with the sweep's headroom (sweep.ts sizes its own reserve the same way).
 */
export function dustThresholdWei(maxFeePerGasWei: bigint): bigint {
  return ETH_SWEEP_GAS * maxFeePerGasWei * SWEEP_FEE_HEADROOM
}

/**
 * ETH deposits too small to pay for their own sweep at today's fees are set aside in one update
 * per chain (BELOW_SWEEP_GAS, looked at again after BELOW_GAS_RETRY_MS): a hundred dust deposits
 * never take the batch's places from a real one. They stay credited and at their addresses.
 * A chain whose fees cannot be read now is left to the per-deposit check.
 */
async function setDustAsideByChain(deps: DueSweepDeps): Promise<number> {
  let setAside = 0
  for (const [chain, c] of deps.clients) {
    let threshold: bigint
    try {
      threshold = dustThresholdWei((await c.publicClient.estimateFeesPerGas({ type: 'eip1559' })).maxFeePerGas)
    } catch {
      continue
    }
    setAside += await setDustAside(deps.sql, chain, threshold, { retryMs: BELOW_GAS_RETRY_MS, limit: DUST_DEFER_BATCH })
  }
  return setAside
}

/**
 * The deposits the tick fans out: due ones, soonest first, one per deposit address (sweeps of one
 * address are serialised by its lock anyway), after the dust is set aside.
 */
export async function dueSweeps(
  deps: DueSweepDeps,
  limit = DEPOSIT_SWEEP_BATCH,
): Promise<{ ids: string[]; dustSetAside: number }> {
  const dustSetAside = await setDustAsideByChain(deps)
  const rows = await deps.sql<{ id: string }[]>`
    select id from (
      select distinct on (chain, address) id, next_attempt_at, created_at from deposits
      where state in ${deps.sql([...SWEEPABLE_STATES])} and held_at is null and next_attempt_at <= now()
      order by chain, address, next_attempt_at, created_at
    ) first_per_address
    order by next_attempt_at, created_at limit ${limit}`
  return { ids: rows.map((r) => r.id), dustSetAside }
}

/**
 * One sweep tick (the worker's `deposits-sweep`): the due deposits, one `deposit-sweep` job each on
 * `queue`, keyed by the deposit (see the top of this file).
 *
 * @example
 *   await enqueueDueSweeps(deps, queues.get('deposits')) // { enqueued, dustSetAside }
 */
export async function enqueueDueSweeps(
  deps: DueSweepDeps,
  queue: SweepQueue | undefined,
): Promise<{ enqueued: number; dustSetAside: number }> {
  const { ids, dustSetAside } = await dueSweeps(deps)
  if (!queue) throw new Error(`queue ${QUEUES.deposits} missing`)
  await queue.addBulk(
    ids.map((id) => ({
      name: DEPOSIT_SWEEP_JOB_NAME,
      data: { depositId: id },
      opts: {
        jobId: depositSweepJobRef(id).jobId,
        attempts: DEPOSIT_SWEEP_ATTEMPTS,
        backoff: { type: 'exponential', delay: DEPOSIT_SWEEP_BACKOFF_MS },
        removeOnComplete: true,
        removeOnFail: true,
      },
    })),
  )
  return { enqueued: ids.length, dustSetAside }
}
