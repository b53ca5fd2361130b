CREATE TABLE "conversions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"wheel_id" uuid NOT NULL,
	"position_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"subaccount_id" uuid NOT NULL,
	"asset" text NOT NULL,
	"direction" text NOT NULL,
	"trigger" text NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"sell_currency" text NOT NULL,
	"buy_currency" text NOT NULL,
	"amount_in" numeric(78, 0),
	"amount_out" numeric(78, 0),
	"out_transfer_id" uuid,
	"in_transfer_id" uuid,
	"swap_id" uuid,
	"alerted_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "position_fills" ADD COLUMN "fee_transfer_id" uuid;--> statement-breakpoint
ALTER TABLE "positions" ADD COLUMN "iv_e18" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "positions" ADD COLUMN "close_limit_e18" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "positions" ADD COLUMN "bought_e18" numeric(78, 0) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "positions" ADD COLUMN "close_cost" numeric(78, 0) DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "holding" text DEFAULT 'cash' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "conversions_position_key" ON "conversions" USING btree ("position_id");--> statement-breakpoint
CREATE INDEX "conversions_open_idx" ON "conversions" USING btree ("subaccount_id") WHERE "conversions"."state" in ('planned', 'withdrawing', 'swapping', 'depositing');