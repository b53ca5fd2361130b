/**
 * The operator's desk (apps/api/src/admin, docs/operations.md) on its own listener: operators sign
 * in with names of their own (throttled), each route needs the role its document names, the body
 * never says who decides, and the decisions that lift a guard take effect only once another
 * operator approved them, recorded with who and why. Held transactions and their chain readings:
 * admin-held.test.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { ManualClock } from '@wh/core'
import { setOperatorDisabled } from '@wh/ops'
import { moveEpisodes, storeRun } from '@wh/solvency'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import type { ChainClients, ChainInfo, ChainName } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import postgres from 'postgres'
import { createPublicClient, getAddress, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { deskCaller, deskSignIn, makeOperators } from './desk-support'
import { type Api, startApi } from './support'
import { raceAtTable } from './table-gate'

const reason = 'second provider shows the nonce taken by 0xabc'
const address = () => getAddress(`0x${randomBytes(20).toString('hex')}`)

describe('the operator desk', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let admin: FastifyInstance
  let base: string
  let chain: RunningChain
  let call: ReturnType<typeof deskCaller>
  let passwords: Record<string, string>
  const token: Record<string, string> = {}

  beforeAll(async () => {
    ctx = await integrationContext()
    chain = await startChain()
    const client = {
      info: { confirmations: 0 } as ChainInfo,
      publicClient: createPublicClient({ transport: http(chain.rpcUrl) }),
    } as unknown as ChainClients
    admin = await buildAdminServer({
      database: ctx.database,
      clients: new Map<ChainName, ChainClients>([
        ['optimism', client],
        ['base', client],
      ]),
      // one approval besides the proposer's own proposal, as in the local run
      operators: { auth: { kind: 'password' }, approvalsRequired: 1 },
      logger: false,
    })
    base = await admin.listen({ host: '127.0.0.1', port: 0 })
    call = deskCaller(base)
    passwords = await makeOperators(ctx.ownerUrl, [
      { name: 'vera', role: 'viewer' },
      { name: 'otto', role: 'operator' },
      { name: 'alice', role: 'approver' },
      { name: 'bob', role: 'approver' },
      { name: 'tina', role: 'viewer' },
      { name: 'tess', role: 'viewer' },
    ])
    for (const name of ['vera', 'otto', 'alice', 'bob'])
      token[name] = await deskSignIn(base, name, passwords[name] as string)
  }, 60_000)
  afterAll(async () => {
    await admin?.close()
    await ctx?.database.close()
    await chain?.stop()
  })

  it('every route needs a signed-in operator; the document names the role of each', async () => {
    const doc = await call('GET', '/docs/json', { token: token.vera })
    expect(doc.status).toBe(200)
    expect(doc.body.components.securitySchemes).toMatchObject({
      deskSession: { type: 'http', scheme: 'bearer' },
      deskCookie: { type: 'apiKey', in: 'cookie', name: 'wh_desk' },
    })
    const roles: Record<string, string> = {}
    for (const [path, methods] of Object.entries(
      doc.body.paths as Record<string, Record<string, Record<string, unknown>>>,
    ))
      for (const [method, op] of Object.entries(methods)) {
        const role = op['x-role'] as string
        roles[`${method.toUpperCase()} ${path}`] = role
        expect(['public', 'viewer', 'operator', 'approver'], `${method} ${path}`).toContain(role)
        expect(String(op.description), `${method} ${path}`).toMatch(/^\*\*Role: /)
        if (role !== 'public')
          expect(op.security, `${method} ${path}`).toEqual([{ deskSession: [role] }, { deskCookie: [role] }])
      }
    expect(roles).toMatchObject({
      'POST /admin/session': 'public',
      'GET /admin/overview': 'viewer',
      'GET /admin/held': 'viewer',
      'POST /admin/held/{id}/recheck': 'operator',
      'POST /admin/held/{id}/fail': 'operator',
      'POST /admin/held/{id}/mark-sent': 'operator',
      'POST /admin/chains/{chain}/resume': 'operator',
      'POST /admin/subaccounts/{id}/clear-stop': 'operator',
      'POST /admin/platform-stop': 'operator',
      'POST /admin/platform-stop/clear': 'operator',
      'GET /admin/proposals': 'viewer',
      'POST /admin/proposals/{id}/approve': 'approver',
      'POST /admin/proposals/{id}/withdraw': 'operator',
      'GET /admin/actions': 'viewer',
      'GET /admin/solvency': 'viewer',
    })
    const wrong = { authorization: `Bearer ${randomBytes(32).toString('base64url')}` }
    const basic = { authorization: `Basic ${Buffer.from('admin:anything').toString('base64')}` }
    // a session cookie that is not URI-encoded is no session: 401, never a 500
    const badCookie = { cookie: 'wh_desk=%E0%A4%A' }
    for (const path of ['/docs/json', '/admin/overview', '/admin/held', '/admin/actions', '/admin/proposals']) {
      for (const headers of [{}, wrong, basic, badCookie]) {
        const r = await call('GET', path, { headers })
        expect(r.status, path).toBe(401)
        expect(r.body.code).toBe('UNAUTHORIZED')
      }
    }
    expect((await call('POST', `/admin/held/${randomUUID()}/fail`, { body: { reason } })).status).toBe(401)
    expect((await call('GET', '/admin/me', { token: token.otto })).body).toEqual({
      operator: { name: 'otto', role: 'operator' },
      auth: 'password',
    })
  })

  it('sign-in: the same 401 for a wrong password and an unknown name; throttled per name; a disabled operator is out at once', async () => {
    const wrong = await call('POST', '/admin/session', {
      body: { operator: 'tina', password: 'not-her-password-at-all' },
    })
    const unknown = await call('POST', '/admin/session', {
      body: { operator: 'nobody', password: 'not-her-password-at-all' },
    })
    expect([wrong.status, unknown.status]).toEqual([401, 401])
    expect(wrong.body).toEqual(unknown.body)
    for (let i = 0; i < 4; i++)
      expect(
        (await call('POST', '/admin/session', { body: { operator: 'tina', password: `wrong-${i}` } })).status,
      ).toBe(401)
    // five failures: the name is refused, even with the right password, without checking it
    const throttled = await call('POST', '/admin/session', { body: { operator: 'tina', password: passwords.tina } })
    expect(throttled.status).toBe(429)
    expect(throttled.body.code).toBe('SIGN_IN_THROTTLED')
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
    // another operator from the same address still signs in
    const session = await call('POST', '/admin/session', { body: { operator: 'vera', password: passwords.vera } })
    expect(session.status).toBe(200)
    expect(session.headers.get('set-cookie')).toMatch(/^wh_desk=[^;]+; Path=\/; Expires=.*; HttpOnly; SameSite=Strict/)
    // the cookie alone is a session too
    const cookie = String(session.headers.get('set-cookie')).split(';')[0] as string
    expect((await call('GET', '/admin/overview', { headers: { cookie } })).status).toBe(200)
    // disabled by the owner: the session is refused at once; signed out: refused too
    const owner = postgres(ctx.ownerUrl, { max: 1, onnotice: () => {} })
    try {
      await setOperatorDisabled(owner, 'vera', true)
      expect((await call('GET', '/admin/overview', { token: session.body.token })).status).toBe(401)
      await setOperatorDisabled(owner, 'vera', false)
    } finally {
      await owner.end()
    }
    token.vera = await deskSignIn(base, 'vera', passwords.vera as string)
    const t = await deskSignIn(base, 'vera', passwords.vera as string)
    expect((await call('DELETE', '/admin/session', { token: t })).status).toBe(204)
    expect((await call('GET', '/admin/overview', { token: t })).status).toBe(401)
  })

  it('a burst of wrong passwords at once for one name: five are checked, the rest throttled, the right one then too', async () => {
    // every sign-in of the burst starts before any hash ends: each is counted as it starts, not once its hash failed
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', '/admin/session', { body: { operator: 'tess', password: `wrong-guess-number-${i}` } }),
      ),
    )
    const codes = burst.map((r) => `${r.status} ${r.body.code}`)
    expect(codes.filter((c) => c === '401 SIGN_IN_REJECTED')).toHaveLength(5)
    expect(codes.filter((c) => c === '429 SIGN_IN_THROTTLED')).toHaveLength(15)
    for (const r of burst.filter((b) => b.status === 429))
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(60)
    // the window holds for the right password as well
    const right = await call('POST', '/admin/session', { body: { operator: 'tess', password: passwords.tess } })
    expect([right.status, right.body.code]).toEqual([429, 'SIGN_IN_THROTTLED'])
  })

  it('sessions that ended are forgotten as operators sign in, at most once a minute, not at every sign-in', async () => {
    const clock = new ManualClock(Date.now())
    const desk = await buildAdminServer({
      database: ctx.database,
      clients: new Map(),
      operators: { auth: { kind: 'password' }, approvalsRequired: 1 },
      clock,
      logger: false,
    })
    const sql = ctx.database.sql
    const [vera] = await sql<{ id: string }[]>`select id::text from operators where name = 'vera'`
    /** A session that ended two days ago: its token's hash. */
    const ended = async () => {
      const hash = randomBytes(32)
      await sql`insert into operator_sessions (token_hash, operator_id, expires_at)
        values (${hash}, ${vera?.id as string}, now() - interval '2 days')`
      return hash
    }
    const kept = async (hash: Buffer) =>
      (await sql`select 1 from operator_sessions where token_hash = ${hash}`).length === 1
    try {
      const at = await desk.listen({ host: '127.0.0.1', port: 0 })
      const first = await ended()
      await deskSignIn(at, 'vera', passwords.vera as string)
      expect(await kept(first)).toBe(false)
      // the next sign-ins within the minute delete nothing
      const second = await ended()
      await deskSignIn(at, 'vera', passwords.vera as string)
      await deskSignIn(at, 'vera', passwords.vera as string)
      expect(await kept(second)).toBe(true)
      clock.advance(60_000)
      await deskSignIn(at, 'vera', passwords.vera as string)
      expect(await kept(second)).toBe(false)
    } finally {
      await desk.close()
    }
  })

  it('roles: a viewer reads and decides nothing; an operator proposes and cannot approve; the body never names who decides', async () => {
    expect((await call('GET', '/admin/overview', { token: token.vera })).status).toBe(200)
    const denied = await call('POST', '/admin/platform-stop', { token: token.vera, body: { reason } })
    expect([denied.status, denied.body.code]).toEqual([403, 'ROLE_REQUIRED'])
    // a name the caller types is never recorded: the body has no such field
    const typed = await call('POST', '/admin/platform-stop', {
      token: token.otto,
      body: { operator: 'ceo@wheelhouse (not me)', reason },
    })
    expect(typed.status).toBe(400)
    const raised = await call('POST', '/admin/platform-stop', { token: token.otto, body: { reason } })
    expect(raised.body).toEqual({ stopped: true, alreadyDone: false })
    const [action] = (await call('GET', '/admin/actions?subject=platform', { token: token.vera })).body.items
    expect(action).toMatchObject({ action: 'platform_stop_raised', actor: 'otto', reason })
    const proposed = await call('POST', '/admin/platform-stop/clear', {
      token: token.otto,
      body: { reason: 'explained' },
    })
    expect(proposed.status).toBe(202)
    const id = proposed.body.proposal.id
    const byOperator = await call('POST', `/admin/proposals/${id}/approve`, { token: token.otto })
    expect([byOperator.status, byOperator.body.code]).toEqual([403, 'ROLE_REQUIRED'])
    // an approver may reject it
    const rejected = await call('POST', `/admin/proposals/${id}/withdraw`, {
      token: token.alice,
      body: { reason: 'no' },
    })
    expect(rejected.body).toMatchObject({ status: 'withdrawn', outcome: { outcome: 'withdrawn', decidedBy: 'alice' } })
    expect((await call('POST', `/admin/proposals/${id}/approve`, { token: token.bob })).status).toBe(409)
    expect((await call('GET', '/admin/overview', { token: token.vera })).body.platformStopped).toBe(true)
  })

  it('is not served by the public API', async () => {
    const api: Api = await startApi({ BULL_BOARD_ENABLED: 'true' })
    try {
      for (const url of ['/admin/overview', '/admin/held', '/admin/actions', '/admin/session', '/admin/proposals']) {
        const r = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token.alice}` } })
        expect(r.statusCode).toBe(404)
      }
    } finally {
      await api.close()
    }
  })

  it('a halted deposit watch: proposed, resumed when another operator approves, with who and why; 409 once not halted', async () => {
    const sql = ctx.database.sql
    await sql`insert into chain_cursors (chain, next_block, block_hash, halted_at, halt_reason)
      values ('optimism', 120, ${`0x${'ab'.repeat(32)}`}, now(), 'reorg past the cursor')`
    expect((await call('GET', '/admin/overview', { token: token.vera })).body.haltedChains).toEqual(['optimism'])
    const proposed = await call('POST', '/admin/chains/optimism/resume', {
      token: token.alice,
      body: { reason, fromBlock: '1' },
    })
    expect(proposed.status).toBe(202)
    expect(proposed.body.proposal).toMatchObject({
      action: 'chain_resume',
      subject: 'optimism',
      params: { fromBlock: '1' },
      proposedBy: 'alice',
      status: 'open',
      approvalsRequired: 1,
    })
    // proposing it again answers the open proposal
    const again = await call('POST', '/admin/chains/optimism/resume', { token: token.otto, body: { reason } })
    expect([again.body.existing, again.body.proposal.id]).toEqual([true, proposed.body.proposal.id])
    const id = proposed.body.proposal.id
    // nothing moved yet; the proposer may not approve their own proposal
    const own = await call('POST', `/admin/proposals/${id}/approve`, { token: token.alice })
    expect([own.status, own.body.code]).toEqual([403, 'FOUR_EYES'])
    const [before] = await sql<
      { halted_at: Date | null }[]
    >`select halted_at from chain_cursors where chain = 'optimism'`
    expect(before?.halted_at).not.toBeNull()
    const approved = await call('POST', `/admin/proposals/${id}/approve`, { token: token.bob })
    expect(approved.body).toMatchObject({ executed: true, alreadyDone: false, proposal: { status: 'executed' } })
    expect(approved.body.proposal.approvals.map((a: { approver: string }) => a.approver)).toEqual(['bob'])
    const [cursor] = await sql<{ next_block: string; halted_at: Date | null; block_hash: string }[]>`
      select next_block::text, halted_at, block_hash from chain_cursors where chain = 'optimism'`
    const genesis = await createPublicClient({ transport: http(chain.rpcUrl) }).getBlock({ blockNumber: 0n })
    expect(cursor).toEqual({ next_block: '1', halted_at: null, block_hash: genesis.hash })
    const [action] = (await call('GET', '/admin/actions?subject=optimism', { token: token.vera })).body.items
    expect(action).toMatchObject({
      action: 'chain_resumed',
      actor: 'alice',
      details: { fromBlock: '1', proposalId: id, approvedBy: ['bob'] },
    })
    // approving again changes nothing; a proposal on a watch not halted is refused
    expect((await call('POST', `/admin/proposals/${id}/approve`, { token: token.bob })).body).toMatchObject({
      executed: false,
      alreadyDone: true,
    })
    const notHalted = await call('POST', '/admin/chains/optimism/resume', { token: token.otto, body: { reason } })
    expect([notHalted.status, notHalted.body.code]).toEqual([409, 'CHAIN_NOT_HALTED'])
    expect((await call('POST', '/admin/chains/solana/resume', { token: token.otto, body: { reason } })).status).toBe(
      400,
    )
  })

  it('a stopped subaccount: cleared on approval (journaled), 404 unknown, 400 bad input', async () => {
    const sql = ctx.database.sql
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, ${Math.floor(Math.random() * 1e6)}) returning id`
    const [sub] = await sql<{ id: string }[]>`
      insert into subaccounts (user_id, asset, exchange_id, stopped_at, stop_reason)
      values (${user?.id as string}, 'ETH', ${Math.floor(Math.random() * 1e9)}, now(), 'journal and exchange differ')
      returning id`
    const id = sub?.id as string
    const proposed = await call('POST', `/admin/subaccounts/${id}/clear-stop`, { token: token.otto, body: { reason } })
    expect(proposed.status).toBe(202)
    const approved = await call('POST', `/admin/proposals/${proposed.body.proposal.id}/approve`, { token: token.alice })
    expect(approved.body.proposal.outcome).toMatchObject({ outcome: 'executed', decidedBy: 'alice' })
    const events = await sql<{ type: string }[]>`
      select type from ledger_events where type = 'stop_cleared' and user_id = ${user?.id as string}`
    expect(events).toHaveLength(1)
    const [action] = (await call('GET', `/admin/actions?subject=${id}`, { token: token.vera })).body.items
    expect(action).toMatchObject({ action: 'stop_cleared', actor: 'otto', reason, details: { approvedBy: ['alice'] } })
    expect(
      (await call('POST', `/admin/subaccounts/${randomUUID()}/clear-stop`, { token: token.otto, body: { reason } }))
        .status,
    ).toBe(404)
    for (const body of [{}, { operator: 'alice', reason }, { reason: '' }, { reason, extra: 1 }]) {
      const bad = await call('POST', `/admin/subaccounts/${id}/clear-stop`, { token: token.otto, body })
      expect(bad.status).toBe(400)
    }
    expect(
      (await call('POST', '/admin/subaccounts/not-a-uuid/clear-stop', { token: token.otto, body: { reason } })).status,
    ).toBe(400)
  })

  it('proposals of one action on one subject at once: one proposal, the others answered with it', async () => {
    const sql = ctx.database.sql
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, ${Math.floor(Math.random() * 1e6)}) returning id`
    const [sub] = await sql<{ id: string }[]>`
      insert into subaccounts (user_id, asset, exchange_id, stopped_at, stop_reason)
      values (${user?.id as string}, 'ETH', ${Math.floor(Math.random() * 1e9)}, now(), 'journal and exchange differ')
      returning id`
    const path = `/admin/subaccounts/${sub?.id as string}/clear-stop`
    const who = ['otto', 'alice', 'bob', 'otto', 'alice', 'bob']
    // every request reads "none open" before any writes (raceAtTable: held, then let go)
    const answers = raceAtTable({
      ownerUrl: ctx.ownerUrl,
      sql,
      table: 'operator_proposals',
      waitingOn: ['%insert into operator_proposals%', '%pg_advisory_xact_lock%'],
      count: who.length,
      send: () => Promise.all(who.map((n) => call('POST', path, { token: token[n], body: { reason } }))),
    })
    const proposed = await answers
    expect(proposed.map((r) => r.status)).toEqual(who.map(() => 202))
    expect(new Set(proposed.map((r) => r.body.proposal.id)).size).toBe(1)
    expect(proposed.filter((r) => r.body.existing === false)).toHaveLength(1)
    const [n] = await sql<{ n: number }[]>`
      select count(*)::int as n from operator_proposals where subject = ${sub?.id as string}`
    expect(n?.n).toBe(1)
    // rejected, so the overview's count of open proposals in later tests is theirs
    const id = proposed[0]?.body.proposal.id as string
    const rejected = await call('POST', `/admin/proposals/${id}/withdraw`, {
      token: token.alice,
      body: { reason: 'a test' },
    })
    expect(rejected.body.status).toBe('withdrawn')
  })

  it('solvency: the latest run, deficits and the balance check; the platform stop raised alone, cleared with four eyes', async () => {
    const sql = ctx.database.sql
    const runId = await storeRun(sql, {
      startedAt: new Date(),
      complete: true,
      legs: [
        { side: 'asset', currency: 'USDC', kind: 'platform_wallet', place: 'base:hot:0xab', amount: 900n },
        { side: 'liability', currency: 'USDC', kind: 'user_transit', place: 'journal', amount: 1_000n },
      ],
      totals: [{ currency: 'USDC', assets: 900n, liabilities: 1_000n, surplus: -100n }],
      surpluses: [],
      errors: [],
    })
    await moveEpisodes(
      sql,
      runId,
      [{ currency: 'USDC', assets: 900n, liabilities: 1_000n, surplus: -100n }],
      new Set(['USDC']),
    )
    const view = await call('GET', '/admin/solvency', { token: token.vera })
    expect(view.body.latest).toMatchObject({ id: runId, totals: [{ currency: 'USDC', surplus: '-100' }] })
    expect(view.body.deficits).toEqual([
      expect.objectContaining({ currency: 'USDC', worst: '100', openedRunId: runId }),
    ])
    expect(view.body.balanceCheck).toBeNull()
    expect((await call('GET', '/admin/solvency/runs?limit=5', { token: token.vera })).body.items[0]).toMatchObject({
      id: runId,
    })

    // raised before (roles test); cleared only once approved
    const proposed = await call('POST', '/admin/platform-stop/clear', {
      token: token.otto,
      body: { reason: 'explained' },
    })
    expect(
      (await call('GET', '/admin/proposals', { token: token.vera })).body.items.map((p: { id: string }) => p.id),
    ).toContain(proposed.body.proposal.id)
    expect((await call('GET', '/admin/overview', { token: token.vera })).body).toMatchObject({
      platformStopped: true,
      openProposals: 1,
    })
    await call('POST', `/admin/proposals/${proposed.body.proposal.id}/approve`, { token: token.bob })
    expect((await call('GET', '/admin/overview', { token: token.vera })).body).toMatchObject({
      platformStopped: false,
      openProposals: 0,
      deficits: ['USDC'],
    })
    const actions = (await call('GET', '/admin/actions?subject=platform', { token: token.vera })).body.items
    expect(actions.map((a: { action: string; actor: string }) => [a.action, a.actor])).toEqual([
      ['platform_stop_cleared', 'otto'],
      ['platform_stop_raised', 'otto'],
    ])
    const none = await call('POST', '/admin/platform-stop/clear', { token: token.otto, body: { reason: 'again' } })
    expect([none.status, none.body.code]).toEqual([409, 'PLATFORM_NOT_STOPPED'])
  })

  it("ADMIN_AUTH=proxy: the name header is believed only with the proxy secret, and the role is the table's", async () => {
    const secret = randomBytes(24).toString('hex')
    const proxied = await buildAdminServer({
      database: ctx.database,
      clients: new Map(),
      operators: { auth: { kind: 'proxy', userHeader: 'x-forwarded-user', secret }, approvalsRequired: 1 },
      logger: false,
    })
    try {
      const via = deskCaller(await proxied.listen({ host: '127.0.0.1', port: 0 }))
      const as = (name: string, s?: string) => ({ 'x-forwarded-user': name, ...(s && { 'x-proxy-secret': s }) })
      // anyone who reaches the listener can send a name: without the secret it names nobody
      expect((await via('GET', '/admin/me', { headers: as('alice') })).status).toBe(401)
      expect((await via('GET', '/admin/me', { headers: as('alice', `${secret.slice(1)}x`) })).status).toBe(401)
      expect((await via('GET', '/admin/me', { headers: as('nobody', secret) })).status).toBe(401)
      const me = await via('GET', '/admin/me', { headers: as('Otto', secret) })
      expect([me.status, me.body.operator]).toEqual([200, { name: 'otto', role: 'operator' }])
      const viewer = await via('POST', '/admin/platform-stop', { headers: as('vera', secret), body: { reason } })
      expect([viewer.status, viewer.body.code]).toEqual([403, 'ROLE_REQUIRED'])
      // no passwords here: the proxy signs operators in
      const session = await via('POST', '/admin/session', { body: { operator: 'vera', password: passwords.vera } })
      expect([session.status, session.body.code]).toEqual([409, 'SIGN_IN_BY_PROXY'])
    } finally {
      await proxied.close()
    }
  })

  it('the overview counts the withdrawals and deposits held with a transaction, not only the transactions', async () => {
    const sql = ctx.database.sql
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, ${Math.floor(Math.random() * 1e6)}) returning id`
    await sql`insert into withdrawals (id, user_id, currency, amount, state, chain, destination, held_at, hold_reason)
      values (${randomUUID()}, ${user?.id as string}, 'USDC', 1000000, 'requested', 'base', ${address()}, now(), 'held')`
    await sql`insert into deposits (chain, tx_hash, log_index, block_number, user_id, hd_index, address, token, amount,
        state, held_at, hold_reason)
      values ('base', ${`0x${randomBytes(32).toString('hex')}`}, 0, 5, ${user?.id as string}, 1, ${address()}, 'USDC', 5,
        'detected', now(), 'held')`
    expect((await call('GET', '/admin/overview', { token: token.vera })).body).toMatchObject({
      heldTransactions: 0,
      heldWithdrawals: 1,
      heldDeposits: 1,
    })
  })
})
