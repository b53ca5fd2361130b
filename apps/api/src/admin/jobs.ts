/**
 * A withdrawal, a position and a deposit on the desk, each with the worker's jobs for it
 * (docs/architecture.md "Accepted work: one job per 202"): the job the API added when it accepted the
 * row (withdrawal.send; position.advance, .cancel, .close) or, for a deposit, the sweep job its tick
 * fans out, with the job's page in Bull Board and its state there. Reads only.
 */
import { DeskDeposit, DeskPosition, DeskWithdrawal, IdParams } from '@wh/api-schemas/admin'
import { NotFoundError } from '@wh/core'
import type { Sql } from '@wh/db'
import { bullBoardJobPath, DEPOSIT_SWEEP_JOB_NAME, depositSweepJobRef, type RowJobName, rowJobRef } from '@wh/jobs'
import type { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import type Type from 'typebox'
import { deskRoute } from './roles'

export interface DeskJobsOptions {
  sql: Sql
  /** the queues Bull Board shows: a job's state is read there (none: `state` is null) */
  queues?: readonly Queue[]
}

const tag = { tags: ['admin'] }
const iso = (d: Date | null) => (d ? d.toISOString() : null)
/** a queue that does not answer in time leaves the state unread, never the page */
const STATE_TIMEOUT_MS = 500

type Ref = { queueName: string; jobId: string }

async function stateOf(queues: readonly Queue[] | undefined, ref: Ref): Promise<string | null> {
  const queue = queues?.find((q) => q.name === ref.queueName)
  if (!queue) return null
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), STATE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([queue.getJobState(ref.jobId).catch(() => null), timeout])
  } finally {
    clearTimeout(timer)
  }
}

async function linkOf(opts: DeskJobsOptions, name: string, ref: Ref) {
  return {
    name,
    queue: ref.queueName,
    jobId: ref.jobId,
    path: bullBoardJobPath(ref.queueName, ref.jobId),
    state: (await stateOf(opts.queues, ref)) as Type.Static<typeof DeskWithdrawal>['jobs'][number]['state'],
  }
}

const rowLinks = (opts: DeskJobsOptions, names: readonly RowJobName[], rowId: string) =>
  Promise.all(names.map((n) => linkOf(opts, n, rowJobRef(n, rowId))))

export async function deskJobRoutes(app: FastifyInstance, opts: DeskJobsOptions) {
  const route = <S extends object>(summary: string, response: S) =>
    deskRoute('viewer', { ...tag, summary, params: IdParams, response: { 200: response } })
  type ById = { Params: Type.Static<typeof IdParams> }
  app.get<ById>('/admin/withdrawals/:id', route('A withdrawal and its job', DeskWithdrawal), (r) =>
    withdrawalView(opts, r.params.id),
  )
  app.get<ById>('/admin/positions/:id', route('A position and its jobs', DeskPosition), (r) =>
    positionView(opts, r.params.id),
  )
  app.get<ById>('/admin/deposits/:id', route('A deposit and its sweep job', DeskDeposit), (r) =>
    depositView(opts, r.params.id),
  )
}

async function withdrawalView(opts: DeskJobsOptions, id: string) {
  const [w] = await opts.sql<WithdrawalRow[]>`
    select id, user_id, state, chain, currency, amount::text, tx_hash, last_error_code, held_at, created_at
    from withdrawals where id = ${id}`
  if (!w) throw new NotFoundError('withdrawal')
  return {
    id: w.id,
    userId: w.user_id,
    state: w.state,
    chain: w.chain,
    currency: w.currency,
    amount: w.amount,
    txHash: w.tx_hash,
    lastErrorCode: w.last_error_code,
    heldAt: iso(w.held_at),
    createdAt: w.created_at.toISOString(),
    jobs: await rowLinks(opts, ['withdrawal.send'], w.id),
  }
}

async function positionView(opts: DeskJobsOptions, id: string) {
  const [p] = await opts.sql<PositionRow[]>`
    select id, user_id, state, asset, side, wheel_id, reason, created_at from positions where id = ${id}`
  if (!p) throw new NotFoundError('position')
  return {
    id: p.id,
    userId: p.user_id,
    state: p.state,
    asset: p.asset,
    side: p.side,
    wheelId: p.wheel_id,
    reason: p.reason,
    createdAt: p.created_at.toISOString(),
    jobs: await rowLinks(opts, ['position.advance', 'position.cancel', 'position.close'], p.id),
  }
}

async function depositView(opts: DeskJobsOptions, id: string) {
  const [d] = await opts.sql<DepositRow[]>`
    select id, user_id, state, chain, token, amount::text, last_error_code, held_at, created_at
    from deposits where id = ${id}`
  if (!d) throw new NotFoundError('deposit')
  return {
    id: d.id,
    userId: d.user_id,
    state: d.state,
    chain: d.chain,
    token: d.token,
    amount: d.amount,
    lastErrorCode: d.last_error_code,
    heldAt: iso(d.held_at),
    createdAt: d.created_at.toISOString(),
    jobs: [await linkOf(opts, DEPOSIT_SWEEP_JOB_NAME, depositSweepJobRef(d.id))],
  }
}

interface WithdrawalRow {
  id: string
  user_id: string
  state: string
  chain: string | null
  currency: string
  amount: string
  tx_hash: string | null
  last_error_code: string | null
  held_at: Date | null
  created_at: Date
}

interface PositionRow {
  id: string
  user_id: string
  state: string
  asset: string
  side: string
  wheel_id: string | null
  reason: string | null
  created_at: Date
}

interface DepositRow {
  id: string
  user_id: string
  state: string
  chain: string
  token: string
  amount: string
  last_error_code: string | null
  held_at: Date | null
  created_at: Date
}
