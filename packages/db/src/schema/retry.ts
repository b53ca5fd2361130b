import { integer, text, timestamp } from 'drizzle-orm/pg-core'

/**
 * The columns of a row that waits for a tick to move money (a withdrawal, a deposit's sweep, a
 * funding, a release, a conversion round): how often its preparation failed, the last error's code,
 * and when it may be tried again. Ticks take the rows that are due, soonest first, so a row that
 * keeps failing waits out its backoff instead of standing first in line (docs/hostile-world.md
 * "Fair queues").
 */
export function retryColumns() {
  return {
    /** failed attempts since the row was created (a success does not reset it) */
    attempts: integer('attempts').notNull().default(0),
    /** the row is not taken before this time; new rows are due at once */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    /** a stable code of the last failure (RPC_UNAVAILABLE, DESTINATION_REFUSED, …), null after none */
    lastErrorCode: text('last_error_code'),
  }
}

/**
 * A row an operator must decide (contradictory evidence from the chain): ticks leave it alone until
 * the hold is lifted. The row keeps its state, so a withdrawal's reserve stays held meanwhile.
 */
export function holdColumns() {
  return {
    heldAt: timestamp('held_at', { withTimezone: true }),
    holdReason: text('hold_reason'),
  }
}
