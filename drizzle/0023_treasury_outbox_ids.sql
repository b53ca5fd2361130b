-- The treasury follows a payout Derive's WithdrawalOutbox throttled (docs/exchange-v3.md "Money out";
-- docs/chains.md "Treasury"): the outbox ids of a withdrawal, as its settling L1 transaction names them
-- (WithdrawalPaid / WithdrawalEnqueued to the hot wallet), once that transaction is final. Later
-- WithdrawalPaid logs of these ids pay the queued rest; what they paid is summed from the chain each
-- run, never kept here. Written only by the worker's jobs/treasury/store.ts.
ALTER TABLE "treasury_withdrawals" ADD COLUMN "outbox_ids" text[];
