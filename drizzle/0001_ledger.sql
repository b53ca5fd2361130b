CREATE TABLE "ledger_balances" (
	"account" text NOT NULL,
	"currency" text NOT NULL,
	"slot" smallint NOT NULL,
	"user_id" uuid,
	"balance" numeric(78, 0) NOT NULL,
	CONSTRAINT "ledger_balances_pkey" PRIMARY KEY("account","currency","slot")
);
--> statement-breakpoint
CREATE TABLE "ledger_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"payload" jsonb NOT NULL,
	"user_id" uuid,
	"occurred_at" timestamp with time zone NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"tx_id" "xid8" DEFAULT pg_current_xact_id() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_postings" (
	"event_id" uuid NOT NULL,
	"account" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	CONSTRAINT "ledger_postings_pkey" PRIMARY KEY("event_id","account","currency")
);
--> statement-breakpoint
CREATE TABLE "withdrawals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"state" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "ledger_balances_user_idx" ON "ledger_balances" USING btree ("user_id") WHERE "ledger_balances"."user_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_events_idempotency_key_key" ON "ledger_events" USING btree ("idempotency_key");--> statement-breakpoint
CREATE INDEX "ledger_events_user_time_idx" ON "ledger_events" USING btree ("user_id","occurred_at","id") WHERE "ledger_events"."user_id" is not null;--> statement-breakpoint
CREATE INDEX "withdrawals_active_idx" ON "withdrawals" USING btree ("user_id","currency") WHERE "withdrawals"."state" = 'requested';--> statement-breakpoint
-- ===== hand-written: what drizzle cannot express (docs/ledger.md explains each piece) =====
-- DESIGN: the journal is append-only; a correction is a new event, never an UPDATE or DELETE.
-- Statement-level, so even an UPDATE that matches no row is refused, and TRUNCATE too.
CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'WL003',
    MESSAGE = format('%s is append-only: %s refused (a correction is a new event)', TG_TABLE_NAME, TG_OP);
END $$;
--> statement-breakpoint
CREATE TRIGGER ledger_events_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_events
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
CREATE TRIGGER ledger_postings_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
--> statement-breakpoint
-- A posting may only join an event written by its own transaction, so an event's postings are
-- complete when its transaction commits and the zero-sum check below sees all of them. This also
-- replaces the foreign key: one set-based check per statement instead of a lookup and a KEY SHARE
-- lock per posting row.
-- It also keeps the zero-sum check cheap: if every insert statement's postings balance per
-- (event, currency), every event balances, so the deferred per-event check only has work to do
-- when some statement did not balance by itself (flag ledger.unbalanced_tx, local to the
-- transaction). Once a zero-sum check has run in this transaction (SET CONSTRAINTS ... IMMEDIATE,
-- flag ledger.sealed_tx), later postings are checked in full here, since the check of their
-- event may not fire again.
CREATE FUNCTION ledger_postings_own_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_tx text := pg_current_xact_id()::text;
  v_bad record;
BEGIN
  -- a scalar subquery per distinct event: always an index probe, never a hash join over the
  -- whole journal (an anti join is what the planner picks once the table is large)
  IF EXISTS (
    SELECT 1 FROM (SELECT DISTINCT p.event_id FROM new_postings p) p
    WHERE (SELECT e.tx_id FROM ledger_events e WHERE e.id = p.event_id) IS DISTINCT FROM pg_current_xact_id()
  ) THEN
    RAISE EXCEPTION USING ERRCODE = 'WL004',
      MESSAGE = 'a posting must belong to an event written by the same transaction';
  END IF;
  IF current_setting('ledger.sealed_tx', true) IS NOT DISTINCT FROM v_tx THEN
    SELECT p.event_id, p.currency INTO v_bad FROM ledger_postings p
    WHERE p.event_id IN (SELECT n.event_id FROM new_postings n)
    GROUP BY p.event_id, p.currency HAVING sum(p.amount) <> 0 LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'WL002',
        MESSAGE = format('ledger event %s does not sum to zero in %s', v_bad.event_id, v_bad.currency);
    END IF;
  ELSIF EXISTS (SELECT 1 FROM new_postings n GROUP BY n.event_id, n.currency HAVING sum(n.amount) <> 0) THEN
    PERFORM set_config('ledger.unbalanced_tx', v_tx, true);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER ledger_postings_own_event AFTER INSERT ON ledger_postings
  REFERENCING NEW TABLE AS new_postings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_postings_own_event();
--> statement-breakpoint
-- DESIGN: every event is zero-sum per currency. Deferred to commit, so postings written by any
-- number of statements of the transaction are all counted.
CREATE FUNCTION ledger_check_zero_sum() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_tx text := pg_current_xact_id()::text;
  v_currency text;
BEGIN
  IF current_setting('ledger.sealed_tx', true) IS DISTINCT FROM v_tx THEN
    PERFORM set_config('ledger.sealed_tx', v_tx, true);
  END IF;
  IF current_setting('ledger.unbalanced_tx', true) IS DISTINCT FROM v_tx THEN
    RETURN NULL;
  END IF;
  SELECT p.currency INTO v_currency FROM ledger_postings p
  WHERE p.event_id = NEW.id GROUP BY p.currency HAVING sum(p.amount) <> 0 LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'WL002',
      MESSAGE = format('ledger event %s (%s) does not sum to zero in %s', NEW.id, NEW.type, v_currency);
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER ledger_events_zero_sum AFTER INSERT ON ledger_events
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger_check_zero_sum();
--> statement-breakpoint
-- The append: a whole batch in one round trip (@wh/ledger journal.ts builds the three documents).
--   p_events   [{i id, t type, k key, p payload, u user_id, o occurred_at}]
--   p_postings [{e event id, a account, c currency, m amount, s slot, u owner}] (netted, zero-sum)
--   p_checks   [{e event id, u user_id, c currency, a transit account}] for authorizing events
-- Locks are taken in one global order, so concurrent appends cannot deadlock: first the
-- idempotency keys (sorted), then the balance rows (sorted by account, currency, slot).
-- Separate statements so each sees rows committed while it waited (READ COMMITTED): a duplicate
-- returns the event of whichever transaction won the key.
CREATE FUNCTION ledger_append(p_events jsonb, p_postings jsonb, p_checks jsonb)
RETURNS TABLE (k text, ins boolean, id uuid, t text, p jsonb, u uuid, o timestamptz, r timestamptz, same boolean)
LANGUAGE plpgsql SET work_mem = '32MB' AS $$
DECLARE
  v_inserted uuid[];
  v_short record;
  v_dups bigint;
BEGIN
  WITH ins AS (
    INSERT INTO ledger_events AS e (id, type, idempotency_key, payload, user_id, occurred_at)
    SELECT x.i, x.t, x.k, x.p, x.u, x.o
    FROM jsonb_to_recordset(p_events) AS x(i uuid, t text, k text, p jsonb, u uuid, o timestamptz)
    ORDER BY x.k
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING e.id
  )
  SELECT coalesce(array_agg(ins.id), '{}') INTO v_inserted FROM ins;

  IF cardinality(v_inserted) > 0 AND jsonb_array_length(p_postings) > 0 THEN
    WITH ps AS MATERIALIZED (
      SELECT x.e, x.a, x.c, x.m, x.s, x.u
      FROM jsonb_to_recordset(p_postings) AS x(e uuid, a text, c text, m numeric, s smallint, u uuid)
      JOIN unnest(v_inserted) AS i(id) ON i.id = x.e
    ), written AS (
      INSERT INTO ledger_postings (event_id, account, currency, amount) SELECT ps.e, ps.a, ps.c, ps.m FROM ps
    )
    INSERT INTO ledger_balances AS b (account, currency, slot, user_id, balance)
    SELECT ps.a, ps.c, ps.s, (array_agg(ps.u))[1], sum(ps.m) FROM ps
    GROUP BY ps.a, ps.c, ps.s
    ORDER BY ps.a, ps.c, ps.s
    ON CONFLICT (account, currency, slot) DO UPDATE SET balance = b.balance + excluded.balance;
  END IF;

  IF cardinality(v_inserted) > 0 AND jsonb_array_length(p_checks) > 0 THEN
    -- authorizing events: the transit rows are locked by the upsert above, and a withdrawal
    -- reserve takes the same lock, so this read cannot race one (spec 3.2, DESIGN free balance)
    SELECT c.u, c.c, bal.v - res.v AS free INTO v_short
    FROM (
      SELECT DISTINCT x.u, x.c, x.a
      FROM jsonb_to_recordset(p_checks) AS x(e uuid, u uuid, c text, a text)
      JOIN unnest(v_inserted) AS i(id) ON i.id = x.e
    ) c
    CROSS JOIN LATERAL (
      SELECT coalesce(sum(b.balance), 0) AS v FROM ledger_balances b WHERE b.account = c.a AND b.currency = c.c
    ) bal
    CROSS JOIN LATERAL (
      SELECT coalesce(sum(w.amount), 0) AS v FROM withdrawals w
      WHERE w.user_id = c.u AND w.currency = c.c AND w.state = 'requested'
    ) res
    WHERE bal.v - res.v < 0
    LIMIT 1;
    IF FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'WL001', MESSAGE = 'INSUFFICIENT_FREE_BALANCE',
        DETAIL = json_build_object('userId', v_short.u, 'currency', v_short.c, 'freeBalance', v_short.free::text)::text;
    END IF;
  END IF;

  -- first row: the recording time of the inserted events (the caller knows the rest of them)
  RETURN QUERY SELECT NULL::text, true, NULL::uuid, NULL::text, NULL::jsonb, NULL::uuid, NULL::timestamptz, now(), true;
  IF cardinality(v_inserted) < jsonb_array_length(p_events) THEN
    -- duplicates (spec 6 rule 3): the earlier event, and whether this payload matches it
    RETURN QUERY
      SELECT x.k, false, e.id, e.type, e.payload, e.user_id, e.occurred_at, e.recorded_at,
        (e.type = x.t AND e.payload = x.p)
      FROM jsonb_to_recordset(p_events) AS x(i uuid, t text, k text, p jsonb)
      LEFT JOIN unnest(v_inserted) AS i(id) ON i.id = x.i
      JOIN ledger_events e ON e.idempotency_key = x.k
      WHERE i.id IS NULL;
    GET DIAGNOSTICS v_dups = ROW_COUNT;
    IF v_dups + cardinality(v_inserted) <> jsonb_array_length(p_events) THEN
      RAISE EXCEPTION USING ERRCODE = 'WL005',
        MESSAGE = 'an existing idempotency key is not visible: append in READ COMMITTED';
    END IF;
  END IF;
END $$;
--> statement-breakpoint
-- spec 3.2 / DESIGN: a withdrawal request reserves part of the free balance. The transit row lock
-- serialises it with authorizing appends of the same user; the sums are read after the lock, in
-- a fresh statement, so they include whatever the previous holder committed.
CREATE FUNCTION ledger_reserve_withdrawal(p_id uuid, p_user uuid, p_currency text, p_transit text, p_amount numeric)
RETURNS TABLE (ok boolean, free numeric)
LANGUAGE plpgsql AS $$
DECLARE
  v_free numeric;
BEGIN
  PERFORM 1 FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency FOR UPDATE;
  SELECT
    (SELECT coalesce(sum(b.balance), 0) FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency)
    - (SELECT coalesce(sum(w.amount), 0) FROM withdrawals w
       WHERE w.user_id = p_user AND w.currency = p_currency AND w.state = 'requested')
  INTO v_free;
  IF v_free < p_amount THEN
    RETURN QUERY SELECT false, v_free;
    RETURN;
  END IF;
  INSERT INTO withdrawals (id, user_id, state, currency, amount) VALUES (p_id, p_user, 'requested', p_currency, p_amount);
  RETURN QUERY SELECT true, v_free - p_amount;
END $$;
