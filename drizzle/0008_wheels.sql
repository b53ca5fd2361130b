CREATE TABLE "wheels" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"asset" text NOT NULL,
	"subaccount_id" uuid NOT NULL,
	"state" text NOT NULL,
	"stop_mode" text,
	"cost_basis_e18" numeric(78, 0),
	"current_position_id" uuid,
	"cycles" bigint DEFAULT 0 NOT NULL,
	"reason" text,
	"last_attempt_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"stopped_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "wheels_user_asset_active_key" ON "wheels" USING btree ("user_id","asset") WHERE "wheels"."state" <> 'stopped';--> statement-breakpoint
CREATE INDEX "wheels_active_idx" ON "wheels" USING btree ("state") WHERE "wheels"."state" <> 'stopped';