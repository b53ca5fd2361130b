/**
 * Publishing the proof of liabilities at scale (docs/solvency.md "Proof of liabilities"): a
 * durable (fsync on) throwaway Postgres, migrated, whose ledger holds USERS users (a USDC deposit
 * and a funding of a subaccount each, an ETH deposit for one in three), written through the
 * ledger's append; then one publication as the worker runs it (as the application's login): the
 * snapshot read, the tree's build, the COPY of every node and leaf with the root in one transaction.
 * Then a user's proof read from the tables (the API's GET /portfolio/proof), a second run of the
 * same day, and the tables' size.
 *
 *   pnpm --filter @wh/proof bench             (the tree's bench, then this one at 100,000 users)
 *   tsx bench/publish.ts 20000                fewer
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import { grantAppRole, runMigrations } from '@wh/db'
import { appendBatch, type EventInput, MAX_BATCH_EVENTS } from '@wh/ledger'
import { APP_LOGIN, startPostgres, withUser } from '@wh/testkit'
import postgres from 'postgres'
import { verifyProof } from '../src/index'
import { latestRoot, proofFromStore, publishLiabilities } from '../src/publish'

const USERS = Number(process.argv[2] ?? 100_000)
const PROOF_READS = 2_000
const hash = () => `0x${randomBytes(32).toString('hex')}`

function eventsOf(userId: string, i: number): EventInput[] {
  const usdc = BigInt(1 + (i % 100_000)) * 1_000_000n
  const out: EventInput[] = [
    {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: hash(), logIndex: 0, currency: 'USDC', amount: usdc },
      occurredAt: new Date(),
    },
    {
      type: 'subaccount_funded',
      payload: { userId, subaccountId: `S${i}`, transactionId: `f${i}`, currency: 'USDC', amount: usdc / 2n },
      occurredAt: new Date(),
    },
  ]
  if (i % 3 === 0)
    out.push({
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: hash(),
        logIndex: 1,
        currency: 'ETH',
        amount: BigInt(1 + (i % 7)) * 10n ** 16n,
      },
      occurredAt: new Date(),
    })
  return out
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? Number.NaN
const fmt = (n: number) => n.toLocaleString('en-US')

const pg = await startPostgres({ durable: true })
try {
  await runMigrations(pg.url)
  await grantAppRole(pg.url, withUser(pg.url, APP_LOGIN))
  const sql = postgres(withUser(pg.url, APP_LOGIN), { max: 8, onnotice: () => {} })
  try {
    const users = Array.from({ length: USERS }, () => randomUUID())
    const f0 = performance.now()
    const events = users.flatMap(eventsOf)
    for (let i = 0; i < events.length; i += MAX_BATCH_EVENTS)
      await appendBatch(sql, events.slice(i, i + MAX_BATCH_EVENTS))
    const fillS = (performance.now() - f0) / 1000

    const p0 = performance.now()
    const r = await publishLiabilities(sql, { now: new Date() })
    const publishMs = performance.now() - p0
    if (r.status !== 'published') throw new Error(`nothing published: ${r.status}`)
    const heapMb = Math.round(process.memoryUsage().heapUsed / 2 ** 20)

    const a0 = performance.now()
    const again = await publishLiabilities(sql, { now: new Date() })
    const againMs = performance.now() - a0
    if (again.status !== 'already-published') throw new Error('a second run of the day published')

    const root = (await latestRoot(sql)) as NonNullable<Awaited<ReturnType<typeof latestRoot>>>
    const published = {
      currencies: root.currencies,
      root: root.root,
      totals: root.currencies.map((c) => root.totals[c] as string),
    }
    const reads: number[] = []
    for (let k = 0; k < PROOF_READS; k++) {
      const u = users[Math.floor(Math.random() * users.length)] as string
      const t = performance.now()
      const proof = await proofFromStore(sql, root, u)
      reads.push(performance.now() - t)
      if (!proof || !verifyProof(proof, published).ok) throw new Error(`the proof of ${u} does not verify`)
    }
    const [size] = await sql<{ nodes: string; leaves: string; roots: string }[]>`
      select pg_total_relation_size('liability_tree_nodes')::text as nodes,
        pg_total_relation_size('liability_tree_leaves')::text as leaves,
        pg_total_relation_size('liability_roots')::text as roots`
    const mb = (b: string | undefined) => (Number(b) / 2 ** 20).toFixed(1)

    console.log(`
Publishing the proof of liabilities: ${fmt(USERS)} users, ${root.currencies.length} currencies (ledger filled with ${fmt(events.length)} events in ${fillS.toFixed(1)} s)

| step | time |
| ---- | ---: |
| read every user's holdings (one snapshot) | ${(r.timings.readMs / 1000).toFixed(2)} s |
| build the tree (salts, shuffle, hashes) | ${(r.timings.buildMs / 1000).toFixed(2)} s |
| write root + nodes + leaves (COPY, one transaction) | ${(r.timings.writeMs / 1000).toFixed(2)} s |
| publish, end to end | ${(publishMs / 1000).toFixed(2)} s |
| a second run the same day (nothing done) | ${againMs.toFixed(1)} ms |
| a user's proof read from the tables (${fmt(PROOF_READS)} reads) | p50 ${quantile(reads, 0.5).toFixed(2)} ms, p99 ${quantile(reads, 0.99).toFixed(2)} ms |

rows: ${fmt(r.rows.nodes)} nodes (padding included), ${fmt(r.rows.leaves)} leaves, depth ${root.depth}; on disk: nodes ${mb(size?.nodes)} MB, leaves ${mb(size?.leaves)} MB, roots ${mb(size?.roots)} MB; heap after the build ${heapMb} MB
`)
  } finally {
    await sql.end({ timeout: 5 })
  }
} finally {
  await pg.stop()
}
