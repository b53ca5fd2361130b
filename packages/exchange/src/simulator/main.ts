/**
 * Runs the simulator for the local stack: `tsx src/simulator/main.ts [port] [chainId] [host]` (host
 * 127.0.0.1 by default; the Compose stack passes 0.0.0.0 so other containers reach it).
 * Time follows the wall clock (POST /_sim/advance jumps ahead). Reads only argv: configuration
 * from the environment belongs to packages/config.
 */
import { startDeriveSimulator } from './server'

const [portArg, chainArg, hostArg] = process.argv.slice(2)
const port = Number(portArg ?? 8787)
const chainId = Number(chainArg ?? 957)
if (!Number.isInteger(port) || !Number.isInteger(chainId)) {
  console.error('usage: main.ts [port] [chainId] [host]')
  process.exit(2)
}
const sim = await startDeriveSimulator({ port, chainId, clock: 'wall', ...(hostArg && { host: hostArg }) })
console.log(JSON.stringify({ msg: 'derive simulator listening', httpUrl: sim.httpUrl, wsUrl: sim.wsUrl, chainId }))
const stop = () => {
  sim.close().then(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
