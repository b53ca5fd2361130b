/**
 * What Derive's rules cost on the simulator's wire (docs/exchange.md "What the simulator enforces"):
 * signed orders by a scoped session key (signature, scope, subaccount, expiry, nonce window, max_fee
 * floor, rate limit) and authenticated reads (login signature, key expiry, read permission), through
 * the service's own client over HTTP, the simulator in this process. Printed as a table.
 *
 *   pnpm --filter @wh/derive-simulator run bench [orders=400] [reads=1000]
 */
import { DeriveClient, optionName } from '@wh/exchange'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startDeriveSimulator } from '../src/index'

const [ordersArg, readsArg] = process.argv.slice(2)
const ORDERS = Number(ordersArg ?? 400)
const READS = Number(readsArg ?? 1000)
const START = Date.UTC(2026, 0, 5, 0, 0)
const PUT = optionName('ETH', Date.UTC(2026, 0, 5, 8) / 1000, '2900', 'P')

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

async function timed(n: number, concurrency: number, f: (i: number) => Promise<unknown>) {
  const took: number[] = []
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < n; i = next++) {
        const s = performance.now()
        await f(i)
        took.push(performance.now() - s)
      }
    }),
  )
  const ms = performance.now() - t0
  took.sort((a, b) => a - b)
  return { perSec: Math.round((n * 1000) / ms), p50: pct(took, 50).toFixed(1), p95: pct(took, 95).toFixed(1) }
}

async function run(rateLimits: boolean) {
  const sim = await startDeriveSimulator({
    chainId: 901,
    startMs: START,
    ...(rateLimits && {
      rateLimits: { windowMs: 5_000, matching: 1_000_000, nonMatching: 1_000_000, endpoint: 1_000, custom: 1_000 },
    }),
  })
  const ownerKey = generatePrivateKey()
  const owner = privateKeyToAccount(ownerKey).address
  const key = generatePrivateKey()
  sim.control.registerWallet({
    wallet: owner,
    sessionKeys: [{ address: privateKeyToAccount(key).address, scopes: ['trade:orderbook:option', 'transfer:all'] }],
  })
  sim.control.setPrice('ETH', '3000')
  const sub = sim.control.openSubaccount(owner, { USDC: '100000000' })
  const client = new DeriveClient({
    httpUrl: sim.v3HttpUrl,
    wallet: owner,
    sessionKey: key,
    chainId: 901,
    clock: { now: () => new Date(sim.control.nowMs()) },
    retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
  })
  await client.getInstrument(PUT)
  const order = () =>
    client.order({
      subaccount_id: sub,
      instrument_name: PUT,
      direction: 'sell',
      amount: '0.1',
      limit_price: '9000',
      max_fee: '10',
      time_in_force: 'post_only',
    })
  // reads first, on a subaccount with nothing resting (what a read costs grows with its open orders)
  const rows = [
    { what: 'authenticated reads (8 at a time)', ...(await timed(READS, 8, () => client.getSubaccount(sub))) },
    { what: 'signed orders (1 at a time)', ...(await timed(ORDERS / 2, 1, order)) },
    { what: 'signed orders (8 at a time)', ...(await timed(ORDERS / 2, 8, order)) },
  ]
  await sim.close()
  return rows.map((r) => ({ ...r, rateLimits: rateLimits ? 'on' : 'off' }))
}

const rows = [...(await run(false)), ...(await run(true))]
console.log(`derive-simulator rules: ${ORDERS} orders, ${READS} reads per run (the simulator in this process)`)
console.table(
  rows.map((r) => ({ what: r.what, 'rate limits': r.rateLimits, 'per s': r.perSec, 'p50 ms': r.p50, 'p95 ms': r.p95 })),
)
process.exit(0)
