CREATE TABLE "swaps" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"subaccount_id" text NOT NULL,
	"chain" text NOT NULL,
	"sell_currency" text NOT NULL,
	"buy_currency" text NOT NULL,
	"amount_in" numeric(78, 0) NOT NULL,
	"index_price_num" numeric(78, 0) NOT NULL,
	"index_price_den" numeric(78, 0) NOT NULL,
	"state" text NOT NULL,
	"run" integer DEFAULT 0 NOT NULL,
	"step" smallint DEFAULT 0 NOT NULL,
	"run_started_at" timestamp with time zone NOT NULL,
	"first_attempt_at" timestamp with time zone NOT NULL,
	"tx_hash" varchar(66),
	"sell_amount" numeric(78, 0),
	"buy_amount" numeric(78, 0),
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "swaps_running_idx" ON "swaps" USING btree ("state","run_started_at") WHERE "swaps"."state" = 'running';--> statement-breakpoint
CREATE INDEX "swaps_user_idx" ON "swaps" USING btree ("user_id","created_at");