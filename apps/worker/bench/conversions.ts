/**
 * Conversion rounds benchmark (docs/trading.md "Conversions and swaps"): the convert tick
 * (runConversions, cycle lock included) against the Derive simulator over real HTTP, the local swap
 * venue on a real anvil (TestUSDC, TestWETH, the constant-product pool) and a durable throwaway
 * Postgres, with Redis, on the simulator's clock.
 *
 * N users each hold a wheel whose put is sold; 9 minutes before expiry (inside
 * PRE_CONVERT_LEAD_MINUTES) the index and the pool fall 5 % under the lowest strike, so every leg
 * needs a round to the underlying. The tick
 * then runs until every round is `done`; each run moves each round as far as it can (planned →
 * swap on the pool → deposit of the ETH bought → withdraw of the USDC sold → done).
 *
 * Figures: rounds per minute and ms per round over the timed runs; per-round p50/p95 (and of its
 * three phases) from the database's timestamps of each round's swap and movements; swaps
 * executed; exchange calls and RPC calls, per round by method. Then it fails loudly unless every
 * round has one swap_executed, one confirmed swap transaction, one convert_in and one convert_out
 * 'done', the exchange shows one ETH deposit and one withdraw per subaccount, and a last run
 * records nothing.
 *
 * The pool is deepened to 1,000 ETH per wheel (at least the tests' 10,000 ETH): every round of a run
 * is checked against the same index, and on a shallow pool the price the earlier rounds move
 * takes the later ones past the 100 bps sanity guard (the second argument shows it).
 *
 *   pnpm --filter @wh/worker exec tsx bench/conversions.ts              100 wheels
 *   pnpm --filter @wh/worker exec tsx bench/conversions.ts 250          more (CONVERT_BATCH rounds per run)
 *   pnpm --filter @wh/worker exec tsx bench/conversions.ts 100 10000    the tests' pool depth, in ETH
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { availableParallelism, loadavg } from 'node:os'
import { loadConfig } from '@wh/config'
import { createDatabase, runMigrations } from '@wh/db'
import { startDeriveSimulator } from '@wh/derive-simulator'
import { appendBatch, type EventInput } from '@wh/ledger'
import { strategyEventsOn } from '@wh/market'
import { runFunding } from '@wh/subaccounts'
import { localPoolAdapter, mintTestToken, poolAbi } from '@wh/swap'
import { localStackEnv, startChain, startPostgres, startRedis } from '@wh/testkit'
import {
  CONVERT_BATCH,
  CONVERT_CONCURRENCY,
  type ConvertDeps,
  runConversions,
  runPlacing,
  startWheel,
  tradingProfile,
} from '@wh/trading'
import { buildChainClients, testUsdcAbi } from '@wh/wallet'
import { Redis } from 'ioredis'
import { createPublicClient, createWalletClient, http } from 'viem'
import { buildSwapStack, CHAIN, POOL_USDC, POOL_WETH } from '../../../packages/swap/test/stack'
import { buildWorkerDeps } from '../src/deps'
import { platformFunds } from '../test/fixtures/platform-funds'

const N = Number(process.argv[2] ?? 100)
const E18 = 10n ** 18n
/** the pool's ETH side; USDC at 3,000 per ETH */
const POOL_ETH = process.argv[3] ? BigInt(process.argv[3]) : BigInt(Math.max(10_000, N * 1_000))
const USDC = (n: number) => BigInt(n) * 1_000_000n
const START = Date.UTC(2026, 10, 23, 9, 0, 0) // a Monday, 09:00 UTC
/** bounds: setup ticks, timed tick runs */
const MAX_SETUP_RUNS = 40
const MAX_PASSES = 2 + 2 * Math.ceil(N / CONVERT_BATCH)
const silent = { info() {}, warn() {} }

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * q) - 1))] as number)
}
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`
  const rule = `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`
  return [line(header), rule, ...rows.map(line)].join('\n')
}
const byMethod = (m: Map<string, number>, per: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${fmt(v / per, 2)}`)
    .join(', ')

const pg = await startPostgres({ durable: true })
const redisServer = await startRedis()
const chain = await startChain({ chainId: 8453 })
const sim = await startDeriveSimulator({ chainId: 901, startMs: START })
const database = createDatabase(pg.url, { max: 16, appName: 'conversions-bench' })
const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 })
try {
  const setupStarted = performance.now()
  sim.control.setPrice('ETH', '3000')
  await runMigrations(pg.url)
  const sql = database.sql
  const env = {
    DATABASE_URL: pg.url,
    CACHE_URL: redisServer.url,
    LOG_LEVEL: 'silent',
    TRADING_PROFILE: 'balanced',
    WHEEL_ENABLED: 'true',
    RPC_URL_BASE: chain.rpcUrl,
  }
  // the platform's funding subaccount holds the USDC the subaccounts are funded from and the
  // ETH the rounds deposit
  const platform = platformFunds(sim, { USDC: String(N * 10_000), ETH: String(N * 10) }, env)
  const config = loadConfig(localStackEnv({ ...env, ...platform.env }))
  const exchangeCalls = new Map<string, number>()
  const countCall = (o: { method: string }) => void exchangeCalls.set(o.method, (exchangeCalls.get(o.method) ?? 0) + 1)
  const clock = { now: () => new Date(sim.control.nowMs()) }
  const base = buildWorkerDeps(
    config,
    { sql, redis, log: silent },
    { clock, exchangeLogger: { info: countCall, warn: countCall } },
  )

  const swap = await buildSwapStack({ config, sql, rpcUrl: chain.rpcUrl, chainId: 8453 })
  await deepenPool(POOL_ETH)
  // the worker's own clients count their JSON-RPC calls (a batched POST carries several)
  const rpcCalls = new Map<string, number>()
  const clients = buildChainClients(swap.outbox.registry, {
    onFetchRequest: (_request, init) => {
      const body = JSON.parse(String(init.body)) as { method: string } | { method: string }[]
      for (const c of Array.isArray(body) ? body : [body]) rpcCalls.set(c.method, (rpcCalls.get(c.method) ?? 0) + 1)
    },
  })
  const adapter = localPoolAdapter({ clients, pools: { [CHAIN]: { address: swap.pool, tokens: swap.tokens } } })
  const deps = { ...base, clients, registry: swap.outbox.registry }

  /** Sets the exchange's index and trades the pool to the same price (the swap's sanity guard compares them). */
  async function setIndex(price: string) {
    sim.control.setPrice('ETH', price)
    await swap.movePoolTo(BigInt(price))
  }

  /** Adds liquidity at the pool's price until it holds `ethUnits` ETH; the deployer keeps a fifth more for setIndex. */
  async function deepenPool(ethUnits: bigint) {
    const transport = http(chain.rpcUrl)
    const wallet = createWalletClient({ account: swap.deployer, transport })
    const publicClient = createPublicClient({ transport })
    const wethAdd = ethUnits * E18 - POOL_WETH
    if (wethAdd <= 0n) return
    const usdcAdd = (wethAdd * POOL_USDC) / POOL_WETH
    const mined = async (hash: `0x${string}`) => {
      const r = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
      if (r.status !== 'success') throw new Error(`deepening the pool: ${hash} ${r.status}`)
    }
    await mined(
      await wallet.writeContract({
        address: swap.usdc,
        abi: testUsdcAbi,
        functionName: 'mint',
        args: [swap.deployer.address, usdcAdd + usdcAdd / 5n],
        chain: null,
      }),
    )
    await mintTestToken(wallet, publicClient, {
      token: swap.weth,
      to: swap.deployer.address,
      amount: wethAdd + wethAdd / 5n,
    })
    // the deployer's allowances are unlimited already (buildSwapStack, for its front-runs)
    await mined(
      await wallet.writeContract({
        address: swap.pool,
        abi: poolAbi,
        functionName: 'addLiquidity',
        args: [usdcAdd, wethAdd],
        chain: null,
      }),
    )
  }

  // ── setup: N users, each with a wheel whose put is sold ──
  const profile = tradingProfile('balanced')
  const place = {
    sql,
    exchange: deps.exchange,
    redis,
    clock,
    platformFeeRate: config.platformFeeRate,
    profile,
    strategyEvents: strategyEventsOn(redis),
  }
  const users = Array.from({ length: N }, () => randomUUID())
  const deposits: EventInput[] = users.map((userId) => ({
    type: 'deposit_detected',
    payload: {
      userId,
      chain: 'base',
      txHash: `0x${randomBytes(32).toString('hex')}`,
      logIndex: 0,
      currency: 'USDC',
      amount: USDC(10_000),
    },
    occurredAt: new Date(START),
  }))
  await appendBatch(sql, deposits)
  for (const userId of users) await startWheel(sql, { userId, asset: 'ETH', amount: USDC(5_000) })
  const legStates = async () =>
    sql<{ state: string; n: number }[]>`
      select p.state, count(*)::int as n from wheels w join positions p on p.id = w.current_position_id group by p.state`
  for (let i = 0; ; i++) {
    const states = await legStates()
    if (states.length === 1 && states[0]?.state === 'open') break
    if (i >= MAX_SETUP_RUNS) throw new Error(`legs not sold: ${JSON.stringify(states)}`)
    await runFunding({ ...deps, log: silent })
    await runPlacing(place)
    if (states.some((s) => s.state === 'placing')) sim.control.advance(profile.makerWindowMs / 4)
  }
  const [legs] = await sql<{ expiries: number; expiry_sec: number; min_strike: string }[]>`
    select count(distinct p.expiry_sec)::int as expiries, min(p.expiry_sec)::float8 as expiry_sec,
      min(p.strike_e18)::text as min_strike
    from wheels w join positions p on p.id = w.current_position_id`
  if (legs?.expiries !== 1) throw new Error(`expected one expiry for every leg: ${JSON.stringify(legs)}`)
  sim.control.advanceTo((legs.expiry_sec - 9 * 60) * 1000)
  await setIndex(String((BigInt(legs.min_strike) * 95n) / 100n / E18)) // 5 % under the lowest strike
  const setupMs = performance.now() - setupStarted

  const convert: ConvertDeps = {
    ...deps,
    swap: { ...deps.swap, adapter, chain: CHAIN },
    log: silent,
    preConvertLeadMinutes: config.preConvertLeadMinutes,
    stuckMinutes: config.conversionStuckMinutes,
  }

  // ── the timed runs ──
  exchangeCalls.clear()
  rpcCalls.clear()
  const passes: { ms: number; planned: number; steps: Record<string, number>; done: number }[] = []
  const doneCount = async () =>
    (await sql<{ n: number }[]>`select count(*)::int as n from conversions where state = 'done'`)[0]?.n ?? 0
  // the cores are shared: the load around the timed runs says how much of them the figures had
  const loadBefore = loadavg()[0] ?? Number.NaN
  const t0 = performance.now()
  while ((await doneCount()) < N) {
    if (passes.length >= MAX_PASSES)
      throw new Error(
        `rounds not done after ${passes.length} runs: ${JSON.stringify(await sql`select state, reason, count(*)::int as n from conversions group by 1, 2`)}`,
      )
    const started = performance.now()
    const s = await runConversions(convert)
    const ms = performance.now() - started
    if (s.locked) throw new Error('the cycle lock was held by someone else')
    const done = s.steps.done ?? 0
    passes.push({ ms, planned: s.planned, steps: s.steps, done })
  }
  const elapsedMs = performance.now() - t0
  const loadAfter = loadavg()[0] ?? Number.NaN
  const exchangeTimed = new Map(exchangeCalls)
  const rpcTimed = new Map(rpcCalls)

  // ── checks: every round once, nothing doubled ──
  const [rounds] = await sql<{ n: number; done: number }[]>`
    select count(*)::int as n, count(*) filter (where state = 'done')::int as done from conversions`
  if (rounds?.n !== N || rounds.done !== N)
    throw new Error(`expected ${N} rounds done, found ${JSON.stringify(rounds)}`)
  const bad = await sql<
    {
      id: string
      executed: number
      events: number
      txs: number
      ins: number
      outs: number
      in_rows: number
      out_rows: number
    }[]
  >`
    select c.id,
      (select count(*)::int from swaps s where s.id = c.id and s.state = 'executed') as executed,
      (select count(*)::int from ledger_events e join swaps s on s.id = c.id
        where e.type = 'swap_executed' and e.payload->>'txHash' = s.tx_hash) as events,
      (select count(*)::int from outbound_txs o where o.purpose = 'swap' and o.state = 'confirmed'
        and split_part(o.ref_id, ':', 1) = c.id::text) as txs,
      (select count(*)::int from subaccount_transfers t where t.subaccount_id = c.subaccount_id and t.kind = 'convert_in'
        and t.state = 'done' and t.id = c.in_transfer_id) as ins,
      (select count(*)::int from subaccount_transfers t where t.subaccount_id = c.subaccount_id and t.kind = 'convert_out'
        and t.state = 'done' and t.id = c.out_transfer_id) as outs,
      (select count(*)::int from subaccount_transfers t where t.subaccount_id = c.subaccount_id and t.kind = 'convert_in'
        and t.state <> 'failed') as in_rows,
      (select count(*)::int from subaccount_transfers t where t.subaccount_id = c.subaccount_id and t.kind = 'convert_out'
        and t.state <> 'failed') as out_rows
    from conversions c`
  const wrong = bad.filter(
    (r) =>
      r.executed !== 1 ||
      r.events !== 1 ||
      r.txs !== 1 ||
      r.ins !== 1 ||
      r.outs !== 1 ||
      r.in_rows !== 1 ||
      r.out_rows !== 1,
  )
  if (wrong.length > 0) throw new Error(`rounds not exactly once: ${JSON.stringify(wrong.slice(0, 5))}`)
  const [totals] = await sql<{ swap_executed: number; swaps: number; at_first_step: number; underlying: number }[]>`
    select (select count(*)::int from ledger_events where type = 'swap_executed') as swap_executed,
      (select count(*)::int from swaps where state = 'executed') as swaps,
      (select count(*)::int from swaps where state = 'executed' and run = 0 and step = 0) as at_first_step,
      (select count(*)::int from wheels where holding = 'underlying' and cost_basis_e18 is not null) as underlying`
  if (totals?.swap_executed !== N || totals.swaps !== N || totals.underlying !== N)
    throw new Error(`expected ${N} swap_executed, swaps and wheels holding the underlying: ${JSON.stringify(totals)}`)
  // at the exchange: one ETH deposit and one withdraw per subaccount (the funding deposited USDC)
  const subs = await sql<{ exchange_id: string }[]>`
    select s.exchange_id::text from conversions c join subaccounts s on s.id = c.subaccount_id`
  for (const { exchange_id } of subs) {
    const subaccount_id = Number(exchange_id)
    const ins = (await deps.exchange.getDepositHistory({ subaccount_id })).events.filter((e) => e.asset === 'ETH')
    const outs = (await deps.exchange.getWithdrawalHistory({ subaccount_id })).events
    if (ins.length !== 1 || outs.length !== 1)
      throw new Error(
        `subaccount ${subaccount_id}: ${ins.length} ETH deposits, ${outs.length} withdrawals at the exchange`,
      )
  }
  // a last run records and sends nothing
  const eventCount = async () => (await sql<{ n: number }[]>`select count(*)::int as n from ledger_events`)[0]?.n
  const before = await eventCount()
  const idle = await runConversions(convert)
  if ((await eventCount()) !== before || idle.planned !== 0 || Object.keys(idle.steps).length > 0)
    throw new Error(`a last run did something: ${JSON.stringify(idle)}`)

  // ── report ──
  const totalExchange = [...exchangeTimed.values()].reduce((a, b) => a + b, 0)
  const totalRpc = [...rpcTimed.values()].reduce((a, b) => a + b, 0)
  console.log(
    `\nconversion rounds: runConversions (batch ${CONVERT_BATCH} per run) against the Derive simulator's v3 API over HTTP, the local pool on anvil ` +
      `(${fmt(Number(POOL_ETH))} ETH deep, 30 bps fee), durable Postgres; setup ${fmt(setupMs / 1000, 1)} s; load average ${fmt(loadBefore, 2)} → ${fmt(loadAfter, 2)} ` +
      `on ${availableParallelism()} cores; ${new Date().toISOString()}\n`,
  )
  console.log(
    table(
      [
        'wheels',
        'tick runs',
        'rounds done',
        'swaps executed',
        'exchange calls',
        'RPC calls',
        'ms',
        'rounds/min',
        'ms/round',
      ],
      [
        [
          fmt(N),
          fmt(passes.length),
          fmt(rounds.done),
          `${fmt(totals.swaps)} (${fmt(totals.at_first_step)} at step 0)`,
          fmt(totalExchange),
          fmt(totalRpc),
          fmt(elapsedMs),
          fmt((rounds.done / elapsedMs) * 60_000),
          fmt(elapsedMs / rounds.done, 1),
        ],
      ],
    ),
  )
  console.log('')
  // per round, from the database's own clock (rounds run side by side, CONVERT_CONCURRENCY at once):
  // the swap row is created as the round's swap starts, the deposit row when the swap executed, the
  // withdraw row when the deposit settled, and the withdraw completes with the round
  const samples = await sql<{ round_ms: number; swap_ms: number; deposit_ms: number; withdraw_ms: number }[]>`
    select extract(epoch from o.completed_at - s.created_at)::float8 * 1000 as round_ms,
      extract(epoch from i.created_at - s.created_at)::float8 * 1000 as swap_ms,
      extract(epoch from o.created_at - i.created_at)::float8 * 1000 as deposit_ms,
      extract(epoch from o.completed_at - o.created_at)::float8 * 1000 as withdraw_ms
    from conversions c join swaps s on s.id = c.id
    join subaccount_transfers i on i.id = c.in_transfer_id join subaccount_transfers o on o.id = c.out_transfer_id`
  const phase = (name: string, xs: number[]) => [
    name,
    fmt(quantile(xs, 0.5), 1),
    fmt(quantile(xs, 0.95), 1),
    fmt(Math.max(...xs), 1),
  ]
  console.log(
    table(
      [`per round (${samples.length}, ${CONVERT_CONCURRENCY} at once)`, 'p50 ms', 'p95 ms', 'max ms'],
      [
        phase(
          'round: checks → done',
          samples.map((s) => s.round_ms),
        ),
        phase(
          '  swap: checks, amount, ladder, deposit stored',
          samples.map((s) => s.swap_ms),
        ),
        phase(
          '  deposit: sent, settled, withdraw stored',
          samples.map((s) => s.deposit_ms),
        ),
        phase(
          '  withdraw: sent, settled, round done',
          samples.map((s) => s.withdraw_ms),
        ),
      ],
    ),
  )
  console.log(
    `\nruns: ${passes.map((p, i) => `#${i + 1} ${fmt(p.ms)} ms, planned ${p.planned}, ${JSON.stringify(p.steps)}`).join('; ')}`,
  )
  console.log(`exchange calls per round: ${byMethod(exchangeTimed, N)}`)
  console.log(`RPC calls per round: ${byMethod(rpcTimed, N)}`)
  console.log(
    `checks: ${totals.swap_executed} swap_executed for ${N} rounds; one confirmed swap transaction, one convert_in and one convert_out 'done' ` +
      `per round; one ETH deposit and one withdraw per subaccount at the exchange; a last run recorded nothing`,
  )
} finally {
  redis.disconnect()
  await database.close()
  await sim.close()
  await chain.stop()
  await redisServer.stop()
  await pg.stop()
}
