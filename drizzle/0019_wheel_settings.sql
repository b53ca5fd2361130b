-- Per-wheel settings (docs/trading.md "Wheel settings"): how the wheel's legs pick their strike and
-- expiry, and what happens after an expiry. NULL means "the active TRADING_PROFILE's value", so the
-- wheels of earlier releases run exactly as before and follow the profile until the user sets a
-- figure. Bounds are checked by @wh/trading (wheel-settings.ts), not here: they belong to the profile.
ALTER TABLE "positions" ADD COLUMN "leg_settings" jsonb;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "strike_by" text;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "put_target_delta_bps" integer;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "call_target_delta_bps" integer;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "otm_bps" integer;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "min_tenor_hours" integer;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "max_tenor_days" integer;--> statement-breakpoint
ALTER TABLE "wheels" ADD COLUMN "at_expiry" text;--> statement-breakpoint
ALTER TABLE "wheels" ADD CONSTRAINT "wheels_strike_by_check" CHECK ("wheels"."strike_by" in ('delta', 'otm'));--> statement-breakpoint
ALTER TABLE "wheels" ADD CONSTRAINT "wheels_at_expiry_check" CHECK ("wheels"."at_expiry" in ('roll', 'settle'));
