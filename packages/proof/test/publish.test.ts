import { appendBatch } from '@wh/ledger'
import { integrationContext } from '@wh/testkit'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { verifyProof } from '../src/index'
import {
  latestRoot,
  listRoots,
  type PublishResult,
  proofFromStore,
  pruneTrees,
  publishLiabilities,
  type StoredRoot,
} from '../src/publish'
import { ledgerTotals, negativeAdjustment, populate } from './populate'

type Ctx = Awaited<ReturnType<typeof integrationContext>>
const DAY = 86_400_000

function published(r: PublishResult): Extract<PublishResult, { status: 'published' }> {
  if (r.status !== 'published') throw new Error(`expected a publication, got ${r.status}`)
  return r
}
const publishedRoot = (r: StoredRoot) => ({
  currencies: r.currencies,
  root: r.root,
  totals: r.currencies.map((c) => r.totals[c] as string),
})

describe('publishing the proof of liabilities (Postgres)', () => {
  let ctx: Ctx
  let users: string[]
  const day1 = new Date('2026-03-01T00:30:00Z')

  beforeAll(async () => {
    ctx = await integrationContext()
    users = await populate(ctx.database.sql, 37)
  })
  afterAll(() => ctx.database.close())

  it('is empty before anyone holds anything', async () => {
    const fresh = await integrationContext()
    try {
      expect(await publishLiabilities(fresh.database.sql, { now: day1 })).toEqual({ status: 'empty' })
      expect(await latestRoot(fresh.database.sql)).toBeUndefined()
    } finally {
      await fresh.database.close()
    }
  })

  it('publishes a root whose totals are the ledger sums, and every user proof verifies against it', async () => {
    const r = published(await publishLiabilities(ctx.database.sql, { now: day1 }))
    expect(r.root.leafCount).toBe(users.length)
    expect(r.root.currencies).toEqual(['ETH', 'USDC'])
    expect(r.root.totals).toEqual(await ledgerTotals(ctx.database.sql))
    expect(r.root.depth).toBe(Math.ceil(Math.log2(users.length)))
    expect(r.rows.leaves).toBe(users.length)
    expect(r.negatives).toEqual([])
    expect(r.root.ledgerLastEventId).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.root.ledgerSnapshot).toMatch(/^\d+:\d+:/)
    const [nodes] = await ctx.database.sql<{ n: string }[]>`
      select count(*)::text as n from liability_tree_nodes where root_id = ${r.root.id}`
    expect(Number(nodes?.n)).toBe(r.rows.nodes)

    const root = publishedRoot(r.root)
    const indexes = new Set<number>()
    for (const u of users) {
      const proof = await proofFromStore(ctx.database.sql, r.root, u)
      if (!proof) throw new Error(`no proof for ${u}`)
      expect(verifyProof(proof, root), u).toEqual({ ok: true })
      expect(proof.path).toHaveLength(r.root.depth)
      indexes.add(proof.index)
    }
    expect(indexes.size).toBe(users.length)
    // the balances a proof shows are the user's transit + subaccounts
    const first = await proofFromStore(ctx.database.sql, r.root, users[0] as string)
    expect(first?.balances).toEqual(['7500000000000000', '1006700000'])
  })

  it('is idempotent per UTC day: a second run does nothing, a forced one publishes again', async () => {
    const before = await latestRoot(ctx.database.sql)
    const again = await publishLiabilities(ctx.database.sql, { now: new Date(day1.getTime() + 3_600_000) })
    expect(again.status).toBe('already-published')
    expect(await listRoots(ctx.database.sql, { limit: 10 })).toHaveLength(1)
    const forced = published(
      await publishLiabilities(ctx.database.sql, { now: new Date(day1.getTime() + 7_200_000), force: true }),
    )
    expect(forced.root.id).not.toBe(before?.id)
    // fresh salts and order: another root for the same balances, the same totals
    expect(forced.root.root).not.toBe(before?.root)
    expect(forced.root.totals).toEqual(before?.totals)
    expect((await latestRoot(ctx.database.sql))?.id).toBe(forced.root.id)
  })

  it('two concurrent runs on a new day publish once', async () => {
    const day2 = new Date(day1.getTime() + DAY)
    const results = await Promise.all([
      publishLiabilities(ctx.database.sql, { now: day2 }),
      publishLiabilities(ctx.database.sql, { now: day2 }),
    ])
    expect(results.map((r) => r.status).sort()).toEqual(['already-published', 'published'])
  })

  it('counts a negative total as 0, reports it, and keeps its count and sum on the root', async () => {
    const debtor = users[1] as string
    // the debtor's USDC subaccount (500.5 USDC + premium − fees) pulled 2,000 USDC below its balance
    await appendBatch(ctx.database.sql, [
      negativeAdjustment(debtor, `S-${debtor.slice(0, 8)}`, 'USDC', -2_000_000_000n),
    ])
    const r = published(await publishLiabilities(ctx.database.sql, { now: new Date(day1.getTime() + 2 * DAY) }))
    expect(r.negatives).toHaveLength(1)
    expect(r.negatives[0]).toMatchObject({ userId: debtor, currency: 'USDC' })
    expect(r.negatives[0]?.amount).toBeLessThan(0n)
    expect(r.root.negatives).toEqual({ USDC: { users: 1, amount: String(r.negatives[0]?.amount) } })
    expect(r.root.totals).toEqual(await ledgerTotals(ctx.database.sql))
    const proof = await proofFromStore(ctx.database.sql, r.root, debtor)
    expect(proof?.balances[1]).toBe('0')
    expect(verifyProof(proof as NonNullable<typeof proof>, publishedRoot(r.root))).toEqual({ ok: true })
  })

  it('pages the roots newest first', async () => {
    const all = await listRoots(ctx.database.sql, { limit: 100 })
    expect(all.length).toBe(4)
    const first = await listRoots(ctx.database.sql, { limit: 3 })
    const last = first.at(-1) as StoredRoot
    const rest = await listRoots(ctx.database.sql, { limit: 3, after: { createdAt: last.createdAtText, id: last.id } })
    expect([...first, ...rest].map((r) => r.id)).toEqual(all.map((r) => r.id))
  })

  it('prunes old trees but keeps every root and the latest tree', async () => {
    const latest = (await latestRoot(ctx.database.sql)) as StoredRoot
    const pruned = await pruneTrees(ctx.database.sql, new Date(day1.getTime() + 10 * DAY))
    expect(pruned.roots).toBe(3)
    expect(pruned.leaves).toBe(3 * users.length)
    expect(await pruneTrees(ctx.database.sql, new Date(day1.getTime() + 10 * DAY))).toEqual({
      roots: 0,
      nodes: 0,
      leaves: 0,
    })
    expect(await listRoots(ctx.database.sql, { limit: 100 })).toHaveLength(4)
    expect(await proofFromStore(ctx.database.sql, latest, users[2] as string)).toBeDefined()
    const old = (await listRoots(ctx.database.sql, { limit: 100 })).at(-1) as StoredRoot
    expect(await proofFromStore(ctx.database.sql, old, users[2] as string)).toBeUndefined()
  })

  it('the application role may add and read roots but never change or delete one', async () => {
    const sql = ctx.database.sql
    await expect(sql`update liability_roots set leaf_count = 0`).rejects.toThrow(/permission denied/)
    await expect(sql`delete from liability_roots`).rejects.toThrow(/permission denied/)
    await expect(sql`update liability_tree_nodes set idx = idx`).rejects.toThrow(/permission denied/)
    await expect(sql`truncate liability_tree_leaves`).rejects.toThrow(/permission denied/)
    // the owner still can (the test proves the refusal is the role's, not the table's)
    const owner = postgres(ctx.ownerUrl, { max: 1, onnotice: () => {} })
    try {
      await owner`update liability_roots set leaf_count = leaf_count`
    } finally {
      await owner.end()
    }
  })
})
