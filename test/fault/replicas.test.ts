/**
 * Fault suite, part 3: two worker replicas (separate processes, every tick of the service, every
 * queue) for ten simulated minutes: each tick's period divided by SPEED, so the run takes about a
 * minute. Meanwhile deposits arrive on chain and users request withdrawals and fund subaccounts,
 * and one replica is restarted halfway (a rolling deploy: its schedulers are upserted again while
 * the other replica runs them).
 *
 * Every run of a tick is recorded with its BullMQ job (`repeat:{tick}:{slot}`): no job runs twice,
 * no tick has two slots within one period, every tick keeps its rhythm, both replicas do work.
 * Then the work is finished and checked as after the chaos (fixtures/invariants.ts): no event
 * doubled, every transfer once, balances reconcile.
 */
import { join } from 'node:path'
import { freeBalance } from '@wh/ledger'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
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

interface TickRun {
  tick: string
  job: string
  replica: string
  startMs: number
  endMs: number
  ok: boolean
}

describe('fault: two worker replicas for ten minutes of accelerated ticks', () => {
  const seed = faultSeed()
  const rng = seededRng(seed)
  let world: FaultWorld
  let baseline: Baseline
  let users: WorldUser[]
  let script: string
  const replicas: Child[] = []
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
  }, 120_000)
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop('SIGKILL')))
    discardBundles()
    await world?.close()
  })

  function startReplica(name: string): Child {
    const args: ReplicaArgs = {
      ...world.params,
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
      const amount = USDC(rng.int(2, 10))
      if (free < amount) return
      const destination = freshAddress(rng)
      expected.withdrawals.push({
        id: await world.requestWithdrawal(user, amount, destination),
        userId: user.id,
        amount,
        destination,
      })
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

    // ---- the work: done once -----------------------------------------------------------------
    expect(world.deposits.length).toBeGreaterThan(10)
    expect(expected.withdrawals.length + expected.fundings.length).toBeGreaterThan(5)
    expect(await checkInvariants(world, { ...expected, deposits: world.deposits }, baseline)).toEqual([])
  }, 240_000)
})
