CREATE TABLE "platform_stops" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"raised_at" timestamp with time zone DEFAULT now() NOT NULL,
	"raised_by" text NOT NULL,
	"reason" text NOT NULL,
	"details" jsonb,
	"cleared_at" timestamp with time zone,
	"cleared_by" text,
	"clear_reason" text
);
--> statement-breakpoint
CREATE TABLE "solvency_deficits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"currency" text NOT NULL,
	"opened_at" timestamp with time zone DEFAULT now() NOT NULL,
	"opened_run_id" uuid NOT NULL,
	"worst" text NOT NULL,
	"closed_at" timestamp with time zone,
	"closed_run_id" uuid
);
--> statement-breakpoint
CREATE TABLE "solvency_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone DEFAULT now() NOT NULL,
	"complete" boolean NOT NULL,
	"legs" jsonb NOT NULL,
	"totals" jsonb NOT NULL,
	"surpluses" jsonb NOT NULL,
	"errors" jsonb NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "platform_stops_open_key" ON "platform_stops" USING btree ("raised_by") WHERE "platform_stops"."cleared_at" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "solvency_deficits_open_key" ON "solvency_deficits" USING btree ("currency") WHERE "solvency_deficits"."closed_at" is null;--> statement-breakpoint
CREATE INDEX "solvency_runs_finished_idx" ON "solvency_runs" USING btree ("finished_at");