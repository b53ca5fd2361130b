CREATE TABLE "outbound_tx_versions" (
	"outbound_id" uuid NOT NULL,
	"version" smallint NOT NULL,
	"raw_tx" text NOT NULL,
	"tx_hash" varchar(66) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "outbound_tx_versions_outbound_id_version_pk" PRIMARY KEY("outbound_id","version"),
	CONSTRAINT "outbound_tx_versions_tx_hash_key" UNIQUE("tx_hash")
);
--> statement-breakpoint
CREATE TABLE "platform_wallets" (
	"address" varchar(42) PRIMARY KEY NOT NULL,
	"role" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "chain_cursors" ADD COLUMN "block_hash" varchar(66);--> statement-breakpoint
ALTER TABLE "chain_cursors" ADD COLUMN "halted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "chain_cursors" ADD COLUMN "halt_reason" text;--> statement-breakpoint
ALTER TABLE "deposits" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "deposits" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "deposits" ADD COLUMN "last_error_code" text;--> statement-breakpoint
ALTER TABLE "deposits" ADD COLUMN "held_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "deposits" ADD COLUMN "hold_reason" text;--> statement-breakpoint
ALTER TABLE "outbound_txs" ADD COLUMN "contradictions" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "outbound_txs" ADD COLUMN "first_contradiction_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "outbound_txs" ADD COLUMN "hold_reason" text;--> statement-breakpoint
ALTER TABLE "subaccount_releases" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "subaccount_releases" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "subaccount_releases" ADD COLUMN "last_error_code" text;--> statement-breakpoint
ALTER TABLE "subaccount_transfers" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "subaccount_transfers" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "subaccount_transfers" ADD COLUMN "last_error_code" text;--> statement-breakpoint
ALTER TABLE "conversions" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "conversions" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "conversions" ADD COLUMN "last_error_code" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "attempts" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "last_error_code" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "held_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "hold_reason" text;--> statement-breakpoint
CREATE INDEX "deposits_due_idx" ON "deposits" USING btree ("next_attempt_at") WHERE "deposits"."state" in ('detected', 'sweeping', 'retry') and "deposits"."held_at" is null;--> statement-breakpoint
CREATE INDEX "subaccount_releases_due_idx" ON "subaccount_releases" USING btree ("next_attempt_at") WHERE "subaccount_releases"."state" in ('requested', 'waiting', 'withdrawing');--> statement-breakpoint
CREATE INDEX "subaccount_transfers_due_idx" ON "subaccount_transfers" USING btree ("kind","next_attempt_at") WHERE "subaccount_transfers"."state" in ('reserved', 'submitted', 'accepted');--> statement-breakpoint
CREATE INDEX "conversions_due_idx" ON "conversions" USING btree ("next_attempt_at") WHERE "conversions"."state" in ('planned', 'withdrawing', 'swapping', 'depositing');--> statement-breakpoint
CREATE INDEX "withdrawals_due_idx" ON "withdrawals" USING btree ("next_attempt_at") WHERE "withdrawals"."state" = 'requested' and "withdrawals"."held_at" is null;--> statement-breakpoint
-- every transaction signed before this migration is its own version 0
INSERT INTO "outbound_tx_versions" ("outbound_id", "version", "raw_tx", "tx_hash", "created_at")
SELECT "id", 0, "raw_tx", "tx_hash", "created_at" FROM "outbound_txs";
