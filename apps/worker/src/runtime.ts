/**
 * Builds the queues, upserts the job schedulers and starts one BullMQ Worker per consumed
 * queue. Used by main.ts and by the tests (which run two of these as two "replicas").
 */
import { redactUrls } from '@wh/core'
import { BULL_PREFIX, logErrorsOf, QUEUES, type QueueKey, recordTickSuccess } from '@wh/jobs'
import { type Job, Queue, Worker, type WorkerOptions } from 'bullmq'
import type { Redis } from 'ioredis'
import type { TickContext, TickDefinition, WorkerDeps } from './ticks'

export interface RuntimeOptions {
  /** a connection for BullMQ (maxRetriesPerRequest must be null); duplicated per worker */
  connection: Redis
  ticks: readonly TickDefinition[]
  consume: readonly QueueKey[]
  prefix?: string
  /** jobs processed at once per queue */
  concurrency?: Partial<Record<QueueKey, number>>
  log: TickContext['log']
  /** what processors act through (main.ts builds it once); a runtime without it runs only ticks that need none */
  deps?: WorkerDeps
  /** SCHEDULER_REFRESH_MS unless given (tests) */
  schedulerRefreshMs?: number
  /**
   * tests only: how soon a job whose worker died is taken again (BullMQ's stall check). The
   * defaults (a 30 s lock) stay in production; the fault suite shortens them so a SIGKILLed
   * worker's job comes back within its run
   */
  stall?: Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount'>
}

export interface Runtime {
  readonly queues: ReadonlyMap<QueueKey, Queue>
  readonly workers: readonly Worker[]
  /** waits for the jobs in flight, then disconnects (graceful shutdown) */
  close(): Promise<void>
}

export const DEFAULT_CONCURRENCY = 4
/** how often each replica re-upserts the job schedulers (a Redis restarted empty loses them) */
export const SCHEDULER_REFRESH_MS = 30_000

/** Stands in for absent deps: a processor that reaches for one fails loudly, naming it. */
function missingDeps(): WorkerDeps {
  return new Proxy({} as WorkerDeps, {
    get(_target, key) {
      throw new Error(`this runtime was started without deps, but a processor needs deps.${String(key)}`)
    },
  })
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const prefix = opts.prefix ?? BULL_PREFIX
  const queues = new Map<QueueKey, Queue>()
  for (const key of Object.keys(QUEUES) as QueueKey[]) {
    queues.set(
      key,
      logErrorsOf(new Queue(QUEUES[key], { connection: opts.connection, prefix }), `queue ${key}`, opts.log),
    )
  }
  // Upsert every scheduler (idempotent by id): the same schedule whichever replica starts first.
  const upsertSchedulers = async () => {
    for (const tick of opts.ticks) {
      if (tick.everyMs === undefined) continue // a fan-out target: runs the jobs a tick adds
      const every = (opts.deps && tick.everyMsOf?.(opts.deps.config)) || tick.everyMs
      await queues
        .get(tick.queue)
        ?.upsertJobScheduler(
          tick.name,
          { every },
          { name: tick.name, opts: { removeOnComplete: 1000, removeOnFail: 5000 } },
        )
    }
  }
  await upsertSchedulers()
  // ...and again every SCHEDULER_REFRESH_MS: a Redis that restarted without its data (no append-only
  // file) has lost the schedulers, and no tick would run again until a worker restarted (found by
  // the fault suite). Re-upserting an unchanged scheduler changes nothing.
  const refresh = setInterval(
    () =>
      void upsertSchedulers().catch((err: unknown) =>
        opts.log.warn({ err: String(err) }, 'job schedulers not refreshed; retried next period'),
      ),
    opts.schedulerRefreshMs ?? SCHEDULER_REFRESH_MS,
  )
  refresh.unref?.()
  const byName = new Map(opts.ticks.map((t) => [`${t.queue}/${t.name}`, t]))
  const ctx: TickContext = { log: opts.log, deps: opts.deps ?? missingDeps(), queues }
  const workers = opts.consume.map(
    (key) =>
      new Worker(
        QUEUES[key],
        async (job: Job, token?: string) => {
          const tick = byName.get(`${key}/${job.name}`)
          if (!tick) throw new Error(`no processor for ${job.name} on ${key}`)
          const startedMs = performance.now()
          let result: unknown
          try {
            result = await tick.process(job, ctx, token)
          } catch (err) {
            // BullMQ keeps a failure's message and stack in Redis, shown by Bull Board: without URLs
            throw redactedError(err)
          }
          // GET /metrics reads these (last success per tick, its duration); a failed write never fails the job
          await recordTickSuccess(opts.connection, prefix, job.name, Date.now(), performance.now() - startedMs).catch(
            (err: unknown) => opts.log.warn({ tick: job.name, err: String(err) }, 'tick metrics not recorded'),
          )
          return result
        },
        {
          connection: logErrorsOf(opts.connection.duplicate(), `worker ${key}`, opts.log),
          prefix,
          concurrency: opts.concurrency?.[key] ?? DEFAULT_CONCURRENCY,
          ...opts.stall,
        },
      ),
  )
  for (const [i, w] of workers.entries()) logErrorsOf(w, `worker ${opts.consume[i]}`, opts.log)
  await Promise.all(workers.map((w) => w.waitUntilReady()))
  return {
    queues,
    workers,
    async close() {
      clearInterval(refresh)
      await Promise.all(workers.map((w) => w.close()))
      await Promise.all([...queues.values()].map((q) => q.close()))
    },
  }
}

/** `err` with URLs redacted from its message and stack (redactUrls): what BullMQ stores of a failed job. */
function redactedError(err: unknown): Error {
  if (!(err instanceof Error)) return new Error(redactUrls(String(err)))
  try {
    err.message = redactUrls(err.message)
    if (err.stack) err.stack = redactUrls(err.stack)
    return err
  } catch {
    // a read-only message: a plain error with the same text, redacted
    return new Error(redactUrls(err.message))
  }
}
