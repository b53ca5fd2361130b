CREATE TABLE "deposit_audit_cursors" (
	"chain" text PRIMARY KEY NOT NULL,
	"next_hd_index" integer DEFAULT 0 NOT NULL,
	"activity_block" bigint NOT NULL,
	"rotations" integer DEFAULT 0 NOT NULL,
	"rotation_started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposit_balance_audits" (
	"chain" text NOT NULL,
	"address" varchar(42) NOT NULL,
	"checked_block" bigint NOT NULL,
	"checked_at" timestamp with time zone NOT NULL,
	"balance" numeric(78, 0) NOT NULL,
	"expected" numeric(78, 0) NOT NULL,
	"clean_block" bigint,
	CONSTRAINT "deposit_balance_audits_chain_address_pk" PRIMARY KEY("chain","address")
);
--> statement-breakpoint
CREATE TABLE "deposit_surpluses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chain" text NOT NULL,
	"address" varchar(42) NOT NULL,
	"hd_index" integer NOT NULL,
	"user_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"credited_amount" numeric(78, 0) DEFAULT '0' NOT NULL,
	"readings" integer DEFAULT 1 NOT NULL,
	"first_seen_block" bigint NOT NULL,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_block" bigint NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"trace_from_block" bigint NOT NULL,
	"traced_to_block" bigint,
	"state" text NOT NULL,
	"reason" text,
	"alerted_at" timestamp with time zone,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "deposit_surpluses_open_key" ON "deposit_surpluses" USING btree ("chain","address") WHERE "deposit_surpluses"."state" = 'open';--> statement-breakpoint
CREATE INDEX "deposit_surpluses_address_idx" ON "deposit_surpluses" USING btree ("chain","address","first_seen_block");--> statement-breakpoint
CREATE INDEX "deposits_chain_address_idx" ON "deposits" USING btree ("chain","address");--> statement-breakpoint
CREATE INDEX "deposits_chain_block_idx" ON "deposits" USING btree ("chain","block_number");--> statement-breakpoint
CREATE INDEX "outbound_txs_topup_to_idx" ON "outbound_txs" USING btree ("chain","to_address") WHERE "outbound_txs"."purpose" = 'gas_topup';--> statement-breakpoint
CREATE INDEX "outbound_txs_mined_block_idx" ON "outbound_txs" USING btree ("chain","block_number") WHERE "outbound_txs"."block_number" is not null;