/**
 * The Derive simulator of the Compose stack: packages/exchange/src/simulator/main.ts, but listening
 * on every interface (main.ts binds 127.0.0.1, out of reach of the other containers).
 * `node --import tsx simulator.ts [port] [chainId] [host]`, run from the deployed @wh/exchange.
 */
import { startDeriveSimulator } from '@wh/exchange'

const [portArg, chainArg, hostArg] = process.argv.slice(2)
const port = Number(portArg ?? 7070)
const chainId = Number(chainArg ?? 901)
const host = hostArg ?? '0.0.0.0'
if (!Number.isInteger(port) || !Number.isInteger(chainId)) {
  console.error('usage: simulator.ts [port] [chainId] [host]')
  process.exit(2)
}
const sim = await startDeriveSimulator({ port, chainId, host, clock: 'wall' })
console.log(JSON.stringify({ msg: 'derive simulator listening', httpUrl: sim.httpUrl, wsUrl: sim.wsUrl, chainId }))
const stop = () => {
  sim.close().then(() => process.exit(0))
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
