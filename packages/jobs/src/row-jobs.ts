/**
 * The jobs the API enqueues for the work it accepts (docs/architecture.md "Accepted work: one job
 * per 202"), shared by the producer (apps/api: every route that answers 202) and the consumer
 * (apps/worker: one processor per name), so the two agree on names, queues, ids and data.
 *
 * A name is `<row>.<what happens to it>`: 'withdrawal.send', 'position.advance', … The data is
 * ids only (`{ purpose, <row>Id, userId, requestId? }`): the processor loads the row by id and does
 * nothing when it is absent or not in a state for that job. The row is the truth; the job only
 * says "now". Its id is built from the row's id (`jobId`), so a repeated request or enqueue adds
 * nothing while the first job is kept (the id alone where a row has one job on its queue, with a
 * suffix where it has several kinds).
 */
import type { JobsOptions, Queue } from 'bullmq'
import { jobId, QUEUES, type QueueKey } from './queues'

interface RowJobSpec {
  readonly queue: QueueKey
  /** the data field that names the row */
  readonly row: 'withdrawalId' | 'positionId' | 'releaseId' | 'wheelId'
  /** added to the row id when one row has several kinds of job on the same queue */
  readonly suffix?: string
  /**
   * whether the same row can need this job again after one finished (a wheel resumed twice):
   * such a job is removed when it ends, so its id is free for the next; the others are kept for
   * a while, so Bull Board shows them and a replayed request adds nothing
   */
  readonly recurs?: boolean
}

/** Every job the API enqueues, by name: its queue, the row it is about, its id's suffix. */
export const ROW_JOBS = {
  /** POST /withdrawals: send that withdrawal now (packages/withdrawals `sendWithdrawalNow`) */
  'withdrawal.send': { queue: 'withdrawals', row: 'withdrawalId' },
  /** POST /positions (a leg, a wheel's first leg, a wheel's next leg): fund it, then place it */
  'position.advance': { queue: 'trading', row: 'positionId' },
  /** DELETE /positions/:id of a leg placing orders: its resting orders are cancelled */
  'position.cancel': { queue: 'trading', row: 'positionId', suffix: 'cancel' },
  /** DELETE /positions/:id of a sold leg: bought back at its quoted limit */
  'position.close': { queue: 'trading', row: 'positionId', suffix: 'close' },
  /** POST /subaccounts/:asset/release: the release planned and its withdrawals sent */
  'release.run': { queue: 'treasury', row: 'releaseId' },
  /** POST /wheels/:id/resume: the wheel's next leg opened */
  'wheel.next-leg': { queue: 'trading', row: 'wheelId', recurs: true },
  /** DELETE /positions/:id of a wheel (or of its leg) that is stopping: its leg ended, then stopped */
  'wheel.stop': { queue: 'trading', row: 'wheelId', suffix: 'stop', recurs: true },
} as const satisfies Record<string, RowJobSpec>

export type RowJobName = keyof typeof ROW_JOBS
export const ROW_JOB_NAMES = Object.keys(ROW_JOBS) as RowJobName[]

/** What a row job carries: ids only. */
export type RowJobData<N extends RowJobName = RowJobName> = {
  readonly purpose: N
  readonly userId: string
  /** the request that accepted the work: its log lines and the job's share it */
  readonly requestId?: string
} & { readonly [K in (typeof ROW_JOBS)[N]['row']]: string }

/** A transient failure is retried this many times in all (a decided failure is not: UnrecoverableError). */
export const ROW_JOB_ATTEMPTS = 5
/** The first retry after a transient failure; doubled each time. */
export const ROW_JOB_BACKOFF_MS = 1_000
/** A finished job is kept this long (Bull Board shows it, the desk links to it), then removed. */
export const ROW_JOB_KEEP_S = 7 * 24 * 3600
/** ... and at most this many per queue. */
export const ROW_JOB_KEEP_COUNT = 10_000
/** How long a request waits for Redis to take its job before it answers anyway (the tick sweeps the row). */
export const ENQUEUE_TIMEOUT_MS = 250

/** The BullMQ id of `name`'s job for the row `rowId`. */
export function rowJobId(name: RowJobName, rowId: string): string {
  const spec: RowJobSpec = ROW_JOBS[name]
  return spec.suffix === undefined ? jobId(rowId) : jobId(rowId, spec.suffix)
}

/** Where `name`'s job for `rowId` lives: its queue (the key and Redis name) and its id. */
export function rowJobRef(name: RowJobName, rowId: string): { queue: QueueKey; queueName: string; jobId: string } {
  const queue = ROW_JOBS[name].queue
  return { queue, queueName: QUEUES[queue], jobId: rowJobId(name, rowId) }
}

/** The per-deposit sweep job the deposits tick fans out (@wh/deposits sweep/fan-out.ts); the desk links a deposit to it. */
export const DEPOSIT_SWEEP_JOB_NAME = 'deposit-sweep'

/** Where a deposit's sweep job lives while it waits or retries (it is removed once it ends). */
export function depositSweepJobRef(depositId: string): { queue: QueueKey; queueName: string; jobId: string } {
  return { queue: 'deposits', queueName: QUEUES.deposits, jobId: jobId(DEPOSIT_SWEEP_JOB_NAME, depositId) }
}

/** The path of a job's page in Bull Board (apps/api/src/plugins/bull-board.ts mounts it at /admin/queues). */
export function bullBoardJobPath(queueName: string, id: string): string {
  return `/admin/queues/queue/${encodeURIComponent(queueName)}/${encodeURIComponent(id)}`
}

/** The job to add for `name` on the row `rowId` of user `userId`: its data and options. */
export function rowJob<N extends RowJobName>(
  name: N,
  rowId: string,
  userId: string,
  requestId?: string,
): { queue: QueueKey; name: N; data: RowJobData<N>; opts: JobsOptions & { jobId: string } } {
  const spec: RowJobSpec = ROW_JOBS[name]
  const data = { purpose: name, [spec.row]: rowId, userId, ...(requestId && { requestId }) } as RowJobData<N>
  const kept = { age: ROW_JOB_KEEP_S, count: ROW_JOB_KEEP_COUNT }
  return {
    queue: spec.queue,
    name,
    data,
    opts: {
      jobId: rowJobId(name, rowId),
      attempts: ROW_JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: ROW_JOB_BACKOFF_MS },
      removeOnComplete: spec.recurs ? true : kept,
      removeOnFail: spec.recurs ? true : kept,
    },
  }
}

export type EnqueueResult = { readonly ok: true } | { readonly ok: false; readonly error: string }

/**
 * Adds a job, to be called once the transaction that wrote its row has committed (so no job can
 * run before its row exists). Never throws and never waits longer than `timeoutMs`: when Redis
 * refuses or does not answer, the request that accepted the work still answers, and the tick that
 * sweeps the row's table serves it later (docs/architecture.md "When Redis is down"). A job with
 * the same id already in the queue makes this a no-op.
 *
 * @example
 *   const job = rowJob('withdrawal.send', row.id, userId, request.id)
 *   const r = await enqueueAfterCommit(queue, job.name, job.data, job.opts)
 *   if (!r.ok) log.warn({ err: r.error }, 'job not enqueued; the tick sweeps the row')
 */
export async function enqueueAfterCommit<N extends string, D extends object>(
  queue: Pick<Queue, 'add'>,
  name: N,
  data: D,
  opts: JobsOptions & { jobId: string },
  timeoutMs: number = ENQUEUE_TIMEOUT_MS,
): Promise<EnqueueResult> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<EnqueueResult>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, error: `Redis did not take the job within ${timeoutMs} ms` }),
      timeoutMs,
    )
  })
  const added = queue.add(name, data, opts).then(
    (): EnqueueResult => ({ ok: true }),
    (err: unknown): EnqueueResult => ({ ok: false, error: err instanceof Error ? err.message : String(err) }),
  )
  try {
    return await Promise.race([added, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** The row id a row job names, checked: a uuid, under the field its name says. */
export function rowIdOf(name: RowJobName, data: unknown): string | undefined {
  const id = (data as Record<string, unknown> | null | undefined)?.[ROW_JOBS[name].row]
  return typeof id === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)
    ? id
    : undefined
}
