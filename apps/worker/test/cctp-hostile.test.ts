/**
 * The L2 route when Circle's side is down, slow, never signs, the source chain reorganises after a burn, or the fee
 * jumps (docs/chains.md "The L2 route": "When it goes wrong"). In each case the service waits, backs off, alerts
 * (once), keeps the money counted in flight by solvency, and never mints or journals twice.
 */
import { randomUUID } from 'node:crypto'
import { L2_CHAIN_NAMES } from '@wh/config'
import { runSolvency, solvencyDeps } from '@wh/solvency'
import {
  advanceCctpTransfer,
  type CctpRow,
  type CctpRunResult,
  L1,
  openTransfer,
  routeLockKey,
  runCctpSweep,
  transferById,
} from '@wh/treasury'
import type { Job } from 'bullmq'
import { createTestClient, http } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { solvencyTick } from '../src/jobs/solvency/ticks'
import { type CctpStack, startCctpStack, USDC } from './fixtures/cctp-stack'

const CHAIN = 'base'
const silent = { info() {}, warn() {} } as never
const CONFIRMATIONS = 2

describe('the L2 route against a hostile or slow world', () => {
  let s: CctpStack

  beforeAll(async () => {
    // base trusts a burn 2 blocks deep, so a reorg can take one back before it counts
    s = await startCctpStack({ confirmations: { [CHAIN]: CONFIRMATIONS } })
  }, 180_000)
  afterAll(async () => {
    await s?.close()
  })
  beforeEach(() => {
    s.attester.set({ status: 'up', slowMs: 0, fastFeeBps: 1.3, standardFeeBps: 0 })
  })

  const sql = () => s.ctx.database.sql
  const sweep = (o: { timeoutMs?: number } = {}) =>
    runCctpSweep(s.cctpDeps(o.timeoutMs !== undefined ? { attestationTimeoutMs: o.timeoutMs } : {}), CHAIN)
  const bridgedCount = async () =>
    Number((await sql()<{ n: number }[]>`select count(*)::int as n from ledger_events where type = 'bridged'`)[0]?.n)
  const mints = async (id: string) =>
    (await sql()`select 1 from outbound_txs where purpose = 'cctp_mint' and ref_id = ${id}`).length
  const alertsLike = (re: RegExp) => s.alerts.filter((a) => re.test(a.text)).length
  const anvil = () => createTestClient({ mode: 'anvil', transport: http(s.chains[CHAIN].rpcUrl) })
  /** the burn's blocks on top: it counts once CONFIRMATIONS deep */
  const deepen = () => anvil().mine({ blocks: CONFIRMATIONS })
  async function drive(rounds = 6): Promise<CctpRunResult> {
    let r = await sweep()
    for (let i = 0; i < rounds && r.state === 'pending'; i++) {
      await deepen()
      s.clock.advance(10 * 60_000) // past any backoff
      r = await sweep()
    }
    return r
  }
  /** a new sweep until its burn counts (the attester holds, so it stops there) */
  async function burned(): Promise<void> {
    s.attester.set({ status: 'hold' })
    await sweep()
    await deepen()
    await sweep()
  }

  it('attester down: the transfer waits attesting, backs off, is late once, then completes once when it is back', async () => {
    await s.mint(CHAIN, s.hot(CHAIN), USDC(40))
    s.attester.set({ status: 'down' })
    // the fee read fails too: nothing is burned while the service cannot be asked
    expect(await sweep()).toMatchObject({ state: 'waiting', reason: expect.stringMatching(/fees not readable/) })
    expect(await openTransfer(sql(), CHAIN, L1)).toBeUndefined()
    // the fees read, then the service goes down after the burn
    s.attester.set({ status: 'up' })
    await burned()
    expect((await openTransfer(sql(), CHAIN, L1))?.state).toBe('attesting')
    s.attester.set({ status: 'down' })
    s.clock.advance(6_000)
    expect(await sweep()).toMatchObject({ state: 'pending', reason: 'attestation unavailable: HTTP 503' })
    const row = await openTransfer(sql(), CHAIN, L1)
    expect(row).toMatchObject({ state: 'attesting', last_error: 'HTTP 503' })
    // backoff: asked again before its time, it does not ask
    const attempts = row?.attempts ?? 0
    expect(await sweep()).toMatchObject({ reason: expect.stringMatching(/^next attestation read at/) })
    expect((await openTransfer(sql(), CHAIN, L1))?.attempts).toBe(attempts)
    // past CCTP's documented time (fast: a few minutes), ops are told once
    s.clock.advance(10 * 60_000)
    await sweep()
    s.clock.advance(10 * 60_000)
    await sweep()
    expect(alertsLike(/past its documented time/)).toBe(1)
    s.attester.set({ status: 'up' })
    const before = await bridgedCount()
    expect(await drive()).toMatchObject({ state: 'done', id: row?.id })
    expect(await mints(row?.id as string)).toBe(1)
    expect(await bridgedCount()).toBe(before + 1)
  })

  it('attester slow: a read past the timeout is unavailable and backed off; the transfer completes once it answers', async () => {
    await s.mint(CHAIN, s.hot(CHAIN), USDC(30))
    await burned()
    const row = await openTransfer(sql(), CHAIN, L1)
    s.attester.set({ status: 'up', slowMs: 1_000 })
    s.clock.advance(10 * 60_000)
    expect(await sweep({ timeoutMs: 200 })).toMatchObject({
      state: 'pending',
      reason: expect.stringMatching(/no answer/),
    })
    expect((await transferById(sql(), row?.id as string))?.last_error).toMatch(/no answer: TimeoutError/)
    s.attester.set({ slowMs: 0 })
    expect(await drive()).toMatchObject({ state: 'done', id: row?.id })
    expect(await mints(row?.id as string)).toBe(1)
  })

  it('a mint that never arrives: counted in flight by solvency by chain and transfer, alerted once, never minted', async () => {
    await s.mint(CHAIN, s.hot(CHAIN), USDC(25))
    const before = await bridgedCount()
    await burned()
    const row = await openTransfer(sql(), CHAIN, L1)
    const lateAlerts = () =>
      s.alerts.filter((a) => /past its documented time/.test(a.text) && a.fields?.transferId === row?.id)
    // the solvency tick tells ops even while the route's own tick is held (no sweep runs here)
    s.clock.advance(30 * 60_000)
    const tick = (await solvencyTick.process({} as Job, { log: silent, deps: s.deps, queues: new Map() })) as {
      runId: string
      lateCctp: string[]
    }
    expect(tick.lateCctp).toEqual([row?.id])
    expect(lateAlerts()).toHaveLength(1)
    for (let i = 0; i < 3; i++) {
      s.clock.advance(10 * 60_000)
      expect(await sweep()).toMatchObject({ state: 'pending', at: 'attesting' })
    }
    await solvencyTick.process({} as Job, { log: silent, deps: s.deps, queues: new Map() })
    expect(lateAlerts()).toHaveLength(1)
    expect(await mints(row?.id as string)).toBe(0)
    expect(await bridgedCount()).toBe(before)
    // solvency: the burned USDC is an asset on the road, on base, for this transfer
    const legs = (
      await sql()<{ legs: { kind: string; place: string; amount: string }[] }[]>`
      select legs from solvency_runs where id = ${tick.runId}`
    )[0]?.legs
    expect(legs?.filter((l) => l.kind === 'cctp_in_flight')).toEqual([
      expect.objectContaining({ place: `${CHAIN}:cctp:${row?.id}`, amount: USDC(25).toString() }),
    ])
    s.attester.set({ status: 'up' })
    expect(await drive()).toMatchObject({ state: 'done', id: row?.id })
    const after = await runSolvency(solvencyDeps(s.deps))
    const legsAfter = (
      await sql()<{ legs: { kind: string }[] }[]>`select legs from solvency_runs where id = ${after.runId}`
    )[0]?.legs
    expect(legsAfter?.filter((l) => l.kind === 'cctp_in_flight')).toEqual([])
  })

  it('the source chain reorganises after the burn, before it counts: the same burn is sent again, attested, minted once', async () => {
    await s.mint(CHAIN, s.hot(CHAIN), USDC(20))
    s.attester.set({ status: 'hold' })
    expect(await sweep()).toMatchObject({ state: 'pending', at: 'burning' })
    const row = await openTransfer(sql(), CHAIN, L1)
    const [burn] = await sql()<{ tx_hash: `0x${string}` }[]>`
      select tx_hash from outbound_txs where purpose = 'cctp_burn' and step = 1 and ref_id = ${row?.id as string}`
    const client = s.deps.clients.get(CHAIN)?.publicClient
    expect((await client?.getTransactionReceipt({ hash: burn?.tx_hash as `0x${string}` }))?.status).toBe('success')
    // the block holding the burn is replaced by an empty one: the burn is gone, the USDC back in the hot wallet
    await anvil().request({ method: 'anvil_reorg' as never, params: [1, []] as never })
    await expect(client?.getTransactionReceipt({ hash: burn?.tx_hash as `0x${string}` })).rejects.toThrow()
    expect(await s.usdcOf(CHAIN, s.hot(CHAIN))).toBe(USDC(20))
    // not counted in flight while it is off chain (its USDC is in the hot wallet again)
    const run = await runSolvency(solvencyDeps(s.deps))
    const legs = (
      await sql()<{ legs: { kind: string }[] }[]>`select legs from solvency_runs where id = ${run.runId}`
    )[0]?.legs
    expect(legs?.filter((l) => l.kind === 'cctp_in_flight')).toEqual([])
    s.attester.set({ status: 'up' })
    const r = await drive()
    // the very bytes came back: the same hash on chain, one burn row, one mint, one bridged
    expect(r).toMatchObject({ state: 'done', id: row?.id, burnTxHash: burn?.tx_hash })
    expect((await client?.getTransactionReceipt({ hash: burn?.tx_hash as `0x${string}` }))?.status).toBe('success')
    expect(await mints(row?.id as string)).toBe(1)
    expect(await s.usdcOf(CHAIN, s.hot(CHAIN))).toBe(0n)
  })

  it('a fee spike above the maximum: nothing is burned, ops are told once; a spike after the burn goes standard, fee 0', async () => {
    await s.mint(CHAIN, s.hot(CHAIN), USDC(1_000))
    // 1,000 USDC at 100 bps is 10 USDC, above base's 5 USDC maximum, fast and standard alike
    s.attester.set({ fastFeeBps: 100, standardFeeBps: 100 })
    const before = await bridgedCount()
    expect(await sweep()).toMatchObject({ state: 'waiting', reason: expect.stringMatching(/fees above the maximum/) })
    expect(await sweep()).toMatchObject({ state: 'waiting' })
    expect(await openTransfer(sql(), CHAIN, L1)).toBeUndefined()
    expect(await s.usdcOf(CHAIN, s.hot(CHAIN))).toBe(USDC(1_000))
    expect(alertsLike(/its fee is above the maximum/)).toBe(1)
    expect(await bridgedCount()).toBe(before)
    // fees back: burned fast under a 5 USDC maximum; the fast fee then jumps above it before Circle attests
    s.attester.set({ fastFeeBps: 1.3, standardFeeBps: 0 })
    await burned()
    const row = await openTransfer(sql(), CHAIN, L1)
    expect(row).toMatchObject({ min_finality: 1000, max_fee: USDC(5).toString() })
    s.attester.set({ status: 'up', fastFeeBps: 100 })
    const r = await drive()
    expect(r).toMatchObject({ state: 'done', fee: 0n })
    const done = await transferById(sql(), row?.id as string)
    expect(done?.fee_executed).toBe('0')
    expect(await s.usdcOf(L1, s.hot(L1))).toBeGreaterThanOrEqual(USDC(1_000))
    expect(await bridgedCount()).toBe(before + 1)
    for (const chain of L2_CHAIN_NAMES) expect(await openTransfer(sql(), chain, L1)).toBeUndefined()
  })

  it("a transfer moved by its id (a job per transfer): under its route's lock, once; nothing when done or unknown", async () => {
    await s.mint(CHAIN, s.hot(CHAIN), USDC(15))
    await burned()
    const row = (await openTransfer(sql(), CHAIN, L1)) as CctpRow
    expect(row.state).toBe('attesting')
    // a sweep's route runs under its L2's bridge lock, the key the bridge tick has always taken
    const key = routeLockKey(row)
    expect(key).toBe(`lock:bridge-${CHAIN}`)
    s.attester.set({ status: 'up' })
    s.clock.advance(10 * 60_000)
    // the tick holds the route: the job leaves the transfer alone (no attestation read)
    await s.deps.redis.set(key, 'the-bridge-tick', 'PX', 60_000)
    expect(await advanceCctpTransfer(s.cctpDeps(), row.id)).toEqual({ state: 'locked', id: row.id })
    expect(await transferById(sql(), row.id)).toMatchObject({ state: 'attesting', attempts: row.attempts })
    await s.deps.redis.del(key)
    let r = await advanceCctpTransfer(s.cctpDeps(), row.id)
    for (let i = 0; i < 6 && r?.state === 'pending'; i++) {
      await deepen()
      s.clock.advance(10 * 60_000)
      r = await advanceCctpTransfer(s.cctpDeps(), row.id)
    }
    expect(r).toMatchObject({ state: 'done', id: row.id })
    expect(await mints(row.id)).toBe(1)
    expect(await advanceCctpTransfer(s.cctpDeps(), row.id)).toBeUndefined()
    expect(await advanceCctpTransfer(s.cctpDeps(), randomUUID())).toBeUndefined()
  })
})
