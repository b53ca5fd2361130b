/**
 * The withdrawal tick's round (the worker's `withdrawals-send`, every WITHDRAWAL_SEND_EVERY_MS):
 * which requested withdrawals a tick takes, in what order, and on which chains, each sent by
 * send.ts' `sendWithdrawal`; then the stuck alerts. docs/chains.md "Withdrawals".
 *
 * Fair queue: rows are taken when due (`next_attempt_at`), soonest first; a row whose preparation
 * failed waits out its backoff (send.ts). Chains are served side by side, and a chain stops for this
 * run only when its own probe fails (its id and height unread), never because of one row's error, so
 * one chain's outage or one user's poisoned rows never delay another's withdrawals.
 *
 * No Redis lock around the run: each row is claimed FOR UPDATE SKIP LOCKED, so two overlapping runs
 * (a slow one and the next period's, or two replicas) split the rows between them, and the outbox
 * keeps one transaction per withdrawal whoever sends it.
 */
import {
  chainIsReady,
  type DueRow,
  refuseOwnDestinations,
  sendWithdrawal,
  type WithdrawalSendDeps,
  type WithdrawalSendResult,
} from './send'

/** Withdrawals taken per tick (TIGER_STYLE: a bound on everything). */
export const WITHDRAWAL_SEND_BATCH = 100
/**
 * Rows of one user taken per tick, soonest first: every user with a due withdrawal is served before
 * anyone's second one, so one user's flood of withdrawals that fail never crowds out another's.
 */
export const WITHDRAWAL_PER_USER_PER_RUN = 2
/** A run works through rows for at most this long (the chains side by side); the rest stay due for the next. */
export const WITHDRAWAL_CHAIN_BUDGET_MS = 10_000
/** Batches a run takes at most, while each comes back full and the budget lasts. */
export const WITHDRAWAL_ROUNDS_PER_RUN = 5
/** Stuck withdrawals reported per tick. */
export const WITHDRAWAL_STUCK_ALERT_BATCH = 50
export const WITHDRAWAL_SEND_EVERY_MS = 15_000
export const WITHDRAWAL_SEND_TICK = 'withdrawals-send'

export interface WithdrawalSendSummary {
  sent: number
  failed: number
  /** broadcast, not yet confirmed; resumed next tick */
  pending: number
  /** the preparation failed for now (RPC, hot wallet short, …): the row waits out its backoff */
  errors: number
  /** held for an operator: the chain's answers contradict each other */
  held: number
  /** held by another replica */
  skipped: number
  stuckAlerts: number
}

interface StuckRow {
  id: string
  currency: string
  amount: string
  chain: string | null
  attempts: number
  created_at: Date
  tx_hash: string | null
  last_error_code: string | null
  held_at: Date | null
}

/** Alerts on withdrawals still 'requested' WITHDRAWAL_STUCK_MINUTES after their request. */
async function alertStuck(deps: WithdrawalSendDeps): Promise<number> {
  const stuckMs = deps.stuckMinutes * 60_000
  const now = deps.clock.now()
  const rows = await deps.sql<StuckRow[]>`
    select id, currency, amount, chain, attempts, created_at, tx_hash, last_error_code, held_at
    from withdrawals
    where state = 'requested' and created_at < ${new Date(now.getTime() - stuckMs)}
    order by created_at
    limit ${WITHDRAWAL_STUCK_ALERT_BATCH}`
  let alerts = 0
  for (const w of rows) {
    if (!(await deps.claimAlert(`withdrawal-stuck:${w.id}`, stuckMs))) continue
    alerts++
    await deps.alerter.alert(
      w.held_at
        ? 'withdrawal stuck: held for an operator'
        : w.tx_hash
          ? 'withdrawal stuck: broadcast but not confirmed'
          : 'withdrawal stuck: not sent yet',
      {
        withdrawalId: w.id,
        chain: w.chain,
        currency: w.currency,
        amountBaseUnits: w.amount,
        txHash: w.tx_hash,
        attempts: w.attempts,
        lastErrorCode: w.last_error_code,
        minutesWaiting: Math.floor((now.getTime() - w.created_at.getTime()) / 60_000),
      },
    )
  }
  return alerts
}

/**
 * One tick: rounds of a bounded batch of the requested withdrawals that are due, until a round
 * finds fewer than a batch or the tick's budget is spent (so rows that fail at once, however many,
 * do not make the rows behind them wait for another tick). In a round: each user's two soonest rows
 * first, and users with a withdrawal failed in the last day after those without; the chains side by
 * side, each chain's rows one after another (they share the hot wallet's nonces), each row in its
 * own transaction; a row is taken once per tick. Then the stuck check.
 */
export async function sendWithdrawals(
  deps: WithdrawalSendDeps,
  opts: { batchSize?: number; maxRounds?: number } = {},
): Promise<WithdrawalSendSummary> {
  const summary: WithdrawalSendSummary = {
    sent: 0,
    failed: 0,
    pending: 0,
    errors: 0,
    held: 0,
    skipped: 0,
    stuckAlerts: 0,
  }
  const batchSize = opts.batchSize ?? WITHDRAWAL_SEND_BATCH
  const deadline = performance.now() + WITHDRAWAL_CHAIN_BUDGET_MS
  const seen: string[] = []
  /** chains whose RPC failed (or is not the chain) this tick: not tried again until the next */
  const down = new Set<string>()
  for (let round = 0; round < (opts.maxRounds ?? WITHDRAWAL_ROUNDS_PER_RUN); round++) {
    const batch = await dueWithdrawals(deps, seen, batchSize)
    for (const row of batch) seen.push(row.id)
    await sendRound(deps, batch, summary, deadline, down)
    if (batch.length < batchSize || performance.now() > deadline) break
  }
  summary.stuckAlerts = await alertStuck(deps)
  return summary
}

/**
 * Due rows not yet taken this tick: every user's soonest due rows first (at most
 * WITHDRAWAL_PER_USER_PER_RUN each); among the same turn, users none of whose withdrawals failed in
 * the last day before the others (one who fed the queue rows that fail waits behind those who did
 * not), then by due time.
 */
async function dueWithdrawals(deps: WithdrawalSendDeps, seen: readonly string[], limit: number): Promise<DueRow[]> {
  return deps.sql<DueRow[]>`
    select id, chain, destination, tx_hash from (
      select id, user_id, chain, destination, tx_hash, next_attempt_at, created_at,
        row_number() over (partition by user_id order by next_attempt_at, created_at, id) as turn
      from withdrawals
      where state = 'requested' and held_at is null and next_attempt_at <= now() and id <> all(${seen as string[]}::uuid[])
    ) due
    where turn <= ${WITHDRAWAL_PER_USER_PER_RUN}
    order by turn,
      exists (select 1 from withdrawals f
        where f.user_id = due.user_id and f.created_at > now() - interval '1 day' and f.state = 'failed'),
      next_attempt_at, created_at, id
    limit ${limit}`
}

/**
 * One round's rows: refused destinations first (one query for the batch), then the chains side by
 * side until `deadline`, each chain's rows one after another through `sendWithdrawal` (whose own
 * checks of the destination and the chain then find nothing new).
 */
async function sendRound(
  deps: WithdrawalSendDeps,
  batch: readonly DueRow[],
  summary: WithdrawalSendSummary,
  deadline: number,
  down: Set<string>,
): Promise<void> {
  const refused = await refuseOwnDestinations(deps, batch)
  summary.failed += refused.size
  const byChain = new Map<string, DueRow[]>()
  for (const row of batch) {
    if (refused.has(row.id)) continue
    const key = row.chain ?? ''
    byChain.set(key, [...(byChain.get(key) ?? []), row])
  }
  await Promise.all(
    [...byChain.entries()].map(async ([chain, rows]) => {
      if (down.has(chain)) return
      if (!(await chainIsReady(deps, chain))) {
        down.add(chain)
        return
      }
      for (const { id } of rows) {
        if (performance.now() > deadline) break
        const result: WithdrawalSendResult = await sendWithdrawal(deps, id)
        summary[result.outcome]++
        if (result.retry?.chainDown) {
          deps.log.warn(
            { chain, withdrawalId: id, code: result.retry.code },
            'withdrawals: chain unavailable, next run',
          )
          down.add(chain)
          break
        }
      }
    }),
  )
}
