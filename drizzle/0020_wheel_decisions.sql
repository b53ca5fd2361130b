-- The wheel's decision log (docs/trading.md "Why: the decision log"): why each leg was opened, which
-- expiry and strike were chosen among which candidates, why a wheel waited or skipped, and when a
-- conversion ran. Written only by @wh/trading's decisions.ts, appended when the decision changes.
-- `seq` orders a wheel's rows (several decisions of one tick share its time) and is the API's cursor.
CREATE TABLE "wheel_decisions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
	"wheel_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"position_id" uuid,
	"kind" text NOT NULL,
	"reason" text NOT NULL,
	"facts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "wheel_decisions_seq_key" ON "wheel_decisions" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "wheel_decisions_wheel_idx" ON "wheel_decisions" USING btree ("wheel_id","seq");--> statement-breakpoint
-- The application's rights (0015_app_role.sql): a decision is history, appended and read, never
-- changed or erased by the service.
REVOKE UPDATE, DELETE, TRUNCATE ON wheel_decisions FROM wheelhouse_app;
