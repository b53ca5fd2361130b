/**
 * A hostile JSON-RPC proxy in front of a node, for tests that play the world as it is
 * (docs/hostile-world.md "The hostile RPC proxy"): a provider whose load balancer answers from
 * backends at different heights, a backend that has not indexed a receipt yet, rate limits and
 * 5xx, requests that hang past the client's timeout.
 *
 * `startRpcProxy({ upstream })` runs it as its own process (rpc-proxy-main.ts), so worker processes
 * under test and the test itself see one proxy; the test scripts it through a control endpoint.
 * `createRpcProxyServer` is the same proxy in this process.
 *
 * Rules are matched in order, per JSON-RPC call (each call of a batch on its own), by method name or
 * '*'; `after` skips the first N matching calls, `every` applies the rule to one call in N only
 * (intermittent faults), `times` applies it N times, then it expires.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export type ProxyAction =
  /** answer as a backend whose head is the upstream's minus `blocks` */
  | { readonly lag: { readonly blocks: number } }
  /** receipts and transactions mined in the last `blocks` blocks (or pending) are not found */
  | { readonly nullRecent: { readonly blocks: number } }
  /** the whole HTTP request that holds this call fails with `status` */
  | { readonly httpError: { readonly status: number } }
  /** this call answers a JSON-RPC error */
  | { readonly rpcError: { readonly code: number; readonly message: string } }
  /** the HTTP request is never answered */
  | { readonly hang: true }
  /** consecutive matching calls alternate between the head and a lag of `blocks` */
  | { readonly flipFlop: { readonly blocks: number } }
  /** the answer comes after `delayMs` */
  | { readonly delayMs: number }
  /**
   * eth_getLogs over more than `blocks` blocks is refused as hosted providers refuse it (-32005, "query
   * exceeds max block range"); narrower ranges and other methods are the node's
   */
  | { readonly maxLogRange: { readonly blocks: number } }

export interface ProxyRule {
  /** a JSON-RPC method, or '*' for every call */
  readonly method: string
  readonly action: ProxyAction
  /** the rule skips this many matching calls first */
  readonly after?: number
  /** the rule applies to this many matching calls, then expires */
  readonly times?: number
  /** the rule applies to one matching call in `every` (the every-th, then every every-th): intermittent faults */
  readonly every?: number
}

export interface MethodStats {
  seen: number
  forwarded: number
  intercepted: number
}

interface LiveRule {
  rule: ProxyRule
  matched: number
  applied: number
}

interface RpcCall {
  jsonrpc?: string
  id?: unknown
  method: string
  params?: unknown[]
}

interface RpcAnswer {
  jsonrpc: '2.0'
  id: unknown
  result?: unknown
  error?: { code: number; message: string }
}

const hex = (n: bigint) => `0x${n.toString(16)}`
const TAGS = new Set(['latest', 'pending', 'safe', 'finalized'])
/** The position of the block parameter of the state reads a lagging backend answers from the past. */
const BLOCK_PARAM: Record<string, number> = {
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getCode: 1,
  eth_call: 1,
  eth_estimateGas: 1,
  eth_getStorageAt: 2,
}

export interface RpcProxyServer {
  readonly url: string
  script(rules: readonly ProxyRule[]): void
  reset(): void
  stats(): Record<string, MethodStats>
  close(): Promise<void>
}

/** The proxy's scripted state: its rules, its counters, the requests it leaves hanging. */
interface ProxyState {
  rules: LiveRule[]
  readonly stats: Record<string, MethodStats>
  readonly hanging: Set<ServerResponse>
  /** per flip-flop rule: the calls it has answered */
  readonly flips: WeakMap<LiveRule, number>
}

/** The node behind the proxy. */
interface Upstream {
  call(method: string, params: unknown[]): Promise<RpcAnswer>
  /** its head block number */
  head(): Promise<bigint>
}

function upstreamAt(url: string): Upstream {
  let nextUpstreamId = 1
  const call = async (method: string, params: unknown[]): Promise<RpcAnswer> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextUpstreamId++, method, params }),
    })
    return (await res.json()) as RpcAnswer
  }
  return { call, head: async () => BigInt((await call('eth_blockNumber', [])).result as string) }
}

const withId = (a: RpcAnswer, id: unknown): RpcAnswer => ({ ...a, jsonrpc: '2.0', id })

/** The call as the upstream answers it. */
const forward = (up: Upstream, call: RpcCall): Promise<RpcAnswer> =>
  up.call(call.method, call.params ?? []).then((a) => withId(a, call.id))

// --- the rule matching ---

function liveRules(rules: readonly ProxyRule[]): LiveRule[] {
  return rules.map((rule) => ({ rule, matched: 0, applied: 0 }))
}

/** The first rule that applies to this call of `method`, counting the call against every rule it matches. */
function ruleFor(rules: readonly LiveRule[], method: string): LiveRule | undefined {
  for (const r of rules) {
    if (r.rule.method !== '*' && r.rule.method !== method) continue
    if (r.rule.times !== undefined && r.applied >= r.rule.times) continue
    r.matched++
    const after = r.rule.after ?? 0
    if (r.matched <= after) continue
    if (r.rule.every !== undefined && (r.matched - after) % r.rule.every !== 0) continue
    r.applied++
    return r
  }
  return undefined
}

// --- the actions ---

/** A block parameter as a backend whose head is `at` reads it: tags no higher than `at`. */
function blockResolver(up: Upstream, at: bigint): (tag: unknown) => Promise<bigint> {
  return async (tag) => {
    if (typeof tag === 'string' && TAGS.has(tag)) {
      if (tag === 'safe' || tag === 'finalized') {
        const b = (await up.call('eth_getBlockByNumber', [tag, false])).result as { number: string } | null
        const n = b ? BigInt(b.number) : 0n
        return n < at ? n : at
      }
      return at
    }
    if (typeof tag === 'string' && tag.startsWith('0x')) return BigInt(tag)
    return at
  }
}

/** eth_getLogs refused past `blocks` blocks (the `maxLogRange` action); anything else forwarded. */
async function rangeLimited(up: Upstream, call: RpcCall, blocks: number): Promise<RpcAnswer> {
  const f = (call.params?.[0] ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown }
  if (call.method !== 'eth_getLogs' || f.blockHash !== undefined) return forward(up, call)
  const resolveTag = blockResolver(up, await up.head())
  const span = (await resolveTag(f.toBlock ?? 'latest')) - (await resolveTag(f.fromBlock ?? 'latest')) + 1n
  if (span <= BigInt(blocks)) return forward(up, call)
  const message = `query exceeds max block range ${blocks}`
  return { jsonrpc: '2.0', id: call.id, error: { code: -32005, message } }
}

/** A call answered by a backend `lagBlocks` behind the upstream head (the `lag` action). */
async function lagged(up: Upstream, call: RpcCall, lagBlocks: number): Promise<RpcAnswer> {
  const params = [...(call.params ?? [])]
  const head = await up.head()
  const at = head > BigInt(lagBlocks) ? head - BigInt(lagBlocks) : 0n
  const answer = (result: unknown): RpcAnswer => ({ jsonrpc: '2.0', id: call.id, result })
  const resolveTag = blockResolver(up, at)
  switch (call.method) {
    case 'eth_blockNumber':
      return answer(hex(at))
    case 'eth_getBlockByNumber': {
      const n = await resolveTag(params[0])
      if (n > at) return answer(null)
      return withId(await up.call(call.method, [hex(n), params[1] ?? false]), call.id)
    }
    case 'eth_getTransactionReceipt':
    case 'eth_getTransactionByHash': {
      const a = await up.call(call.method, params)
      const r = a.result as { blockNumber?: string | null } | null
      if (!r || r.blockNumber === null || r.blockNumber === undefined || BigInt(r.blockNumber) > at) return answer(null)
      return withId(a, call.id)
    }
    case 'eth_getLogs': {
      const f = { ...(params[0] as Record<string, unknown>) }
      if (f.blockHash === undefined) {
        const from = await resolveTag(f.fromBlock ?? 'latest')
        const to = await resolveTag(f.toBlock ?? 'latest')
        if (from > at) return answer([])
        f.fromBlock = hex(from)
        f.toBlock = hex(to > at ? at : to)
      }
      return withId(await up.call(call.method, [f]), call.id)
    }
    default: {
      const i = BLOCK_PARAM[call.method]
      if (i !== undefined) {
        const n = await resolveTag(params[i] ?? 'latest')
        params[i] = hex(n > at ? at : n)
        return withId(await up.call(call.method, params), call.id)
      }
      return withId(await up.call(call.method, params), call.id)
    }
  }
}

/** The `nullRecent` action on a receipt or transaction read: not found when mined in the last `blocks`. */
async function nullRecent(up: Upstream, call: RpcCall, blocks: number): Promise<RpcAnswer> {
  const [a, head] = await Promise.all([up.call(call.method, call.params ?? []), up.head()])
  const r = a.result as { blockNumber?: string | null } | null
  const recent =
    !!r && (r.blockNumber === null || r.blockNumber === undefined || BigInt(r.blockNumber) > head - BigInt(blocks))
  return recent ? { jsonrpc: '2.0', id: call.id, result: null } : withId(a, call.id)
}

type Plan = { kind: 'answer'; answer: Promise<RpcAnswer> } | { kind: 'http'; status: number } | { kind: 'hang' }

/** What one call gets, and after how long. */
interface CallPlan {
  readonly plan: Plan
  readonly delayMs: number
}

const answering = (answer: Promise<RpcAnswer>, delayMs = 0): CallPlan => ({ plan: { kind: 'answer', answer }, delayMs })

/** What the action of `live` does to `call`. */
function act(state: ProxyState, up: Upstream, call: RpcCall, live: LiveRule): CallPlan {
  const a = live.rule.action
  if ('lag' in a) return answering(lagged(up, call, a.lag.blocks))
  if ('nullRecent' in a) {
    const m = call.method
    if (m === 'eth_getTransactionReceipt' || m === 'eth_getTransactionByHash')
      return answering(nullRecent(up, call, a.nullRecent.blocks))
    return answering(forward(up, call))
  }
  if ('httpError' in a) return { plan: { kind: 'http', status: a.httpError.status }, delayMs: 0 }
  if ('rpcError' in a) return answering(Promise.resolve({ jsonrpc: '2.0', id: call.id, error: { ...a.rpcError } }))
  if ('hang' in a) return { plan: { kind: 'hang' }, delayMs: 0 }
  if ('maxLogRange' in a) return answering(rangeLimited(up, call, a.maxLogRange.blocks))
  if ('flipFlop' in a) {
    const n = state.flips.get(live) ?? 0
    state.flips.set(live, n + 1)
    return answering(n % 2 === 0 ? forward(up, call) : lagged(up, call, a.flipFlop.blocks))
  }
  return answering(forward(up, call), a.delayMs)
}

/** Counts the call, then forwards it or hands it to the first rule that applies. */
function plan(state: ProxyState, up: Upstream, call: RpcCall): CallPlan {
  const s = state.stats[call.method] ?? { seen: 0, forwarded: 0, intercepted: 0 }
  state.stats[call.method] = s
  s.seen++
  const live = ruleFor(state.rules, call.method)
  if (!live) {
    s.forwarded++
    return answering(forward(up, call))
  }
  s.intercepted++
  return act(state, up, call, live)
}

// --- the HTTP plumbing ---

/** A JSON-RPC request (one call or a batch): a scripted HTTP failure or hang for all, else the answers. */
async function handleRpc(state: ProxyState, up: Upstream, req: IncomingMessage, res: ServerResponse, body: string) {
  let parsed: RpcCall | RpcCall[]
  try {
    parsed = JSON.parse(body) as RpcCall | RpcCall[]
  } catch {
    return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
  }
  const calls = Array.isArray(parsed) ? parsed : [parsed]
  const plans = calls.map((call) => plan(state, up, call))
  const failing = plans.find((p) => p.plan.kind === 'http')
  if (failing?.plan.kind === 'http') {
    const status = failing.plan.status
    res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 && { 'retry-after': '1' }) })
    res.end(JSON.stringify({ error: `proxy: ${status}` }))
    return
  }
  if (plans.some((p) => p.plan.kind === 'hang')) {
    state.hanging.add(res)
    req.on('close', () => state.hanging.delete(res))
    return
  }
  const delayMs = Math.max(0, ...plans.map((p) => p.delayMs))
  const answers = await Promise.all(plans.map((p) => (p.plan.kind === 'answer' ? p.plan.answer : undefined)))
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))
  send(res, 200, Array.isArray(parsed) ? answers : answers[0])
}

/** The control endpoint (/_proxy/rules, /_proxy/reset, /_proxy/stats) that startRpcProxy's handle speaks. */
async function handleControl(state: ProxyState, path: string, res: ServerResponse, body: string) {
  if (path === '/_proxy/rules') {
    state.rules = liveRules((JSON.parse(body) as { rules: ProxyRule[] }).rules ?? [])
    return send(res, 200, { ok: true })
  }
  if (path === '/_proxy/reset') {
    resetState(state)
    return send(res, 200, { ok: true })
  }
  if (path === '/_proxy/stats') return send(res, 200, state.stats)
  return send(res, 404, { error: 'unknown control' })
}

/** No rules, no counters, the hanging requests dropped. */
function resetState(state: ProxyState): void {
  state.rules = []
  for (const k of Object.keys(state.stats)) delete state.stats[k]
  for (const res of state.hanging) res.destroy()
  state.hanging.clear()
}

/** The HTTP server: reads each request's body, then routes it to the control endpoint or the RPC. */
function proxyServer(state: ProxyState, up: Upstream): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const path = (req.url ?? '/').split('?')[0] ?? '/'
      const handled = path.startsWith('/_proxy/')
        ? handleControl(state, path, res, body)
        : handleRpc(state, up, req, res, body)
      handled.catch((err: unknown) => {
        // the upstream failed (not a scripted fault): a gateway error, as a provider would answer
        if (!res.headersSent) send(res, 502, { error: `proxy: upstream failed: ${(err as Error).name}` })
      })
    })
  })
}

/**
 * The proxy, serving in this process.
 *
 * @example
 *   const p = await createRpcProxyServer({ upstream: chain.rpcUrl })
 *   p.script([{ method: 'eth_getTransactionReceipt', action: { nullRecent: { blocks: 5 } } }])
 */
export async function createRpcProxyServer(o: { upstream: string; port?: number }): Promise<RpcProxyServer> {
  const state: ProxyState = { rules: [], stats: {}, hanging: new Set(), flips: new WeakMap() }
  const server = proxyServer(state, upstreamAt(o.upstream))
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    script(r) {
      state.rules = liveRules(r)
    },
    reset: () => resetState(state),
    stats: () => structuredClone(state.stats),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of state.hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

/** The proxy in its own process, driven through its control endpoint. */
export interface RpcProxy {
  /** where clients send JSON-RPC (the worker's RPC_URL_* in a test) */
  readonly url: string
  script(rules: readonly ProxyRule[]): Promise<void>
  /** no rules, counters at zero, hanging requests dropped */
  reset(): Promise<void>
  stats(): Promise<Record<string, MethodStats>>
  stop(): Promise<void>
}

const LISTENING = /^rpc-proxy listening on (http:\/\/127\.0\.0\.1:\d+)$/m
const READY_TIMEOUT_MS = 20_000
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..')

/**
 * Starts the proxy as its own process in front of `upstream`.
 *
 * @example
 *   const proxy = await startRpcProxy({ upstream: chain.rpcUrl })
 *   await proxy.script([{ method: 'eth_getTransactionReceipt', action: { nullRecent: { blocks: 3 } } }])
 *   // … point RPC_URL_ETHEREUM at proxy.url …
 *   await proxy.stop()
 */
export async function startRpcProxy(o: { upstream: string }): Promise<RpcProxy> {
  const main = join(dirname(fileURLToPath(import.meta.url)), 'rpc-proxy-main.ts')
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', main, o.upstream], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`rpc proxy did not start within ${READY_TIMEOUT_MS} ms`))
    }, READY_TIMEOUT_MS)
    const onData = (d: Buffer) => {
      output = (output + String(d)).slice(-4000)
      const m = LISTENING.exec(output)
      if (m?.[1]) {
        clearTimeout(timer)
        resolve(m[1])
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`rpc proxy exited (${code}) before listening`))
    })
  })
  child.removeAllListeners('exit')
  child.stdout?.removeAllListeners('data').resume()
  child.stderr?.removeAllListeners('data').resume()
  const control = async (path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    })
    if (!res.ok) throw new Error(`rpc proxy control ${path}: ${res.status}`)
    return res.json()
  }
  return {
    url,
    script: async (rules) => void (await control('/_proxy/rules', { rules })),
    reset: async () => void (await control('/_proxy/reset', {})),
    stats: () => control('/_proxy/stats') as Promise<Record<string, MethodStats>>,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        const t = setTimeout(() => child.kill('SIGKILL'), 5_000)
        child.once('exit', () => {
          clearTimeout(t)
          resolve()
        })
        child.kill('SIGTERM')
      }),
  }
}
