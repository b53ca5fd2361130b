/**
 * A real local EVM node for tests, benchmarks and the local run: `anvil` from the npm package
 * `@foundry-rs/anvil`, whose per-platform optional dependency ships the binary, so nothing is
 * downloaded from anywhere but the npm registry. Ready in well under a second.
 *
 * The dev accounts are TEST_MNEMONIC's (TEST_PRIVATE_KEYS), each funded with 10,000 ETH.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { TEST_MNEMONIC } from './env'

/** Anvil's own default; also the chain id of Hardhat's node. */
export const DEFAULT_CHAIN_ID = 31_337
const READY_TIMEOUT_MS = 20_000
const STOP_TIMEOUT_MS = 5_000

export interface RunningChain {
  readonly rpcUrl: string
  readonly chainId: number
  readonly port: number
  stop(): Promise<void>
}

export interface StartChainOptions {
  chainId?: number
  /** Mine a block every this many seconds; omitted, every transaction is mined at once (automine). */
  blockTimeSeconds?: number
  /** dev accounts derived from TEST_MNEMONIC; default 10 */
  accounts?: number
  /** a fixed port (the local run); default: one the node picks */
  port?: number
  /**
   * recent states kept in memory (default KEPT_STATES): reads at a past block (a balance or a nonce
   * at confirmed depth, a lagging RPC backend) and transaction traces need them
   */
  keptStates?: number
  /** the first block's base fee (anvil's `--block-base-fee-per-gas`): a chain with expensive gas */
  baseFeePerGasWei?: bigint
}

/** States anvil keeps in memory by default: enough for reads at confirmed depth and for traces. */
export const KEPT_STATES = 256

/** The anvil binary inside the platform package that `@foundry-rs/anvil` depends on. */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url)
  const wrapperDir = dirname(require.resolve('@foundry-rs/anvil/package.json'))
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch]
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${arch ?? process.arch}`
  const fromWrapper = createRequire(join(wrapperDir, 'package.json'))
  const binary = join(
    dirname(fromWrapper.resolve(`${platformPackage}/package.json`)),
    'bin',
    process.platform === 'win32' ? 'anvil.exe' : 'anvil',
  )
  if (!existsSync(binary)) throw new Error(`anvil binary not found at ${binary} (is ${platformPackage} installed?)`)
  return binary
}

const LISTENING = /Listening on ([\d.]+):(\d+)/

/**
 * Starts a fresh anvil on a free loopback port (the node picks it: `--port 0`, then we read
 * the port it announces, so parallel test files never race for one).
 *
 * `--prune-history N` keeps the last N states in memory only; without it anvil writes about 100 MB
 * per run under the home folder. Blocks, transactions and receipts stay queryable, and so do
 * balances, nonces and traces at the last N blocks (a bare `--prune-history` keeps no past state).
 *
 * @example
 *   const chain = await startChain({ chainId: 8453 })
 *   const client = createPublicClient({ transport: http(chain.rpcUrl) })
 *   await chain.stop()
 */
export async function startChain(opts: StartChainOptions = {}): Promise<RunningChain> {
  const chainId = opts.chainId ?? DEFAULT_CHAIN_ID
  const args = [
    '--host',
    '127.0.0.1',
    '--port',
    String(opts.port ?? 0),
    '--chain-id',
    String(chainId),
    '--mnemonic',
    TEST_MNEMONIC,
    '--accounts',
    String(opts.accounts ?? 10),
    '--prune-history',
    String(opts.keptStates ?? KEPT_STATES),
  ]
  if (opts.blockTimeSeconds !== undefined) args.push('--block-time', String(opts.blockTimeSeconds))
  if (opts.baseFeePerGasWei !== undefined) args.push('--block-base-fee-per-gas', opts.baseFeePerGasWei.toString())
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`anvil did not start within ${READY_TIMEOUT_MS} ms: ${output}`)),
      READY_TIMEOUT_MS,
    )
    function fail(e: Error) {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(e)
    }
    const onData = (d: Buffer) => {
      output = (output + String(d)).slice(-4000)
      const m = LISTENING.exec(output)
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[2]))
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('error', fail)
    child.once('exit', (code, signal) => fail(new Error(`anvil exited (${code ?? signal}): ${output}`)))
  })
  // Past the banner, keep draining the pipes so the node never blocks on a full one.
  child.stdout?.removeAllListeners('data').resume()
  child.stderr?.removeAllListeners('data').resume()
  child.removeAllListeners('exit')
  const rpcUrl = `http://127.0.0.1:${port}`
  const reported = await rpcChainId(rpcUrl)
  if (reported !== chainId) {
    await stopChild(child)
    throw new Error(`anvil reports chain id ${reported}, expected ${chainId}`)
  }
  return { rpcUrl, chainId, port, stop: () => stopChild(child) }
}

async function rpcChainId(rpcUrl: string): Promise<number> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  })
  const body = (await res.json()) as { result?: string }
  return Number(body.result)
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const t = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
    child.once('exit', () => {
      clearTimeout(t)
      resolve()
    })
    child.kill('SIGTERM')
  })
}
