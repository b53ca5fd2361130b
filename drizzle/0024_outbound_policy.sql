-- One policy for every outbound transaction (docs/hostile-world.md "One policy for every outbound
-- transaction"; docs/chains.md "The outbox").
-- A version that fills a nonce: a 0-value transfer of the sender to itself, signed at the nonce of a
-- transaction the node refused for good, so no later transaction of that sender waits behind a gap.
-- Recorded before it is broadcast, like any replacement; whichever version is mined is found by its
-- hash, and a mined fill fails the business row once it is at confirmed depth.
ALTER TABLE "outbound_tx_versions" ADD COLUMN "fills_nonce" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Broadcasts of the row's bytes refused with an error nobody recognises while the chain's own probe
-- answered: past a bound the nonce is filled (a fill never pays twice: it shares the nonce).
ALTER TABLE "outbound_txs" ADD COLUMN "refusals" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Withdrawals: preparations that failed with an unknown error while the chain answered its probe;
-- past a bound the withdrawal fails with a reason and its reserve is released.
ALTER TABLE "withdrawals" ADD COLUMN "send_errors" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A user's withdrawals that failed on chain in the cooling window (contract destinations refused
-- after two), found without reading their whole history.
CREATE INDEX "withdrawals_user_reverted_idx" ON "withdrawals" USING btree ("user_id","updated_at") WHERE "withdrawals"."last_error_code" = 'REVERTED';
