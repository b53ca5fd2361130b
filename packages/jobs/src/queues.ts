/**
 * Queue names, one per scaling domain, shared by the producer (api) and the consumer
 * (worker) so the api never imports the worker. Names carry a Redis Cluster hash tag so a
 * queue's keys land on one slot.
 */
export const QUEUES = {
  deposits: '{deposits}',
  treasury: '{treasury}',
  trading: '{trading}',
  conversions: '{conversions}',
  withdrawals: '{withdrawals}',
  accounting: '{accounting}',
  solvency: '{solvency}',
} as const

export type QueueKey = keyof typeof QUEUES
export type QueueName = (typeof QUEUES)[QueueKey]
export const QUEUE_KEYS = Object.keys(QUEUES) as QueueKey[]

/** The key prefix of every BullMQ structure in Redis. */
export const BULL_PREFIX = 'wh'

/**
 * BullMQ job ids may not contain ':' and deduplicate only while the old job exists.
 * Build them here, from ids, never from ledger keys as they are.
 */
export function jobId(...parts: Array<string | number>): string {
  return parts.map((p) => String(p).replace(/[^A-Za-z0-9_.-]/g, '_')).join('.')
}

/** Picks the queues a worker process consumes from WORKER_QUEUES (empty = all). */
export function selectQueues(wanted: readonly string[]): QueueKey[] {
  if (wanted.length === 0) return [...QUEUE_KEYS]
  const unknown = wanted.filter((w) => !(w in QUEUES))
  if (unknown.length > 0) {
    throw new Error(`WORKER_QUEUES names unknown queues: ${unknown.join(', ')} (known: ${QUEUE_KEYS.join(', ')})`)
  }
  return wanted as QueueKey[]
}

/** Per-queue concurrency from WORKER_CONCURRENCY's pairs; an unknown queue name stops start-up. */
export function selectConcurrency(wanted: Readonly<Record<string, number>>): Partial<Record<QueueKey, number>> {
  const unknown = Object.keys(wanted).filter((w) => !(w in QUEUES))
  if (unknown.length > 0) {
    throw new Error(`WORKER_CONCURRENCY names unknown queues: ${unknown.join(', ')} (known: ${QUEUE_KEYS.join(', ')})`)
  }
  return wanted as Partial<Record<QueueKey, number>>
}
