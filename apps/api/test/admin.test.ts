/**
 * The operator's desk (apps/api/src/admin, docs/operations.md) on its own listener: basic auth on
 * every route and its document, not on the public server, and each decision taken through the
 * same functions as the CLIs, recorded with who and why, idempotent when repeated.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { moveEpisodes, storeRun } from '@wh/solvency'
import { integrationContext, type RunningChain, startChain } from '@wh/testkit'
import type { ChainClients, ChainName } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import { createPublicClient, getAddress, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { type Api, startApi } from './support'

const PASSWORD = 'admin-password-for-desk-tests'
const AUTH = { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` }
const decision = { operator: 'alice', reason: 'second provider shows the nonce taken by 0xabc' }
const address = () => getAddress(`0x${randomBytes(20).toString('hex')}`)

describe('the operator desk', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let admin: FastifyInstance
  let base: string
  let chain: RunningChain

  beforeAll(async () => {
    ctx = await integrationContext()
    chain = await startChain()
    // read-only clients, as the API holds them: resuming reads the block below the new cursor
    const client = { publicClient: createPublicClient({ transport: http(chain.rpcUrl) }) } as unknown as ChainClients
    admin = await buildAdminServer({
      password: PASSWORD,
      database: ctx.database,
      clients: new Map<ChainName, ChainClients>([
        ['optimism', client],
        ['base', client],
      ]),
      logger: false,
    })
    base = await admin.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => {
    await admin?.close()
    await ctx?.database.close()
    await chain?.stop()
  })

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
  }

  it('asks for basic auth on every route and on its document, which declares that scheme', async () => {
    const doc = await call('GET', '/docs/json')
    expect(doc.status).toBe(200)
    expect(doc.body.components.securitySchemes.adminBasic).toEqual({ type: 'http', scheme: 'basic' })
    const paths = Object.keys(doc.body.paths)
    expect(paths).toEqual(
      expect.arrayContaining([
        '/admin/overview',
        '/admin/held',
        '/admin/held/{id}/recheck',
        '/admin/held/{id}/fail',
        '/admin/chains',
        '/admin/chains/{chain}/resume',
        '/admin/subaccounts/stopped',
        '/admin/subaccounts/{id}/clear-stop',
        '/admin/actions',
        '/admin/solvency',
        '/admin/solvency/runs',
        '/admin/platform-stop',
        '/admin/platform-stop/clear',
      ]),
    )
    const wrong = { authorization: `Basic ${Buffer.from('admin:not-the-password').toString('base64')}` }
    for (const path of ['/docs/json', '/admin/overview', '/admin/held', '/admin/actions', '/admin/solvency']) {
      for (const headers of [{}, wrong]) {
        const r = await call('GET', path, undefined, headers)
        expect(r.status).toBe(401)
        expect(r.body.code).toBe('UNAUTHORIZED')
        expect(r.headers.get('www-authenticate')).toMatch(/^Basic/)
      }
    }
    const post = await call('POST', `/admin/held/${randomUUID()}/fail`, decision, {})
    expect(post.status).toBe(401)
  })

  it('is not served by the public API', async () => {
    const api: Api = await startApi({ ADMIN_PASSWORD: PASSWORD })
    try {
      for (const url of ['/admin/overview', '/admin/held', '/admin/actions']) {
        const r = await api.app.inject({ method: 'GET', url, headers: AUTH })
        expect(r.statusCode).toBe(404)
      }
    } finally {
      await api.close()
    }
  })

  it('a held transaction: listed, failed with who and why, the withdrawal back in its queue; repeated, the same answer', async () => {
    const sql = ctx.database.sql
    const withdrawalId = randomUUID()
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, ${Math.floor(Math.random() * 1e6)}) returning id`
    await sql`insert into withdrawals (id, user_id, currency, amount, state, chain, destination, held_at, hold_reason)
      values (${withdrawalId}, ${user?.id as string}, 'USDC', 1000000, 'requested', 'base', ${address()}, now(), 'held')`
    const [out] = await sql<{ id: string }[]>`
      insert into outbound_txs (chain, purpose, ref_id, from_address, to_address, token, amount, nonce, raw_tx, tx_hash,
        state, contradictions, hold_reason)
      values ('base', 'withdrawal', ${withdrawalId}, ${address()}, ${address()}, 'USDC', 1000000, 7, '0x00',
        ${`0x${randomBytes(32).toString('hex')}`}, 'held', 3, 'nonce used, no receipt')
      returning id`
    const id = out?.id as string

    const listed = await call('GET', '/admin/held')
    expect(listed.status).toBe(200)
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id, purpose: 'withdrawal', refId: withdrawalId, nonce: '7', contradictions: 3 }),
    ])
    expect((await call('GET', '/admin/overview')).body.heldTransactions).toBe(1)

    const failed = await call('POST', `/admin/held/${id}/fail`, decision)
    expect(failed.status).toBe(200)
    expect(failed.body).toMatchObject({ id, verdict: 'failed', alreadyDone: false })
    const [w] = await sql<{ held_at: Date | null }[]>`select held_at from withdrawals where id = ${withdrawalId}`
    expect(w?.held_at).toBeNull()
    const [action] = (await call('GET', `/admin/actions?subject=${id}`)).body.items
    expect(action).toMatchObject({ action: 'outbound_failed', subject: id, actor: 'alice', reason: decision.reason })

    const again = await call('POST', `/admin/held/${id}/fail`, decision)
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ id, verdict: 'failed', alreadyDone: true })
    expect((await call('GET', `/admin/actions?subject=${id}`)).body.items).toHaveLength(1)
    // the other decision, once this one took effect, is refused
    const other = await call('POST', `/admin/held/${id}/recheck`, decision)
    expect(other.status).toBe(409)
    expect(other.body.code).toBe('OUTBOUND_NOT_HELD')
    expect((await call('GET', '/admin/held')).body.items).toEqual([])
  })

  it('a halted deposit watch: shown with its reason, resumed with who and why, then 409 for a watch not halted', async () => {
    const sql = ctx.database.sql
    await sql`insert into chain_cursors (chain, next_block, block_hash, halted_at, halt_reason)
      values ('optimism', 120, ${`0x${'ab'.repeat(32)}`}, now(), 'reorg past the cursor')`
    const chains = await call('GET', '/admin/chains')
    expect(chains.body.items).toEqual([
      expect.objectContaining({ chain: 'optimism', nextBlock: '120', haltReason: 'reorg past the cursor' }),
    ])
    expect((await call('GET', '/admin/overview')).body.haltedChains).toEqual(['optimism'])
    const resumed = await call('POST', '/admin/chains/optimism/resume', { ...decision, fromBlock: '1' })
    expect(resumed.status).toBe(200)
    expect(resumed.body).toEqual({ chain: 'optimism', resumed: true, alreadyDone: false })
    const [cursor] = await sql<{ next_block: string; halted_at: Date | null; block_hash: string }[]>`
      select next_block::text, halted_at, block_hash from chain_cursors where chain = 'optimism'`
    const genesis = await createPublicClient({ transport: http(chain.rpcUrl) }).getBlock({ blockNumber: 0n })
    expect(cursor).toEqual({ next_block: '1', halted_at: null, block_hash: genesis.hash })
    const [action] = (await call('GET', '/admin/actions?subject=optimism')).body.items
    expect(action).toMatchObject({ action: 'chain_resumed', actor: 'alice', details: { fromBlock: '1' } })

    const again = await call('POST', '/admin/chains/optimism/resume', { ...decision, fromBlock: '1' })
    expect(again.body).toEqual({ chain: 'optimism', resumed: true, alreadyDone: true })
    await sql`insert into chain_cursors (chain, next_block) values ('base', 5)`
    const notHalted = await call('POST', '/admin/chains/base/resume', decision)
    expect(notHalted.status).toBe(409)
    expect(notHalted.body.code).toBe('CHAIN_NOT_HALTED')
    const unknownChain = await call('POST', '/admin/chains/solana/resume', decision)
    expect(unknownChain.status).toBe(400)
  })

  it('a stopped subaccount: cleared with who and why (journaled), repeated the same, unknown 404, bad input 400', async () => {
    const sql = ctx.database.sql
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, ${Math.floor(Math.random() * 1e6)}) returning id`
    const [sub] = await sql<{ id: string }[]>`
      insert into subaccounts (user_id, asset, exchange_id, stopped_at, stop_reason)
      values (${user?.id as string}, 'ETH', ${Math.floor(Math.random() * 1e9)}, now(), 'journal and exchange differ')
      returning id`
    const id = sub?.id as string
    expect((await call('GET', '/admin/subaccounts/stopped')).body.items).toEqual([
      expect.objectContaining({ id, asset: 'ETH', stopReason: 'journal and exchange differ' }),
    ])

    const cleared = await call('POST', `/admin/subaccounts/${id}/clear-stop`, decision)
    expect(cleared.status).toBe(200)
    expect(cleared.body).toEqual({ id, cleared: true, alreadyDone: false })
    const events = await sql<{ type: string }[]>`
      select type from ledger_events where type = 'stop_cleared' and user_id = ${user?.id as string}`
    expect(events).toHaveLength(1)
    const [action] = (await call('GET', `/admin/actions?subject=${id}`)).body.items
    expect(action).toMatchObject({ action: 'stop_cleared', actor: 'alice', reason: decision.reason })

    const again = await call('POST', `/admin/subaccounts/${id}/clear-stop`, decision)
    expect(again.body).toEqual({ id, cleared: true, alreadyDone: true })

    const unknown = await call('POST', `/admin/subaccounts/${randomUUID()}/clear-stop`, decision)
    expect(unknown.status).toBe(404)
    for (const body of [
      { reason: 'x' },
      { operator: 'alice' },
      { ...decision, extra: 1 },
      { ...decision, reason: '' },
    ]) {
      const bad = await call('POST', `/admin/subaccounts/${id}/clear-stop`, body)
      expect(bad.status).toBe(400)
      expect(bad.body).toMatchObject({ statusCode: 400 })
    }
    const badId = await call('POST', '/admin/subaccounts/not-a-uuid/clear-stop', decision)
    expect(badId.status).toBe(400)
  })
  it('solvency: the latest run with its legs and deficits; the platform stop raised and cleared with who and why, each idempotent', async () => {
    const sql = ctx.database.sql
    const empty = await call('GET', '/admin/solvency')
    expect(empty.status).toBe(200)
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
    const view = await call('GET', '/admin/solvency')
    expect(view.body.latest).toMatchObject({
      id: runId,
      complete: true,
      totals: [{ currency: 'USDC', assets: '900', liabilities: '1000', surplus: '-100' }],
    })
    expect(view.body.latest.legs).toHaveLength(2)
    expect(view.body.deficits).toEqual([
      expect.objectContaining({ currency: 'USDC', worst: '100', openedRunId: runId }),
    ])
    expect((await call('GET', '/admin/solvency/runs?limit=5')).body.items[0]).toMatchObject({ id: runId })
    expect((await call('GET', '/admin/solvency/runs?limit=0')).status).toBe(400)

    const raised = await call('POST', '/admin/platform-stop', decision)
    expect(raised.body).toEqual({ stopped: true, alreadyDone: false })
    expect((await call('POST', '/admin/platform-stop', decision)).body).toEqual({ stopped: true, alreadyDone: true })
    const overview = (await call('GET', '/admin/overview')).body
    expect([overview.platformStopped, overview.deficits]).toEqual([true, ['USDC']])
    expect((await call('GET', '/admin/solvency')).body.stops).toEqual([
      expect.objectContaining({ raisedBy: 'operator', reason: decision.reason }),
    ])

    const cleared = await call('POST', '/admin/platform-stop/clear', decision)
    expect(cleared.body).toEqual({ stopped: false, alreadyDone: false })
    expect((await call('POST', '/admin/platform-stop/clear', decision)).body).toEqual({
      stopped: false,
      alreadyDone: true,
    })
    expect((await call('GET', '/admin/overview')).body.platformStopped).toBe(false)
    const actions = (await call('GET', '/admin/actions?subject=platform')).body.items
    expect(actions.map((a: { action: string; actor: string }) => [a.action, a.actor])).toEqual([
      ['platform_stop_cleared', 'alice'],
      ['platform_stop_raised', 'alice'],
    ])
    expect((await call('POST', '/admin/platform-stop/clear', { operator: 'alice' })).status).toBe(400)
  })
})
