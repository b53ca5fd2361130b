CREATE TABLE "subaccount_releases" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"subaccount_id" uuid NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"idempotency_key" varchar(128),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "subaccount_transfers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"subaccount_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"release_id" uuid,
	"state" text NOT NULL,
	"currency" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"method" text,
	"params" jsonb,
	"nonce" bigint,
	"transaction_id" text,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"submitted_at" timestamp with time zone,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "subaccounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"user_id" uuid NOT NULL,
	"asset" text NOT NULL,
	"exchange_id" bigint,
	"stopped_at" timestamp with time zone,
	"stop_reason" text,
	"accrued_to_ms" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "subaccount_releases_open_idx" ON "subaccount_releases" USING btree ("created_at") WHERE "subaccount_releases"."state" in ('requested', 'waiting', 'withdrawing');--> statement-breakpoint
CREATE INDEX "subaccount_releases_user_idx" ON "subaccount_releases" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "subaccount_releases_user_idempotency_key" ON "subaccount_releases" USING btree ("user_id","idempotency_key") WHERE "subaccount_releases"."idempotency_key" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "subaccount_transfers_transaction_id_key" ON "subaccount_transfers" USING btree ("transaction_id") WHERE "subaccount_transfers"."transaction_id" is not null;--> statement-breakpoint
CREATE INDEX "subaccount_transfers_open_idx" ON "subaccount_transfers" USING btree ("kind","created_at") WHERE "subaccount_transfers"."state" in ('reserved', 'submitted', 'accepted');--> statement-breakpoint
CREATE INDEX "subaccount_transfers_in_flight_idx" ON "subaccount_transfers" USING btree ("user_id","currency") WHERE "subaccount_transfers"."kind" = 'fund' and "subaccount_transfers"."state" in ('reserved', 'submitted', 'accepted');--> statement-breakpoint
CREATE INDEX "subaccount_transfers_subaccount_idx" ON "subaccount_transfers" USING btree ("subaccount_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "subaccounts_user_asset_key" ON "subaccounts" USING btree ("user_id","asset");--> statement-breakpoint
CREATE UNIQUE INDEX "subaccounts_exchange_id_key" ON "subaccounts" USING btree ("exchange_id") WHERE "subaccounts"."exchange_id" is not null;
--> statement-breakpoint
-- What is reserved against a user's free balance in one currency: withdrawals in 'requested'
-- (spec 8.1 ACTIVE) and fundings of a subaccount still in flight (reserved at request time, so
-- the same money cannot also be withdrawn while the exchange confirms the deposit).
CREATE FUNCTION ledger_reserved(p_user uuid, p_currency text) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT
    (SELECT coalesce(sum(w.amount), 0) FROM withdrawals w
      WHERE w.user_id = p_user AND w.currency = p_currency AND w.state = 'requested')
    + (SELECT coalesce(sum(f.amount), 0) FROM subaccount_transfers f
      WHERE f.user_id = p_user AND f.currency = p_currency AND f.kind = 'fund'
        AND f.state IN ('reserved', 'submitted', 'accepted'))
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_append(p_events jsonb, p_postings jsonb, p_checks jsonb)
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
    -- authorizing events: the transit rows are locked by the upsert above, and a withdrawal or
    -- funding reserve takes the same lock, so this read cannot race one (spec 3.2, DESIGN free
    -- balance). A funding records its event in the transaction that moves its own reservation
    -- out of the in-flight states, so it is not counted twice.
    SELECT c.u, c.c, bal.v - res.v AS free INTO v_short
    FROM (
      SELECT DISTINCT x.u, x.c, x.a
      FROM jsonb_to_recordset(p_checks) AS x(e uuid, u uuid, c text, a text)
      JOIN unnest(v_inserted) AS i(id) ON i.id = x.e
    ) c
    CROSS JOIN LATERAL (
      SELECT coalesce(sum(b.balance), 0) AS v FROM ledger_balances b WHERE b.account = c.a AND b.currency = c.c
    ) bal
    CROSS JOIN LATERAL (SELECT ledger_reserved(c.u, c.c) AS v) res
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
CREATE OR REPLACE FUNCTION ledger_reserve_withdrawal(p_id uuid, p_user uuid, p_currency text, p_transit text, p_amount numeric)
RETURNS TABLE (ok boolean, free numeric)
LANGUAGE plpgsql AS $$
DECLARE
  v_free numeric;
BEGIN
  PERFORM 1 FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency FOR UPDATE;
  SELECT
    (SELECT coalesce(sum(b.balance), 0) FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency)
    - ledger_reserved(p_user, p_currency)
  INTO v_free;
  IF v_free < p_amount THEN
    RETURN QUERY SELECT false, v_free;
    RETURN;
  END IF;
  INSERT INTO withdrawals (id, user_id, state, currency, amount) VALUES (p_id, p_user, 'requested', p_currency, p_amount);
  RETURN QUERY SELECT true, v_free - p_amount;
END $$;
--> statement-breakpoint
-- A funding of a subaccount reserves its amount like a withdrawal request, under the same transit
-- row lock; the subaccount row is created on first need (one per user and asset).
CREATE FUNCTION ledger_reserve_funding(p_id uuid, p_user uuid, p_asset text, p_currency text, p_transit text, p_amount numeric)
RETURNS TABLE (ok boolean, free numeric, subaccount uuid)
LANGUAGE plpgsql AS $$
DECLARE
  v_free numeric;
  v_sub uuid;
BEGIN
  PERFORM 1 FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency FOR UPDATE;
  SELECT
    (SELECT coalesce(sum(b.balance), 0) FROM ledger_balances b WHERE b.account = p_transit AND b.currency = p_currency)
    - ledger_reserved(p_user, p_currency)
  INTO v_free;
  IF v_free < p_amount THEN
    RETURN QUERY SELECT false, v_free, NULL::uuid;
    RETURN;
  END IF;
  INSERT INTO subaccounts (user_id, asset) VALUES (p_user, p_asset) ON CONFLICT (user_id, asset) DO NOTHING;
  SELECT s.id INTO v_sub FROM subaccounts s WHERE s.user_id = p_user AND s.asset = p_asset;
  INSERT INTO subaccount_transfers (id, user_id, subaccount_id, kind, state, currency, amount)
    VALUES (p_id, p_user, v_sub, 'fund', 'reserved', p_currency, p_amount);
  RETURN QUERY SELECT true, v_free - p_amount, v_sub;
END $$;
