CREATE TABLE "chain_cursors" (
	"chain" text PRIMARY KEY NOT NULL,
	"next_block" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposit_addresses" (
	"hd_index" integer PRIMARY KEY NOT NULL,
	"address" varchar(42) NOT NULL,
	"user_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposit_addresses_address_key" UNIQUE("address"),
	CONSTRAINT "deposit_addresses_user_id_key" UNIQUE("user_id")
);
--> statement-breakpoint
CREATE TABLE "deposits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chain" text NOT NULL,
	"tx_hash" varchar(66) NOT NULL,
	"log_index" bigint NOT NULL,
	"block_number" bigint NOT NULL,
	"user_id" uuid NOT NULL,
	"hd_index" integer NOT NULL,
	"address" varchar(42) NOT NULL,
	"token" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"state" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposits_chain_tx_log_key" UNIQUE("chain","tx_hash","log_index")
);
--> statement-breakpoint
CREATE TABLE "outbound_txs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"chain" text NOT NULL,
	"purpose" text NOT NULL,
	"ref_id" text NOT NULL,
	"step" smallint DEFAULT 0 NOT NULL,
	"from_address" varchar(42) NOT NULL,
	"to_address" varchar(42) NOT NULL,
	"token" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"nonce" bigint NOT NULL,
	"raw_tx" text NOT NULL,
	"tx_hash" varchar(66) NOT NULL,
	"state" text NOT NULL,
	"gas_used" numeric(78, 0),
	"effective_gas_price" numeric(78, 0),
	"block_number" bigint,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "outbound_txs_purpose_ref_step_key" UNIQUE("purpose","ref_id","step"),
	CONSTRAINT "outbound_txs_chain_from_nonce_key" UNIQUE("chain","from_address","nonce")
);
--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "chain" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "destination" varchar(42);--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "network_fee" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "tx_hash" varchar(66);--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "idempotency_key" varchar(128);--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "failure_reason" text;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD COLUMN "sent_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "deposits_pending_idx" ON "deposits" USING btree ("state","created_at") WHERE "deposits"."state" <> 'swept';--> statement-breakpoint
CREATE INDEX "outbound_txs_open_idx" ON "outbound_txs" USING btree ("state","created_at") WHERE "outbound_txs"."state" in ('signed', 'broadcast');--> statement-breakpoint
CREATE UNIQUE INDEX "withdrawals_user_idempotency_key" ON "withdrawals" USING btree ("user_id","idempotency_key") WHERE "withdrawals"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "withdrawals_user_created_idx" ON "withdrawals" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "withdrawals_state_idx" ON "withdrawals" USING btree ("state","created_at") WHERE "withdrawals"."state" <> 'sent';