/**
 * Swap benchmark (docs/swaps.md "Benchmark"): the ladder executor on a real anvil and a durable
 * throwaway Postgres. Arguments: sequential swaps (default 200), concurrent swaps (default 200),
 * front-run swaps (default 30).
 *
 * 1. sequential swaps on a deep pool (alternating USDC→ETH and ETH→USDC so the price stays put):
 *    swaps per minute, ms per swap; every one must execute at the first step;
 * 2. the same with 4 executors at once sharing the one swap wallet (its nonce lock serialises
 *    the signing; the quotes race each other);
 * 3. a third party outbids every step 0 (automine off, one block): the time of a reverted step
 *    (its journal included) and of the executed step after it.
 */
import { randomUUID } from 'node:crypto'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { localStackEnv, startChain, startPostgres } from '@wh/testkit'
import { executeSwap, poolReserves, type StepReport, type SwapRequest, type SwapResult } from '../src/index'
import { buildSwapStack, CHAIN } from '../test/stack'

const SEQUENTIAL = Number(process.argv[2] ?? 200)
const CONCURRENT = Number(process.argv[3] ?? 200)
const FRONT_RUN = Number(process.argv[4] ?? 30)
const CONCURRENCY = 4

const pg = await startPostgres({ durable: true })
const chain = await startChain({ chainId: 8453 })
const rows: string[][] = []
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : (s[Math.floor((s.length - 1) / 2)] as number)
}
const p95 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.ceil(s.length * 0.95) - 1)] as number)
}

try {
  await runMigrations(pg.url)
  const database = createDatabase(pg.url, { max: 12, appName: 'swap-bench' })
  const config = loadConfig(localStackEnv({ DATABASE_URL: pg.url, LOG_LEVEL: 'silent', RPC_URL_BASE: chain.rpcUrl }))
  const s = await buildSwapStack({ config, sql: database.sql, rpcUrl: chain.rpcUrl, chainId: chain.chainId })
  const userId = randomUUID()
  const request = (i: number): SwapRequest =>
    i % 2 === 0
      ? {
          swapId: randomUUID(),
          userId,
          subaccountId: 'bench',
          chain: CHAIN,
          sell: 'USDC',
          buy: 'ETH',
          amountIn: 3_000_000_000n,
          indexPrice: { num: 1n, den: 3000n },
        }
      : {
          swapId: randomUUID(),
          userId,
          subaccountId: 'bench',
          chain: CHAIN,
          sell: 'ETH',
          buy: 'USDC',
          amountIn: 10n ** 18n,
          indexPrice: '3000',
        }
  // warm-up: the pool approvals and the first connections are not part of the figures
  for (let i = 0; i < 2; i++) await executeSwap(s.deps(), request(i))

  const outcomes: string[] = []
  const summarise = (name: string, results: SwapResult[], elapsedMs: number) => {
    const byOutcome = new Map<string, number>()
    for (const r of results) byOutcome.set(r.outcome, (byOutcome.get(r.outcome) ?? 0) + 1)
    const stepsOf = new Map<string, number>()
    for (const r of results) {
      const k = r.steps.map((x) => `${x.epsilonBps}:${x.status}`).join(' ')
      stepsOf.set(k, (stepsOf.get(k) ?? 0) + 1)
    }
    outcomes.push(
      `${name}: ${[...byOutcome].map(([k, v]) => `${k} ${v}`).join(', ')}; steps ${[...stepsOf].map(([k, v]) => `[${k}]×${v}`).join(', ')}`,
    )
    const executed = results.filter((r) => r.outcome === 'executed').length
    const steps = results.flatMap((r) => r.steps)
    const atFirst = results.filter((r) => r.outcome === 'executed' && r.steps.length === 1).length
    const stepMs = steps.filter((x) => x.status === 'executed').map((x) => x.durationMs)
    rows.push([
      name,
      fmt(results.length),
      fmt(executed),
      fmt(atFirst),
      fmt(steps.filter((x) => x.status === 'reverted').length),
      fmt(steps.filter((x) => x.status === 'not_sent').length),
      fmt((executed / elapsedMs) * 60_000),
      fmt(elapsedMs / results.length, 1),
      fmt(median(stepMs), 1),
      fmt(p95(stepMs), 1),
    ])
  }

  // 1. sequential
  {
    const results: SwapResult[] = []
    const t = performance.now()
    for (let i = 0; i < SEQUENTIAL; i++) results.push(await executeSwap(s.deps(), request(i)))
    summarise('sequential, deep pool', results, performance.now() - t)
    if (results.some((r) => r.outcome !== 'executed' || r.steps.length !== 1))
      throw new Error('a sequential swap on a deep pool did not execute at the first step')
  }

  // 2. concurrent executors, one swap wallet. A call that throws is retried with the same request,
  // as the worker's job would be: anvil (--prune-history keeps no old state) sometimes answers an
  // eth_call at `latest` with BlockOutOfRange while another executor's block is being mined.
  let retriedCalls = 0
  {
    const results: SwapResult[] = []
    let next = 0
    const t = performance.now()
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CONCURRENT) {
          const req = request(next++)
          for (let attempt = 1; ; attempt++) {
            try {
              results.push(await executeSwap(s.deps(), req))
              break
            } catch (e) {
              if (attempt >= 5) throw e
              retriedCalls++
            }
          }
        }
      }),
    )
    summarise(`${CONCURRENCY} executors, one wallet`, results, performance.now() - t)
  }

  // 3. every step 0 outbid by a third party: the reverted step and the step after it
  const reverted: StepReport[] = []
  const executedAfter: StepReport[] = []
  {
    const results: SwapResult[] = []
    const t = performance.now()
    for (let i = 0; i < FRONT_RUN; i++) {
      await s.anvil.setAutomine(false)
      let armed = false
      let done = false
      const deps = s.deps({
        hooks: {
          beforeSend: () => {
            armed = true
          },
        },
        outboxHooks: {
          afterBroadcast: async (rec) => {
            if (!armed || done) return
            done = true
            await s.frontRun({ sell: 'USDC', amountIn: 30_000_000_000n, outbid: rec.txHash })
            await s.anvil.mine({ blocks: 1 })
            await s.anvil.setAutomine(true)
          },
        },
      })
      // the index is the pool's mid price at the round's start: the front-run's ~20 bps and the 30 bps fee stay inside the guard
      const { reserve0, reserve1 } = await poolReserves(s.base.publicClient, s.pool)
      const r = await executeSwap(deps, {
        ...request(0),
        indexPrice: { num: reserve1 * 10n ** 6n, den: reserve0 * 10n ** 18n },
      })
      results.push(r)
      reverted.push(...r.steps.filter((x) => x.status === 'reverted'))
      executedAfter.push(...r.steps.filter((x) => x.status === 'executed'))
    }
    summarise('step 0 outbid every time', results, performance.now() - t)
  }

  console.log(
    `\nswap ladder on anvil (local pool, 30 bps fee, 30,000,000 USDC / 10,000 ETH), durable Postgres, ${new Date().toISOString()}\n`,
  )
  const header = [
    'scenario',
    'swaps',
    'executed',
    'at step 0',
    'reverted steps',
    'not sent',
    'swaps/min',
    'ms/swap',
    'exec step p50 ms',
    'exec step p95 ms',
  ]
  const all = [header, ...rows]
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  for (const r of all)
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '))
  console.log(`\n${outcomes.join('\n')}`)
  console.log(`\ncalls retried after a node error (concurrent scenario): ${retriedCalls}`)
  const rv = reverted.map((x) => x.durationMs)
  const ex = executedAfter.map((x) => x.durationMs)
  console.log(
    `\nladder time per step (front-run scenario): reverted step p50 ${fmt(median(rv), 1)} ms, p95 ${fmt(p95(rv), 1)} ms` +
      ` (its front-run and one block mined inside); the executed step after it p50 ${fmt(median(ex), 1)} ms, p95 ${fmt(p95(ex), 1)} ms`,
  )
  // retries and races never doubled a swap: one swap_executed per executed swap, one successful transaction each
  const [check] = await database.sql<{ events: number; swaps: number; doubled: number }[]>`
    select (select count(*)::int from ledger_events where type = 'swap_executed') as events,
           (select count(*)::int from swaps where state = 'executed') as swaps,
           (select count(*)::int from (select split_part(ref_id, ':', 1) as swap_id from outbound_txs where purpose = 'swap' and state = 'confirmed'
              group by split_part(ref_id, ':', 1) having count(*) > 1) d) as doubled`
  console.log(
    `journal check: ${check?.events} swap_executed events for ${check?.swaps} executed swaps, ${check?.doubled} swaps with two executed transactions`,
  )
  if (!check || check.events !== check.swaps || check.doubled !== 0)
    throw new Error('a swap was recorded or executed twice')
  await database.close()
} finally {
  await chain.stop()
  await pg.stop()
}
