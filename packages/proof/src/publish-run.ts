/**
 * The proof of liabilities' publication as the worker's `liabilities-publish` tick runs it
 * (docs/solvency.md "Proof of liabilities"), queue `accounting`: once per UTC day, the Merkle-sum
 * tree of what every user is owed is built from the ledger and stored with its root (./publish.ts). The tick runs every hour and publishes on
 * the first run of a day; the others find the day's root and stop there (one indexed read), so a
 * day whose first run failed is published by the next hour's, not the next day's. On demand:
 * the worker's `src/cli/publish-liabilities.ts` (with `--force`, a second root the same day).
 *
 * No exchange cycle lock: the ledger's balances are read in one REPEATABLE READ snapshot, and a
 * user's holdings (transit plus subaccounts) do not change when money moves between them. A Redis
 * lock keeps replicas from building the same tree twice; the store's advisory lock and day check
 * keep the publication once a day even without it.
 *
 * After a publication, trees older than LIABILITY_TREE_KEEP_DAYS lose their nodes and leaves; their
 * roots are kept forever.
 */
import { LOCK_TTL_MS } from '@wh/config'
import type { Clock } from '@wh/core'
import { withLock } from '@wh/jobs'
import type { Redis } from 'ioredis'
import type postgres from 'postgres'
import { type PublishResult, pruneTrees, publishLiabilities } from './publish'

export const LIABILITIES_PUBLISH_TICK = 'liabilities-publish'
/** Checked hourly; a root is published on the first run of each UTC day. */
export const LIABILITIES_PUBLISH_EVERY_MS = 60 * 60_000
/** A tree's nodes and leaves are kept this long; its root forever. */
export const LIABILITY_TREE_KEEP_DAYS = 30
/** Negative totals named one by one in an alert; the rest are counted. */
const ALERT_NAMED_NEGATIVES = 20

/** What a publication reads (the worker's deps satisfy it; the alerter is typed by what it calls). */
export interface PublishDeps {
  readonly sql: postgres.Sql
  readonly clock: Clock
  readonly alerter: {
    alert(
      text: string,
      fields?: Readonly<Record<string, string | number | bigint | boolean | null | undefined>>,
    ): Promise<void>
  }
}

/** The publication's logger, typed by what it calls (the worker's fits). */
export interface PublishLog {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}

export interface PublishRun {
  readonly status: PublishResult['status']
  readonly rootId?: string
  readonly root?: string
  readonly leafCount?: number
  readonly totals?: Readonly<Record<string, string>>
  /** users counted as 0 for a negative total, per currency (published runs only) */
  readonly negatives?: Readonly<Record<string, { users: number; amount: string }>>
  readonly timings?: { readonly readMs: number; readonly buildMs: number; readonly writeMs: number }
  readonly rows?: { readonly nodes: number; readonly leaves: number }
  /** trees whose nodes and leaves were deleted now */
  readonly pruned?: number
}

/**
 * Publishes today's root unless there is one (or always, `force`), alerts on negative totals,
 * prunes old trees. JSON-safe result (BullMQ stores it).
 */
export async function runLiabilitiesPublish(
  deps: PublishDeps,
  log: PublishLog,
  opts: { force?: boolean; keepDays?: number } = {},
): Promise<PublishRun> {
  const now = deps.clock.now()
  const result = await publishLiabilities(deps.sql, { now, force: opts.force ?? false })
  if (result.status === 'empty') return { status: 'empty' }
  const root = result.root
  const base = {
    status: result.status,
    rootId: root.id,
    root: root.root,
    leafCount: root.leafCount,
    totals: root.totals,
  }
  if (result.status === 'already-published') return base
  log.info(
    { rootId: root.id, root: root.root, leafCount: root.leafCount, totals: root.totals, timings: result.timings },
    'liabilities published',
  )
  if (result.negatives.length > 0) {
    const named = result.negatives
      .slice(0, ALERT_NAMED_NEGATIVES)
      .map((n) => `${n.userId} ${n.currency} ${n.amount}`)
      .join('; ')
    log.warn({ rootId: root.id, negatives: root.negatives }, 'liabilities: negative totals counted as 0')
    await deps.alerter.alert('proof of liabilities: users with a negative total, counted as 0', {
      rootId: root.id,
      users: result.negatives.length,
      perCurrency: JSON.stringify(root.negatives),
      named,
    })
  }
  const keepDays = opts.keepDays ?? LIABILITY_TREE_KEEP_DAYS
  const pruned = await pruneTrees(deps.sql, new Date(now.getTime() - keepDays * 86_400_000))
  if (pruned.roots > 0) log.info({ ...pruned, keepDays }, 'liabilities: old trees pruned (roots kept)')
  return {
    ...base,
    negatives: root.negatives,
    timings: result.timings,
    rows: result.rows,
    pruned: pruned.roots,
  }
}

/**
 * One `liabilities-publish` tick: the daily publication, checked every hour under its own Redis lock.
 *
 * @example
 *   await runLiabilitiesPublishTick(deps, log) // { status: 'published' | 'already-published' | 'empty' | 'locked', … }
 */
export async function runLiabilitiesPublishTick(
  deps: PublishDeps & { readonly redis: Redis },
  log: PublishLog,
): Promise<PublishRun | { status: 'locked' }> {
  const result = await withLock(deps.redis, `lock:${LIABILITIES_PUBLISH_TICK}`, LOCK_TTL_MS, () =>
    runLiabilitiesPublish(deps, log),
  )
  return result ?? { status: 'locked' }
}
