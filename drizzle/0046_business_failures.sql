-- Business failures counted where they are decided (docs/architecture.md "Business failures"): a
-- withdrawal, deposit, subaccount movement, release, position or conversion that ends `failed`, and a
-- withdrawal or deposit held for an operator, adds one to (area, reason). GET /metrics shows the
-- counts as wh_business_failures_total{area,reason}.
--
-- Triggers, not the code that fails the rows: the count commits with the failure (a rolled-back
-- failure counts nothing, a failure counts once whichever tick, job, operator or CLI decided it), and
-- no path can forget it. Deferred like 0021's account events, so the counter row is locked only while
-- the failing transaction commits. `reason` is the row's code where the row has one (withdrawals:
-- last_error_code, the user's reason code); the rows whose reason is a sentence count as FAILED (a
-- label must be a bounded set, never free text).
CREATE TABLE "business_failures" (
  "area" text NOT NULL,
  "reason" text NOT NULL,
  "count" bigint DEFAULT 0 NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "business_failures_pkey" PRIMARY KEY ("area", "reason")
);
--> statement-breakpoint
CREATE FUNCTION business_failure_count(p_area text, p_reason text) RETURNS void LANGUAGE sql AS $$
  INSERT INTO business_failures AS b (area, reason, count)
  VALUES (p_area, CASE WHEN p_reason ~ '^[A-Z][A-Z0-9_]{1,63}$' THEN p_reason ELSE 'FAILED' END, 1)
  ON CONFLICT (area, reason) DO UPDATE SET count = b.count + 1, updated_at = now()
$$;
--> statement-breakpoint
-- (area, reason) given by the trigger (TG_ARGV): the tables whose failure carries no code
CREATE FUNCTION business_failures_as() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM business_failure_count(TG_ARGV[0], TG_ARGV[1]);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- a withdrawal's failure carries the user's reason code
CREATE FUNCTION business_failures_withdrawal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM business_failure_count('withdrawals', NEW.last_error_code);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- a subaccount movement counts under its kind (fund, release, fee, convert_out, convert_in, top_up)
CREATE FUNCTION business_failures_transfer() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM business_failure_count(NEW.kind, 'FAILED');
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_withdrawal AFTER UPDATE ON withdrawals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
  EXECUTE FUNCTION business_failures_withdrawal();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_withdrawal_held AFTER UPDATE ON withdrawals
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.held_at IS NOT NULL AND OLD.held_at IS NULL)
  EXECUTE FUNCTION business_failures_as('withdrawals', 'HELD');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_deposit AFTER UPDATE ON deposits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
  EXECUTE FUNCTION business_failures_as('deposits', 'SWEEP_FAILED');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_deposit_held AFTER UPDATE ON deposits
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.held_at IS NOT NULL AND OLD.held_at IS NULL)
  EXECUTE FUNCTION business_failures_as('deposits', 'HELD');
--> statement-breakpoint
-- a reserved funding released because its position was cancelled (@wh/subaccounts
-- cancelReservedFunding, reason 'position cancelled') is the user's choice, not a failure
CREATE CONSTRAINT TRIGGER business_failures_transfer AFTER UPDATE ON subaccount_transfers
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed' AND NEW.reason IS DISTINCT FROM 'position cancelled')
  EXECUTE FUNCTION business_failures_transfer();
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_release AFTER UPDATE ON subaccount_releases
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
  EXECUTE FUNCTION business_failures_as('releases', 'FAILED');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_position AFTER UPDATE ON positions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
  EXECUTE FUNCTION business_failures_as('positions', 'FAILED');
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER business_failures_conversion AFTER UPDATE ON conversions
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
  WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
  EXECUTE FUNCTION business_failures_as('conversions', 'FAILED');
