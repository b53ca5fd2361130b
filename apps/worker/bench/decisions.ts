/**
 * Decision log benchmark (docs/trading.md "Why: the decision log"), on a durable throwaway Postgres
 * and Redis, with the account stream's triggers in place (each new decision is an account event):
 *   1. first decisions: every wheel records a new decision (one row each, published on Redis);
 *   2. repeated waits: every wheel records the same wait again for 10 ticks (no row, no publish:
 *      the log grows with decisions, not with ticks);
 *   3. reads: a page of 20 of each wheel's decisions (GET /wheels/{id}/decisions).
 * Figures: calls per second per phase, rows written.
 *
 *   pnpm --filter @wh/worker exec tsx bench/decisions.ts          2,000 wheels
 *   pnpm --filter @wh/worker exec tsx bench/decisions.ts 5000     more
 */
import { randomUUID } from 'node:crypto'
import { mapLimit } from '@wh/core'
import { createDatabase, runMigrations } from '@wh/db'
import { startPostgres, startRedis } from '@wh/testkit'
import { listDecisions, recordDecision } from '@wh/trading'
import { Redis } from 'ioredis'

const N = Number(process.argv[2] ?? 2_000)
const TICKS = 10
const CONCURRENCY = 16

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: CONCURRENCY, appName: 'decisions-bench' })
  const sql = database.sql
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
  const wheels = Array.from({ length: N }, () => ({ wheelId: randomUUID(), userId: randomUUID() }))
  await sql`
    insert into wheels (id, user_id, asset, subaccount_id, state)
    select w.id, w.user_id, 'ETH', gen_random_uuid(), 'running'
    from unnest(${wheels.map((w) => w.wheelId)}::uuid[], ${wheels.map((w) => w.userId)}::uuid[]) as w(id, user_id)`

  const phase = async (name: string, calls: number, run: () => Promise<void>) => {
    const started = performance.now()
    await run()
    const ms = performance.now() - started
    console.log(
      `${name.padEnd(34)} ${calls.toLocaleString('en')} calls in ${(ms / 1000).toFixed(2)} s: ` +
        `${Math.round((calls / ms) * 1000).toLocaleString('en')} /s`,
    )
  }
  const rows = async () => Number((await sql<{ n: string }[]>`select count(*)::text as n from wheel_decisions`)[0]?.n)
  const wait = (w: (typeof wheels)[number]) =>
    recordDecision(sql, { ...w, kind: 'waiting', reason: 'yield_below_floor', at: new Date() }, redis)

  console.log(`decision log: ${N.toLocaleString('en')} wheels, ${CONCURRENCY} at a time`)
  await phase('first decision of each wheel', N, () => mapLimit(wheels, CONCURRENCY, (w) => wait(w)).then(() => {}))
  const afterFirst = await rows()
  await phase(`the same wait, ${TICKS} more ticks`, N * TICKS, async () => {
    for (let t = 0; t < TICKS; t++) await mapLimit(wheels, CONCURRENCY, (w) => wait(w))
  })
  const afterTicks = await rows()
  const events = Number(
    (await sql<{ n: string }[]>`select count(*)::text as n from account_events where kind = 'wheel.decision'`)[0]?.n,
  )
  await phase('a page of 20 per wheel', N, () =>
    mapLimit(wheels, CONCURRENCY, (w) => listDecisions(sql, w.userId, w.wheelId, { limit: 20 })).then(() => {}),
  )
  console.log(
    `rows: ${afterFirst.toLocaleString('en')} after the first decisions, ${afterTicks.toLocaleString('en')} after ` +
      `${TICKS} more ticks of the same wait; ${events.toLocaleString('en')} wheel.decision events on the account stream`,
  )
  redis.disconnect()
  await database.close()
} finally {
  await redisServer.stop()
  await pg.stop()
}
