-- Books that only postings change (docs/ledger.md "What the database guarantees on its own"): the
-- application's role may read ledger_balances but no longer write it, and writes the journal only
-- through the ledger's functions. Every balance free balance, reserves, solvency and the proof of
-- liabilities read is then the sum of postings written by ledger_append, in the same statement.
--
-- The functions that keep the balances run with their owner's rights (SECURITY DEFINER, owned by
-- the schema owner who runs this migration) and a fixed search_path, so a caller cannot make their
-- unqualified names resolve to objects of its own (pg_temp last, never first). They are executable
-- by the application's role only, not by PUBLIC (the default for a new function).
ALTER FUNCTION ledger_append(jsonb, jsonb, jsonb) SECURITY DEFINER SET search_path = public, pg_temp;
--> statement-breakpoint
-- the reserves lock the user's transit balance row (FOR UPDATE needs the UPDATE right the role no longer has)
ALTER FUNCTION ledger_reserve_withdrawal(uuid, uuid, text, text, numeric, text, text, text)
  SECURITY DEFINER SET search_path = public, pg_temp;
--> statement-breakpoint
ALTER FUNCTION ledger_reserve_funding(uuid, uuid, text, text, text, numeric)
  SECURITY DEFINER SET search_path = public, pg_temp;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION ledger_append(jsonb, jsonb, jsonb),
  ledger_reserve_withdrawal(uuid, uuid, text, text, numeric, text, text, text),
  ledger_reserve_funding(uuid, uuid, text, text, text, numeric) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION ledger_append(jsonb, jsonb, jsonb),
  ledger_reserve_withdrawal(uuid, uuid, text, text, numeric, text, text, text),
  ledger_reserve_funding(uuid, uuid, text, text, text, numeric) TO wheelhouse_app;
--> statement-breakpoint
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ledger_balances FROM wheelhouse_app;
--> statement-breakpoint
-- raw postings would bypass the balances: the journal is appended through ledger_append only
REVOKE INSERT ON ledger_events, ledger_postings FROM wheelhouse_app;
--> statement-breakpoint
-- The balance check (docs/solvency.md "Balances against postings"). Incremental: the sums of postings
-- per account up to a watermark transaction id (every transaction below it had ended when it was
-- taken), plus the postings of the events written since, must equal the balance rows. The events'
-- transaction ids are indexed for that delta; the full check re-sums every posting once a day.
CREATE INDEX "ledger_events_tx_idx" ON "ledger_events" USING btree ("tx_id");
--> statement-breakpoint
CREATE TABLE "ledger_check_sums" (
	"account" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	CONSTRAINT "ledger_check_sums_pkey" PRIMARY KEY ("account", "currency")
);
--> statement-breakpoint
CREATE TABLE "ledger_checks" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
	"kind" text NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"duration_ms" integer NOT NULL,
	-- the check sums cover the events of every transaction below this id
	"watermark" xid8 NOT NULL,
	"events" bigint NOT NULL,
	"accounts" integer NOT NULL,
	"difference_count" integer NOT NULL,
	-- [{ account, currency, balance, postings }], the first 100: empty when the books agree
	"differences" jsonb NOT NULL,
	CONSTRAINT "ledger_checks_kind_check" CHECK ("kind" in ('full', 'incremental'))
);
--> statement-breakpoint
CREATE INDEX "ledger_checks_started_idx" ON "ledger_checks" USING btree ("started_at");
