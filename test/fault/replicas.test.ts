/**
 * Fault suite, part 3: two worker replicas (separate processes, every tick and row job processor
 * of the service, every queue, with per-queue concurrency from WORKER_CONCURRENCY) for ten
 * simulated minutes: each tick's period divided by SPEED, so the run takes about a minute.
 * Meanwhile deposits arrive on chain and users request withdrawals (some two at once) and fund
 * subaccounts, and one replica is restarted halfway (a rolling deploy: its schedulers are upserted
 * again while the other replica runs them). Each withdrawal's row job (`withdrawal.send`) is added
 * twice after its row is committed, as the API adds it, while the replicas run.
 *
 * Every run of a tick is recorded with its BullMQ job (`repeat:{tick}:{slot}`): no job runs twice,
 * no tick has two slots within one period, every tick keeps its rhythm, both replicas do work.
 * Every row job by its id: one job per row (the second add was a no-op), completed exactly once
 * (its comebacks aside), consumed by more than one replica, and a job that found its row already
 * sent ran after the send (never before its row was there). No replica ran more jobs of a queue
 * at once than its concurrency. Then the work is finished and checked as after the chaos
 * (fixtures/invariants.ts): no event doubled, every transfer once, balances reconcile.
 */
import { join } from 'node:path'
import { freeBalance } from '@wh/ledger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_CONCURRENCY } from '../../apps/worker/src/runtime'
import { bundled, discardBundles } from './fixtures/bundle'
import { type Child, spawnNode, until } from './fixtures/children'
import {
  type Baseline,
  checkInvariants,
  type ExpectedFunding,
  type ExpectedWithdrawal,
  snapshotBaseline,
} from './fixtures/invariants'
import type { ReplicaArgs } from './fixtures/replica-child'
import { type RowJobs, rowJobsOf } from './fixtures/row-jobs'
import { faultSeed, seededRng } from './fixtures/seed'
import { type FaultWorld, freshAddress, startFaultWorld, USDC, type WorldUser } from './fixtures/world'

/** simulated time per real time */
const SPEED = 10
/** ten simulated minutes */
const RUN_MS = (10 * 60 * 1000) / SPEED
/** a tick may start this much later than its slot (a busy machine) */
const RHYTHM_SLACK_MS = 5_000
/** after the run: the replicas finish the work left within this */
const DRAIN_MS = 45_000
/**
 * The replicas' WORKER_CONCURRENCY: withdrawals one at a time (the row jobs and the send tick
 * share it), deposits two; the other queues take the runtime's default
 */
const CONCURRENCY = { withdrawals: 1, deposits: 2 } as const

interface TickRun {
  tick: string
  queue: string
  job: string
  replica: string
  startMs: number
  endMs: number
  ok: boolean
  /** a row job's answer */
  outcome?: string
  /** the name of what it threw (DelayedError: coming back later) */
  error?: string
}

describe('fault: two worker replicas for ten minutes of accelerated ticks', () => {
  const seed = faultSeed()
  const rng = seededRng(seed)
  let world: FaultWorld
  let baseline: Baseline
  let users: WorldUser[]
  let script: string
  const replicas: Child[] = []
  let jobs: RowJobs
  // deposits are world.deposits; no swaps (the conversion tick has no venue here)
  const expected: { withdrawals: ExpectedWithdrawal[]; fundings: ExpectedFunding[]; swaps: [] } = {
    withdrawals: [],
    fundings: [],
    swaps: [],
  }

  beforeAll(async () => {
    console.info(`[fault] replicas seed ${seed} (FAULT_SEED=${seed} replays this plan)`)
    ;[world, script] = await Promise.all([
      startFaultWorld(),
      bundled(join(import.meta.dirname, 'fixtures/replica-child.ts')),
    ])
    users = await world.addUsers(5, rng)
    baseline = await snapshotBaseline(world)
    jobs = rowJobsOf(world.params, world.w.config.cacheUrl, 'withdrawals')
  }, 120_000)
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')))
    discardBundles()
    await jobs?.close()
    await world?.close()
  })

  function startReplica(name: string): Child {
    const workerConcurrency = Object.entries(CONCURRENCY)
      .map(([q, n]) => `${q}=${n}`)
      .join(',')
    const args: ReplicaArgs = {
      ...world.params,
      env: { ...world.params.env, WORKER_CONCURRENCY: workerConcurrency },
      replica: name,
      speed: SPEED,
      bullPrefix: world.params.redisPrefix.replace(/:$/, ''),
    }
    const child = spawnNode(script, args)
    replicas.push(child)
    return child
  }

  /** Some work for the replicas, small enough that the hot wallet stays under BRIDGE_RETAIN_USDC. */
  async function addWork(): Promise<void> {
    await world.deposit(rng.pick(users), 'USDC', USDC(rng.int(10, 40)))
    const user = rng.pick(users)
    const free = await freeBalance(world.w.sql, user.id, 'USDC')
    if (rng.next() < 0.5) {
      // one or two at once (two row jobs waiting together put the queue's concurrency to the test)
      for (let i = rng.int(1, 2); i > 0; i--) {
        const amount = USDC(rng.int(2, 10))
        if ((await freeBalance(world.w.sql, user.id, 'USDC')) < amount) return
        const destination = freshAddress(rng)
        const id = await world.requestWithdrawal(user, amount, destination)
        expected.withdrawals.push({ id, userId: user.id, amount, destination })
        // after the commit, as the API adds it; the second add (a replayed request) must add nothing
        await jobs.addTwice('withdrawal.send', id, user.id)
      }
    } else {
      const amount = USDC(rng.int(5, 15))
      if (free < amount) return
      const transferId = await world.reserveFunding(user, rng.pick(['ETH', 'BTC'] as const), amount)
      expected.fundings.push({ transferId, userId: user.id, amount })
    }
  }

  const open = async () => {
    const [r] = await world.w.sql<{ n: number }[]>`
      select (select count(*)::int from deposits where state <> 'swept')
        + (select count(*)::int from withdrawals where state = 'requested')
        + (select count(*)::int from subaccount_transfers where state in ('reserved', 'submitted', 'accepted')) as n`
    return r?.n ?? -1
  }

  it('no tick runs twice in a period, no event is doubled, and the work is done once', async () => {
    const a = startReplica('A')
    const b = startReplica('B')
    const periods = JSON.parse((await a.waitForLine(/^READY (.*)$/, 60_000))[1] as string) as Record<
      string,
      number | null
    >
    await b.waitForLine(/^READY/, 60_000)
    const startedMs = Date.now()

    let restarted: Child | undefined
    while (Date.now() - startedMs < RUN_MS) {
      await addWork()
      if (!restarted && Date.now() - startedMs > RUN_MS / 2) {
        // a rolling deploy of replica B: it finishes its jobs, a new B upserts the schedulers again
        await b.stop('SIGTERM', 20_000)
        expect(b.lines).toContain('CLOSED')
        restarted = startReplica('B2')
        await restarted.waitForLine(/^READY/, 60_000)
      }
      await new Promise((r) => setTimeout(r, rng.int(1_000, 3_000)))
    }
    const runEndMs = Date.now()
    await until('the replicas finish the work', async () => ((await open()) === 0 ? true : undefined), DRAIN_MS, 500)
    await Promise.all(replicas.map((r) => r.stop('SIGTERM', 20_000)))

    const runs: TickRun[] = replicas.flatMap((r) =>
      r.lines.filter((l) => l.startsWith('RUN ')).map((l) => JSON.parse(l.slice(4)) as TickRun),
    )
    const said = replicas.flatMap((r) => r.lines.filter((l) => /^(ERR|ALERT)/.test(l)))
    if (said.length > 0) console.info(`[fault] the replicas said: ${[...new Set(said)].join(' | ')}`)

    // ---- the schedule: each job once, one slot per period, the rhythm kept ------------------
    const byJob = new Map<string, TickRun[]>()
    for (const r of runs) byJob.set(r.job, [...(byJob.get(r.job) ?? []), r])
    const scheduled = (r: TickRun) => periods[r.tick] !== null && periods[r.tick] !== undefined
    // a scheduled job (one slot of one tick) runs once; a fan-out job (one deposit's sweep, its id
    // reused while the sweep is pending) runs again in later periods, but never twice at once
    const twice = [...byJob.values()].filter((rs) =>
      rs.some(scheduled)
        ? rs.length > 1
        : rs.some((x, i) => rs.some((y, j) => i !== j && x.startMs < y.endMs && y.startMs < x.endMs)),
    )
    expect(twice.map((rs) => rs.map((r) => `${r.job}@${r.replica}`).join(' + '))).toEqual([])

    const summary: string[] = []
    for (const [tick, every] of Object.entries(periods)) {
      if (every === null) continue // a fan-out target (deposit-sweep): one job per deposit, not per period
      const own = runs.filter((r) => r.tick === tick)
      const slots = own
        .map((r) => {
          const m = /^repeat:(.+):(\d+)$/.exec(r.job)
          expect(m?.[1], `${r.job} is a job of the scheduler ${tick}`).toBe(tick)
          return Number(m?.[2])
        })
        .sort((x, y) => x - y)
      // one slot per period at most: two slots of a tick are a period apart or more
      for (let i = 1; i < slots.length; i++) {
        const gap = (slots[i] as number) - (slots[i - 1] as number)
        expect(gap, `${tick}: two slots ${gap} ms apart, its period is ${every} ms`).toBeGreaterThanOrEqual(every)
        // and the rhythm kept, across B's restart too (a slot skipped now and then under load)
        if (every <= RUN_MS / 4)
          expect(gap, `${tick}: a pause of ${gap} ms`).toBeLessThanOrEqual(2 * every + RHYTHM_SLACK_MS)
      }
      if (every <= RUN_MS / 4) {
        expect(slots[0], `${tick}: its first slot`).toBeLessThanOrEqual(startedMs + every + RHYTHM_SLACK_MS)
        expect(slots.at(-1), `${tick}: its last slot`).toBeGreaterThanOrEqual(runEndMs - every - RHYTHM_SLACK_MS)
      }
      summary.push(`${tick} ${own.length}×${every}ms`)
    }
    const perReplica = ['A', 'B', 'B2'].map((name) => runs.filter((r) => r.replica === name).length)
    console.info(
      `[fault] replicas seed ${seed}: ${runs.length} tick runs (A, B, B2: ${perReplica.join(', ')}); ${summary.join(', ')}`,
    )
    expect(
      perReplica.every((n) => n > 0),
      'every replica took a share of the ticks',
    ).toBe(true)

    await checkRowJobs(runs)
    checkConcurrency(runs)

    // ---- the work: done once -----------------------------------------------------------------
    expect(world.deposits.length).toBeGreaterThan(10)
    expect(expected.withdrawals.length + expected.fundings.length).toBeGreaterThan(5)
    expect(await checkInvariants(world, { ...expected, deposits: world.deposits }, baseline)).toEqual([])
  }, 240_000)

  /** The withdrawals' row jobs, by id: one each, completed once, across replicas, never before their row. */
  async function checkRowJobs(runs: TickRun[]): Promise<void> {
    const ids = expected.withdrawals.map((w) => w.id).sort()
    const all = (await jobs.all()).filter((j) => j.name === 'withdrawal.send')
    expect(all.map((j) => j.id).sort(), 'one job per withdrawal: every second add was a no-op').toEqual(ids)
    const sentAt = new Map(
      (
        await world.w.sql<{ ref_id: string; created_at: Date }[]>`
          select ref_id, created_at from outbound_txs where purpose = 'withdrawal' and ref_id = any(${ids}::text[])`
      ).map((r) => [r.ref_id, r.created_at.getTime()]),
    )
    const problems: string[] = []
    const outcomes = new Map<string, number>()
    for (const id of ids) {
      const end = await jobs.end('withdrawal.send', id)
      const own = runs.filter((r) => r.tick === 'withdrawal.send' && r.job === id)
      const done = own.filter((r) => r.ok)
      if (end.state !== 'completed') problems.push(`${id}: its job is ${end.state} ${end.failedReason ?? ''}`)
      // a comeback (DelayedError) ends a run without ending the job; exactly one run completes it
      if (done.length !== 1) problems.push(`${id}: completed by ${done.length} runs`)
      const outcome = end.outcome ?? '?'
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
      if (!['sent', 'skipped', 'absent', 'left_to_tick'].includes(outcome)) problems.push(`${id}: ${outcome}`)
      // 'absent': the row was no longer requested when the job ran; only because the tick had sent
      // it first (its transaction recorded before the job ended), never because it was not there yet
      const sentMs = sentAt.get(id)
      if (outcome === 'absent' && !(sentMs !== undefined && sentMs <= (end.finishedOn ?? 0)))
        problems.push(
          `${id}: its job found no row to send, and the row was sent after it (${sentMs} > ${end.finishedOn})`,
        )
    }
    expect(problems).toEqual([])
    const rowRuns = runs.filter((r) => r.tick === 'withdrawal.send')
    const byReplica = Object.fromEntries(
      ['A', 'B', 'B2'].map((n) => [n, rowRuns.filter((r) => r.replica === n).length]),
    )
    console.info(
      `[fault] replicas seed ${seed}: ${ids.length} withdrawal jobs, outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; runs per replica ${JSON.stringify(byReplica)} (${rowRuns.filter((r) => r.error === 'DelayedError').length} came back later)`,
    )
    expect(
      Object.values(byReplica).filter((n) => n > 0).length,
      'the row jobs were consumed by more than one replica',
    ).toBeGreaterThan(1)
    expect(outcomes.get('sent') ?? 0, 'jobs that sent their withdrawal').toBeGreaterThan(0)
  }

  /** No replica ran more jobs of a queue at once than WORKER_CONCURRENCY (or the default 4) allows. */
  function checkConcurrency(runs: TickRun[]): void {
    const most = new Map<string, number>()
    for (const r of runs) {
      const key = `${r.replica}/${r.queue}`
      // the runs of the same replica and queue under way when r started (r included)
      const at = runs.filter(
        (x) => x.replica === r.replica && x.queue === r.queue && x.startMs <= r.startMs && r.startMs < x.endMs,
      ).length
      most.set(key, Math.max(most.get(key) ?? 0, at))
    }
    console.info(
      `[fault] replicas seed ${seed}: most jobs at once per replica/queue ${JSON.stringify(Object.fromEntries(most))}`,
    )
    for (const [key, n] of most) {
      const queue = key.split('/')[1] as string
      const allowed = (CONCURRENCY as Record<string, number>)[queue] ?? DEFAULT_CONCURRENCY
      expect(n, `${key}: jobs at once`).toBeLessThanOrEqual(allowed)
    }
  }
})
