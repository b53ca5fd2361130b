/**
 * Publishing a proof of liabilities (docs/solvency.md "Proof of liabilities"): every user's
 * holdings read from the ledger in one snapshot (@wh/ledger `userHoldingsSnapshot`), leaves
 * prepared (negatives counted as 0 and reported, fresh salts, shuffled), the Merkle-sum tree built
 * in memory, and the root with every node and leaf stored in one transaction (./store.ts).
 *
 * `@wh/proof/publish` is the server side of the package (Postgres, the ledger); `@wh/proof` itself
 * stays pure.
 */
import { randomBytes, randomInt } from 'node:crypto'
import { userHoldingsSnapshot } from '@wh/ledger'
import type postgres from 'postgres'
import { type NegativeHolding, prepareLeaves, type Randomness, summarizeNegatives } from './leaves'
import { rootOfDay, type StoredRoot, storePublication } from './store'
import { buildTree } from './tree'

export * from './leaves'
export * from './store'

export const cryptoRandomness: Randomness = { bytes: (n) => randomBytes(n), int: (max) => randomInt(max) }

export interface PublishOptions {
  /** the publication's time; also the UTC day a second run finds already published */
  readonly now: Date
  /** publish even when a root of the same UTC day exists */
  readonly force?: boolean
  /** tests only */
  readonly random?: Randomness
}

export type PublishResult =
  | {
      readonly status: 'published'
      readonly root: StoredRoot
      /** users counted as 0 in a currency, with their negative total */
      readonly negatives: readonly NegativeHolding[]
      readonly timings: { readonly readMs: number; readonly buildMs: number; readonly writeMs: number }
      /** rows written: nodes (padding included) and leaves */
      readonly rows: { readonly nodes: number; readonly leaves: number }
    }
  /** a root of the same UTC day exists (and the run was not forced): nothing was done */
  | { readonly status: 'already-published'; readonly root: StoredRoot }
  /** no user holds anything: a tree needs at least one leaf */
  | { readonly status: 'empty' }

/**
 * Publishes the tree of what every user is owed now. Idempotent per UTC day of `now` unless
 * `force`: checked before reading (cheap) and again under the publication lock before writing.
 */
export async function publishLiabilities(sql: postgres.Sql, opts: PublishOptions): Promise<PublishResult> {
  if (!opts.force) {
    const existing = await rootOfDay(sql, opts.now)
    if (existing) return { status: 'already-published', root: existing }
  }
  const t0 = performance.now()
  const snapshot = await userHoldingsSnapshot(sql)
  const t1 = performance.now()
  if (snapshot.users.length === 0) return { status: 'empty' }
  const { leaves, currencies, negatives } = prepareLeaves(snapshot.users, opts.random ?? cryptoRandomness)
  const tree = buildTree(leaves, currencies)
  const t2 = performance.now()
  const stored = await storePublication(
    sql,
    {
      createdAt: opts.now,
      tree,
      leaves,
      balancesAt: snapshot.at,
      ledgerSnapshot: snapshot.snapshot,
      ledgerLastEventId: snapshot.lastEventId,
      negatives: summarizeNegatives(negatives),
    },
    { force: opts.force ?? false },
  )
  const t3 = performance.now()
  if (!stored.stored) return { status: 'already-published', root: stored.root }
  return {
    status: 'published',
    root: stored.root,
    negatives,
    timings: { readMs: t1 - t0, buildMs: t2 - t1, writeMs: t3 - t2 },
    rows: { nodes: tree.levels.reduce((n, l) => n + l.length, 0), leaves: leaves.length },
  }
}
