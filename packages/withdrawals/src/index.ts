/**
 * @wh/withdrawals: the one owner of the `withdrawals` table (docs/architecture.md "Table owners").
 * The request (request.ts: every rule of POST /withdrawals, and the reserve; routes.ts: the routes
 * and bounds it checks), the send (send.ts: one withdrawal by id; send-round.ts: the worker's
 * `withdrawals-send` tick over the due rows; send-deps.ts: both on the real outbox), every write of
 * the row (transitions.ts) and the reads the API answers with (rows.ts). docs/chains.md
 * "Withdrawals" tells the whole path.
 */
export * from './cooling'
export * from './destinations'
export * from './errors'
export * from './limits'
export * from './price'
export * from './request'
export * from './routes'
export * from './rows'
export * from './send'
export * from './send-deps'
export * from './send-one'
export * from './send-round'
export * from './send-verdict'
export * from './transitions'
