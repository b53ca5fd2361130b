/**
 * A race forced by state, not by timing: the schema's owner holds `table` against writes while `send` runs its
 * requests, until `count` sessions wait on a lock in a statement matching one of `waitingOn`, then lets them go.
 * Every request has then read before any of them writes, which is the interleaving a race test needs.
 */
import type { Sql } from '@wh/db'
import postgres from 'postgres'
import { waitFor } from './market-support'

export async function raceAtTable<T>(o: {
  readonly ownerUrl: string
  readonly sql: Sql
  readonly table: string
  /** patterns (ILIKE) of the statements the requests wait in */
  readonly waitingOn: readonly string[]
  readonly count: number
  readonly send: () => Promise<T>
}): Promise<T> {
  const owner = postgres(o.ownerUrl, { max: 1, onnotice: () => {} })
  let release: () => void = () => {}
  const gate = new Promise<void>((r) => {
    release = r
  })
  let locked: () => void = () => {}
  const isLocked = new Promise<void>((r) => {
    locked = r
  })
  const locking = owner.begin(async (tx) => {
    await tx.unsafe(`lock table ${o.table} in share mode`)
    locked()
    await gate
  })
  let answers: Promise<T>
  try {
    // held before the first request is sent (the requests could otherwise finish before the lock is taken)
    await Promise.race([isLocked, locking])
    answers = o.send()
    await waitFor(async () => {
      const [w] = await o.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query ilike any(${o.waitingOn as string[]})`
      return (w?.n ?? 0) >= o.count
    }, `${o.count} requests waiting at ${o.table}`)
  } finally {
    release()
    await locking
    await owner.end()
  }
  return answers
}
