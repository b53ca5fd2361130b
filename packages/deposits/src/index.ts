/**
 * @wh/deposits: the one owner of the `deposits` table and of the deposit audit's tables
 * (docs/architecture.md "Table owners"), and the runs that read the chain and decide what to
 * write (docs/chains.md tells the whole path):
 * - the watch (scan/): every user's deposit address in the book, confirmed transfers into them
 *   recorded as deposits;
 * - the sweep (sweep/): the due deposits fanned out one job each (fan-out.ts), each deposit's sweep
 *   (sweep.ts, run by job.ts);
 * - the balance audit (audit/): ETH at deposit addresses that no deposit explains (run.ts, targets.ts),
 *   and every write of the audit's cursors, readings and surplus episodes (store.ts);
 * - every write of a deposit (transitions.ts), the rows' types (rows.ts), and a user's own deposits
 *   as GET /deposits lists them (reads.ts).
 * The worker's ticks (apps/worker/src/jobs/deposits/ticks.ts) name, queue and time these runs.
 */
export * from './audit/run'
export * from './audit/store'
export * from './audit/targets'
export * from './audit/types'
export * from './log'
export * from './reads'
export * from './rows'
export * from './scan/address-book'
export * from './scan/scan'
export * from './sweep/fan-out'
export * from './sweep/job'
export * from './sweep/sweep'
export * from './transitions'
