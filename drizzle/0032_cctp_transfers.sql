-- The L2 route's transfers over Circle's CCTP (docs/chains.md "The L2 route"): USDC burned on one chain's
-- TokenMessengerV2 and minted on another's MessageTransmitterV2 once Circle's attestation service signed it.
-- Written only by the worker's jobs/cctp/store.ts. The row exists before anything is signed; each leg is an
-- outbox row (purpose cctp_burn: approve step 0, burn step 1 on the source; cctp_mint step 0 on the destination),
-- so a restart resumes the same transactions. States: burning → attesting (the burn final, the attestation asked
-- for with backoff) → minting (the attested message stored) → done (minted, `bridged` journaled in the same
-- transaction) | failed (the burn failed on chain: nothing left the source).
CREATE TABLE "cctp_transfers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"source_chain" text NOT NULL,
	"dest_chain" text NOT NULL,
	"reason" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"max_fee" numeric(78, 0) NOT NULL,
	"min_finality" integer NOT NULL,
	"state" text NOT NULL,
	"burn_tx_hash" text,
	"burned_at" timestamp with time zone,
	"nonce" text,
	"message" text,
	"attestation" text,
	"fee_executed" numeric(78, 0),
	"mint_tx_hash" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"late_alerted_at" timestamp with time zone,
	"problem" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"done_at" timestamp with time zone,
	CONSTRAINT "cctp_transfers_state_check" CHECK ("state" IN ('burning', 'attesting', 'minting', 'done', 'failed')),
	CONSTRAINT "cctp_transfers_reason_check" CHECK ("reason" IN ('sweep', 'refill')),
	CONSTRAINT "cctp_transfers_amount_check" CHECK ("amount" > 0),
	CONSTRAINT "cctp_transfers_fee_check" CHECK ("max_fee" >= 0 AND "max_fee" < "amount"),
	CONSTRAINT "cctp_transfers_finality_check" CHECK ("min_finality" IN (1000, 2000)),
	CONSTRAINT "cctp_transfers_route_check" CHECK ("source_chain" <> "dest_chain")
);
--> statement-breakpoint
-- at most one open transfer per route: the database refuses a second while one is under way
CREATE UNIQUE INDEX "cctp_transfers_open_route_key" ON "cctp_transfers" USING btree ("source_chain", "dest_chain") WHERE "state" IN ('burning', 'attesting', 'minting');
