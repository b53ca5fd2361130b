/**
 * What the row jobs share (docs/architecture.md "Accepted work: one job per 202"): their data
 * checked, the exchange cycle lock, and "come back shortly" for a job whose row must wait a
 * moment (the lock is busy, a funding is settling, a transaction is being confirmed). Such a job
 * moves itself back to delayed (BullMQ's DelayedError): it is neither lost nor failed, and no
 * attempt is spent. Its comebacks are bounded (MAX_COMEBACKS); after them the row is left to the
 * tick that sweeps its table, as a row whose enqueue failed is.
 */
import { type RowJobName, rowIdOf } from '@wh/jobs'
import { withCycleLock } from '@wh/subaccounts'
import { DelayedError, type Job, UnrecoverableError } from 'bullmq'
import type { TickContext } from '../ticks'

/** How often one job comes back at most; then its tick serves the row. */
export const MAX_COMEBACKS = 40
/** The first comeback's delay; doubled each time up to COMEBACK_MAX_MS. */
export const COMEBACK_BASE_MS = 250
export const COMEBACK_MAX_MS = 5_000

/** What a row job's processor answers when it stops coming back before its row is done. */
export const LEFT_TO_TICK = { outcome: 'left_to_tick' } as const

/** The delay of a job's `n`-th comeback (1 for the first). */
export function comebackDelayMs(n: number): number {
  return Math.min(COMEBACK_MAX_MS, COMEBACK_BASE_MS * 2 ** Math.min(Math.max(0, n - 1), 16))
}

/** The row id the job names, or an UnrecoverableError (a job with bad data never succeeds). */
export function rowIdFor(name: RowJobName, job: Job): string {
  const id = rowIdOf(name, job.data)
  if (id === undefined) throw new UnrecoverableError(`${name} needs a uuid row id in its data`)
  return id
}

/**
 * Moves the job back to delayed until `atMs` (at least its comeback delay from now): throws
 * BullMQ's DelayedError, which the worker takes as "not done, not failed". Returns LEFT_TO_TICK
 * instead once the job came back MAX_COMEBACKS times.
 */
export async function comeBackLater(
  job: Job,
  token: string | undefined,
  why: string,
  atMs?: number,
): Promise<typeof LEFT_TO_TICK> {
  const n = Number((job.data as { comebacks?: unknown }).comebacks ?? 0) + 1
  if (n > MAX_COMEBACKS || token === undefined) return LEFT_TO_TICK
  await job.updateData({ ...(job.data as object), comebacks: n, waitingFor: why })
  await job.moveToDelayed(Math.max(Date.now() + comebackDelayMs(n), atMs ?? 0), token)
  throw new DelayedError(why)
}

/**
 * Runs `fn` under the exchange cycle lock, as the ticks it shares rows with do (docs/architecture.md
 * "Workers"); the lock busy, the job comes back shortly.
 */
export async function underCycleLock<T>(
  ctx: TickContext,
  job: Job,
  token: string | undefined,
  fn: () => Promise<T>,
): Promise<T | typeof LEFT_TO_TICK> {
  const r = await withCycleLock(ctx.deps.redis, fn)
  if (r.ran) return r.value
  return comeBackLater(job, token, 'the exchange cycle lock')
}
