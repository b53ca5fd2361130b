/**
 * The API on every core (API_PROCESSES > 1): a primary process forks that many API processes that
 * share PORT through node:cluster (the primary accepts connections and hands them round-robin) and
 * holds nothing else: no database, no Redis, no secret in use.
 *
 * What the processes share lives outside them, so nothing changes for a client: the sign-in rate
 * limit counts in Redis, every process subscribes to the price and strategy channels and fans them
 * out to its own WebSocket clients, each public cache is invalidated by those channels. /metrics
 * answers the sum over the processes for what each counts (HTTP requests, their durations, process
 * figures) through the primary (metricsOfAll), and the figures read from Postgres and Redis once.
 *
 * A process that dies is replaced after a pause that grows while processes keep dying young (a bad
 * deployment does not fork in a loop); SIGTERM or SIGINT to the primary stops every process
 * gracefully and the primary exits when they have.
 */
import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, type Registry } from 'prom-client'

/** A process that lived less than this is counted as dying young. */
const YOUNG_MS = 10_000
const FIRST_RESTART_DELAY_MS = 200
const MAX_RESTART_DELAY_MS = 30_000
/** How long the primary waits for the processes to stop before it kills them. */
const STOP_GRACE_MS = 12_000
/**
 * How long a process waits for the primary's aggregate of the metrics: past prom-client's own 5 s
 * in the primary (whose error then arrives first), within Prometheus' default 10 s scrape timeout.
 */
const METRICS_TIMEOUT_MS = 6_000

const METRICS_REQUEST = 'wh:metrics-request'
const METRICS_RESPONSE = 'wh:metrics-response'

interface MetricsRequest {
  type: typeof METRICS_REQUEST
  id: number
}
interface MetricsResponse {
  type: typeof METRICS_RESPONSE
  id: number
  text?: string
  error?: string
}

type Log = (msg: string, fields?: Record<string, unknown>) => void

/** Runs the primary: forks `processes` API processes and keeps that many alive until a signal. */
export function runPrimary(processes: number, log: Log): void {
  const aggregator = new AggregatorRegistry()
  const started = new Map<number, number>()
  let stopping = false
  let restartDelay = FIRST_RESTART_DELAY_MS

  const fork = () => {
    const worker = cluster.fork()
    started.set(worker.id, Date.now())
    worker.on('message', (message: MetricsRequest) => {
      if (message?.type === METRICS_REQUEST) void answerMetrics(worker, message.id)
    })
  }
  const answerMetrics = async (worker: Worker, id: number) => {
    const reply: MetricsResponse = { type: METRICS_RESPONSE, id }
    try {
      reply.text = await aggregator.clusterMetrics()
    } catch (e) {
      reply.error = e instanceof Error ? e.message : String(e)
    }
    if (worker.isConnected()) worker.send(reply)
  }

  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (started.get(worker.id) ?? 0)
    started.delete(worker.id)
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
      return
    }
    restartDelay = lived < YOUNG_MS ? Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS) : FIRST_RESTART_DELAY_MS
    log('API process exited, replacing it', { pid: worker.process.pid, code, signal, inMs: restartDelay })
    // not unref'd: when every process has died, this timer is what keeps the primary alive to fork again
    setTimeout(() => {
      if (!stopping) fork()
    }, restartDelay)
  })

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return
    stopping = true
    log('stopping the API processes', { signal })
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL')
      process.exit(1)
    }, STOP_GRACE_MS).unref()
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))

  log('starting the API processes', { processes })
  for (let i = 0; i < processes; i++) fork()
}

/** True in a process forked by runPrimary. */
export const inCluster = (): boolean => cluster.isWorker

let nextId = 0
const pending = new Map<number, (r: MetricsResponse) => void>()
let sharing = false

/**
 * In a cluster process, at start: the primary may ask this process for the figures of
 * `registries` (prom-client answers), and this process may ask the primary for the sum over every
 * process (metricsOfAll). Outside a cluster it does nothing.
 */
export function shareMetrics(registries: Registry[]): void {
  if (!cluster.isWorker || sharing) return
  sharing = true
  AggregatorRegistry.setRegistries(registries)
  new AggregatorRegistry() // installs prom-client's answer to the primary's requests
  process.on('message', (message: MetricsResponse) => {
    if (message?.type === METRICS_RESPONSE) pending.get(message.id)?.(message)
  })
}

/** In a cluster process: the shared metrics summed over every process by the primary. */
export async function metricsOfAll(): Promise<string> {
  const id = nextId++
  const response = await new Promise<MetricsResponse>((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(id)
      resolve({ type: METRICS_RESPONSE, id, error: 'the primary did not answer in time' })
    }, METRICS_TIMEOUT_MS)
    pending.set(id, (r) => {
      clearTimeout(timer)
      pending.delete(id)
      resolve(r)
    })
    process.send?.({ type: METRICS_REQUEST, id } satisfies MetricsRequest)
  })
  if (response.error !== undefined || response.text === undefined)
    throw new Error(`cluster metrics: ${response.error ?? 'no answer'}`)
  return response.text
}
