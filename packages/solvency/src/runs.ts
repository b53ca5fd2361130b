/**
 * The one owner of `solvency_runs` and `solvency_deficits` (docs/solvency.md "Continuous
 * solvency"): a row per run with every leg, and the deficit episodes per currency.
 */
import type { Queryable } from '@wh/db'
import { type CurrencyTotals, type Leg, legToJson, type PlaceSurplus, surplusToJson, totalsToJson } from './legs'

export interface StoredRun {
  readonly id: string
  readonly startedAt: Date
  readonly finishedAt: Date
  readonly complete: boolean
  readonly legs: ReturnType<typeof legToJson>[]
  readonly totals: ReturnType<typeof totalsToJson>[]
  readonly surpluses: ReturnType<typeof surplusToJson>[]
  readonly errors: Array<{ place: string; error: string }>
}

export async function storeRun(
  sql: Queryable,
  r: {
    startedAt: Date
    complete: boolean
    legs: readonly Leg[]
    totals: readonly CurrencyTotals[]
    surpluses: readonly PlaceSurplus[]
    errors: ReadonlyArray<{ place: string; error: string }>
  },
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into solvency_runs (started_at, complete, legs, totals, surpluses, errors)
    values (${r.startedAt}, ${r.complete}, ${sql.json(r.legs.map(legToJson))}, ${sql.json(r.totals.map(totalsToJson))},
      ${sql.json(r.surpluses.map(surplusToJson))}, ${sql.json(r.errors as never)})
    returning id::text`
  return (row as { id: string }).id
}

const RUN_COLUMNS = `id::text, started_at as "startedAt", finished_at as "finishedAt", complete, legs, totals,
  surpluses, errors`

/** The newest runs first: at most `limit` (≤ 500), complete ones only when asked. */
export async function listRuns(
  sql: Queryable,
  q: { limit?: number; completeOnly?: boolean; before?: Date } = {},
): Promise<StoredRun[]> {
  const limit = Math.min(Math.max(q.limit ?? 20, 1), 500)
  return sql<StoredRun[]>`
    select ${sql.unsafe(RUN_COLUMNS)} from solvency_runs
    where (${q.completeOnly ?? false} = false or complete)
      and (${q.before ?? null}::timestamptz is null or finished_at < ${q.before ?? null}::timestamptz)
    order by finished_at desc, id desc limit ${limit}`
}

export async function latestRun(sql: Queryable, q: { completeOnly?: boolean } = {}): Promise<StoredRun | undefined> {
  return (await listRuns(sql, { limit: 1, completeOnly: q.completeOnly }))[0]
}

export interface DeficitEpisode {
  readonly id: string
  readonly currency: string
  readonly openedAt: Date
  readonly openedRunId: string
  /** the largest shortfall seen, base units (positive) */
  readonly worst: string
}

export async function openDeficits(sql: Queryable): Promise<DeficitEpisode[]> {
  return sql<DeficitEpisode[]>`
    select id::text, currency, opened_at as "openedAt", opened_run_id::text as "openedRunId", worst
    from solvency_deficits where closed_at is null order by currency`
}

/**
 * Moves the episodes after a complete run: each currency in `confirmed` (a deficit at this run and
 * the complete run before it) opens an episode unless one is open (its worst is raised), and every
 * open episode of a currency without a deficit now closes. Returns the episodes opened.
 */
export async function moveEpisodes(
  sql: Queryable,
  runId: string,
  confirmed: readonly CurrencyTotals[],
  deficitNow: ReadonlySet<string>,
): Promise<DeficitEpisode[]> {
  const open = new Map((await openDeficits(sql)).map((e) => [e.currency, e]))
  const opened: DeficitEpisode[] = []
  for (const t of confirmed) {
    const shortfall = -t.surplus
    const e = open.get(t.currency)
    if (e) {
      if (shortfall > BigInt(e.worst))
        await sql`update solvency_deficits set worst = ${shortfall.toString()} where id = ${e.id}`
      continue
    }
    const rows = await sql<DeficitEpisode[]>`
      insert into solvency_deficits (currency, opened_run_id, worst)
      values (${t.currency}, ${runId}, ${shortfall.toString()})
      on conflict do nothing
      returning id::text, currency, opened_at as "openedAt", opened_run_id::text as "openedRunId", worst`
    opened.push(...rows)
  }
  for (const [currency, e] of open)
    if (!deficitNow.has(currency))
      await sql`update solvency_deficits set closed_at = now(), closed_run_id = ${runId} where id = ${e.id} and closed_at is null`
  return opened
}
