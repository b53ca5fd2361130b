/**
 * The one owner of liability_roots, liability_tree_nodes and liability_tree_leaves (migration
 * 0017; docs/solvency.md "Proof of liabilities"): writes a published tree, reads roots and a
 * user's proof, prunes old trees' nodes. No other module reads or writes these tables.
 *
 * A publication is one transaction: the root row, then every node and leaf by COPY, so a root is
 * never visible without its tree. Publications are serialised by a transaction-scoped advisory
 * lock, under which "already published today" is decided, so two runs on the same day publish once.
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type postgres from 'postgres'
import type { LeafInput, LiabilityProof, PathStep, Tree } from './tree'

type Sql = postgres.Sql
type Queryable = postgres.Sql | postgres.TransactionSql

/** The advisory lock every publication takes (the migrator's is 7243100001). */
export const PUBLISH_LOCK = 7243100017
/** Rows per chunk written to COPY. */
const COPY_CHUNK_ROWS = 4_096

export interface StoredRoot {
  readonly id: string
  /** when it was published */
  readonly createdAt: Date
  /** 0x… */
  readonly root: string
  readonly currencies: readonly string[]
  /** per currency, decimal strings of base units */
  readonly totals: Readonly<Record<string, string>>
  readonly leafCount: number
  readonly depth: number
  /** the database's time of the snapshot the balances were read in */
  readonly balancesAt: Date
  /** pg_current_snapshot() of that read */
  readonly ledgerSnapshot: string
  readonly ledgerLastEventId: string | null
  /** per currency, users counted as 0 for a negative total, and the sum of those totals */
  readonly negatives: Readonly<Record<string, { users: number; amount: string }>>
  /** Postgres's text of created_at (microseconds), for cursors */
  readonly createdAtText: string
}

interface RootRow {
  id: string
  created_at: Date
  created_at_text: string
  root: Buffer
  currencies: string[]
  totals: Record<string, string>
  leaf_count: number
  depth: number
  balances_at: Date
  ledger_snapshot: string
  ledger_last_event_id: string | null
  negatives: Record<string, { users: number; amount: string }>
}

const hex = (b: Buffer) => `0x${b.toString('hex')}`

function toStoredRoot(r: RootRow): StoredRoot {
  return {
    id: r.id,
    createdAt: r.created_at,
    createdAtText: r.created_at_text,
    root: hex(r.root),
    currencies: r.currencies,
    totals: r.totals,
    leafCount: r.leaf_count,
    depth: r.depth,
    balancesAt: r.balances_at,
    ledgerSnapshot: r.ledger_snapshot,
    ledgerLastEventId: r.ledger_last_event_id,
    negatives: r.negatives,
  }
}

const rootColumns = (sql: Queryable) => sql`
  id, created_at, created_at::text as created_at_text, root, currencies, totals, leaf_count, depth,
  balances_at, ledger_snapshot, ledger_last_event_id, negatives`

/** The UTC day of `at`: [start, end). */
export function utcDay(at: Date): { start: Date; end: Date } {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
  return { start, end: new Date(start.getTime() + 86_400_000) }
}

/** The latest root published on the UTC day of `at`, if any. */
export async function rootOfDay(sql: Queryable, at: Date): Promise<StoredRoot | undefined> {
  const { start, end } = utcDay(at)
  const [row] = await sql<RootRow[]>`
    select ${rootColumns(sql)} from liability_roots
    where created_at >= ${start} and created_at < ${end}
    order by created_at desc, id desc limit 1`
  return row && toStoredRoot(row)
}

/** The latest published root, if any. */
export async function latestRoot(sql: Queryable): Promise<StoredRoot | undefined> {
  const [row] = await sql<RootRow[]>`
    select ${rootColumns(sql)} from liability_roots order by created_at desc, id desc limit 1`
  return row && toStoredRoot(row)
}

/** Published roots, newest first by (created_at, id), after the cursor's row when given. */
export async function listRoots(
  sql: Queryable,
  opts: { limit: number; after?: { createdAt: string; id: string } | undefined },
): Promise<StoredRoot[]> {
  const after = opts.after
  const rows = await sql<RootRow[]>`
    select ${rootColumns(sql)} from liability_roots
    ${after ? sql`where (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : sql``}
    order by created_at desc, id desc limit ${opts.limit}`
  return rows.map(toStoredRoot)
}

export interface Publication {
  readonly createdAt: Date
  readonly tree: Tree
  /** in tree order (index = position) */
  readonly leaves: readonly LeafInput[]
  readonly balancesAt: Date
  readonly ledgerSnapshot: string
  readonly ledgerLastEventId: string | null
  readonly negatives: Readonly<Record<string, { users: number; amount: string }>>
}

export type StoreResult =
  | { readonly stored: true; readonly root: StoredRoot }
  /** a root of the same UTC day exists and the run was not forced: nothing written */
  | { readonly stored: false; readonly root: StoredRoot }

/** COPY's text format: one row per line, tab-separated; bytea as \\x + hex. */
async function copyRows(into: postgres.PendingQuery<postgres.Row[]>, rows: Iterable<string>) {
  const writable = await into.writable()
  async function* chunks() {
    let buf: string[] = []
    for (const line of rows) {
      buf.push(line)
      if (buf.length >= COPY_CHUNK_ROWS) {
        yield buf.join('')
        buf = []
      }
    }
    if (buf.length > 0) yield buf.join('')
  }
  await pipeline(Readable.from(chunks()), writable)
}

function* nodeLines(rootId: string, tree: Tree): Generator<string> {
  for (const [level, nodes] of tree.levels.entries())
    for (const [idx, node] of nodes.entries())
      yield `${rootId}\t${level}\t${idx}\t\\\\x${node.hash.toString('hex')}\t{${node.sums.join(',')}}\n`
}

function* leafLines(rootId: string, leaves: readonly LeafInput[]): Generator<string> {
  for (const [idx, leaf] of leaves.entries()) yield `${rootId}\t${leaf.userId}\t${idx}\t\\\\x${leaf.salt.slice(2)}\n`
}

/**
 * Stores a built tree with its root row, in one transaction. Unless `force`, does nothing when a
 * root was already published on the UTC day of `createdAt` (decided under PUBLISH_LOCK, so
 * concurrent runs publish once).
 */
export async function storePublication(sql: Sql, p: Publication, opts: { force?: boolean } = {}): Promise<StoreResult> {
  const rootNode = p.tree.levels.at(-1)?.[0]
  if (!rootNode) throw new RangeError('the tree has no root')
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${PUBLISH_LOCK})`
    if (!opts.force) {
      const existing = await rootOfDay(tx, p.createdAt)
      if (existing) return { stored: false as const, root: existing }
    }
    const totals = Object.fromEntries(p.tree.currencies.map((c, i) => [c, String(rootNode.sums[i] ?? 0n)]))
    const [row] = await tx<RootRow[]>`
      insert into liability_roots (created_at, root, currencies, totals, leaf_count, depth, balances_at,
        ledger_snapshot, ledger_last_event_id, negatives)
      values (${p.createdAt}, ${rootNode.hash}, ${tx.array([...p.tree.currencies])}, ${tx.json(totals)},
        ${p.tree.leafCount}, ${p.tree.levels.length - 1}, ${p.balancesAt}, ${p.ledgerSnapshot},
        ${p.ledgerLastEventId}, ${tx.json(p.negatives as postgres.JSONValue)})
      returning ${rootColumns(tx)}`
    const root = toStoredRoot(row as RootRow)
    await copyRows(
      tx`copy liability_tree_nodes (root_id, level, idx, hash, sums) from stdin`,
      nodeLines(root.id, p.tree),
    )
    await copyRows(
      tx`copy liability_tree_leaves (root_id, user_id, idx, salt) from stdin`,
      leafLines(root.id, p.leaves),
    )
    return { stored: true as const, root }
  })
}

/**
 * A user's proof in the tree of `rootId`: their leaf (salt, balances, index) and the sibling of
 * every level, in one read of the leaf and one of the nodes (a primary-key lookup per level).
 * Undefined when the user is not in that tree, or its nodes were pruned.
 */
export async function proofFromStore(
  sql: Queryable,
  root: Pick<StoredRoot, 'id' | 'currencies' | 'depth'>,
  userId: string,
): Promise<LiabilityProof | undefined> {
  const [leaf] = await sql<{ idx: number; salt: Buffer }[]>`
    select idx, salt from liability_tree_leaves where root_id = ${root.id} and user_id = ${userId}`
  if (!leaf) return undefined
  // the leaf's own node (its balances), then its sibling at each level
  const levels = [0]
  const idxs = [leaf.idx]
  for (let level = 0, i = leaf.idx; level < root.depth; level++, i >>= 1) {
    levels.push(level)
    idxs.push(i ^ 1)
  }
  const rows = await sql<{ level: number; idx: number; hash: Buffer; sums: string[] }[]>`
    select n.level, n.idx, n.hash, n.sums
    from unnest(${`{${levels.join(',')}}`}::smallint[], ${`{${idxs.join(',')}}`}::integer[]) as w(level, idx)
    join liability_tree_nodes n on n.root_id = ${root.id} and n.level = w.level and n.idx = w.idx`
  const byKey = new Map(rows.map((r) => [`${r.level}:${r.idx}`, r]))
  const own = byKey.get(`0:${leaf.idx}`)
  if (!own) return undefined
  const path: PathStep[] = []
  for (let level = 0, i = leaf.idx; level < root.depth; level++, i >>= 1) {
    const sibling = byKey.get(`${level}:${i ^ 1}`)
    if (!sibling) return undefined
    path.push({ hash: hex(sibling.hash), sums: sibling.sums.map(String) })
  }
  return {
    currencies: root.currencies,
    userId,
    salt: hex(leaf.salt),
    balances: own.sums.map(String),
    index: leaf.idx,
    path,
  }
}

/**
 * Deletes the nodes and leaves of every tree published before `before`, except the latest one's
 * (its proofs are served). Roots are kept. Returns the trees pruned now and the rows deleted.
 */
export async function pruneTrees(sql: Sql, before: Date): Promise<{ roots: number; nodes: number; leaves: number }> {
  return sql.begin(async (tx) => {
    const old = await tx<{ id: string }[]>`
      select r.id from liability_roots r
      where r.created_at < ${before}
        and r.id <> (select id from liability_roots order by created_at desc, id desc limit 1)
        and exists (select 1 from liability_tree_leaves l where l.root_id = r.id)`
    if (old.length === 0) return { roots: 0, nodes: 0, leaves: 0 }
    const ids = old.map((r) => r.id)
    const nodes = await tx`delete from liability_tree_nodes where root_id = any(${tx.array(ids)}::uuid[])`
    const leaves = await tx`delete from liability_tree_leaves where root_id = any(${tx.array(ids)}::uuid[])`
    return { roots: ids.length, nodes: nodes.count, leaves: leaves.count }
  })
}
