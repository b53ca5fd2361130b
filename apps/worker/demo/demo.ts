/**
 * The accelerated demo: a new user through deposit → wheel → withdrawal against a running
 * stack: the API over HTTP, the local chain with its TestUSDC, the Derive simulator, and a worker
 * whose clock follows the simulator's (WORKER_CLOCK=exchange). `scripts/demo.sh` runs it on the
 * local run; `apps/worker/test/demo.test.ts` runs it in CI on an in-process stack.
 *
 * Acceleration is two things, both done the way an operator could do them by hand:
 * - the exchange's time moves: `POST /_sim/advance` past the maker window, then past the put's
 *   expiry (the simulator settles it at 08:00 UTC on the way); the worker reads that time before
 *   each job, so its ticks see the window over and the expiry passed;
 * - the ticks a step waits on run at once: the demo adds a job of that tick to its queue (the job a
 *   scheduler would add at the next period; at most one waiting per tick), instead of waiting up to
 *   a period (60 s for the bridge and the wheel runner).
 *
 * What the user sees comes from the API with their token; what only the platform sees (the sweep,
 * the bridge to the exchange wallet) from the service's database. Amounts are bigint base units;
 * the API's decimal strings are parsed exactly.
 */
import { randomUUID } from 'node:crypto'
import { fromBaseUnits, toBaseUnits } from '@wh/core'
import { createDatabase } from '@wh/db'
import { BULL_PREFIX, QUEUES, type QueueKey } from '@wh/jobs'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { type Address, createPublicClient, createWalletClient, erc20Abi, type Hex, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { ticks } from '../src/jobs/index'

const USDC_DECIMALS = 6
const USDC = (whole: number) => BigInt(whole) * 10n ** BigInt(USDC_DECIMALS)
const MINUTE_MS = 60_000
/** the target delta the demo's user sets for the wheel's next puts (the balanced profile's is 0.20) */
export const NEXT_PUT_DELTA_BPS = 2500
/** how often a waiting step looks again */
const POLL_MS = 150
/** the default bound of each step (the in-process test passes a smaller one) */
const STEP_TIMEOUT_MS = 90_000
/** The longest a nudge waits for its run to be done before the next one (see TickNudger). */
const NUDGE_WAIT_MS = 5_000

export interface DemoAmounts {
  /** TestUSDC sent to the deposit address */
  readonly depositUsdc: bigint
  /** committed to the wheel (POST /positions, side wheel) */
  readonly wheelUsdc: bigint
  /** withdrawn at the end, from what the wheel did not take */
  readonly withdrawUsdc: bigint
}

export const DEFAULT_DEMO_AMOUNTS: DemoAmounts = {
  depositUsdc: USDC(1_500),
  wheelUsdc: USDC(1_000),
  withdrawUsdc: USDC(50),
}

export interface DemoOptions {
  /** the API, e.g. http://127.0.0.1:3000 */
  readonly apiUrl: string
  /** SIWE_DOMAIN of that API */
  readonly siweDomain: string
  /** EXCHANGE_HTTP_URL: the Derive simulator (its control API under /_sim/) */
  readonly simulatorUrl: string
  /** the local node the deposit is made on (one node per chain: docs/chains.md "Local run: four chains") */
  readonly rpcUrl: string
  /** TestUSDC on that node (USDC_ADDRESS_LOCAL_<CHAIN>) */
  readonly usdc: Address
  /**
   * where the withdrawal is paid (default: the deposit's chain): another chain's node and TestUSDC, e.g. arbitrum,
   * whose hot wallet the treasury refills over CCTP first (docs/chains.md "Rebalancing")
   */
  readonly withdrawal?: { readonly chain: string; readonly rpcUrl: string; readonly usdc: Address }
  /** holds TestUSDC and ETH on the node and pays the deposit (the local run's dev account 0) */
  readonly funderKey: Hex
  /** CACHE_URL and the running worker's BullMQ key prefix (default BULL_PREFIX): where the demo adds the ticks' jobs */
  readonly bull: { readonly redisUrl: string; readonly prefix?: string }
  /** DATABASE_URL: what only the platform sees (the sweep, the bridge) is read from there */
  readonly databaseUrl: string
  readonly amounts?: DemoAmounts
  readonly stepTimeoutMs?: number
  /** one line per step (default: none) */
  readonly log?: (line: string) => void
}

export interface DemoStep {
  readonly name: string
  /** since the demo started */
  readonly atMs: number
  /** the exchange's clock when the step completed (ISO) */
  readonly exchangeTime: string
  readonly detail: string
}

export interface PositionView {
  id: string
  wheelId: string | null
  side: string
  state: string
  collateral: string
  instrument: string | null
  strike: string | null
  expiry: string | null
  size: string | null
  filled: string
  premium: string
  fees: string
  settlementCost: string | null
  outcome: 'itm' | 'otm' | null
  realizedPnl: string
  reason: string | null
}

/** POST /quotes, the parts the demo prints */
interface QuoteView {
  instrument: string
  premium: string
  exchangeFee: string
  platformFee: string
  netPremium: string
  feeShareBps: number | null
  warning: { message: string } | null
}

/** basis points as a percentage with two decimals */
function bpsText(bps: number): string {
  return `${(bps / 100).toFixed(2)} %`
}

export interface WheelView {
  id: string
  state: string
  cycles: number
  currentPositionId: string | null
  reason: string | null
}

export interface WithdrawalView {
  id: string
  state: 'requested' | 'sent' | 'failed'
  chain: string | null
  amount: string
  destination: string | null
  txHash: string | null
  failureReason: string | null
}

export interface AssetSummaryView {
  currency: string
  freeBalance: string
  inSubaccounts: string
  pendingWithdrawals: string
  pendingFundings: string
  income: { premium: string; interest: string; funding: string }
  expenses: { exchangeFee: string; settlement: string; swap: string; borrow: string }
  netDeposits: string
  periodReturn: string
}

export interface StatementRowView {
  type: string
  occurredAt: string
  postings: { account: string; currency: string; amount: string; balanceAfter: string }[]
}

export interface DemoReport {
  readonly user: Address
  readonly depositAddress: Address
  readonly steps: readonly DemoStep[]
  readonly firstLeg: PositionView
  readonly secondLeg: PositionView
  readonly wheel: WheelView
  readonly withdrawal: WithdrawalView
  /** TestUSDC the user's own address holds at the end (the withdrawal arrived) */
  readonly receivedOnChainUsdc: bigint
  readonly usdc: AssetSummaryView
  readonly statement: readonly StatementRowView[]
  readonly totalMs: number
}

/** A step did not complete within its bound; says what it saw last. */
export class DemoStepTimeoutError extends Error {
  constructor(
    readonly step: string,
    readonly lastSeen: string,
    timeoutMs: number,
  ) {
    super(`demo step "${step}" did not complete within ${timeoutMs / 1000} s (last seen: ${lastSeen})`)
    this.name = 'DemoStepTimeoutError'
  }
}

/** The API answered a demo request with an error. */
export class DemoApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what} answered ${status}: ${body.slice(0, 300)}`)
    this.name = 'DemoApiError'
  }
}

/**
 * Runs the demo user through deposit → wheel (one put sold, expired, settled, the next leg opened)
 * → withdrawal, and returns what each step saw.
 *
 * @example
 *   const report = await runDemo({ apiUrl, siweDomain, simulatorUrl, rpcUrl, usdc, funderKey, bull, databaseUrl, log: console.log })
 *   report.withdrawal.state // 'sent'
 */
export async function runDemo(o: DemoOptions): Promise<DemoReport> {
  const amounts = o.amounts ?? DEFAULT_DEMO_AMOUNTS
  const timeoutMs = o.stepTimeoutMs ?? STEP_TIMEOUT_MS
  const log = o.log ?? (() => {})
  const started = performance.now()
  const steps: DemoStep[] = []
  const connection = new Redis(o.bull.redisUrl, { maxRetriesPerRequest: null })
  const nudger = new TickNudger(connection, o.bull.prefix ?? BULL_PREFIX)
  const database = createDatabase(o.databaseUrl, { max: 2, appName: 'wheelhouse-demo' })
  const { sql } = database
  const exchange = new SimulatorControl(o.simulatorUrl)
  const usdcText = (units: bigint) => `${trim(fromBaseUnits(units, USDC_DECIMALS))} USDC`
  const step = async (name: string, detail: string) => {
    const s = {
      name,
      atMs: performance.now() - started,
      exchangeTime: new Date(await exchange.nowMs()).toISOString(),
      detail,
    }
    steps.push(s)
    log(`[${(s.atMs / 1000).toFixed(1).padStart(5)} s] ${name.padEnd(22)} ${detail}`)
  }
  const until = <T>(name: string, probe: () => Promise<Probe<T>>, nudge?: readonly Tick[]) =>
    poll(name, timeoutMs, probe, nudge ? () => nudger.run(nudge) : undefined, (seen) =>
      log(`${' '.repeat(33)}… ${seen}`),
    )

  try {
    // --- 1. a fresh key signs in (spec 5.1) and reads its deposit address ----------------------------
    const transport = http(o.rpcUrl)
    const chain = createPublicClient({ transport })
    const chainId = await chain.getChainId()
    const api = new DemoApi(o.apiUrl)
    // before anything is created: the runner must be on (the maker window comes from the profile)
    const config = await api.call<{ wheelEnabled: boolean; profile: { name: string; makerWindowMs: number } }>(
      'GET',
      '/trading-config',
    )
    if (!config.wheelEnabled)
      throw new Error('the wheel runner is off (WHEEL_ENABLED=false): start the local run with scripts/dev.sh --demo')
    const user = privateKeyToAccount(generatePrivateKey())
    const { nonce } = await api.call<{ nonce: string }>('GET', '/auth/nonce')
    const message = createSiweMessage({
      domain: o.siweDomain,
      address: user.address,
      statement: 'Sign in to Wheelhouse',
      uri: `http://${o.siweDomain}`,
      version: '1',
      chainId,
      nonce,
      issuedAt: new Date(),
    })
    const session = await api.call<{ token: string; address: string }>('POST', '/auth/verify', {
      body: { message, signature: await user.signMessage({ message }) },
    })
    api.token = session.token
    await step('signed in', `${session.address} (a new key; SIWE nonce, signature, JWT)`)
    const { address: depositAddress } = await api.call<{ address: Address }>('GET', '/deposit-address')
    await step('deposit address', depositAddress)

    // --- 2. the deposit: TestUSDC on the local node, detected, credited, swept, bridged ------------
    const funder = privateKeyToAccount(o.funderKey)
    const wallet = createWalletClient({ account: funder, transport })
    const depositTx = await wallet.writeContract({
      address: o.usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [depositAddress, amounts.depositUsdc],
      chain: null,
    })
    await chain.waitForTransactionReceipt({ hash: depositTx, pollingInterval: 50 })
    await step('deposit sent', `${usdcText(amounts.depositUsdc)} from ${funder.address}, tx ${depositTx}`)

    const credited = await until('deposit credited', async () => {
      const usdc = await usdcSummary(api)
      const free = usdc ? toBaseUnits(usdc.freeBalance, USDC_DECIMALS) : 0n
      return free >= amounts.depositUsdc ? done(free) : seen(`free balance ${usdcText(free)}`)
    }, ['deposit-scan'])
    await step('deposit credited', `free balance ${usdcText(credited)} (deposit_detected)`)

    const swept = await until('deposit swept', async () => {
      const [d] = await sql<{ chain: string; state: string; updated_at: Date }[]>`
          select chain, state, updated_at from deposits where lower(tx_hash) = ${depositTx.toLowerCase()}`
      return d?.state === 'swept' ? done(d) : seen(`deposit ${d?.state ?? 'not recorded'}`)
    }, ['deposit-sweep'])
    await step('deposit swept', `to the platform's hot wallet on ${swept.chain}`)
    // an L2's USDC crosses to L1 over CCTP first: burned, attested, minted (docs/chains.md "The L2 route")
    if (swept.chain !== 'ethereum') {
      const burn = await until('burned on the L2', async () => {
        const [t] = await sql<{ burn_tx_hash: string | null; amount: string; min_finality: number }[]>`
            select burn_tx_hash, amount::text, min_finality from cctp_transfers
            where source_chain = ${swept.chain} and created_at >= ${swept.updated_at} order by created_at limit 1`
        return t?.burn_tx_hash ? done(t) : seen(t ? 'burn not final yet' : 'no CCTP transfer yet')
      }, ['bridge'])
      await step(
        'burned (CCTP)',
        `${usdcText(BigInt(burn.amount))} burned on ${swept.chain} (${burn.min_finality <= 1000 ? 'fast' : 'standard'}), tx ${burn.burn_tx_hash}`,
      )
      const minted = await until('minted on L1', async () => {
        const [b] = await sql<{ amount: string; fee: string }[]>`
            select payload->>'amount' as amount, payload->>'feeAmount' as fee from ledger_events
            where type = 'bridged' and payload->>'txHash' = ${burn.burn_tx_hash}`
        return b ? done(b) : seen('attestation or mint pending')
      }, ['bridge'])
      await step(
        'attested and minted',
        `Circle's attestation (the local attester), minted on ethereum: ${usdcText(BigInt(minted.amount) - BigInt(minted.fee))} (fee ${usdcText(BigInt(minted.fee))})`,
      )
    }
    // the wheel's funding draws on the exchange: the deposit must have crossed to it first
    const bridged = await until('bridged to the exchange', async () => {
      const [b] = await sql<{ amount: string }[]>`
          select payload->>'amount' as amount from ledger_events
          where type = 'bridged' and payload->>'toChain' = 'derive' and recorded_at >= ${swept.updated_at}
            and (payload->>'amount')::numeric >= ${amounts.wheelUsdc.toString()}::numeric
          order by recorded_at limit 1`
      return b ? done(BigInt(b.amount)) : seen('no deposit to the exchange since the sweep')
    }, ['bridge'])
    await step('deposited to the exchange', `${usdcText(bridged)} deposited on L1 into the funding subaccount`)

    // --- 3. the wheel: a quote first, then its first put funded, chosen, sold, expired, settled -----
    // what the leg would earn and cost at the current marks (docs/trading.md "Economics")
    const quote = await api.call<QuoteView>('POST', '/quotes', {
      body: { asset: 'ETH', side: 'wheel', amount: fromBaseUnits(amounts.wheelUsdc, USDC_DECIMALS) },
    })
    const fees = toBaseUnits(quote.exchangeFee, USDC_DECIMALS) + toBaseUnits(quote.platformFee, USDC_DECIMALS)
    await step(
      'quote',
      `${quote.instrument}: premium ${trim(quote.premium)} USDC, fees ${usdcText(fees)} (${
        quote.feeShareBps === null ? '-' : bpsText(quote.feeShareBps)
      } of it), net ${trim(quote.netPremium)} USDC${quote.warning ? `; ${quote.warning.message}` : ''}`,
    )
    const wheelStart = await api.call<{ id: string; wheelId: string; state: string }>('POST', '/positions', {
      body: { asset: 'ETH', side: 'wheel', amount: fromBaseUnits(amounts.wheelUsdc, USDC_DECIMALS) },
      headers: { 'idempotency-key': `demo-${randomUUID()}` },
    })
    await step('wheel started', `ETH wheel with ${usdcText(amounts.wheelUsdc)}, leg 1 ${wheelStart.state}`)

    const leg = (id: string) => async () => (await positions(api)).positions.find((p) => p.id === id)
    // why the wheel chose each leg: its decision log (docs/trading.md "Why: the decision log")
    const why = async (positionId: string) => {
      const { decisions } = await api.call<{ decisions: { positionId: string | null; message: string }[] }>(
        'GET',
        `/wheels/${wheelStart.wheelId}/decisions?limit=20`,
      )
      for (const d of decisions.filter((x) => x.positionId === positionId).reverse())
        log(`${' '.repeat(33)}why: ${d.message}`)
    }
    const chosen = await until('put chosen', async () => {
      const p = await leg(wheelStart.id)()
      if (p?.state === 'placing' && p.instrument) return done(p)
      if (p && ['failed', 'cancelled'].includes(p.state)) throw new Error(`leg 1 ${p.state}: ${p.reason}`)
      return seen(`leg 1 ${p?.state ?? 'missing'}${p?.reason ? ` (${p.reason})` : ''}`)
    }, ['fund', 'place'])
    await step(
      'put placed',
      `${chosen.instrument}: strike ${trim(chosen.strike)}, ${trim(chosen.size)} contracts, maker orders for ${config.profile.makerWindowMs / MINUTE_MS} min`,
    )
    await why(chosen.id)
    // the user moves the put's target delta: the leg already chosen keeps its strike, the next one
    // is chosen by the new target (docs/trading.md "Wheel settings")
    await api.call('PATCH', `/wheels/${wheelStart.wheelId}`, { body: { putTargetDeltaBps: NEXT_PUT_DELTA_BPS } })
    await step('settings changed', `the put's target delta is ${NEXT_PUT_DELTA_BPS / 10_000} from the next leg on`)

    await exchange.advance({ ms: config.profile.makerWindowMs + MINUTE_MS })
    await step('clock: window over', `exchange time moved ${config.profile.makerWindowMs / MINUTE_MS + 1} min ahead`)
    const sold = await until('put sold', async () => {
      const p = await leg(wheelStart.id)()
      if (p?.state === 'open') return done(p)
      if (p && ['failed', 'cancelled'].includes(p.state)) throw new Error(`leg 1 ${p.state}: ${p.reason}`)
      return seen(`leg 1 ${p?.state ?? 'missing'}${p?.reason ? ` (${p.reason})` : ''}`)
    }, ['place'])
    await step(
      'put sold',
      `${trim(sold.filled)} contracts, premium ${trim(sold.premium)} USDC, fees ${trim(sold.fees)} USDC (exchange and platform)`,
    )

    const expiryMs = Date.parse(sold.expiry ?? '')
    if (!Number.isFinite(expiryMs)) throw new Error(`leg 1 has no expiry: ${JSON.stringify(sold)}`)
    await exchange.advance({ to: expiryMs + MINUTE_MS })
    await step('clock: past expiry', `exchange time moved to ${new Date(expiryMs + MINUTE_MS).toISOString()}`)
    const settled = await until('put settled', async () => {
      const p = await leg(wheelStart.id)()
      return p?.state === 'settled' ? done(p) : seen(`leg 1 ${p?.state ?? 'missing'}`)
    }, ['place'])
    await step(
      'put expired',
      `${settled.outcome === 'otm' ? 'out of the money: the premium is kept' : `in the money: settlement ${trim(settled.settlementCost)} USDC`}, realised ${trim(settled.realizedPnl)} USDC`,
    )

    const next = await until('next leg opened', async () => {
      const list = await positions(api)
      const w = list.wheels.find((x) => x.id === wheelStart.wheelId)
      const p = list.positions.find((x) => x.id === w?.currentPositionId)
      if (w && p && p.id !== wheelStart.id && p.state === 'placing' && p.instrument) return done({ w, p })
      return seen(`wheel cycles ${w?.cycles}, leg ${p?.state ?? 'none'}${w?.reason ? ` (${w.reason})` : ''}`)
    }, ['wheel', 'place'])
    await step(
      'next leg opened',
      `leg ${next.w.cycles}: ${next.p.side} ${next.p.instrument}, collateral ${trim(next.p.collateral)} USDC (leg 1's and its net premium)`,
    )
    await why(next.p.id)

    // --- 4. the withdrawal: requested, sent on chain (another chain's hot wallet refilled first) ----
    const payout = o.withdrawal ?? { chain: swept.chain, rpcUrl: o.rpcUrl, usdc: o.usdc }
    const payoutChain = createPublicClient({ transport: http(payout.rpcUrl) })
    const requested = await api.call<{ id: string }>('POST', '/withdrawals', {
      body: {
        chain: payout.chain,
        asset: 'USDC',
        amount: fromBaseUnits(amounts.withdrawUsdc, USDC_DECIMALS),
        destination: user.address,
      },
      headers: { 'idempotency-key': `demo-${randomUUID()}` },
    })
    await step('withdrawal requested', `${usdcText(amounts.withdrawUsdc)} to ${user.address} on ${payout.chain}`)
    if (payout.chain !== swept.chain) {
      const refill = await until('hot wallet refilled', async () => {
        const [b] = await sql<{ amount: string; fee: string }[]>`
            select payload->>'amount' as amount, payload->>'feeAmount' as fee from ledger_events
            where type = 'bridged' and payload->>'toChain' = ${payout.chain}
            order by recorded_at desc limit 1`
        return b ? done(b) : seen(`the ${payout.chain} hot wallet waits for its refill from L1`)
      }, ['treasury', 'refill', 'withdraw'])
      await step(
        'hot wallet refilled',
        `the treasury refilled ${payout.chain}'s hot wallet from L1 over CCTP: ${usdcText(BigInt(refill.amount) - BigInt(refill.fee))}`,
      )
    }
    const sent = await until('withdrawal sent', async () => {
      const { items } = await api.call<{ items: WithdrawalView[] }>('GET', '/withdrawals')
      const w = items.find((x) => x.id === requested.id)
      if (w?.state === 'failed') throw new Error(`the withdrawal failed: ${w.failureReason}`)
      return w?.state === 'sent' ? done(w) : seen(`withdrawal ${w?.state ?? 'missing'}`)
    }, ['withdraw'])
    const received = await payoutChain.readContract({
      address: payout.usdc,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [user.address],
    })
    await step('withdrawal sent', `tx ${sent.txHash}; the user's address holds ${usdcText(received)}`)

    // --- 5. the statement: the whole story in the journal --------------------------------------------
    const period = `from=${encodeURIComponent(new Date(Date.now() - 10 * MINUTE_MS).toISOString())}&to=${encodeURIComponent(
      new Date((await exchange.nowMs()) + 60 * MINUTE_MS).toISOString(),
    )}`
    const summary = await api.call<{ assets: AssetSummaryView[] }>('GET', `/portfolio/summary?${period}`)
    const statement = await api.call<{ rows: StatementRowView[] }>('GET', `/portfolio/statement?${period}&limit=100`)
    const final = await positions(api)
    return {
      user: user.address,
      depositAddress,
      steps,
      firstLeg: settled,
      secondLeg: next.p,
      wheel: final.wheels.find((w) => w.id === wheelStart.wheelId) ?? next.w,
      withdrawal: sent,
      receivedOnChainUsdc: received,
      usdc: summary.assets.find((a) => a.currency === 'USDC') as AssetSummaryView,
      statement: statement.rows,
      totalMs: performance.now() - started,
    }
  } finally {
    await nudger.close()
    connection.disconnect()
    await database.close()
  }
}

/** The report's last part as text: the USDC summary and the statement, one line per event. */
export function formatStatement(r: DemoReport): string {
  const u = r.usdc
  const lines = [
    `USDC: free ${u.freeBalance}, in subaccounts ${u.inSubaccounts}, pending withdrawals ${u.pendingWithdrawals}`,
    `      premium ${u.income.premium}, interest ${u.income.interest}, exchange fees ${u.expenses.exchangeFee}, ` +
      `settlement ${u.expenses.settlement}, net deposits ${u.netDeposits}, return ${u.periodReturn}`,
    '',
    "statement (GET /portfolio/statement): the user's own accounts",
  ]
  for (const row of r.statement) {
    const postings = row.postings
      .map(
        (p) =>
          `${p.account.replace(/^user:[^:]+:/, '')} ${p.amount.startsWith('-') ? '' : '+'}${p.amount} ${p.currency}`,
      )
      .join(', ')
    lines.push(`  ${row.occurredAt}  ${row.type.padEnd(20)} ${postings || "(no postings to the user's accounts)"}`)
  }
  return lines.join('\n')
}

// --- the pieces ------------------------------------------------------------------------------------

type Tick =
  | 'deposit-scan'
  | 'deposit-sweep'
  | 'bridge'
  | 'fund'
  | 'place'
  | 'wheel'
  | 'withdraw'
  | 'treasury'
  | 'refill'

/** Which of the worker's ticks (apps/worker/src/jobs/index.ts) each waiting step runs at once. */
const TICK_NAMES: Record<Tick, (name: string) => boolean> = {
  'deposit-scan': (n) => n.startsWith('deposits-scan-'),
  'deposit-sweep': (n) => n === 'deposits-sweep',
  bridge: (n) => n.startsWith('bridge-'),
  fund: (n) => n === 'exchange-fund',
  place: (n) => n === 'trading-place',
  wheel: (n) => n === 'trading-wheel',
  withdraw: (n) => n === 'withdrawals-send',
  treasury: (n) => n === 'treasury-ethereum',
  refill: (n) => n.startsWith('cctp-refill-'),
}

/**
 * Adds a job of a tick to its queue, as the tick's scheduler does each period: the running worker
 * processes it like any other. One fixed job id per tick, removed once done, so at most one such
 * job waits per tick however often a step polls.
 */
class TickNudger {
  readonly #queues = new Map<QueueKey, Queue>()
  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
  ) {}
  async run(which: readonly Tick[]): Promise<void> {
    for (const t of which) {
      const matched = ticks.filter((d) => d.everyMs !== undefined && TICK_NAMES[t](d.name))
      if (matched.length === 0) throw new Error(`no scheduled worker tick matches "${t}"`)
      for (const d of matched) {
        let q = this.#queues.get(d.queue)
        if (!q) {
          q = new Queue(QUEUES[d.queue], { connection: this.connection, prefix: this.prefix })
          this.#queues.set(d.queue, q)
        }
        const jobId = `demo-now.${d.name}`
        await q.add(d.name, {}, { jobId, removeOnComplete: true, removeOnFail: true })
        await this.#finished(q, jobId)
      }
    }
  }
  /**
   * Waits (a few seconds at most) until the nudged run is done, so the next nudge starts after it: two
   * exchange ticks nudged at once would meet at the exchange cycle lock every time, and the one that
   * finds it taken skips its run (as a scheduled tick does when it meets another: docs/architecture.md).
   */
  async #finished(q: Queue, jobId: string): Promise<void> {
    const deadline = performance.now() + NUDGE_WAIT_MS
    while (performance.now() < deadline && (await q.getJob(jobId)) !== undefined)
      await new Promise((r) => setTimeout(r, 10))
  }
  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close()))
  }
}

/**
 * The simulator's clock: read through Derive's `public/get_time`, moved through the control API. `url`
 * is the exchange's v3 base (…/v3); the control API sits at the server's root.
 */
class SimulatorControl {
  constructor(private readonly url: string) {}
  async nowMs(): Promise<number> {
    const res = await fetch(`${this.url}/public/get_time`, { method: 'POST', body: '{}' })
    const body = (await res.json()) as { result?: number }
    if (typeof body.result !== 'number') throw new Error(`public/get_time answered ${JSON.stringify(body)}`)
    return body.result
  }
  async advance(by: { ms: number } | { to: number }): Promise<number> {
    const res = await fetch(new URL('/_sim/advance', this.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(by),
    })
    if (!res.ok) throw new Error(`POST /_sim/advance answered ${res.status}: ${await res.text()}`)
    return ((await res.json()) as { now: number }).now
  }
}

/** The user's side: JSON over HTTP with their bearer token. */
class DemoApi {
  token: string | undefined
  constructor(private readonly base: string) {}
  async call<T>(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    o: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<T> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(o.body !== undefined && { 'content-type': 'application/json' }),
        ...(this.token && { authorization: `Bearer ${this.token}` }),
        ...o.headers,
      },
      ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
    })
    const text = await res.text()
    if (!res.ok) throw new DemoApiError(res.status, text, `${method} ${path}`)
    return JSON.parse(text) as T
  }
}

async function usdcSummary(api: DemoApi): Promise<AssetSummaryView | undefined> {
  const { assets } = await api.call<{ assets: AssetSummaryView[] }>('GET', '/portfolio/summary')
  return assets.find((a) => a.currency === 'USDC')
}

function positions(api: DemoApi) {
  return api.call<{ wheels: WheelView[]; positions: PositionView[] }>('GET', '/positions?limit=20')
}

/** A decimal string without the zeros after its last significant digit, for reading (never for sums). */
function trim(decimal: string | null): string {
  if (decimal === null) return '-'
  return decimal.includes('.') ? decimal.replace(/0+$/, '').replace(/\.$/, '') : decimal
}

/** What a step's probe saw: done with a value, or an intermediate state to report. */
type Probe<T> = { readonly done: T } | { readonly seen: string }
const done = <T>(value: T): Probe<T> => ({ done: value })
const seen = (what: string): Probe<never> => ({ seen: what })

/**
 * Polls `probe` (running `nudge` first each time) until it is done, or throws after `timeoutMs`;
 * tells `onSeen` each new intermediate state.
 */
async function poll<T>(
  name: string,
  timeoutMs: number,
  probe: () => Promise<Probe<T>>,
  nudge?: () => Promise<void>,
  onSeen?: (seen: string) => void,
): Promise<T> {
  const deadline = performance.now() + timeoutMs
  let seen = 'nothing yet'
  for (;;) {
    await nudge?.()
    const r = await probe()
    if ('done' in r) return r.done
    if (r.seen !== seen) onSeen?.(r.seen)
    seen = r.seen
    if (performance.now() > deadline) throw new DemoStepTimeoutError(name, seen, timeoutMs)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}
