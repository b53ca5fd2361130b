/**
 * The local attester as a program (the local run and the Compose stack; docs/chains.md "The L2 route"):
 * `node --import tsx src/main.ts [port] [host]` (default 7080 on 127.0.0.1). It knows no chain until the
 * setup tells it (`POST /_attester/watch`), and keeps nothing across restarts but what it is told.
 * Flags: `--standard-delay-ms N`, `--fast-delay-ms N` (how long Iris takes, scaled down for the local run).
 */
import { startCctpAttester } from './attester'

const args = process.argv.slice(2)
const flag = (name: string): number | undefined => {
  const i = args.indexOf(name)
  return i >= 0 ? Number(args[i + 1]) : undefined
}
const positional = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'))
const port = Number(positional[0] ?? 7080)
const host = positional[1] ?? '127.0.0.1'
const standardDelayMs = flag('--standard-delay-ms')
const fastDelayMs = flag('--fast-delay-ms')
const attester = await startCctpAttester({
  port,
  host,
  settings: {
    ...(standardDelayMs !== undefined && { standardDelayMs }),
    ...(fastDelayMs !== undefined && { fastDelayMs }),
  },
})
console.log(JSON.stringify({ msg: 'cctp attester listening', url: attester.url, attester: attester.address }))
const stop = () => void attester.close().then(() => process.exit(0))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
