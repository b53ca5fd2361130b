CREATE TABLE "position_fills" (
	"trade_id" text PRIMARY KEY NOT NULL,
	"position_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"subaccount_id" uuid NOT NULL,
	"amount_e18" numeric(78, 0) NOT NULL,
	"price_e18" numeric(78, 0) NOT NULL,
	"premium" numeric(78, 0) NOT NULL,
	"exchange_fee" numeric(78, 0) NOT NULL,
	"platform_fee" numeric(78, 0) NOT NULL,
	"traded_at" timestamp with time zone NOT NULL,
	"fee_collected_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "positions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"asset" text NOT NULL,
	"side" text NOT NULL,
	"wheel_id" uuid,
	"subaccount_id" uuid NOT NULL,
	"state" text NOT NULL,
	"collateral_currency" text NOT NULL,
	"collateral_amount" numeric(78, 0) NOT NULL,
	"funding_transfer_id" uuid,
	"instrument" text,
	"strike_e18" numeric(78, 0),
	"expiry_sec" bigint,
	"size_e18" numeric(78, 0),
	"filled_e18" numeric(78, 0) DEFAULT '0' NOT NULL,
	"premium" numeric(78, 0) DEFAULT '0' NOT NULL,
	"fees" numeric(78, 0) DEFAULT '0' NOT NULL,
	"order_id" text,
	"window_ends_at" timestamp with time zone,
	"next_reprice_at" timestamp with time zone,
	"outcome" text,
	"settlement_cost" numeric(78, 0),
	"cancel_requested_at" timestamp with time zone,
	"reason" text,
	"idempotency_key" varchar(128),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "position_fills_position_idx" ON "position_fills" USING btree ("position_id");--> statement-breakpoint
CREATE INDEX "position_fills_uncollected_idx" ON "position_fills" USING btree ("subaccount_id") WHERE "position_fills"."fee_collected_at" is null;--> statement-breakpoint
CREATE INDEX "positions_user_created_idx" ON "positions" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "positions_live_idx" ON "positions" USING btree ("state","updated_at") WHERE "positions"."state" in ('requested', 'funding', 'placing', 'open', 'closing');--> statement-breakpoint
CREATE INDEX "positions_subaccount_idx" ON "positions" USING btree ("subaccount_id","state");--> statement-breakpoint
CREATE UNIQUE INDEX "positions_user_idempotency_key" ON "positions" USING btree ("user_id","idempotency_key") WHERE "positions"."idempotency_key" is not null;