/**
 * The hostile RPC proxy as its own process: `node --import tsx rpc-proxy-main.ts <upstream URL>`.
 * Prints the address it listens on (a free loopback port) and never the upstream URL, which may
 * carry a provider key. Stops on SIGTERM or SIGINT.
 */
import { createRpcProxyServer } from './rpc-proxy'

const [upstream] = process.argv.slice(2)
if (!upstream) {
  console.error('usage: rpc-proxy-main.ts <upstream JSON-RPC URL>')
  process.exit(2)
}
const proxy = await createRpcProxyServer({ upstream })
console.log(`rpc-proxy listening on ${proxy.url}`)
const stop = () => {
  proxy.close().then(() => process.exit(0))
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
