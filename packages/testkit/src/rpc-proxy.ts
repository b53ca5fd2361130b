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

/**
 * The proxy, serving in this process.
 *
 * @example
 *   const p = await createRpcProxyServer({ upstream: chain.rpcUrl })
 *   p.script([{ method: 'eth_getTransactionReceipt', action: { nullRecent: { blocks: 5 } } }])
 */
export async function createRpcProxyServer(o: { upstream: string; port?: number }): Promise<RpcProxyServer> {
  let rules: LiveRule[] = []
  const stats: Record<string, MethodStats> = {}
  const hanging = new Set<ServerResponse>()
  const flips = new WeakMap<LiveRule, number>()
  let nextUpstreamId = 1

  async function upstream(method: string, params: unknown[]): Promise<RpcAnswer> {
    const res = await fetch(o.upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextUpstreamId++, method, params }),
    })
    return (await res.json()) as RpcAnswer
  }
  const headOf = async () => BigInt((await upstream('eth_blockNumber', [])).result as string)

  function ruleFor(method: string): LiveRule | undefined {
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

  /** A call answered by a backend `lagBlocks` behind the upstream head. */
  async function lagged(call: RpcCall, lagBlocks: number): Promise<RpcAnswer> {
    const params = [...(call.params ?? [])]
    const head = await headOf()
    const at = head > BigInt(lagBlocks) ? head - BigInt(lagBlocks) : 0n
    const answer = (result: unknown): RpcAnswer => ({ jsonrpc: '2.0', id: call.id, result })
    const resolveTag = async (tag: unknown): Promise<bigint> => {
      if (typeof tag === 'string' && TAGS.has(tag)) {
        if (tag === 'safe' || tag === 'finalized') {
          const b = (await upstream('eth_getBlockByNumber', [tag, false])).result as { number: string } | null
          const n = b ? BigInt(b.number) : 0n
          return n < at ? n : at
        }
        return at
      }
      if (typeof tag === 'string' && tag.startsWith('0x')) return BigInt(tag)
      return at
    }
    switch (call.method) {
      case 'eth_blockNumber':
        return answer(hex(at))
      case 'eth_getBlockByNumber': {
        const n = await resolveTag(params[0])
        if (n > at) return answer(null)
        return withId(await upstream(call.method, [hex(n), params[1] ?? false]), call.id)
      }
      case 'eth_getTransactionReceipt':
      case 'eth_getTransactionByHash': {
        const a = await upstream(call.method, params)
        const r = a.result as { blockNumber?: string | null } | null
        if (!r || r.blockNumber === null || r.blockNumber === undefined || BigInt(r.blockNumber) > at)
          return answer(null)
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
        return withId(await upstream(call.method, [f]), call.id)
      }
      default: {
        const i = BLOCK_PARAM[call.method]
        if (i !== undefined) {
          const n = await resolveTag(params[i] ?? 'latest')
          params[i] = hex(n > at ? at : n)
          return withId(await upstream(call.method, params), call.id)
        }
        return withId(await upstream(call.method, params), call.id)
      }
    }
  }

  async function nullRecent(call: RpcCall, blocks: number): Promise<RpcAnswer> {
    const [a, head] = await Promise.all([upstream(call.method, call.params ?? []), headOf()])
    const r = a.result as { blockNumber?: string | null } | null
    const recent =
      !!r && (r.blockNumber === null || r.blockNumber === undefined || BigInt(r.blockNumber) > head - BigInt(blocks))
    return recent ? { jsonrpc: '2.0', id: call.id, result: null } : withId(a, call.id)
  }

  const withId = (a: RpcAnswer, id: unknown): RpcAnswer => ({ ...a, jsonrpc: '2.0', id })

  type Plan = { kind: 'answer'; answer: Promise<RpcAnswer> } | { kind: 'http'; status: number } | { kind: 'hang' }

  function plan(call: RpcCall): { plan: Plan; delayMs: number } {
    const s = stats[call.method] ?? { seen: 0, forwarded: 0, intercepted: 0 }
    stats[call.method] = s
    s.seen++
    const live = ruleFor(call.method)
    if (!live) {
      s.forwarded++
      return {
        plan: { kind: 'answer', answer: upstream(call.method, call.params ?? []).then((a) => withId(a, call.id)) },
        delayMs: 0,
      }
    }
    s.intercepted++
    const a = live.rule.action
    if ('lag' in a) return { plan: { kind: 'answer', answer: lagged(call, a.lag.blocks) }, delayMs: 0 }
    if ('nullRecent' in a) {
      const m = call.method
      if (m === 'eth_getTransactionReceipt' || m === 'eth_getTransactionByHash')
        return { plan: { kind: 'answer', answer: nullRecent(call, a.nullRecent.blocks) }, delayMs: 0 }
      return {
        plan: { kind: 'answer', answer: upstream(m, call.params ?? []).then((x) => withId(x, call.id)) },
        delayMs: 0,
      }
    }
    if ('httpError' in a) return { plan: { kind: 'http', status: a.httpError.status }, delayMs: 0 }
    if ('rpcError' in a)
      return {
        plan: { kind: 'answer', answer: Promise.resolve({ jsonrpc: '2.0', id: call.id, error: { ...a.rpcError } }) },
        delayMs: 0,
      }
    if ('hang' in a) return { plan: { kind: 'hang' }, delayMs: 0 }
    if ('flipFlop' in a) {
      const n = flips.get(live) ?? 0
      flips.set(live, n + 1)
      const answer =
        n % 2 === 0
          ? upstream(call.method, call.params ?? []).then((x) => withId(x, call.id))
          : lagged(call, a.flipFlop.blocks)
      return { plan: { kind: 'answer', answer }, delayMs: 0 }
    }
    return {
      plan: { kind: 'answer', answer: upstream(call.method, call.params ?? []).then((x) => withId(x, call.id)) },
      delayMs: a.delayMs,
    }
  }

  async function handleRpc(req: IncomingMessage, res: ServerResponse, body: string) {
    let parsed: RpcCall | RpcCall[]
    try {
      parsed = JSON.parse(body) as RpcCall | RpcCall[]
    } catch {
      return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })
    }
    const calls = Array.isArray(parsed) ? parsed : [parsed]
    const plans = calls.map(plan)
    const failing = plans.find((p) => p.plan.kind === 'http')
    if (failing?.plan.kind === 'http') {
      const status = failing.plan.status
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 429 && { 'retry-after': '1' }) })
      res.end(JSON.stringify({ error: `proxy: ${status}` }))
      return
    }
    if (plans.some((p) => p.plan.kind === 'hang')) {
      hanging.add(res)
      req.on('close', () => hanging.delete(res))
      return
    }
    const delayMs = Math.max(0, ...plans.map((p) => p.delayMs))
    const answers = await Promise.all(plans.map((p) => (p.plan.kind === 'answer' ? p.plan.answer : undefined)))
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))
    send(res, 200, Array.isArray(parsed) ? answers : answers[0])
  }

  async function handleControl(path: string, res: ServerResponse, body: string) {
    if (path === '/_proxy/rules') {
      rules = ((JSON.parse(body) as { rules: ProxyRule[] }).rules ?? []).map((rule) => ({
        rule,
        matched: 0,
        applied: 0,
      }))
      return send(res, 200, { ok: true })
    }
    if (path === '/_proxy/reset') {
      reset()
      return send(res, 200, { ok: true })
    }
    if (path === '/_proxy/stats') return send(res, 200, stats)
    return send(res, 404, { error: 'unknown control' })
  }

  function reset() {
    rules = []
    for (const k of Object.keys(stats)) delete stats[k]
    for (const res of hanging) res.destroy()
    hanging.clear()
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const path = (req.url ?? '/').split('?')[0] ?? '/'
      const handled = path.startsWith('/_proxy/') ? handleControl(path, res, body) : handleRpc(req, res, body)
      handled.catch((err: unknown) => {
        // the upstream failed (not a scripted fault): a gateway error, as a provider would answer
        if (!res.headersSent) send(res, 502, { error: `proxy: upstream failed: ${(err as Error).name}` })
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    script(r) {
      rules = r.map((rule) => ({ rule, matched: 0, applied: 0 }))
    },
    reset,
    stats: () => structuredClone(stats),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
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
