/**
 * Runs the simulator for the local stack: `tsx src/main.ts [port] [chainId] [host]
 * [--still]` (host 127.0.0.1 by default; the Compose stack passes 0.0.0.0 so other containers
 * reach it). It serves Derive v3 at /v3 and /v3/ws, the control API under /_sim/. Time follows
 * the wall clock (POST /_sim/advance jumps ahead), and prices move: every WALK.intervalMs each
 * index takes a step of a seeded random walk (`--still` keeps them where POST /_sim/set_price puts them). Reads only argv: configuration from the environment belongs to
 * packages/config.
 */
import { startDeriveSimulator } from './server'

/** 80% a year, a step every 2 s: a few cents to a dollar on ETH per step, visible in the console */
const WALK = { intervalMs: 2_000, annualVolatility: 0.8, seed: 1 }
/** What v3 charges for creating a subaccount, as Derive does ("1 USD standard", docs/exchange-v3.md "Movements on v3") */
const CREATION_FEE_USD = '1'

const still = process.argv.includes('--still')
const [portArg, chainArg, hostArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'))
const port = Number(portArg ?? 8787)
const chainId = Number(chainArg ?? 957)
if (!Number.isInteger(port) || !Number.isInteger(chainId)) {
  console.error('usage: main.ts [port] [chainId] [host]')
  process.exit(2)
}
const sim = await startDeriveSimulator({
  port,
  chainId,
  clock: 'wall',
  subaccountCreationFeeUsd: CREATION_FEE_USD,
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
  }),
)
const stop = () => {
  sim.close().then(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
