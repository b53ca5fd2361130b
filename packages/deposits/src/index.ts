/**
 * @wh/deposits: the one owner of the `deposits` table and of the deposit audit's tables
 * (docs/architecture.md "Table owners"). Every write of a deposit (transitions.ts: detected by the
 * scan or the audit, the sweep's states, its queue's place and hold) and of the audit's cursors,
 * readings and surplus episodes (audit.ts), with the rows' types (rows.ts), and a user's own
 * deposits as GET /deposits lists them (reads.ts). The worker's scan,
 * sweep and audit ticks (apps/worker/src/jobs/deposits/) read the chain and call these;
 * docs/chains.md tells the whole path.
 */
export * from './audit'
export * from './reads'
export * from './rows'
export * from './transitions'
