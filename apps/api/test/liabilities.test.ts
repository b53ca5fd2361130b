/**
 * The proof of liabilities over HTTP (docs/solvency.md "Proof of liabilities"): before a
 * publication both routes answer 404 in the error shape; after one, every signed-in user's proof
 * from GET /portfolio/proof verifies against GET /proof-of-liabilities, all reach the same root,
 * the totals are the journal's sums; a tampered proof fails; a user outside the tree gets 404.
 */
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { verifyLiabilityProof } from '@wh/client'
import { appendBatch, type EventInput, parseAccount } from '@wh/ledger'
import { type LiabilityProof, type PublishedRoot, verifyProof } from '@wh/proof'
import { publishLiabilities } from '@wh/proof/publish'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Api, newAccount, signIn, startApi } from './support'

const VERIFY_CLI = fileURLToPath(new URL('../../../packages/client/src/cli/verify-proof.ts', import.meta.url))

function verifyCli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', VERIFY_CLI, ...args], {
      env: { PATH: process.env.PATH } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    child.stdout.on('data', (d) => {
      out += String(d)
    })
    child.stderr.on('data', (d) => {
      out += String(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })
}

const txHash = () => `0x${randomBytes(32).toString('hex')}`

function history(userId: string, n: number): EventInput[] {
  const sub = `S-${userId.slice(0, 8)}`
  const usdc = BigInt(100 + n) * 1_000_000n
  return [
    {
      type: 'deposit_detected',
      payload: { userId, chain: 'base', txHash: txHash(), logIndex: 0, currency: 'USDC', amount: usdc },
      occurredAt: new Date(),
    },
    {
      type: 'deposit_detected',
      payload: {
        userId,
        chain: 'base',
        txHash: txHash(),
        logIndex: 1,
        currency: 'ETH',
        amount: BigInt(n + 1) * 10n ** 15n,
      },
      occurredAt: new Date(),
    },
    {
      type: 'subaccount_funded',
      payload: { userId, subaccountId: sub, transactionId: `f-${userId}`, currency: 'USDC', amount: usdc / 2n },
      occurredAt: new Date(),
    },
  ]
}

interface RootBody {
  id: string
  root: string
  currencies: string[]
  totals: Array<{ currency: string; decimals: number; amount: string; value: string }>
  leafCount: number
  depth: number
  publishedAt: string
  balancesAt: string
}

const published = (r: RootBody): PublishedRoot => ({
  currencies: r.currencies,
  root: r.root,
  totals: r.totals.map((t) => t.amount),
})

describe('GET /proof-of-liabilities and GET /portfolio/proof', () => {
  let api: Api
  const users: Array<{ token: string; userId: string }> = []
  let outsider: string
  const get = (url: string, token?: string) =>
    api.app.inject({ method: 'GET', url, headers: token ? { authorization: `Bearer ${token}` } : {} })

  beforeAll(async () => {
    api = await startApi()
    for (let i = 0; i < 4; i++) {
      const token = await signIn(api.app, newAccount())
      users.push({ token, userId: (api.app.jwt.decode(token) as { sub: string }).sub })
    }
    outsider = await signIn(api.app, newAccount())
  })
  afterAll(() => api.close())

  it('401 without a token, in the error shape', async () => {
    const res = await get('/portfolio/proof')
    expect(res.statusCode).toBe(401)
    expect(res.json()).toMatchObject({ statusCode: 401, code: 'UNAUTHORIZED' })
  })

  it('404 before any publication, in the error shape', async () => {
    const proof = await get('/portfolio/proof', users[0]?.token)
    expect(proof.statusCode).toBe(404)
    expect(proof.json()).toEqual({
      statusCode: 404,
      code: 'NOT_IN_LIABILITY_TREE',
      error: 'Not Found',
      message: 'no proof of liabilities has been published yet',
    })
    const root = await get('/proof-of-liabilities')
    expect(root.statusCode).toBe(404)
    expect(root.json()).toMatchObject({ statusCode: 404, code: 'NO_LIABILITY_ROOT' })
    expect((await get('/proof-of-liabilities/roots')).json()).toEqual({ items: [], nextCursor: null })
  })

  it("after a publication every user's proof verifies against the published root, and the totals are the journal's", async () => {
    const others = Array.from({ length: 29 }, () => randomUUID())
    const everyone = [...users.map((u) => u.userId), ...others]
    await appendBatch(
      api.ctx.database.sql,
      everyone.flatMap((u, i) => history(u, i)),
    )
    const r = await publishLiabilities(api.ctx.database.sql, { now: new Date() })
    expect(r.status).toBe('published')

    const rootRes = await get('/proof-of-liabilities')
    expect(rootRes.statusCode).toBe(200)
    const root = rootRes.json() as RootBody
    expect(root).toMatchObject({ leafCount: everyone.length, depth: 6, currencies: ['ETH', 'USDC'] })
    // the journal's sums of users' transit and subaccounts, from the postings
    const rows = await api.ctx.database.sql<{ account: string; currency: string; v: string }[]>`
      select account, currency, sum(amount)::text as v from ledger_postings group by account, currency`
    const sums: Record<string, bigint> = {}
    for (const row of rows) {
      const p = parseAccount(row.account)
      if (p?.bearer === 'user' && (p.family === 'transit' || p.family === 'sub'))
        sums[row.currency] = (sums[row.currency] ?? 0n) + BigInt(row.v)
    }
    expect(root.totals).toEqual([
      { currency: 'ETH', decimals: 18, amount: String(sums.ETH), value: '0.561000000000000000' },
      { currency: 'USDC', decimals: 6, amount: String(sums.USDC), value: '3828.000000' },
    ])

    const roots = new Set<string>()
    for (const u of users) {
      const res = await get('/portfolio/proof', u.token)
      expect(res.statusCode).toBe(200)
      const body = res.json() as { root: RootBody; proof: LiabilityProof }
      expect(body.root).toEqual(root)
      expect(body.proof.userId).toBe(u.userId)
      expect(verifyProof(body.proof, published(root))).toEqual({ ok: true })
      // and with the client's own verifier, against the API's root as it is answered
      expect(await verifyLiabilityProof(body.proof, root)).toEqual({ ok: true })
      roots.add(body.root.root)
    }
    expect(roots.size).toBe(1)
    const first = (await get('/portfolio/proof', users[0]?.token)).json().proof as LiabilityProof
    expect(first.balances).toEqual(['1000000000000000', '100000000'])
  })

  it('a tampered proof fails', async () => {
    const root = published((await get('/proof-of-liabilities')).json())
    const proof = (await get('/portfolio/proof', users[1]?.token)).json().proof as LiabilityProof
    const tampered: LiabilityProof[] = [
      { ...proof, balances: [proof.balances[0] as string, String(BigInt(proof.balances[1] as string) + 1n)] },
      { ...proof, salt: `0x${'00'.repeat(32)}` },
      { ...proof, userId: users[2]?.userId as string },
      { ...proof, index: proof.index ^ 1 },
      // a sibling's sum one unit off (a sum that is already 0 would not be a change)
      {
        ...proof,
        path: proof.path.map((s, i) =>
          i === 0 ? { ...s, sums: [String(BigInt(s.sums[0] as string) + 1n), s.sums[1] as string] } : s,
        ),
      },
    ]
    for (const t of tampered) expect(verifyProof(t, root).ok).toBe(false)
    expect(verifyProof(proof, { ...root, totals: ['1', root.totals[1] as string] }).ok).toBe(false)
  })

  it('404 NOT_IN_LIABILITY_TREE for a user who held nothing', async () => {
    const res = await get('/portfolio/proof', outsider)
    expect(res.statusCode).toBe(404)
    expect(res.json()).toMatchObject({ code: 'NOT_IN_LIABILITY_TREE', details: { rootId: expect.any(String) } })
  })

  it('pages every root, newest first; a bad cursor or limit is a 400', async () => {
    await publishLiabilities(api.ctx.database.sql, { now: new Date(), force: true })
    await publishLiabilities(api.ctx.database.sql, { now: new Date(), force: true })
    const latest = (await get('/proof-of-liabilities')).json() as RootBody
    const p1 = (await get('/proof-of-liabilities/roots?limit=2')).json()
    expect(p1.items).toHaveLength(2)
    expect(p1.items[0]).toEqual(latest)
    const p2 = (await get(`/proof-of-liabilities/roots?limit=2&cursor=${p1.nextCursor}`)).json()
    expect(p2.items).toHaveLength(1)
    expect(p2.nextCursor).toBeNull()
    expect(new Set([...p1.items, ...p2.items].map((r: RootBody) => r.id)).size).toBe(3)
    for (const url of [
      '/proof-of-liabilities/roots?cursor=nope',
      '/proof-of-liabilities/roots?limit=0',
      '/proof-of-liabilities/roots?limit=Infinity',
      '/proof-of-liabilities/roots?other=1',
    ]) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(400)
      expect(res.json().statusCode).toBe(400)
    }
    // the latest tree serves the proofs
    const proof = (await get('/portfolio/proof', users[3]?.token)).json()
    expect(proof.root.id).toBe(latest.id)
    expect(verifyProof(proof.proof, published(latest))).toEqual({ ok: true })
  })

  it('the verify-proof CLI: OK against a root file and against the API, the first failure of a tampered proof', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wh-proof-'))
    const body = (await get('/portfolio/proof', users[0]?.token)).json()
    const proofFile = join(dir, 'proof.json')
    const rootFile = join(dir, 'root.json')
    writeFileSync(proofFile, JSON.stringify(body))
    writeFileSync(rootFile, JSON.stringify((await get('/proof-of-liabilities')).json()))
    const withFile = await verifyCli([proofFile, rootFile])
    expect(withFile.out).toMatch(/^OK: user /)
    expect(withFile.code).toBe(0)

    const address = await api.app.listen({ port: 0, host: '127.0.0.1' })
    const withApi = await verifyCli([proofFile, '--api', address, '--token', users[0]?.token as string])
    expect(withApi.out).toContain(`is counted in root ${body.root.root} (${body.root.id}`)
    expect(withApi.code).toBe(0)

    const tampered = join(dir, 'tampered.json')
    const p = body.proof as LiabilityProof
    writeFileSync(
      tampered,
      JSON.stringify({
        ...body,
        proof: { ...p, balances: [p.balances[0], String(BigInt(p.balances[1] as string) + 1n)] },
      }),
    )
    const bad = await verifyCli([tampered, '--api', address])
    expect(bad.out.trim()).toBe('FAIL: the path does not lead to the root')
    expect(bad.code).toBe(1)
    // a proof file whose root is not the one published under its id
    const otherRoot = join(dir, 'other-root.json')
    writeFileSync(otherRoot, JSON.stringify({ ...body, root: { ...body.root, root: `0x${'ab'.repeat(32)}` } }))
    expect((await verifyCli([otherRoot, '--api', address])).out).toMatch(/^FAIL: the proof file's root/)
    expect((await verifyCli([proofFile])).code).toBe(2)
  })
})
