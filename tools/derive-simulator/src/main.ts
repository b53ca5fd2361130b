/**
 * Runs the simulator for the local stack: `tsx src/main.ts [port] [chainId] [host] [--still]
 * [--no-time-travel]` (host 127.0.0.1 by default; the Compose stack passes 0.0.0.0 so other
 * containers reach it). It serves Derive v3 at /v3 and /v3/ws, the control API under /_sim/. Time
 * follows the wall clock (POST /_sim/advance jumps ahead, unless `--no-time-travel`: a run whose
 * worker signs with the wall clock, which a moved exchange clock would refuse), and prices move:
 * every WALK.intervalMs each index takes a step of a seeded random walk (`--still` keeps them where
 * POST /_sim/set_price puts them). Rate limits are on, at the simulator's own figures (RATE_LIMITS).
 * Reads only argv: configuration from the environment belongs to packages/config.
 */
import { startDeriveSimulator } from './server'

/** 80% a year, a step every 2 s: a few cents to a dollar on ETH per step, visible in the console */
const WALK = { intervalMs: 2_000, annualVolatility: 0.8, seed: 1 }
/** What v3 charges for creating a subaccount, as Derive does ("1 USD standard", docs/exchange-v3.md "Movements on v3") */
const CREATION_FEE_USD = '1'

/**
 * Per 5-second window (Derive's refill period, rate-limit.ts): generous enough for the local run's
 * worker and its accounting runs, low enough that a runaway loop meets -32000 as it would on Derive.
 */
const RATE_LIMITS = { windowMs: 5_000, matching: 500, nonMatching: 2_500, endpoint: 50, custom: 50 }

const still = process.argv.includes('--still')
const timeTravel = !process.argv.includes('--no-time-travel')
const [portArg, chainArg, hostArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const port = Number(portArg ?? 8787)
const chainId = Number(chainArg ?? 957)
if (!Number.isInteger(port) || !Number.isInteger(chainId)) {
  console.error('usage: main.ts [port] [chainId] [host] [--still] [--no-time-travel]')
  process.exit(2)
}
const sim = await startDeriveSimulator({
  port,
  chainId,
  clock: 'wall',
  subaccountCreationFeeUsd: CREATION_FEE_USD,
  rateLimits: RATE_LIMITS,
  timeTravel,
  ...(hostArg && { host: hostArg }),
  ...(!still && { walk: WALK }),
})
console.log(
  JSON.stringify({
    msg: 'derive simulator listening',
    v3HttpUrl: sim.v3HttpUrl,
    v3WsUrl: sim.v3WsUrl,
    controlUrl: `${sim.httpUrl}/_sim/`,
    chainId,
    walk: !still,
    timeTravel,
  }),
)
const stop = () => {
  sim.close().then(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
