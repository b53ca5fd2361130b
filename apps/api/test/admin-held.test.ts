/**
 * Held transactions on the desk (docs/operations.md "Approvals", docs/hostile-world.md "Never pay
 * twice"), against a real anvil: failing one or marking it sent takes two approvers other than the
 * proposer (ADMIN_APPROVALS_REQUIRED=2, production's default), and the last approval reads the chain
 * again first. A nonce not used at confirmed depth, or a version the chain shows mined, refuses it and
 * nothing moves; a nonce another transaction took fails it, and the outbox row, the record and the
 * release of the waiting withdrawal commit together. A recheck repeated after a crash completes the
 * release it left behind.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { integrationContext, type RunningChain, startChain, TEST_PRIVATE_KEYS } from '@wh/testkit'
import type { ChainClients, ChainInfo, ChainName } from '@wh/wallet'
import type { FastifyInstance } from 'fastify'
import postgres from 'postgres'
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  type Hex,
  http,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildAdminServer } from '../src/admin/server'
import { deskCaller, deskSignIn, makeOperators } from './desk-support'
import { raceAtTable } from './table-gate'

const reason = 'the explorer shows the nonce taken'
const address = () => getAddress(`0x${randomBytes(20).toString('hex')}`)
const randomHash = () => `0x${randomBytes(32).toString('hex')}` as Hex

describe('held transactions: four eyes, and the chain read again before money is released', () => {
  let ctx: Awaited<ReturnType<typeof integrationContext>>
  let chain: RunningChain
  let admin: FastifyInstance
  let call: ReturnType<typeof deskCaller>
  let client: ChainClients
  const token: Record<string, string> = {}
  // the desk's clients: a test adds one the way a deployment would add a chain it lacked
  const clients = new Map<ChainName, ChainClients>()
  const publicClient = () => createPublicClient({ transport: http(chain.rpcUrl) })

  beforeAll(async () => {
    ctx = await integrationContext()
    chain = await startChain({ chainId: 8453 })
    client = { info: { confirmations: 1 } as ChainInfo, publicClient: publicClient() } as unknown as ChainClients
    clients.set('base', client)
    admin = await buildAdminServer({
      database: ctx.database,
      clients,
      operators: { auth: { kind: 'password' }, approvalsRequired: 2 },
      logger: false,
    })
    const base = await admin.listen({ host: '127.0.0.1', port: 0 })
    call = deskCaller(base)
    const pw = await makeOperators(ctx.ownerUrl, [
      { name: 'otto', role: 'operator' },
      { name: 'alice', role: 'approver' },
      { name: 'bob', role: 'approver' },
      { name: 'carol', role: 'approver' },
    ])
    for (const name of Object.keys(pw)) token[name] = await deskSignIn(base, name, pw[name] as string)
  }, 60_000)
  afterAll(async () => {
    await admin?.close()
    await ctx?.database.close()
    await chain?.stop()
  })

  /** One more block on top: confirmed depth is one block here. */
  const mine = () => createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) }).mine({ blocks: 2 })

  /** A withdrawal held with its outbound transaction (`from`, `nonce`, signed versions `hashes`), as the outbox leaves them. */
  async function held(from: Address, nonce: number, hashes: Hex[], chainName = 'base') {
    const sql = ctx.database.sql
    const withdrawalId = randomUUID()
    const [user] = await sql<{ id: string }[]>`
      insert into users (wallet_address, hd_index) values (${address()}, ${Math.floor(Math.random() * 1e6)}) returning id`
    await sql`insert into withdrawals (id, user_id, currency, amount, state, chain, destination, held_at, hold_reason)
      values (${withdrawalId}, ${user?.id as string}, 'ETH', 1000, 'requested', 'base', ${address()}, now(), 'held')`
    const [out] = await sql<{ id: string }[]>`
      insert into outbound_txs (chain, purpose, ref_id, from_address, to_address, token, amount, nonce, raw_tx, tx_hash,
        state, contradictions, hold_reason)
      values (${chainName}, 'withdrawal', ${withdrawalId}, ${from}, ${address()}, 'ETH', 1000, ${nonce}, '0x00',
        ${hashes.at(-1) as string}, 'held', 3, 'nonce used, no receipt')
      returning id`
    for (const [version, hash] of hashes.entries())
      await sql`insert into outbound_tx_versions (outbound_id, version, raw_tx, tx_hash)
        values (${out?.id as string}, ${version}, '0x00', ${hash})`
    return { id: out?.id as string, withdrawalId }
  }
  const state = async (id: string, withdrawalId: string) => {
    const [o] = await ctx.database.sql<{ state: string; gas_used: string | null }[]>`
      select state, gas_used::text from outbound_txs where id = ${id}`
    const [w] = await ctx.database.sql<
      { held_at: Date | null }[]
    >`select held_at from withdrawals where id = ${withdrawalId}`
    return { outbound: o?.state, gasUsed: o?.gas_used ?? null, withdrawalHeld: w?.held_at !== null }
  }
  /** otto proposes, alice and bob approve: the answer to the last approval. */
  async function proposeAndApprove(path: string, body: Record<string, unknown>) {
    const proposed = await call('POST', path, { token: token.otto, body })
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(202)
    const id = proposed.body.proposal.id as string
    const first = await call('POST', `/admin/proposals/${id}/approve`, { token: token.alice })
    expect(first.body).toMatchObject({ executed: false, proposal: { status: 'open', approvalsRequired: 2 } })
    return { id, last: await call('POST', `/admin/proposals/${id}/approve`, { token: token.bob }) }
  }
  async function sender(key: number) {
    const account = privateKeyToAccount(TEST_PRIVATE_KEYS[key] as Hex)
    const wallet = createWalletClient({ account, transport: http(chain.rpcUrl) })
    const nonce = await publicClient().getTransactionCount({ address: account.address })
    return { account, wallet, nonce }
  }

  it('a nonce the chain has not used at confirmed depth: the transaction may still be mined, failing it is refused', async () => {
    const { id, withdrawalId } = await held(address(), 0, [randomHash()])
    const { id: proposalId, last } = await proposeAndApprove(`/admin/held/${id}/fail`, { reason })
    expect([last.status, last.body.code]).toEqual([409, 'OUTBOUND_MAY_STILL_MINE'])
    expect(await state(id, withdrawalId)).toEqual({ outbound: 'held', gasUsed: null, withdrawalHeld: true })
    const p = await call('GET', `/admin/proposals/${proposalId}`, { token: token.otto })
    expect(p.body).toMatchObject({
      status: 'refused',
      outcome: { outcome: 'refused', decidedBy: 'bob', result: { code: 'OUTBOUND_MAY_STILL_MINE' } },
    })
    expect(p.body.approvals.map((a: { approver: string }) => a.approver)).toEqual(['alice', 'bob'])
  })

  it('two approvals at once that complete the set: the proposal is decided once, never left open to expire', async () => {
    const { id } = await held(address(), 0, [randomHash()])
    const proposed = await call('POST', `/admin/held/${id}/fail`, { token: token.otto, body: { reason } })
    const pid = proposed.body.proposal.id as string
    // both approvers read the proposal before either approval is written (raceAtTable: held, then let go)
    const answers = raceAtTable({
      ownerUrl: ctx.ownerUrl,
      sql: ctx.database.sql,
      table: 'operator_approvals',
      waitingOn: ['%operator_approvals%', '%pg_advisory_xact_lock%'],
      count: 2,
      send: () =>
        Promise.all([token.alice, token.bob].map((t) => call('POST', `/admin/proposals/${pid}/approve`, { token: t }))),
    })
    // one of them executed the decision (here refused by the chain's state: the nonce may still be mined)
    expect((await answers).map((a) => a.body.code ?? 'approved').sort()).toEqual([
      'OUTBOUND_MAY_STILL_MINE',
      'approved',
    ])
    const p = await call('GET', `/admin/proposals/${pid}`, { token: token.otto })
    expect(p.body).toMatchObject({ status: 'refused', outcome: { outcome: 'refused' } })
    expect(p.body.approvals.map((a: { approver: string }) => a.approver).sort()).toEqual(['alice', 'bob'])
  })

  it('another transaction took the nonce: failed on two approvals, the withdrawal released in the same commit, with the proof', async () => {
    const s = await sender(3)
    const { id, withdrawalId } = await held(s.account.address, s.nonce, [randomHash(), randomHash()])
    // someone else's transaction with that nonce (a key used outside the outbox)
    const other = await s.wallet.sendTransaction({ to: address(), value: 1n, nonce: s.nonce, chain: null })
    await mine()
    const proposed = await call('POST', `/admin/held/${id}/fail`, { token: token.otto, body: { reason } })
    const pid = proposed.body.proposal.id
    // the proposer cannot approve; an operator cannot approve; one approver is not enough
    expect((await call('POST', `/admin/proposals/${pid}/approve`, { token: token.otto })).body.code).toBe(
      'ROLE_REQUIRED',
    )
    expect((await call('POST', `/admin/proposals/${pid}/approve`, { token: token.alice })).body.executed).toBe(false)
    expect(await state(id, withdrawalId)).toEqual({ outbound: 'held', gasUsed: null, withdrawalHeld: true })
    const last = await call('POST', `/admin/proposals/${pid}/approve`, { token: token.bob })
    expect(last.body).toMatchObject({ executed: true, proposal: { status: 'executed', outcome: { decidedBy: 'bob' } } })
    expect(await state(id, withdrawalId)).toEqual({ outbound: 'failed', gasUsed: null, withdrawalHeld: false })
    const [action] = (await call('GET', `/admin/actions?subject=${id}`, { token: token.otto })).body.items
    expect(action).toMatchObject({
      action: 'outbound_failed',
      actor: 'otto',
      reason,
      details: { takenBy: other, proposalId: pid, approvedBy: ['alice', 'bob'] },
    })
    // approving again changes nothing; a third approver finds it decided
    expect((await call('POST', `/admin/proposals/${pid}/approve`, { token: token.bob })).body.alreadyDone).toBe(true)
    expect((await call('POST', `/admin/proposals/${pid}/approve`, { token: token.carol })).body.code).toBe(
      'PROPOSAL_DECIDED',
    )
    expect((await call('GET', `/admin/actions?subject=${id}`, { token: token.otto })).body.items).toHaveLength(1)
  })

  it('a failure of the setup (no client for the chain) leaves the proposal open; approved again once there is one, it executes', async () => {
    const s = await sender(3)
    const { id, withdrawalId } = await held(s.account.address, s.nonce, [randomHash()], 'arbitrum')
    await s.wallet.sendTransaction({ to: address(), value: 1n, nonce: s.nonce, chain: null })
    await mine()
    const { id: pid, last } = await proposeAndApprove(`/admin/held/${id}/fail`, { reason })
    expect([last.status, last.body.code]).toEqual([409, 'CHAIN_NOT_CONFIGURED'])
    // not refused: the world did not refuse it, the desk could not read the chain; bob's approval is not kept
    const open = await call('GET', `/admin/proposals/${pid}`, { token: token.otto })
    expect(open.body).toMatchObject({ status: 'open', outcome: null })
    expect(open.body.approvals.map((a: { approver: string }) => a.approver)).toEqual(['alice'])
    expect(await state(id, withdrawalId)).toEqual({ outbound: 'held', gasUsed: null, withdrawalHeld: true })
    clients.set('arbitrum' as ChainName, client)
    try {
      const again = await call('POST', `/admin/proposals/${pid}/approve`, { token: token.bob })
      expect(again.body).toMatchObject({ executed: true, proposal: { status: 'executed' } })
      expect(await state(id, withdrawalId)).toEqual({ outbound: 'failed', gasUsed: null, withdrawalHeld: false })
    } finally {
      clients.delete('arbitrum' as ChainName)
    }
  })

  it('a version the chain shows mined cannot be failed; marked sent on its receipt, it settles with the gas it paid', async () => {
    const s = await sender(2)
    // our own version, mined (the provider that caused the hold did not show its receipt)
    const mined = await s.wallet.sendTransaction({
      to: address(),
      value: 1n,
      nonce: s.nonce,
      gas: 21_000n,
      chain: null,
    })
    const { id, withdrawalId } = await held(s.account.address, s.nonce, [randomHash(), mined])
    await mine()
    const failed = await proposeAndApprove(`/admin/held/${id}/fail`, { reason })
    expect([failed.last.status, failed.last.body.code]).toEqual([409, 'OUTBOUND_MINED'])
    expect(await state(id, withdrawalId)).toMatchObject({ outbound: 'held', withdrawalHeld: true })
    // a hash that is no version of it: refused when approved
    const wrong = await proposeAndApprove(`/admin/held/${id}/mark-sent`, { reason, txHash: randomHash() })
    expect(wrong.last.body.code).toBe('OUTBOUND_RECEIPT_NOT_FINAL')
    const sent = await proposeAndApprove(`/admin/held/${id}/mark-sent`, { reason, txHash: mined })
    expect(sent.last.body).toMatchObject({ executed: true })
    expect(await state(id, withdrawalId)).toEqual({ outbound: 'confirmed', gasUsed: '21000', withdrawalHeld: false })
    const [action] = (await call('GET', `/admin/actions?subject=${id}`, { token: token.otto })).body.items
    expect(action).toMatchObject({ action: 'outbound_marked_sent', details: { minedHash: mined, status: 'success' } })
  })

  it('four eyes in the database too: the proposer approving is refused, even by a raw insert as the application', async () => {
    const { id } = await held(address(), 0, [randomHash()])
    const proposed = await call('POST', `/admin/held/${id}/fail`, { token: token.alice, body: { reason } })
    const pid = proposed.body.proposal.id
    const own = await call('POST', `/admin/proposals/${pid}/approve`, { token: token.alice })
    expect([own.status, own.body.code]).toEqual([403, 'FOUR_EYES'])
    const sql = ctx.database.sql
    await expect(
      sql`insert into operator_approvals (proposal_id, approver) values (${pid}, 'alice')`,
    ).rejects.toMatchObject({
      code: 'WL007',
    })
    await expect(
      sql`insert into operator_approvals (proposal_id, approver) values (${pid}, 'otto')`,
    ).rejects.toMatchObject({
      code: 'WL011',
    })
    await expect(
      sql`insert into operator_proposal_outcomes (proposal_id, outcome, decided_by) values (${pid}, 'executed', 'bob')`,
    ).rejects.toMatchObject({ code: 'WL010' })
  })

  it('an expired proposal is not approved', async () => {
    const { id } = await held(address(), 0, [randomHash()])
    const owner = postgres(ctx.ownerUrl, { max: 1, onnotice: () => {} })
    let pid: string
    try {
      const [row] = await owner<{ id: string }[]>`
        insert into operator_proposals (action, subject, reason, proposed_by, approvals_required, created_at, expires_at)
        values ('outbound_fail', ${id}, 'old', 'otto', 2, now() - interval '2 days', now() - interval '1 day')
        returning id::text`
      pid = row?.id as string
    } finally {
      await owner.end()
    }
    const r = await call('POST', `/admin/proposals/${pid}/approve`, { token: token.alice })
    expect([r.status, r.body.code]).toEqual([409, 'PROPOSAL_EXPIRED'])
    expect((await call('GET', `/admin/proposals/${pid}`, { token: token.alice })).body.status).toBe('expired')
    expect(
      (await call('GET', '/admin/proposals', { token: token.alice })).body.items.map((p: { id: string }) => p.id),
    ).not.toContain(pid)
  })

  it('a recheck repeated after a crash that left the withdrawal held completes its release', async () => {
    const { id, withdrawalId } = await held(address(), 0, [randomHash()])
    const sql = ctx.database.sql
    // what the four separate commits of before could leave: the row and the record, not the release
    await sql`update outbound_txs set state = 'broadcast', hold_reason = null where id = ${id}`
    await sql`insert into operator_actions (action, subject, actor, reason) values ('outbound_rechecked', ${id}, 'otto', ${reason})`
    const again = await call('POST', `/admin/held/${id}/recheck`, { token: token.otto, body: { reason } })
    expect(again.body).toMatchObject({ id, verdict: 'recheck', state: 'broadcast', alreadyDone: true })
    expect(await state(id, withdrawalId)).toEqual({ outbound: 'broadcast', gasUsed: null, withdrawalHeld: false })
    // one decision on record, not two
    expect((await call('GET', `/admin/actions?subject=${id}`, { token: token.otto })).body.items).toHaveLength(1)
    const fresh = await held(address(), 0, [randomHash()])
    const once = await call('POST', `/admin/held/${fresh.id}/recheck`, { token: token.otto, body: { reason } })
    expect(once.body).toMatchObject({ verdict: 'recheck', alreadyDone: false })
    expect(await state(fresh.id, fresh.withdrawalId)).toEqual({
      outbound: 'broadcast',
      gasUsed: null,
      withdrawalHeld: false,
    })
  })
})
