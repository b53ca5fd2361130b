-- Four eyes on money (docs/operations.md "Approvals"): the decisions that release money or lift a
-- guard (a held transaction marked sent or failed, the platform stop or a subaccount's stop cleared,
-- a halted chain resumed) are proposed by one operator and take effect only once enough OTHER
-- operators with the approver role approved, before the proposal expires. Each step is a row of
-- its own, appended and never rewritten: who proposed what and why, each approval with who and
-- when, and the outcome once it was executed (or refused or withdrawn).
CREATE TABLE "operator_proposals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"action" text NOT NULL,
	"subject" text NOT NULL,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"reason" text NOT NULL,
	"proposed_by" text NOT NULL,
	"approvals_required" smallint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "operator_proposals_approvals_check" CHECK ("approvals_required" >= 1),
	CONSTRAINT "operator_proposals_expiry_check" CHECK ("expires_at" > "created_at")
);
--> statement-breakpoint
CREATE INDEX "operator_proposals_created_idx" ON "operator_proposals" USING btree ("created_at");
--> statement-breakpoint
CREATE INDEX "operator_proposals_subject_idx" ON "operator_proposals" USING btree ("subject", "created_at");
--> statement-breakpoint
CREATE TABLE "operator_approvals" (
	"proposal_id" uuid NOT NULL REFERENCES "operator_proposals" ("id"),
	"approver" text NOT NULL,
	"approved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "operator_approvals_pkey" PRIMARY KEY ("proposal_id", "approver")
);
--> statement-breakpoint
-- one outcome per proposal: its primary key is what makes an execution happen once
CREATE TABLE "operator_proposal_outcomes" (
	"proposal_id" uuid PRIMARY KEY NOT NULL REFERENCES "operator_proposals" ("id"),
	"outcome" text NOT NULL,
	"decided_by" text NOT NULL,
	"decided_at" timestamp with time zone DEFAULT now() NOT NULL,
	"result" jsonb,
	CONSTRAINT "operator_proposal_outcomes_outcome_check" CHECK ("outcome" in ('executed', 'refused', 'withdrawn'))
);
--> statement-breakpoint
-- The operators' record is history: appended, never rewritten, by the application (privileges) and,
-- short of dropping these triggers, by the owner too.
CREATE FUNCTION operator_history_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'WL006',
    MESSAGE = format('%s is append-only: %s refused (a decision is recorded, never rewritten)', TG_TABLE_NAME, TG_OP);
END $$;
--> statement-breakpoint
CREATE TRIGGER operator_actions_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON operator_actions
  FOR EACH STATEMENT EXECUTE FUNCTION operator_history_refuse_change();
--> statement-breakpoint
CREATE TRIGGER operator_proposals_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON operator_proposals
  FOR EACH STATEMENT EXECUTE FUNCTION operator_history_refuse_change();
--> statement-breakpoint
CREATE TRIGGER operator_approvals_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON operator_approvals
  FOR EACH STATEMENT EXECUTE FUNCTION operator_history_refuse_change();
--> statement-breakpoint
CREATE TRIGGER operator_proposal_outcomes_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON operator_proposal_outcomes
  FOR EACH STATEMENT EXECUTE FUNCTION operator_history_refuse_change();
--> statement-breakpoint
REVOKE UPDATE, DELETE, TRUNCATE ON operator_actions, operator_proposals, operator_approvals, operator_proposal_outcomes FROM wheelhouse_app;
--> statement-breakpoint
-- The database keeps the four-eyes rule itself, whatever code inserts the rows: a proposal by an
-- enabled operator of role operator or approver; an approval by an enabled approver who is not the
-- proposer, before expiry and before the outcome; no "executed" outcome without enough approvals.
CREATE FUNCTION operator_proposal_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM operators o WHERE o.name = NEW.proposed_by AND o.disabled_at IS NULL
                 AND o.role IN ('operator', 'approver')) THEN
    RAISE EXCEPTION USING ERRCODE = 'WL011', MESSAGE = 'a proposal is made by an enabled operator of role operator or approver';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER operator_proposals_check BEFORE INSERT ON operator_proposals
  FOR EACH ROW EXECUTE FUNCTION operator_proposal_check();
--> statement-breakpoint
CREATE FUNCTION operator_approval_check() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_by text;
  v_expires timestamptz;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM operators o WHERE o.name = NEW.approver AND o.disabled_at IS NULL
                 AND o.role = 'approver') THEN
    RAISE EXCEPTION USING ERRCODE = 'WL011', MESSAGE = 'an approval is given by an enabled operator of role approver';
  END IF;
  SELECT p.proposed_by, p.expires_at INTO v_by, v_expires FROM operator_proposals p WHERE p.id = NEW.proposal_id;
  IF v_by = NEW.approver THEN
    RAISE EXCEPTION USING ERRCODE = 'WL007', MESSAGE = 'four eyes: a proposal is approved by someone other than its proposer';
  END IF;
  IF v_expires <= now() THEN
    RAISE EXCEPTION USING ERRCODE = 'WL008', MESSAGE = 'the proposal expired';
  END IF;
  IF EXISTS (SELECT 1 FROM operator_proposal_outcomes o WHERE o.proposal_id = NEW.proposal_id) THEN
    RAISE EXCEPTION USING ERRCODE = 'WL009', MESSAGE = 'the proposal was already decided';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER operator_approvals_check BEFORE INSERT ON operator_approvals
  FOR EACH ROW EXECUTE FUNCTION operator_approval_check();
--> statement-breakpoint
CREATE FUNCTION operator_outcome_check() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.outcome = 'executed' AND
    (SELECT count(*) FROM operator_approvals a WHERE a.proposal_id = NEW.proposal_id)
      < (SELECT p.approvals_required FROM operator_proposals p WHERE p.id = NEW.proposal_id) THEN
    RAISE EXCEPTION USING ERRCODE = 'WL010', MESSAGE = 'four eyes: the proposal has not been approved by enough operators';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER operator_proposal_outcomes_check BEFORE INSERT ON operator_proposal_outcomes
  FOR EACH ROW EXECUTE FUNCTION operator_outcome_check();
