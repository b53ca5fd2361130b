/**
 * Fault suite, part 1: a worker SIGKILLed at seeded-random moments of deposit scans, sweeps,
 * withdrawals, fundings and swaps, and restarted, until a final clean pass finishes the work. Then
 * every fact is checked against the real chain (anvil), the Derive simulator and the journal
 * (fixtures/invariants.ts): each on-chain transfer happened once, each event exists once, balances
 * reconcile. `FAULT_SEED=<n>` replays a run's plan (its kill points, amounts and orders).
 *
 * Withdrawals are driven by their row jobs, as the API drives them (docs/architecture.md "Accepted
 * work: one job per 202"): each is added twice once its row is committed, a real BullMQ worker in
 * the killed process runs the real `withdrawal.send` processor, and the job a life was running
 * when it died is taken back by the next life's stall check; some jobs are added again after they
 * ended, one of them after its removal (it runs again and must find its row sent). Every job is
 * then checked by its id: one job per withdrawal (the second add was a no-op), each ended, each that
 * ran on its row's first send found the row there, and only the jobs that ended without sending
 * (stalled once too often, left to the tick) left their rows to the final life's tick.
 */
import { randomUUID } from 'node:crypto'
import { freeBalance } from '@wh/ledger'
import { executeSwap } from '@wh/swap'
import type { ProxyRule } from '@wh/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHAOS_KINDS, type ChaosKind, type ChaosPlan, fromSpec, type SwapSpec } from './fixtures/chaos-protocol'
import { type ChaosRunner, chaosRunner } from './fixtures/chaos-runner'
import { SWAP_CHAIN } from './fixtures/child-world'
import { diagnoseUnswept } from './fixtures/diagnose'
import {
  type Baseline,
  checkInvariants,
  type Expected,
  type ExpectedSwap,
  snapshotBaseline,
} from './fixtures/invariants'
import { type JobEnd, type RowJobs, rowJobsOf } from './fixtures/row-jobs'
import { faultSeed, seededRng } from './fixtures/seed'
import { ETH_DEPOSIT, type FaultWorld, freshAddress, startFaultWorld, USDC, type WorldUser } from './fixtures/world'

type Currency = ExpectedSwap['sell']

/** What the flaky provider does while the worker is being killed (the hostile RPC proxy's rules). */
const PROVIDER_FAULTS: ProxyRule[] = [
  { method: '*', every: 23, action: { httpError: { status: 503 } } },
  { method: 'eth_getTransactionReceipt', every: 3, action: { nullRecent: { blocks: 2 } } },
  {
    method: 'eth_sendRawTransaction',
    every: 7,
    action: { rpcError: { code: -32000, message: 'proxy: try again later' } },
  },
  { method: 'eth_getTransactionCount', every: 5, action: { delayMs: 40 } },
]

const ROUNDS = 4
/** lives per round killed after a random delay instead of at a checkpoint */
const TIMED_KILLS_PER_ROUND = 2
const USERS = 6
/** the highest checkpoint a kill aims at, per kind: what the work `workFor` adds reaches (a USDC sweep: gas signed, broadcast, sweep signed, broadcast) */
const MAX_KILL_AT: Record<ChaosKind, number> = { scan: 1, sweep: 4, withdrawal: 3, funding: 3, swap: 4 }

describe('fault: a worker SIGKILLed during scans, sweeps, withdrawals, fundings and swaps', () => {
  const seed = faultSeed()
  const rng = seededRng(seed)
  let world: FaultWorld
  let baseline: Baseline
  let users: WorldUser[]
  let runner: ChaosRunner
  // deposits are world.deposits: every one the test made on chain
  const expected: { -readonly [K in Exclude<keyof Expected, 'deposits'>]: Expected[K][number][] } = {
    withdrawals: [],
    fundings: [],
    swaps: [],
  }
  const swapSpecs: SwapSpec[] = []
  let jobs: RowJobs
  /** jobs added again after they ended, with when they had finished: they must not run again */
  const addedAgain = new Map<string, number | undefined>()
  /** jobs removed after they sent their withdrawal and added again: they run again and must send nothing */
  const rerun = new Set<string>()
  const landed: Record<ChaosKind, number> = { scan: 0, sweep: 0, withdrawal: 0, funding: 0, swap: 0 }

  beforeAll(async () => {
    console.info(`[fault] chaos seed ${seed} (FAULT_SEED=${seed} replays this plan)`)
    world = await startFaultWorld({ rpcProxy: true })
    users = await world.addUsers(USERS, rng)
    // the hot wallet starts with some USDC, so a withdrawal never waits for a sweep to land
    await world.mintUsdc(world.w.deps.hotWallet('ethereum').address, USDC(5_000))
    // each user's first deposit, recorded before the chaos: the reserves below need a free balance
    for (const u of users) await world.deposit(u, 'USDC', USDC(rng.int(800, 1_200)))
    await world.scan()
    baseline = await snapshotBaseline(world)
    runner = await chaosRunner(world)
    jobs = rowJobsOf(world.params, world.w.config.cacheUrl, 'withdrawals')
    // the swap wallet's approvals of the pool, before the chaos, so every life swaps on the same
    // allowance (a crash after an approval's broadcast has its own test: swap-approval.test.ts)
    for (const spec of [swapSpec(users[0] as WorldUser, true), swapSpec(users[1] as WorldUser, false)]) {
      const r = await executeSwap(world.w.swapDeps(), fromSpec(spec))
      if (r.outcome !== 'executed') throw new Error(`warm-up swap: ${r.outcome}`)
    }
  }, 120_000)
  afterAll(async () => {
    await runner?.close()
    await jobs?.close()
    await world?.close()
  })

  /** One life of the worker (fixtures/chaos-runner.ts); counts the kills that landed per kind. */
  async function life(
    order: ChaosKind[],
    kill: ChaosPlan['kill'],
    killAfterMs?: number,
    final = false,
  ): Promise<'killed' | 'done'> {
    const r = await runner.life({ order, kill, swaps: swapSpecs, maxPasses: 12, ...(final && { final }) }, killAfterMs)
    if (r.ended === 'killed') {
      // a timed kill landed in the kind whose checkpoint the life passed last ('CP sweep 2 …')
      const at = kill?.kind ?? r.lines.findLast((l) => l.startsWith('CP '))?.split(' ')[1]
      if (at !== undefined && (CHAOS_KINDS as readonly string[]).includes(at)) landed[at as ChaosKind]++
    }
    return r.ended
  }

  async function addDeposit(): Promise<void> {
    await world.deposit(rng.pick(users), 'USDC', USDC(rng.int(20, 200)))
  }
  async function addWithdrawal(): Promise<void> {
    const user = rng.pick(users)
    const amount = USDC(rng.int(10, 60))
    if ((await freeBalance(world.w.sql, user.id, 'USDC')) < amount) return
    const destination = freshAddress(rng)
    const id = await world.requestWithdrawal(user, amount, destination)
    expected.withdrawals.push({ id, userId: user.id, amount, destination })
    // after the commit, as the API adds it; the second add (a replayed request) must add nothing
    await jobs.addTwice('withdrawal.send', id, user.id)
  }

  /**
   * Two ended jobs added again (kept by id: nothing may run), and one that sent its withdrawal
   * removed and added again (a job past its keep window): it runs again and must find its row sent.
   */
  async function addEndedJobsAgain(): Promise<void> {
    const ended: Array<[string, JobEnd, string]> = []
    for (const w of expected.withdrawals) {
      if (addedAgain.has(w.id) || rerun.has(w.id)) continue
      const end = await jobs.end('withdrawal.send', w.id)
      if (end.state === 'completed' || end.state === 'failed') ended.push([w.id, end, w.userId])
    }
    const [removed, ...kept] = rng.shuffle(ended)
    for (const [id, end, userId] of kept.slice(0, 2)) {
      await jobs.addAgain('withdrawal.send', id, userId)
      addedAgain.set(id, end.finishedOn)
    }
    if (removed?.[1].outcome === 'sent') {
      await (await jobs.queue.getJob(removed[1].id))?.remove()
      await jobs.addAgain('withdrawal.send', removed[0], removed[2])
      rerun.add(removed[0])
    }
  }
  async function addFunding(): Promise<void> {
    const user = rng.pick(users)
    const amount = USDC(rng.int(20, 150))
    if ((await freeBalance(world.w.sql, user.id, 'USDC')) < amount) return
    const transferId = await world.reserveFunding(user, rng.pick(['ETH', 'BTC'] as const), amount)
    expected.fundings.push({ transferId, userId: user.id, amount })
  }
  function addSwaps(): void {
    for (let i = 0; i < 2; i++) swapSpec(rng.pick(users), i % 2 === 0)
  }

  /** The round's work, which every life's pass runs through (the timed kills land in it). */
  async function addWork(round: number): Promise<void> {
    for (let i = 0; i < 2; i++) await addDeposit()
    if (round === 1) await world.deposit(rng.pick(users), 'ETH', ETH_DEPOSIT)
    for (let i = 0; i < 2; i++) await addWithdrawal()
    for (let i = 0; i < 2; i++) await addFunding()
    addSwaps()
  }

  /**
   * Fresh work of the kind a targeted life aims at, enough to reach its highest checkpoint
   * (MAX_KILL_AT): every life's pass runs every kind, so the lives before it in the round may have
   * finished the round's work of that kind, and a kill aimed at it would then find nothing to stop.
   * A scan's deposit sits in the very blocks the killed scan reads: the restart must record it once.
   */
  async function workFor(kind: ChaosKind): Promise<void> {
    if (kind === 'scan' || kind === 'sweep') await addDeposit()
    else if (kind === 'withdrawal') for (let i = 0; i < 2; i++) await addWithdrawal()
    else if (kind === 'funding') for (let i = 0; i < 2; i++) await addFunding()
    else addSwaps()
  }

  /** A life killed at a checkpoint of `kind`; if the kill finds nothing to stop (the work ended before its checkpoint), once more at the first one. */
  async function targetedLife(kind: ChaosKind, order: ChaosKind[]): Promise<void> {
    for (const at of [rng.int(1, MAX_KILL_AT[kind]), 1]) {
      await workFor(kind)
      if ((await life(order, { kind, at })) === 'killed') return
    }
  }

  /** A swap to run under chaos; alternate directions keep the pool's price near the index (the sanity guard). */
  function swapSpec(user: WorldUser, sellUsdc: boolean): SwapSpec {
    const amountIn = sellUsdc ? USDC(rng.int(1_000, 5_000)) : 10n ** 18n + rng.bigint(0n, 10n ** 18n)
    const spec: SwapSpec = {
      swapId: randomUUID(),
      userId: user.id,
      subaccountId: 'conversions',
      chain: SWAP_CHAIN,
      sell: sellUsdc ? 'USDC' : 'ETH',
      buy: sellUsdc ? 'ETH' : 'USDC',
      amountIn: amountIn.toString(),
      indexPrice: sellUsdc ? { num: '1', den: '3000' } : '3000',
    }
    swapSpecs.push(spec)
    expected.swaps.push({
      swapId: spec.swapId,
      userId: user.id,
      sell: spec.sell as Currency,
      buy: spec.buy as Currency,
      amountIn,
    })
    return spec
  }

  it('after kills at random points through a flaky RPC provider and a clean pass, every transfer happened once, every event once, balances reconcile', async () => {
    const started = performance.now()
    // the provider misbehaves all along (docs/hostile-world.md): intermittent 503s, receipts of
    // recent transactions not served yet, broadcasts refused now and then, slow nonce reads
    await world.proxy?.script(PROVIDER_FAULTS)
    for (let round = 1; round <= ROUNDS; round++) {
      await addWork(round)
      for (const kind of rng.shuffle(CHAOS_KINDS)) {
        // the scan first (it turns this round's deposits into work), then the kind under fire
        const rest = rng.shuffle(CHAOS_KINDS.filter((k) => k !== kind && k !== 'scan'))
        const order: ChaosKind[] = kind === 'scan' ? ['scan', ...rest] : ['scan', kind, ...rest]
        await targetedLife(kind, order)
      }
      // and wherever the worker happens to be (a life's work takes a few hundred milliseconds)
      for (let i = 0; i < TIMED_KILLS_PER_ROUND; i++) {
        await addDeposit()
        await life(rng.shuffle(CHAOS_KINDS), null, rng.int(20, 600))
      }
      await addEndedJobsAgain()
    }
    // the provider recovers and the rows it pushed back have waited out their backoff
    await world.proxy?.reset()
    for (const table of ['withdrawals', 'deposits', 'subaccount_transfers'])
      await world.w.sql.unsafe(`update ${table} set next_attempt_at = now() where next_attempt_at > now()`)
    // ...and so have the jobs coming back after them
    await jobs.promoteDelayed()
    const last = await life([...CHAOS_KINDS], null, undefined, true).catch(async (err: unknown) => {
      console.info(`[fault] chaos seed ${seed}: work left after the clean pass:\n${await diagnoseUnswept(world)}`)
      throw err
    })
    expect(last, 'the final clean pass finishes the work').toBe('done')
    console.info(
      `[fault] chaos seed ${seed}: kills per kind ${JSON.stringify(landed)}; ${runner.kills.length} kills in ${Math.round((performance.now() - started) / 1000)} s: ${runner.kills.join('; ')}`,
    )
    // the harness itself: several kills landed on each kind (else this test proves little). Each
    // round's targeted life brings its own work and retries at the first checkpoint when it finds
    // none left to stop, so a kind only misses a round when its work failed before any checkpoint
    // (six seeds measured: 4 to 8 landed per kind)
    for (const kind of CHAOS_KINDS)
      expect(landed[kind], `kills that landed in ${kind}`).toBeGreaterThanOrEqual(ROUNDS - 1)
    await checkWithdrawalJobs()
    expect(await checkInvariants(world, { ...expected, deposits: world.deposits }, baseline)).toEqual([])
  }, 300_000)

  /** What became of each withdrawal's job, by its id (the money itself is checkInvariants'). */
  async function checkWithdrawalJobs(): Promise<void> {
    const ids = expected.withdrawals.map((w) => w.id).sort()
    const all = await jobs.all()
    expect(all.map((j) => j.id).sort(), 'one job per withdrawal: every second add was a no-op').toEqual(ids)
    const ends = await Promise.all(ids.map((id) => jobs.end('withdrawal.send', id)))
    expect(
      ends.filter((e) => e.state !== 'completed' && e.state !== 'failed'),
      'every job ended',
    ).toEqual([])
    // a job's run finds its row requested and sends it, unless an earlier run may have sent it (a
    // run cut off by a kill, whose job the stall check took back) or it was added again after it sent
    const ranAgain = (e: JobEnd) => e.stalledCounter > 0 || rerun.has(e.id)
    const fine = (e: JobEnd) =>
      e.state === 'failed'
        ? /stalled/.test(e.failedReason ?? '') // killed more often than the stall check allows: the tick's
        : e.outcome === 'sent' ||
          e.outcome === 'left_to_tick' ||
          (ranAgain(e) && ['absent', 'skipped'].includes(e.outcome ?? ''))
    expect(ends.filter((e) => !fine(e))).toEqual([])
    expect(
      ends.filter((e) => rerun.has(e.id)).map((e) => e.outcome),
      'a job removed and added again after it sent',
    ).toEqual([...rerun].map(() => 'absent'))
    for (const [id, finishedOn] of addedAgain)
      expect(
        (await jobs.end('withdrawal.send', id)).finishedOn,
        `${id}: added again after it ended, it ran again`,
      ).toBe(finishedOn)
    const recovered = ends.filter((e) => e.stalledCounter > 0)
    // the reruns had sent theirs before they were removed
    const byJob = ends.filter((e) => e.outcome === 'sent').length + rerun.size
    console.info(
      `[fault] chaos seed ${seed}: ${ends.length} withdrawal jobs: ${byJob} sent their withdrawal, ${recovered.length} taken back from a killed life (${recovered.filter((e) => e.outcome === 'sent').length} of them then sent it), ${ends.filter((e) => e.state === 'failed').length} failed by the stall check, ${rerun.size} rerun after removal, ${addedAgain.size} added again after they ended`,
    )
    // a kill that landed in a withdrawal (at least one per round, checked above) parked its job mid-send:
    // taken back by a later life (the final one at the latest, which is never killed), it resumed the
    // very transaction its outbox row holds and sent it. How many rows their jobs sent, and how many
    // they left to the final tick, depends on where the kills land and on the machine's load: not asserted
    expect(
      recovered.filter((e) => e.outcome === 'sent').length,
      'jobs taken back from a killed life that then sent their withdrawal',
    ).toBeGreaterThanOrEqual(1)
  }
})
