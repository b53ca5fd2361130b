-- The treasury's withdrawals on Derive v3 (docs/chains.md "Treasury"): USDC paid out on L1 from the
-- platform's funding subaccount to the Ethereum hot wallet. Written only by the worker's
-- jobs/treasury/store.ts. Crash-safe like the chain outbox: the signed private/withdraw is stored
-- before it is sent, so a restarted worker sends or finds that one, never a second.
-- States: signed (params stored) → sent (the exchange's operation uuid known) → paid (the L1 payout
-- seen and `bridged` derive → ethereum journaled) | failed (refused or reverted: nothing moved).
CREATE TABLE "treasury_withdrawals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chain" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"state" text NOT NULL,
	"params" jsonb NOT NULL,
	"op_uuid" text,
	"l1_tx_hash" text,
	"fee" numeric(78, 0),
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "treasury_withdrawals_state_check" CHECK ("state" IN ('signed', 'sent', 'paid', 'failed')),
	CONSTRAINT "treasury_withdrawals_amount_check" CHECK ("amount" > 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX "treasury_withdrawals_op_uuid_key" ON "treasury_withdrawals" USING btree ("op_uuid") WHERE "op_uuid" IS NOT NULL;--> statement-breakpoint
-- at most one open withdrawal per chain: the database refuses a second signature while one is open
CREATE UNIQUE INDEX "treasury_withdrawals_open_key" ON "treasury_withdrawals" USING btree ("chain") WHERE "state" IN ('signed', 'sent');
