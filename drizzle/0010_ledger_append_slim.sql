-- The append's postings document gets lighter (docs/ledger.md "Append"): the owner of each posting
-- is derived from its account name and the slot defaults to 0, so neither is sent; a batch with no
-- duplicate writes every posting without joining the inserted ids.
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
    -- the owner of a `user:` account is the uuid in its name, and the slot is 0 unless given:
    -- neither travels in the document (a third less JSON to parse); with no duplicate in the batch
    -- every posting is written, without joining the inserted ids
    WITH ps AS MATERIALIZED (
      SELECT x.e, x.a, x.c, x.m, coalesce(x.s, 0::smallint) AS s,
        CASE WHEN starts_with(x.a, 'user:') THEN substr(x.a, 6, 36)::uuid END AS u
      FROM jsonb_to_recordset(p_postings) AS x(e uuid, a text, c text, m numeric, s smallint)
      WHERE cardinality(v_inserted) = jsonb_array_length(p_events)
        OR x.e IN (SELECT unnest(v_inserted))
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
